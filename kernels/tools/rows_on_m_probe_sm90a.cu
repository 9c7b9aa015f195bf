// rows_on_m_probe: how long does a 64-key tile take in the layout results/h200/NOTES.md
// (thirty-fourth session) works out for eagle64's 64-row units, rows on the MMA's M side? A
// timing skeleton, not a verify kernel: the MMAs, the softmax and the copies run as that layout
// would run them, on arbitrary bf16 values, and nothing is checked but the clocks.
//
// One CTA per SM: a producer warpgroup and two consumer warpgroups. q (64 rows x 576 dims) stays
// in shared memory; a ring of two 72 KB tiles (64 keys x 576, nine 8 KB blocks of 64 dims)
// is filled by bulk copies from an L2-resident buffer. The consumers take turns owning a tile:
// the owner computes S = q·Kᵀ (36 wgmma m64n64k16, both operands in shared memory), the online
// softmax, and P in registers; it publishes P (8 KB), the rows' new max and rescale factors, then
// adds P·V into its half of O's 512 dims (4 wgmma m64n256k16, A from registers). The other
// consumer rescales its half, loads P by ldmatrix and adds P·V into its half the same way. Each
// keeps O for 64 rows x 256 dims (128 registers a thread), so two tiles' MMAs and softmaxes
// overlap: while one owner runs its softmax, the other's S can run.
//
// Per tile: 8.9 MFLOP, 2,176 SM clocks at the wgmma rate (wgmma_shapes.txt); shared-memory
// reads 147 KB (S) + 64 KB (P·V's B) + 72 KB of copies + 8 KB of P.
//
// What it leaves out, so its time is a bound for the layout, not a kernel's: the tree mask, the
// schedule's walk, partials and the combine, and the first tile's latency (it times a long run
// of tiles). compute-sanitizer: memcheck, racecheck and synccheck are clean. A warp reads and
// writes only its own 16 rows of P and of the row statistics, as follower of one tile and owner
// of the next: without the __syncwarp between those reads and writes, racecheck reported 16
// hazards on the hand-off (results/h200/rows_on_m_probe.txt); mla_wgmma's rows-on-M walk, which
// has it, was clean from its first build.
//
// usage: rows_on_m_probe [TILES]   (tiles per CTA; default 512)
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "ptx_sm80.cuh"
#include "ptx_sm90a.cuh"
#include "cluster_sm90a.cuh"
#include "hopper_tool.cuh"
#include "wgmma_sm90a.cuh"

namespace {

using namespace vb;
using vbtool::bulk_copy_global;
using vbtool::expect_tx;

constexpr int kRows = 64, kKeys = 64, kBlocks = 9; // 576 dims = 9 blocks of 64
constexpr int kBlockBytes = kKeys * 64 * 2;         // 8 KB: 64 keys (or rows) x 64 dims
constexpr int kTileBytes = kBlocks * kBlockBytes;   // 72 KB
constexpr int kQ = 0, kRing = kTileBytes, kP = 3 * kTileBytes; // q, two tiles, then P
constexpr int kStats = kP + kRows * kKeys * 2;      // the rows' max and rescale factors
constexpr int kBars = kStats + 2 * kRows * 4;       // the mbarriers below
constexpr int kSmem = kBars + 6 * 8 + 1024;         // room to align the base to 1024 B
// mbarriers: full (by stage: the tile landed), empty (by stage: both consumers are done with it),
// pfull (by owner: P and the row statistics are out; a consumer never waits on the barrier it
// arrives on, so none of its threads can pass a wait before its own phase completes).
constexpr int kFull = 0, kEmpty = 2, kPFull = 4;
constexpr int kThreads = 3 * 128;
constexpr int kSources = 8;                         // tiles in the global buffer (576 KB, in L2)
constexpr float kScale = 0.0625f;

const vbtool::Tool tool{"rows_on_m_probe"};

// The shared address of mbarrier i (kFull + stage, kEmpty + stage, kPFull + owner).
__device__ __forceinline__ unsigned bar(unsigned base, int i) { return base + kBars + 8 * i; }


struct Consumer {
    float *stats;  // the rows' rescale factors, then their max (kStats)
    unsigned base; // shared address of the aligned base
    int c;         // 0 or 1: which consumer, which half of O's dims
    float o[128];  // O for 64 rows x 256 dims (m64n256 accumulators)
    float m[2], l[2];

    // O's half += P·V(tile in stage s), P as the A fragments of its 4 k16 slabs.
    __device__ void add_pv(const uint32_t (&p)[4][4], int s)
    {
        const unsigned v = base + kRing + s * kTileBytes + 4 * c * kBlockBytes;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            WgmmaRs<256, 1>::mma(o, p[kk], sw128_desc(v + 2048 * kk, kBlockBytes, 1024), 1);
        wgmma_commit();
    }

    __device__ void rescale(float f0, float f1)
    {
#pragma unroll
        for (int j = 0; j < 32; j++)
            o[4 * j] *= f0, o[4 * j + 1] *= f0, o[4 * j + 2] *= f1, o[4 * j + 3] *= f1;
    }

    // The tile this consumer owns: S, the softmax, P published, its half of P·V.
    __device__ void own(int t)
    {
        const int s = t % 2, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32, g = lane / 4, tq = lane % 4;
        const int r0 = 16 * warp + g;
        mbar_wait(bar(base, kFull + s), (t / 2) & 1);
        float d[32] = {};
        wgmma_fence();
#pragma unroll
        for (int kb = 0; kb < kBlocks; kb++)
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const unsigned q = base + kQ + kb * kBlockBytes + 32 * k;
                const unsigned kt = base + kRing + s * kTileBytes + kb * kBlockBytes + 32 * k;
                Wgmma<64, 0>::mma(d, sw128_desc(q, 16, 1024), sw128_desc(kt, 16, 1024), kb + k > 0);
            }
        wgmma_commit();
        wgmma_wait<0>();
        // The online softmax of rows r0 and r0 + 8 (a quad holds a row's 64 scores).
        float mx[2] = {m[0], m[1]};
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                mx[e / 2] = fmaxf(mx[e / 2], d[4 * j + e] * kScale);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
        }
        const float f0 = exp2_ftz(m[0] - mx[0]), f1 = exp2_ftz(m[1] - mx[1]);
        float sum[2] = {0.f, 0.f};
        uint32_t p[4][4];
        const unsigned pb = base + kP;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const float a = exp2_ftz(d[4 * j] * kScale - mx[0]), b = exp2_ftz(d[4 * j + 1] * kScale - mx[0]);
            const float x = exp2_ftz(d[4 * j + 2] * kScale - mx[1]), y = exp2_ftz(d[4 * j + 3] * kScale - mx[1]);
            sum[0] += a + b, sum[1] += x + y;
            p[j / 2][2 * (j % 2)] = pack_bf16(a, b);
            p[j / 2][2 * (j % 2) + 1] = pack_bf16(x, y);
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(pb + sw128_offset(r0, 8 * j + 2 * tq)), "r"(p[j / 2][2 * (j % 2)]));
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(pb + sw128_offset(r0 + 8, 8 * j + 2 * tq)), "r"(p[j / 2][2 * (j % 2) + 1]));
        }
        l[0] = l[0] * f0 + sum[0], l[1] = l[1] * f1 + sum[1], m[0] = mx[0], m[1] = mx[1];
        if (tq == 0)
            stats[r0] = f0, stats[r0 + 8] = f1, stats[kRows + r0] = mx[0], stats[kRows + r0 + 8] = mx[1];
        fence_proxy_async();
        mbar_arrive(bar(base, kPFull + c)); // P and the factors are out (128 arrivals)
        rescale(f0, f1);
        add_pv(p, s);
        wgmma_wait<0>();
        if (threadIdx.x % 128 == 0)
            mbar_arrive(bar(base, kEmpty + s)); // this consumer is done with the stage
    }

    // The tile the other consumer owns: its factors, then P by ldmatrix, then this half of P·V.
    __device__ void follow(int t)
    {
        const int s = t % 2, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32, g = lane / 4;
        const int r0 = 16 * warp + g;
        mbar_wait(bar(base, kPFull + 1 - c), (t / 2) & 1);
        const float f0 = stats[r0], f1 = stats[r0 + 8];
        m[0] = stats[kRows + r0], m[1] = stats[kRows + r0 + 8];
        rescale(f0, f1);
        uint32_t p[4][4];
        const int row = 16 * warp + lane % 16;
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            ldsm_x4(p[kk], base + kP + sw128_offset(row, 16 * kk + 8 * (lane / 16)));
        __syncwarp(); // this warp's reads of its rows before it writes them as the next owner
        add_pv(p, s);
        wgmma_wait<0>();
        if (threadIdx.x % 128 == 0)
            mbar_arrive(bar(base, kEmpty + s));
    }

};

__global__ void __launch_bounds__(kThreads, 1) tile_probe(const unsigned char *src, unsigned long long *clocks, float *sink,
                                                          int tiles, int copies)
{
    extern __shared__ unsigned char smem_raw[];
    unsigned char *sm = vbtool::align_1024(smem_raw);
    const unsigned base = smem_u32(sm);
    for (int i = threadIdx.x; i < (kStats - kQ) / 4; i += blockDim.x)
        reinterpret_cast<unsigned *>(sm)[i] = 0x3F803F80u ^ (i & 7); // bf16 values near 1
    if (threadIdx.x == 0) {
        for (int s = 0; s < 2; s++) {
            mbar_init(bar(base, kFull + s), 1);   // the producer's arrival (and the copies' bytes)
            mbar_init(bar(base, kEmpty + s), 2);  // one thread of each consumer
            mbar_init(bar(base, kPFull + s), 128); // every thread of the owner
        }
        mbar_init_fence();
    }
    __syncthreads();
    fence_proxy_async();
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const long long t0 = clock64();
    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            for (int t = 0; t < tiles; t++) {
                const int s = t % 2;
                const unsigned full = bar(base, kFull + s), stage = base + kRing + s * kTileBytes;
                mbar_wait(bar(base, kEmpty + s), ((t / 2) & 1) ^ 1);
                if (copies) {
                    expect_tx(full, kTileBytes);
                    const unsigned char *from = src + (size_t)((blockIdx.x + t) % kSources) * kTileBytes;
                    for (int b = 0; b < kBlocks; b++)
                        bulk_copy_global(stage + b * kBlockBytes, from + b * kBlockBytes, kBlockBytes, full);
                } else {
                    mbar_arrive(full);
                }
            }
    } else {
        setmaxnreg_inc<232>();
        Consumer k;
        k.stats = reinterpret_cast<float *>(sm + kStats), k.base = base, k.c = wg - 1;
#pragma unroll
        for (int i = 0; i < 128; i++)
            k.o[i] = 0.f;
        k.m[0] = k.m[1] = -1e30f, k.l[0] = k.l[1] = 0.f;
        for (int t = 0; t < tiles; t++) {
            if (t % 2 == k.c)
                k.own(t);
            else
                k.follow(t);
        }
        float x = k.l[0] + k.l[1];
#pragma unroll
        for (int i = 0; i < 128; i++)
            x += k.o[i];
        if (x == 1234.5f) // practically never: only keeps the work alive
            *sink = x;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicMax(clocks, (unsigned long long)(clock64() - t0));
}

} // namespace

int main(int argc, char **argv)
{
    const int tiles = tool.count_arg(argc, argv, 512, "usage: rows_on_m_probe [TILES]  (tiles per CTA, 1 to 1000000; default 512)");
    const int sms = tool.hopper_sms();
    unsigned long long *clocks;
    float *sink;
    unsigned char *src;
    tool.check(cudaMalloc(&clocks, sizeof *clocks), "cudaMalloc");
    tool.check(cudaMalloc(&sink, sizeof *sink), "cudaMalloc");
    tool.check(cudaMalloc(&src, (size_t)kSources * kTileBytes), "cudaMalloc");
    tool.check(cudaMemset(src, 0x3F, (size_t)kSources * kTileBytes), "cudaMemset"); // bf16 0x3F3F, about 0.75
    tool.check(cudaFuncSetAttribute(tile_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem), "cudaFuncSetAttribute");
    printf("rows on M, a 64-row unit: two consumer warpgroups taking turns owning 64-key tiles (S = q.K^T at\n"
           "m64n64k16, softmax, P.V at m64n256k16 with P in registers), one CTA per SM (%d SMs), %d tiles a CTA,\n"
           "%d bytes of shared memory; SM clocks a tile, the slowest CTA\n\n",
           sms, tiles, kSmem);
    printf("| copies | SM clocks a tile | of the 2,176 the MMAs take at the wgmma rate |\n|---|---:|---:|\n");
    for (int copies = 1; copies >= 0; copies--) {
        unsigned long long c = 0;
        tool.warm_then_read([&] { tile_probe<<<sms, kThreads, kSmem>>>(src, clocks, sink, tiles, copies); }, clocks, sizeof c,
                            &c);
        const double per = (double)c / tiles;
        printf("| %s | %.0f | %.2f |\n", copies ? "72 KB a tile from L2" : "none", per, 2176.0 / per);
    }
    return 0;
}
