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

#include "phase_stamps.cuh"
#include "ptx_sm80.cuh"
#include "verify_common.cuh"

namespace vb {

struct PlanEntry {
    int pieces;            // CTAs that hold a piece of the unit (1: written to o directly)
    unsigned short slot0;  // partial slot of the first piece (2 x grid slots: grids up to 32767 CTAs)
    unsigned short drop;   // 1: the combine drops the unit's partial lines from L2 once merged
};

// n / d and n % d for 0 <= n < 2^31 and a divisor d >= 1 fixed per launch, by a multiply-high,
// an add and a shift with a reciprocal the host computes (Granlund and Montgomery's
// m = 2^32 (2^l - d) / d + 1, l = ceil(log2 d); the add cannot overflow below 2^31). The
// combine lists its items by four such divisions: as integer divisions by runtime values they
// made its listing (between its first two barriers) 215 instructions, this form 131 (sm_90a),
// and the launch at bs 1 × 512 took 0.4 µs less with it (both scheduled kernels, graph replays).
// The scheduled kernels split a request row into (draft token, head) by SchedConfig::heads the
// same way, where a piece's q copies, mask rows and o rows are addressed.
struct FastDiv {
    unsigned d, m, l;

    FastDiv() = default;
    __host__ explicit FastDiv(unsigned divisor) : d(divisor), l(0)
    {
        while ((1ull << l) < d)
            l++;
        m = (unsigned)(((1ull << 32) * ((1ull << l) - d)) / d + 1);
    }
    __host__ __device__ unsigned div(unsigned n) const
    {
#ifdef __CUDA_ARCH__
        return (__umulhi(n, m) + n) >> l;
#else
        return (unsigned)(((uint64_t)n * m >> 32) + n) >> l;
#endif
    }
    __host__ __device__ unsigned mod(unsigned n, unsigned q) const { return n - q * d; } // q = div(n)
};

// Fixed per launch configuration: depends only on the capture limits and the device.
struct SchedConfig {
    int grid;        // CTAs of the main launch (one per SM)
    int rows;        // rows per unit (row tile): a multiple of 8
    int row_tiles;   // most row tiles of one request: ceil(max_draft * heads / rows)
    int c0;          // fixed cost of a piece, in tiles
    int min_span;    // smallest span, in tiles
    int drop_span;   // one-CTA spans longer than this stream more KV than L2 holds (drop_span_of)
    FastDiv heads;   // the launch's query heads: request row r is draft token r / heads, head r % heads
};

// Workspace: plan [batch * row_tiles], then per slot (2 * grid) the (max, sum) of every row
// and the rows x d_v unnormalised output, then cta_bytes of scratch per CTA (a kernel's own
// per-piece staging, e.g. q in the order its MMAs read it).
struct Piece;

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

    // A cut unit's plan entry, by the CTA that owns it (Piece::plan_owner), for the combine.
    __device__ void record_plan(const Piece &pc, int row_tiles) const;

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

__device__ inline void SchedWorkspace::record_plan(const Piece &pc, int row_tiles) const
{
    plan[(size_t)pc.b * row_tiles + pc.rt] = pc.plan;
}

// The piece a CTA works on and the rows of its unit, as its threads read them. Kernels keep it
// in shared memory (written by one thread per walk step) so that it costs no registers.
struct PieceRows {
    Request rq;
    Piece pc;
    int64_t keys;    // P + T
    int row0, nrows; // rows [row0, row0 + nrows) of the request: row r = draft token r / H, head r % H
    FastDiv heads;   // H (SchedConfig::heads)

    // After Schedule::next has filled pc: the request and the rows of its unit.
    __device__ void set_unit(const Request &r, int rows, const FastDiv &query_heads)
    {
        rq = r;
        keys = r.P + r.T;
        row0 = pc.rt * rows;
        nrows = (int)min((int64_t)rows, r.T * query_heads.d - row0);
        heads = query_heads;
    }

    // A unit on a group of kHalves CTAs (row pairs, quads): after set_unit, this CTA's share of
    // its rows, rows share·h .. of CTA h = blockIdx.x % kHalves; only the first CTA records the
    // plan. False when the unit's rows all fall to the group's other CTAs.
    template <int kHalves> __device__ __forceinline__ bool take_share(int share)
    {
        if constexpr (kHalves > 1) {
            const int first = (int)blockIdx.x % kHalves * share;
            row0 += first;
            nrows = min(nrows - first, share);
            pc.plan_owner = pc.plan_owner && first == 0;
        }
        return nrows > 0;
    }
    // Where this CTA's rows start in the unit's partial slot (0 unless the unit is shared).
    template <int kHalves> __device__ __forceinline__ int slot_row0(int unit_rows) const
    {
        return kHalves == 1 ? 0 : row0 - pc.rt * unit_rows;
    }

    // Request row of unit row r; rows past the unit repeat its last (computed, never written).
    __device__ int row(int r) const { return row0 + min(r, nrows - 1); }
    __device__ int64_t token(int r) const { return rq.q0 + heads.div(row0 + r); }
    __device__ int head(int r) const { return (int)heads.mod(row0 + r, heads.div(row0 + r)); }

    // q row of unit row r (rows past the unit repeat its last, as row()).
    __device__ const uint16_t *q_row(const vb_verify_params &p, int r) const
    {
        const unsigned lr = row(r), t = heads.div(lr);
        return p.q + (rq.q0 + t) * p.stride_q_token + heads.mod(lr, t) * p.stride_q_head;
    }

    // o row of unit row r, nullptr past the unit's rows.
    __device__ uint16_t *o_row(const vb_verify_params &p, int r) const
    {
        return r < nrows ? p.o + token(r) * p.stride_o_token + head(r) * p.stride_o_head : nullptr;
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

// The span of a cut of total positions into `cuts` spans (at least min_span). With kAlign, when
// every request costs the same (first_cost, request 0's positions, times batch is the total: a
// stand-in that costs only balance when it guesses wrong, never coverage, since the span only
// grows) and holds several units (row tiles; eagle64: 8 units of 64 rows), the span is the
// smallest up to 1/16 longer that divides a unit's cost: then every unit starts at a span
// boundary, and the units of a request read each KV tile at about the same time, the later ones
// from L2. mla_wgmma's 64-row walk (one CTA a unit) aligns: eagle64 measured 90.1 → 88.7 µs on
// hot graph replays and 97.7 → 91.8 with L2 flushed, the other 15 records of that kernel within
// 1.1% hot and 3% cold either way (results/h200/NOTES.md, thirty-sixth and thirty-seventh;
// tests/data/sanitize_paths.json's san-aligned-units runs the aligned cut under the sanitizers).
// mla_onepass, bound by its MMAs, measured slower with it.
template <bool kAlign>
__host__ __device__ __forceinline__ int cut_span(const SchedConfig &c, int cuts, int batch, int first_cost, int total)
{
    const int span = max((total + cuts - 1) / cuts, c.min_span);
    if (!kAlign || c.row_tiles < 2 || batch < 1 || (int64_t)first_cost * batch != total)
        return span;
    const int unit = first_cost / c.row_tiles, k = unit / span;
    if (k < 1 || unit % k || unit / k * 16 > span * 17)
        return span;
    return unit / k;
}

// The cut, as every CTA of the main launch derives it. Built once per CTA by all its
// threads (start_positions needs the whole block), then walked piece by piece.
// kTag: a file with several kernels gives each its own Schedule type, so that each keeps
// start_positions' shared scratch to itself (mla_wgmma's 72-, 64- and 16-row kernels).
// kHalves: CTAs that share each span (2: a CTA pair, each taking half of every unit's rows; the
// cut is then over grid / 2 spans and CTAs 2g and 2g + 1 walk span g). kAlign: see cut_span.
template <int kKeys, int kThreads, int kTag = 0, int kHalves = 1, bool kAlign = false> struct Schedule {
    int span, begin, end; // this CTA's positions [begin, end)
    int b, rt;            // the unit the walk is at
    int64_t unit_start;   // its first position
    Request req;

    // Exclusive prefix of unit costs over requests into pos[0 .. batch]; returns the total.
    // pos must hold batch + 1 ints of shared memory. Needs every thread of the block. One request
    // a thread a pass (a pass covers 256-512 requests). Four a thread, unrolled, each behind its
    // own branch, made a thread with several requests wait for their index loads in turn; one a
    // thread measured faster for mla_wgmma (A/B, results/h200/NOTES.md, sixteenth: bs 8 x 512
    // 21.3 -> 20.4 us, bs 8 x 4096 35.3 -> 34.8), where the four with their loads issued together
    // gained nothing (bs 8 x 4096 1.000).
    static __device__ int start_positions(const vb_verify_params &p, const SchedConfig &c, int *pos)
    {
        __shared__ int warp_sum[kThreads / kWarp];
        __shared__ int carry;
        if (threadIdx.x == 0)
            carry = 0;
        __syncthreads();
        for (int base = 0; base < p.batch; base += kThreads) {
            const int b = base + (int)threadIdx.x;
            const int cost = b < p.batch ? unit_cost(load_request<kKeys>(p, c, b), c) : 0;
            int incl = cost; // inclusive scan over the warp, then over warps
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
            if (b < p.batch)
                pos[b] = before + incl - cost;
            __syncthreads();
            if (threadIdx.x == kThreads - 1)
                carry = before + incl;
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
        const int cuts = c.grid / kHalves;
        span = cut_span<kAlign>(c, cuts, p.batch, p.batch > 0 ? pos[1] : 0, total);
        begin = schedule_cta(host_cta) / kHalves * span;
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
        const int cta = schedule_cta(host_cta) / kHalves; // the span's index
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
            // The kHalves CTAs sharing a span read the same KV, so the launch streams
            // span · grid / kHalves distinct tiles: drop only when those overflow L2.
            pc.plan.drop = span > c.drop_span * kHalves;
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

// SchedConfig::drop_span for l2_bytes of L2 and a grid of CTAs reading tiles of tile_bytes of
// KV: the span whose KV on every CTA fills L2. A launch that streams more leaves its partials'
// dirty lines to be evicted, and written back to DRAM, by the next launch's stream; the combine
// then drops them once merged. The CTAs of a pair, quad or octet read one span's KV together,
// so their span is compared with drop_span times the CTAs in the group (Schedule::next). By
// one-CTA spans, bs 8 × 4096's pair cut (spans of 9 positions, drop_span 6 on an H200's 60 MB)
// dropped though its 37.7 MB of KV fit L2, where not dropping saved 0.46 µs (results/h200/
// NOTES.md, thirty-eighth); compared so, bs 8 × 4096 measured 0.990 and 0.991 of before (A/B,
// two machine starts). Host-callable apart from the device query below, for the schedule's
// self-check.
inline int drop_span_of(int l2_bytes, int grid, int tile_bytes) { return l2_bytes / tile_bytes / grid; }

// drop_span_of for the current device's L2 (40 MB, A100's, when the query fails: its error is
// not sticky, and is cleared).
inline int drop_span_for(int grid, int tile_bytes)
{
    static int l2 = 0;
    int dev = 0;
    if (!l2 && (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess))
        (void)cudaGetLastError(), l2 = 40 << 20;
    return drop_span_of(l2, grid, tile_bytes);
}

// A scheduled kernel's launch config from the unit it chose (rows a unit, most units a request),
// its piece cost c0 and smallest span, and the bytes of one KV tile: one CTA per SM of the
// current device, and what every kernel derives the same way from those and the limits.
inline SchedConfig sched_config(const vb_verify_params &lim, int rows, int row_tiles, int c0, int min_span,
                                int tile_bytes)
{
    SchedConfig c;
    c.grid = device_sm_count() > 0 ? device_sm_count() : 1;
    c.rows = rows;
    c.row_tiles = row_tiles;
    c.c0 = c0;
    c.min_span = min_span;
    c.drop_span = drop_span_for(c.grid, tile_bytes);
    c.heads = FastDiv((unsigned)lim.heads);
    return c;
}

// The combine launch: merges the partials of rows whose unit was cut (rows of uncut units were
// written by the main launch). Its cost is latency and bytes in flight, not bandwidth (Nsight
// Compute, the previous combine at bs 1 x 200k: 7-9% of L2 throughput), so it is laid out to keep
// the dependent steps of a row few and many rows' loads in flight at once:
// - The work items are (unit row, 128-dim slice), grid-strided over a grid the size of one wave.
//   A block first looks at up to 128 of its items at once, a thread each (the request's
//   qo_indptr and the unit's plan entry), and lists those with work: one index latency a block
//   instead of one a row.
// - A row of at most kCombineFew pieces is two warps' (its slice-0 item), half a row each: a
//   lane holds two float4 of every piece, all loaded before any is used; the block's warps take
//   such halves in turn, four at a time. (Whole rows a warp took 110 registers, 4 blocks an SM.)
// - A row of at most kCombineSpread pieces is one block's: warp w merges slice w, kCombineBatch
//   pieces at a time.
// - A row of more pieces is 4 items, one per slice, so that it spreads over 4 blocks; within a
//   block the 4 warps take its pieces in turn (warp w: w, w + 4, ...) and meet in shared
//   memory. (One 128-thread worker per row left bs 1 x 200k's 72 rows of 132 pieces on 72 SMs
//   for 17 dependent batches; results/h200/NOTES.md.)
constexpr int kCombineThreads = 128, kCombineSlices = 4, kCombineBatch = 8, kCombineFew = 4, kCombineSpread = 32;
constexpr int kCombineSliceDims = 32 * 4; // a warp's float4 per lane

// A running merge of pieces: m the largest max of a piece that saw a visible key, lsum and the
// kVec float4 of acc (dims d + kCombineSliceDims · j of a row) scaled to it.
template <int kVec> struct PieceMerge {
    float m, lsum;
    float4 acc[kVec];

    __device__ PieceMerge() : m(-INFINITY), lsum(0.f) // INFINITY: CUDART_INF_F is device-only
    {
#pragma unroll
        for (int j = 0; j < kVec; j++)
            acc[j] = make_float4(0.f, 0.f, 0.f, 0.f);
    }

    template <int kBatch> __device__ __forceinline__ void add(const float2 (&ml)[kBatch], const float4 (&v)[kBatch][kVec])
    {
        float mb = m;
#pragma unroll
        for (int i = 0; i < kBatch; i++)
            if (ml[i].y > 0.f)
                mb = fmaxf(mb, ml[i].x);
        const float scale = mb == m ? 1.f : exp2f(m - mb); // 0 while m is -inf
        m = mb;
        lsum *= scale;
#pragma unroll
        for (int j = 0; j < kVec; j++)
            acc[j].x *= scale, acc[j].y *= scale, acc[j].z *= scale, acc[j].w *= scale;
#pragma unroll
        for (int i = 0; i < kBatch; i++) {
            if (!(ml[i].y > 0.f)) // no visible key: weight 0 (and its row is not read into acc)
                continue;
            const float f = exp2f(ml[i].x - m);
            lsum += ml[i].y * f;
#pragma unroll
            for (int j = 0; j < kVec; j++)
                acc[j].x += v[i][j].x * f, acc[j].y += v[i][j].y * f, acc[j].z += v[i][j].z * f,
                    acc[j].w += v[i][j].w * f;
        }
    }

    // Reads pieces k0, k0 + step, ... (up to kBatch of them, those below plan.pieces) of unit row
    // rr, the float4 at dims d + kCombineSliceDims · j of each, and merges them.
    template <int kDv, int kBatch>
    __device__ __forceinline__ void read(const SchedWorkspace &w, const PlanEntry &plan, int rows, int rr, int d,
                                         int k0, int step)
    {
        float2 ml[kBatch];
        float4 v[kBatch][kVec];
#pragma unroll
        for (int i = 0; i < kBatch; i++) {
            const int k = k0 + i * step;
            const bool in = k < plan.pieces;
            const size_t slot = in ? (size_t)piece_slot(plan, k) * rows + rr : 0;
            ml[i] = in ? w.ml[slot] : make_float2(-CUDART_INF_F, 0.f);
#pragma unroll
            for (int j = 0; j < kVec; j++)
                v[i][j] = in ? *reinterpret_cast<const float4 *>(w.acc + slot * kDv + d + kCombineSliceDims * j)
                             : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        add(ml, v);
    }

    // Writes dims d + kCombineSliceDims · j of o row (t, h), and its lse when asked.
    __device__ __forceinline__ void write(const vb_verify_params &p, int64_t t, int h, int d, bool with_lse) const
    {
        const float inv = lsum > 0.f ? 1.f / lsum : 0.f;
        uint16_t *row = p.o + t * p.stride_o_token + h * p.stride_o_head;
#pragma unroll
        for (int j = 0; j < kVec; j++) {
            __nv_bfloat162 *o = reinterpret_cast<__nv_bfloat162 *>(row + d + kCombineSliceDims * j);
            o[0] = __floats2bfloat162_rn(acc[j].x * inv, acc[j].y * inv);
            o[1] = __floats2bfloat162_rn(acc[j].z * inv, acc[j].w * inv);
        }
        if (with_lse && p.lse)
            p.lse[t * p.heads + h] = row_lse(m, lsum);
    }
};

// A combine item with work: unit row rr of a unit cut by plan, o row (t, h), and the slice it
// merges (-1: the whole row).
struct CombineItem {
    int64_t t;
    int h, rr, slice;
    PlanEntry plan;
};

// How the combine's grid-strided list numbers its items: item i is unit row i % unit_rows and
// slice i / unit_rows; unit row idx is row idx % rows of unit idx / rows; unit u is row tile
// u % row_tiles of request u / row_tiles; row r of a request is token r / heads, head r % heads.
struct CombineList {
    FastDiv unit_rows, rows, row_tiles, heads;
    int items;

    CombineList() = default;
    __host__ CombineList(const vb_verify_params &p, const SchedConfig &c)
        : unit_rows((unsigned)(p.batch * c.row_tiles * c.rows)), rows((unsigned)c.rows),
          row_tiles((unsigned)c.row_tiles), heads(c.heads), items((int)unit_rows.d * kCombineSlices)
    {
    }
};

// Item i (0 <= i < list.items) of the combine's list: true with its work when it has any. plans:
// the workspace's plan entries. (Host-callable for the schedule's self-check,
// kernels/testing/schedule_check.cu.)
__host__ __device__ __forceinline__ bool combine_item(const vb_verify_params &p, const CombineList &list,
                                                      const PlanEntry *plans, int i, CombineItem &it)
{
    // 32-bit: a launch's items fit an int.
    const unsigned slice = list.unit_rows.div(i), idx = list.unit_rows.mod(i, slice);
    const unsigned u = list.rows.div(idx), rr = list.rows.mod(idx, u);
    const unsigned b = list.row_tiles.div(u), r = list.row_tiles.mod(u, b) * list.rows.d + rr; // row of request b
    const int64_t q0 = load_index(p.qo_indptr, p.qo_indptr_width, b);
    const int64_t T = load_index(p.qo_indptr, p.qo_indptr_width, b + 1) - q0;
    const PlanEntry plan = plans[u]; // written this launch only for units present in it
    if (r >= T * p.heads || plan.pieces <= 1)
        return false;
    const bool spread = plan.pieces > kCombineSpread;
    if (!spread && slice)
        return false;
    const unsigned t = list.heads.div(r);
    it.t = q0 + t, it.h = (int)list.heads.mod(r, t), it.rr = (int)rr, it.slice = spread ? (int)slice : -1, it.plan = plan;
    return true;
}

// The 128-byte lines of the partials that item it merges: plan.pieces times `lines` of them (a
// row's whole dims, or one slice of them for a spread row). Line x is dims col(x) .. col(x) + 31
// of partial row row(it, rows, x), at line(acc, it, rows, x). Each line is read by one item
// only, so by one block. (Host-callable for the schedule's self-check, which proves that
// against the merges' own reads.)
template <int kDv> struct MergedLines {
    static constexpr int kLineFloats = 32, kRowLines = kDv / kLineFloats, kSliceLines = kCombineSliceDims / kLineFloats;
    int lines, first;

    __host__ __device__ explicit MergedLines(const CombineItem &it)
        : lines(it.slice < 0 ? kRowLines : kSliceLines), first(it.slice < 0 ? 0 : it.slice * kSliceLines)
    {
    }
    __host__ __device__ size_t row(const CombineItem &it, int rows, int x) const
    {
        return (size_t)piece_slot(it.plan, x / lines) * rows + it.rr;
    }
    __host__ __device__ int col(int x) const { return (first + x % lines) * kLineFloats; }
    __host__ __device__ const float *line(const float *acc, const CombineItem &it, int rows, int x) const
    {
        return acc + row(it, rows, x) * kDv + col(x);
    }
};

// Drops the lines of the partials a block's listed items merged, once they are merged, so that
// the dirty lines are never written back to DRAM (otherwise they are, when the next main
// launch's KV stream evicts them). Kept apart from the merges, after them, so that the
// combine's common path (no drop: short launches, where its code runs cold) keeps its code.
// acc is 128-byte aligned: the workspace is 256-byte aligned (check_scheduled_launch), the plan
// rounded up to 256 bytes and the maxima 16 · grid · rows bytes, rows a multiple of 8.
template <int kDv>
__device__ __forceinline__ void drop_listed(const SchedWorkspace &w, const SchedConfig &c, const CombineItem *few,
                                            const CombineItem *more, int nfew, int nmore)
{
    for (int k = 0; k < nfew + nmore; k++) {
        const CombineItem &it = k < nfew ? few[k] : more[k - nfew];
        const MergedLines<kDv> merged(it);
        for (int x = threadIdx.x; x < it.plan.pieces * merged.lines; x += kCombineThreads)
            discard_l2(merged.line(w.acc, it, c.rows, x));
    }
}

// A block's items of one round (items base, base + gridDim.x, ... : one a thread), listed in
// shared memory: those with at most kCombineFew pieces in few, the others in more. Ends with
// the lists complete for every thread of the block.
__device__ __forceinline__ void list_round(const vb_verify_params &p, const CombineList &list, const PlanEntry *plans,
                                           int base, CombineItem *few, CombineItem *more, int &nfew, int &nmore)
{
    if (threadIdx.x == 0)
        nfew = nmore = 0;
    __syncthreads();
    CombineItem mine;
    const int i = base + threadIdx.x * gridDim.x;
    if (i < list.items && combine_item(p, list, plans, i, mine)) {
        if (mine.plan.pieces <= kCombineFew)
            few[atomicAdd(&nfew, 1)] = mine;
        else
            more[atomicAdd(&nmore, 1)] = mine;
    }
    __syncthreads();
}

// Rows of a few pieces: warp w takes halves w, w + kWarps, ... of the listed rows.
template <int kDv>
__device__ __forceinline__ void merge_few(const vb_verify_params &p, const SchedWorkspace &w, const SchedConfig &c,
                                          const CombineItem *few, int nfew, int warp, int lane)
{
    constexpr int kWarps = kCombineThreads / 32;
    for (int k = warp; k < 2 * nfew; k += kWarps) {
        const CombineItem it = few[k / 2];
        const int d = k % 2 * (kDv / 2) + lane * 4;
        PieceMerge<kCombineSlices / 2> m;
        m.read<kDv, kCombineFew>(w, it.plan, c.rows, it.rr, d, 0, 1);
        m.write(p, it.t, it.h, d, d == 0);
    }
}

// kDependent: launched as the main launch's programmatic dependent (launch_combine), so that it
// may start before the main grid has finished: it waits for that grid (griddepcontrol.wait,
// sm_90 and up) before it reads anything the main launch wrote. A round lists its block's
// items, merges the rows of few pieces, then the others one at a time, by the whole block.
template <int kDv, bool kDependent = false>
__global__ void __launch_bounds__(kCombineThreads) combine_pieces(vb_verify_params p, void *ws, SchedConfig c,
                                                                  CombineList list)
{
    constexpr int kWarps = kCombineThreads / 32, kSlice = kCombineSliceDims;
    static_assert(kDv == kCombineSlices * kSlice && kWarps == kCombineSlices, "a float4 of a slice per lane, a slice per warp");
    __shared__ CombineItem few[kCombineThreads], more[kCombineThreads];
    __shared__ int nfew, nmore;
    __shared__ float4 warp_acc[kWarps][32];
    __shared__ float2 warp_ml[kWarps];
    const SchedWorkspace w(ws, c, p.batch, kDv);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int items = list.items;
    if ((int)blockIdx.x >= items) // no round: the lists below are never written
        return;
    CombineStamps stamps;
    stamps.enter();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (kDependent)
        asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
    stamps.wait_done();
    for (int base = blockIdx.x; base < items; base += gridDim.x * kCombineThreads) {
        list_round(p, list, w.plan, base, few, more, nfew, nmore);
        merge_few<kDv>(p, w, c, few, nfew, warp, lane);
        for (int k = 0; k < nmore; k++) { // the same items in every thread: block-uniform branches
            const CombineItem it = more[k];
            if (it.slice < 0) { // warp w merges slice w of the row
                const int d = warp * kSlice + lane * 4;
                PieceMerge<1> m;
                for (int k0 = 0; k0 < it.plan.pieces; k0 += kCombineBatch)
                    m.read<kDv, kCombineBatch>(w, it.plan, c.rows, it.rr, d, k0, 1);
                m.write(p, it.t, it.h, d, d == 0);
                continue;
            }
            const int d = it.slice * kSlice + lane * 4; // many pieces: the warps take turns
            PieceMerge<1> m;
            for (int k0 = warp; k0 < it.plan.pieces; k0 += kWarps * kCombineBatch)
                m.read<kDv, kCombineBatch>(w, it.plan, c.rows, it.rr, d, k0, kWarps);
            warp_acc[warp][lane] = m.acc[0];
            if (lane == 0)
                warp_ml[warp] = make_float2(m.m, m.lsum);
            __syncthreads();
            if (warp == 0) {
                float2 ml[kWarps];
                float4 v[kWarps][1];
#pragma unroll
                for (int j = 0; j < kWarps; j++)
                    ml[j] = warp_ml[j], v[j][0] = warp_acc[j][lane];
                PieceMerge<1> all;
                all.add(ml, v);
                all.write(p, it.t, it.h, d, d == 0);
            }
            __syncthreads(); // warp_acc and warp_ml are rewritten by the next item
        }
        if (base + gridDim.x * kCombineThreads < items)
            __syncthreads(); // the lists are rewritten by the next round
    }
    // The main launch decided whether the partials are dropped (the same for every unit of a
    // launch). Only the last round's are, so that the common path runs as without drops: a
    // launch of more than one round (over 25k rows on an H200) leaves its earlier rounds' lines
    // to be written back.
    if (nfew + nmore > 0 && (nfew ? few[0] : more[0]).plan.drop) {
        __syncthreads(); // every warp's reads of the listed pieces done
        drop_listed<kDv>(w, c, few, more, nfew, nmore);
    }
    stamps.print();
}

// Blocks of the combine that fit on an SM at once (1 when the query fails: its error is not
// sticky, and is cleared so that the launch's own check does not report it).
template <int kDv, bool kDependent> int combine_blocks_per_sm()
{
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, combine_pieces<kDv, kDependent>, kCombineThreads, 0) !=
        cudaSuccess)
        (void)cudaGetLastError(), n = 1;
    return n > 0 ? n : 1;
}

// The combine launch behind a main launch of config c: one wave of blocks (as many as fit on
// the main launch's SMs at once), so that no block of a second wave waits for the first.
// kDependent: a programmatic dependent launch (sm_90 and up), which the GPU may start once every
// CTA of the main launch has run griddepcontrol.launch_dependents or exited; in a graph the
// capture records it as a programmatic edge. Otherwise the same launch without the attribute,
// an ordinary stream-ordered one.
template <int kDv, bool kDependent = false>
inline cudaError_t launch_combine(const vb_verify_params &p, void *ws, const SchedConfig &c, cudaStream_t stream)
{
    // host-side, once: allowed while a capture is open
    static const int per_sm = combine_blocks_per_sm<kDv, kDependent>();
    cudaLaunchAttribute dependent[1];
    dependent[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(c.grid * per_sm);
    cfg.blockDim = dim3(kCombineThreads);
    cfg.stream = stream;
    cfg.attrs = dependent;
    cfg.numAttrs = kDependent ? 1 : 0;
    if (cudaError_t e = cudaLaunchKernelEx(&cfg, combine_pieces<kDv, kDependent>, p, ws, c, CombineList(p, c)))
        return e;
    return cudaGetLastError();
}

} // namespace vb
