// The sm_90a instructions the Hopper kernels are built from, one wrapper each: the
// generic-to-async proxy fence, wgmma's fence / commit /
// wait, setmaxnreg, stmatrix, and a named barrier that also ORs a predicate. Shared-memory
// operands are 32-bit shared addresses (smem_u32 in ptx_sm80.cuh). The wgmma instructions
// themselves are in wgmma_sm90a.cuh.
#pragma once

#include <cstdint>

#include "ptx_sm80.cuh"

namespace vb {

// mbar_init, mbar_arrive, mbar_wait and cp_async_mbar_arrive (sm_80+) are in ptx_sm80.cuh.
// Makes mbarrier inits visible before other threads use the barriers (with a block barrier).
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// Lets the grid's programmatic dependents launch once every CTA has run this or exited (one
// thread of a CTA is enough; the dependents still wait for the whole grid before reading).
__device__ __forceinline__ void griddep_launch_dependents()
{
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

// Orders this thread's generic-proxy shared-memory accesses (st.shared, stmatrix, cp.async
// data it has observed) before its later async-proxy ones (wgmma operand reads).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most kPending committed wgmma groups of this warp are still in flight.
template <int kPending> __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving reads or writes of an accumulator across a wgmma wait.
__device__ __forceinline__ void fence_operand(float &x) { asm volatile("" : "+f"(x)::"memory"); }

template <int kRegs> __device__ __forceinline__ void setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs> __device__ __forceinline__ void setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Four (two) 8x8 bf16 matrices from fragment order to shared memory, transposed: lane l gives
// the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void stsm_x4_t(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}
__device__ __forceinline__ void stsm_x2_t(unsigned addr, unsigned r0, unsigned r1)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};\n" ::"r"(addr), "r"(r0), "r"(r1)
                 : "memory");
}

// Named barrier `id` over `threads` threads that returns whether any of them passed true.
__device__ __forceinline__ bool barrier_or(int id, int threads, bool pred)
{
    unsigned out;
    asm volatile("{\n.reg .pred q, r;\nsetp.ne.u32 q, %1, 0;\nbar.red.or.pred r, %2, %3, q;\nselp.u32 %0, 1, 0, r;\n}\n"
                 : "=r"(out)
                 : "r"((unsigned)pred), "r"(id), "r"(threads)
                 : "memory");
    return out != 0;
}

// Shared-memory matrix descriptor: start address, leading and stride byte offsets (all in
// 16-byte units) and the layout: 0 = no swizzle (8 × 16-byte core matrices), 1 = 128-byte
// swizzle. Base offset 0: swizzle atoms must be 1024-byte aligned.
__device__ __forceinline__ uint64_t smem_desc(unsigned addr, unsigned lead_bytes, unsigned stride_bytes,
                                              unsigned layout)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)(lead_bytes >> 4) << 16 |
           (uint64_t)(stride_bytes >> 4) << 32 | (uint64_t)layout << 62;
}
// The descriptor of the operand `bytes` (a multiple of 16) further on: its start address field
// holds the address >> 4 in 14 bits, which never carries while the operand stays inside the
// 256 KB shared window, so a plain add moves it.
__device__ __forceinline__ uint64_t desc_add(uint64_t desc, unsigned bytes) { return desc + (bytes >> 4); }
// A 128-byte-swizzled operand: leading byte offset unused when K-major, the next 64 elements
// along M/N when M/N-major; stride byte offset the next 8 rows (1024 B in every layout here).
__device__ __forceinline__ uint64_t sw128_desc(unsigned addr, unsigned lead_bytes, unsigned stride_bytes)
{
    return smem_desc(addr, lead_bytes, stride_bytes, 1);
}
// Byte offset of bf16 element (row, col) of a 64-column block in that 128-byte swizzle: a row
// is 128 bytes, and its 16-byte chunk col / 8 sits at chunk (col / 8) ^ (row % 8).
__device__ __forceinline__ unsigned sw128_offset(int row, int col)
{
    return row * 128 + (((col / 8) ^ (row % 8)) * 16) + (col % 8) * 2;
}

} // namespace vb
