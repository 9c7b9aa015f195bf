// icache_probe: does a hot loop wait on instruction fetch because of where its code sits in a
// large kernel, or because of which other code is hot beside it? A tool, not a verify kernel:
// results/h200/NOTES.md (twenty-third) found mla_wgmma's 72-row kernel (170 KB of code) waiting
// on instruction fetch in whichever of its two walks ptxas lays out second (Nsight Compute: 7.0
// cycles an issued instruction stalled on "no instruction" for the row pairs, laid out at 97-159
// KB, against 0.34 for the one-CTA walk at 10-92 KB; 1.35 for the one-CTA walk laid out second).
// This kernel holds kCopies copies of one loop, each 1024 FFMAs on eight independent chains (16
// KB of code) and each a distinct template instance, so that ptxas keeps them all, in order,
// about 18 KB apart; a branch a copy picks the one a warp runs. Two tables:
// - one copy, run by 4 warps (one a scheduler): whether a loop's place in the kernel matters;
// - copy 0 run by 4 warps beside copy k run by 4 others (two loops hot on every scheduler at
//   once, as mla_wgmma's warpgroups run different loops): whether the distance between them does.
// Each CTA (one an SM) times its loop with clock64; printed: SM clocks an FFMA of one warp, the
// median over CTAs and the range (one warp a scheduler with eight chains issues about one FFMA a
// clock when its instructions keep up). results/h200/icache_probe.txt lists the copies' offsets
// (nvdisasm). Built for sm_90a; runs on an H100/H200.
//
// usage: icache_probe [ITERATIONS]   (loop trips a launch; default 200)
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "hopper_tool.cuh"

namespace {

const vbtool::Tool tool{"icache_probe"};
constexpr int kCopies = 12, kChains = 8, kSteps = 128; // 8 × 128 = 1024 FFMA a copy

// One copy's body: kSteps rounds of one FFMA on each of kChains accumulators, every constant
// distinct by copy and step so that no two copies (or rounds) are the same code.
template <int K> __device__ __forceinline__ void body(float (&a)[kChains])
{
#pragma unroll
    for (int s = 0; s < kSteps; s++)
#pragma unroll
        for (int c = 0; c < kChains; c++)
            a[c] = fmaf(a[c], 0.999f + 1e-5f * (float)(K * kSteps + s), 1e-3f * (float)(c + 1));
}

template <int K> __device__ __forceinline__ void run(float (&a)[kChains], int iters)
{
    for (int i = 0; i < iters; i++)
        body<K>(a);
}

template <int... K>
__device__ __forceinline__ void pick(int which, float (&a)[kChains], int iters, std::integer_sequence<int, K...>)
{
    // One branch a copy, in order: (which == K ? run<K> : ...), so the copies are laid out in K's order.
    ((which == K ? (run<K>(a, iters), 0) : 0), ...);
}

// Warps 0-3 run copy which; with 256 threads, warps 4-7 (one more a scheduler) run copy which2
// at the same time, so that two loops at a chosen distance share each SM's instruction caches.
__global__ void __launch_bounds__(256, 1) probe(int which, int which2, int iters, unsigned long long *clocks,
                                                float *sink)
{
    float a[kChains];
#pragma unroll
    for (int c = 0; c < kChains; c++)
        a[c] = (float)(threadIdx.x + c);
    __syncthreads();
    const unsigned long long t0 = clock64();
    pick(threadIdx.x < 128 ? which : which2, a, iters, std::make_integer_sequence<int, kCopies>{});
    __syncthreads();
    const unsigned long long t1 = clock64();
    float s = 0.f;
#pragma unroll
    for (int c = 0; c < kChains; c++)
        s += a[c];
    if (s == 12345.f) // never, but the compiler cannot know: keeps the chains
        sink[0] = s;
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = t1 - t0;
}

} // namespace

int main(int argc, char **argv)
{
    const int iters = tool.count_arg(argc, argv, 200, "usage: icache_probe [ITERATIONS]");
    const int sms = tool.hopper_sms();
    unsigned long long *clocks = nullptr;
    float *sink = nullptr;
    tool.check(cudaMalloc(&clocks, sms * sizeof(unsigned long long)), "cudaMalloc");
    tool.check(cudaMalloc(&sink, sizeof(float)), "cudaMalloc");
    printf("icache_probe: %d SMs, one CTA each; %d copies of a %d-FFMA loop (%d KB of code), "
           "%d trips a launch; SM clocks an FFMA of one warp, median over CTAs (min-max), the last of 3 launches\n\n",
           sms, kCopies, kChains * kSteps, kChains * kSteps * 16 / 1024, iters);
    std::vector<unsigned long long> h(sms);
    // Clocks an FFMA of one warp for copies a and b (b < 0: 4 warps running a alone).
    const auto measure = [&](int a, int b) {
        for (int rep = 0; rep < 3; rep++)
            probe<<<sms, b < 0 ? 128 : 256>>>(a, b, iters, clocks, sink);
        tool.check(cudaGetLastError(), "a probe launch");
        tool.check(cudaDeviceSynchronize(), "a probe kernel");
        tool.check(cudaMemcpy(h.data(), clocks, sms * sizeof(h[0]), cudaMemcpyDeviceToHost), "cudaMemcpy");
        std::sort(h.begin(), h.end());
        const double per = 1.0 * iters * kChains * kSteps;
        printf(" %.3f | %.3f | %.3f |\n", h[sms / 2] / per, h.front() / per, h.back() / per);
    };
    printf("one copy, 4 warps:\n\n| copy | clocks an FFMA | min | max |\n|---:|---:|---:|---:|\n");
    for (int k = 0; k < kCopies; k++) {
        printf("| %d |", k);
        measure(k, -1);
    }
    printf("\ncopy 0 beside copy k, 4 warps each (both loops hot at once; with k = 0, 8 warps in one copy):\n\n"
           "| k | clocks an FFMA | min | max |\n|---:|---:|---:|---:|\n");
    for (int k = 0; k < kCopies; k++) {
        printf("| %d |", k);
        measure(0, k);
    }
    tool.check(cudaFree(clocks), "cudaFree");
    tool.check(cudaFree(sink), "cudaFree");
    return 0;
}
