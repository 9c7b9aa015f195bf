// mma_rate_probe: how fast can mla_onepass's two mma.sync loops run on their own, and would
// more warps a scheduler make them faster? A tool, not a verify kernel: results/h200/NOTES.md
// (forty-second) took mla_onepass's 72-row tile apart and found its Sᵀ loop and its Oᵀ loop each
// costing about twice their MMAs at the harness's mma.sync ceiling. That ceiling is measured with
// 8 warps a scheduler and no loads; mla_onepass runs 2 warps a scheduler, because every thread
// holds 144 Oᵀ accumulators (72 rows × 64 value dims a warp), and feeds each MMA from ldmatrix
// and 16-byte q loads issued just before it. This tool runs the loops alone, with the same
// instructions, operand layouts and accumulators, in one CTA an SM:
// - "values": Oᵀ += Vᵀ·Pᵀ over a 32-key tile for 9 n8 row tiles (mla_onepass's `accumulate`
//   without its rescale): per warp and key half, the value fragments by ldmatrix.trans and each
//   pair of n8 tiles' Pᵀ fragment by ldmatrix.trans (8 MMAs a Pᵀ load at 64 value dims a warp);
// - "scores": Sᵀ partial sums over a 32-key tile for NT n8 row tiles and half of the 576 dims
//   (`partial_scores`): per double k-step, 4 ldmatrix of K and NT 16-byte q loads (from an
//   83 KB buffer that stays in L1), 4·NT MMAs;
// - "both": one of each a tile, the tile's MMA work without its softmax, barriers or copies.
// Two splits: 8 warps (2 a scheduler), each 64 value dims of all 72 rows (144 accumulators) and
// NT = 2, as mla_onepass; and 16 warps (4 a scheduler), each 32 value dims (72 accumulators) and
// NT = 1 (the same Sᵀ work an SM, each K fragment feeding half as many MMAs) or NT = 2 (twice the
// Sᵀ work, the same reuse). Printed: SM clocks a tile (the slowest warp of a CTA over the
// launch; the median over CTAs and their range), the MMAs an SM completes a clock against the
// reference (the harness's probe: 8 independent accumulator chains a warp, no loads, 8 warps a
// scheduler) and the SM clock over the loop (clock64 against %globaltimer, median CTA).
// Built for sm_90a (the tools' build); the loops are sm_80 code.
//
// usage: mma_rate_probe [TILES]   (tiles a launch; default 2000)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cluster_sm90a.cuh"
#include "hopper_tool.cuh"
#include "ptx_sm80.cuh"

namespace {

using namespace vb;

const vbtool::Tool tool{"mma_rate_probe"};

constexpr int kKeys = 32, kRowBytes = 1152, kChunks = kRowBytes / 16, kN8 = 9, kWarp = 32;
constexpr int kPStride = 16 * kN8;                          // a Pᵀ key row, as mla_onepass at 72 rows
constexpr int kStageBytes = kKeys * kRowBytes;              // one KV tile
constexpr int kSmemBytes = 2 * kStageBytes + kKeys * kPStride; // two stages, as mla_onepass, and Pᵀ
constexpr int kQUint4 = kN8 * (kChunks / 4) * kWarp;        // q in B-fragment order: 83 KB

enum Loops { kValues = 1, kScores = 2, kBoth = 3 };

// The 16-byte chunk c of key row j lives at chunk (c & ~7) | ((c & 7) ^ swz(j)) (mla_onepass).
__device__ __forceinline__ int swz(int j) { return ((j & 1) << 2) | ((j >> 1) & 3); }

// One warp's share of a tile's MMA work. kDimTiles: 16-dim tiles of Oᵀ a warp (4: 64 dims of
// 512, 8 warps; 2: 32 dims, 16 warps). NT: n8 row tiles of its Sᵀ.
template <int kDimTiles, int NT> struct Tile {
    float o[kDimTiles][kN8][4];
    float acc[2][NT][4];
    const int warp, lane;

    __device__ Tile() : warp(threadIdx.x / kWarp), lane(threadIdx.x % kWarp)
    {
        for (auto &m : o)
            for (auto &j : m)
                j[0] = j[1] = j[2] = j[3] = 0.f;
        for (auto &m : acc)
            for (auto &j : m)
                j[0] = j[1] = j[2] = j[3] = 0.f;
    }

    // mla_onepass's `accumulate` (its ldmatrix addressing and MMA order), value dims
    // 16·kDimTiles·(warp % dim groups) and on.
    __device__ void values(unsigned kv, unsigned pt)
    {
        constexpr int kDimsPerWarp = 16 * kDimTiles, kGroups = 512 / kDimsPerWarp;
        const int mi = lane / 8, r8 = lane % 8, fl = swz(r8), dw = warp % kGroups;
#pragma unroll
        for (int ks = 0; ks < 2; ks++) {
            unsigned a[kDimTiles][4];
            const int vkey = 16 * ks + 8 * (mi / 2) + r8;
#pragma unroll
            for (int m = 0; m < kDimTiles; m++) {
                const int chunk = (kDimsPerWarp * dw + 16 * m) / 8 + mi % 2;
                ldsm_x4_t(a[m], kv + vkey * kRowBytes + 16 * ((chunk & ~7) | ((chunk & 7) ^ fl)));
            }
            const int pkey = 16 * ks + 8 * (mi % 2) + r8;
#pragma unroll
            for (int q = 0; q < kN8 / 2; q++) {
                unsigned b[4];
                ldsm_x4_t(b, pt + pkey * kPStride + 2 * (16 * q + 8 * (mi / 2)));
#pragma unroll
                for (int m = 0; m < kDimTiles; m++) {
                    mma(o[m][2 * q], a[m], b[0], b[1]);
                    mma(o[m][2 * q + 1], a[m], b[2], b[3]);
                }
            }
            unsigned b[2];
            ldsm_x2_t(b, pt + pkey * kPStride + 2 * (16 * (kN8 / 2)));
#pragma unroll
            for (int m = 0; m < kDimTiles; m++)
                mma(o[m][kN8 - 1], a[m], b[0], b[1]);
        }
    }

    // mla_onepass's `partial_scores<NT, KS>` loop (KS = warp % 2), q from qf (its row tiles
    // start at (warp / 2 · NT) % kN8).
    __device__ void scores(unsigned kv, const uint4 *qfrag)
    {
        constexpr int kSteps = kChunks / 4 / 2;
        const int ks_half = warp % 2, j_lo = (warp / 2 * NT) % (kN8 - NT + 1);
        const uint4 *qf = qfrag + (size_t)j_lo * (kChunks / 4) * kWarp + lane;
        const int mi = lane / 8, r8 = lane % 8, x = (mi >> 1) ^ swz(r8);
        const unsigned krow = kv + (8 * (mi & 1) + r8) * kRowBytes;
        unsigned kb[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            kb[i] = krow + 16 * ((2 * i) ^ x);
#pragma unroll
        for (int d = 0; d < kSteps; d++) {
            const int ds = ks_half * kSteps + d;
            unsigned a[2][2][4];
#pragma unroll
            for (int mh = 0; mh < 2; mh++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int c = 4 * ds + 2 * e;
                    ldsm_x4(a[mh][e], kb[(c & 7) / 2] + 16 * (c & ~7) + 16 * mh * kRowBytes);
                }
#pragma unroll
            for (int jj = 0; jj < NT; jj++) {
                uint4 qv;
                const uint4 *src = qf + ((size_t)jj * (kChunks / 4) + ds) * kWarp;
                asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(qv.x), "=r"(qv.y), "=r"(qv.z), "=r"(qv.w)
                             : "l"(src));
#pragma unroll
                for (int mh = 0; mh < 2; mh++) {
                    mma(acc[mh][jj], a[mh][0], qv.x, qv.y);
                    mma(acc[mh][jj], a[mh][1], qv.z, qv.w);
                }
            }
        }
    }

    __device__ float sum() const
    {
        float s = 0.f;
        for (const auto &m : o)
            for (const auto &j : m)
                s += j[0] + j[1] + j[2] + j[3];
        for (const auto &m : acc)
            for (const auto &j : m)
                s += j[0] + j[1] + j[2] + j[3];
        return s;
    }
};

// One CTA an SM; each warp runs `tiles` tiles of kLoops, the two KV stages taken in turn as
// mla_onepass takes them, and records its SM clocks and nanoseconds.
template <int kWarps, int kDimTiles, int NT, int kLoops>
__global__ void __launch_bounds__(kWarps * kWarp, 1) tile_loops(const uint4 *qfrag, int tiles, long long *clocks,
                                                                long long *ns, float *sink)
{
    extern __shared__ __align__(128) unsigned char smem[];
    for (int i = threadIdx.x; i < kSmemBytes / 4; i += blockDim.x)
        reinterpret_cast<unsigned *>(smem)[i] = 0x3c003c00u + (unsigned)(i % 7); // bf16 near 0.0078
    __syncthreads();
    Tile<kDimTiles, NT> t;
    const unsigned kv0 = smem_u32(smem), pt = kv0 + 2 * kStageBytes;
    const long long start = clock64();
    const uint64_t start_ns = vbtool::global_ns();
    for (int tile = 0; tile < tiles; tile++) {
        const unsigned kv = kv0 + (tile & 1) * kStageBytes;
        if (kLoops & kScores)
            t.scores(kv, qfrag);
        if (kLoops & kValues)
            t.values(kv, pt);
    }
    const long long end = clock64();
    const uint64_t end_ns = vbtool::global_ns();
    clocks[blockIdx.x * kWarps + threadIdx.x / kWarp] = end - start;
    ns[blockIdx.x * kWarps + threadIdx.x / kWarp] = end_ns - start_ns;
    const float s = t.sum();
    if (s == 1234.5f) // never: keeps the accumulators alive
        *sink = s;
}

// The reference, as the harness's mma.sync ceiling probe: 8 independent chains a warp, no loads,
// 32 warps an SM (4 CTAs of 8).
__global__ void __launch_bounds__(256) reference(int iters, long long *clocks, long long *ns, float *sink)
{
    unsigned a0 = 0x3F803F80u ^ threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, b0 = a0 ^ 5, b1 = a0 ^ 7;
    float c[8][4] = {};
    __syncthreads();
    const long long start = clock64();
    const uint64_t start_ns = vbtool::global_ns();
    for (int it = 0; it < iters; it++)
#pragma unroll
        for (int k = 0; k < 8; k++)
            mma(c[k], a0, a1, a2, a3, b0, b1);
    const long long end = clock64();
    const uint64_t end_ns = vbtool::global_ns();
    if (threadIdx.x % kWarp == 0) {
        clocks[blockIdx.x * 8 + threadIdx.x / kWarp] = end - start;
        ns[blockIdx.x * 8 + threadIdx.x / kWarp] = end_ns - start_ns;
    }
    float s = 0.f;
    for (auto &k : c)
        s += k[0] + k[1] + k[2] + k[3];
    if (s == 1234.5f)
        *sink = s;
}

struct Row {
    const char *loops;
    int warps, nt, accumulators, mmas; // MMAs a tile an SM
    void (*launch)(const uint4 *, int, long long *, long long *, float *, int);
};

template <int kWarps, int kDimTiles, int NT, int kLoops>
void launch(const uint4 *q, int tiles, long long *c, long long *ns, float *s, int sms)
{
    auto k = tile_loops<kWarps, kDimTiles, NT, kLoops>;
    tool.check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes), "cudaFuncSetAttribute");
    k<<<sms, kWarps * kWarp, kSmemBytes>>>(q, tiles, c, ns, s);
}

template <int kWarps, int kDimTiles, int NT, int kLoops> Row row(const char *loops)
{
    const int values = kLoops & kValues ? 2 * kDimTiles * kN8 : 0, scores = kLoops & kScores ? 2 * NT * (kChunks / 4) : 0;
    return {loops, kWarps, NT, 4 * (kDimTiles * kN8 + 2 * NT), kWarps * (values + scores),
            launch<kWarps, kDimTiles, NT, kLoops>};
}

// Per CTA, the slowest warp's clocks (the SM's time for the launch's work) and its ns, sorted
// by clocks.
struct Cta {
    double clocks, ns;
    bool operator<(const Cta &o) const { return clocks < o.clocks; }
};
std::vector<Cta> cta_times(const std::vector<long long> &clocks, const std::vector<long long> &ns, int ctas, int warps)
{
    std::vector<Cta> cta;
    for (int b = 0; b < ctas; b++) {
        const auto first = clocks.begin() + (size_t)b * warps, slowest = std::max_element(first, first + warps);
        cta.push_back({(double)*slowest, (double)ns[slowest - clocks.begin()]});
    }
    std::sort(cta.begin(), cta.end());
    return cta;
}

} // namespace

int main(int argc, char **argv)
{
    const int tiles = tool.count_arg(argc, argv, 2000, "usage: mma_rate_probe [TILES]   (tiles a launch; default 2000)");
    const int sms = tool.hopper_sms();
    uint4 *q = nullptr;
    long long *clocks = nullptr, *ns = nullptr;
    float *sink = nullptr;
    tool.check(cudaMalloc(&q, kQUint4 * sizeof(uint4)), "cudaMalloc");
    tool.check(cudaMemset(q, 0x3c, kQUint4 * sizeof(uint4)), "cudaMemset");
    tool.check(cudaMalloc(&clocks, (size_t)sms * 32 * sizeof(long long)), "cudaMalloc");
    tool.check(cudaMalloc(&ns, (size_t)sms * 32 * sizeof(long long)), "cudaMalloc");
    tool.check(cudaMalloc(&sink, sizeof(float)), "cudaMalloc");
    std::vector<long long> host((size_t)sms * 32), host_ns((size_t)sms * 32);
    // Both counters of the second of two launches (each launch overwrites every entry it reads).
    const auto read_ns = [&] {
        tool.check(cudaMemcpy(host_ns.data(), ns, host_ns.size() * sizeof(long long), cudaMemcpyDeviceToHost), "cudaMemcpy");
    };

    // The reference: MMAs an SM a clock.
    const int ref_iters = 4 * tiles;
    tool.warm_then_read([&] { reference<<<4 * sms, 256>>>(ref_iters, clocks, ns, sink); }, clocks,
                        host.size() * sizeof(long long), host.data());
    read_ns();
    const std::vector<Cta> ref = cta_times(host, host_ns, 4 * sms, 8);
    const Cta ref_mid = ref[ref.size() / 2];
    const double ref_rate = 32.0 * 8 * ref_iters / ref_mid.clocks; // 32 warps an SM, 8 MMAs an iteration
    printf("mma_rate_probe: %d SMs, %d tiles a launch; reference (8 chains a warp, no loads, 8 warps a scheduler): "
           "%.3f m16n8k16 MMAs an SM clock at %.2f GHz (%.0f TFLOP/s)\n\n",
           sms, tiles, ref_rate, ref_mid.clocks / ref_mid.ns, ref_rate * 4096.0 * sms * ref_mid.clocks / ref_mid.ns / 1e3);
    printf("| loops | warps a scheduler | Sᵀ n8 tiles a warp | accumulators a thread | MMAs a tile an SM | SM clocks a tile, "
           "median (range) | MMAs an SM clock | of the reference | SM clock, GHz |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");

    const Row rows[] = {
        row<8, 4, 2, kValues>("values"), row<16, 2, 1, kValues>("values"), row<8, 4, 2, kScores>("scores"),
        row<16, 2, 1, kScores>("scores"), row<16, 2, 2, kScores>("scores"), row<8, 4, 2, kBoth>("both"),
        row<16, 2, 1, kBoth>("both"),     row<16, 2, 2, kBoth>("both"),
    };
    for (const Row &r : rows) {
        tool.warm_then_read([&] { r.launch(q, tiles, clocks, ns, sink, sms); }, clocks, host.size() * sizeof(long long),
                            host.data());
        read_ns();
        const std::vector<Cta> cta = cta_times(host, host_ns, sms, r.warps);
        const Cta mid = cta[cta.size() / 2];
        const double per_tile = mid.clocks / tiles, rate = r.mmas / per_tile;
        printf("| %s | %d | %d | %d | %d | %.0f (%.0f-%.0f) | %.3f | %.0f%% | %.2f |\n", r.loops, r.warps / 4, r.nt,
               r.accumulators, r.mmas, per_tile, cta.front().clocks / tiles, cta.back().clocks / tiles, rate,
               100.0 * rate / ref_rate, mid.clocks / mid.ns);
    }
    tool.check(cudaFree(q), "cudaFree");
    tool.check(cudaFree(clocks), "cudaFree");
    tool.check(cudaFree(ns), "cudaFree");
    tool.check(cudaFree(sink), "cudaFree");
    return 0;
}
