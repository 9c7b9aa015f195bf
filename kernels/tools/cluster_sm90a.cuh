// What the Hopper tools that run clusters of CTAs share (kernels/tools/): the CTA's rank in its
// cluster, another CTA's address of a shared-memory location, the cluster barrier, mbarrier
// arrivals and transaction counts across CTAs, bulk copies from global memory and into another
// CTA's shared memory, the launch configuration of a cluster grid, and per-CTA timing: the
// global nanosecond timer and the spread of every CTA's time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

namespace vbtool {

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// The address of the same shared-memory location in CTA `rank` of the cluster.
__device__ __forceinline__ unsigned map_to(unsigned addr, unsigned rank)
{
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// An arrival on an mbarrier of another CTA (a shared::cluster address), releasing this thread's
// earlier writes at cluster scope.
__device__ __forceinline__ void remote_arrive(unsigned cluster_bar)
{
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_bar) : "memory");
}
// An arrival on this CTA's mbarrier that also expects `bytes` of asynchronous writes this phase.
__device__ __forceinline__ void expect_tx(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// A launch configuration of grid CTAs of `threads` threads and `smem` bytes of dynamic shared
// memory in clusters of n (attr: storage for its one attribute).
inline cudaLaunchConfig_t cluster_config(int n, int grid, int threads, int smem, cudaLaunchAttribute &attr)
{
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = n, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid), cfg.blockDim = dim3(threads), cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr, cfg.numAttrs = 1;
    return cfg;
}

// bytes from this CTA's shared memory into another CTA's of the cluster (dst and bar:
// shared::cluster addresses), counted on bar's transaction count as they land.
__device__ __forceinline__ void bulk_copy_to_peer(unsigned dst, unsigned src, unsigned bytes, unsigned bar)
{
    asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     dst),
                 "r"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// bytes from global memory into this CTA's shared memory (dst, bar: shared addresses), counted
// on bar's transaction count as they land.
__device__ __forceinline__ void bulk_copy_global(unsigned dst, const void *src, unsigned bytes, unsigned bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// The GPU's nanosecond timer, comparable across the SMs of one launch.
__device__ __forceinline__ uint64_t global_ns()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

// Median and range of per-CTA times, each multiplied by `scale` (to µs, or to µs an iteration).
struct Spread {
    double median, min, max;
};
inline Spread spread(std::vector<unsigned long long> t, double scale)
{
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2] * scale, t.front() * scale, t.back() * scale};
}

} // namespace vbtool
