// Device-side split scheduling for kernels that give one CTA all T·H rows of a request (or
// of one row tile of it) against a slice of its KV, and the combine step for the slices.
//
// The work of a launch is a stream of units u = (request b, row tile rt), in request order.
// Unit u costs c0 + tiles(b) positions: c0 stands for a piece's fixed cost (reading Q into
// L1, writing a partial, merging it) and tiles(b) = ceil((P_b + T_b) / kKeys) are its KV
// tiles. A grid of G CTAs (one per SM, fixed for a captured batch size) cuts the stream into
// G equal spans of at least min_span positions; CTA g processes the tiles that fall in span
// g. Every CTA derives the same cut from kv_indptr / qo_indptr, so no host step, metadata
// launch or synchronisation is needed and a graph captured once replays any lengths:
// a batch mixing 200k- and 500-token requests splits the long ones until every CTA has the
// same number of tiles, one 200k-token request is spread over every SM, and a short batch
// is cut into few pieces (min_span) instead of a fixed 64.
//
// A unit that falls into one span is written to o directly. A unit cut by span boundaries
// leaves one fp32 partial (unnormalised O, running max and sum) per piece in the workspace;
// the combine launch merges them. Partial slots are fixed by the cut: CTA g writes the
// first unit it touches to slot 2g and the last to slot 2g+1 (a unit in the middle of a
// span is never cut), so a unit cut over CTAs g0..g1 sits in slot0 (2·g0 or 2·g0+1) and
// then 2·g for g = g0+1..g1. CTA g0 records (pieces, slot0) in the unit's plan entry every
// launch; the combine reads only plan entries of units present in this launch.
#pragma once

#include "ptx_sm80.cuh"
#include "verify_common.cuh"

namespace vb {

struct PlanEntry {
    int pieces; // CTAs that hold a piece of the unit (1: written to o directly)
    int slot0;  // partial slot of the first piece
};

// Fixed per launch configuration: depends only on the capture limits and the device.
struct SchedConfig {
    int grid;        // CTAs of the main launch (one per SM)
    int rows;        // rows per unit (row tile): a multiple of 8
    int row_tiles;   // most row tiles of one request: ceil(max_draft * heads / rows)
    int c0;          // fixed cost of a piece, in tiles
    int min_span;    // smallest span, in tiles
};

// Workspace: plan [batch * row_tiles], then per slot (2 * grid) the (max, sum) of every row
// and the rows x d_v unnormalised output, then cta_bytes of scratch per CTA (a kernel's own
// per-piece staging, e.g. q in the order its MMAs read it).
struct SchedWorkspace {
    PlanEntry *plan;
    float2 *ml;
    float *acc;
    unsigned char *cta_scratch;

    __host__ __device__ SchedWorkspace(void *ws, const SchedConfig &c, int batch, int d_v)
    {
        plan = static_cast<PlanEntry *>(ws);
        ml = reinterpret_cast<float2 *>(static_cast<char *>(ws) + plan_bytes(c, batch));
        acc = reinterpret_cast<float *>(ml + (size_t)2 * c.grid * c.rows);
        cta_scratch = reinterpret_cast<unsigned char *>(acc + (size_t)2 * c.grid * c.rows * d_v);
    }

    static size_t bytes(const SchedConfig &c, int batch, int d_v, size_t cta_bytes)
    {
        return plan_bytes(c, batch) + (size_t)2 * c.grid * c.rows * (sizeof(float2) + sizeof(float) * d_v) +
               (size_t)c.grid * cta_bytes;
    }

  private:
    static __host__ __device__ size_t plan_bytes(const SchedConfig &c, int batch)
    {
        return (sizeof(PlanEntry) * (size_t)batch * c.row_tiles + 255) / 256 * 256;
    }
};

// One request as a unit sees it, read from the index buffers.
struct Request {
    int64_t q0, T, kv0, P, mask0;
    int tiles, row_tiles;
};

template <int kKeys>
__host__ __device__ __forceinline__ Request load_request(const vb_verify_params &p, const SchedConfig &c, int b)
{
    Request r;
    r.q0 = load_index(p.qo_indptr, p.qo_indptr_width, b);
    r.T = load_index(p.qo_indptr, p.qo_indptr_width, b + 1) - r.q0;
    r.kv0 = load_index(p.kv_indptr, p.kv_indptr_width, b);
    r.P = load_index(p.kv_indptr, p.kv_indptr_width, b + 1) - r.kv0;
    r.mask0 = load_index(p.mask_indptr, p.mask_indptr_width, b);
    r.tiles = (int)((r.P + r.T + kKeys - 1) / kKeys);
    r.row_tiles = r.T > 0 ? ((int)r.T * p.heads + c.rows - 1) / c.rows : 0; // 32-bit: rows of a launch fit an int
    return r;
}

// Positions a request takes in the cut: its units' fixed costs and tiles.
__host__ __device__ __forceinline__ int unit_cost(const Request &r, const SchedConfig &c)
{
    return r.row_tiles * (r.tiles + c.c0);
}

// The partial slot of piece k (in tile order) of a unit cut into plan.pieces pieces.
__host__ __device__ __forceinline__ int piece_slot(const PlanEntry &plan, int k)
{
    return k ? 2 * (plan.slot0 / 2 + k) : plan.slot0;
}

// The CTA a schedule is walked for: blockIdx.x on the device; on the host (the schedule's
// self-check, kernels/testing/schedule_check.cu) the caller names it.
__host__ __device__ __forceinline__ int schedule_cta(int host_cta)
{
#ifdef __CUDA_ARCH__
    (void)host_cta;
    return (int)blockIdx.x;
#else
    return host_cta;
#endif
}

// A piece: the tiles [tile_lo, tile_hi) of unit (b, rt), and where its result goes.
struct Piece {
    int b, rt;
    int tile_lo, tile_hi;
    bool direct;     // the whole unit: write o and lse
    int slot;        // else: the partial slot
    bool plan_owner; // this CTA records the unit's plan entry
    PlanEntry plan;
};

// The piece a CTA works on and the rows of its unit, as its threads read them. Kernels keep it
// in shared memory (written by one thread per walk step) so that it costs no registers.
struct PieceRows {
    Request rq;
    Piece pc;
    int64_t keys;    // P + T
    int row0, nrows; // rows [row0, row0 + nrows) of the request: row r = draft token r / H, head r % H

    // After Schedule::next has filled pc: the request and the rows of its unit.
    __device__ void set_unit(const Request &r, int rows, int heads)
    {
        rq = r;
        keys = r.P + r.T;
        row0 = pc.rt * rows;
        nrows = (int)min((int64_t)rows, r.T * heads - row0);
    }

    // Request row of unit row r; rows past the unit repeat its last (computed, never written).
    __device__ int row(int r) const { return row0 + min(r, nrows - 1); }
    __device__ int64_t token(const vb_verify_params &p, int r) const { return rq.q0 + (row0 + r) / p.heads; }
    __device__ int head(const vb_verify_params &p, int r) const { return (row0 + r) % p.heads; }

    // o row of unit row r, nullptr past the unit's rows.
    __device__ uint16_t *o_row(const vb_verify_params &p, int r) const
    {
        return r < nrows ? p.o + token(p, r) * p.stride_o_token + head(p, r) * p.stride_o_head : nullptr;
    }

    // KV slot of key j of the request (slot 0, the padding slot, past its end).
    __device__ int64_t key_slot(const vb_verify_params &p, int64_t j) const
    {
        if (j >= keys)
            return 0;
        return j < rq.P ? load_index(p.kv_indices, p.kv_indices_width, rq.kv0 + j)
                        : load_index(p.out_cache_loc, p.out_cache_loc_width, rq.q0 + j - rq.P);
    }
};

// lse in natural log from a row's log2-domain reference max and sum (-inf for an empty row).
__device__ __forceinline__ float row_lse(float m, float l) { return l > 0.f ? (m + log2f(l)) * kLn2 : -CUDART_INF_F; }

// One m16n8 accumulator tile of Oᵀ (dims d0 + g and d0 + g + 8, rows 2t and 2t + 1 of its n8
// tile; a thread's c[0..3] as mma.sync and wgmma lay them out) to bf16 o, normalised by the
// rows' inverse sums ia, ib: movmatrix turns each 8×8 half so that lane (g, t) holds row g,
// dims 2t and 2t + 1, one 4-byte store. dst is row g's o row (nullptr: not written).
__device__ __forceinline__ void store_o_m16n8(uint16_t *dst, int d0, float c0, float c1, float c2, float c3, float ia,
                                              float ib)
{
    const int t = threadIdx.x % 4;
    const unsigned lo = movmatrix_t(pack_bf16(c0 * ia, c1 * ib));
    const unsigned hi = movmatrix_t(pack_bf16(c2 * ia, c3 * ib));
    if (dst) {
        *reinterpret_cast<unsigned *>(dst + d0 + 2 * t) = lo;
        *reinterpret_cast<unsigned *>(dst + d0 + 8 + 2 * t) = hi;
    }
}
// The same tile, unnormalised fp32, into a partial slot's rows: acc holds dv floats per unit
// row; n0 = 8j + 2t is the thread's first row, d = d0 + g its first dim.
__device__ __forceinline__ void store_partial_m16n8(float *acc, int dv, int nrows, int n0, int d, float c0, float c1,
                                                    float c2, float c3)
{
    if (n0 < nrows)
        acc[(size_t)n0 * dv + d] = c0, acc[(size_t)n0 * dv + d + 8] = c2;
    if (n0 + 1 < nrows)
        acc[(size_t)(n0 + 1) * dv + d] = c1, acc[(size_t)(n0 + 1) * dv + d + 8] = c3;
}

// The cut, as every CTA of the main launch derives it. Built once per CTA by all its
// threads (start_positions needs the whole block), then walked piece by piece.
template <int kKeys, int kThreads> struct Schedule {
    int span, begin, end; // this CTA's positions [begin, end)
    int b, rt;            // the unit the walk is at
    int64_t unit_start;   // its first position
    Request req;

    // Exclusive prefix of unit costs over requests into pos[0 .. batch]; returns the total.
    // pos must hold batch + 1 ints of shared memory. Needs every thread of the block.
    static __device__ int start_positions(const vb_verify_params &p, const SchedConfig &c, int *pos)
    {
        __shared__ int warp_sum[kThreads / kWarp];
        __shared__ int carry;
        constexpr int kPer = 4;
        if (threadIdx.x == 0)
            carry = 0;
        __syncthreads();
        for (int base = 0; base < p.batch; base += kThreads * kPer) {
            int cost[kPer], sum = 0;
#pragma unroll
            for (int k = 0; k < kPer; k++) {
                int b = base + threadIdx.x * kPer + k;
                cost[k] = 0;
                if (b < p.batch) {
                    cost[k] = unit_cost(load_request<kKeys>(p, c, b), c);
                }
                sum += cost[k];
            }
            int incl = sum; // inclusive scan over the warp, then over warps
#pragma unroll
            for (int o = 1; o < kWarp; o *= 2) {
                int y = __shfl_up_sync(0xffffffffu, incl, o);
                if (threadIdx.x % kWarp >= o)
                    incl += y;
            }
            if (threadIdx.x % kWarp == kWarp - 1)
                warp_sum[threadIdx.x / kWarp] = incl;
            __syncthreads();
            int before = carry;
            for (int w = 0; w < (int)(threadIdx.x / kWarp); w++)
                before += warp_sum[w];
            int run = before + incl - sum;
#pragma unroll
            for (int k = 0; k < kPer; k++) {
                int b = base + threadIdx.x * kPer + k;
                if (b < p.batch)
                    pos[b] = run;
                run += cost[k];
            }
            __syncthreads();
            if (threadIdx.x == kThreads - 1)
                carry = run;
            __syncthreads();
        }
        if (threadIdx.x == 0)
            pos[p.batch] = carry;
        __syncthreads();
        return pos[p.batch];
    }

    // Positions this CTA covers, and the unit holding the first of them. (host_cta: see
    // schedule_cta.)
    __host__ __device__ bool start(const vb_verify_params &p, const SchedConfig &c, const int *pos, int total,
                                   int host_cta = 0)
    {
        span = max((total + c.grid - 1) / c.grid, c.min_span);
        begin = schedule_cta(host_cta) * span;
        end = min(begin + span, total);
        if (begin >= end)
            return false;
        int lo = 0, hi = p.batch; // pos[lo] <= begin < pos[hi]
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (pos[mid] <= begin)
                lo = mid;
            else
                hi = mid;
        }
        b = lo;
        req = load_request<kKeys>(p, c, b);
        const int cost = req.tiles + c.c0;
        rt = (begin - pos[b]) / cost;
        unit_start = pos[b] + (int64_t)rt * cost;
        return true;
    }

    // The next non-empty piece of this CTA, or false when its span is done.
    __host__ __device__ bool next(const vb_verify_params &p, const SchedConfig &c, Piece &pc, int host_cta = 0)
    {
        const int cta = schedule_cta(host_cta);
        for (;;) {
            while (rt >= req.row_tiles) { // requests without draft tokens have no units
                if (++b >= p.batch)
                    return false;
                req = load_request<kKeys>(p, c, b);
                rt = 0;
            }
            if (unit_start >= end)
                return false;
            const int64_t first_tile = unit_start + c.c0, unit_end = first_tile + req.tiles;
            const int64_t lo = max((int64_t)begin, first_tile), hi = min((int64_t)end, unit_end);
            pc.b = b, pc.rt = rt;
            pc.tile_lo = (int)(lo - first_tile), pc.tile_hi = (int)(hi - first_tile);
            // Positions fit an int (total does): 32-bit divisions, where 64-bit ones are a
            // software routine on the walk's critical path.
            const int g0 = (int)first_tile / span, g1 = (int)(unit_end - 1) / span;
            pc.plan.pieces = g1 - g0 + 1;
            pc.plan.slot0 = 2 * g0 + ((int64_t)g0 * span >= unit_start ? 0 : 1);
            pc.direct = pc.plan.pieces == 1;
            pc.plan_owner = cta == g0;
            pc.slot = pc.plan_owner ? pc.plan.slot0 : 2 * cta;
            unit_start = unit_end;
            rt++;
            if (hi > lo)
                return true;
        }
    }
};

// Shapes the one-CTA-per-request kernels refuse: they are built for one d_qk / d_v, keep the
// schedule's prefix array of batch + 1 ints in shared memory, and copy q and KV rows in 16-byte
// pieces and o in 4-byte ones. 0 when supported; else 1 with the reason in why.
inline int unsupported_mla_rows(const vb_verify_params *p, int d_qk, int d_v, int max_batch, char *why, size_t n)
{
    if (p->d_qk != d_qk || p->d_v != d_v) {
        snprintf(why, n, "built for MLA's d_qk %d and d_v %d, got %d and %d", d_qk, d_v, p->d_qk, p->d_v);
        return 1;
    }
    if (p->batch > max_batch) {
        snprintf(why, n, "batch %d exceeds %d", p->batch, max_batch);
        return 1;
    }
    if (p->stride_q_head % 8 || p->stride_q_token % 8 || p->stride_kv_slot % 8 || p->stride_o_head % 2 ||
        p->stride_o_token % 2) {
        snprintf(why, n, "needs q and KV rows aligned to 16 bytes and o rows to 4");
        return 1;
    }
    return 0;
}

// The checks before a scheduled launch enqueues anything: buffers aligned for 16-byte q and
// KV copies, the workspace for its float4 partials. cudaErrorInvalidValue (and one line on
// stderr) when refused.
inline cudaError_t check_scheduled_launch(const vb_verify_params &p, const void *ws, const char *kernel)
{
    if (cudaError_t e = check_alignment(p, kernel, 16))
        return e;
    if ((uintptr_t)ws % 256) {
        fprintf(stderr, "%s: the workspace at %p is not 256-byte aligned: launch refused\n", kernel, ws);
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

// The grid of a scheduled launch: one CTA per SM of the current device (0 when none answers).
inline int device_sm_count()
{
    static int sms = 0;
    int dev = 0;
    if (!sms && (cudaGetDevice(&dev) != cudaSuccess ||
                 cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess))
        sms = 0;
    return sms;
}

// The combine launch: merges the partials of rows whose unit was cut (rows of uncut units were
// written by the main launch). A row is one worker's: 128 threads, a float4 of the row each,
// grid-strided over every possible unit row, so no search maps a row to its request. A worker
// merges the row's pieces in one pass, kBatch at a time, every load of a batch (each piece's
// (max, sum) and its partial row) issued before any result is used: a row costs its two index
// loads and one memory latency per kBatch pieces. (The previous combine, one block per row with
// a max pass, a weight pass and a barrier between them, spent 5-33 µs of a launch at the target
// shapes: results/h200/NOTES.md.) Every thread derives the same weights, so no thread waits for
// another. The grid has 8 workers per SM (at 80 registers 6 fit at a time): the rows, not the
// pieces, are the parallelism when many units are cut.
constexpr int kCombineThreads = 128, kCombineBlocksPerSm = 8;

template <int kDv>
__global__ void __launch_bounds__(kCombineThreads) combine_pieces(vb_verify_params p, void *ws, SchedConfig c)
{
    constexpr int kBatch = 8;
    static_assert(kDv == kCombineThreads * 4, "one float4 of the row per thread");
    const SchedWorkspace w(ws, c, p.batch, kDv);
    const int tid = threadIdx.x;
    const int64_t unit_rows = (int64_t)p.batch * c.row_tiles * c.rows;
    for (int64_t idx = blockIdx.x; idx < unit_rows; idx += gridDim.x) {
        const int u = (int)(idx / c.rows), rr = (int)(idx % c.rows), b = u / c.row_tiles;
        const int64_t r = (int64_t)(u % c.row_tiles) * c.rows + rr; // row of request b
        const int64_t q0 = load_index(p.qo_indptr, p.qo_indptr_width, b);
        const int64_t T = load_index(p.qo_indptr, p.qo_indptr_width, b + 1) - q0;
        const PlanEntry plan = w.plan[u]; // written this launch only for units present in it
        if (r >= T * p.heads || plan.pieces <= 1)
            continue;

        // Online over the pieces: m the largest max of a piece that saw a visible key so far,
        // acc and lsum scaled to it.
        float m = -CUDART_INF_F, lsum = 0.f;
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int k0 = 0; k0 < plan.pieces; k0 += kBatch) {
            float2 ml[kBatch];
            float4 v[kBatch];
#pragma unroll
            for (int i = 0; i < kBatch; i++) {
                const bool in = k0 + i < plan.pieces;
                const size_t slot = in ? (size_t)piece_slot(plan, k0 + i) * c.rows + rr : 0;
                ml[i] = in ? w.ml[slot] : make_float2(-CUDART_INF_F, 0.f);
                v[i] = in ? reinterpret_cast<const float4 *>(w.acc + slot * kDv)[tid] : make_float4(0.f, 0.f, 0.f, 0.f);
            }
            float mb = m;
#pragma unroll
            for (int i = 0; i < kBatch; i++)
                if (ml[i].y > 0.f)
                    mb = fmaxf(mb, ml[i].x);
            const float scale = mb == m ? 1.f : exp2f(m - mb); // 0 while m is -inf
            m = mb;
            lsum *= scale;
            acc.x *= scale, acc.y *= scale, acc.z *= scale, acc.w *= scale;
#pragma unroll
            for (int i = 0; i < kBatch; i++) {
                if (!(ml[i].y > 0.f)) // no visible key: weight 0 (and its row is not read into acc)
                    continue;
                const float f = exp2f(ml[i].x - m);
                lsum += ml[i].y * f;
                acc.x += v[i].x * f, acc.y += v[i].y * f, acc.z += v[i].z * f, acc.w += v[i].w * f;
            }
        }
        const int64_t t = q0 + r / p.heads;
        const int h = (int)(r % p.heads);
        const float inv = lsum > 0.f ? 1.f / lsum : 0.f;
        __nv_bfloat162 *o = reinterpret_cast<__nv_bfloat162 *>(p.o + t * p.stride_o_token + h * p.stride_o_head);
        o[2 * tid] = __floats2bfloat162_rn(acc.x * inv, acc.y * inv);
        o[2 * tid + 1] = __floats2bfloat162_rn(acc.z * inv, acc.w * inv);
        if (p.lse && tid == 0)
            p.lse[t * p.heads + h] = row_lse(m, lsum);
    }
}

// The combine launch behind a main launch of config c.
template <int kDv> inline cudaError_t launch_combine(const vb_verify_params &p, void *ws, const SchedConfig &c,
                                                     cudaStream_t stream)
{
    combine_pieces<kDv><<<c.grid * kCombineBlocksPerSm, kCombineThreads, 0, stream>>>(p, ws, c);
    return cudaGetLastError();
}

} // namespace vb
