// pair_merge_probe: what would it cost a CTA to take over its cluster partner's partial result
// instead of letting the partner write it to global memory for the combine? A tool, not a verify
// kernel: results/h200/NOTES.md (nineteenth, Next 1) weighs a mla_wgmma whose CTA pairs merge the
// two final pieces of a unit through distributed shared memory, so that one partial of 147 KB
// (72 rows × 512 value dims, fp32) is written instead of two. The partner's Oᵀ would sit in its
// own shared memory in fragment order (36 float4 a thread of its two value warpgroups, float4 i
// of every thread side by side); this measures, with all 66 pairs of an H200 doing it at once:
// - global: every CTA writes 147 KB to global memory and waits until its stores are performed
//   (what a partial costs its CTA today);
// - remote R: CTA 0 of each pair reads CTA 1's 147 KB with ld.shared::cluster, R float4 loads a
//   thread in flight at a time (4: what the value warpgroups' free registers would allow);
// - local: CTA 0 reads its own 147 KB with ld.shared, 36 loads in flight (the floor);
// - bulk: CTA 1 pushes its 147 KB into CTA 0's shared memory with 16 bulk copies completing on
//   CTA 0's mbarrier, and CTA 0 waits for them, then reads them locally;
// - swap: both CTAs read half (73.5 KB) of the other's at once, as a pair that merges half of the
//   rows each would;
// - half the pairs: CTA 0 of every other pair reads CTA 1's 147 KB, the rest idle (whether the
//   rate above is each SM's or the whole GPU's).
// Times are %globaltimer from a cluster barrier to the last thread of the CTA done; printed: the
// median over the timed CTAs (and the range), and the bytes a microsecond. Built for sm_90a.
//
// usage: pair_merge_probe [REPEATS]   (default 5: launches a mode, the last timed)
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cluster_sm90a.cuh"
#include "hopper_tool.cuh"
#include "ptx_sm80.cuh"
#include "ptx_sm90a.cuh"

namespace {

using namespace vb;
using namespace vbtool;

constexpr int kThreads = 256;                         // mla_wgmma's two value warpgroups
constexpr int kVec = 36;                              // float4 a thread: 144 fp32 accumulators
constexpr int kBytes = kThreads * kVec * 16;          // 147,456
constexpr int kChunks = 16, kChunkBytes = kBytes / kChunks;
constexpr int kSmem = kBytes + 64;

enum Mode { kGlobal, kRemote, kLocal, kBulk, kSwap, kHalfPairs };

const Tool tool{"pair_merge_probe"};

__device__ __forceinline__ float4 ld_cluster_v4(unsigned addr)
{
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

// Sums R float4 at a time of the buffer at base (a shared::cluster address when kRemote).
template <int R, bool kCluster, int kCount = kVec> __device__ __forceinline__ float read_all(unsigned base)
{
    float s = 0.f;
#pragma unroll
    for (int c = 0; c < kCount; c += R) {
        float4 v[R];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const unsigned a = base + ((c + r) * kThreads + threadIdx.x) * 16;
            if constexpr (kCluster)
                v[r] = ld_cluster_v4(a);
            else
                v[r] = *reinterpret_cast<const float4 *>(__cvta_shared_to_generic(a));
        }
#pragma unroll
        for (int r = 0; r < R; r++)
            s += v[r].x + v[r].y + v[r].z + v[r].w;
    }
    return s;
}

template <Mode kMode, int R>
__global__ void __launch_bounds__(kThreads, 1) probe(float *out, unsigned long long *ns)
{
    extern __shared__ __align__(128) unsigned char sm[];
    const unsigned buf = smem_u32(sm), bar = buf + kBytes;
    const unsigned rank = cluster_rank();
    float4 *mine = reinterpret_cast<float4 *>(sm);
    for (int i = threadIdx.x; i < kBytes / 16; i += kThreads)
        mine[i] = make_float4(rank + i, 1.f, 2.f, 3.f);
    if (threadIdx.x == 0) {
        mbar_init(bar, 1);
        if (kMode == kBulk && rank == 0)
            expect_tx(bar, kBytes);
        mbar_init_fence();
    }
    fence_proxy_async(); // the buffer's generic writes before the bulk copies read it
    cluster_sync();
    const uint64_t t0 = global_ns();
    float s = 0.f;
    if constexpr (kMode == kGlobal) {
        float4 *dst = reinterpret_cast<float4 *>(out) + (size_t)blockIdx.x * (kBytes / 16);
#pragma unroll
        for (int c = 0; c < kVec; c++)
            dst[c * kThreads + threadIdx.x] = mine[c * kThreads + threadIdx.x];
        __threadfence();
    } else if constexpr (kMode == kRemote) {
        if (rank == 0)
            s = read_all<R, true>(map_to(buf, 1));
    } else if constexpr (kMode == kSwap) { // CTA r reads half r of the other's buffer
        s = read_all<R, true, kVec / 2>(map_to(buf, rank ^ 1) + rank * (kBytes / 2));
    } else if constexpr (kMode == kHalfPairs) {
        if (rank == 0 && blockIdx.x % 4 == 0)
            s = read_all<R, true>(map_to(buf, 1));
    } else if constexpr (kMode == kLocal) {
        if (rank == 0)
            s = read_all<kVec, false>(buf);
    } else {
        if (rank == 1 && threadIdx.x < kChunks)
            bulk_copy_to_peer(map_to(buf, 0) + threadIdx.x * kChunkBytes, buf + threadIdx.x * kChunkBytes, kChunkBytes,
                            map_to(bar, 0));
        if (rank == 0) {
            mbar_wait<true>(bar, 0);
            s = read_all<kVec, false>(buf);
        }
    }
    __syncthreads();
    const uint64_t t1 = global_ns();
    if (s == 12345.f) // never, but the compiler cannot know: keeps the reads
        out[0] = s;
    if (threadIdx.x == 0)
        ns[blockIdx.x] = t1 - t0;
    cluster_sync(); // no CTA exits while the other may still read it or copy into it
}

// The last of `repeats` launches over every SM in clusters of two; microseconds of the timed
// CTAs (every CTA for kGlobal and kSwap, CTA 0 of each reading pair otherwise).
template <Mode kMode, int R> Spread run(int sms, int repeats, float *out, unsigned long long *ns)
{
    const int grid = sms / 2 * 2;
    const auto kernel = probe<kMode, R>;
    tool.check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
               "cudaFuncSetAttribute");
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config(2, grid, kThreads, kSmem, attr);
    for (int rep = 0; rep < repeats; rep++)
        tool.check(cudaLaunchKernelEx(&cfg, kernel, out, ns), "cudaLaunchKernelEx");
    tool.check(cudaGetLastError(), "probe launch");
    tool.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::vector<unsigned long long> h(grid), timed;
    tool.check(cudaMemcpy(h.data(), ns, grid * sizeof(h[0]), cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (int g = 0; g < grid; g++)
        if (kMode == kGlobal || kMode == kSwap || (kMode == kHalfPairs ? g % 4 == 0 : g % 2 == 0))
            timed.push_back(h[g]);
    return spread(timed, 1e-3);
}

template <Mode kMode, int R>
void print(const char *what, int sms, int repeats, float *out, unsigned long long *ns)
{
    const Spread r = run<kMode, R>(sms, repeats, out, ns);
    const double bytes = kMode == kSwap ? kBytes / 2 : kBytes;
    printf("| %s | %.0f | %.2f (%.2f-%.2f) | %.1f |\n", what, bytes, r.median, r.min, r.max, bytes / r.median / 1e3);
}

} // namespace

int main(int argc, char **argv)
{
    const int repeats = tool.count_arg(argc, argv, 5, "usage: pair_merge_probe [REPEATS]");
    const int sms = tool.hopper_sms();
    cudaDeviceProp prop;
    tool.check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    float *out = nullptr;
    unsigned long long *ns = nullptr;
    tool.check(cudaMalloc(&out, (size_t)sms * kBytes), "cudaMalloc");
    tool.check(cudaMalloc(&ns, sms * sizeof(unsigned long long)), "cudaMalloc");
    printf("pair_merge_probe on %s (%d SMs): %d clusters of two CTAs of %d threads; %d bytes a CTA "
           "(%d float4 a thread); the last of %d launches a mode\n\n",
           prop.name, sms, sms / 2, kThreads, kBytes, kVec, repeats);
    printf("| what | bytes a CTA | µs (median over timed CTAs, range) | GB/s a CTA |\n|---|---:|---:|---:|\n");
    print<kGlobal, 1>("every CTA writes it to global memory and fences", sms, repeats, out, ns);
    print<kRemote, 4>("CTA 0 reads CTA 1's, ld.shared::cluster, 4 float4 in flight a thread", sms, repeats, out, ns);
    print<kRemote, 12>("CTA 0 reads CTA 1's, ld.shared::cluster, 12 in flight", sms, repeats, out, ns);
    print<kRemote, 36>("CTA 0 reads CTA 1's, ld.shared::cluster, 36 in flight", sms, repeats, out, ns);
    print<kLocal, 36>("CTA 0 reads its own, ld.shared, 36 in flight", sms, repeats, out, ns);
    print<kBulk, 36>("CTA 1 bulk-copies it into CTA 0, which waits and reads it", sms, repeats, out, ns);
    print<kSwap, 6>("both CTAs read half of the other's at once, 6 in flight", sms, repeats, out, ns);
    print<kHalfPairs, 12>("CTA 0 of every other pair reads CTA 1's, 12 in flight", sms, repeats, out, ns);
    tool.check(cudaFree(out), "cudaFree");
    tool.check(cudaFree(ns), "cudaFree");
    return 0;
}
