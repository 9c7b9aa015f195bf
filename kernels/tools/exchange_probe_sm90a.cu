// exchange_probe: how long does a pair of CTAs (a cluster of two) take to swap partial results
// through distributed shared memory when each needs the other's before it can go on? A tool, not
// a verify kernel: results/h200/NOTES.md (2026-12-01, ninth) weighs a mla_wgmma whose CTA pair
// splits each tile's k-blocks, so that each CTA's ring holds 4-5 tiles instead of 1.8, and then
// adds the two partial Sᵀ (72 rows × 64 keys fp32, 18 KB each way) every tile before its softmax.
// This measures that step on its own. Built for sm_90a; runs on an H100/H200.
//
// Every SM runs one CTA of 128 threads (one warpgroup, as mla_wgmma's scorer), in clusters of two.
// Each iteration a thread sends F floats into the other CTA's receive buffer with st.async (remote
// shared-memory stores that complete on the receiver's mbarrier, which expects F · 128 · 4 bytes),
// waits for the other's F floats in its own buffer, adds them into its values (so the next send
// depends on them) and tells the other CTA, by a remote mbarrier arrival, that the buffer may be
// written again; two buffers alternate. The time of an iteration is the exchange's cost on such a
// chain: the sends, the transfer and the wait. The same loop with each CTA sending into its own
// buffer (the same instructions, addresses mapped to its own rank) separates the distributed
// shared memory's cost from the loop's. Times are %globaltimer per CTA over the loop of the last
// of 3 launches; printed: the median over CTAs (and the range), and the bytes an SM sends a
// microsecond.
//
// usage: exchange_probe [ITERATIONS]   (default 2000)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cluster_sm90a.cuh"
#include "hopper_tool.cuh"
#include "ptx_sm80.cuh"
#include "ptx_sm90a.cuh"

namespace {

using namespace vb;
using namespace vbtool;

constexpr int kThreads = 128;

const Tool tool{"exchange_probe"};

// Four floats into another CTA's shared memory (dst, bar: shared::cluster addresses), counted as
// 16 bytes of bar's transaction count when they land.
__device__ __forceinline__ void st_async_v4(unsigned dst, float a, float b, float c, float d, unsigned bar)
{
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(
                     dst),
                 "r"(__float_as_uint(a)), "r"(__float_as_uint(b)), "r"(__float_as_uint(c)), "r"(__float_as_uint(d)),
                 "r"(bar)
                 : "memory");
}

// F floats a thread each way, to the other CTA of the cluster (kRemote) or to this CTA itself.
template <int F, bool kRemote>
__global__ void __launch_bounds__(kThreads, 1) exchange(int iters, float *sink, unsigned long long *ns)
{
    static_assert(F % 4 == 0, "whole float4s");
    constexpr unsigned kBytes = F * kThreads * 4;
    __shared__ __align__(16) float recv[2][F * kThreads];
    __shared__ __align__(8) uint64_t full[2], freed[2];
    const int tid = threadIdx.x, lane = tid % 32;
    const unsigned rank = cluster_rank(), to = kRemote ? rank ^ 1 : rank;
    if (tid == 0) {
        for (int b = 0; b < 2; b++) {
            mbar_init(smem_u32(&full[b]), 1);  // this CTA's expect_tx; the bytes from the sender
            mbar_init(smem_u32(&freed[b]), 4); // the receiver's 4 warps, done with the buffer
            expect_tx(smem_u32(&full[b]), kBytes);
        }
        mbar_init_fence();
    }
    cluster_sync(); // both CTAs' barriers exist before either sends
    float v[F];
#pragma unroll
    for (int i = 0; i < F; i++)
        v[i] = (float)(tid + i) * 1e-3f;
    const unsigned dst0 = map_to(smem_u32(&recv[0][0]), to), full0 = map_to(smem_u32(&full[0]), to);
    const unsigned freed0 = map_to(smem_u32(&freed[0]), to);
    const uint64_t t0 = global_ns();
    for (int it = 0; it < iters; it++) {
        const int b = it & 1;
        const unsigned use = (unsigned)it >> 1; // this buffer's use count
        if (use > 0) // the receiver is done with what this CTA sent into buffer b last time
            mbar_wait<true>(smem_u32(&freed[b]), (use - 1) & 1);
#pragma unroll
        for (int i = 0; i < F; i += 4) // float4 i / 4 of every thread side by side: one row of 2 KB a step
            st_async_v4(dst0 + b * kBytes + (i / 4 * kThreads + tid) * 16, v[i], v[i + 1], v[i + 2], v[i + 3],
                        full0 + 8 * b);
        mbar_wait<true>(smem_u32(&full[b]), use & 1);
        if (tid == 0)
            expect_tx(smem_u32(&full[b]), kBytes); // its next use
#pragma unroll
        for (int i = 0; i < F; i += 4) {
            const float4 r = *reinterpret_cast<const float4 *>(&recv[b][(i / 4 * kThreads + tid) * 4]);
            v[i] = 0.5f * v[i] + r.x, v[i + 1] = 0.5f * v[i + 1] + r.y;
            v[i + 2] = 0.5f * v[i + 2] + r.z, v[i + 3] = 0.5f * v[i + 3] + r.w;
        }
        __syncwarp();
        if (lane == 0) // every lane of the warp has read the buffer
            remote_arrive(freed0 + 8 * b);
    }
    const uint64_t t1 = global_ns();
    cluster_sync(); // no CTA exits while the other may still write into it or arrive on it
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < F; i++)
        s += v[i];
    if (s == 12345.f) // never, but the compiler cannot know: keeps the loop's work
        sink[0] = s;
    if (tid == 0)
        ns[blockIdx.x] = t1 - t0;
}

// The last of 3 launches over every SM (clusters of two); per-CTA microseconds an iteration.
template <int F, bool kRemote> Spread run(int sms, int iters, float *sink, unsigned long long *ns)
{
    const int grid = sms / 2 * 2;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config(2, grid, kThreads, 0, attr);
    for (int rep = 0; rep < 3; rep++)
        tool.check(cudaLaunchKernelEx(&cfg, exchange<F, kRemote>, iters, sink, ns), "cudaLaunchKernelEx");
    tool.check(cudaGetLastError(), "exchange launch");
    tool.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::vector<unsigned long long> h(grid);
    tool.check(cudaMemcpy(h.data(), ns, grid * sizeof(h[0]), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return spread(h, 1e-3 / iters);
}

template <int F> void print_pair(int sms, int iters, float *sink, unsigned long long *ns)
{
    const double bytes = F * kThreads * 4.0;
    const Spread remote = run<F, true>(sms, iters, sink, ns), local = run<F, false>(sms, iters, sink, ns);
    printf("| %d | %.0f | the other CTA | %.3f (%.3f-%.3f) | %.1f |\n", F, bytes, remote.median, remote.min,
           remote.max, bytes / remote.median / 1e3);
    printf("| %d | %.0f | itself | %.3f (%.3f-%.3f) | %.1f |\n", F, bytes, local.median, local.min,
           local.max, bytes / local.median / 1e3);
}

} // namespace

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 2000;
    if (iters < 1) {
        fprintf(stderr, "exchange_probe: ITERATIONS must be a positive number, got '%s'\n", argv[1]);
        return 2;
    }
    const int sms = tool.hopper_sms();
    cudaDeviceProp prop;
    tool.check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    float *sink = nullptr;
    unsigned long long *ns = nullptr;
    tool.check(cudaMalloc(&sink, sizeof(float)), "cudaMalloc");
    tool.check(cudaMalloc(&ns, sms * sizeof(unsigned long long)), "cudaMalloc");
    printf("exchange_probe on %s (%d SMs): %d clusters of two CTAs of %d threads, %d exchanges each\n\n",
           prop.name, sms, sms / 2, kThreads, iters);
    printf("| floats a thread | bytes each way | to | µs an exchange (median over CTAs, range) | GB/s an SM sends |\n");
    printf("|---:|---:|---|---:|---:|\n");
    print_pair<36>(sms, iters, sink, ns); // mla_wgmma's partial Sᵀ: 72 rows × 64 keys fp32
    print_pair<20>(sms, iters, sink, ns); // 40 of the 72 rows
    print_pair<4>(sms, iters, sink, ns);  // 2 KB: the latency
    tool.check(cudaFree(sink), "cudaFree");
    tool.check(cudaFree(ns), "cudaFree");
    return 0;
}
