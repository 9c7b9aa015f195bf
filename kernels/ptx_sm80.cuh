// The sm_80+ instructions the tensor-core kernels are built from, one wrapper each: cp.async
// (also with an L2 cache policy), ldmatrix, movmatrix, bf16 mma.sync m16n8k16, named barriers, mbarriers,
// L2 prefetches and discards, and the SFU's ex2. Shared-memory operands are 32-bit shared addresses
// (smem_u32), so a kernel can compute swizzled addresses once.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>

namespace vb {

__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// 2^x on the SFU alone. exp2f adds a range check and two multiplies to each call so that
// results below 2^-126 come out subnormal; here they are flushed to 0. mla_onepass and
// mla_wgmma use it for P and for the rescale factors, where that is below fp32's resolution
// of what they are added to: a row's sum is at least 1 (the score that set its reference max
// contributes 2^0).
__device__ __forceinline__ float exp2_ftz(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// 16 bytes global -> shared, asynchronously; zero-filled when !valid (src is not read then).
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
// The same with an L2 cache policy (a createpolicy value, e.g. l2_evict_first_policy()).
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, bool valid, uint64_t policy)
{
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst), "l"(src),
                 "r"(valid ? 16 : 0), "l"(policy));
}
// L2 policy for lines read once: they are the first to go when L2 needs room. The scheduled
// kernels copy KV rows with it, so that the stream of KV lines does not push the dirty partial
// lines (written for the combine launch) out to DRAM first.
__device__ __forceinline__ uint64_t l2_evict_first_policy()
{
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
    return pol;
}
// L2 policy for lines to keep: the last to go (kernels/tools/merge_rounds_probe_sm90a.cu writes
// partial slots with it).
__device__ __forceinline__ uint64_t l2_evict_last_policy()
{
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(pol));
    return pol;
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most kPending committed groups are still in flight.
template <int kPending> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void ldsm_x2_t(unsigned (&r)[2], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(addr));
}
__device__ __forceinline__ unsigned movmatrix_t(unsigned x)
{
    unsigned y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
    return y;
}

// c += a (16x16 bf16, row) · b (16x8 bf16, col), fp32 accumulators.
__device__ __forceinline__ void mma(float (&c)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                    unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    mma(c, a[0], a[1], a[2], a[3], b0, b1);
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned *>(&v);
}

// Barrier `id` (1..15; 0 is __syncthreads) for `threads` threads, a multiple of 32.
__device__ __forceinline__ void named_barrier(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// mbarriers: a barrier object in shared memory that counts arrivals per phase, so that threads
// can hand data to others without both sides passing a block-wide barrier (sm_80+).
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase of the given parity has completed. A fresh barrier is in phase 0, so
// waiting on parity 1 returns at once: producers start there on "empty" barriers. kCluster:
// acquire at cluster scope, for a barrier that other CTAs of the cluster arrive on (sm_90+).
// sm_90 and later use try_wait, which may suspend the thread until the phase completes; sm_80
// and sm_86/89 spin on test_wait.
template <bool kCluster = false> __device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    unsigned done;
    do {
#if __CUDA_ARCH__ >= 900
        if constexpr (kCluster)
            asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                         "selp.u32 %0, 1, 0, p;\n}\n"
                         : "=r"(done)
                         : "r"(bar), "r"(parity)
                         : "memory");
        else
            asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                         : "=r"(done)
                         : "r"(bar), "r"(parity)
                         : "memory");
#else
        static_assert(!kCluster, "clusters need sm_90");
        asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
#endif
    } while (!done);
}

// The barrier's phase counts this thread's earlier cp.async copies as one arrival when they
// have landed (the barrier's expected count includes it: .noinc).
__device__ __forceinline__ void cp_async_mbar_arrive(unsigned bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// A hint that the 128-byte line at p will be read soon: fetched into L2, nothing returned.
__device__ __forceinline__ void prefetch_l2(const void *p) { asm volatile("prefetch.L2 [%0];" ::"l"(p)); }

// Drops the 128-byte line at p (128-byte aligned) from L2 without writing it back: its contents
// become undefined.
__device__ __forceinline__ void discard_l2(const void *p) { asm volatile("discard.global.L2 [%0], 128;\n" ::"l"(p) : "memory"); }

} // namespace vb
