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

namespace {

constexpr int kWarpgroups = 2, kPerGroup = 4;
constexpr double kFlopsPerMma = 2.0 * 64 * 128 * 16;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Shared-memory matrix descriptor: start address, leading (K) and stride (M/N) byte offsets,
// all in 16-byte units; swizzle mode 0 and base offset 0.
__device__ __forceinline__ uint64_t smem_desc(const void *p, uint32_t lead_bytes, uint32_t stride_bytes)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)(lead_bytes >> 4) << 16 | (uint64_t)(stride_bytes >> 4) << 32;
}

__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t a, uint64_t b)
{
    asm volatile("{\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, 0;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b));
}
#endif

__global__ void __launch_bounds__(kWarpgroups * 128, 1) wgmma_kernel(float *sink, int iters)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) uint16_t a[64 * 16], b[128 * 16];
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x)
        a[i] = (uint16_t)(0x3F80 ^ (i & 7));
    for (int i = threadIdx.x; i < 128 * 16; i += blockDim.x)
        b[i] = (uint16_t)(0x3F80 ^ (i & 5));
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // the writes above, to the async proxy
    const uint64_t da = smem_desc(a, 128, 256), db = smem_desc(b, 128, 256);
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; i++)
        d[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int k = 0; k < kPerGroup; k++)
            wgmma_m64n128k16(d, da, db);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
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
    wgmma_kernel<<<sms, kWarpgroups * 128, 0, stream>>>(sink, iters);
    *flops = (double)sms * kWarpgroups * iters * kPerGroup * kFlopsPerMma;
    return cudaGetLastError();
}
