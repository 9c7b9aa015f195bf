// mla_onepass and mla_onepass_ws: one CTA holds every row of a request (T·H rows, up to 72 at a time) against
// a slice of its KV, so each KV byte is read from memory once per request (once per row tile
// when a request has more than 72 rows).
//
// Tiling (portable: sm_80 and up, bf16 mma.sync m16n8k16 with fp32 accumulation, 8 warps):
// - Rows: row r = draft token i·H + head h. A unit is one row tile of kRows = 8·kN8 rows
//   (72 for 9 tokens × 8 heads); a request with more rows gets several row tiles, each its
//   own unit, placed side by side in the schedule so they read the same KV at the same time.
// - Keys on the MMA's M side, rows on N: Sᵀ = K·Qᵀ and Oᵀ = Vᵀ·Pᵀ, so rows pad only to the
//   n8 granularity (72 rows are 9 n8 tiles, nothing wasted).
// - KV: tiles of 32 keys (36 KB) in two shared-memory stages filled by cp.async; each thread
//   copies 9 chunks of one key, whose slot it looked up one tile earlier. The 16-byte chunks
//   of a key row are XOR-swizzled within 128 bytes, so ldmatrix reads of 8 consecutive keys
//   hit 8 distinct bank groups. Keys past the request's end are zero-filled and hidden.
// - Sᵀ: warp w < 2·G takes row group w / 2 of G (a share of the n8 tiles) and all 32 keys (two
//   m16), reducing over half of the 576 dims (w % 2); the pair then swaps partial sums through
//   shared memory so that each warp holds the full scores of the rows of its parity. G is 3 when
//   the n8 tiles are 4k + 1 (72 rows: 9, three tiles a group, warps 6 and 7 idle in Sᵀ) and 4
//   otherwise (see Smem::kGroups). K comes from shared
//   memory by ldmatrix, Q from global memory. Q (83 KB at 72 rows) does
//   not fit beside the KV stages in 99 KB, so at the start of a piece the CTA copies it into
//   its own workspace scratch in B-fragment order: one 16-byte load per lane feeds four MMAs,
//   and the 83 KB stay in L1 for the rest of the piece (on parts with a large L1); in
//   mla_onepass_ws's Hopper-sized build the copy goes to shared memory (SmemQ, SmemOverlap's
//   kQSmem) as q holds it, row by row by 16-byte cp.async, and the Sᵀ warps read it by
//   ldmatrix, which hands each lane the same registers as the fragment order. The shortest
//   launches (quads whose pieces are mostly one tile) skip the copy and load the B registers
//   straight from q, four 4-byte loads a lane (kQDirect).
// - Softmax: online, log2 domain, warp-local (a warp owns its rows' 32 keys), with a lazy
//   max: a row's reference max moves only when a score passes it by 2^16 (kLazy), so most
//   tiles do no max reduction and no rescale of Oᵀ (skipped in tiles where no row's max moved,
//   and at a piece's first tile, where Oᵀ is zero). Pᵀ goes to shared memory in bf16.
// - Oᵀ: every warp owns 64 of the 512 value dims for all rows (16·kN8 fp32 accumulators per
//   thread: 144 at 72 rows), reading Vᵀ and Pᵀ with ldmatrix.trans.
// - Mask: tiles holding draft-token columns read it; tiles of prefix columns read it only
//   when the caller does not promise prefix_visible (SGLang's layout promises it).
// - Splits: mla_schedule.cuh cuts the batch into equal spans per SM on the device; a unit
//   inside one span writes o and lse directly, a cut one leaves partials for the combine.
// - Short launches (72-row units when the cut's spans are at most kPairSpan positions, 40-64
//   rows when its positions are at most half the CTAs): a unit goes to a group of CTAs, four
//   (a quarter of its rows each) or two (a half), over a span as many times longer, so a short
//   piece's q copy, Sᵀ, softmax, Oᵀ and partial shrink with its rows (see kQuadSpan).
// Two registry entries share this header. mla_onepass (verify_attn_mla_onepass.cu) runs
// onepass_kernel (the 8-warp walks at 255 registers) everywhere. mla_onepass_ws
// (verify_attn_mla_onepass_ws.cu), where setmaxnreg exists (sm_90a, sm_100a, sm_120a: meson.build
// builds that file for those targets), runs 72- and 64-row launches as onepass_rr_kernel:
// 12 warps, registers handed out by role. Its units at spans longer than kOverlapSpan take the
// overlapped walk (SmemOverlap): eight Oᵀ warps at 200 registers accumulate tile t while four Sᵀ
// warps at 104 (three at 72 rows in its Hopper-sized build) score tile t + 1, the roles meeting at
// mbarriers only; everything else runs the 8-warp walks at 240 registers. It is a separate entry
// because no launch can choose between the two kernels on the host (the spans come from the
// lengths a graph replays with), and the 12-warp kernel costs the short launches 2-9%
// (results/h200/NOTES.md, fifty-first).
// Shared memory: Smem<9>::bytes = 95,424 B (93.2 KB) at 72 rows, within the 99 KB of sm_86/89/120.
#pragma once

#include <cstdio>
#include <type_traits>

#include "mla_schedule.cuh"
#include "phase_stamps.cuh"
#include "ptx_sm80.cuh"

namespace {

using namespace vb;

constexpr int kKeys = 32;
// A row's reference max moves when a score passes it by this (log2). 16, not 8: each move costs
// its tile a max reduction and a rescale of Oᵀ, and at 8 the moves after a piece's first tile
// cost 1.5-3% at the long and mid shapes (A/B 8 → 16, results/h200/NOTES.md, twenty-second: bs 1 ×
// 200k 194.7 → 188.6 µs, bs 8 × 23k 180.8 → 175.2; geomean 0.981 over 7 records).
constexpr float kLazy = 16.f;
constexpr int kWarps = 8;                  // 255 registers each, 144 of them Oᵀ accumulators
constexpr int kThreads = kWarps * kWarp;
constexpr int kDimsPerWarp = 512 / kWarps;  // value dims each warp accumulates
constexpr int kDimTiles = kDimsPerWarp / 16;
constexpr int kLoaders = kThreads / kKeys;  // threads copying one key row of a tile
constexpr int kDqk = 576, kDv = 512;
constexpr int kRowBytes = kDqk * 2;        // one KV or q row: 1152 bytes, 72 chunks of 16
constexpr int kChunks = kRowBytes / 16;
constexpr int kMaxN8 = 9;                  // at most 72 rows per unit: 144 accumulators per thread
constexpr int kMaxBatch = 16384;           // the schedule's prefix array lives in the KV stages
// Schedule: a piece's fixed cost (the q copy, the pipeline's fill, the partial and its merge)
// and the smallest span, in tiles. c0 = 6 against 2 (results/h200/NOTES.md): bs 8 × 4096
// 74.4 → 65.6 µs, bs 1 × 4096 54.5 → 39.5, bs 8 × 23k 205 → 196; no change at bs 1 × 512.
// mla_onepass's; mla_onepass_ws passes its own (kC0Ws) to config_for and launch_rows.
constexpr int kC0 = 6, kMinSpan = 1;
// A piece's q in B-fragment order ([n8 · 18][kWarp] uint4), for n8 row tiles.
__host__ __device__ constexpr int q_frag_bytes(int n8) { return n8 * 8 * kRowBytes; }
constexpr int kQFragBytes = q_frag_bytes(kMaxN8); // per CTA, in the workspace

// Shared memory of one configuration; every offset a multiple of 16 bytes.
template <int kN8> struct Smem {
    static constexpr int kRows = 8 * kN8;
    // Row groups of the Sᵀ warps (a pair each): 3 for 4k + 1 n8 tiles (5 and 9), 4 otherwise.
    // With 4 groups, 9 tiles split 3/2/2/2 and 5 tiles 2/1/1/1, and the group holding the extra
    // tile set every tile's pace. Three groups of 3 (or 2/2/1) hold more MMAs a warp (108 at 72
    // rows, against 72 or, with the extra tile's MMAs spread over the six others, 84) but read
    // each K tile three times instead of four, and need no hand-off. A build with three groups
    // for every layout, against the spread (results/h200/NOTES.md, forty-second; 13 records,
    // geomean 0.965): bs 8 × 91k 600.0 → 566.0 µs, bs 1 × 200k 187.5 → 178.0, bs 8 × 23k 174.4
    // → 166.8, 36-row units 0.865-0.923; but eagle64 (8 tiles, 3/3/2) 205.2 → 215.3 and bs 1 ×
    // 512 (the 3-tile quads) 14.2 → 14.7, so only 4k + 1 tiles take three.
    static constexpr int kGroups = kN8 % 4 == 1 && kN8 >= 5 ? 3 : 4;
    static constexpr int kSW = 2 * kGroups;           // Sᵀ warps
    static constexpr int kNt = (kN8 + kGroups - 1) / kGroups; // most n8 row tiles of one group
    static constexpr int kPStride = 16 * (kN8 | 1); // Pᵀ key row: an odd number of 16-byte units
    static constexpr int kv = 0;                                  // [2][kKeys][kRowBytes]
    static constexpr int pt = kv + 2 * kKeys * kRowBytes;         // [kKeys][kPStride]
    static constexpr int mask = pt + kKeys * kPStride;            // [2][kRows tokens][kKeys]
    static constexpr int xch = mask + 2 * kRows * kKeys;          // [kSW][4·kNt][kWarp] partial Sᵀ sent to the pair
    static constexpr int lpart = xch + kSW * 4 * kNt * kWarp * 4; // [kSW][kNt][kWarp] each lane's share of its row sums
    static constexpr int corr = lpart + kSW * kNt * kWarp * 4;    // [kRows] rescale of this tile
    static constexpr int moved = corr + kRows * 4;                // [2] int: some row's max moved, by tile parity
    static constexpr int rsum = moved + 16;                       // [kRows] row sums, at the end of a piece
    static constexpr int rm = rsum + kRows * 4;                   // [kRows] reference max of each row
    static constexpr int tok = rm + kRows * 4;                    // [kRows] draft token of a row, from tok_lo
    static constexpr int bytes = tok + (kRows + 15) / 16 * 16;

    // Every warp scores (warps [0, kSW)) and accumulates; one Pᵀ and one set of rescale factors.
    static constexpr bool kOverlap = false;
    static constexpr bool kQSmem = false; // q's fragments in the workspace, read through L1
    static constexpr int kThreads = vb::kWarp * 8, kSW0 = 0, kPairBar0 = 1;
    __host__ __device__ static constexpr int pt_at(int) { return pt; }
    __host__ __device__ static constexpr int corr_at(int) { return corr; }
};

// Smem with the piece's q rows (begin_piece's qfrag) in shared memory after it, for
// onepass_rr_kernel's Hopper-sized build, whose shared memory leaves L1 too small to hold them.
template <int kN8> struct SmemQ : Smem<kN8> {
    static constexpr bool kQSmem = true;
    static constexpr int qf = (Smem<kN8>::bytes + 127) / 128 * 128; // q_frag_bytes(kN8)
    static constexpr int bytes = qf + q_frag_bytes(kN8);
};
// The 8-warp walks' layout: q's rows in shared memory (kQSmem) or its fragments in the workspace.
template <int kN8, bool kQSmem> using WalkLayout = std::conditional_t<kQSmem, SmemQ<kN8>, Smem<kN8>>;

// Shared memory of the overlapped walk (Onepass::accumulate_piece and score_piece): 8 Oᵀ warps
// and kSWarps Sᵀ warps after them, so that the scores of tile t + 1 are computed while tile t's
// Pᵀ is accumulated. Pᵀ, the rescale factors and the moved flags are kept per stage parity; the
// tree mask is read from global memory at the tiles that need it (no staging); an mbarrier per
// KV stage completes when the stage's copies have landed. Four Sᵀ warps: two could not score a
// tile as fast as eight take its Oᵀ (1.27-1.35 against the 8-warp walk), four can
// (results/h200/NOTES.md, forty-ninth). Each Sᵀ warp is a row group of its own (2, 2, 2 and 3 of
// 9 n8 tiles; with kSWarps = 3, as onepass_rr_kernel's Hopper-sized build has, 3 each) over all
// 32 keys and all 576 dims, so its softmax is warp-local and no partial score crosses warps:
// against pairs that split the dims and swap partial scores, 0.96-0.997 at the long and mid
// shapes on an H100 (NOTES.md, fifty-fifth). Runs only in onepass_rr_kernel, whose registers go
// to the Oᵀ warps.
template <int kN8, int kSWarps = 4, int kStages_ = 2, bool kQSmem_ = false, bool kCopyWarp_ = false> struct SmemOverlap {
    static constexpr int kStages = kStages_;
    // kCopyWarp: a warp of its own (warp 8 + kSW) copies the KV, not the Oᵀ warps; they tell it
    // through `empty` when they have read a stage. Their copies, slot lookups and kOBar barrier
    // were about a fifth of their working samples in Nsight Compute (NOTES.md, fifty-eighth).
    static constexpr bool kCopyWarp = kCopyWarp_;
    static constexpr bool kQSmem = kQSmem_; // q's rows at qf, not its fragments in the workspace
    static constexpr int kRows = 8 * kN8;
    // Row split: each Sᵀ warp is a row group of its own (all 32 keys, all 576 dims).
    static constexpr int kGroups = kSWarps, kSW = kSWarps, kNt = (kN8 + kGroups - 1) / kGroups;
    static constexpr int kPStride = 16 * (kN8 | 1);
    static constexpr int kv = 0;                                  // [kStages][kKeys][kRowBytes]
    static constexpr int pt = kv + kStages * kKeys * kRowBytes;   // [2][kKeys][kPStride]
    static constexpr int corr = pt + 2 * kKeys * kPStride;        // [2][kRows]
    static constexpr int moved = corr + 2 * kRows * 4;            // [2][kSW] int: this warp's rows moved, by parity
    static constexpr int rsum = moved + 2 * kSW * 4;              // [kRows]
    static constexpr int rm = rsum + kRows * 4;                   // [kRows]
    static constexpr int tok = rm + kRows * 4;                    // [kRows]
    // mbarriers, one per hand-off between the roles (racecheck orders accesses by them; it did
    // not by barriers that each role reaches from its own code):
    static constexpr int full = tok + (kRows + 15) / 16 * 16;     // [kStages] stage s landed (the copies)
    static constexpr int ready = full + 8 * kStages;              // [2] Pᵀ, corr, moved of a parity out (Sᵀ → Oᵀ)
    static constexpr int freed = ready + 16;                      // [2] Pᵀ of a parity read (Oᵀ → Sᵀ)
    static constexpr int sums = freed + 16;                       // the piece's row sums written (Sᵀ → Oᵀ)
    static constexpr int blk = sums + 8;                          // the walk's block barrier (every thread)
    static constexpr int empty = blk + 8;                         // [kStages] kCopyWarp: stage s read (Oᵀ → copier)
    static constexpr int end = empty + (kCopyWarp ? 8 * kStages : 0);
    static constexpr int qf = (end + 127) / 128 * 128;            // kQSmem: q_frag_bytes(kN8)
    static constexpr int bytes = kQSmem ? qf + q_frag_bytes(kN8) : (end + 15) / 16 * 16;

    static constexpr bool kOverlap = true;
    static constexpr int kThreads = vb::kWarp * (8 + kSW + kCopyWarp), kSW0 = 8, kCopyWarp0 = 8 + kSW;
    static constexpr int kOThreads = vb::kWarp * 8;
    static constexpr int kCopiers = kCopyWarp ? vb::kWarp : kOThreads; // the threads that copy the KV
    static constexpr int kOBar = 3; // named barrier of the Oᵀ warps alone (the Sᵀ warps take none)
    __host__ __device__ static constexpr int pt_at(int par) { return pt + par * kKeys * kPStride; }
    __host__ __device__ static constexpr int corr_at(int par) { return corr + par * kRows * 4; }
};

// What every thread needs to know about the piece it works on, kept in shared memory so that
// it costs no registers across the tile loop (the Oᵀ accumulators take 144 of them).
struct PieceState : PieceRows {
    int64_t tok_lo; // first draft token of the piece's rows
    int ntok;       // draft tokens those rows span

    // tok_lo and ntok of the rows set_unit (and take_share) chose.
    __device__ void set_tokens(const FastDiv &heads)
    {
        tok_lo = (int)heads.div(row0);
        ntok = (int)heads.div(row0 + nrows - 1) - tok_lo + 1;
    }
};

static_assert(Smem<kMaxN8>::bytes <= 99 * 1024, "the same code must fit sm_86/89/120: 99 KB per block");
// The overlapped walk's layout: four Sᵀ warps, kOverlapStages KV stages (3 stages take 131 KB,
// which sm_80 and sm_90 allow and sm_86/89/120 do not, and on the H200 they took L1 from q:
// 1.04 against 2, NOTES.md, forty-ninth).
constexpr int kOverlapStages = 2;
template <int kN8> using OverlapLayout = SmemOverlap<kN8, 4, kOverlapStages>;
static_assert(OverlapLayout<kMaxN8>::bytes <= 99 * 1024, "the same code must fit sm_86/89/120: 99 KB per block");

// ---- instructions (sm_80+; the rest in ptx_sm80.cuh) ---------------------------------------

// 16 bytes of global memory written earlier in this launch by the same CTA: a plain
// (L1-cached, coherent) load, not the read-only path.
__device__ __forceinline__ uint4 ldg128(const void *p)
{
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

// The 16-byte chunk q of key row j lives at chunk (q & ~7) | ((q & 7) ^ swz(j)). Rows 2i and
// 2i+1 differ in bit 2 (the Sᵀ reads: 8 lanes, 2 rows × 4 chunks) and any 8 consecutive
// rows give 8 distinct values (ldmatrix: 8 rows, one chunk).
__device__ __forceinline__ int swz(int j) { return ((j & 1) << 2) | ((j >> 1) & 3); }

// ---- one piece -------------------------------------------------------------------------------

template <int kN8, int kUnitN8 = kN8, int kHalves = 1, bool kQDirect = false, class Layout = Smem<kN8>,
          bool kPart = false>
struct Onepass {
    using L = Layout;
    static constexpr int kRows = L::kRows;
    // The unit's rows (the cut's and the partial slot's), and the share of them this CTA takes:
    // all of them, or a quarter or half of them on a CTA quad or pair (quad_n8, pair_n8).
    static constexpr int kUnitRows = 8 * kUnitN8;
    static constexpr int kShare = kUnitRows / kHalves;
    static_assert(kShare <= kRows, "a CTA computes at least its share of the unit's rows");
    static constexpr int kGroups = L::kGroups, kSW = L::kSW, kNt = L::kNt;
    static constexpr int kMaskWords = kRows * kKeys / kThreads / 4 + 1; // staged mask bytes, 4 a word

    const vb_verify_params &p;
    unsigned char *smem;
    const PieceState &ps;
    const int tid, warp, lane, g, t; // g = lane / 4 (MMA group), t = lane % 4
    unsigned phase = 0;              // overlap: the parities of the mbarriers' next completions (kFullBit...)

    // Loader role: key tid / kLoaders of every tile, chunks (tid % kLoaders) + kLoaders·i.
    int64_t slot_next; // slot of this thread's key in the tile after the one being issued
    unsigned mask_reg[kMaskWords];

    // Sᵀ role (is_sw()): n8 row tiles [j_lo, j_lo + nt) of its row group. In the 8-warp walk a
    // pair's warps split the dims (KS = warp % 2) and keep the rows' running max and sums in
    // shared memory (rm, lpart); in the overlapped walk each Sᵀ warp scores all 576 dims and
    // keeps its row sums in registers (score_piece's ls).
    int j_lo, nt;

    // Oᵀ role (every warp of the 8-warp walk, warps 0-7 of the overlapped one): value dims
    // [64·warp, 64·warp + 64) of every row.
    float o[kDimTiles][kN8][4];

    // kQDirect: q straight from global memory, for quads whose pieces are mostly one tile and
    // read q once (the cut's positions at most half the CTAs): the copy's round trip is then
    // all cost. A build that did so for every piece of quads and pairs (results/h200/NOTES.md,
    // twenty-seventh): bs 1 × 512 16.0 → 14.9 µs and bs 1 × 1 15.0 → 13.7, but 8-14% slower
    // where the pieces are longer (bs 8 × 512, bs 1 × 8192, graph-bucket16's batch3): there a
    // 16-byte load of the copy feeds four MMAs a tile, against four 4-byte loads of 8 rows
    // each. Choosing per piece at run time (one-tile pieces only) changed the 72-row kernel's
    // register allocation and cost every walk 1-13%; so the choice is a walk of its own. As a
    // walk for every span-1 launch: geomean 0.992 over 33 records, bs 1 × 512 15.8 → 14.9 µs,
    // but bs 1 × 2048 (71 positions for 132 CTAs, pieces of several tiles) 1.036.
    // q_own[jj]: this lane's pairs (index 16·ds + t) of row 8j + g of its n8 row tiles j = j_lo + jj.
    const unsigned *q_own[kQDirect ? kNt : 1];

    __device__ Onepass(const vb_verify_params &p_, unsigned char *smem_, const PieceState &ps_)
        : p(p_), smem(smem_), ps(ps_), tid(threadIdx.x), warp(threadIdx.x / kWarp), lane(threadIdx.x % kWarp),
          g(lane / 4), t(lane % 4)
    {
        const int grp = sw() / (kSW / kGroups); // a pair a group in the 8-warp walk, one warp in the overlap
        j_lo = grp * kN8 / kGroups;
        nt = (grp + 1) * kN8 / kGroups - j_lo;
    }

    // The block's barrier. The overlapped walk's roles reach it from their own code, so there it
    // is an mbarrier (see init_barriers).
    __device__ __forceinline__ void block_sync()
    {
        if constexpr (L::kOverlap) {
            mbar_arrive(bar_at(L::blk));
            bar_wait(L::blk, kBlkBit);
        } else {
            sync8();
        }
    }
    // The 8-warp walks' block barrier.
    static __device__ __forceinline__ void sync8()
    {
        if constexpr (kPart)
            named_barrier(0, kThreads); // the block's other warps have left (onepass_rr_kernel)
        else
            __syncthreads();
    }
    // This warp's index among the Sᵀ warps (meaningful when it is one).
    __device__ int sw() const { return warp - L::kSW0; }
    __device__ bool is_sw() const { return warp >= L::kSW0 && warp < L::kSW0 + kSW; }

    __device__ bool tile_needs_mask(int tile) const
    {
        return !p.prefix_visible || (int64_t)(tile + 1) * kKeys > ps.rq.P;
    }

    // Issue the cp.async copies of one tile's KV rows into stage st, evict-first in L2 (read
    // once per unit; see ptx_sm80.cuh): A/B on the H200 (results/h200/NOTES.md, 2026-12-01,
    // eighth), bs 8 × 23k 187.1 → 181.9 µs, bs 8 × 4096 59.9 → 58.3, bs 1 × 200k 205.1 → 199.7.
    // This thread's share: key tid / kLoaders, chunks tid % kLoaders + kLoaders·i.
    __device__ void issue_kv(int tile, int st, int64_t slot)
    {
        issue_key(tile, st, tid / kLoaders, tid % kLoaders, slot);
    }
    // Key `key` of the tile (its row at `slot`) into stage st: chunks sub + kLoaders·i.
    __device__ void issue_key(int tile, int st, int key, int sub, int64_t slot)
    {
        const bool valid = (int64_t)tile * kKeys + key < ps.keys;
        // The row's address once, then immediate offsets: without the empty asm the compiler
        // folded each chunk's offset into its own 64-bit multiply-add of slot · stride, six
        // dependent instructions a copy ahead of every tile's scores (Nsight Compute at bs 8 ×
        // 91k: 12.7% of the warps' samples between the tile's barrier and the Sᵀ pairs' one).
        // A/B on the H200 (results/h200/NOTES.md, forty-third and forty-ninth; 13 records):
        // geomean 0.989 and 0.990, bs 8 × 91k 565.9 → 553.2 and 566.8 → 554.9 µs, eagle64
        // 1.002 and 1.003.
        const char *src = reinterpret_cast<const char *>(p.kv_buffer + (valid ? slot : 0) * p.stride_kv_slot) + 16 * sub;
        asm("" : "+l"(src));
        const unsigned row = smem_u32(smem + L::kv + (st * kKeys + key) * kRowBytes);
        const unsigned dst = row + 16 * ((sub & ~7) | ((sub & 7) ^ swz(key)));
        const uint64_t evict_first = l2_evict_first_policy();
#pragma unroll
        for (int i = 0; i < (kChunks + kLoaders - 1) / kLoaders; i++)
            if (sub + kLoaders * i < kChunks)
                cp_async16(dst + 16 * kLoaders * i, src + 16 * kLoaders * i, valid, evict_first);
    }

    // Mask bytes of one tile (the piece's tokens × 32 keys) into registers, 4 to a word.
    __device__ void load_mask(int tile)
    {
        const int64_t keys = ps.keys, base = ps.rq.mask0 + ps.tok_lo * keys + (int64_t)tile * kKeys;
        const int ntok = ps.ntok;
#pragma unroll
        for (int w = 0; w < kMaskWords; w++) {
            unsigned word = 0;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int e = tid + kThreads * (4 * w + k), tk = e / kKeys, key = e % kKeys;
                if (tk < ntok && (int64_t)tile * kKeys + key < keys)
                    word |= (unsigned)__ldg(p.custom_mask + base + tk * keys + key) << (8 * k);
            }
            mask_reg[w] = word;
        }
    }
    __device__ void store_mask(int st)
    {
        uint8_t *mk = smem + L::mask + st * kRows * kKeys;
#pragma unroll
        for (int w = 0; w < kMaskWords; w++)
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int e = tid + kThreads * (4 * w + k);
                if (e < kRows * kKeys)
                    mk[e] = (uint8_t)(mask_reg[w] >> (8 * k));
            }
    }

    // Where q_own points for n8 row tile j (rows past the piece's repeat its last).
    __device__ const unsigned *q_pairs(int j) const
    {
        return reinterpret_cast<const unsigned *>(ps.q_row(p, 8 * min(j, kN8 - 1) + g)) + t;
    }

    // The b registers of k-steps 2·ds and 2·ds + 1 (see begin_piece) for n8 row tile j of the
    // fragment copy qf (in shared memory: q's rows there), or from q itself through q_row.
    __device__ uint4 q_b(const uint4 *qf, const unsigned *q_row, int j, int ds) const
    {
        if constexpr (kQDirect) {
            const unsigned *q = q_row + 16 * ds;
            return make_uint4(__ldg(q), __ldg(q + 4), __ldg(q + 8), __ldg(q + 12));
        }
        if constexpr (L::kQSmem) {
            // Rows as they are in q, chunk c of row r at c ^ (r & 7) (begin_piece): one ldmatrix
            // of rows 8j .. 8j + 7 and chunks 4·ds .. 4·ds + 3 gives lane (g, c) the same four
            // pairs as the fragment order, without bank conflicts (rows 1152 bytes apart).
            const unsigned row = smem_u32(qf) - 16 * lane + (8 * j + (lane & 7)) * kRowBytes;
            const unsigned y = (lane >> 3) ^ (lane & 7) ^ (4 * (ds & 1));
            unsigned r[4];
            ldsm_x4(r, row + 64 * (ds & ~1) + 16 * y);
            return make_uint4(r[0], r[1], r[2], r[3]);
        }
        return ldg128(qf + ((size_t)j * (kChunks / 4) + ds) * kWarp);
    }

    // The first of the four bf16 pairs (four apart) that fill qfrag[i] (see begin_piece): pair
    // 16·ds + c of row 8j + g, dims 32·ds + 2c.
    __device__ const unsigned *qfrag_src(int i) const
    {
        const int ln = i % kWarp, ds = (i / kWarp) % (kChunks / 4), j = i / (kWarp * (kChunks / 4));
        return reinterpret_cast<const unsigned *>(ps.q_row(p, 8 * j + ln / 4)) + 16 * ds + ln % 4;
    }

    // Per-row token indices and running stats into shared memory, the piece's q into qfrag
    // (kQSmem: its rows; in the workspace: B-fragment order; kQDirect: this lane's pointers
    // into q); zero accumulators. Ends with a barrier (qfrag is read after it).
    __device__ void begin_piece(uint4 *qfrag)
    {
        uint8_t *tok = smem + L::tok;
        float *rm = reinterpret_cast<float *>(smem + L::rm);
        for (int r = tid; r < kRows; r += L::kThreads) {
            const int lr = ps.row(r);
            tok[r] = (uint8_t)(ps.heads.div(lr) - ps.tok_lo);
            rm[r] = -CUDART_INF_F;
        }
        if constexpr (L::kOverlap) { // its row sums live in the Sᵀ warps' registers
            if (tid < 2 * kSW)
                reinterpret_cast<int *>(smem + L::moved)[tid] = 0;
        } else {
#pragma unroll
            for (int jj = 0; jj < kNt; jj++)
                if (is_sw())
                    reinterpret_cast<float *>(smem + L::lpart)[(sw() * kNt + jj) * kWarp + lane] = 0.f;
            if (tid == 0)
                reinterpret_cast<int *>(smem + L::moved)[0] = 0;
        }
        // In the workspace, qfrag[(j · 18 + ds) · 32 + lane] holds, for lane (g, c) of n8 row
        // tile j, the bf16 pairs at dims 32·ds + {0, 8, 16, 24} + 2c of row 8j + g: the b0, b1
        // registers of k-steps 2·ds and 2·ds + 1, so one 16-byte load feeds two MMAs.
        if constexpr (kQDirect) {
#pragma unroll
            for (int jj = 0; jj < kNt; jj++)
                q_own[jj] = q_pairs(j_lo + jj);
        }
        if constexpr (L::kQSmem && !kQDirect) {
            // In shared memory the rows stay as q holds them (1152 contiguous bytes each), so
            // the copy is 16-byte cp.async of whole rows, a warp a row; chunk c of row r lands at
            // c ^ (r & 7) for q_b's ldmatrix. It replaced 4-byte cp.async into the fragment order
            // (8 rows × 16 bytes a warp instruction): on an H100, 0.945-0.952 of the time at bs 8
            // × 4096, 0.951-0.954 at eagle64, 0.973-0.977 at bs 8 × 23k, up to 1.011 at bs 1 ×
            // 200k and bs 1 × 512 (NOTES.md, sixty-sixth).
            const unsigned q0 = smem_u32(qfrag);
            for (int r = tid / kWarp; r < kRows; r += L::kThreads / kWarp) {
                const uint16_t *q = ps.q_row(p, r);
                for (int ch = lane; ch < kChunks; ch += kWarp)
                    cp_async16(q0 + r * kRowBytes + 16 * (ch ^ (r & 7)), q + 8 * ch, true);
            }
            cp_async_commit();
            cp_async_wait<0>();
        } else if constexpr (!kQDirect) {
#pragma unroll 4
            for (int i = tid; i < kN8 * (kChunks / 4) * kWarp; i += L::kThreads) {
                const unsigned *q = qfrag_src(i);
                qfrag[i] = make_uint4(__ldg(q), __ldg(q + 4), __ldg(q + 8), __ldg(q + 12));
            }
        }
        if constexpr (!L::kOverlap) // the overlapped walk's Oᵀ warps zero theirs (accumulate_piece)
            zero_o();
        block_sync();
    }
    __device__ void zero_o()
    {
#pragma unroll
        for (int m = 0; m < kDimTiles; m++)
#pragma unroll
            for (int j = 0; j < kN8; j++)
                o[m][j][0] = o[m][j][1] = o[m][j][2] = o[m][j][3] = 0.f;
    }

    // The values a warp of an S pair sends to the other, in one order for writer and reader:
    // f(mh, jj, h, slot) with slot the value's float offset in the sender's xch area (lane 0).
    template <int NT, class F> static __device__ __forceinline__ void for_each_exchanged(F f)
    {
#pragma unroll
        for (int mh = 0; mh < 2; mh++)
#pragma unroll
            for (int jj = 0; jj < NT; jj++)
#pragma unroll
                for (int h = 0; h < 2; h++)
                    f(mh, jj, h, ((mh * NT + jj) * 2 + h) * kWarp);
    }

    // This lane's ldmatrix row of K in stage st: lane (mi, r8) = (lane / 8, lane % 8) reads key
    // 16·mh + 8·(mi & 1) + r8, chunk c + (mi >> 1) for an even c, which is stored at chunk c ^ x.
    __device__ unsigned k_lane_row(int st, int &x) const
    {
        const int mi = lane / 8, r8 = lane % 8;
        x = (mi >> 1) ^ swz(r8);
        return smem_u32(smem + L::kv + (st * kKeys + 8 * (mi & 1) + r8) * kRowBytes);
    }
    // Four lane bases of K in stage st, one per c % 8; the rest of each address is immediate.
    __device__ void k_lane_bases(int st, unsigned (&kb)[4]) const
    {
        int x;
        const unsigned krow = k_lane_row(st, x);
#pragma unroll
        for (int i = 0; i < 4; i++)
            kb[i] = krow + 16 * ((2 * i) ^ x);
    }
    // K's A fragment for keys [16·mh, 16·mh + 16), chunks c and c + 1 (c even), from k_lane_bases.
    static __device__ __forceinline__ void ldsm_k(unsigned (&a)[4], const unsigned (&kb)[4], int c, int mh)
    {
        ldsm_x4(a, kb[(c & 7) / 2] + 16 * (c & ~7) + 16 * mh * kRowBytes);
    }
    template <int NT> static __device__ __forceinline__ void zero_scores(float (&acc)[2][NT][4])
    {
#pragma unroll
        for (int mh = 0; mh < 2; mh++)
#pragma unroll
            for (int jj = 0; jj < NT; jj++)
                acc[mh][jj][0] = acc[mh][jj][1] = acc[mh][jj][2] = acc[mh][jj][3] = 0.f;
    }

    // Sᵀ for the tile's 32 keys × this warp's NT row tiles (from n8 tile j_lo), reduced over the
    // DN double k-steps (32 dims each) from D0. Two key halves per warp give 2·NT independent
    // accumulator chains and reuse each q load twice. NT, D0 and DN are template arguments so
    // that no MMA is predicated and every shared-memory offset is an immediate.
    template <int NT, int D0, int DN> __device__ void score_dims(int st, const uint4 *qfrag, float (&acc)[2][NT][4])
    {
        zero_scores(acc);
        const uint4 *qf = qfrag + (size_t)j_lo * (kChunks / 4) * kWarp + lane;
        unsigned kb[4];
        k_lane_bases(st, kb);
#pragma unroll
        for (int ds = D0; ds < D0 + DN; ds++) {
            unsigned a[2][2][4];
#pragma unroll
            for (int mh = 0; mh < 2; mh++)
#pragma unroll
                for (int e = 0; e < 2; e++)
                    ldsm_k(a[mh][e], kb, 4 * ds + 2 * e, mh);
#pragma unroll
            for (int jj = 0; jj < NT; jj++) {
                const uint4 qv = q_b(qf, q_own[kQDirect ? jj : 0], jj, ds);
#pragma unroll
                for (int mh = 0; mh < 2; mh++) {
                    mma(acc[mh][jj], a[mh][0], qv.x, qv.y);
                    mma(acc[mh][jj], a[mh][1], qv.z, qv.w);
                }
            }
        }
    }

    // The 8-warp walk's Sᵀ, reduced over dims [288·KS, 288·KS + 288) (KS = warp % 2); the half
    // of it that belongs to the pair's other warp goes to shared memory (xch). After the pair's
    // barrier, full_scores adds the other warp's half, so that each warp ends with the full
    // scores of its rows of parity KS: the row split makes each row's softmax warp-local.
    template <int NT, int KS> __device__ void partial_scores(int st, const uint4 *qfrag, float (&acc)[2][NT][4])
    {
        constexpr int kSteps = kChunks / 4 / 2; // double k-steps (32 dims) of one half: 9
        score_dims<NT, KS * kSteps, kSteps>(st, qfrag, acc);
        send_partial<NT, KS>(acc);
    }

    // Keep the rows of parity KS (accumulator elements KS and 2 + KS), send the others.
    template <int NT, int KS> __device__ void send_partial(const float (&acc)[2][NT][4])
    {
        float *mine = reinterpret_cast<float *>(smem + L::xch) + sw() * 4 * kNt * kWarp + lane;
        for_each_exchanged<NT>([&](int mh, int jj, int h, int slot) { mine[slot] = acc[mh][jj][2 * h + (KS ^ 1)]; });
    }

    // This warp's rows of Sᵀ (after the pair's barrier): s[jj][2·mh + h] is key 16·mh + 8·h + g,
    // row 8·(j_lo + jj) + 2·t + KS, its own half plus the other warp's, scaled to the log2
    // domain.
    template <int NT, int KS> __device__ void full_scores(const float (&acc)[2][NT][4], float (&s)[NT][4])
    {
        const float *theirs = reinterpret_cast<const float *>(smem + L::xch) + (sw() ^ 1) * 4 * kNt * kWarp + lane;
        const float scale = p.sm_scale * kLog2e;
        for_each_exchanged<NT>([&](int mh, int jj, int h, int slot) {
            s[jj][2 * mh + h] = (acc[mh][jj][2 * h + KS] + theirs[slot]) * scale;
        });
    }

    // Hide the keys of this warp's NS row tiles that the mask or the request's end hides.
    template <int NS> __device__ void mask_scores(int tile, int st, float (&s)[NS][4])
    {
        const int64_t k0 = (int64_t)tile * kKeys, keys = ps.keys;
        if (!tile_needs_mask(tile) && k0 + kKeys <= keys)
            return; // a full tile of prefix columns the caller promised visible
        const uint8_t *tok = smem + L::tok;
#pragma unroll
        for (int jj = 0; jj < NS; jj++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int key = 8 * e + g, row = 8 * (j_lo + jj) + 2 * t + warp % 2;
                const bool vis = k0 + key < keys && (!tile_needs_mask(tile) || mask_byte(st, tok[row], k0, key) != 0);
                s[jj][e] = vis ? s[jj][e] : -CUDART_INF_F;
            }
    }
    // The mask byte of draft token tok_lo + tk and key k0 + key: staged (store_mask), or from
    // global memory in the overlapped walk.
    __device__ uint8_t mask_byte(int st, int tk, int64_t k0, int key) const
    {
        if constexpr (L::kOverlap)
            return __ldg(p.custom_mask + ps.rq.mask0 + (ps.tok_lo + tk) * ps.keys + k0 + key);
        else
            return smem[L::mask + st * kRows * kKeys + tk * kKeys + key];
    }

    // Online softmax of one tile over rows this warp owns entirely (all 32 keys, rows of parity
    // warp % 2; the lanes of one t hold one row). The max is lazy: a row's reference max m
    // moves only when a score exceeds it by more than kLazy (log2 units), so in most tiles no
    // lane reduces maxima and Oᵀ is not rescaled; P = 2^(s - m) ≤ 2^kLazy stays exact in fp32
    // sums and bf16, and lse = m + log2(l) holds for any m. Each lane keeps its own share of
    // the row sums (lpart), reduced once at the end of the piece. Pᵀ goes to shared memory,
    // and the rescale factor of every row (1 unless its m moved) for the Oᵀ warps.
    template <int NT> __device__ void softmax(float (&s)[NT][4], int par)
    {
        float *corr = reinterpret_cast<float *>(smem + L::corr_at(par));
        float *rm = reinterpret_cast<float *>(smem + L::rm);
        float *lpart = reinterpret_cast<float *>(smem + L::lpart) + sw() * kNt * kWarp + lane;
        uint16_t *pt = reinterpret_cast<uint16_t *>(smem + L::pt_at(par));
        float m[NT];
        bool up = false;
#pragma unroll
        for (int jj = 0; jj < NT; jj++) {
            m[jj] = rm[8 * (j_lo + jj) + 2 * t + warp % 2];
#pragma unroll
            for (int e = 0; e < 4; e++)
                up |= s[jj][e] > m[jj] + kLazy;
        }
        __syncwarp(); // every lane has read rm before lane g = 0 of a row may write it below
        const bool rescale = __any_sync(0xffffffffu, up);
#pragma unroll
        for (int jj = 0; jj < NT; jj++) {
            const int row = 8 * (j_lo + jj) + 2 * t + warp % 2;
            float c = 1.f;
            if (rescale) { // uniform across the warp: shuffles are safe
                float mx = fmaxf(fmaxf(s[jj][0], s[jj][1]), fmaxf(s[jj][2], s[jj][3]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 8));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 16));
                const float mnew = fmaxf(m[jj], mx);
                if (mnew != m[jj]) {
                    c = exp2_ftz(m[jj] - mnew); // 0 when m was -inf (nothing visible before)
                    if (g == 0) {
                        rm[row] = mnew;
                        atomicOr(reinterpret_cast<int *>(smem + L::moved) + par, 1);
                    }
                    m[jj] = mnew;
                }
            }
            const float mu = m[jj] == -CUDART_INF_F ? 0.f : m[jj]; // nothing visible yet: keep zeros
            float ls = 0.f;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[jj][e] = exp2_ftz(s[jj][e] - mu);
                ls += s[jj][e];
                const __nv_bfloat16 pb = __float2bfloat16_rn(s[jj][e]);
                pt[(8 * e + g) * (L::kPStride / 2) + row] = *reinterpret_cast<const uint16_t *>(&pb);
            }
            lpart[jj * kWarp] = lpart[jj * kWarp] * c + ls;
            if (g == 0)
                corr[row] = c;
        }
    }

    // The row sums of the piece from every lane's share (lpart) into rsum.
    __device__ void finish_sums()
    {
        float *rsum = reinterpret_cast<float *>(smem + L::rsum);
        const float *lpart = reinterpret_cast<const float *>(smem + L::lpart) + sw() * kNt * kWarp + lane;
#pragma unroll
        for (int jj = 0; jj < kNt; jj++) {
            if (jj >= nt)
                break; // nt is uniform across the warp
            float l = lpart[jj * kWarp];
            l += __shfl_xor_sync(0xffffffffu, l, 4);
            l += __shfl_xor_sync(0xffffffffu, l, 8);
            l += __shfl_xor_sync(0xffffffffu, l, 16);
            if (g == 0)
                rsum[8 * (j_lo + jj) + 2 * t + warp % 2] = l;
        }
    }

    // Oᵀ = Oᵀ·corr + Vᵀ·Pᵀ over the tile's 32 keys, for this warp's 64 value dims.
    __device__ void accumulate(int st, int par, bool first)
    {
        accumulate(st, par, first, [] {});
    }
    // after_v() runs once this warp has read the last of stage st's V that it needs (the second
    // key half's), before that half's MMAs: the overlapped walk refills the stage from there, so
    // the refill's copies are in flight during those MMAs (0.8-5.6% off each record that takes
    // the overlapped walk on an H100, NOTES.md, fifty-sixth).
    template <class AfterV> __device__ void accumulate(int st, int par, bool first, AfterV after_v)
    {
        const float *corr = reinterpret_cast<const float *>(smem + L::corr_at(par));
        // Most tiles move no row's max (corr = 1 everywhere): skip the rescale then, and at a
        // piece's first tile, where Oᵀ is zero.
        if (!first && moved(par)) {
#pragma unroll
            for (int j = 0; j < kN8; j++) {
                const float2 c = *reinterpret_cast<const float2 *>(corr + 8 * j + 2 * t);
#pragma unroll
                for (int m = 0; m < kDimTiles; m++)
                    o[m][j][0] *= c.x, o[m][j][1] *= c.y, o[m][j][2] *= c.x, o[m][j][3] *= c.y;
            }
        }
        const int mi = lane / 8, r8 = lane % 8, fl = swz(r8);
        const unsigned kv = smem_u32(smem + L::kv + st * kKeys * kRowBytes);
        const unsigned pt = smem_u32(smem + L::pt_at(par));
#pragma unroll
        for (int ks = 0; ks < 2; ks++) {
            unsigned a[kDimTiles][4];
            const int vkey = 16 * ks + 8 * (mi / 2) + r8;
#pragma unroll
            for (int m = 0; m < kDimTiles; m++) {
                const int chunk = (kDimsPerWarp * warp + 16 * m) / 8 + mi % 2;
                ldsm_x4_t(a[m], kv + vkey * kRowBytes + 16 * ((chunk & ~7) | ((chunk & 7) ^ fl)));
            }
            if (ks == 1)
                after_v();
            const int pkey = 16 * ks + 8 * (mi % 2) + r8;
#pragma unroll
            for (int q = 0; q < kN8 / 2; q++) {
                unsigned b[4];
                ldsm_x4_t(b, pt + pkey * L::kPStride + 2 * (16 * q + 8 * (mi / 2)));
#pragma unroll
                for (int m = 0; m < kDimTiles; m++) {
                    mma(o[m][2 * q], a[m][0], a[m][1], a[m][2], a[m][3], b[0], b[1]);
                    mma(o[m][2 * q + 1], a[m][0], a[m][1], a[m][2], a[m][3], b[2], b[3]);
                }
            }
            if (kN8 % 2) {
                unsigned b[2];
                ldsm_x2_t(b, pt + pkey * L::kPStride + 2 * (16 * (kN8 / 2)));
#pragma unroll
                for (int m = 0; m < kDimTiles; m++)
                    mma(o[m][kN8 - 1], a[m][0], a[m][1], a[m][2], a[m][3], b[0], b[1]);
            }
        }
    }

    // Some row's max moved in the tile of stage parity st.
    __device__ bool moved(int st) const
    {
        const int *mv = reinterpret_cast<const int *>(smem + L::moved);
        if constexpr (L::kOverlap) {
            int any = 0;
#pragma unroll
            for (int i = 0; i < kSW; i++)
                any |= mv[st * kSW + i];
            return any != 0;
        } else {
            return mv[st] != 0;
        }
    }

    // A warp's part in scoring a tile of the 8-warp walk: NT of its row group's n8 tiles (the
    // overlapped walk's Sᵀ warps take row_score_tile).
    template <int NT> __device__ void score_tile(int tile, int st, int par, const uint4 *qfrag)
    {
        static_assert(!L::kOverlap, "the overlapped walk scores by rows (row_score_tile)");
        if constexpr (NT > 0) {
            // The barrier sits outside the KS-templated halves so that both warps of the pair
            // meet at one instruction (compute-sanitizer's synccheck requires it).
            float acc[2][NT][4], s[NT][4];
            if (warp % 2)
                partial_scores<NT, 1>(st, qfrag, acc);
            else
                partial_scores<NT, 0>(st, qfrag, acc);
            named_barrier(L::kPairBar0 + sw() / 2, 2 * kWarp);
            if (warp % 2)
                full_scores<NT, 1>(acc, s);
            else
                full_scores<NT, 0>(acc, s);
            mask_scores<NT>(tile, st, s);
            softmax<NT>(s, par);
        } else {
            // A pair without rows (fewer n8 tiles than row groups) still meets at its barrier, so
            // every warp passes the same number of barriers (compute-sanitizer's racecheck counts
            // them per warp and reported hazards when they drifted apart).
            named_barrier(L::kPairBar0 + sw() / 2, 2 * kWarp);
        }
    }

    // Every tile of the piece through the two-stage pipeline.
    __device__ void run_tiles(const uint4 *qfrag)
    {
        const int lo = ps.pc.tile_lo, hi = ps.pc.tile_hi, key = tid / kLoaders;
        const int64_t slot = ps.key_slot(p, (int64_t)lo * kKeys + key);
        slot_next = lo + 1 < hi ? ps.key_slot(p, (int64_t)(lo + 1) * kKeys + key) : 0;
        if (tile_needs_mask(lo))
            load_mask(lo);
        issue_kv(lo, 0, slot);
        cp_async_commit();
        for (int tile = lo; tile < hi; tile++) {
            const int st = (tile - lo) & 1;
            cp_async_wait<0>();
            if (tile_needs_mask(tile))
                store_mask(st);
            block_sync(); // tile landed everywhere; the previous tile's readers are done
            if (tile + 1 < hi) {
                issue_kv(tile + 1, st ^ 1, slot_next);
                cp_async_commit();
                slot_next = tile + 2 < hi ? ps.key_slot(p, (int64_t)(tile + 2) * kKeys + key) : 0;
                if (tile_needs_mask(tile + 1))
                    load_mask(tile + 1);
            }
            if (warp < kSW) { // row groups hold kN8 / kGroups n8 tiles, rounded up or down
                if (nt == kNt)
                    score_tile<kNt>(tile, st, st, qfrag);
                else
                    score_tile<kN8 / kGroups>(tile, st, st, qfrag);
            } else if constexpr (kSW < kWarps) {
                // Warps without an Sᵀ role (three row groups) pass a barrier of their own, so that
                // every warp passes as many barriers a tile as a pair's warps do: with these
                // warps one short a tile, compute-sanitizer's racecheck reported hazards between
                // Pᵀ's writes and reads and on `more`, all of them across __syncthreads.
                named_barrier(1 + warp / 2, kWarps * kWarp - kSW * kWarp);
            }
            block_sync(); // Pᵀ and the rescale factors are complete
            accumulate(st, st, tile == lo);
            if (tid == 0)
                reinterpret_cast<int *>(smem + L::moved)[st ^ 1] = 0; // for the next tile (read after its barriers)
        }
        if (warp < kSW)
            finish_sums();
    }

    // ---- the overlapped walk (SmemOverlap): Oᵀ warps 0-7 copy the KV two tiles ahead (tile
    // t + 2's copies once they have read tile t's V, before its second key half's MMAs) and
    // accumulate tile t while the Sᵀ warps after them score tile t + 1. The roles run their own
    // code (each at its own register count) and meet only at mbarriers: a stage's `full`
    // completes when the 256 copying threads' copies have landed (cp.async.mbarrier.arrive.noinc);
    // `ready` (parity of the tile) when the 128 Sᵀ threads have written Pᵀ, corr and the moved
    // flags; `freed` when the 256 Oᵀ threads have read them; `sums` when the row sums are out;
    // `blk` is the walk's block barrier, every thread arriving and waiting. Each is arrived at and
    // waited on the same number of times a piece. Within a role, one aligned named barrier: the
    // Oᵀ warps' kOBar (each Sᵀ warp scores its own rows and meets no other).
    // Bits of `phase`: the parity each mbarrier's next completion will have, as this thread waits.
    enum : int { kFullBit = 0, kReadyBit = 8, kFreedBit = 10, kSumsBit = 12, kBlkBit = 13, kEmptyBit = 14 };
    __device__ unsigned bar_at(int off) const { return smem_u32(smem + off); }
    __device__ void bar_wait(int off, int bit)
    {
        mbar_wait(bar_at(off), (phase >> bit) & 1);
        phase ^= 1u << bit;
    }
    __device__ void wait_full(int st) { bar_wait(L::full + 8 * st, kFullBit + st); }
    // Before the overlapped walk, by one thread, with a block barrier after it.
    static __device__ void init_barriers(unsigned char *smem)
    {
        for (int st = 0; st < L::kStages; st++)
            mbar_init(smem_u32(smem + L::full + 8 * st), L::kCopiers);
        for (int par = 0; par < 2; par++) {
            mbar_init(smem_u32(smem + L::ready + 8 * par), kSW * kWarp);
            mbar_init(smem_u32(smem + L::freed + 8 * par), L::kOThreads);
        }
        mbar_init(smem_u32(smem + L::sums), kSW * kWarp);
        mbar_init(smem_u32(smem + L::blk), L::kThreads);
        if constexpr (L::kCopyWarp)
            for (int st = 0; st < L::kStages; st++)
                mbar_init(smem_u32(smem + L::empty + 8 * st), L::kOThreads);
    }
    static __device__ int next_stage(int st) { return st + 1 == L::kStages ? 0 : st + 1; }
    __device__ void copy_tile(int tile, int st, int64_t slot)
    {
        issue_kv(tile, st, slot);
        cp_async_mbar_arrive(bar_at(L::full + 8 * st));
    }

    // The overlapped walk's Sᵀ, split by rows: warp sw() scores its own n8 row tiles [j_lo,
    // j_lo + nt) against all 32 keys over all 576 dims, so its softmax is warp-local and nothing
    // crosses warps. s[mh][jj][e]: key 16·mh + 8·(e / 2) + g, row 8·(j_lo + jj) + 2·t + e % 2.
    template <int NT> __device__ void row_scores(int st, const uint4 *qfrag, float (&acc)[2][NT][4])
    {
        static_assert(!kQDirect, "the overlapped walk reads q's fragments from its copy");
        if constexpr (!L::kQSmem)
            score_dims<NT, 0, kChunks / 4>(st, qfrag, acc);
        else if constexpr (NT <= 2)
            row_scores_step_ahead<NT>(st, qfrag, acc); // two row tiles a warp: 64-row units
        else
            row_scores_ahead<NT>(st, qfrag, acc);
    }
    // row_scores in the large build (q in shared memory), each load issued half a double k-step
    // before its MMAs: K of (ds, e = 1) before the MMAs of (ds, 0), K of (ds + 1, 0) and q of
    // ds + 1 before those of (ds, 1). ptxas places score_dims' loads 4-5 instructions before
    // their MMAs whatever the source order (results/h200/NOTES.md, fifty-eighth), and the stamps
    // found the Sᵀ warps setting the tile period (3.7k cycles a tile against the Oᵀ warps' 1.4k,
    // sixty-first), so each group of loads is conditional on ahead(), a test ptxas cannot fold.
    // ptxas turns those branches into predicated loads (70 of the tile's 72 ldmatrix, 51 of its
    // 54 q loads, on sm_90a) and, unlike the plain ones, issues them well ahead: in its SASS a
    // load now comes a median 16 instructions before its first use. On an H100, 0.88-0.93 of the
    // time hot and cold at the four longest A/B records, the Sᵀ tile 3.1k cycles, still the
    // period (NOTES.md, sixty-first). A whole step ahead spilled inside the loop at 104 registers
    // and took 1.05-1.07; at 120 (the Oᵀ warps at 192) the loop kept 3 local accesses and ptxas
    // put the loads a median 2 instructions before their use, 1.10-1.18 at the longest records
    // (NOTES.md, seventieth); in the 99 KB build (q through L1) this order spilled there too (sm_120a:
    // 32 local accesses a tile), so that build keeps score_dims.
    template <int NT> __device__ void row_scores_ahead(int st, const uint4 *qfrag, float (&acc)[2][NT][4])
    {
        constexpr int kSteps = kChunks / 4; // double k-steps (32 dims): 18
        zero_scores(acc);
        const uint4 *qf = qfrag + (size_t)j_lo * kSteps * kWarp + lane;
        unsigned kb[4];
        k_lane_bases(st, kb);
        unsigned a[2][2][4]; // K of the step's two k16 halves: [e][mh]
        uint4 qv[2][NT];     // q of steps of each parity: [ds & 1]
        auto load_k = [&](int ds, int e) {
#pragma unroll
            for (int mh = 0; mh < 2; mh++)
                ldsm_k(a[e][mh], kb, 4 * ds + 2 * e, mh);
        };
        auto load_q = [&](int ds) {
#pragma unroll
            for (int jj = 0; jj < NT; jj++)
                qv[ds & 1][jj] = q_b(qf, q_own[0], jj, ds);
        };
        load_k(0, 0);
        load_q(0);
#pragma unroll
        for (int ds = 0; ds < kSteps; ds++) {
            const int b = ds & 1;
            if (ahead())
                load_k(ds, 1);
#pragma unroll
            for (int jj = 0; jj < NT; jj++)
#pragma unroll
                for (int mh = 0; mh < 2; mh++)
                    mma(acc[mh][jj], a[0][mh], qv[b][jj].x, qv[b][jj].y);
            if (ds + 1 < kSteps && ahead()) {
                load_k(ds + 1, 0);
                load_q(ds + 1);
            }
#pragma unroll
            for (int jj = 0; jj < NT; jj++)
#pragma unroll
                for (int mh = 0; mh < 2; mh++)
                    mma(acc[mh][jj], a[1][mh], qv[b][jj].z, qv[b][jj].w);
        }
    }
    // row_scores_ahead at two row tiles a warp (the 64-row build), a whole double k-step
    // ahead: the K and q of step ds + 1 are loaded before the MMAs of step ds, in registers of
    // the other parity. At three row tiles this spilled at 104 registers (see above); at two,
    // the fragments of two steps take 48 registers beside the 16 accumulators. Against
    // row_scores_ahead's half step, on an H100: 0.974-0.982 of the time at eagle64 hot,
    // 0.977-0.986 cold, geomean 0.997 over every config (NOTES.md, seventieth).
    template <int NT> __device__ void row_scores_step_ahead(int st, const uint4 *qfrag, float (&acc)[2][NT][4])
    {
        constexpr int kSteps = kChunks / 4; // double k-steps (32 dims): 18
        zero_scores(acc);
        const uint4 *qf = qfrag + (size_t)j_lo * kSteps * kWarp + lane;
        unsigned kb[4];
        k_lane_bases(st, kb);
        unsigned a[2][2][2][4]; // K of a step's two k16 halves: [ds & 1][e][mh]
        uint4 qv[2][NT];        // q: [ds & 1][jj]
        auto load_step = [&](int ds) {
#pragma unroll
            for (int e = 0; e < 2; e++)
#pragma unroll
                for (int mh = 0; mh < 2; mh++)
                    ldsm_k(a[ds & 1][e][mh], kb, 4 * ds + 2 * e, mh);
#pragma unroll
            for (int jj = 0; jj < NT; jj++)
                qv[ds & 1][jj] = q_b(qf, q_own[0], jj, ds);
        };
        load_step(0);
#pragma unroll
        for (int ds = 0; ds < kSteps; ds++) {
            const int b = ds & 1;
            if (ds + 1 < kSteps && ahead())
                load_step(ds + 1);
#pragma unroll
            for (int e = 0; e < 2; e++)
#pragma unroll
                for (int jj = 0; jj < NT; jj++)
#pragma unroll
                    for (int mh = 0; mh < 2; mh++)
                        mma(acc[mh][jj], a[b][e][mh], e ? qv[b][jj].z : qv[b][jj].x, e ? qv[b][jj].w : qv[b][jj].y);
        }
    }
    // True in every launch (heads >= 1), by an instruction neither compiler can fold, so the
    // loads that depend on it stay conditional (predicated in the SASS).
    __device__ __forceinline__ bool ahead() const
    {
        unsigned r;
        asm volatile("{\n\t.reg .pred q;\n\tsetp.gt.s32 q, %1, 0;\n\tselp.u32 %0, 1, 0, q;\n\t}" : "=r"(r) : "r"(p.heads));
        return r != 0;
    }
    // Hides keys past the request's end and, in tiles holding draft-token columns (or every
    // tile when the prefix is not promised visible), the tree mask's zeros, read from global
    // memory (the overlapped walk stages no mask).
    template <int NT> __device__ void row_mask(int tile, float (&s)[2][NT][4])
    {
        const int64_t k0 = (int64_t)tile * kKeys, keys = ps.keys;
        if (!tile_needs_mask(tile) && k0 + kKeys <= keys)
            return;
        const uint8_t *tok = smem + L::tok;
#pragma unroll
        for (int mh = 0; mh < 2; mh++)
#pragma unroll
            for (int jj = 0; jj < NT; jj++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int key = 16 * mh + 8 * (e / 2) + g, row = 8 * (j_lo + jj) + 2 * t + e % 2;
                    const bool vis = k0 + key < keys && (!tile_needs_mask(tile) || mask_byte(0, tok[row], k0, key) != 0);
                    s[mh][jj][e] = vis ? s[mh][jj][e] : -CUDART_INF_F;
                }
    }
    // softmax's lazy online softmax for rows this warp owns over all 32 keys: one vote a tile
    // (a warp-wide any), maxima reduced only in tiles where some row's score passed its
    // reference max by kLazy; corr (1 unless the row's max moved) is written every tile. The row
    // sums stay in registers (ls, a share a lane) until row_finish_sums; the moved word of this
    // warp and parity tells the Oᵀ warps whether to rescale.
    template <int NT> __device__ void row_softmax(float (&s)[2][NT][4], float (&ls)[kNt][2], int par)
    {
        float *rm = reinterpret_cast<float *>(smem + L::rm);
        float m[NT][2];
        bool up = false;
#pragma unroll
        for (int jj = 0; jj < NT; jj++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                m[jj][h] = rm[8 * (j_lo + jj) + 2 * t + h];
                const float mx = fmaxf(fmaxf(s[0][jj][h], s[0][jj][h + 2]), fmaxf(s[1][jj][h], s[1][jj][h + 2]));
                up |= mx > m[jj][h] + kLazy;
            }
        __syncwarp(); // every lane has read rm before lane g = 0 of a row may write it below
        const bool rescale = __any_sync(0xffffffffu, up);
        float c[NT][2];
#pragma unroll
        for (int jj = 0; jj < NT; jj++)
            c[jj][0] = c[jj][1] = 1.f;
        if (rescale) { // uniform across the warp
#pragma unroll
            for (int jj = 0; jj < NT; jj++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    float v = fmaxf(fmaxf(s[0][jj][h], s[0][jj][h + 2]), fmaxf(s[1][jj][h], s[1][jj][h + 2]));
                    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
                    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 8));
                    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 16));
                    const float mnew = fmaxf(m[jj][h], v);
                    if (mnew != m[jj][h]) {
                        c[jj][h] = exp2_ftz(m[jj][h] - mnew);
                        if (g == 0)
                            rm[8 * (j_lo + jj) + 2 * t + h] = mnew;
                        m[jj][h] = mnew;
                    }
                }
        }
        float *corr = reinterpret_cast<float *>(smem + L::corr_at(par));
        unsigned char *pt = smem + L::pt_at(par);
#pragma unroll
        for (int jj = 0; jj < NT; jj++) {
            const int row = 8 * (j_lo + jj) + 2 * t;
            const float mu0 = m[jj][0] == -CUDART_INF_F ? 0.f : m[jj][0];
            const float mu1 = m[jj][1] == -CUDART_INF_F ? 0.f : m[jj][1];
            float l0 = 0.f, l1 = 0.f;
#pragma unroll
            for (int mh = 0; mh < 2; mh++)
#pragma unroll
                for (int hk = 0; hk < 2; hk++) {
                    const float p0 = exp2_ftz(s[mh][jj][2 * hk] - mu0), p1 = exp2_ftz(s[mh][jj][2 * hk + 1] - mu1);
                    l0 += p0, l1 += p1;
                    *reinterpret_cast<unsigned *>(pt + (16 * mh + 8 * hk + g) * L::kPStride + 2 * row) = pack_bf16(p0, p1);
                }
            ls[jj][0] = ls[jj][0] * c[jj][0] + l0;
            ls[jj][1] = ls[jj][1] * c[jj][1] + l1;
            if (g == 0)
                *reinterpret_cast<float2 *>(corr + row) = make_float2(c[jj][0], c[jj][1]);
        }
        if (lane == 0)
            reinterpret_cast<int *>(smem + L::moved)[par * kSW + sw()] = rescale;
    }
    // One tile of the Sᵀ role: scores in the log2 domain, mask, softmax, Pᵀ out.
    template <int NT> __device__ void row_score_tile(int tile, int st, int par, const uint4 *qfrag, float (&ls)[kNt][2])
    {
        float s[2][NT][4];
        row_scores<NT>(st, qfrag, s);
        const float scale = p.sm_scale * kLog2e;
#pragma unroll
        for (int mh = 0; mh < 2; mh++)
#pragma unroll
            for (int jj = 0; jj < NT; jj++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    s[mh][jj][e] *= scale;
        row_mask<NT>(tile, s);
        row_softmax<NT>(s, ls, par);
    }
    // The piece's row sums: each row's lanes (one t, eight g) add their shares into rsum.
    __device__ void row_finish_sums(const float (&ls)[kNt][2])
    {
        float *rsum = reinterpret_cast<float *>(smem + L::rsum);
#pragma unroll
        for (int jj = 0; jj < kNt; jj++) {
            if (jj >= nt)
                break; // uniform across the warp
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float l = ls[jj][h];
                l += __shfl_xor_sync(0xffffffffu, l, 4);
                l += __shfl_xor_sync(0xffffffffu, l, 8);
                l += __shfl_xor_sync(0xffffffffu, l, 16);
                if (g == 0)
                    rsum[8 * (j_lo + jj) + 2 * t + h] = l;
            }
        }
    }

    // Oᵀ warps: the piece's copies and Oᵀ, then its o (or partial). The whole life of the
    // accumulators is inside this function, so the Sᵀ warps' code does not hold them.
    __device__ void accumulate_piece(const SchedWorkspace &w, PhaseStamps &stamps)
    {
        constexpr int S = L::kStages;
        const int lo = ps.pc.tile_lo, hi = ps.pc.tile_hi, key = tid / kLoaders;
        zero_o();
        if constexpr (!L::kCopyWarp) {
#pragma unroll
            for (int i = 0; i < S; i++)
                if (lo + i < hi)
                    copy_tile(lo + i, i, ps.key_slot(p, (int64_t)(lo + i) * kKeys + key));
            slot_next = lo + S < hi ? ps.key_slot(p, (int64_t)(lo + S) * kKeys + key) : 0;
        }
        for (int tile = lo, st = 0; tile < hi; tile++, st = next_stage(st)) {
            const int par = (tile - lo) & 1;
            wait_full(st);
            bar_wait(L::ready + 8 * par, kReadyBit + par); // Pᵀ, corr and the flags of the tile are out
            accumulate(st, par, tile == lo, [&] {
                if constexpr (L::kCopyWarp) {
                    if (tile + S < hi) // the copier refills the stage (Sᵀ read it before ready)
                        mbar_arrive(bar_at(L::empty + 8 * st));
                } else if (tile + S < hi) {
                    named_barrier(L::kOBar, L::kOThreads); // every Oᵀ warp has read the stage (Sᵀ: before ready)
                    copy_tile(tile + S, st, slot_next);
                    slot_next = tile + S + 1 < hi ? ps.key_slot(p, (int64_t)(tile + S + 1) * kKeys + key) : 0;
                }
            });
            if (tile + 2 < hi) // Sᵀ of tile + 2 may overwrite them
                mbar_arrive(bar_at(L::freed + 8 * par));
        }
        stamps.mark(PhaseStamps::kLoopEnd);
        bar_wait(L::sums, kSumsBit);
        if (ps.pc.direct)
            write_o();
        else
            write_partial_o(w);
    }

    // The copier warp (L::kCopyWarp): the piece's KV tiles, each into its stage once every Oᵀ
    // warp has read the tile before it there (`empty`); lane l looks up key l's slot a tile ahead.
    __device__ void copy_piece()
    {
        constexpr int S = L::kStages;
        const int lo = ps.pc.tile_lo, hi = ps.pc.tile_hi;
        int64_t slot = ps.key_slot(p, (int64_t)lo * kKeys + lane);
        for (int tile = lo, st = 0; tile < hi; tile++, st = next_stage(st)) {
            const int64_t next = tile + 1 < hi ? ps.key_slot(p, (int64_t)(tile + 1) * kKeys + lane) : 0;
            if (tile >= lo + S)
                bar_wait(L::empty + 8 * st, kEmptyBit + st);
            issue_kv_warp(tile, st, slot);
            cp_async_mbar_arrive(bar_at(L::full + 8 * st));
            slot = next;
        }
    }
    // One tile's copies by one warp: four keys an instruction, kLoaders (8) lanes a key, as
    // issue_kv lays them out; lane l holds key l's slot.
    __device__ void issue_kv_warp(int tile, int st, int64_t slot_of_lane)
    {
        static_assert(kLoaders == 8 && kKeys == 32, "a warp copies four keys an instruction");
#pragma unroll
        for (int k4 = 0; k4 < kKeys / 4; k4++) {
            const int key = 4 * k4 + lane / kLoaders;
            issue_key(tile, st, key, lane % kLoaders, __shfl_sync(0xffffffffu, slot_of_lane, key));
        }
    }

    // Sᵀ warps: the piece's scores and softmax, a tile ahead of Oᵀ, then its row sums.
    __device__ void score_piece(const uint4 *qfrag)
    {
        const int lo = ps.pc.tile_lo, hi = ps.pc.tile_hi;
        float ls[kNt][2];
#pragma unroll
        for (int jj = 0; jj < kNt; jj++)
            ls[jj][0] = ls[jj][1] = 0.f;
        for (int tile = lo, st = 0; tile < hi; tile++, st = next_stage(st)) {
            const int par = (tile - lo) & 1;
            if (tile >= lo + 2)
                bar_wait(L::freed + 8 * par, kFreedBit + par);
            wait_full(st);
            if constexpr (kN8 % kGroups == 0)
                row_score_tile<kNt>(tile, st, par, qfrag, ls); // every group holds kNt
            else if (nt == kNt)
                row_score_tile<kNt>(tile, st, par, qfrag, ls);
            else
                row_score_tile<kN8 / kGroups>(tile, st, par, qfrag, ls);
            mbar_arrive(bar_at(L::ready + 8 * par));
        }
        row_finish_sums(ls);
        mbar_arrive(bar_at(L::sums));
    }

    // An uncut unit: o = Oᵀ / l through movmatrix (8×8 transposes), lse per row.
    __device__ void write_output()
    {
        write_o();
        write_lse();
    }
    __device__ void write_o()
    {
        const float *rsum = reinterpret_cast<const float *>(smem + L::rsum);
#pragma unroll
        for (int j = 0; j < kN8; j++) {
            const int ra = 8 * j + 2 * t;
            const float la = rsum[ra], lb = rsum[ra + 1];
            const float ia = la > 0.f ? 1.f / la : 0.f, ib = lb > 0.f ? 1.f / lb : 0.f;
            uint16_t *dst = ps.o_row(p, 8 * j + g);
#pragma unroll
            for (int m = 0; m < kDimTiles; m++)
                store_o_m16n8(dst, kDimsPerWarp * warp + 16 * m, o[m][j][0], o[m][j][1], o[m][j][2], o[m][j][3], ia, ib);
        }
    }
    __device__ void write_lse()
    {
        const float *rsum = reinterpret_cast<const float *>(smem + L::rsum);
        const float *rm = reinterpret_cast<const float *>(smem + L::rm);
        const int nrows = ps.nrows;
        if (p.lse && tid < nrows)
            p.lse[ps.token(tid) * p.heads + ps.head(tid)] = row_lse(rm[tid], rsum[tid]);
    }

    // A cut unit: the unnormalised Oᵀ and the row stats into the piece's partial slot.
    __device__ void write_partial(const SchedWorkspace &w)
    {
        write_partial_o(w);
        write_partial_stats(w);
    }
    __device__ void write_partial_o(const SchedWorkspace &w)
    {
        const int nrows = ps.nrows, slot = ps.pc.slot;
        const int r0 = ps.slot_row0<kHalves>(kUnitRows);
        float *acc = w.acc + ((size_t)slot * kUnitRows + r0) * kDv;
#pragma unroll
        for (int j = 0; j < kN8; j++)
#pragma unroll
            for (int m = 0; m < kDimTiles; m++)
                store_partial_m16n8(acc, kDv, nrows, 8 * j + 2 * t, kDimsPerWarp * warp + 16 * m + g, o[m][j][0],
                                    o[m][j][1], o[m][j][2], o[m][j][3]);
    }
    __device__ void write_partial_stats(const SchedWorkspace &w)
    {
        const float *rsum = reinterpret_cast<const float *>(smem + L::rsum);
        const float *rm = reinterpret_cast<const float *>(smem + L::rm);
        const int nrows = ps.nrows, slot = ps.pc.slot;
        const int r0 = ps.slot_row0<kHalves>(kUnitRows);
        if (tid < nrows)
            w.ml[(size_t)slot * kUnitRows + r0 + tid] = make_float2(rm[tid], rsum[tid]);
    }
};

// One CTA's walk over its span of the cut (kHalves > 1: the span its group of kHalves CTAs
// shares, each taking kShare of every unit's rows), once the prefix of unit costs is in shared
// memory.
// One CTA's 8-warp walk over its span of the cut (kHalves > 1: the span its group of kHalves
// CTAs shares, each taking kShare of every unit's rows), once the prefix of unit costs is in
// shared memory. kPart: the block's other warps have left (onepass_rr_kernel).
// Where a piece's q copy goes (begin_piece): the layout's shared memory, or this CTA's slice
// of the workspace, read back through L1.
template <class L> __device__ __forceinline__ uint4 *q_fragments(const SchedWorkspace &w, unsigned char *smem)
{
    if constexpr (L::kQSmem)
        return reinterpret_cast<uint4 *>(smem + L::qf);
    return reinterpret_cast<uint4 *>(w.cta_scratch + (size_t)blockIdx.x * kQFragBytes);
}

template <int kN8, int kUnitN8 = kN8, int kHalves = 1, bool kQDirect = false, bool kPart = false, bool kQSmem = false>
__device__ __forceinline__ void walk(const vb_verify_params &p, void *ws, const SchedConfig &c, unsigned char *smem,
                                     int total)
{
    using Sched = Schedule<kKeys, kThreads, kHalves, kHalves>;
    using L = WalkLayout<kN8, kQSmem>;
    using Op = Onepass<kN8, kUnitN8, kHalves, kQDirect, L, kPart>;
    __shared__ Sched sched;
    __shared__ PieceState ps;
    __shared__ bool more; // written by thread 0 before a barrier, read by all after it
    bool going = false;   // thread 0's own copy
    if (threadIdx.x == 0)
        going = sched.start(p, c, reinterpret_cast<const int *>(smem), total);
    Op::sync8(); // the prefix array shares memory with the KV stages
    const SchedWorkspace w(ws, c, p.batch, kDv);
    uint4 *qfrag = q_fragments<L>(w, smem);
    Op op(p, smem, ps);
    PhaseStamps stamps;
    stamps.begin(threadIdx.x == 0);
    for (;;) {
        if (threadIdx.x == 0) {
            while (going && (going = sched.next(p, c, ps.pc))) {
                ps.set_unit(sched.req, Op::kUnitRows, c.heads);
                if (kHalves > 1 && !ps.take_share<kHalves>(Op::kShare))
                    continue;
                ps.set_tokens(c.heads);
                break;
            }
            more = going;
        }
        Op::sync8();
        if (!more)
            break;
        stamps.mark(PhaseStamps::kStart);
        op.begin_piece(qfrag);
        stamps.mark(PhaseStamps::kQCopied);
        op.run_tiles(qfrag);
        Op::sync8();
        stamps.mark(PhaseStamps::kLoopEnd);
        if (ps.pc.direct)
            op.write_output();
        else
            op.write_partial(w);
        if (ps.pc.plan_owner && threadIdx.x == 0)
            w.record_plan(ps.pc, c.row_tiles);
        stamps.mark(PhaseStamps::kWritten);
        Op::sync8(); // the next piece reuses every shared buffer
    }
    stamps.print();
}

// The overlapped walk of one role (kRole 1: the Oᵀ warps, 2: the Sᵀ warps) of a 72-row unit's
// one-CTA cut, at the roles' own register counts (onepass_rr_kernel). Both roles' copies share
// the schedule state (walk_shared: one type, one object), and meet at the mbarrier block_sync.
template <class Sched> struct WalkShared {
    Sched sched;
    PieceState ps;
    bool more;
};
template <class Sched> __device__ __forceinline__ WalkShared<Sched> &walk_shared()
{
    __shared__ WalkShared<Sched> sh;
    return sh;
}
template <int kN8, int kRole, class L = OverlapLayout<kN8>>
__device__ __forceinline__ void walk_overlap(const vb_verify_params &p, void *ws, const SchedConfig &c,
                                             unsigned char *smem, int total)
{
    using Sched = Schedule<kKeys, L::kThreads>;
    using Op = Onepass<kN8, kN8, 1, false, L>;
    WalkShared<Sched> &sh = walk_shared<Sched>();
    Sched &sched = sh.sched;
    PieceState &ps = sh.ps;
    bool going = false; // thread 0's own copy
    Op op(p, smem, ps);
    if (threadIdx.x == 0)
        going = sched.start(p, c, reinterpret_cast<const int *>(smem), total);
    op.block_sync(); // the prefix array shares memory with the KV stages
    const SchedWorkspace w(ws, c, p.batch, kDv);
    uint4 *qfrag = q_fragments<L>(w, smem);
    PhaseStamps stamps; // thread 0, an Oᵀ thread: the loop's end is where its warps finish
    stamps.begin(kRole == 1 && threadIdx.x == 0);
    for (;;) {
        if (threadIdx.x == 0) {
            if (going && (going = sched.next(p, c, ps.pc))) {
                ps.set_unit(sched.req, Op::kUnitRows, c.heads);
                ps.set_tokens(c.heads);
            }
            sh.more = going;
        }
        op.block_sync();
        if (!sh.more)
            break;
        stamps.mark(PhaseStamps::kStart);
        op.begin_piece(qfrag);
        stamps.mark(PhaseStamps::kQCopied);
        if constexpr (kRole == 1)
            op.accumulate_piece(w, stamps);
        else if (L::kCopyWarp && op.warp == L::kCopyWarp0)
            op.copy_piece();
        else
            op.score_piece(qfrag);
        op.block_sync();
        if (ps.pc.direct)
            op.write_lse();
        else
            op.write_partial_stats(w);
        if (ps.pc.plan_owner && threadIdx.x == 0)
            w.record_plan(ps.pc, c.row_tiles);
        stamps.mark(PhaseStamps::kWritten);
        op.block_sync(); // the next piece reuses every shared buffer
    }
    stamps.print();
}

// Short launches put a 72-row unit on several CTAs, each computing a share of its rows over
// the group's span, which is as many times longer: less q copy, Sᵀ, softmax, Oᵀ and partial per
// CTA and tile, but every KV tile read by each CTA of the group (all but the first from L2).
// When the one-CTA cut would give every CTA at most kQuadSpan positions (c0 and tiles), four
// CTAs a unit (18 rows each, 3 n8 tiles: 24, the last 6 repeat a row); at most kPairSpan, two
// (36 rows each, 5 n8 tiles: 40). Builds that took quads or pairs at every span, A/B against
// the one-CTA cut (results/h200/NOTES.md, twenty-fifth; span in parentheses): bs 1 × 512 (1)
// 0.674 and 0.819, bs 8 × 512 (2) 0.833 and 0.852, bs 8 × 4096 (9) 1.31 and 1.08, bs 8 × 23k
// (44) 1.92 and 1.38. A sweep of quads up to span 3 and pairs up to 5 (same NOTES): bs 8 × 1024
// (3, quads) 0.928, bs 8 × 2048 (5, pairs) 0.986, bs 1 × 32k (8) and longer 0.988-0.995. Those
// bounds lost 5% on a short launch holding one long request (`graph-bucket16`'s batch3, span 3)
// and on eight row tiles a request (`paths-heads64-eight-row-tiles`, span 5); quads up to 2 and
// pairs up to 4, against them (NOTES.md, twenty-sixth; 17 records, geomean 0.985): batch3
// 0.914, the 16-request bucket (span 3) 0.915, eight row tiles 0.968, bs 8 × 1024 (now pairs)
// 0.977, bs 8 × 2048 (now one CTA) 1.014. When the cut's positions (at kC0 a unit) are at most half
// the CTAs (bs 1 × 512: 23, bs 8 × 21: 56; not bs 1 × 2048: 71), the quads read q directly
// (kQDirect).
// That test sits inside the quads' branch: as a branch of its own before it, ptxas laid the
// direct walk out first and the one-CTA walk 40 KB later, and the one-CTA launches ran 2-6%
// slower (NOTES.md, twenty-eighth). As it is, A/B against the copy alone (33 records): geomean
// 0.992, bs 1 × 512 15.6 → 14.8 µs, bs 1 × 1 and bs 8 × 21 0.92, the copy quads and the pairs
// 1-2.5% slower (their code now lies after the direct walk's).
// Units of 40-64 rows (kMinGroupN8 n8 tiles and up) take the direct quads alone, a quarter of
// their rows a CTA in ceil(n8 / 4) n8 tiles. A/B against the one-CTA walk alone (NOTES.md,
// thirtieth; 42 records, geomean 0.913): at 4 heads (36 rows, a 40-row unit) bs 1 × 1 16.5 →
// 11.8 µs, bs 1 × 512 17.8 → 13.6, and 48-64-row chains at 8 heads 0.63-0.73 at their 1- and
// 512-token launches; the one-CTA walk of these units 2% slower (its code now lies after the
// quads'). A first build that also gave them the copy quads and the pairs lost at span 2 (bs 1
// × 4096 1.076, bs 8 × 512 1.057, the two-row-tile `mask-hidden-heads16` 1.098): a CTA of a
// 40-row unit computes 5 n8 tiles alone, against 9 at 72 rows, so four times the tiles buy
// less. Units of up to 32 rows keep the one-CTA walk.
constexpr int kMinGroupN8 = 5;
constexpr int kQuadSpan = 2, kPairSpan = 4;

// The n8 row tiles a CTA of a quad or a pair computes of a unit of unit_n8.
__host__ __device__ constexpr int quad_n8(int unit_n8) { return (unit_n8 + 3) / 4; }
__host__ __device__ constexpr int pair_n8(int unit_n8) { return (unit_n8 + 1) / 2; }

// The 8-warp walks of a launch, once the prefix of unit costs is in shared memory. kPart: the
// block has other warps, which have left (onepass_rr_kernel).
template <int kN8, bool kPart = false, bool kQSmem = false>
__device__ __forceinline__ void walks(const vb_verify_params &p, void *ws, const SchedConfig &c, unsigned char *smem,
                                      int total)
{
    // The direct quads' bound counts positions at kC0 a unit, whatever the entry's c0: counted
    // at mla_onepass_ws's 8, bs 8 × 1 (8 × 9 = 72 positions against 56) took the copy quads and
    // ran 1.38-1.43x as long (H100, results/h200/NOTES.md, sixty-seventh). p.batch * c.row_tiles
    // bounds the units from above: a ragged launch may count fewer positions than it holds.
    const int direct_total = total - (c.c0 - kC0) * p.batch * c.row_tiles;
    if constexpr (kN8 == kMaxN8) {
        const int span = (total + c.grid - 1) / c.grid;
        if (span <= kQuadSpan) {
            if (2 * direct_total <= c.grid)
                walk<quad_n8(kN8), kN8, 4, true, kPart>(p, ws, c, smem, total);
            else
                walk<quad_n8(kN8), kN8, 4, false, kPart, kQSmem>(p, ws, c, smem, total);
            return;
        }
        if (span <= kPairSpan) {
            walk<pair_n8(kN8), kN8, 2, false, kPart, kQSmem>(p, ws, c, smem, total);
            return;
        }
    } else if constexpr (kN8 >= kMinGroupN8) {
        if (2 * direct_total <= c.grid) { // span 1: the direct quads alone
            walk<quad_n8(kN8), kN8, 4, true, kPart>(p, ws, c, smem, total);
            return;
        }
    }
    walk<kN8, kN8, 1, false, kPart, kQSmem>(p, ws, c, smem, total);
}

template <int kN8>
__global__ void __launch_bounds__(kThreads, 1) onepass_kernel(vb_verify_params p, void *ws, SchedConfig c)
{
    extern __shared__ __align__(128) unsigned char smem[];
    static_assert(4 * (kMaxBatch + 1) <= Smem<kN8>::pt, "the prefix array fits in the KV stages of every layout");
    const int total = Schedule<kKeys, kThreads>::start_positions(p, c, reinterpret_cast<int *>(smem));
    walks<kN8>(p, ws, c, smem, total);
}

// ---- host side ------------------------------------------------------------------------------

// Rows per unit for requests of up to max_rows rows: the fewest n8 tiles in total over the
// fewest row tiles, at most kMaxN8 each (512 rows: 8 tiles of 64, not 8 of 72).
void choose_rows(int64_t max_rows, int &n8, int &tiles)
{
    const int64_t n8_total = (max_rows + 7) / 8;
    tiles = (int)((n8_total + kMaxN8 - 1) / kMaxN8);
    n8 = (int)((n8_total + tiles - 1) / tiles);
    if (n8 < 1)
        n8 = 1;
}

// kPieceCost: the schedule's c0 for the entry (kC0 for mla_onepass).
template <int kPieceCost> SchedConfig config_for(const vb_verify_params &lim)
{
    int n8 = 1, tiles = 1;
    choose_rows((int64_t)lim.max_draft * lim.heads, n8, tiles);
    return sched_config(lim, 8 * n8, tiles, kPieceCost, kMinSpan, kKeys * kDqk * 2);
}

// Kernel attributes are host-side settings, not stream work: allowed while a capture is open.
// The carveout asks for no more shared memory than the kernel uses, leaving L1 for q.
template <class K> cudaError_t set_attributes(K kernel, int bytes, bool &set)
{
    if (set)
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxL1);
    set = e == cudaSuccess;
    return e;
}

template <int kPieceCost> size_t workspace_bytes(const vb_verify_params *lim)
{
    const SchedConfig c = config_for<kPieceCost>(*lim);
    return SchedWorkspace::bytes(c, lim->batch, kDv, kQFragBytes);
}

int unsupported(const vb_verify_params *p, char *why, size_t n)
{
    if (unsupported_mla_rows(p, kDqk, kDv, kMaxBatch, why, n))
        return 1;
    if (smem_exceeds_optin(Smem<kMaxN8>::bytes, why, n))
        return 1;
    return 0;
}

// The 8-warp kernel's launch (the main launch alone; launch_rows adds the combine).
template <int kN8> cudaError_t launch_onepass_kernel(const vb_verify_params &p, void *ws, const SchedConfig &c,
                                                     cudaStream_t stream)
{
    static bool set = false;
    constexpr int bytes = Smem<kN8>::bytes;
    if (cudaError_t e = set_attributes(onepass_kernel<kN8>, bytes, set))
        return e;
    onepass_kernel<kN8><<<c.grid, kThreads, bytes, stream>>>(p, ws, c);
    return cudaGetLastError();
}

// A launch of an entry: its configuration for the capture limits (piece cost kPieceCost), the
// main launch for the row count (main(std::integral_constant<int, n8>, config)), then the combine.
template <int kPieceCost, class Main>
cudaError_t launch_rows(const vb_verify_params *p, void *ws, cudaStream_t stream, const char *name, Main main)
{
    if (cudaError_t e = check_scheduled_launch(*p, ws, name))
        return e;
    if ((int64_t)p->max_tokens * p->heads == 0)
        return cudaSuccess;
    const SchedConfig c = config_for<kPieceCost>(*p);
    cudaError_t e;
    switch (c.rows / 8) {
    case 1: e = main(std::integral_constant<int, 1>(), c); break;
    case 2: e = main(std::integral_constant<int, 2>(), c); break;
    case 3: e = main(std::integral_constant<int, 3>(), c); break;
    case 4: e = main(std::integral_constant<int, 4>(), c); break;
    case 5: e = main(std::integral_constant<int, 5>(), c); break;
    case 6: e = main(std::integral_constant<int, 6>(), c); break;
    case 7: e = main(std::integral_constant<int, 7>(), c); break;
    case 8: e = main(std::integral_constant<int, 8>(), c); break;
    default: e = main(std::integral_constant<int, 9>(), c); break;
    }
    if (e != cudaSuccess)
        return e;
    return launch_combine<kDv>(*p, ws, c, stream);
}

} // namespace
