// wgmma_order: when two kinds of warpgroup MMA work share an SM's tensor cores, which finishes
// first? mla_wgmma's scorer issues tile t+1's Sᵀ (one chain of 36 m64n72k16, K-major A) while
// the two value warpgroups issue tile t's Oᵀ (16 m64n72k16 each, M-major A, in 4 commit
// groups); the scorer's softmax can only start when its chain is done. If the tensor pipe
// serves the warpgroup that issued first, Sᵀ issued before Oᵀ finishes after about its own 36
// MMAs; if it shares, both finish after about all 68. A tool, not a verify kernel:
// results/h200/NOTES.md reads its output. Built for sm_90a; runs on an H100/H200.
//
// One CTA of four warpgroups per SM (an idle producer, a scorer, two value warpgroups, with
// mla_wgmma's register split), operands in shared memory (128-byte-swizzled, arbitrary bf16),
// each round started by __syncthreads. Orders: each party alone; the scorer's chain issued
// first (the value warpgroups wait on a named barrier it arrives on after issuing); the value
// warpgroups' first; all at once. Each warpgroup's first thread records clock64 from the
// round's start to its last MMA's completion; the table gives the mean over rounds, the
// slowest SM's.
//
// usage: wgmma_order [ROUNDS]   (default 2000)
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "ptx_sm80.cuh"
#include "ptx_sm90a.cuh"
#include "hopper_tool.cuh"
#include "wgmma_sm90a.cuh"

namespace {

using namespace vb;

constexpr int kRows = 72;               // N of every MMA: a 72-row unit
constexpr int kSmem = 64 * 1024 + 1024; // A blocks, then B; room to align to 1024 B
constexpr int kThreads = 4 * 128;       // an idle producer, the scorer, two value warpgroups
constexpr int kIdleRegs = 40, kScorerRegs = 112, kValueRegs = 176; // mla_wgmma's setmaxnreg split
constexpr int kParties = 3 * 128;       // the threads that meet at the order barrier
constexpr int kScoreMmas = 36, kValueMmas = 16;

enum Order { kScorerAlone, kValuesAlone, kScorerFirst, kValuesFirst, kTogether, kOrders };
const char *const kOrderNames[kOrders] = {"scorer alone", "values alone", "scorer's chain issued first",
                                          "values' MMAs issued first", "all issued at once"};

const vbtool::Tool tool{"wgmma_order"};

// The scorer's chain: 36 k-steps of Sᵀ, one commit group.
__device__ __forceinline__ void score_chain(float (&s)[kRows / 2], unsigned a, unsigned b)
{
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kScoreMmas; k++)
        Wgmma<kRows, 0>::mma(s, sw128_desc(a + 32 * (k % 4), 16, 1024), sw128_desc(b + 32 * (k % 4), 16, 1024), 1);
    wgmma_commit();
}

// A value warpgroup's Oᵀ: 4 value blocks of 4 k-steps, a commit group each (as mla_wgmma).
__device__ __forceinline__ void value_groups(float (&o)[4][kRows / 2], unsigned a, unsigned b)
{
    wgmma_fence();
#pragma unroll
    for (int i = 0; i < 4; i++) {
#pragma unroll
        for (int k = 0; k < 4; k++)
            Wgmma<kRows, 1>::mma(o[i], sw128_desc(a + 8192 * i + 2048 * k, 8192, 1024), sw128_desc(b + 32 * k, 16, 1024), 1);
        wgmma_commit();
    }
}

// One party's rounds (the scorer's when kScorer, a value warpgroup's otherwise): every thread
// meets the others at a round's start; in the orders that put the other party first it waits
// for it to have issued, in those that put it first it tells the other party once it has.
// Returns the clocks from each round's start to its MMAs done, summed.
template <bool kScorer, class Acc>
__device__ __forceinline__ long long timed_rounds(Acc &acc, unsigned a, unsigned b, int rounds, bool runs, int order)
{
    const int first = kScorer ? kScorerFirst : kValuesFirst, after = kScorer ? kValuesFirst : kScorerFirst;
    long long total = 0;
    for (int r = 0; r < rounds; r++) {
        __syncthreads();
        const long long t0 = clock64();
        if (runs) {
            if (order == after)
                named_barrier(1, kParties);
            if constexpr (kScorer)
                score_chain(acc, a, b);
            else
                value_groups(acc, a, b);
            if (order == first)
                asm volatile("bar.arrive 1, %0;" ::"r"(kParties) : "memory");
            wgmma_wait<0>();
        }
        total += clock64() - t0;
    }
    return total;
}

__global__ void __launch_bounds__(kThreads, 1) order_probe(unsigned long long *clocks, float *sink, int rounds, int order)
{
    extern __shared__ unsigned char smem_raw[];
    unsigned char *sm = vbtool::align_1024(smem_raw);
    for (int i = threadIdx.x; i < 64 * 1024 / 4; i += blockDim.x)
        reinterpret_cast<unsigned *>(sm)[i] = 0x3F803F80u ^ (i & 7); // bf16 values near 1
    __syncthreads();
    fence_proxy_async(); // the stores above, to the async proxy wgmma reads through
    const unsigned a = smem_u32(sm), b = a + 32 * 1024;
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0); // warp-uniform for ptxas
    const bool scorer = wg == 1;
    const bool runs = wg > 0 && (order == kScorerAlone ? scorer : order == kValuesAlone ? !scorer : true);
    long long total = 0;
    float x = 0.f;
    if (wg == 0) { // the producer's place: meets the others at each round's start, nothing else
        setmaxnreg_dec<kIdleRegs>();
        for (int r = 0; r < rounds; r++)
            __syncthreads();
    } else if (scorer) { // each party's accumulators live only in its own branch, as in mla_wgmma
        setmaxnreg_dec<kScorerRegs>();
        float s[kRows / 2] = {};
        total = timed_rounds<true>(s, a, b, rounds, runs, order);
#pragma unroll
        for (int i = 0; i < kRows / 2; i++)
            x += s[i];
    } else {
        setmaxnreg_inc<kValueRegs>();
        float o[4][kRows / 2] = {};
        total = timed_rounds<false>(o, a, b, rounds, runs, order);
#pragma unroll
        for (int i = 0; i < kRows / 2; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                x += o[j][i];
    }
    if (x == 1234.5f) // practically never: only keeps the MMAs alive
        *sink = x;
    if (threadIdx.x % 128 == 0 && runs)
        atomicMax(&clocks[wg - 1], (unsigned long long)total);
}

} // namespace

int main(int argc, char **argv)
{
    const int rounds = tool.count_arg(argc, argv, 2000, "usage: wgmma_order [ROUNDS]  (1 to 1000000; default 2000)");
    const int sms = tool.hopper_sms();
    unsigned long long *clocks;
    float *sink;
    tool.check(cudaMalloc(&clocks, 3 * sizeof *clocks), "cudaMalloc");
    tool.check(cudaMalloc(&sink, sizeof *sink), "cudaMalloc");
    tool.check(cudaFuncSetAttribute(order_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
               "cudaFuncSetAttribute");
    printf("bf16 wgmma m64n%dk16 on one SM's tensor cores: a scorer's chain of %d (K-major A, one commit group)\n"
           "and two value warpgroups' %d each (M-major A, 4 commit groups); one CTA per SM (%d SMs), %d rounds;\n"
           "SM clocks from a round's start to each party's last MMA done (mean over rounds, slowest SM)\n\n",
           kRows, kScoreMmas, kValueMmas, sms, rounds);
    printf("| order | scorer's chain done | value warpgroups done |\n|---|---:|---:|\n");
    for (int order = 0; order < kOrders; order++) {
        unsigned long long c[3] = {0, 0, 0};
        tool.warm_then_read([&] { order_probe<<<sms, kThreads, kSmem>>>(clocks, sink, rounds, order); }, clocks,
                            sizeof c, c);
        const double sc = (double)c[0] / rounds, va = (double)(c[1] > c[2] ? c[1] : c[2]) / rounds;
        char sbuf[32] = "-", vbuf[32] = "-";
        if (order != kValuesAlone)
            snprintf(sbuf, sizeof sbuf, "%.0f", sc);
        if (order != kScorerAlone)
            snprintf(vbuf, sizeof vbuf, "%.0f", va);
        printf("| %s | %s | %s |\n", kOrderNames[order], sbuf, vbuf);
    }
    printf("\n(one m64n%dk16 is %d clocks at the tensor cores' rate, results/h200/wgmma_shapes.txt: the scorer's chain\n"
           "alone is about %d, all %d MMAs about %d)\n",
           kRows, kRows / 2, kScoreMmas * kRows / 2, kScoreMmas + 2 * kValueMmas, (kScoreMmas + 2 * kValueMmas) * kRows / 2);
    return 0;
}
