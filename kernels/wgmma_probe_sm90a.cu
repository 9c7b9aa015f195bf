// The wgmma (sm_90a) tensor-core ceiling: the rate a Hopper kernel built on warpgroup MMAs can
// reach, measured beside the mma.sync one so that a wgmma kernel's floor is honest. Built for
// sm_90a only (meson.build); the host asks for it only on a compute-capability 9.0 device.
//
// Each CTA runs two warpgroups; each issues m64n128k16 bf16 wgmma with both operands in shared
// memory (2 KB of A, 4 KB of B, no swizzle: 8 x 16-byte core matrices 128 B apart along K and
// 256 B apart along M/N), four per commit group with one group left in flight, accumulating
// into its 64 fp32 registers. The values are arbitrary; only the rate is used.
#include <cstdint>

#include <cuda_runtime.h>

#include "ptx_sm80.cuh"
#include "ptx_sm90a.cuh"
#include "wgmma_sm90a.cuh"

namespace {

constexpr int kWarpgroups = 2, kPerGroup = 4;
constexpr double kFlopsPerMma = 2.0 * 64 * 128 * 16;

__global__ void __launch_bounds__(kWarpgroups * 128, 1) wgmma_ceiling_probe(float *sink, int iters)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) uint16_t a[64 * 16], b[128 * 16];
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x)
        a[i] = (uint16_t)(0x3F80 ^ (i & 7));
    for (int i = threadIdx.x; i < 128 * 16; i += blockDim.x)
        b[i] = (uint16_t)(0x3F80 ^ (i & 5));
    __syncthreads();
    vb::fence_proxy_async(); // the writes above, to the async proxy
    const uint64_t da = vb::smem_desc(vb::smem_u32(a), 128, 256, 0),
                   db = vb::smem_desc(vb::smem_u32(b), 128, 256, 0);
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; i++)
        d[i] = 0.f;
    vb::wgmma_fence();
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int k = 0; k < kPerGroup; k++)
            vb::wgmma_m64n128k16(d, da, db, 1);
        vb::wgmma_commit();
        vb::wgmma_wait<1>();
    }
    vb::wgmma_wait<0>();
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 64; i++)
        s += d[i];
    if (s == 1234.5f) // practically never: only keeps the MMAs alive
        *sink = s;
#else
    (void)sink, (void)iters;
#endif
}

} // namespace

extern "C" cudaError_t vb_dev_wgmma_probe(float *sink, int sms, int iters, double *flops, cudaStream_t stream)
{
    wgmma_ceiling_probe<<<sms, kWarpgroups * 128, 0, stream>>>(sink, iters);
    *flops = (double)sms * kWarpgroups * iters * kPerGroup * kFlopsPerMma;
    return cudaGetLastError();
}
