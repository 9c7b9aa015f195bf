// mla_wgmma: the Hopper verify kernel. Same work split as mla_onepass (one CTA holds every
// row of a request against a slice of its KV; mla_schedule.cuh cuts the batch on the device
// and merges cut units), but built on warpgroup MMAs (wgmma, sm_90a), a producer warpgroup
// that gathers KV rows while the MMAs run, and 220 KB of shared memory. Built for sm_90a
// only (meson.build); the registry reports it unsupported on any other GPU.
//
// Layout (72 rows = 9 draft tokens × 8 heads; a unit is up to 72 rows of a request):
// - Keys on the MMA's M side, rows on N, as in mla_onepass: Sᵀ = K·Qᵀ (M = 64 keys of a tile,
//   N = rows, K = 576 dims) and Oᵀ = Vᵀ·Pᵀ (M = 64 value dims per MMA, N = 72 rows, K = 64
//   keys). 72 rows cost 72 columns; rows on M would pad them to 128.
// - Shared memory holds every operand in the 128-byte-swizzled K-major layout wgmma reads:
//   q as 9 k-blocks of [72 rows][64 dims] (83 KB, loaded once per piece), Pᵀ as [72 rows]
//   [64 keys] (9 KB), and the KV as a ring of 16 k-blocks of [64 keys][64 dims] (8 KB each).
//   A tile of 64 keys is 9 consecutive ring blocks, one per k-block of 64 dims: k-block j is
//   the A operand of Sᵀ's k-steps 4j..4j+3 and, read M-major (the transpose bit), of Oᵀ's
//   value dims 64j..64j+63, so K and V share one copy. Two whole tiles (144 KB) do not fit
//   beside q.
// - Warpgroup 0 produces: each warp copies 16 key rows of every tile, 4 rows a cp.async
//   instruction (8 lanes a row, one 16-byte chunk each, swizzled; see produce() for why 4);
//   every ring block has a "full" mbarrier (completed by the copies, cp.async.mbarrier.arrive) and
//   an "empty" one (one arrival per consumer warp). A page-size-1 row is 1152 contiguous
//   bytes whose 16-byte chunks land at swizzled addresses, so bulk copies (which move
//   contiguous bytes) cannot fill this layout.
// - Warpgroups 1 and 2 consume. Sᵀ is split by k-steps: warpgroup 1 runs one m64n72 chain over
//   the rope block and value blocks 0-3, warpgroup 2 over blocks 4-7, so each K byte is read
//   from shared memory once, not once per warpgroup (Sᵀ's tensor time a tile 1296 clocks
//   instead of 1872; results/h200/wgmma_shapes.txt). The partial sums meet through shared
//   memory (kScoreSplit), and then each warpgroup owns the softmax of its rows, 0-39 and 40-71
//   (the keys of a row span its 4 warps). Oᵀ is split by value dims: warpgroup 1 holds dims
//   0-255, warpgroup 2 dims 256-511, for all 72 rows (4 × 36 fp32 accumulators a thread).
//   Both publish Pᵀ and each row's rescale factor, meet at one named barrier per tile, issue
//   Oᵀ's MMAs, release the tile's blocks as those MMAs finish, and only then issue the next
//   tile's Sᵀ (see the ring order for why not before).
// - Softmax: online, log2 domain, with mla_onepass's lazy reference max (a row's max moves
//   only when a score passes it by 2^8; both consumer warpgroups vote at once with
//   bar.red.or, and only then reduce maxima across their warps and rescale). Each thread
//   keeps its share of its rows' sums, reduced once per piece.
// - Ring order: a tile enters the ring rope k-block first, then k-blocks 0-7; tile t+1's
//   position q (of 9) reuses the slot of tile t-1's position q + 2 (q < 7) or of tile t's
//   position q - 7 (16 slots). A warpgroup releases the blocks it does not read in Oᵀ as soon
//   as the scores are exchanged (the rope block holds warpgroup 1's partials until then), the
//   first block of its own value dims once that block's Oᵀ MMAs are done, and the rest after
//   all its Oᵀ MMAs. The next tile's Sᵀ is issued after that: issuing its first 7 k-blocks
//   behind Oᵀ (so that the tensor cores had queued work) made the release of tile t wait until
//   those blocks of tile t+1 had landed, and the producer, short of slots, then waited for the
//   consumers and they for its copies (results/h200/NOTES.md, 2026-12-01: 12% slower at bs 8 ×
//   91k; queued again on the k-split, 5-8% slower, 2026-12-01, seventh).
// - The last two positions of a tile are copied only when the previous tile frees their slots,
//   and with Sᵀ this short their copies' latency showed: the producer puts their lines in L2
//   (prefetch.L2) when it starts the tile, about a tile before it copies them. A/B against the
//   two-n40 Sᵀ without prefetches (results/h200/NOTES.md, 2026-12-01, sixth): bs 8 × 200k 568.9
//   → 547.6 µs, eagle64 120.6 → 116.4, bs 8 × 91k 279.5 → 275.6; the k-split without them was
//   mixed, and a 17th ring slot (timing only) gained 1-6% on top of it.
// - The KV copies carry an L2 evict-first policy (a unit reads each line once): without it the
//   KV stream evicted the dirty partial lines written for the combine, and the main launch wrote
//   19.3 MB to DRAM at bs 8 × 4096 (2.4 MB with it) and 24.1 MB at bs 8 × 23k (15.0 MB; Nsight
//   Compute, dram__bytes_write.sum). A/B (results/h200/NOTES.md, 2026-12-01, eighth): bs 8 × 4096
//   38.1 → 36.7 µs, bs 8 × 23k 91.5 → 88.6, bs 32 × 4k 74.1 → 71.4, bs 1 × 200k 97.8 → 96.4,
//   eagle64 117.2 → 116.0; bs 8 × 91k and 200k unchanged. A request's row tiles (eagle64's 8)
//   read the same lines, but their pieces reach them at different times, so those reads mostly
//   come from DRAM (223-231 MB for 37.7 MB of KV at eagle64).
// - Mask: as in mla_onepass, only tiles with draft-token columns (or every tile when the
//   caller does not promise prefix_visible) read it, straight from global memory.
#include <cstdio>

#include "mla_schedule.cuh"
#include "ptx_sm80.cuh"
#include "ptx_sm90a.cuh"
#include "wgmma_sm90a.cuh"

namespace {

using namespace vb;

constexpr int kKeys = 64;                       // keys per tile: the M of one wgmma
constexpr int kDqk = 576, kDv = 512;
constexpr int kBlocks = kDqk / 64;              // 128-byte k-blocks per KV or q row
constexpr int kRows = 72;                       // rows per unit: the N of Oᵀ
constexpr int kRing = 16;                       // KV ring, in k-blocks
// A tile's k-blocks enter the ring rope block first (position 0: dims 512-575, which only Sᵀ
// reads), then dims 0-511 (position 1 + b: block b). Tile t+1's position q >= 7 reuses the
// slot of tile t's position q - 7: position 7 reuses the rope block's, free once Sᵀ(t) is done,
// and position 8 the first value block's, free once its Oᵀ MMAs (committed apart) are done.
__host__ __device__ constexpr int block_at(int pos) { return (pos + kBlocks - 1) % kBlocks; }
__host__ __device__ constexpr int pos_of(int block) { return (block + 1) % kBlocks; }
constexpr int kBlockBytes = kKeys * 128;        // one KV k-block: 64 keys × 128 B
constexpr int kQBlockBytes = kRows * 128;       // one q (or Pᵀ) k-block: 72 rows × 128 B
constexpr int kThreads = 3 * 128;               // producer + two consumer warpgroups
// setmaxnreg moves registers between the warpgroups of a CTA: the consumers' increase is served
// only by what the producer releases out of the registers the CTA was launched with (ptxas's
// count under __launch_bounds__(kThreads, 1): 168 a thread, 64,512 in all), so 128 · producer
// + 256 · consumer must fit in that, or the consumers wait forever. unsupported() checks it
// against the built kernel. 40 / 232: the consumers hold Oᵀ (144), a whole Sᵀ chain (36) and
// the row sums; at 56 / 224 ptxas spilled the row sums inside the tile loop. At 40 / 232 it
// spills 56 bytes (84 of reloads): two reloads a tile in the tile loop's common path, the rest in
// a masked tile's mask loads and per-piece code (results/resources.md). The smaller producer
// costs about 0.5 µs at one-tile launches (bs 1 × 1, bs 1 × 512: the two-n40 Sᵀ at 40 / 232
// against 56 / 224, results/h200/NOTES.md).
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
constexpr int kMaxBatch = 16384;                // the schedule's prefix array lives in the ring
constexpr float kLazy = 8.f;
#ifndef VB_WGMMA_FENCE_COPIES
#define VB_WGMMA_FENCE_COPIES 0
#endif
// A proxy fence after the KV copies land (see await_blocks); meson -Dwgmma_fence_copies=true.
constexpr bool kFenceCopies = VB_WGMMA_FENCE_COPIES != 0;
// Schedule: a piece's fixed cost (q, the pipeline's fill, the partial and its merge) and the
// smallest span, in tiles. c0 = 3 against 1 (results/h200/NOTES.md): bs 8 × 4096 62.0 →
// 55.9 µs, bs 32 × 4k 120 → 116, bs 1 × 4096 40.6 → 37.8; no change at bs 1 × 512, bs 1 × 200k.
constexpr int kC0 = 3, kMinSpan = 1;

// Barrier ids (0 is __syncthreads): both consumer warpgroups; each consumer warpgroup; the
// producer warpgroup; the consumers' max vote.
constexpr int kBarConsumers = 1, kBarWg = 2, kBarProducer = 4, kBarVote = 5;

// Consumer warpgroup k owns the softmax of rows [k·kSplitRow, ...) (40 and 32 of them) and Oᵀ dims
// [256k, 256k + 256). After the exchange its scores sit where a n40 MMA from row k·kMmaRow would
// put them (the second warpgroup's first n8 tile unused), so the softmax indexes both alike.
constexpr int kSplitRow = 40, kMmaRow = kRows - kSplitRow;
// Sᵀ is split by k-steps: consumer 0 (wg) takes ring positions 0-4 (the rope block and value
// blocks 0-3), consumer 1 positions 5-8, each one m64n72 chain for all 72 rows, so K is read once
// (each warpgroup its own code path: no named barrier inside, so synccheck has nothing to pair).
// The partial sums meet through shared memory: consumer 0 sends rows 40-71 (16 floats a thread)
// into the tile's rope slot, which only its own MMAs read; consumer 1 sends rows 0-39 (20 a
// thread) into the Pᵀ buffer and the kilobyte after it.
constexpr int kScoreSplit = 5;
// Floats a thread sends: consumer 1 the MMA's rows 0-39 (s[0 .. 19]), consumer 0 rows 40-71
// (s[20 .. 35]), which consumer 1 keeps kMmaRow / 2 places lower, where its softmax reads them.
constexpr int kSendTo0 = kSplitRow / 2, kSendTo1 = (kRows - kSplitRow) / 2;
constexpr int kXchBytes = 128 * kSendTo0 * 4;
static_assert(kXchBytes >= kQBlockBytes && 128 * kSendTo1 * 4 <= kBlockBytes, "the exchange's two buffers");

// Shared memory, from a 1024-byte aligned base (the swizzle atoms need it).
struct Smem {
    static constexpr int q = 0;                                  // [9 k-blocks][72 rows][128 B]
    static constexpr int p = q + kBlocks * kQBlockBytes;         // [72 rows][128 B] Pᵀ; before it is written,
                                                                 // consumer 1's partial scores for consumer 0
    static constexpr int kv = p + kXchBytes;                     // [kRing][64 keys][128 B]
    static constexpr int bars = kv + kRing * kBlockBytes;        // u64 full[kRing], empty[kRing], qfull, qempty, pfree
    static constexpr int rm = bars + (2 * kRing + 3) * 8;        // [72] reference max of each row
    static constexpr int rsum = rm + kRows * 4;                  // [72] row sums at the end of a piece
    static constexpr int corr = rsum + kRows * 4;                // [2][72] rescale of a tile's rows
    static constexpr int moved = corr + 2 * kRows * 4;           // [2][2] int: a warpgroup's rows moved
    static constexpr int red = moved + 16;                       // [2][4 warps][40] cross-warp reductions
    static constexpr int mrow = red + 2 * 4 * 40 * 4;            // [72] int64: each row's mask row, from mask0
    static constexpr int bytes = mrow + kRows * 8;
    static constexpr int alloc = bytes + 1024;                   // room to align the base
};
static_assert(Smem::alloc <= 227 * 1024, "sm_90's 227 KB per block");
static_assert(Smem::p % 1024 == 0 && Smem::kv % 1024 == 0, "swizzle atoms are 1024-byte aligned");

using Sched = Schedule<kKeys, kThreads>;

// What a warpgroup knows about its current piece (written by its first thread).
struct PieceState : PieceRows {
    bool more;
};

struct Barriers {
    unsigned base;
    __device__ unsigned full(int s) const { return base + 8 * s; }
    __device__ unsigned empty(int s) const { return base + 8 * (kRing + s); }
    __device__ unsigned qfull() const { return base + 8 * (2 * kRing); }
    __device__ unsigned qempty() const { return base + 8 * (2 * kRing + 1); }
    __device__ unsigned pfree() const { return base + 8 * (2 * kRing + 2); } // both Oᵀ done with Pᵀ
};

// The next piece of a warpgroup's walk into ps; every thread of the warpgroup returns it.
__device__ bool next_piece(const vb_verify_params &p, const SchedConfig &c, Sched &sched, PieceState &ps,
                           bool &going, int bar)
{
    if (threadIdx.x % 128 == 0) {
        if (going && (going = sched.next(p, c, ps.pc)))
            ps.set_unit(sched.req, kRows, p.heads);
        ps.more = going;
    }
    named_barrier(bar, 128);
    return ps.more;
}

// ---- producer warpgroup ----------------------------------------------------------------------

// The piece's q into its buffer once the consumers are done with the previous piece's. Eight
// threads per row, one 16-byte chunk of each of its 9 k-blocks each: a warp copies 4 rows'
// 128-byte lines whole, and a row's address (two divisions, 64-bit products) is worked out once
// per row, not per chunk. Rows past the unit are zero-filled, not read (9 of 72 rows are live
// at one head).
__device__ void copy_q(const vb_verify_params &p, const PieceState &ps, const Barriers &bar, unsigned qs,
                       uint32_t pieces)
{
    const int tid = threadIdx.x, ch = tid % 8;
    mbar_wait(bar.qempty(), (pieces & 1) ^ 1);
    for (int r = tid / 8; r < kRows; r += 128 / 8) {
        const int lr = ps.row(r);
        const bool live = r < ps.nrows;
        const uint16_t *q =
            p.q + (ps.rq.q0 + lr / p.heads) * p.stride_q_token + (lr % p.heads) * p.stride_q_head + 8 * ch;
        const unsigned dst = qs + r * 128 + 16 * (ch ^ (r & 7));
#pragma unroll
        for (int b = 0; b < kBlocks; b++)
            cp_async16(dst + b * kQBlockBytes, q + 64 * b, live);
    }
    cp_async_mbar_arrive(bar.qfull());
}

// Each warp copies 16 key rows of every tile: a copy instruction covers the 128-byte lines of
// 4 rows in one k-block (8 lanes a row, one 16-byte chunk each). Rows are at random places in
// a page-size-1 pool, and on the H200 a warp instruction touching 16 rows (two lanes a row, as
// before) gathered 1.6-1.8 TB/s from 0.8-1.8 GB pools, against 4.3-4.4 TB/s for 4, 2 or 1 rows
// an instruction (results/h200/NOTES.md, the gather probe). Each thread looks up the slot of key
// tid / 2; the warp shuffles them to the lanes that copy. Then the piece's q, after its first
// tile (so the first KV bytes are in flight while the consumers still read the previous q);
// a CTA's first piece copies q first.
__device__ void produce(const vb_verify_params &p, const SchedConfig &c, unsigned char *sm, Sched &sched,
                        PieceState &ps, bool going)
{
    const Barriers bar{smem_u32(sm + Smem::bars)};
    const int tid = threadIdx.x, key = tid / 2, lane = tid % kWarp, ch = lane % 8;
    const unsigned kv = smem_u32(sm + Smem::kv), qs = smem_u32(sm + Smem::q);
    uint32_t blk = 0, pieces = 0;
    const uint64_t evict_first = l2_evict_first_policy();
    while (next_piece(p, c, sched, ps, going, kBarProducer)) {
        const int lo = ps.pc.tile_lo, hi = ps.pc.tile_hi;
        int64_t slot = ps.key_slot(p, (int64_t)lo * kKeys + key);
        // A CTA's first q buffer is free at once: its copy goes out while the first tile's slot
        // indices load, not after the tile's copies (bs 1 × 512: q landed 4.9 µs into the CTA).
        const bool q_first = pieces == 0;
        if (q_first)
            copy_q(p, ps, bar, qs, pieces);
        for (int tile = lo; tile < hi; tile++) {
            const char *src[4];
            bool valid[4];
            int row[4];
#pragma unroll
            for (int i = 0; i < 4; i++) { // row 16·warp + 4i + lane / 8, whose slot lane 8i + 2·(lane / 8) holds
                row[i] = 16 * (tid / kWarp) + 4 * i + lane / 8;
                const int64_t sl = __shfl_sync(0xffffffffu, slot, 8 * i + 2 * (lane / 8));
                valid[i] = (int64_t)tile * kKeys + row[i] < ps.keys;
                src[i] = reinterpret_cast<const char *>(p.kv_buffer + sl * p.stride_kv_slot) + 16 * ch;
            }
            // The tile's last two positions are copied only when the previous tile frees their
            // slots (its rope block after the scores' exchange, its first value block after Oᵀ's
            // first group), about a tile from now: their lines go to L2 now, so that those copies
            // hit there.
            if (ch < 2)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    if (valid[i])
                        prefetch_l2(src[i] - 16 * ch + 128 * block_at(kBlocks - 2 + ch));
            if (tile + 1 < hi) // the next tile's index load overlaps this tile's waits and copies
                slot = ps.key_slot(p, (int64_t)(tile + 1) * kKeys + key);
            for (int b = 0; b < kBlocks; b++, blk++) {
                const int s = blk % kRing;
                mbar_wait(bar.empty(s), ((blk / kRing) & 1) ^ 1);
                const unsigned dst = kv + s * kBlockBytes;
#pragma unroll
                for (int i = 0; i < 4; i++)
                    cp_async16(dst + row[i] * 128 + 16 * (ch ^ (row[i] & 7)), src[i] + 128 * block_at(b), valid[i],
                               evict_first);
                cp_async_mbar_arrive(bar.full(s));
            }
            if (tile == lo && !q_first)
                copy_q(p, ps, bar, qs, pieces);
        }
        pieces++;
        named_barrier(kBarProducer, 128); // ps is rewritten by the next walk step
    }
}

// ---- consumer warpgroups ---------------------------------------------------------------------

// One code path for both consumer warpgroups (they differ only in the rows and value dims they
// own, run-time values), so that they meet at the same barrier instructions: compute-
// sanitizer's synccheck reports threads reaching one named barrier from two instructions.
struct Consumer {
    static constexpr int kN8 = kSplitRow / 8; // Sᵀ row tiles of the MMA (5; the second warpgroup owns the last 4)

    const vb_verify_params &p;
    unsigned char *sm;
    const PieceState &ps;
    const Barriers bar;
    const int wg, rb, nj, mb, j0, warp, lane, g, t; // wg 0/1; rb its first row, nj its n8 row tiles;
                                                    // mb the MMA's first row, j0 its first owned n8 tile

    float o[4][kRows / 2]; // Oᵀ: dims 256·wg + 64·i + 16·warp + g (+8), rows 8j + 2t (+1)
    float l[kN8][2];       // this thread's share of the sums of rows mb + 8j + 2t + e, j0 <= j
    float s[kRows / 2];    // Sᵀ, keys 16·warp + g (+8): the MMA's rows 8j + 2t (+1); after the
                           // exchange s[4j..] holds this warpgroup's rows mb + 8j + 2t (+1), j0 <= j < kN8

    __device__ Consumer(const vb_verify_params &p_, unsigned char *sm_, const PieceState &ps_, int wg_)
        : p(p_), sm(sm_), ps(ps_), bar{smem_u32(sm_ + Smem::bars)}, wg(wg_), rb(wg_ * kSplitRow),
          nj(wg_ ? (kRows - kSplitRow) / 8 : kSplitRow / 8), mb(wg_ * kMmaRow), j0(kN8 - nj),
          warp((threadIdx.x / kWarp) % 4), lane(threadIdx.x % kWarp), g(lane / 4), t(lane % 4)
    {
    }

    // f(j, e) for each owned Sᵀ row mb + 8j + 2t + e this thread holds (j0 <= j), unrolled.
    template <class F> __device__ __forceinline__ void for_rows(F f) const
    {
#pragma unroll
        for (int j = 0; j < kN8; j++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                if (j >= j0)
                    f(j, e);
    }

    // A value reduced over the 8 lanes of one t (the keys 16·warp + g of a row), then stored
    // for the cross-warp step: red[warp][row]. Every lane returns the warp's result.
    template <class Op> __device__ __forceinline__ void to_red(float *red, int n, float v, Op op) const
    {
        v = op(v, __shfl_xor_sync(0xffffffffu, v, 4));
        v = op(v, __shfl_xor_sync(0xffffffffu, v, 8));
        v = op(v, __shfl_xor_sync(0xffffffffu, v, 16));
        if (g == 0)
            red[warp * 40 + n] = v;
    }

    __device__ unsigned kv_block(uint32_t blk) const { return smem_u32(sm + Smem::kv) + (blk % kRing) * kBlockBytes; }
    // Releases blocks block_of(0 .. n-1) of the tile starting at ring position blk, one lane
    // each, so that one instruction arrives on all of them: lane 0 arriving on each in turn
    // took about 300 clocks a tile for the 5 blocks released after Sᵀ (results/h200/NOTES.md).
    template <class F> __device__ void release(uint32_t blk, int n, F block_of) const
    {
        if (lane < n)
            mbar_arrive(bar.empty((blk + pos_of(block_of(lane))) % kRing));
    }

    // Waits for ring positions [from, to) of the tile starting at blk. No proxy fence between
    // the copies' landing and wgmma's reads: the copies are cp.async, observed complete through
    // the block's mbarrier (cp.async.mbarrier.arrive), which CUTLASS's cp.async GMMA mainloops and
    // FlashAttention-3's paged-KV loads also hand to wgmma unfenced. The PTX ISA asks for
    // fence.proxy.async between generic-proxy writes and async-proxy reads, so this leans on what
    // those libraries rely on; kFenceCopies (meson -Dwgmma_fence_copies=true) brings the fence
    // back, after each k-block's wait. Without it, the k-blocks' MMAs go out one block at a time
    // as they land; with it (a MEMBAR.ALL.CTA in the SASS, which holds back the MMAs already
    // issued) the waits had been grouped, 4% faster at bs 8 × 91k than a fence per k-block and
    // 0.4-3% slower than no fence (results/h200/NOTES.md, 2026-12-01; the option's per-block
    // form is not timed). Pᵀ, written by stmatrix, keeps its fence.
    __device__ void await_blocks(uint32_t blk, int from, int to) const
    {
        for (int b = from; b < to; b++)
            mbar_wait(bar.full((blk + b) % kRing), ((blk + b) / kRing) & 1);
        if (kFenceCopies)
            fence_proxy_async();
        wgmma_fence();
    }

    // Sᵀ's MMAs over ring positions [From, To) of the tile starting at blk; the chain starts
    // at position B0 (its first k-step overwrites the accumulators).
    template <int B0, int From, int To> __device__ void score_blocks(uint32_t blk, unsigned q)
    {
#pragma unroll
        for (int b = From; b < To; b++) {
            const unsigned a = kv_block(blk + b);
#pragma unroll
            for (int ks = 0; ks < 4; ks++) {
                const uint64_t da = sw128_desc(a + 32 * ks, 16, 1024);
                const uint64_t db = sw128_desc(q + block_at(b) * kQBlockBytes + 32 * ks, 16, 1024);
                wgmma_m64n72k16(s, da, db, (b > B0) | ks);
            }
        }
    }

    // Each k-block's MMAs as soon as its copies have landed (in the SASS each block's MMAs end
    // their own wgmma group; the tile loop waits for all of them at once).
    template <int B0, int B, int B1> __device__ __forceinline__ void score_each(uint32_t blk, unsigned q)
    {
        if constexpr (B < B1) {
            await_blocks(blk, B, B + 1);
            score_blocks<B0, B, B + 1>(blk, q);
            score_each<B0, B + 1, B1>(blk, q);
        }
    }

    // Sᵀ of the tile starting at ring position blk, committed once.
    __device__ void issue_scores(uint32_t blk)
    {
        unsigned q = smem_u32(sm + Smem::q);
        asm volatile("" : "+r"(q)); // opaque: ptxas would hoist q's 36 descriptors out of the tile loop and spill them
        if (wg == 0)
            score_each<0, 0, kScoreSplit>(blk, q);
        else
            score_each<kScoreSplit, kScoreSplit, kBlocks>(blk, q);
        wgmma_commit();
    }

    // Oᵀ += Vᵀ·Pᵀ over the tile's 64 keys for this warpgroup's 4 value-dim blocks: two groups,
    // the first block's alone, so that its ring slot can be released before the rest is done.
    __device__ void issue_values(uint32_t blk)
    {
        const unsigned pt = smem_u32(sm + Smem::p);
        wgmma_fence();
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const unsigned a = kv_block(blk + pos_of(4 * wg + i));
#pragma unroll
            for (int ks = 0; ks < 4; ks++)
                wgmma_m64n72k16_ta(o[i], sw128_desc(a + 2048 * ks, kBlockBytes, 1024),
                                   sw128_desc(pt + 32 * ks, 16, 1024), 1);
            if (i == 0 || i == 3)
                wgmma_commit();
        }
    }

    __device__ int row_token(int n) const { return ps.row(n) / p.heads; }

    // The two warpgroups' partial Sᵀ summed for the rows each owns (see kScoreSplit). Thread x of
    // one warpgroup holds the same (key, row) places as thread x of the other, so each sends its
    // partials for the other's rows as float4s indexed by x. Consumer 1 (wg == 1) writes into the
    // Pᵀ buffer, so it first waits until both warpgroups' Oᵀ MMAs of the previous tile are done.
    __device__ void exchange_scores(uint32_t blk, uint32_t tiles)
    {
        const int x = threadIdx.x % 128;
        float4 *to_wg1 = reinterpret_cast<float4 *>(sm + Smem::kv + (blk % kRing) * kBlockBytes); // the rope slot
        float4 *to_wg0 = reinterpret_cast<float4 *>(sm + Smem::p);
        constexpr int own1 = kSendTo0, down = kMmaRow / 2; // consumer 1's rows: s[own1 ..] to s[own1 - down ..]
        if (wg == 0) {
#pragma unroll
            for (int i = 0; i < kSendTo1; i += 4)
                to_wg1[32 * i + x] = make_float4(s[own1 + i], s[own1 + i + 1], s[own1 + i + 2], s[own1 + i + 3]);
        } else {
            mbar_wait(bar.pfree(), (tiles & 1) ^ 1);
#pragma unroll
            for (int i = 0; i < kSendTo0; i += 4)
                to_wg0[32 * i + x] = make_float4(s[i], s[i + 1], s[i + 2], s[i + 3]);
        }
        named_barrier(kBarConsumers, 256);
        if (wg == 0) {
#pragma unroll
            for (int i = 0; i < kSendTo0; i += 4) {
                const float4 v = to_wg0[32 * i + x];
                s[i] += v.x, s[i + 1] += v.y, s[i + 2] += v.z, s[i + 3] += v.w;
            }
        } else {
#pragma unroll
            for (int i = own1; i < own1 + kSendTo1; i += 4) {
                const float4 v = to_wg1[32 * (i - own1) + x];
                s[i - down] = s[i] + v.x, s[i + 1 - down] = s[i + 1] + v.y;
                s[i + 2 - down] = s[i + 2] + v.z, s[i + 3 - down] = s[i + 3] + v.w;
            }
        }
        __syncwarp(); // every lane's reads of the rope slot before its release
    }

    // Scores to the log2 domain, hidden keys to -inf. Every mask byte the thread needs is
    // loaded before any is used, so a masked tile pays one memory latency, not one per byte.
    __device__ void scale_and_mask(int tile)
    {
        const float scale = p.sm_scale * kLog2e;
        const int64_t k0 = (int64_t)tile * kKeys, keys = ps.keys, P = ps.rq.P;
        const bool mask = !p.prefix_visible || k0 + kKeys > P;
#pragma unroll
        for (int i = 0; i < kN8 * 4; i++)
            s[i] *= scale;
        if (!mask && k0 + kKeys <= keys)
            return;
        const uint8_t *mk = p.custom_mask + ps.rq.mask0;
        const int64_t *mrow = reinterpret_cast<const int64_t *>(sm + Smem::mrow);
#pragma unroll
        for (int h = 0; h < 2; h++) { // keys 16·warp + g + 8h; two rounds of loads bound the registers
            const int64_t key = k0 + 16 * warp + g + 8 * h;
            const bool in = key < keys, read = in && mask && (key >= P || !p.prefix_visible);
            uint8_t vis[kN8][2];
            for_rows([&](int j, int e) {
                vis[j][e] = read ? __ldg(mk + mrow[mb + 8 * j + 2 * t + e] + key) : (uint8_t)in;
            });
            for_rows([&](int j, int e) {
                if (!vis[j][e])
                    s[4 * j + 2 * h + e] = -CUDART_INF_F;
            });
        }
    }

    // Online softmax of this warpgroup's rows over the tile (lazy max), Pᵀ into shared memory
    // once both warpgroups' Oᵀ MMAs of the previous tile are done with it. buf: the parity of
    // the tile, which picks the buffer of the rescale factors; tiles: tiles done before it.
    __device__ void softmax(int buf, uint32_t tiles)
    {
        float *rm = reinterpret_cast<float *>(sm + Smem::rm);
        float *corr = reinterpret_cast<float *>(sm + Smem::corr) + buf * kRows;
        float *red = reinterpret_cast<float *>(sm + Smem::red) + wg * 4 * 40;
        int *moved = reinterpret_cast<int *>(sm + Smem::moved) + 2 * buf;
        float m[kN8][2];
        bool up = false;
        for_rows([&](int j, int e) {
            m[j][e] = rm[mb + 8 * j + 2 * t + e];
            up |= s[4 * j + e] > m[j][e] + kLazy || s[4 * j + 2 + e] > m[j][e] + kLazy;
        });
        // One vote for both warpgroups (also: every thread has read rm), so that they take the
        // rescale path, and its barrier, together: compute-sanitizer's racecheck reported a
        // hazard on corr when one warpgroup passed more barriers than the other.
        const bool rescale = barrier_or(kBarVote, 256, up);
        if (rescale)
            for_rows([&](int j, int e) {
                to_red(red, 8 * j + 2 * t + e, fmaxf(s[4 * j + e], s[4 * j + 2 + e]),
                       [](float a, float b) { return fmaxf(a, b); });
            });
        // red is read across warps only when rescaling; passing its barrier only then was 0.5-1.2%
        // faster at the long and tree shapes than every tile (results/h200/NOTES.md, 2026-12-01).
        if (rescale) {
            named_barrier(kBarWg + wg, 128);
            for_rows([&](int j, int e) {
                const int n = 8 * j + 2 * t + e;
                const float mx = fmaxf(fmaxf(red[n], red[40 + n]), fmaxf(red[80 + n], red[120 + n]));
                const float mnew = fmaxf(m[j][e], mx);
                const float c = mnew == m[j][e] ? 1.f : exp2_ftz(m[j][e] - mnew); // 0 when m was -inf
                l[j][e] *= c;
                m[j][e] = mnew;
                if (warp == 0 && g == 0) {
                    rm[mb + n] = mnew;
                    corr[mb + n] = c;
                }
            });
        }
        if (threadIdx.x % 128 == 0)
            moved[wg] = rescale;
        // P = 2^(s - m) in bf16, stored transposed (rows × keys, K-major) by stmatrix.
        const unsigned pt = smem_u32(sm + Smem::p);
        unsigned pk[kN8][2];
#pragma unroll
        for (int j = 0; j < kN8; j++) {
            if (j < j0)
                continue;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float mu = m[j][e % 2] == -CUDART_INF_F ? 0.f : m[j][e % 2];
                s[4 * j + e] = exp2_ftz(s[4 * j + e] - mu);
            }
            l[j][0] += s[4 * j] + s[4 * j + 2];
            l[j][1] += s[4 * j + 1] + s[4 * j + 3];
            pk[j][0] = pack_bf16(s[4 * j], s[4 * j + 1]);
            pk[j][1] = pack_bf16(s[4 * j + 2], s[4 * j + 3]);
        }
        mbar_wait(bar.pfree(), (tiles & 1) ^ 1);
        // Matrix (j, h): keys 16·warp + 8h .. +7 (16-byte chunk 2·warp + h of a Pᵀ row), rows
        // mb + 8j .. +7, one n8 tile a stmatrix (the owned tiles start at j0, known at run time,
        // and pairing them would index pk at run time). Lane l addresses row l % 8 of matrix l / 8.
        const int r8 = lane % 8, h = (lane / 8) % 2;
#pragma unroll
        for (int j = 0; j < kN8; j++) {
            if (j < j0) // warp-uniform
                continue;
            const unsigned addr = pt + (mb + 8 * j + r8) * 128 + 16 * ((2 * warp + h) ^ r8);
            stsm_x2_t(addr, pk[j][0], pk[j][1]);
        }
    }

    // Oᵀ *= the tile's rescale factors, for the rows of a warpgroup whose rows moved (the
    // factors of the other's rows are stale then).
    __device__ void rescale_values(int buf)
    {
        const int *moved = reinterpret_cast<const int *>(sm + Smem::moved) + 2 * buf;
        const bool mv0 = moved[0], mv1 = moved[1];
        if (!(mv0 | mv1))
            return;
        const float *corr = reinterpret_cast<const float *>(sm + Smem::corr) + buf * kRows;
#pragma unroll
        for (int j = 0; j < kRows / 8; j++) {
            if (!(j < kSplitRow / 8 ? mv0 : mv1))
                continue;
            const float2 c = *reinterpret_cast<const float2 *>(corr + 8 * j + 2 * t);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                o[i][4 * j] *= c.x, o[i][4 * j + 1] *= c.y;
                o[i][4 * j + 2] *= c.x, o[i][4 * j + 3] *= c.y;
            }
        }
    }

    // The piece's tiles. blk: ring position of its first block; tiles: tiles done before it
    // (their parity picks the buffer of rescale factors), both carried across pieces.
    __device__ void run_tiles(uint32_t &blk, uint32_t &tiles, uint32_t pieces)
    {
        // Warp-uniform by construction (shuffled from lane 0), so ptxas sees the wgmma loop
        // as non-divergent and does not serialise it.
        const int lo = __shfl_sync(0xffffffffu, ps.pc.tile_lo, 0), hi = __shfl_sync(0xffffffffu, ps.pc.tile_hi, 0);
        mbar_wait(bar.qfull(), pieces & 1);
        issue_scores(blk);
        for (int tile = lo; tile < hi; tile++, blk += kBlocks, tiles++) {
            const int buf = tiles & 1;
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < kRows / 2; i++)
                fence_operand(s[i]);
            if (tile == hi - 1 && lane == 0)
                mbar_arrive(bar.qempty()); // the piece's last Sᵀ is done with q
            exchange_scores(blk, tiles);
            // The blocks Oᵀ of this warpgroup does not read: the other's value dims and the rope.
            release(blk, 5, [&](int i) { return i < 4 ? 4 * (1 - wg) + i : kBlocks - 1; });
            scale_and_mask(tile);
            softmax(buf, tiles);
            fence_proxy_async(); // Pᵀ (stmatrix) before the wgmma reads of both warpgroups
            named_barrier(kBarConsumers, 256);
            rescale_values(buf);
            issue_values(blk);
            wgmma_wait<1>(); // Oᵀ's first value block is done
            release(blk, 1, [&](int) { return 4 * wg; });
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int x = 0; x < kRows / 2; x++)
                    fence_operand(o[i][x]);
            release(blk, 3, [&](int i) { return 4 * wg + 1 + i; });
            if (lane == 3) // beside the releasing lanes; Pᵀ is free once all 8 consumer warps arrive
                mbar_arrive(bar.pfree());
            if (tile + 1 < hi)
                issue_scores(blk + kBlocks);
        }
        wgmma_wait<0>(); // nothing is in flight here (pieces are never empty), but ptxas cannot know
    }

    __device__ void begin_piece()
    {
        float *rm = reinterpret_cast<float *>(sm + Smem::rm);
        int64_t *mrow = reinterpret_cast<int64_t *>(sm + Smem::mrow);
        const int tid = threadIdx.x % 128;
        if (tid < 8 * nj) {
            rm[rb + tid] = -CUDART_INF_F;
            mrow[rb + tid] = row_token(rb + tid) * ps.keys;
        }
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int x = 0; x < kRows / 2; x++)
                o[i][x] = 0.f;
#pragma unroll
        for (int j = 0; j < kN8; j++)
            l[j][0] = l[j][1] = 0.f;
        named_barrier(kBarWg + wg, 128);
    }

    // Row sums of the piece (this warpgroup's rows) into rsum; afterwards both warpgroups'
    // are there.
    __device__ void finish_sums()
    {
        float *red = reinterpret_cast<float *>(sm + Smem::red) + wg * 4 * 40;
        float *rsum = reinterpret_cast<float *>(sm + Smem::rsum);
        for_rows([&](int j, int e) {
            to_red(red, 8 * j + 2 * t + e, l[j][e], [](float a, float b) { return a + b; });
        });
        named_barrier(kBarWg + wg, 128);
        const int tid = threadIdx.x % 128;
        const int n = 8 * j0 + tid; // red is indexed by the MMA's row
        if (tid < 8 * nj)
            rsum[rb + tid] = red[n] + red[40 + n] + red[80 + n] + red[120 + n];
        named_barrier(kBarConsumers, 256);
    }

    // An uncut unit: o = Oᵀ / l through movmatrix (8×8 transposes); lse of this warpgroup's rows.
    __device__ void write_output()
    {
        const float *rsum = reinterpret_cast<const float *>(sm + Smem::rsum);
        const float *rm = reinterpret_cast<const float *>(sm + Smem::rm);
        const int nrows = ps.nrows;
#pragma unroll
        for (int j = 0; j < kRows / 8; j++) {
            const float la = rsum[8 * j + 2 * t], lb = rsum[8 * j + 2 * t + 1];
            const float ia = la > 0.f ? 1.f / la : 0.f, ib = lb > 0.f ? 1.f / lb : 0.f;
            uint16_t *dst = ps.o_row(p, 8 * j + g);
#pragma unroll
            for (int i = 0; i < 4; i++)
                store_o_m16n8(dst, 256 * wg + 64 * i + 16 * warp, o[i][4 * j], o[i][4 * j + 1], o[i][4 * j + 2],
                              o[i][4 * j + 3], ia, ib);
        }
        const int n = rb + threadIdx.x % 128;
        if (p.lse && threadIdx.x % 128 < 8 * nj && n < nrows)
            p.lse[ps.token(p, n) * p.heads + ps.head(p, n)] = row_lse(rm[n], rsum[n]);
    }

    // A cut unit: the unnormalised Oᵀ and this warpgroup's row stats into the partial slot.
    __device__ void write_partial(const SchedWorkspace &w)
    {
        const float *rsum = reinterpret_cast<const float *>(sm + Smem::rsum);
        const float *rm = reinterpret_cast<const float *>(sm + Smem::rm);
        const int nrows = ps.nrows, slot = ps.pc.slot;
        float *acc = w.acc + (size_t)slot * kRows * kDv;
#pragma unroll
        for (int j = 0; j < kRows / 8; j++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                store_partial_m16n8(acc, kDv, nrows, 8 * j + 2 * t, 256 * wg + 64 * i + 16 * warp + g, o[i][4 * j],
                                    o[i][4 * j + 1], o[i][4 * j + 2], o[i][4 * j + 3]);
        const int n = rb + threadIdx.x % 128;
        if (threadIdx.x % 128 < 8 * nj && n < nrows)
            w.ml[(size_t)slot * kRows + n] = make_float2(rm[n], rsum[n]);
    }
};

__device__ void consume(const vb_verify_params &p, const SchedConfig &c, unsigned char *sm, Sched &sched,
                        PieceState &ps, bool going, int wg, void *ws)
{
    Consumer cs(p, sm, ps, wg);
    const SchedWorkspace w(ws, c, p.batch, kDv);
    uint32_t blk = 0, tiles = 0, pieces = 0;
    while (next_piece(p, c, sched, ps, going, kBarWg + wg)) {
        cs.begin_piece();
        cs.run_tiles(blk, tiles, pieces++);
        cs.finish_sums();
        if (ps.pc.direct)
            cs.write_output();
        else
            cs.write_partial(w);
        if (ps.pc.plan_owner && wg == 0 && threadIdx.x % 128 == 0)
            w.plan[(size_t)ps.pc.b * c.row_tiles + ps.pc.rt] = ps.pc.plan;
        named_barrier(kBarConsumers, 256); // rsum and ps are rewritten for the next piece
    }
}

__global__ void __launch_bounds__(kThreads, 1) wgmma_kernel(vb_verify_params p, void *ws, SchedConfig c)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem_raw[];
    unsigned char *sm = smem_raw + ((1024 - smem_u32(smem_raw) % 1024) % 1024);
    __shared__ Sched sched[3];
    __shared__ PieceState ps[3];
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0); // warp-uniform for ptxas
    const int total = Sched::start_positions(p, c, reinterpret_cast<int *>(sm + Smem::kv));
    bool going = false; // meaningful in each warpgroup's first thread, which walks its schedule
    if (threadIdx.x % 128 == 0)
        going = sched[wg].start(p, c, reinterpret_cast<const int *>(sm + Smem::kv), total);
    if (threadIdx.x == 0) {
        const Barriers bar{smem_u32(sm + Smem::bars)};
        for (int s = 0; s < kRing; s++) {
            mbar_init(bar.full(s), 128);
            mbar_init(bar.empty(s), 8);
        }
        mbar_init(bar.qfull(), 128);
        mbar_init(bar.qempty(), 8);
        mbar_init(bar.pfree(), 8);
        mbar_init_fence();
    }
    __syncthreads(); // the prefix array shares memory with the ring; barriers initialised
    if (wg == 0) {
        setmaxnreg_dec<kProducerRegs>();
        produce(p, c, sm, sched[0], ps[0], going);
    } else {
        setmaxnreg_inc<kConsumerRegs>();
        consume(p, c, sm, sched[wg], ps[wg], going, wg - 1, ws);
    }
#else
    (void)p, (void)ws, (void)c;
#endif
}

// ---- host side ------------------------------------------------------------------------------

SchedConfig config_for(const vb_verify_params &lim)
{
    SchedConfig c;
    const int64_t rows = (int64_t)lim.max_draft * lim.heads;
    c.grid = device_sm_count() > 0 ? device_sm_count() : 1;
    c.rows = kRows;
    c.row_tiles = rows > 0 ? (int)((rows + kRows - 1) / kRows) : 1;
    c.c0 = kC0;
    c.min_span = kMinSpan;
    return c;
}

size_t workspace_bytes(const vb_verify_params *lim)
{
    return SchedWorkspace::bytes(config_for(*lim), lim->batch, kDv, 0);
}

int unsupported(const vb_verify_params *p, char *why, size_t n)
{
    if (unsupported_mla_rows(p, kDqk, kDv, kMaxBatch, why, n))
        return 1;
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess &&
        (major != 9 || minor != 0)) {
        snprintf(why, n, "needs sm_90a (wgmma, setmaxnreg): this GPU is sm_%d%d", major, minor);
        return 1;
    }
    if (smem_exceeds_optin(Smem::alloc, why, n))
        return 1;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, wgmma_kernel) == cudaSuccess &&
        128 * kProducerRegs + 256 * kConsumerRegs > kThreads * fa.numRegs) {
        snprintf(why, n, "built with %d registers a thread: too few for the warpgroups' setmaxnreg split %d/%d",
                 fa.numRegs, kProducerRegs, kConsumerRegs);
        return 1;
    }
    return 0;
}

cudaError_t launch(const vb_verify_params *p, void *ws, cudaStream_t stream)
{
    if (cudaError_t e = check_scheduled_launch(*p, ws, "mla_wgmma"))
        return e;
    if ((int64_t)p->max_tokens * p->heads == 0)
        return cudaSuccess;
    static bool set = false; // a host-side attribute: allowed while a capture is open
    if (!set) {
        if (cudaError_t e = cudaFuncSetAttribute(wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Smem::alloc))
            return e;
        set = true;
    }
    const SchedConfig c = config_for(*p);
    wgmma_kernel<<<c.grid, kThreads, Smem::alloc, stream>>>(*p, ws, c);
    if (cudaError_t e = cudaGetLastError())
        return e;
    return launch_combine<kDv>(*p, ws, c, stream);
}

} // namespace

extern "C" const vb_kernel vb_kernel_mla_wgmma = {
    "mla_wgmma",
    "Hopper: every row of a request per CTA, wgmma with keys on M, a producer warpgroup, sm_90a only",
    90, 1, workspace_bytes, unsupported, launch};
