// wgmma_shapes: how fast does one bf16 wgmma m64nNk16 run, by N, with both operands in shared
// memory (as mla_wgmma's Sᵀ and Oᵀ read them)? A tool, not a verify kernel: results/h200/NOTES.md
// reads its output (below N = 64 the rate is set by shared memory, 128 bytes a clock, not by
// the tensor cores; that is what the split of Sᵀ into N = 40 and N = 32 costs). Built for
// sm_90a; runs on an H100/H200.
//
// One CTA per SM; 1 or 2 warpgroups each issue the shape back to back, 4 a commit group with one
// group left in flight, accumulating into registers. Operands are 128-byte-swizzled, K-major (A
// also M-major, mla_wgmma's Oᵀ), filled with arbitrary bf16. A last set of rows takes A from
// registers and B N-major in 8 KB blocks of 64 columns (O = P·V with P in registers and V as
// the ring's blocks hold it: the layout with rows on M, results/h200/NOTES.md). Each CTA times
// its loop with clock64; the slowest CTA's SM clocks per instruction are reported, with the FLOP
// and the shared-memory bytes (A: 2 KB unless from registers, B: N × 32 B per instruction) that
// rate implies.
//
// usage: wgmma_shapes [ITERATIONS]   (groups of 4 per warpgroup; default 4000)
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "ptx_sm80.cuh"
#include "ptx_sm90a.cuh"
#include "hopper_tool.cuh"
#include "wgmma_sm90a.cuh"

namespace {

using namespace vb;

constexpr int kBytes = 64 * 1024;            // A: 32 KB (4 k-steps × 8 KB blocks when M-major), B: 32 KB (256 rows)
constexpr int kSmem = kBytes + 1024;         // room to align the base to 1024 B (the swizzle atom)

const vbtool::Tool tool{"wgmma_shapes"};

// How an instruction reads its operands: both from shared memory (A K-major or M-major), or A
// from registers and B N-major.
enum Operands { kSS = 0, kSSTransA = 1, kRSTransB = 2 };

template <int N, int Mode>
__global__ void __launch_bounds__(256, 1) shape_rate(unsigned long long *clocks, float *sink, int iters, int warpgroups)
{
    extern __shared__ unsigned char smem_raw[];
    unsigned char *sm = vbtool::align_1024(smem_raw);
    for (int i = threadIdx.x; i < kBytes / 4; i += blockDim.x)
        reinterpret_cast<unsigned *>(sm)[i] = 0x3F803F80u ^ (i & 7); // bf16 values near 1
    __syncthreads();
    fence_proxy_async(); // the stores above, to the async proxy wgmma reads through
    if ((int)threadIdx.x >= 128 * warpgroups)
        return;
    const unsigned a = smem_u32(sm), b = a + kBytes / 2;
    float d[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; i++)
        d[i] = 0.f;
    uint32_t ra[4]; // A's fragment when it comes from registers: bf16 values near 1
#pragma unroll
    for (int i = 0; i < 4; i++)
        ra[i] = 0x3F803F80u ^ ((threadIdx.x + i) & 7);
    const long long t0 = clock64();
    wgmma_fence();
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if constexpr (Mode == kRSTransB) {
                WgmmaRs<N, 1>::mma(d, ra, sw128_desc(b + 2048 * k, 8192, 1024), 1);
            } else {
                const uint64_t da = Mode == kSSTransA ? sw128_desc(a + 2048 * k, 8192, 1024) : sw128_desc(a + 32 * k, 16, 1024);
                Wgmma<N, Mode>::mma(d, da, sw128_desc(b + 32 * k, 16, 1024), 1);
            }
        }
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();
    const long long t1 = clock64();
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < N / 2; i++)
        s += d[i];
    if (s == 1234.5f) // practically never: only keeps the MMAs alive
        *sink = s;
    if (threadIdx.x == 0)
        atomicMax(clocks, (unsigned long long)(t1 - t0));
}

// One table row per warpgroup count for shape m64nNk16, its operands read as Mode says.
template <int N, int Mode> void rows(int sms, int iters, unsigned long long *clocks, float *sink)
{
    tool.check(cudaFuncSetAttribute(shape_rate<N, Mode>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
               "cudaFuncSetAttribute");
    static const char *const a_from[] = {"K-major", "M-major", "registers (B N-major)"};
    const double smem_bytes = (Mode == kRSTransB ? 0.0 : 2048.0) + 32.0 * N; // a wgmma's shared-memory reads
    for (int wgs = 1; wgs <= 2; wgs++) {
        unsigned long long c = 0;
        tool.warm_then_read([&] { shape_rate<N, Mode><<<sms, 256, kSmem>>>(clocks, sink, iters, wgs); }, clocks,
                            sizeof c, &c);
        const double per = (double)c / ((double)iters * 4 * wgs); // SM clocks per wgmma
        printf("| %d | %s | %d | %.1f | %.0f | %.0f |\n", N, a_from[Mode], wgs, per, 2.0 * 64 * N * 16 / per,
               smem_bytes / per);
    }
    fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    const int iters = tool.count_arg(argc, argv, 4000,
                                     "usage: wgmma_shapes [ITERATIONS]  (groups of 4 wgmma per warpgroup, 1 to 1000000; default 4000)");
    const int sms = tool.hopper_sms();
    unsigned long long *clocks;
    float *sink;
    tool.check(cudaMalloc(&clocks, sizeof *clocks), "cudaMalloc");
    tool.check(cudaMalloc(&sink, sizeof *sink), "cudaMalloc");
    printf("bf16 wgmma m64nNk16, operands in shared memory (the last rows: A in registers), one CTA per SM (%d SMs), %d x 4 per warpgroup\n\n", sms,
           iters);
    printf("| N | A | warpgroups | SM clocks per wgmma | FLOP per clock per SM | shared-memory bytes per clock |\n");
    printf("|---:|---|---:|---:|---:|---:|\n");
    rows<8, 0>(sms, iters, clocks, sink);
    rows<16, 0>(sms, iters, clocks, sink);
    rows<24, 0>(sms, iters, clocks, sink);
    rows<32, 0>(sms, iters, clocks, sink);
    rows<40, 0>(sms, iters, clocks, sink);
    rows<48, 0>(sms, iters, clocks, sink);
    rows<64, 0>(sms, iters, clocks, sink);
    rows<72, 0>(sms, iters, clocks, sink);
    rows<72, 1>(sms, iters, clocks, sink);
    rows<80, 0>(sms, iters, clocks, sink);
    rows<96, 0>(sms, iters, clocks, sink);
    rows<128, 0>(sms, iters, clocks, sink);
    rows<144, 0>(sms, iters, clocks, sink);
    rows<256, 0>(sms, iters, clocks, sink);
    rows<64, kRSTransB>(sms, iters, clocks, sink);
    rows<256, kRSTransB>(sms, iters, clocks, sink);
    return 0;
}
