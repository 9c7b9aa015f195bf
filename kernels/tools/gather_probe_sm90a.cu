// gather_probe: how fast can this GPU gather 1152-byte KV rows (one MLA latent row, 576 bf16)
// through a slot table, the way a page-size-1 verify kernel must? A tool, not a verify
// kernel: results/h200/NOTES.md reads its output (the producer of mla_wgmma copied 16 rows a
// warp instruction and gathered 1.6-1.8 TB/s from a shuffled pool; 4 rows reach the
// streaming rate). Built for sm_90a (the bulk-copy variant); runs on an H100/H200.
//
// Each variant moves the same rows: a pool of N rows, read in the slot table's order, in
// tiles of 64 rows, one CTA per SM walking a contiguous range of tiles (as the one-pass
// kernels do), except the plain-load variant, which uses 8 CTAs of 256 threads per SM:
// - ld:      plain 16-byte loads, 9 in flight per thread, into registers (the many-warps ceiling);
// - cp.async R rows: 128 threads copy 16-byte chunks into S shared-memory stages of 72 KB in
//            the 128-byte-swizzled k-block layout wgmma reads; one warp instruction touches R
//            rows (R = 16: two lanes a row; 4: eight lanes a row, one 128-byte line each; 2; 1);
// - bulk:    one warp issues a 1152-byte cp.async.bulk per row, completing on an mbarrier per
//            stage (contiguous rows: not a layout wgmma can read);
// - pairs:   cp.async R4, but CTAs 2i and 2i + 1 walk the same tiles, as two CTAs that split a
//            unit's rows and each read its whole KV would: every row is read twice, once from
//            L2 as a rule; the rate counts each row once (the rate of the stream the pair serves).
//            results/h200/NOTES.md asks whether L2 keeps up with that.
// - cluster: cp.async R4 in clusters of two CTAs that walk the same tiles, each reading only
//            half of every tile's rows (32 of 64) from memory and forwarding them into the other's
//            stage with bulk shared-to-shared copies (4 KB a k-block, completing on the other's
//            mbarrier): every row is read from memory once and both CTAs end up with the whole
//            tile, as a pair splitting a unit's rows and sharing its KV through distributed shared
//            memory would. The rate counts each row once. Also printed: how many such clusters
//            (and clusters of 4 and 8) fit on the GPU at mla_wgmma's 384 threads and 228,584 B of
//            shared memory a CTA.
// - tma W:   tensor copies (a 2D tensor map over the pool, 128-byte swizzle) of one box of 64
//            bf16 (one k-block of one row, 128 B) each, 576 a tile, issued by W warps (1, 4, 16) and
//            completing on an mbarrier per stage. A row's k-blocks go to 9 blocks 8 KB apart, so a
//            row cannot be one bulk copy into the layout wgmma reads; a box of one row can, if the
//            copy swizzles by its destination's place in the 1024-byte atom. The probe checks
//            that first (every byte of a tile against the pool, one CTA and a cluster pair) and
//            says so.
// - tma mc pairs W: the same in clusters of two CTAs that walk the same tiles, each issuing half of
//            every tile's boxes with .multicast::cluster, so that every row is read from memory
//            once and lands in both CTAs (as two units of a request sharing their KV would). The
//            rate counts each row once.
// Layouts: the slot table shuffles single rows (SGLang's page size 1 after churn) or whole
// pages of 64 rows. Times are CUDA-event medians of 9 launches after 3 warm-ups. A pool that
// fits in L2 (e.g. 32768 rows, 38 MB) measures gathering from L2 instead of memory.
//
// usage: gather_probe [ROWS...]   (default: 1600000 728000, i.e. 1.84 and 0.84 GB pools)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <cuda.h>         // CUtensorMap
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled

#include "ptx_sm80.cuh"
#include "ptx_sm90a.cuh"
#include "cluster_sm90a.cuh"
#include "hopper_tool.cuh"

namespace {

using namespace vb;
using vbtool::bulk_copy_global;
using vbtool::bulk_copy_to_peer;
using vbtool::cluster_config;
using vbtool::cluster_rank;
using vbtool::cluster_sync;
using vbtool::expect_tx;
using vbtool::map_to;
using vbtool::remote_arrive;

constexpr int kRowBytes = 1152, kKeys = 64, kTileBytes = kKeys * kRowBytes;

const vbtool::Tool tool{"gather_probe"};

__global__ void gather_ld(const char *pool, const int *slots, int64_t rows, unsigned *sink)
{
    const int lane = threadIdx.x % 32;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32, nw = gridDim.x * (int64_t)blockDim.x / 32;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (int64_t r0 = warp * 4; r0 < rows; r0 += nw * 4) {
        uint4 v[9];
#pragma unroll
        for (int i = 0; i < 9; i++) { // 4 rows of 72 chunks over 32 lanes
            const int c = lane + 32 * i, row = c / 72, ch = c % 72;
            v[i] = r0 + row < rows ? *reinterpret_cast<const uint4 *>(pool + (int64_t)slots[r0 + row] * kRowBytes + 16 * ch)
                                   : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < 9; i++)
            acc.x ^= v[i].x, acc.y ^= v[i].y, acc.z ^= v[i].z, acc.w ^= v[i].w;
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678u) // keeps the loads; never true for the pool's bytes
        sink[0] = 1;
}

template <int S, int R, bool Pair = false>
__global__ void __launch_bounds__(128, 1) gather_cp_async(const char *pool, const int *slots, int64_t tiles, unsigned *sink)
{
    extern __shared__ __align__(1024) unsigned char sm[];
    const int tid = threadIdx.x, w = tid / 32, lane = tid % 32;
    constexpr int kLanes = 32 / R; // lanes per row
    const int walkers = Pair ? gridDim.x / 2 : gridDim.x, me = Pair ? blockIdx.x / 2 : blockIdx.x;
    const int64_t t0 = tiles * me / walkers, t1 = tiles * (me + 1) / walkers;
    const unsigned base = smem_u32(sm);
    for (int64_t t = t0; t < t1 + S - 1; t++) {
        if (t < t1) {
            const unsigned stage = base + (unsigned)((t % S) * kTileBytes);
#pragma unroll
            for (int g = 0; g < 16 / R; g++) {
                const int key = 16 * w + R * g + lane / kLanes, sub = lane % kLanes;
                const char *src = pool + (int64_t)slots[t * kKeys + key] * kRowBytes;
#pragma unroll
                for (int i = 0; i < (72 + kLanes - 1) / kLanes; i++) {
                    const int c = sub + kLanes * i, b = c / 8, ch = c % 8;
                    if (c < 72)
                        cp_async16(stage + b * 8192 + key * 128 + 16 * (ch ^ (key & 7)), src + 16 * c, true);
                }
            }
        }
        cp_async_commit();
        cp_async_wait<S - 1>();
        __syncthreads();
    }
    if (sm[tid] == 0x5a && sm[tid + 1] == 0xa5)
        sink[0] = 1;
}

// One CTA a walker (a contiguous range of tiles) through S stages of shared memory from base,
// each completing on its mbarrier's transaction count: copy(stage, t, bar) issues tile t's
// kTileBytes into stage (thread 0 arms bar for them; a copy that lands first only makes the
// count go below zero for a while), and every thread waits for a stage before it is refilled.
template <int S, class Copy>
__device__ __forceinline__ void walk_tx_stages(unsigned base, uint64_t (&bars)[S], int64_t tiles, Copy copy)
{
    const int64_t t0 = tiles * blockIdx.x / gridDim.x, t1 = tiles * (blockIdx.x + 1) / gridDim.x;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; s++)
            mbar_init(smem_u32(&bars[s]), 1);
        mbar_init_fence();
    }
    __syncthreads();
    for (int64_t t = t0; t < t1 + S - 1; t++) {
        if (t < t1) {
            const unsigned bar = smem_u32(&bars[t % S]);
            if (threadIdx.x == 0)
                expect_tx(bar, kTileBytes);
            copy(base + (unsigned)(t % S) * kTileBytes, t, bar);
        }
        const int64_t done = t - (S - 1); // the tile whose stage the next iteration refills
        if (done >= t0)
            mbar_wait(smem_u32(&bars[done % S]), (unsigned)(((done - t0) / S) & 1));
    }
}

template <int S>
__global__ void __launch_bounds__(32, 1) gather_bulk(const char *pool, const int *slots, int64_t tiles, unsigned *sink)
{
    extern __shared__ __align__(1024) unsigned char sm[];
    __shared__ __align__(8) uint64_t bars[S];
    const int lane = threadIdx.x;
    walk_tx_stages<S>(smem_u32(sm), bars, tiles, [&](unsigned stage, int64_t t, unsigned bar) {
        for (int k = lane; k < kKeys; k += 32)
            bulk_copy_global(stage + k * kRowBytes, pool + (int64_t)slots[t * kKeys + k] * kRowBytes, kRowBytes, bar);
    });
    if (sm[lane] == 0x5a && sm[lane + 1] == 0xa5)
        sink[0] = 1;
}

// ---- clusters of two that share each tile through distributed shared memory ----------------

// The first tile of the range that this CTA's cluster pair walks (end = 1: the first past it).
__device__ __forceinline__ int64_t pair_tile(int64_t tiles, int end)
{
    const int pairs = gridDim.x / 2, me = blockIdx.x / 2 + end;
    return tiles * me / pairs;
}

// Stage s of each CTA: the tile's 9 k-blocks of [64 keys][128 B]; CTA r copies keys 32r..32r+31
// (4 KB of each k-block) and forwards them. Barriers per stage: mine (its 128 threads' copies
// landed), theirs (the other's 9 forwarded blocks landed: expect_tx), free (the other CTA is
// done with its stage s, so this CTA may refill its half and forward into the other's).
template <int S>
__global__ void __launch_bounds__(128, 1) gather_cluster(const char *pool, const int *slots, int64_t tiles, unsigned *sink)
{
    extern __shared__ __align__(1024) unsigned char sm[];
    __shared__ __align__(8) uint64_t mine[S], theirs[S], freed[S];
    constexpr unsigned kHalf = 9 * 4096;
    const int tid = threadIdx.x, w = tid / 32, lane = tid % 32;
    const unsigned rank = cluster_rank(), peer = rank ^ 1;
    const int64_t t0 = pair_tile(tiles, 0), t1 = pair_tile(tiles, 1);
    const unsigned base = smem_u32(sm);
    if (tid == 0) {
        for (int s = 0; s < S; s++) {
            mbar_init(smem_u32(&mine[s]), 128);
            mbar_init(smem_u32(&theirs[s]), 1);
            mbar_init(smem_u32(&freed[s]), 1);
            expect_tx(smem_u32(&theirs[s]), kHalf); // the first phase of every stage
        }
        mbar_init_fence();
    }
    cluster_sync(); // both CTAs' barriers exist before either forwards
    for (int64_t t = t0; t < t1 + S - 1; t++) {
        if (t < t1) { // this CTA's half of tile t into stage t % S
            const int s = (int)(t % S);
            const unsigned k = (unsigned)((t - t0) / S), stage = base + s * kTileBytes;
            mbar_wait<true>(smem_u32(&freed[s]), (k & 1) ^ 1); // the other CTA arrives on it
#pragma unroll
            for (int g = 0; g < 2; g++) { // warp w: keys 32·rank + 8w + 4g + lane / 8
                const int key = 32 * (int)rank + 8 * w + 4 * g + lane / 8, ch = lane % 8;
                const char *src = pool + (int64_t)slots[t * kKeys + key] * kRowBytes;
#pragma unroll
                for (int b = 0; b < 9; b++)
                    cp_async16(stage + b * 8192 + key * 128 + 16 * (ch ^ (key & 7)), src + 128 * b + 16 * ch, true);
            }
            cp_async_mbar_arrive(smem_u32(&mine[s]));
        }
        if (t - 1 >= t0 && t - 1 < t1 && tid == 0) { // forward tile t - 1 once it has landed here
            const int s = (int)((t - 1) % S);
            const unsigned k = (unsigned)((t - 1 - t0) / S), stage = base + s * kTileBytes;
            mbar_wait(smem_u32(&mine[s]), k & 1);
            fence_proxy_async(); // cp.async's writes before the bulk copy reads them
            for (int b = 0; b < 9; b++) {
                const unsigned off = stage + b * 8192 + rank * 4096;
                bulk_copy_to_peer(map_to(off, peer), off, 4096, map_to(smem_u32(&theirs[s]), peer));
            }
        }
        const int64_t d = t - (S - 1); // the tile whose stage is refilled next: both halves must be here
        if (d >= t0 && d < t1) {
            const int s = (int)(d % S);
            const unsigned k = (unsigned)((d - t0) / S);
            mbar_wait(smem_u32(&mine[s]), k & 1);
            mbar_wait(smem_u32(&theirs[s]), k & 1);
            __syncthreads(); // every thread done with the stage before it is released
            if (tid == 0) {
                expect_tx(smem_u32(&theirs[s]), kHalf); // the next phase's forward
                remote_arrive(map_to(smem_u32(&freed[s]), peer));
            }
        }
    }
    cluster_sync(); // no CTA exits while the other may still write into it
    if (sm[tid] == 0x5a && sm[tid + 1] == 0xa5)
        sink[0] = 1;
}

// ---- tensor copies of one 128-byte box per (row, k-block) ---------------------------------

// Box (x, y) of the tensor map (bf16 x of row y: k-block x / 64 of KV row y) to dst, counted on
// bar's transaction count as it lands; with a mask, into every CTA of the cluster the mask names,
// at the same shared-memory offsets (dst and bar: this CTA's addresses).
__device__ __forceinline__ void tma_box(unsigned dst, const CUtensorMap *map, int x, int y, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
                     dst),
                 "l"(map), "r"(x), "r"(y), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void tma_box_multicast(unsigned dst, const CUtensorMap *map, int x, int y, unsigned bar,
                                                  unsigned short mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
                 "l"(map), "r"(x), "r"(y), "r"(bar), "h"(mask)
                 : "memory");
}

// Boxes i = first, first + step, ... (below 576) of tile t into a stage: box i is k-block i % 9
// of key i / 9, which the layout puts at block (i % 9) · 8 KB, row key · 128 B.
template <bool kMulticast>
__device__ __forceinline__ void tma_tile(unsigned stage, const CUtensorMap *map, const int *slots, int64_t t, int first,
                                         int last, int step, unsigned bar)
{
    for (int i = first; i < last; i += step) {
        const int key = i / 9, b = i % 9, slot = slots[t * kKeys + key];
        if constexpr (kMulticast)
            tma_box_multicast(stage + b * 8192 + key * 128, map, 64 * b, slot, bar, 3);
        else
            tma_box(stage + b * 8192 + key * 128, map, 64 * b, slot, bar);
    }
}

// One CTA a walker, S stages, W warps issuing the boxes.
template <int S, int W>
__global__ void __launch_bounds__(32 * W, 1) gather_tma(const __grid_constant__ CUtensorMap map, const int *slots,
                                                        int64_t tiles, unsigned *sink)
{
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) uint64_t bars[S];
    unsigned char *sm = vbtool::align_1024(raw);
    const int tid = threadIdx.x;
    walk_tx_stages<S>(smem_u32(sm), bars, tiles, [&](unsigned stage, int64_t t, unsigned bar) {
        tma_tile<false>(stage, &map, slots, t, tid, 9 * kKeys, 32 * W, bar);
    });
    if (sm[tid] == 0x5a && sm[tid + 1] == 0xa5)
        sink[0] = 1;
}

// Clusters of two that walk the same tiles: CTA r issues boxes [288 r, 288 r + 288) of each
// tile into both CTAs. full[s]: the whole tile landed here (this CTA's boxes and the other's);
// freed[s]: the other CTA is done with its stage s, so this CTA may write into it again.
template <int S, int W>
__global__ void __launch_bounds__(32 * W, 1) gather_tma_pairs(const __grid_constant__ CUtensorMap map, const int *slots,
                                                              int64_t tiles, unsigned *sink)
{
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) uint64_t full[S], freed[S];
    unsigned char *sm = vbtool::align_1024(raw);
    const int tid = threadIdx.x;
    const unsigned rank = cluster_rank(), peer = rank ^ 1;
    const int64_t t0 = pair_tile(tiles, 0), t1 = pair_tile(tiles, 1);
    const unsigned base = smem_u32(sm);
    if (tid == 0) {
        for (int s = 0; s < S; s++) {
            mbar_init(smem_u32(&full[s]), 1);
            mbar_init(smem_u32(&freed[s]), 1);
        }
        mbar_init_fence();
    }
    cluster_sync(); // both CTAs' barriers exist before either copies into the other
    constexpr int kHalf = 9 * kKeys / 2;
    for (int64_t t = t0; t < t1 + S - 1; t++) {
        if (t < t1) {
            const int s = (int)(t % S);
            const unsigned k = (unsigned)((t - t0) / S);
            mbar_wait<true>(smem_u32(&freed[s]), (k & 1) ^ 1); // the other CTA arrives on it
            if (tid == 0)
                expect_tx(smem_u32(&full[s]), kTileBytes);
            tma_tile<true>(base + s * kTileBytes, &map, slots, t, kHalf * (int)rank + tid, kHalf * ((int)rank + 1), 32 * W,
                           smem_u32(&full[s]));
        }
        const int64_t d = t - (S - 1);
        if (d >= t0 && d < t1) {
            const int s = (int)(d % S);
            mbar_wait(smem_u32(&full[s]), (unsigned)(((d - t0) / S) & 1));
            __syncthreads();
            if (tid == 0)
                remote_arrive(map_to(smem_u32(&freed[s]), peer));
        }
    }
    cluster_sync(); // no CTA exits while the other may still copy into it
    if (sm[tid] == 0x5a && sm[tid + 1] == 0xa5)
        sink[0] = 1;
}

// The check: tile 0 of the slot table gathered by tensor copies (one CTA, or with multicast one
// cluster pair), every CTA's stage written out to out[cta] (kTileBytes each).
template <bool kPairs>
__global__ void __launch_bounds__(32, 1) tma_check(const __grid_constant__ CUtensorMap map, const int *slots,
                                                   unsigned char *out)
{
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) uint64_t bar;
    unsigned char *sm = vbtool::align_1024(raw);
    const int lane = threadIdx.x;
    const unsigned rank = kPairs ? cluster_rank() : 0;
    if (lane == 0) {
        mbar_init(smem_u32(&bar), 1);
        mbar_init_fence();
    }
    if constexpr (kPairs)
        cluster_sync();
    else
        __syncwarp();
    if (lane == 0)
        expect_tx(smem_u32(&bar), kTileBytes);
    constexpr int kBoxes = 9 * kKeys, kMine = kPairs ? kBoxes / 2 : kBoxes;
    tma_tile<kPairs>(smem_u32(sm), &map, slots, 0, kMine * (int)rank + lane, kMine * ((int)rank + 1), 32, smem_u32(&bar));
    mbar_wait(smem_u32(&bar), 0);
    for (int i = lane; i < kTileBytes / 16; i += 32)
        reinterpret_cast<uint4 *>(out + (size_t)blockIdx.x * kTileBytes)[i] = reinterpret_cast<const uint4 *>(sm)[i];
    if constexpr (kPairs)
        cluster_sync();
}

// The pool's 4-byte word w of row r reads (r << 10) | w in the check's pool, so every byte of a
// gathered tile names where it came from.
__global__ void fill_pattern(unsigned *pool, int64_t words)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < words; i += gridDim.x * (int64_t)blockDim.x)
        pool[i] = (unsigned)(i / (kRowBytes / 4)) << 10 | (unsigned)(i % (kRowBytes / 4));
}

// Clusters of n CTAs of mla_wgmma's shape (384 threads, 228,584 B of dynamic shared memory) that
// fit on the GPU at once; 0 when the query fails.
__global__ void __launch_bounds__(384, 1) wgmma_shaped() {}
int clusters_that_fit(int n)
{
    constexpr int kSmem = 228584;
    if (cudaFuncSetAttribute(wgmma_shaped, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem) != cudaSuccess ||
        (n > 8 && cudaFuncSetAttribute(wgmma_shaped, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess))
        return (void)cudaGetLastError(), 0;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config(n, n, 384, kSmem, attr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, wgmma_shaped, &cfg) != cudaSuccess)
        return (void)cudaGetLastError(), 0;
    return clusters;
}

template <class Launch> float median_ms(Launch launch)
{
    cudaEvent_t a, b;
    tool.check(cudaEventCreate(&a), "cudaEventCreate");
    tool.check(cudaEventCreate(&b), "cudaEventCreate");
    for (int i = 0; i < 3; i++)
        launch();
    std::vector<float> ms;
    for (int i = 0; i < 9; i++) {
        tool.check(cudaEventRecord(a), "cudaEventRecord");
        launch();
        tool.check(cudaEventRecord(b), "cudaEventRecord");
        tool.check(cudaEventSynchronize(b), "a probe kernel");
        float x;
        tool.check(cudaEventElapsedTime(&x, a, b), "cudaEventElapsedTime");
        ms.push_back(x);
    }
    tool.check(cudaGetLastError(), "a probe launch");
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// Milliseconds of one gather_cp_async<S, R, Pair> pass over the pool (its S stages allowed first;
// with Pair, two passes' worth of reads, every tile by two CTAs).
template <int S, int R, bool Pair = false>
float cp_async_ms(int sms, const char *pool, const int *slots, int64_t tiles, unsigned *sink)
{
    tool.check(cudaFuncSetAttribute(gather_cp_async<S, R, Pair>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    S * kTileBytes),
               "cudaFuncSetAttribute");
    const int grid = Pair ? sms / 2 * 2 : sms;
    return median_ms([&] { gather_cp_async<S, R, Pair><<<grid, 128, S * kTileBytes>>>(pool, slots, tiles, sink); });
}

// The same for gather_bulk<S>.
template <int S> float bulk_ms(int sms, const char *pool, const int *slots, int64_t tiles, unsigned *sink)
{
    tool.check(cudaFuncSetAttribute(gather_bulk<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, S * kTileBytes),
               "cudaFuncSetAttribute");
    return median_ms([&] { gather_bulk<S><<<sms, 32, S * kTileBytes>>>(pool, slots, tiles, sink); });
}

// The same for gather_cluster<S>: clusters of two over the SMs.
template <int S> float cluster_ms(int sms, const char *pool, const int *slots, int64_t tiles, unsigned *sink)
{
    tool.check(cudaFuncSetAttribute(gather_cluster<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, S * kTileBytes),
               "cudaFuncSetAttribute");
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config(2, sms / 2 * 2, 128, S * kTileBytes, attr);
    return median_ms([&] { tool.check(cudaLaunchKernelEx(&cfg, gather_cluster<S>, pool, slots, tiles, sink), "cudaLaunchKernelEx"); });
}

// A 2D tensor map over a pool of rows of 576 bf16: boxes of 64 bf16 of one row, landing in the
// 128-byte swizzle.
CUtensorMap pool_map(const void *pool, int64_t rows)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    if (!encode) {
        cudaDriverEntryPointQueryResult q;
        tool.check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void **>(&encode), 12000,
                                                    cudaEnableDefault, &q),
                   "cudaGetDriverEntryPointByVersion");
        if (q != cudaDriverEntryPointSuccess || !encode) {
            fprintf(stderr, "gather_probe: the driver has no cuTensorMapEncodeTiled\n");
            exit(1);
        }
    }
    CUtensorMap map;
    const cuuint64_t dims[2] = {kRowBytes / 2, (cuuint64_t)rows}, strides[1] = {kRowBytes};
    const cuuint32_t box[2] = {64, 1}, elems[2] = {1, 1};
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(pool), dims, strides, box, elems,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "gather_probe: cuTensorMapEncodeTiled failed (CUresult %d)\n", (int)r);
        exit(1);
    }
    return map;
}

// Dynamic shared memory of S stages for the tensor copies, and the 1024 bytes that align_1024
// may skip to reach the swizzle atom.
template <int S> constexpr int kTmaSmem = S * kTileBytes + 1024;

// Milliseconds of one gather_tma<S, W> pass over the pool.
template <int S, int W> float tma_ms(int sms, const CUtensorMap &map, const int *slots, int64_t tiles, unsigned *sink)
{
    constexpr int smem = kTmaSmem<S>;
    tool.check(cudaFuncSetAttribute(gather_tma<S, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "cudaFuncSetAttribute");
    return median_ms([&] { gather_tma<S, W><<<sms, 32 * W, smem>>>(map, slots, tiles, sink); });
}

// The same for gather_tma_pairs<S, W>: clusters of two over the SMs.
template <int S, int W>
float tma_pairs_ms(int sms, const CUtensorMap &map, const int *slots, int64_t tiles, unsigned *sink)
{
    constexpr int smem = kTmaSmem<S>;
    tool.check(cudaFuncSetAttribute(gather_tma_pairs<S, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "cudaFuncSetAttribute");
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config(2, sms / 2 * 2, 32 * W, smem, attr);
    return median_ms([&] {
        tool.check(cudaLaunchKernelEx(&cfg, gather_tma_pairs<S, W>, map, slots, tiles, sink), "cudaLaunchKernelEx");
    });
}

// Whether tensor copies of one-row boxes land in the swizzled k-block layout: tile 0 of a
// shuffled slot table over a patterned pool, gathered by one CTA and by a multicasting cluster
// pair, compared byte for byte. Prints the verdict; false on a mismatch.
bool tma_layout_ok(std::mt19937_64 &rng)
{
    constexpr int64_t kRows = 4096;
    unsigned *pool;
    int *slots;
    unsigned char *out;
    tool.check(cudaMalloc(&pool, kRows * kRowBytes), "cudaMalloc");
    tool.check(cudaMalloc(&slots, kKeys * sizeof(int)), "cudaMalloc");
    tool.check(cudaMalloc(&out, 2 * kTileBytes), "cudaMalloc");
    fill_pattern<<<64, 256>>>(pool, kRows * kRowBytes / 4);
    std::vector<int> s(kRows);
    for (int i = 0; i < kRows; i++)
        s[i] = i;
    std::shuffle(s.begin(), s.end(), rng);
    tool.check(cudaMemcpy(slots, s.data(), kKeys * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy");
    const CUtensorMap map = pool_map(pool, kRows);
    bool ok = true;
    for (int pairs = 0; pairs < 2; pairs++) {
        tool.check(cudaMemset(out, 0, 2 * kTileBytes), "cudaMemset");
        if (pairs) {
            tool.check(cudaFuncSetAttribute(tma_check<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kTmaSmem<1>),
                       "cudaFuncSetAttribute");
            cudaLaunchAttribute attr;
            const cudaLaunchConfig_t cfg = cluster_config(2, 2, 32, kTmaSmem<1>, attr);
            tool.check(cudaLaunchKernelEx(&cfg, tma_check<true>, map, (const int *)slots, out), "cudaLaunchKernelEx");
        } else {
            tool.check(cudaFuncSetAttribute(tma_check<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kTmaSmem<1>),
                       "cudaFuncSetAttribute");
            tma_check<false><<<1, 32, (kTmaSmem<1>)>>>(map, slots, out);
        }
        tool.check(cudaDeviceSynchronize(), "the tensor-copy check");
        std::vector<unsigned> got(2 * kTileBytes / 4);
        tool.check(cudaMemcpy(got.data(), out, 2 * kTileBytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
        long bad = 0, first = -1;
        for (int cta = 0; cta < (pairs ? 2 : 1); cta++)
            for (int key = 0; key < kKeys; key++)
                for (int b = 0; b < 9; b++)
                    for (int ch = 0; ch < 8; ch++)
                        for (int e = 0; e < 4; e++) {
                            const size_t at = (size_t)cta * kTileBytes / 4 + (b * 8192 + key * 128 + 16 * (ch ^ (key & 7))) / 4 + e;
                            const unsigned want = (unsigned)s[key] << 10 | (unsigned)(b * 32 + ch * 4 + e);
                            if (got[at] != want && bad++ == 0)
                                first = (long)at;
                        }
        printf("tensor-copy layout check, %s: %s", pairs ? "a multicasting cluster pair (both CTAs)" : "one CTA",
               bad ? "MISMATCH" : "every byte of a tile in the swizzled k-block layout\n");
        if (bad)
            printf(" (%ld words wrong, the first at word %ld)\n", bad, first);
        ok = ok && !bad;
    }
    cudaFree(pool);
    cudaFree(slots);
    cudaFree(out);
    return ok;
}

// Slots of n rows: single rows shuffled, or pages of 64 rows shuffled (rows in order inside).
std::vector<int> slot_table(int64_t n, bool pages, std::mt19937_64 &rng)
{
    std::vector<int> s(n);
    if (!pages) {
        for (int64_t i = 0; i < n; i++)
            s[i] = (int)i;
        std::shuffle(s.begin(), s.end(), rng);
        return s;
    }
    std::vector<int> pg(n / 64);
    for (size_t i = 0; i < pg.size(); i++)
        pg[i] = (int)i;
    std::shuffle(pg.begin(), pg.end(), rng);
    for (int64_t i = 0; i < n; i++)
        s[i] = i / 64 < (int64_t)pg.size() ? pg[i / 64] * 64 + (int)(i % 64) : (int)i;
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<int64_t> sizes;
    for (int i = 1; i < argc; i++) {
        char *end;
        const long long n = strtoll(argv[i], &end, 10);
        if (*end || n < kKeys || n > INT32_MAX / 2) {
            fprintf(stderr, "usage: gather_probe [ROWS...]  (ROWS: pool rows, %d to %d; default 1600000 728000)\n", kKeys,
                    INT32_MAX / 2);
            return 2;
        }
        sizes.push_back(n);
    }
    if (sizes.empty())
        sizes = {1600000, 728000};
    const int sms = tool.hopper_sms();
    const int64_t nmax = *std::max_element(sizes.begin(), sizes.end());
    char *pool;
    int *slots;
    unsigned *sink;
    tool.check(cudaMalloc(&pool, nmax * kRowBytes), "cudaMalloc (the row pool)");
    tool.check(cudaMemset(pool, 1, nmax * kRowBytes), "cudaMemset");
    tool.check(cudaMalloc(&slots, nmax * sizeof(int)), "cudaMalloc");
    tool.check(cudaMalloc(&sink, 4), "cudaMalloc");
    std::mt19937_64 rng(7);
    printf("clusters of mla_wgmma's shape (384 threads, 228,584 B) that fit on the %d SMs:", sms);
    for (int n : {1, 2, 4, 8, 16}) {
        const int fit = clusters_that_fit(n);
        printf(" %d of %d (%d CTAs);", fit, n, n * fit);
    }
    printf("\n\n");
    const bool tma_ok = tma_layout_ok(rng);
    printf("\nGB/s (1e9 bytes / s) gathering 1152-byte rows; cp.async, bulk and tma: one CTA per SM, S stages of 72 KB\n\n");
    printf("| pool | slots | ld 8x256 | cp.async S2 R16 | S2 R4 | S2 R2 | S2 R1 | S3 R4 | bulk S2 | S2 R4 pairs | S2 cluster | S3 cluster "
           "| tma S2 W1 | W4 | W16 | mc pairs W1 | W4 | W16 |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int64_t n : sizes) {
        for (bool pages : {false, true}) {
            const std::vector<int> s = slot_table(n, pages, rng);
            tool.check(cudaMemcpy(slots, s.data(), n * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy");
            const int64_t tiles = n / kKeys;
            const double rows_bytes = (double)n * kRowBytes, tile_bytes = (double)tiles * kTileBytes;
            const auto gbps = [](double bytes, float ms) { return bytes / ms / 1e6; };
            printf("| %.2f GB | %s |", rows_bytes / 1e9, pages ? "pages of 64 shuffled" : "rows shuffled");
            printf(" %.0f |", gbps(rows_bytes, median_ms([&] { gather_ld<<<sms * 8, 256>>>(pool, slots, n, sink); })));
            const float cp_ms[] = {cp_async_ms<2, 16>(sms, pool, slots, tiles, sink), // run in this order
                                   cp_async_ms<2, 4>(sms, pool, slots, tiles, sink),
                                   cp_async_ms<2, 2>(sms, pool, slots, tiles, sink),
                                   cp_async_ms<2, 1>(sms, pool, slots, tiles, sink),
                                   cp_async_ms<3, 4>(sms, pool, slots, tiles, sink)};
            for (float ms : cp_ms)
                printf(" %.0f |", gbps(tile_bytes, ms));
            printf(" %.0f |", gbps(tile_bytes, bulk_ms<2>(sms, pool, slots, tiles, sink)));
            printf(" %.0f |", gbps(tile_bytes, cp_async_ms<2, 4, true>(sms, pool, slots, tiles, sink)));
            printf(" %.0f |", gbps(tile_bytes, cluster_ms<2>(sms, pool, slots, tiles, sink)));
            printf(" %.0f |", gbps(tile_bytes, cluster_ms<3>(sms, pool, slots, tiles, sink)));
            if (tma_ok) {
                const CUtensorMap map = pool_map(pool, n);
                const float tma[] = {tma_ms<2, 1>(sms, map, slots, tiles, sink), tma_ms<2, 4>(sms, map, slots, tiles, sink),
                                     tma_ms<2, 16>(sms, map, slots, tiles, sink),
                                     tma_pairs_ms<2, 1>(sms, map, slots, tiles, sink),
                                     tma_pairs_ms<2, 4>(sms, map, slots, tiles, sink),
                                     tma_pairs_ms<2, 16>(sms, map, slots, tiles, sink)};
                for (float ms : tma)
                    printf(" %.0f |", gbps(tile_bytes, ms));
                printf("\n");
            } else {
                printf(" - | - | - | - | - | - |\n");
            }
            fflush(stdout);
        }
    }
    return 0;
}
