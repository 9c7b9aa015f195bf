// mla_wgmma: the Hopper verify kernel. Same work split as mla_onepass (one CTA holds every
// row of a request against a slice of its KV; mla_schedule.cuh cuts the batch on the device
// and merges cut units), but built on warpgroup MMAs (wgmma, sm_90a), four warpgroups with
// one job each (a producer that gathers KV rows, a scorer, two value warpgroups) and 222 KB of
// shared memory. Built for sm_90a only (meson.build); the registry reports it unsupported on
// any other GPU.
//
// Layout (72 rows = 9 draft tokens × 8 heads; a unit is up to 72 rows of a request):
// - Keys on the MMA's M side, rows on N, as in mla_onepass: Sᵀ = K·Qᵀ (M = 64 keys of a tile,
//   N = rows, K = 576 dims) and Oᵀ = Vᵀ·Pᵀ (M = 64 value dims per MMA, N = 72 rows, K = 64
//   keys). 72 rows cost 72 columns; rows on M would pad them to 128.
// - Unit size from the launch's limits: when no request has more than 16 rows (max_draft ·
//   heads <= 16: a 9-token tree at 1 head, a 2-token chain at 8 heads), the host launches the
//   16-row instantiation, whose Sᵀ, softmax and Oᵀ run at N = 16 instead of padding the rows to
//   72 (an experiment build of 16-row units: `paths-heads1-empty-prefix` 21.2 → 16.9 µs, its
//   all-empty replay 18.6 → 14.1; results/h200/NOTES.md, 2026-12-01, tenth). Units of 16 rows
//   for more rows would re-read the KV once per 16 rows (bs 8 × 200k with 72-row requests:
//   nearly 3 times as long in that build), and choosing on the device by context length cost
//   the 72-row launches 1-6% (the same NOTES), so the choice is the host's, from the limits.
//   (The 72-row kernel's SASS stayed the single-size kernel's then: md5 of the normalised
//   cuobjdump -sass.) A third instantiation runs units of 64 rows when a request
//   needs no more of them than of 72 (33-64 rows; 512 rows as 8 units of 64 rather than 7 of 72
//   and one of 8 that costs a whole unit's MMAs): A/B, tree-eagle64 110.6 → 104.1 µs, 16-token
//   chain 47.2 → 44.6, 8-node EAGLE tree 35.8 → 34.0 (results/h200/NOTES.md, eleventh). A
//   fourth runs units of 32 rows when a request has 17-32 (2-3 heads of a 9-token tree).
// - Row pairs, for short launches only: the 72-row kernel also holds a 36-row instantiation
//   (N = 40) and picks it on the device when the cut is short (kPairSpan): CTAs 2g and 2g + 1
//   then take span g of a cut over half the grid, rows 0-35 and 36-71 of each unit, and write
//   disjoint rows of one partial slot, so the combine is unchanged. Halving a CTA's rows halves
//   the latency chain of a short piece (a tile's Sᵀ, softmax and Oᵀ, the partial's 147 KB at an
//   SM's store rate), but both CTAs read each KV tile (the second from L2) and each wgmma's A
//   operand from shared memory, and at long contexts the pair is up to 1.3× slower (kPairSpan).
//   The shortest launches go further, to quads: four CTAs a unit, 18 rows each (N = 24,
//   kQuadSpan), and when the cut is shorter still to octets: eight CTAs of 9 rows (N = 16,
//   kOctTotal). The 64- and 32-row kernels take quads and octets too, but not pairs (wgmma_kernel_64).
// - Shared memory holds every operand in the 128-byte-swizzled K-major layout wgmma reads:
//   q as 9 k-blocks of [72 rows][64 dims] (83 KB, loaded once per piece), Pᵀ as [72 rows]
//   [64 keys] (9 KB), and the KV as a ring of 16 k-blocks of [64 keys][64 dims] (8 KB each).
//   A tile of 64 keys is 9 consecutive ring blocks, one per k-block of 64 dims: k-block j is
//   the A operand of Sᵀ's k-steps 4j..4j+3 and, read M-major (the transpose bit), of Oᵀ's
//   value dims 64j..64j+63, so K and V share one copy. Two whole tiles (144 KB) do not fit
//   beside q. Units of 64 rows leave 10 KB more (q and Pᵀ at 64 rows), enough for a 17th
//   block (see kRing).
// - Warpgroup 0 produces: each warp copies 16 key rows of every tile, 4 rows a cp.async
//   instruction (8 lanes a row, one 16-byte chunk each, swizzled; see produce() for why 4);
//   every ring block has a "full" mbarrier (completed by the copies, cp.async.mbarrier.arrive) and
//   an "empty" one (8 arrivals: the scorer's 4 warps once it has read the block, and the 4 of
//   the value warpgroup that reads it; the rope block, which no value warpgroup reads, gets
//   both shares from the scorer). A page-size-1 row is 1152 contiguous bytes whose 16-byte
//   chunks land at swizzled addresses, so bulk copies (which move contiguous bytes) cannot
//   fill this layout.
// - Warpgroup 1 scores: Sᵀ for all 72 rows as one m64n72 chain over the tile's 9 k-blocks (each
//   K byte read from shared memory once: 1296 tensor clocks a tile, results/h200/wgmma_shapes.txt),
//   then the online softmax of every row, and Pᵀ with each row's rescale factor published on an
//   mbarrier. In the row pairs, quads and octets it then issues the next tile's Sᵀ at
//   once, so that its MMAs share the tensor pipe with this tile's Oᵀ; in the 72- and 16-row
//   kernels only once that Oᵀ is done (kScoresAfterValues: the 16-block ring's copies).
// - Warpgroups 2 and 3 hold Oᵀ, value dims 0-255 and 256-511 of all 72 rows (4 × 36 fp32
//   accumulators a thread): each waits for a tile's Pᵀ, rescales if any row's max moved (not at a
//   piece's first tile, where Oᵀ is zero), issues its 16 MMAs as one wgmma group per value block and
//   releases each block's slot as its group finishes. Before (results/h200/NOTES.md, 2026-12-01,
//   ninth), two consumer warpgroups split Sᵀ by k-steps, exchanged partial scores through shared
//   memory and each ran the softmax of its own rows, so that Sᵀ, the exchange, the softmax and Oᵀ
//   ran one after another. A/B against that (10 target and tree records, three machine starts):
//   geomean 0.985 for the first form, 0.986 with the per-block releases (bs 8 × 91k 271.7 → 264.2
//   µs, bs 8 × 200k 544.4 → 529.6), 0.994 with this register split (bs 8 × 91k 273.1 → 268.7, bs 8 ×
//   200k 548.6 → 535.4; bs 1 × 200k and bs 8 × 4096 0.6-1.1% slower). The scorer is now the limit:
//   its softmax on the chain costs 14% at bs 8 × 91k and 25% at eagle64 (a build without it).
// - Softmax: online, log2 domain, with a lazy reference max as in mla_onepass (a row's max
//   moves only when a score passes it by 2^16, see kLazy; the scorer's warps vote with
//   bar.red.or, and only then reduce maxima across warps and rescale). Each thread keeps its
//   share of the rows' sums, reduced once per piece.
// - Ring order: a tile enters the ring rope k-block first, then k-blocks 0-7; tile t+1's
//   position q (of 9) reuses the slot of tile t-1's position q + 2 (q < 7) or of tile t's
//   position q - 7 (16 slots; with the 17 of 64-row units, tile t-1's position q + 1 (q < 8) or
//   tile t's rope block, so no position waits for Oᵀ(t)). So tile t+1's first 7 positions are
//   copied once Oᵀ(t-1) is done,
//   which since the ninth session ran beside Sᵀ(t) instead of before it: the copies' exposed
//   latency grew (a build without copies: 18% faster at bs 8 × 91k, against 16% for the split
//   consumers; in the 16-block ring Oᵀ(t-1) runs before Sᵀ(t) again, kScoresAfterValues), and
//   putting those positions in L2 earlier made the long shapes slower: per line a tile ahead,
//   14-23% (bs 8 × 91k 272.0 → 324.1 µs); by bulk prefetch two tiles ahead, on the split
//   consumers, 8-18% (results/h200/NOTES.md, 2026-12-01, ninth).
// - The last two positions of a tile are copied only when the previous tile frees their slots,
//   and their copies' latency showed: the producer puts their lines in L2 (prefetch.L2) when it
//   starts the tile, about a tile before it copies them. A/B when it came in (results/h200/
//   NOTES.md, 2026-12-01, sixth): bs 8 × 200k 568.9 → 547.6 µs, eagle64 120.6 → 116.4, bs 8 ×
//   91k 279.5 → 275.6.
// - The KV copies carry an L2 evict-first policy (a unit reads each line once): without it the
//   KV stream evicted the dirty partial lines written for the combine, and the main launch wrote
//   19.3 MB to DRAM at bs 8 × 4096 (2.4 MB with it) and 24.1 MB at bs 8 × 23k (15.0 MB; Nsight
//   Compute, dram__bytes_write.sum). A/B (results/h200/NOTES.md, 2026-12-01, eighth): bs 8 × 4096
//   38.1 → 36.7 µs, bs 8 × 23k 91.5 → 88.6, bs 32 × 4k 74.1 → 71.4, bs 1 × 200k 97.8 → 96.4,
//   eagle64 117.2 → 116.0; bs 8 × 91k and 200k unchanged. A request's row tiles (eagle64's 8)
//   read the same lines, but their pieces reach them at different times, so those reads mostly
//   come from DRAM (223-231 MB for 37.7 MB of KV at eagle64).
// - Units of 64 rows on one CTA (the 64-row kernel's long launches) put the rows on M instead:
//   two consumer warpgroups take turns owning a tile's S = Q·Kᵀ and softmax, and each keeps
//   half of O = P·V (RowsOnM, below). Same ring, producer, schedule and partials.
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
constexpr int kMaxRows = 72, kMidRows = 64, kSmallRows = 32, kFewRows = 16; // rows per unit: see config_for
// The kinds of unit the kernels' templates are built for: a unit's rows (the cut's and the
// partial slots') and the CTAs that share it (halves), each computing `share` of its rows at
// N = n, the share rounded up to a multiple of 8 (the N of its Sᵀ and Oᵀ MMAs). Besides its own
// units the 72-row kernel runs them on a CTA pair (36 rows a CTA, N = 40), a quad (18, N = 24)
// or an octet (9, N = 16) when a launch is short (kPairSpan, kQuadSpan, kOctTotal), the 64-row
// kernel on a quad (16 rows a CTA, N = 16) or an octet (8, N = 8), and the 32-row kernel on a
// quad (8, N = 8) or an octet (4, N = 8).
enum class Unit { Rows72, Rows64, Rows32, Rows16, Pair72, Quad72, Oct72, Quad64, Oct64, Quad32, Oct32 };
template <Unit kU> struct UnitOf {
    static constexpr bool mid = kU == Unit::Rows64 || kU == Unit::Quad64 || kU == Unit::Oct64;
    static constexpr bool small = kU == Unit::Rows32 || kU == Unit::Quad32 || kU == Unit::Oct32;
    static constexpr int rows = mid ? kMidRows : small ? kSmallRows : kU == Unit::Rows16 ? kFewRows : kMaxRows;
    static constexpr bool quad = kU == Unit::Quad72 || kU == Unit::Quad64 || kU == Unit::Quad32;
    static constexpr bool octet = kU == Unit::Oct72 || kU == Unit::Oct64 || kU == Unit::Oct32;
    static constexpr int halves = kU == Unit::Pair72 ? 2 : quad ? 4 : octet ? 8 : 1;
    static constexpr int share = rows / halves;
    static constexpr int n = (share + 7) / 8 * 8;
};
// KV ring, in k-blocks, per unit size. 16 at 72 rows (what fits beside q), where tile t+1's
// last position reuses the slot of tile t's first value block, so Sᵀ(t+1) waits for Oᵀ(t)'s
// first group and that copy. At 64 rows q and Pᵀ are 10 KB smaller and a 17th block fits:
// tile t+1's nine positions reuse tile t-1's eight value blocks and tile t's rope block, and no
// Sᵀ waits for the Oᵀ beside it. A/B in two machine starts (results/h200/NOTES.md, twelfth):
// tree-eagle64 104.4 → 100.7 and 104.7 → 100.9 µs, 16-token chain 0.962 / 0.961, 8-node EAGLE
// tree 0.976 / 0.987. The 72- and 16-row kernels' SASS is unchanged (md5). A row pair's CTA
// holds 40 rows of q (46 KB) and fits 21 blocks: tile t+1's positions reuse tile t-1's (q >= 3)
// and t-2's, so neither its Sᵀ nor its copies wait for tile t (no prefetch to L2 needed); a
// quad's CTA (24 rows of q) keeps the same 21, and so does a 32-row unit (37 KB of q): with its
// one-CTA walk alone, against the 64-row kernel, geomean 0.982 over 20 records (16 at 2 heads)
// against 0.998 with 16 blocks (results/h200/NOTES.md, twenty-ninth).
template <Unit kU>
constexpr int kRing = UnitOf<kU>::halves > 1 || kU == Unit::Rows32 ? 21 : kU == Unit::Rows64 ? 17 : 16;
// A tile's k-blocks enter the ring rope block first (position 0: dims 512-575, which only Sᵀ
// reads), then dims 0-511 (position 1 + b: block b). In the 16-block ring tile t+1's position
// q >= 7 reuses the slot of tile t's position q - 7: position 7 reuses the rope block's, free
// once Sᵀ(t) is done, and position 8 the first value block's, free once its Oᵀ MMAs (committed
// apart) are done; in the 17-block ring only position 8 reuses tile t's, the rope block's.
__host__ __device__ constexpr int block_at(int pos) { return (pos + kBlocks - 1) % kBlocks; }
__host__ __device__ constexpr int pos_of(int block) { return (block + 1) % kBlocks; }
constexpr int kBlockBytes = kKeys * 128;        // one KV k-block: 64 keys × 128 B
template <Unit kU> constexpr int kQBlockBytes = UnitOf<kU>::n * 128; // one q (or Pᵀ) k-block: rows × 128 B
constexpr int kThreads = 4 * 128;               // producer, scorer, two value warpgroups
// setmaxnreg moves registers between the warpgroups of a CTA: an increase is served only by
// what the others release out of the registers the CTA was launched with (ptxas's count under
// __launch_bounds__(kThreads, 1): 128 a thread, 65,536 in all), so 128 · (producer + scorer) +
// 256 · value must fit in that, or the value warpgroups wait forever. unsupported() checks it
// against the built kernel. The value warpgroups hold Oᵀ (144 accumulators); the scorer a whole
// Sᵀ chain (36) and its rows' sums and softmax. 48 / 112 / 176 hands out all 65,536. When the
// producer went from 40 to 48 (4563dc8), ptxas's spills went from 76 / 116 to 52 / 76 B in the
// 72-row kernel, 36 / 52 to 28 / 36 in the 64-row one and 16 / 24 to none in the 16-row one; at
// 48 they sat in the schedule walk, the per-piece code and the head of the producer's tile loop,
// none in the scorer's or the value warpgroups' tile loops (nvdisasm's line info), where at 40
// the producer reloaded inside its tile loop. 48 measured 0.982 of 40's time (A/B, 10 records,
// 0.946-0.996; the all-empty replay of paths-heads1-empty-prefix 13.1 → 12.4 µs; results/h200/
// NOTES.md, twentieth). The kernels have since gained walks and spill more (today's counts:
// results/resources.md). 120 for the scorer spilled 56 / 92 B with a reload inside its Sᵀ
// chain, and 168 for the value warpgroups 628 / 772 B.
constexpr int kProducerRegs = 48, kScorerRegs = 112, kValueRegs = 176;
// The order of a tile's MMAs in the 16-block ring (72- and 16-row units): the scorer issues
// Sᵀ(t+1) only once Oᵀ(t) is done, not beside it. Tile t+2's first 7 positions reuse the
// slots Oᵀ(t) reads, and the tensor pipe shares itself between warpgroups whatever the issue
// order (wgmma_order.txt), so beside Sᵀ(t+1) Oᵀ(t) ended with it, and those copies went out
// only a softmax before Sᵀ(t+2) needed them; after Oᵀ(t) alone they go out a whole Sᵀ and
// softmax earlier. A/B (3 rounds, 12 records, results/h200/NOTES.md, twenty-first): geomean
// 0.989, bs 8 × 91k 257.5 → 254.0 µs, bs 8 × 200k 517.3 → 510.4, bs 1 × 200k 93.0 → 91.3, bs 8 ×
// 23k 84.9 → 83.5. The 64-row kernel's 17-block ring and the row pairs' 21 measured slower with
// it (eagle64 1.015, bs 8 × 4096 1.023, one A/B of 2 rounds), so they issued Sᵀ beside Oᵀ (the
// 64-row units on one CTA have since moved to rows on M, RowsOnM).
template <Unit kU> constexpr bool kScoresAfterValues = kRing<kU> == 16;
constexpr int kMaxBatch = 16384;                // the schedule's prefix array lives in the ring
// A row's reference max m moves only when a score passes it by kLazy (log2 units), so P =
// 2^(s - m) < 2^kLazy: bf16 P and the fp32 sums and Oᵀ hold that with room to spare (their range
// ends at 2^128). Every move costs its tile the scorer's cross-warp max reduction and both value
// warpgroups' rescale of Oᵀ. At 8 (this kernel's and mla_onepass's value before), the moves
// after a piece's first tile cost 2-7% on the harness's scores; A/B 8 → 16 (results/h200/
// NOTES.md, twenty-second): bs 1 × 200k 91.2 → 85.9 µs, bs 8 × 23k 82.7 → 80.1, bs 8 × 91k
// 252.8 → 245.6, eagle64 97.9 → 95.4; 32 measured the same.
constexpr float kLazy = 16.f;
#ifndef VB_WGMMA_FENCE_COPIES
#define VB_WGMMA_FENCE_COPIES 0
#endif
// A proxy fence after the KV copies land (see await_blocks); meson -Dwgmma_fence_copies=true.
constexpr bool kFenceCopies = VB_WGMMA_FENCE_COPIES != 0;
// Schedule: a piece's fixed cost (q, the pipeline's fill, the partial and its merge) and the
// smallest span, in tiles. c0 = 3 against 1 (results/h200/NOTES.md): bs 8 × 4096 62.0 →
// 55.9 µs, bs 32 × 4k 120 → 116, bs 1 × 4096 40.6 → 37.8; no change at bs 1 × 512, bs 1 × 200k.
constexpr int kC0 = 3, kMinSpan = 1;

// Barrier ids (0 is __syncthreads): the scorer; each value warpgroup; the producer. Between
// warpgroups only mbarriers: compute-sanitizer's synccheck reports a named barrier that the
// warpgroups reach from different instructions.
constexpr int kBarScorer = 1, kBarValue = 2, kBarProducer = 4;

// Shared memory for units of kind kU (q, Pᵀ and the row state at kN rows), from a 1024-byte
// aligned base (the swizzle atoms need it).
template <Unit kU> struct Smem {
    static constexpr int kN = UnitOf<kU>::n;
    static constexpr int q = 0;                                   // [9 k-blocks][kN rows][128 B]
    static constexpr int p = q + kBlocks * kQBlockBytes<kU>;      // [kN rows][128 B] Pᵀ
    static constexpr int kv = p + kQBlockBytes<kU>;               // [kRing][64 keys][128 B]
    static constexpr int bars = kv + kRing<kU> * kBlockBytes;     // u64 full[kRing], empty[kRing], qfull, qempty,
                                                                  // pfree, pready, sums, written
    static constexpr int rm = bars + (2 * kRing<kU> + 6) * 8;     // [kN] reference max of each row
    static constexpr int rsum = rm + kN * 4;                      // [kN] row sums at the end of a piece
    static constexpr int corr = rsum + kN * 4;                    // [2][kN] rescale of a tile's rows
    static constexpr int moved = corr + 2 * kN * 4;               // [2] int: a tile's rows moved
    static constexpr int red = moved + 16;                        // [4 warps][kN] cross-warp reductions
    static constexpr int mrow = red + 4 * kN * 4;                 // [kN] int64: each row's mask row, from mask0
    static constexpr int bytes = mrow + kN * 8;
    static constexpr int alloc = bytes + 1024;                    // room to align the base
};
template <Unit kU> constexpr bool smem_fits()
{
    using S = Smem<kU>;
    static_assert(S::alloc <= 227 * 1024, "sm_90's 227 KB per block");
    static_assert(S::p % 1024 == 0 && S::kv % 1024 == 0, "swizzle atoms are 1024-byte aligned");
    static_assert(S::mrow % 8 == 0, "int64 mask rows");
    return true;
}
static_assert(smem_fits<Unit::Rows72>() && smem_fits<Unit::Rows64>() && smem_fits<Unit::Rows32>() &&
                  smem_fits<Unit::Rows16>() &&
                  smem_fits<Unit::Pair72>() && smem_fits<Unit::Quad72>() && smem_fits<Unit::Oct72>() &&
                  smem_fits<Unit::Quad64>() && smem_fits<Unit::Oct64>() && smem_fits<Unit::Quad32>() &&
                  smem_fits<Unit::Oct32>(),
              "every unit size's layout");
constexpr int max3(int a, int b, int c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }
// Every kernel's allocation: the largest layout of the 72-row kernel's walks.
constexpr int kSmemAlloc = max3(Smem<Unit::Rows72>::alloc, Smem<Unit::Pair72>::alloc, Smem<Unit::Quad72>::alloc);
static_assert(Smem<Unit::Oct72>::alloc <= kSmemAlloc && Smem<Unit::Quad64>::alloc <= kSmemAlloc &&
                  Smem<Unit::Oct64>::alloc <= kSmemAlloc && Smem<Unit::Rows32>::alloc <= kSmemAlloc,
              "the short walks' layouts fit every kernel's allocation");

// The 64-row kernel's one-CTA walk aligns a uniform batch's units to its spans (cut_span): at
// eagle64 a request's 8 units then read each KV tile at about the same time, the later ones from
// L2. The other walks' cuts never align (one unit a request, or spans too short), so their code
// keeps the plain span.
template <Unit kU>
using Sched = Schedule<kKeys, kThreads, static_cast<int>(kU), UnitOf<kU>::halves, kU == Unit::Rows64>;

// What a warpgroup knows about its current piece (written by its first thread).
struct PieceState : PieceRows {
    bool more;
};

// Where a CTA's rows of its unit start in the unit's partial slot.
template <Unit kU> __device__ __forceinline__ int slot_row0(const PieceState &ps)
{
    return ps.slot_row0<UnitOf<kU>::halves>(UnitOf<kU>::rows);
}

template <Unit kU> struct Barriers { // for kRing<kU> blocks
    static constexpr int kR = kRing<kU>;
    unsigned base;
    __device__ unsigned full(int s) const { return base + 8 * s; }
    __device__ unsigned empty(int s) const { return base + 8 * (kR + s); }
    __device__ unsigned qfull() const { return base + 8 * (2 * kR); }
    __device__ unsigned qempty() const { return base + 8 * (2 * kR + 1); }
    __device__ unsigned pfree() const { return base + 8 * (2 * kR + 2); }  // both Oᵀ done with Pᵀ
    __device__ unsigned pready() const { return base + 8 * (2 * kR + 3); } // Pᵀ and its rescale published
    __device__ unsigned sums() const { return base + 8 * (2 * kR + 4); }   // the piece's row sums in rsum
    __device__ unsigned written() const { return base + 8 * (2 * kR + 5); } // the value warpgroups done with rsum
    // Rows on M (RowsOnM): consumer `owner`'s P and row statistics published; pfree's and
    // pready's words, which that walk does not use otherwise.
    __device__ unsigned handoff(int owner) const { return base + 8 * (2 * kR + 2 + owner); }
};

// The next piece of a warpgroup's walk into ps; every thread of the warpgroup returns it.
template <Unit kU>
__device__ bool next_piece(const vb_verify_params &p, const SchedConfig &c, Sched<kU> &sched, PieceState &ps,
                           bool &going, int bar)
{
    using U = UnitOf<kU>;
    if (threadIdx.x % 128 == 0) {
        while (going && (going = sched.next(p, c, ps.pc))) {
            ps.set_unit(sched.req, U::rows, c.heads);
            if (ps.take_share<U::halves>(U::share)) // else the unit's rows all fall in another CTA's share
                break;
        }
        ps.more = going;
    }
    named_barrier(bar, 128);
    return ps.more;
}

// ---- producer warpgroup ----------------------------------------------------------------------

// The piece's q into its buffer once the scorer is done with the previous piece's. Eight
// threads per row, one 16-byte chunk of each of its 9 k-blocks each: a warp copies 4 rows'
// 128-byte lines whole, and a row's address (two divisions, 64-bit products) is worked out once
// per row, not per chunk. Rows past the unit are zero-filled, not read (9 of 72 rows are live
// at one head).
template <Unit kU>
__device__ void copy_q(const vb_verify_params &p, const PieceState &ps, const Barriers<kU> &bar, unsigned qs,
                       uint32_t pieces)
{
    constexpr int kN = UnitOf<kU>::n;
    const int tid = threadIdx.x, ch = tid % 8;
    mbar_wait(bar.qempty(), (pieces & 1) ^ 1);
    for (int r = tid / 8; r < kN; r += 128 / 8) {
        const unsigned lr = ps.row(r), t = ps.heads.div(lr);
        const bool live = r < ps.nrows;
        const uint16_t *q = p.q + (ps.rq.q0 + t) * p.stride_q_token + ps.heads.mod(lr, t) * p.stride_q_head + 8 * ch;
        const unsigned dst = qs + r * 128 + 16 * (ch ^ (r & 7));
#pragma unroll
        for (int b = 0; b < kBlocks; b++)
            cp_async16(dst + b * kQBlockBytes<kU>, q + 64 * b, live);
    }
    cp_async_mbar_arrive(bar.qfull());
}

// Each warp copies 16 key rows of every tile: a copy instruction covers the 128-byte lines of
// 4 rows in one k-block (8 lanes a row, one 16-byte chunk each). Rows are at random places in
// a page-size-1 pool, and on the H200 a warp instruction touching 16 rows (two lanes a row, as
// before) gathered 1.6-1.8 TB/s from 0.8-1.8 GB pools, against 4.3-4.4 TB/s for 4, 2 or 1 rows
// an instruction (results/h200/NOTES.md, the gather probe). Each thread looks up the slot of key
// tid / 2; the warp shuffles them to the lanes that copy. Then the piece's q, after its first
// tile (so the first KV bytes are in flight while the scorer still reads the previous q);
// a CTA's first piece copies q first.
template <Unit kU>
__device__ void produce(const vb_verify_params &p, const SchedConfig &c, unsigned char *sm, Sched<kU> &sched,
                        PieceState &ps, bool going)
{
    const Barriers<kU> bar{smem_u32(sm + Smem<kU>::bars)};
    const int tid = threadIdx.x, key = tid / 2, lane = tid % kWarp, ch = lane % 8;
    const unsigned kv = smem_u32(sm + Smem<kU>::kv), qs = smem_u32(sm + Smem<kU>::q);
    uint32_t blk = 0, pieces = 0;
    const uint64_t evict_first = l2_evict_first_policy();
    while (next_piece<kU>(p, c, sched, ps, going, kBarProducer)) {
        const int lo = ps.pc.tile_lo, hi = ps.pc.tile_hi;
        int64_t slot = ps.key_slot(p, (int64_t)lo * kKeys + key);
        // A CTA's first q buffer is free at once: its copy goes out while the first tile's slot
        // indices load, not after the tile's copies (bs 1 × 512: q landed 4.9 µs into the CTA).
        const bool q_first = pieces == 0;
        if (q_first)
            copy_q<kU>(p, ps, bar, qs, pieces);
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
            // The tile's last two positions are copied only when their slots are freed (at 72
            // rows the previous tile's rope block after the scorer's Sᵀ and its first value block
            // after Oᵀ's first group; at 64 rows that rope block and the last value block of the
            // tile before), about a tile from now: their lines go to L2 now, so that those
            // copies hit there.
            if (kRing<kU> < 2 * kBlocks && ch < 2) // deeper rings never wait on the tile before
#pragma unroll
                for (int i = 0; i < 4; i++)
                    if (valid[i])
                        prefetch_l2(src[i] - 16 * ch + 128 * block_at(kBlocks - 2 + ch));
            if (tile + 1 < hi) // the next tile's index load overlaps this tile's waits and copies
                slot = ps.key_slot(p, (int64_t)(tile + 1) * kKeys + key);
            for (int b = 0; b < kBlocks; b++, blk++) {
                const int s = blk % kRing<kU>;
                mbar_wait(bar.empty(s), ((blk / kRing<kU>) & 1) ^ 1);
                const unsigned dst = kv + s * kBlockBytes;
#pragma unroll
                for (int i = 0; i < 4; i++)
                    cp_async16(dst + row[i] * 128 + 16 * (ch ^ (row[i] & 7)), src[i] + 128 * block_at(b), valid[i],
                               evict_first);
                cp_async_mbar_arrive(bar.full(s));
            }
            if (tile == lo && !q_first)
                copy_q<kU>(p, ps, bar, qs, pieces);
        }
        pieces++;
        named_barrier(kBarProducer, 128); // ps is rewritten by the next walk step
    }
}

// ---- scorer and value warpgroups --------------------------------------------------------------

// What the scorer and the value warpgroups share: the ring and the thread's place in its warpgroup.
template <Unit kU> struct Worker {
    static constexpr int kN = UnitOf<kU>::n; // the MMAs' N: this CTA's rows of a unit, rounded up to 8
    const vb_verify_params &p;
    unsigned char *sm;
    const PieceState &ps;
    const Barriers<kU> bar;
    const int warp, lane, g, t;

    __device__ Worker(const vb_verify_params &p_, unsigned char *sm_, const PieceState &ps_)
        : p(p_), sm(sm_), ps(ps_), bar{smem_u32(sm_ + Smem<kU>::bars)}, warp((threadIdx.x / kWarp) % 4),
          lane(threadIdx.x % kWarp), g(lane / 4), t(lane % 4)
    {
    }

    // Arrives on the empty barriers of ring positions pos(0 .. n-1) of the tile starting at blk,
    // one lane each, so that one instruction arrives on all of them: lane 0 arriving on each in
    // turn took about 300 clocks a tile for 5 blocks (results/h200/NOTES.md).
    template <class F> __device__ void release(uint32_t blk, int n, F pos) const
    {
        if (lane < n)
            mbar_arrive(bar.empty((blk + pos(lane)) % kRing<kU>));
    }

    // Waits for ring positions [from, to) of the tile starting at blk. No proxy fence between
    // the copies' landing and wgmma's reads: the copies are cp.async, observed complete through
    // the block's mbarrier (cp.async.mbarrier.arrive), which CUTLASS's cp.async GMMA mainloops and
    // FlashAttention-3's paged-KV loads also hand to wgmma unfenced. The PTX ISA asks for
    // fence.proxy.async between generic-proxy writes and async-proxy reads, so this leans on what
    // those libraries rely on; kFenceCopies (meson -Dwgmma_fence_copies=true) brings the fence
    // back. The value warpgroups read only blocks the scorer has waited for and released after
    // its own MMAs, so they wait on nothing but Pᵀ; in the rows-on-M walk the consumer that
    // follows a tile likewise reads only blocks its owner waited for before publishing P.
    __device__ void await_blocks(uint32_t blk, int from, int to) const
    {
        for (int b = from; b < to; b++)
            mbar_wait(bar.full((blk + b) % kRing<kU>), ((blk + b) / kRing<kU>) & 1);
        if (kFenceCopies)
            fence_proxy_async();
        wgmma_fence();
    }
};

// The scorer: Sᵀ = K·Qᵀ for all 72 rows, one m64n72 chain over the tile's 9 k-blocks (K read
// from shared memory once), then the online softmax of every row, and Pᵀ into shared memory for
// the value warpgroups. It runs a tile ahead of them: in the 64-row kernel and the row pairs
// Sᵀ(t+1) and its softmax while they run Oᵀ(t); in the 72- and 16-row kernels Sᵀ(t+1) once
// Oᵀ(t) is done, its softmax while they wait (kScoresAfterValues).
template <Unit kU> struct Scorer : Worker<kU> {
    using W = Worker<kU>;
    using W::kN, W::p, W::sm, W::ps, W::bar, W::warp, W::lane, W::g, W::t, W::release, W::await_blocks;
    float s[kN / 2]; // Sᵀ, keys 16·warp + g (+8): rows 8j + 2t (+1) in s[4j .. 4j + 3]
    float l[kN / 8][2]; // this thread's share of the sums of rows 8j + 2t + e

    __device__ Scorer(const vb_verify_params &p_, unsigned char *sm_, const PieceState &ps_) : W(p_, sm_, ps_) {}

    // f(j, e) for each row 8j + 2t + e this thread holds, unrolled.
    template <class F> __device__ __forceinline__ void for_rows(F f) const
    {
#pragma unroll
        for (int j = 0; j < kN / 8; j++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                f(j, e);
    }

    // A value reduced over the 8 lanes of one t (the keys 16·warp + g of a row), then stored
    // for the cross-warp step: red[warp][row].
    template <class Op> __device__ __forceinline__ void to_red(float *red, int n, float v, Op op) const
    {
        v = op(v, __shfl_xor_sync(0xffffffffu, v, 4));
        v = op(v, __shfl_xor_sync(0xffffffffu, v, 8));
        v = op(v, __shfl_xor_sync(0xffffffffu, v, 16));
        if (g == 0)
            red[warp * kN + n] = v;
    }

    // Sᵀ of the tile starting at ring position blk: each k-block's MMAs as soon as its copies
    // have landed, committed once. The descriptors are moved by adding to them (desc_add): built
    // from addresses, each cost ptxas's uniform datapath 5-6 instructions, a quarter of the
    // scorer's warp-state samples at bs 8 × 91k (results/h200/NOTES.md, 2026-12-01, ninth).
    template <int B> __device__ __forceinline__ void score_each(uint32_t blk, uint64_t kv0, uint64_t q0)
    {
        if constexpr (B < kBlocks) {
            await_blocks(blk, B, B + 1);
            const uint64_t da = desc_add(kv0, ((blk + B) % kRing<kU>) * kBlockBytes);
#pragma unroll
            for (int ks = 0; ks < 4; ks++)
                Wgmma<kN, 0>::mma(s, desc_add(da, 32 * ks), desc_add(q0, block_at(B) * kQBlockBytes<kU> + 32 * ks),
                                B > 0 || ks > 0);
            score_each<B + 1>(blk, kv0, q0);
        }
    }
    __device__ void issue_scores(uint32_t blk)
    {
        unsigned q = smem_u32(sm + Smem<kU>::q);
        asm volatile("" : "+r"(q)); // opaque: ptxas would hoist q's 36 descriptors out of the tile loop and spill them
        score_each<0>(blk, sw128_desc(smem_u32(sm + Smem<kU>::kv), 16, 1024), sw128_desc(q, 16, 1024));
        wgmma_commit();
    }

    __device__ int row_token(int n) const { return (int)ps.heads.div(ps.row(n)); }

    // Scores to the log2 domain, hidden keys to -inf. Every mask byte the thread needs is
    // loaded before any is used, so a masked tile pays one memory latency, not one per byte.
    __device__ void scale_and_mask(int tile)
    {
        const float scale = p.sm_scale * kLog2e;
        const int64_t k0 = (int64_t)tile * kKeys, keys = ps.keys, P = ps.rq.P;
        const bool mask = !p.prefix_visible || k0 + kKeys > P;
#pragma unroll
        for (int i = 0; i < kN / 2; i++)
            s[i] *= scale;
        if (!mask && k0 + kKeys <= keys)
            return;
        const uint8_t *mk = p.custom_mask + ps.rq.mask0;
        const int64_t *mrow = reinterpret_cast<const int64_t *>(sm + Smem<kU>::mrow);
#pragma unroll
        for (int h = 0; h < 2; h++) { // keys 16·warp + g + 8h; two rounds of loads bound the registers
            const int64_t key = k0 + 16 * warp + g + 8 * h;
            const bool in = key < keys, read = in && mask && (key >= P || !p.prefix_visible);
            uint8_t vis[kN / 8][2];
            for_rows([&](int j, int e) {
                vis[j][e] = read ? __ldg(mk + mrow[8 * j + 2 * t + e] + key) : (uint8_t)in;
            });
            for_rows([&](int j, int e) {
                if (!vis[j][e])
                    s[4 * j + 2 * h + e] = -CUDART_INF_F;
            });
        }
    }

    // Online softmax of every row over the tile (lazy max), Pᵀ into shared memory once both
    // value warpgroups' Oᵀ MMAs of the previous tile are done with it, then published with the
    // tile's rescale factors. buf: the parity of the tile, which picks the buffer of the
    // rescale factors; tiles: tiles done before it.
    __device__ void softmax(int buf, uint32_t tiles)
    {
        float *rm = reinterpret_cast<float *>(sm + Smem<kU>::rm);
        float *corr = reinterpret_cast<float *>(sm + Smem<kU>::corr) + buf * kN;
        float *red = reinterpret_cast<float *>(sm + Smem<kU>::red);
        int *moved = reinterpret_cast<int *>(sm + Smem<kU>::moved) + buf;
        float m[kN / 8][2];
        bool up = false;
        for_rows([&](int j, int e) {
            m[j][e] = rm[8 * j + 2 * t + e];
            up |= s[4 * j + e] > m[j][e] + kLazy || s[4 * j + 2 + e] > m[j][e] + kLazy;
        });
        // The vote is also the barrier that orders every thread's read of rm before its write.
        const bool rescale = barrier_or(kBarScorer, 128, up);
        if (rescale) {
            for_rows([&](int j, int e) {
                to_red(red, 8 * j + 2 * t + e, fmaxf(s[4 * j + e], s[4 * j + 2 + e]),
                       [](float a, float b) { return fmaxf(a, b); });
            });
            named_barrier(kBarScorer, 128);
            for_rows([&](int j, int e) {
                const int n = 8 * j + 2 * t + e;
                const float mx = fmaxf(fmaxf(red[n], red[kN + n]), fmaxf(red[2 * kN + n], red[3 * kN + n]));
                const float mnew = fmaxf(m[j][e], mx);
                const float c = mnew == m[j][e] ? 1.f : exp2_ftz(m[j][e] - mnew); // 0 when m was -inf
                l[j][e] *= c;
                m[j][e] = mnew;
                if (warp == 0 && g == 0) {
                    rm[n] = mnew;
                    corr[n] = c;
                }
            });
            // Warp 0's writes of rm before the other warps read it at the next tile: when Sᵀ runs
            // beside Oᵀ nothing else orders them (racecheck, at 24 rows: results/h200/NOTES.md,
            // twenty-fifth). In the 16-block ring run_tiles' wait for Oᵀ of this tile does: that
            // Oᵀ waits for the Pᵀ warp 0 publishes after its writes.
            if (!kScoresAfterValues<kU>)
                named_barrier(kBarScorer, 128);
        }
        if (threadIdx.x % 128 == 0)
            *moved = rescale;
        // P = 2^(s - m) in bf16, stored transposed (rows × keys, K-major) by stmatrix.
        const unsigned pt = smem_u32(sm + Smem<kU>::p);
        unsigned pk[kN / 8][2];
#pragma unroll
        for (int j = 0; j < kN / 8; j++) {
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
        if (!kScoresAfterValues<kU>) // else run_tiles waited for this phase before Sᵀ
            mbar_wait(bar.pfree(), (tiles & 1) ^ 1);
        // Matrix (j, h): keys 16·warp + 8h .. +7 (16-byte chunk 2·warp + h of a Pᵀ row), rows
        // 8j .. +7. Lane l addresses row l % 8 of matrix l / 8.
        const int r8 = lane % 8, h = (lane / 8) % 2;
#pragma unroll
        for (int j = 0; j < kN / 8; j++)
            stsm_x2_t(pt + (8 * j + r8) * 128 + 16 * ((2 * warp + h) ^ r8), pk[j][0], pk[j][1]);
        fence_proxy_async(); // Pᵀ (stmatrix) before the value warpgroups' wgmma reads
        mbar_arrive(bar.pready());
    }

    // The piece's tiles. blk: ring position of its first block; tiles: tiles done before it,
    // both carried across pieces.
    __device__ void run_tiles(uint32_t &blk, uint32_t &tiles, uint32_t pieces)
    {
        // Warp-uniform by construction (shuffled from lane 0), so ptxas sees the wgmma loop
        // as non-divergent and does not serialise it.
        const int lo = __shfl_sync(0xffffffffu, ps.pc.tile_lo, 0), hi = __shfl_sync(0xffffffffu, ps.pc.tile_hi, 0);
        mbar_wait(bar.qfull(), pieces & 1);
        for (int tile = lo; tile < hi; tile++, blk += kBlocks, tiles++) {
            if (kScoresAfterValues<kU>) // Oᵀ of the tile before done (see kScoresAfterValues)
                mbar_wait(bar.pfree(), (tiles & 1) ^ 1);
            issue_scores(blk);
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < kN / 2; i++)
                fence_operand(s[i]);
            if (tile == hi - 1 && lane == 0)
                mbar_arrive(bar.qempty()); // the piece's last Sᵀ is done with q
            // The scorer's share of every position's release; the rope (position 0), which no
            // value warpgroup reads, takes both shares from it.
            release(blk, kBlocks + 1, [](int i) { return i % kBlocks; });
            scale_and_mask(tile);
            softmax(tiles & 1, tiles);
        }
    }

    __device__ void begin_piece()
    {
        float *rm = reinterpret_cast<float *>(sm + Smem<kU>::rm);
        int64_t *mrow = reinterpret_cast<int64_t *>(sm + Smem<kU>::mrow);
        const int tid = threadIdx.x % 128;
        if (tid < kN) {
            rm[tid] = -CUDART_INF_F;
            mrow[tid] = row_token(tid) * ps.keys;
        }
#pragma unroll
        for (int j = 0; j < kN / 8; j++)
            l[j][0] = l[j][1] = 0.f;
        named_barrier(kBarScorer, 128);
    }

    // Row sums of the piece into rsum, once the value warpgroups have written the previous
    // piece's rows with it; then published to them. pieces: pieces done before this one.
    __device__ void finish_sums(uint32_t pieces)
    {
        float *red = reinterpret_cast<float *>(sm + Smem<kU>::red);
        float *rsum = reinterpret_cast<float *>(sm + Smem<kU>::rsum);
        named_barrier(kBarScorer, 128); // every warp's reads of red in the last softmax are done
        for_rows([&](int j, int e) {
            to_red(red, 8 * j + 2 * t + e, l[j][e], [](float a, float b) { return a + b; });
        });
        named_barrier(kBarScorer, 128);
        mbar_wait(bar.written(), (pieces & 1) ^ 1);
        const int n = threadIdx.x % 128;
        if (n < kN)
            rsum[n] = red[n] + red[kN + n] + red[2 * kN + n] + red[3 * kN + n];
        mbar_arrive(bar.sums());
    }

    // After finish_sums: the rows' lse (an uncut unit) or (max, sum) (a cut one).
    __device__ void write_stats(const SchedWorkspace &w)
    {
        const float *rsum = reinterpret_cast<const float *>(sm + Smem<kU>::rsum);
        const float *rm = reinterpret_cast<const float *>(sm + Smem<kU>::rm);
        const int n = threadIdx.x % 128;
        if (n >= ps.nrows)
            return;
        if (ps.pc.direct) {
            if (p.lse)
                p.lse[ps.token(n) * p.heads + ps.head(n)] = row_lse(rm[n], rsum[n]);
        } else {
            w.ml[(size_t)ps.pc.slot * UnitOf<kU>::rows + slot_row0<kU>(ps) + n] = make_float2(rm[n], rsum[n]);
        }
    }
};

// A value warpgroup: Oᵀ += Vᵀ·Pᵀ for value dims [256·k, 256·k + 256) of all 72 rows (4 × 36
// fp32 accumulators a thread), a tile behind the scorer.
template <Unit kU> struct Valuer : Worker<kU> {
    using W = Worker<kU>;
    using W::kN, W::p, W::sm, W::ps, W::bar, W::warp, W::lane, W::g, W::t, W::release;
    const int k;
    float o[4][kN / 2]; // Oᵀ: dims 256·k + 64·i + 16·warp + g (+8), rows 8j + 2t (+1)

    __device__ Valuer(const vb_verify_params &p_, unsigned char *sm_, const PieceState &ps_, int k_)
        : W(p_, sm_, ps_), k(k_)
    {
    }

    // Oᵀ over the tile's 64 keys for this warpgroup's 4 value-dim blocks, one group a block, so
    // that each ring slot is released as soon as its MMAs are done.
    __device__ void issue_values(uint32_t blk)
    {
        const uint64_t v0 = sw128_desc(smem_u32(sm + Smem<kU>::kv), kBlockBytes, 1024);
        const uint64_t p0 = sw128_desc(smem_u32(sm + Smem<kU>::p), 16, 1024);
        wgmma_fence();
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const uint64_t da = desc_add(v0, ((blk + pos_of(4 * k + i)) % kRing<kU>) * kBlockBytes);
#pragma unroll
            for (int ks = 0; ks < 4; ks++)
                Wgmma<kN, 1>::mma(o[i], desc_add(da, 2048 * ks), desc_add(p0, 32 * ks), 1);
            wgmma_commit();
        }
    }

    // Oᵀ *= the tile's rescale factors when the scorer moved any row's reference max.
    __device__ void rescale_values(int buf)
    {
        if (!reinterpret_cast<const int *>(sm + Smem<kU>::moved)[buf])
            return;
        const float *corr = reinterpret_cast<const float *>(sm + Smem<kU>::corr) + buf * kN;
#pragma unroll
        for (int j = 0; j < kN / 8; j++) {
            const float2 c = *reinterpret_cast<const float2 *>(corr + 8 * j + 2 * t);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                o[i][4 * j] *= c.x, o[i][4 * j + 1] *= c.y;
                o[i][4 * j + 2] *= c.x, o[i][4 * j + 3] *= c.y;
            }
        }
    }

    // Once at most kLeft of the tile's 4 value-block groups are in flight, block i's slot is
    // released.
    template <int kLeft> __device__ __forceinline__ void release_when_done(uint32_t blk, int i) const
    {
        wgmma_wait<kLeft>();
        release(blk, 1, [&](int) { return pos_of(4 * k + i); });
    }

    __device__ void run_tiles(uint32_t &blk, uint32_t &tiles)
    {
        const int lo = __shfl_sync(0xffffffffu, ps.pc.tile_lo, 0), hi = __shfl_sync(0xffffffffu, ps.pc.tile_hi, 0);
        for (int tile = lo; tile < hi; tile++, blk += kBlocks, tiles++) {
            mbar_wait(bar.pready(), tiles & 1);
            if (tile > lo) // Oᵀ is zero at a piece's first tile, where every row's max moves
                rescale_values(tiles & 1);
            issue_values(blk);
            release_when_done<3>(blk, 0);
            release_when_done<2>(blk, 1);
            release_when_done<1>(blk, 2);
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int x = 0; x < kN / 2; x++)
                    fence_operand(o[i][x]);
            release(blk, 1, [&](int) { return pos_of(4 * k + 3); });
            if (lane == 3) // beside the releasing lanes; Pᵀ is free once all 8 value warps arrive
                mbar_arrive(bar.pfree());
        }
    }

    __device__ void begin_piece()
    {
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int x = 0; x < kN / 2; x++)
                o[i][x] = 0.f;
    }

    // An uncut unit: o = Oᵀ / l through movmatrix (8×8 transposes).
    __device__ void write_output()
    {
        const float *rsum = reinterpret_cast<const float *>(sm + Smem<kU>::rsum);
#pragma unroll
        for (int j = 0; j < kN / 8; j++) {
            const float la = rsum[8 * j + 2 * t], lb = rsum[8 * j + 2 * t + 1];
            const float ia = la > 0.f ? 1.f / la : 0.f, ib = lb > 0.f ? 1.f / lb : 0.f;
            uint16_t *dst = ps.o_row(p, 8 * j + g);
#pragma unroll
            for (int i = 0; i < 4; i++)
                store_o_m16n8(dst, 256 * k + 64 * i + 16 * warp, o[i][4 * j], o[i][4 * j + 1], o[i][4 * j + 2],
                              o[i][4 * j + 3], ia, ib);
        }
    }

    // A cut unit: the unnormalised Oᵀ into the partial slot.
    __device__ void write_partial(const SchedWorkspace &w)
    {
        const int nrows = ps.nrows;
        float *acc = w.acc + ((size_t)ps.pc.slot * UnitOf<kU>::rows + slot_row0<kU>(ps)) * kDv;
#pragma unroll
        for (int j = 0; j < kN / 8; j++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                store_partial_m16n8(acc, kDv, nrows, 8 * j + 2 * t, 256 * k + 64 * i + 16 * warp + g, o[i][4 * j],
                                    o[i][4 * j + 1], o[i][4 * j + 2], o[i][4 * j + 3]);
    }
};

template <Unit kU>
__device__ void score(const vb_verify_params &p, const SchedConfig &c, unsigned char *sm, Sched<kU> &sched,
                      PieceState &ps, bool going, void *ws)
{
    Scorer<kU> sc(p, sm, ps);
    const SchedWorkspace w(ws, c, p.batch, kDv);
    uint32_t blk = 0, tiles = 0, pieces = 0;
    while (next_piece<kU>(p, c, sched, ps, going, kBarScorer)) {
        sc.begin_piece();
        sc.run_tiles(blk, tiles, pieces);
        sc.finish_sums(pieces++);
        sc.write_stats(w);
        if (ps.pc.plan_owner && threadIdx.x % 128 == 0)
            w.record_plan(ps.pc, c.row_tiles);
        named_barrier(kBarScorer, 128); // ps is rewritten by the next walk step
    }
}

template <Unit kU>
__device__ void value(const vb_verify_params &p, const SchedConfig &c, unsigned char *sm, Sched<kU> &sched,
                      PieceState &ps, bool going, int k, void *ws)
{
    Valuer<kU> va(p, sm, ps, k);
    const SchedWorkspace w(ws, c, p.batch, kDv);
    uint32_t blk = 0, tiles = 0, pieces = 0;
    while (next_piece<kU>(p, c, sched, ps, going, kBarValue + k)) {
        va.begin_piece();
        va.run_tiles(blk, tiles);
        mbar_wait(va.bar.sums(), pieces++ & 1);
        if (ps.pc.direct)
            va.write_output();
        else
            va.write_partial(w);
        __syncwarp();
        if (va.lane == 0)
            mbar_arrive(va.bar.written());
        named_barrier(kBarValue + k, 128); // ps is rewritten by the next walk step
    }
}

// ---- rows on M: the 64-row kernel's one-CTA walk ----------------------------------------------

// Units of 64 rows with the rows on the MMA's M side, as the public Hopper decode kernels lay
// them out: S = Q·Kᵀ (M = 64 rows, N = 64 keys, both operands in shared memory: q and the ring
// in the layouts above) and O = P·V with P from registers and V the ring's value blocks read
// N-major (m64n64k16, wgmma_shapes.txt: full rate at half SS's shared-memory bytes). Two
// consumer warpgroups take turns owning a tile: the owner computes S, the online softmax and P,
// publishes P (8 KB) and the rows' rescale factors and max, then adds P·V into its half of O's
// 512 dims; the other rescales its half, loads P by ldmatrix and adds P·V into its half. A
// row's 64 scores lie in one quad of one warp, so the softmax needs no cross-warp step.
// Warpgroup 3 idles, its registers given to the consumers (setmaxnreg). Against the scorer and
// two value warpgroups (keys on M) it replaced, A/B in one machine start (3 rounds, 35 records
// of mla_wgmma; results/h200/NOTES.md, thirty-fifth): geomean 0.987, tree-eagle64 92.5 → 90.6
// µs, tree-explicit7 30.6 → 29.5, 4 heads at bs 8 × 32k 91.2 → 88.1, none slower beyond the
// spread. eagle64 is bound by the tiles' chain, not by its copies: a timing build without them
// (wrong outputs) ran it in 82 µs against 90 (keys on M: 85 against 92). Issuing the next owned
// tile's S while following the other's tile (so that it runs under the other's softmax) was
// 1-3% slower at eagle64 and the 64-row trees (same NOTES): with 17 ring blocks its copies wait
// for the P·V before. (Held in flight across the follower's P·V, S's accumulators also made
// ptxas serialize every wgmma of the kernel: 1.3-1.4× slower.)
template <Unit kU> constexpr bool kRowsOnM = kU == Unit::Rows64;
constexpr int kBarPair = 5; // both consumers, at the end of a piece (the same instruction in both)
// Warpgroup 3 needs only enough registers to exit, so the producer can have 56 instead of the
// other kernels' 48: 56 / 24 / 216 hands out all 65,536, and ptxas's spills in this kernel went
// from 68 / 100 to 56 / 84 B (32 / 44 since c013186: results/resources.md). A/B against 48
// (results/h200/NOTES.md, thirty-fifth and thirty-sixth; two machine starts, 3 rounds each):
// geomean 0.996 over 10 records of the 64-row kernel (tree-eagle64 90.7 → 89.7 µs) and 0.992
// over 17 (tree-eagle64 90.4 → 89.1, the 16-token chain 40.2 → 39.6).
constexpr int kRomProducerRegs = 56, kConsumerRegs = 216, kIdleRegs = 24;
static_assert(128 * (kRomProducerRegs + kIdleRegs) + 256 * kConsumerRegs <= 65536, "rows-on-M setmaxnreg split");

template <Unit kU> struct RowsOnM : Worker<kU> {
    using W = Worker<kU>;
    using W::p, W::sm, W::ps, W::bar, W::warp, W::lane, W::g, W::t, W::release, W::await_blocks;
    static_assert(W::kN == 64, "64 rows on M");
    const int c;      // tiles of this parity are this consumer's; O's dims 256c .. 256c + 255
    float o[4][32];   // O: rows r0 (o[i][4j], [4j + 1]) and r0 + 8 ([4j + 2], [4j + 3]), dims 256c + 64i + 8j + 2t (+1)
    float m[2], l[2]; // rows r0 and r0 + 8: reference max (log2 domain), this consumer's share of the sum
    int64_t mrow[2];  // their mask rows, from mask0

    __device__ RowsOnM(const vb_verify_params &p_, unsigned char *sm_, const PieceState &ps_, int c_)
        : W(p_, sm_, ps_), c(c_)
    {
    }
    __device__ int r0() const { return 16 * warp + g; }
    // The published tile's rescale factors (rows 0-63), then the rows' new max.
    __device__ float *stats() const { return reinterpret_cast<float *>(sm + Smem<kU>::corr); }

    __device__ void begin_piece()
    {
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int x = 0; x < 32; x++)
                o[i][x] = 0.f;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            m[h] = -CUDART_INF_F, l[h] = 0.f;
            mrow[h] = (int64_t)ps.heads.div(ps.row(r0() + 8 * h)) * ps.keys;
        }
    }

    template <int B> __device__ __forceinline__ void score_each(float (&s)[32], uint32_t blk, uint64_t kv0, uint64_t q0)
    {
        if constexpr (B < kBlocks) {
            await_blocks(blk, B, B + 1);
            const uint64_t dk = desc_add(kv0, ((blk + B) % kRing<kU>) * kBlockBytes);
#pragma unroll
            for (int ks = 0; ks < 4; ks++)
                Wgmma<64, 0>::mma(s, desc_add(q0, block_at(B) * kQBlockBytes<kU> + 32 * ks), desc_add(dk, 32 * ks),
                                  B > 0 || ks > 0);
            score_each<B + 1>(s, blk, kv0, q0);
        }
    }

    // Scores to the log2 domain, hidden keys to -inf (keys k0 + 8j + 2t + e of rows r0, r0 + 8);
    // a round's mask bytes are all loaded before any is used.
    __device__ void scale_and_mask(float (&s)[32], int tile) const
    {
        const float scale = p.sm_scale * kLog2e;
        const int64_t k0 = (int64_t)tile * kKeys, keys = ps.keys, P = ps.rq.P;
        const bool mask = !p.prefix_visible || k0 + kKeys > P;
#pragma unroll
        for (int i = 0; i < 32; i++)
            s[i] *= scale;
        if (!mask && k0 + kKeys <= keys)
            return;
        const uint8_t *mk = p.custom_mask + ps.rq.mask0;
#pragma unroll
        for (int half = 0; half < 2; half++) {
            uint8_t vis[4][2][2];
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int64_t key = k0 + 8 * (4 * half + j) + 2 * t + e;
                    const bool in = key < keys, read = in && mask && (key >= P || !p.prefix_visible);
#pragma unroll
                    for (int h = 0; h < 2; h++)
                        vis[j][e][h] = read ? __ldg(mk + mrow[h] + key) : (uint8_t)in;
                }
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 2; e++)
#pragma unroll
                    for (int h = 0; h < 2; h++)
                        if (!vis[j][e][h])
                            s[4 * (4 * half + j) + 2 * h + e] = -CUDART_INF_F;
        }
    }

    // O *= f (rows r0, r0 + 8) unless no row of this warp moved.
    __device__ void rescale(const float (&f)[2])
    {
        if (!__any_sync(0xffffffffu, f[0] != 1.f || f[1] != 1.f))
            return;
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 8; j++)
                o[i][4 * j] *= f[0], o[i][4 * j + 1] *= f[0], o[i][4 * j + 2] *= f[1], o[i][4 * j + 3] *= f[1];
    }

    // The owned tile: S, the online softmax (lazy max, kLazy), P into registers (the A fragments
    // of its four k16 slabs) and published with the rows' factors and max.
    __device__ void own(int tile, int lo, int hi, uint32_t blk, uint32_t (&pa)[4][4])
    {
        float s[32];
        score_each<0>(s, blk, sw128_desc(smem_u32(sm + Smem<kU>::kv), 16, 1024),
                      sw128_desc(smem_u32(sm + Smem<kU>::q), 16, 1024));
        wgmma_commit();
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < 32; i++)
            fence_operand(s[i]);
        if (tile == hi - 1 && lane == 0)
            mbar_arrive(bar.qempty()); // the piece's last S is done with q
        release(blk, kBlocks + 1, [](int i) { return i % kBlocks; }); // S's share; the rope's both
        scale_and_mask(s, tile);
        float mx[2] = {-CUDART_INF_F, -CUDART_INF_F}, f[2], sum[2] = {0.f, 0.f};
#pragma unroll
        for (int x = 0; x < 32; x++)
            mx[x % 4 / 2] = fmaxf(mx[x % 4 / 2], s[x]);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
            const float mnew = mx[h] > m[h] + kLazy ? mx[h] : m[h];
            f[h] = mnew == m[h] ? 1.f : exp2_ftz(m[h] - mnew); // 0 when m was -inf
            m[h] = mnew;
        }
        const float mu[2] = {m[0] == -CUDART_INF_F ? 0.f : m[0], m[1] == -CUDART_INF_F ? 0.f : m[1]};
        __syncwarp(); // this warp's reads of P's rows and the statistics (the tile before) are done
        const unsigned pb = smem_u32(sm + Smem<kU>::p);
        const int r = r0();
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const float a = exp2_ftz(s[4 * j] - mu[0]), b = exp2_ftz(s[4 * j + 1] - mu[0]);
            const float x = exp2_ftz(s[4 * j + 2] - mu[1]), y = exp2_ftz(s[4 * j + 3] - mu[1]);
            sum[0] += a + b, sum[1] += x + y;
            uint32_t &lo_row = pa[j / 2][2 * (j % 2)], &hi_row = pa[j / 2][2 * (j % 2) + 1];
            lo_row = pack_bf16(a, b), hi_row = pack_bf16(x, y);
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(pb + sw128_offset(r, 8 * j + 2 * t)), "r"(lo_row) : "memory");
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(pb + sw128_offset(r + 8, 8 * j + 2 * t)), "r"(hi_row) : "memory");
        }
        if (t == 0) {
            float *st = stats();
            st[r] = f[0], st[r + 8] = f[1], st[64 + r] = m[0], st[64 + r + 8] = m[1];
        }
        mbar_arrive(bar.handoff(c));
#pragma unroll
        for (int h = 0; h < 2; h++)
            l[h] = l[h] * f[h] + sum[h];
        if (tile > lo)
            rescale(f);
    }

    // The other consumer's tile: its factors and max, then P by ldmatrix. n: tiles before it.
    __device__ void follow(int tile, int lo, uint32_t n, uint32_t (&pa)[4][4])
    {
        mbar_wait(bar.handoff(1 - c), (n / 2) & 1);
        const float *st = stats();
        const int r = r0();
        const float f[2] = {st[r], st[r + 8]};
        m[0] = st[64 + r], m[1] = st[64 + r + 8];
        const unsigned pb = smem_u32(sm + Smem<kU>::p);
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            ldsm_x4(pa[kk], pb + sw128_offset(16 * warp + lane % 16, 16 * kk + 8 * (lane / 16)));
        __syncwarp(); // before this warp writes the same rows as the next owner
#pragma unroll
        for (int h = 0; h < 2; h++)
            l[h] *= f[h];
        if (tile > lo)
            rescale(f);
    }

    // O's half += P·V over the tile, a group per value block, each block's slot released as its
    // group finishes.
    __device__ void add_values(const uint32_t (&pa)[4][4], uint32_t blk)
    {
        const uint64_t v0 = sw128_desc(smem_u32(sm + Smem<kU>::kv), kBlockBytes, 1024);
        wgmma_fence();
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const uint64_t dv = desc_add(v0, ((blk + pos_of(4 * c + i)) % kRing<kU>) * kBlockBytes);
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
                WgmmaRs<64, 1>::mma(o[i], pa[kk], desc_add(dv, 2048 * kk), 1);
            wgmma_commit();
        }
        const auto done = [&](int i) { release(blk, 1, [&](int) { return pos_of(4 * c + i); }); };
        wgmma_wait<3>(), done(0);
        wgmma_wait<2>(), done(1);
        wgmma_wait<1>(), done(2);
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int x = 0; x < 32; x++)
                fence_operand(o[i][x]);
        done(3);
    }

    // The piece's tiles. blk: ring position of its first block; tiles: tiles done before it.
    __device__ void run_tiles(uint32_t &blk, uint32_t &tiles, uint32_t pieces)
    {
        const int lo = __shfl_sync(0xffffffffu, ps.pc.tile_lo, 0), hi = __shfl_sync(0xffffffffu, ps.pc.tile_hi, 0);
        mbar_wait(bar.qfull(), pieces & 1);
        for (int tile = lo; tile < hi; tile++, blk += kBlocks, tiles++) {
            uint32_t pa[4][4];
            if ((int)(tiles & 1) == c)
                own(tile, lo, hi, blk, pa);
            else
                follow(tile, lo, tiles, pa);
            add_values(pa, blk);
        }
    }

    // Each row's sum over both consumers' tiles, in both (l); returns the unit's rows.
    __device__ int meet_sums()
    {
        float *red = reinterpret_cast<float *>(sm + Smem<kU>::red);
        const int r = r0();
#pragma unroll
        for (int h = 0; h < 2; h++) {
            l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
            l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
            if (t == 0)
                red[64 * c + r + 8 * h] = l[h];
        }
        named_barrier(kBarPair, 256);
#pragma unroll
        for (int h = 0; h < 2; h++)
            l[h] += red[64 * (1 - c) + r + 8 * h];
        named_barrier(kBarPair, 256); // both read before either writes red again
        return ps.nrows;
    }

    // An uncut unit: this half of O / l to o, and (consumer 0) the rows' lse.
    __device__ void write_output(int nrows) const
    {
        const int r = r0();
#pragma unroll
        for (int h = 0; h < 2; h++) {
            uint16_t *dst = ps.o_row(p, r + 8 * h);
            const float il = l[h] > 0.f ? 1.f / l[h] : 0.f;
            if (dst)
#pragma unroll
                for (int i = 0; i < 4; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        *reinterpret_cast<unsigned *>(dst + 256 * c + 64 * i + 8 * j + 2 * t) =
                            pack_bf16(o[i][4 * j + 2 * h] * il, o[i][4 * j + 2 * h + 1] * il);
            if (c == 0 && t == 0 && p.lse && r + 8 * h < nrows)
                p.lse[ps.token(r + 8 * h) * p.heads + ps.head(r + 8 * h)] = row_lse(m[h], l[h]);
        }
    }

    // A cut unit: this half of the unnormalised O into the partial slot, and (consumer 0) the
    // rows' (max, sum).
    __device__ void write_partial(const SchedWorkspace &w, int nrows) const
    {
        const size_t row0 = (size_t)ps.pc.slot * UnitOf<kU>::rows + slot_row0<kU>(ps);
        const int r = r0();
#pragma unroll
        for (int h = 0; h < 2; h++) {
            if (r + 8 * h >= nrows)
                continue;
            float *acc = w.acc + (row0 + r + 8 * h) * kDv + 256 * c;
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    *reinterpret_cast<float2 *>(acc + 64 * i + 8 * j + 2 * t) =
                        make_float2(o[i][4 * j + 2 * h], o[i][4 * j + 2 * h + 1]);
            if (c == 0 && t == 0)
                w.ml[row0 + r + 8 * h] = make_float2(m[h], l[h]);
        }
    }
};

template <Unit kU>
__device__ void consume(const vb_verify_params &p, const SchedConfig &cfg, unsigned char *sm, Sched<kU> &sched,
                        PieceState &ps, bool going, int c, void *ws)
{
    RowsOnM<kU> k(p, sm, ps, c);
    const SchedWorkspace w(ws, cfg, p.batch, kDv);
    uint32_t blk = 0, tiles = 0, pieces = 0;
    while (next_piece<kU>(p, cfg, sched, ps, going, kBarScorer + c)) {
        k.begin_piece();
        k.run_tiles(blk, tiles, pieces++);
        const int nrows = k.meet_sums();
        if (ps.pc.direct)
            k.write_output(nrows);
        else
            k.write_partial(w, nrows);
        if (ps.pc.plan_owner && k.c == 0 && threadIdx.x % 128 == 0)
            w.record_plan(ps.pc, cfg.row_tiles);
        named_barrier(kBarScorer + c, 128); // ps is rewritten by the next walk step
    }
}

// The dynamic shared memory, 1024-byte aligned (the swizzle atoms need it).
__device__ __forceinline__ unsigned char *aligned_smem()
{
    extern __shared__ unsigned char smem_raw[];
    return smem_raw + ((1024 - smem_u32(smem_raw) % 1024) % 1024);
}

// The combine is the main launch's programmatic dependent (launch_combine). The main CTAs let it
// launch early only when the cut gives each at most kDependentSpan positions (the quads' and
// octets' launches, and the 16-row kernel's equally short ones), once their producer has issued
// every copy; otherwise it launches when the main grid ends, as a plain launch would. A/B against
// the plain launch (results/h200/NOTES.md, thirty-seventh; 35 records, 3 rounds): launches of 1 to
// 512 tokens 1.5-4.7% faster (bs 1 × 512 14.9 → 14.6 µs, a 6-token chain at bs 1 × 1 11.7 → 11.3),
// the others 0.979-1.005. Other triggers, measured the same way, were slower: at every span (at the
// CTAs' start or after the copies) bs 1 × 200k 3.5-3.9%; at the start for spans up to 1, bs 1 ×
// 4096 (4 heads) 19.4 → 21.2 µs; after the copies for spans up to kPairSpan, bs 1 × 32k at 2 and 4
// heads 10-11%. Why (thirty-eighth; block placement was not observed directly): the cost went
// with the combine's block shape. Its blocks, six an SM, would fill the first SMs to free up in
// block order, so that its working blocks (the first ones) share a few SMs; a combine of one
// 768-thread block an SM (six 128-thread groups, group k of block b taking list block b + k ·
// grid) took the cost away (bs 1 × 200k, trigger after the copies at every span, against this
// landed form: 1.047 with the shipped combine, 1.008 with that one), but was itself about 1%
// slower, and no trigger made the long launches faster with it. Capping the shipped combine at
// three blocks an SM (dynamic shared memory) did the same (fortieth: the trigger at every span
// 1.042 with six blocks an SM, 1.008 with three), at 1.4% on its own, and against the capped
// combine the early start gained nothing (bs 1 × 200k 1.007, bs 8 × 23k 1.014).
constexpr int kDependentSpan = 1;

// One CTA's work for units of kind kU, once the prefix of unit costs is in pos. A kernel per
// unit size (below), which the host picks from the launch's limits (config_for), each with its
// own schedule type (Schedule's kTag) and state: as one kernel template, the shared variables
// came out in another order and ptxas spilled 20 B more in the 72-row kernel.
template <Unit kU>
__device__ __forceinline__ void cta_walk(const vb_verify_params &p, void *ws, const SchedConfig &c, Sched<kU> *sched,
                                         PieceState *ps, unsigned char *sm, int wg, const int *pos, int total)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using S = Smem<kU>;
    bool going = false; // meaningful in each warpgroup's first thread, which walks its schedule
    if (threadIdx.x % 128 == 0)
        going = sched[wg].start(p, c, pos, total);
    if (threadIdx.x == kWarp) { // not a walking thread: the inits run beside the schedule's start
        const Barriers<kU> bar{smem_u32(sm + S::bars)};
        for (int s = 0; s < kRing<kU>; s++) {
            mbar_init(bar.full(s), 128);
            mbar_init(bar.empty(s), 8); // the scorer's 4 warps and the reading value warpgroup's 4
        }
        mbar_init(bar.qfull(), 128);
        mbar_init(bar.qempty(), 4);
        mbar_init(bar.pfree(), kRowsOnM<kU> ? 128 : 8); // rows on M: handoff(0) and handoff(1)
        mbar_init(bar.pready(), 128);
        mbar_init(bar.sums(), 128);
        mbar_init(bar.written(), 8);
        mbar_init_fence();
    }
    __syncthreads(); // the prefix array shares memory with the ring; barriers initialised
    if (wg == 0) {
        setmaxnreg_dec<kRowsOnM<kU> ? kRomProducerRegs : kProducerRegs>();
        produce<kU>(p, c, sm, sched[0], ps[0], going);
        if (threadIdx.x == 0 && (total + c.grid - 1) / c.grid <= kDependentSpan)
            griddep_launch_dependents(); // every copy of this CTA issued: the combine may launch
    } else if constexpr (kRowsOnM<kU>) {
        if (wg == 3) {
            setmaxnreg_dec<kIdleRegs>();
        } else {
            setmaxnreg_inc<kConsumerRegs>();
            consume<kU>(p, c, sm, sched[wg], ps[wg], going, wg - 1, ws);
        }
    } else if (wg == 1) {
        setmaxnreg_dec<kScorerRegs>();
        score<kU>(p, c, sm, sched[1], ps[1], going, ws);
    } else {
        setmaxnreg_inc<kValueRegs>();
        value<kU>(p, c, sm, sched[wg], ps[wg], going, wg - 2, ws);
    }
#else
    (void)p, (void)ws, (void)c, (void)sched, (void)ps, (void)sm, (void)wg, (void)pos, (void)total;
#endif
}

template <Unit kU>
__device__ __forceinline__ void cta(const vb_verify_params &p, void *ws, const SchedConfig &c, Sched<kU> *sched,
                                    PieceState *ps)
{
    unsigned char *sm = aligned_smem();
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0); // warp-uniform for ptxas
    int *pos = reinterpret_cast<int *>(sm + Smem<kU>::kv);
    const int total = Sched<kU>::start_positions(p, c, pos);
    cta_walk<kU>(p, ws, c, sched, ps, sm, wg, pos, total);
}

// The 72-row kernel puts each unit on a CTA pair when a launch is short: when the cut would give
// every CTA at most kPairSpan positions (c0 and tiles). Each CTA of a pair then computes 36 of
// the unit's rows (N = 40) over the pair's span, which is twice as long: half the Sᵀ, softmax,
// Oᵀ and partial of a tile per CTA, but every KV tile read by both (the second read from L2:
// Nsight Compute counted the same DRAM bytes, 212 MB at bs 8 × 23k) and through shared memory
// by both, with each wgmma's A operand amortised over 40 columns instead of 72 (an estimate).
// A/B of this kernel with pairs always taken, against the one-cut kernel (results/h200/NOTES.md,
// fifteenth; span: positions a CTA in the one-CTA cut): bs 1 × 512 (1) 0.894, bs 1 × 32k (4)
// 0.948, bs 8 × 4096 (5) 0.979, bs 8 × 6000 (6) 1.011, bs 8 × 8000 (8) 1.075, bs 8 × 23k (22)
// 1.185, bs 8 × 91k 1.315; with pairs never taken 0.998 (21 records). Holding both cuts costs
// the pairs about half of their gain in instruction fetch (bs 1 × 512: 0.833 for a kernel of
// pairs alone, same NOTES).
// At span 1 (one position a CTA in the one-CTA cut), four CTAs a unit, 18 rows each (N = 24):
// the quads' cut over a quarter of the grid then gives each CTA at most 4 positions, and an
// m64n24 takes 22 clocks against m64n72's 36 (wgmma_shapes.txt). Quads up to span 2 (a build
// on next/wgmma-quads, results/h200/NOTES.md, twenty-fifth) gained at span 1 (bs 1 × 512 0.912,
// bs 8 × 21 0.888, bs 8 × 512 0.954) and lost at span 2 (bs 8 × 1024 1.047, `graph-bucket16`'s
// 16 requests of 512 tokens 1.145).
constexpr int kPairSpan = 5, kQuadSpan = 1;
// Octets (eight CTAs a unit, 9 rows each, N = 16) when the cut's positions are at most a
// quarter of the CTAs: the octets' cut over an eighth of the grid gives each CTA at most 2
// positions. The 16-row kernel at one head (9 rows a unit on one CTA, N = 16) ran bs 1 × 1 in
// 11.8 µs and bs 1 × 512 in 12.6 against the quads' 14.3 and 15.7 at eight heads
// (results/h200/NOTES.md, twenty-eighth). A/B against the quads (same NOTES; 33 records): bs 1 ×
// 1 14.30 → 13.39 µs, bs 1 × 512 15.74 → 14.72, bs 8 × 1 and bs 8 × 21 0.959 and 0.947, bs 1 ×
// 1024 0.955, geomean 0.990; the quads and pairs 1-3% slower (bs 1 × 4096 1.028,
// `paths-heads16-two-row-tiles` 1.022). At most an eighth (octet spans of 1 position) gained
// less: 0.998, bs 8 × 1 and 8 × 21 1.01. The octets' test sits inside the quads' branch, so that
// the one-CTA walk keeps its place at the start of the kernel's code (as a branch of its own
// before the quads', ptxas laid the octets out first and the one-CTA walk 52 KB later; the
// same layout effect cost mla_onepass's one-CTA walk 2-6%, NOTES.md, twenty-eighth).
constexpr int kOctTotal = 4;

// Where a kernel's prefix array lies: inside the ring of each of its layouts.
template <Unit kRows, Unit kPair, Unit kQuad, Unit kOct> constexpr bool prefix_in_rings()
{
    constexpr int end = Smem<kRows>::kv + 4 * (kMaxBatch + 1);
    return Smem<kRows>::kv >= Smem<kPair>::kv && Smem<kRows>::kv >= Smem<kQuad>::kv &&
           Smem<kRows>::kv >= Smem<kOct>::kv && end <= Smem<kPair>::bars && end <= Smem<kQuad>::bars &&
           end <= Smem<kOct>::bars;
}
static_assert(prefix_in_rings<Unit::Rows72, Unit::Pair72, Unit::Quad72, Unit::Oct72>() &&
                  prefix_in_rings<Unit::Rows64, Unit::Rows64, Unit::Quad64, Unit::Oct64>() &&
                  prefix_in_rings<Unit::Rows32, Unit::Rows32, Unit::Quad32, Unit::Oct32>(),
              "every kernel's prefix array lies in the ring of each of its layouts");

// A CTA of the 72-, 64- or 32-row kernel: its units on one CTA or, when a launch is short, on a
// quad or an octet (kQuadSpan, kOctTotal) or a pair (kPairSpan; kPair == kRows: no pairs).
template <Unit kRows, Unit kPair, Unit kQuad, Unit kOct>
__device__ __forceinline__ void cta_cuts(const vb_verify_params &p, void *ws, const SchedConfig &c, Sched<kRows> *sched,
                                         Sched<kPair> *pair_sched, Sched<kQuad> *quad_sched, Sched<kOct> *oct_sched,
                                         PieceState *ps)
{
    unsigned char *sm = aligned_smem();
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0); // warp-uniform for ptxas
    int *pos = reinterpret_cast<int *>(sm + Smem<kRows>::kv);       // inside the ring of every layout
    const int total = Sched<kRows>::start_positions(p, c, pos);
    const int span = (total + c.grid - 1) / c.grid;
    if (span <= kQuadSpan) {
        if (kOctTotal * total <= c.grid)
            cta_walk<kOct>(p, ws, c, oct_sched, ps, sm, wg, pos, total);
        else
            cta_walk<kQuad>(p, ws, c, quad_sched, ps, sm, wg, pos, total);
    }
    else if (kPair != kRows && span <= kPairSpan)
        cta_walk<kPair>(p, ws, c, pair_sched, ps, sm, wg, pos, total);
    else
        cta_walk<kRows>(p, ws, c, sched, ps, sm, wg, pos, total);
}

__global__ void __launch_bounds__(kThreads, 1) wgmma_kernel_72(vb_verify_params p, void *ws, SchedConfig c)
{
    __shared__ Sched<Unit::Rows72> sched[4];
    __shared__ Sched<Unit::Pair72> pair_sched[4];
    __shared__ Sched<Unit::Quad72> quad_sched[4];
    __shared__ Sched<Unit::Oct72> oct_sched[4];
    __shared__ PieceState ps[4];
    cta_cuts<Unit::Rows72, Unit::Pair72, Unit::Quad72, Unit::Oct72>(p, ws, c, sched, pair_sched, quad_sched, oct_sched,
                                                                    ps);
}

// The 64-row kernel (33-64 rows a request, 17-64 when measured) takes quads (16 rows a CTA, N = 16)
// and octets (8, N = 8) at the 72-row kernel's thresholds, but no pairs. A/B against the kernel of
// one walk (results/h200/NOTES.md, twenty-ninth; 57 records): bs 1 × 1 at 2 heads 16.3 → 11.7 µs,
// at 4 heads 16.8 → 11.8, bs 8 × 1 at 4 heads 17.8 → 12.9, `widths` (quads) 23.5 → 19.5; the
// one-CTA walk unchanged (tree-eagle64 1.007, tree-eagle8 0.995); geomean 0.956. Pairs of 32 rows
// (N = 32) up to kPairSpan were slower than the one-CTA walk (2 heads, bs 8 × 4096: 1.147; bs 1 ×
// 32k: 1.093; tree-eagle8 1.054). The octets alone, in a branch of their own, were laid out before
// the one-CTA walk, which ran 3-6% slower (tree-eagle8 1.056, tree-eagle64 1.039).
// The 32-row kernel (17-32 rows a request) holds the same three walks: one CTA at N = 32 with
// the pairs' 21-block ring, quads of 8 rows and octets of 4 (both N = 8). Before it those
// requests ran in the 64-row kernel, where 18 rows filled only two CTAs of a quad. A/B at 2
// heads (results/h200/NOTES.md, twenty-ninth; the 8 `few-heads` records): geomean 0.944, bs 8 ×
// 4096 27.7 → 23.5 µs, bs 1 × 32k 27.4 → 24.5, bs 8 × 512 18.1 → 16.5, the octets' 1-token
// launches unchanged (1.004-1.014). With its one-CTA walk alone it measured 0.979: 13-15% slower
// at the 1- and 512-token launches, which then lacked the octets.
// Two kernels rather than one __global__ template over the unit kinds: as a template, ptxas
// compiled both differently (spills 60 / 88 and 40 / 60 B instead of 68 / 104 and 56 / 92),
// code that has not been measured.
__global__ void __launch_bounds__(kThreads, 1) wgmma_kernel_64(vb_verify_params p, void *ws, SchedConfig c)
{
    __shared__ Sched<Unit::Rows64> sched[4];
    __shared__ Sched<Unit::Quad64> quad_sched[4];
    __shared__ Sched<Unit::Oct64> oct_sched[4];
    __shared__ PieceState ps[4];
    cta_cuts<Unit::Rows64, Unit::Rows64, Unit::Quad64, Unit::Oct64>(p, ws, c, sched, sched, quad_sched, oct_sched, ps);
}

__global__ void __launch_bounds__(kThreads, 1) wgmma_kernel_32(vb_verify_params p, void *ws, SchedConfig c)
{
    __shared__ Sched<Unit::Rows32> sched[4];
    __shared__ Sched<Unit::Quad32> quad_sched[4];
    __shared__ Sched<Unit::Oct32> oct_sched[4];
    __shared__ PieceState ps[4];
    cta_cuts<Unit::Rows32, Unit::Rows32, Unit::Quad32, Unit::Oct32>(p, ws, c, sched, sched, quad_sched, oct_sched, ps);
}

__global__ void __launch_bounds__(kThreads, 1) wgmma_kernel_16(vb_verify_params p, void *ws, SchedConfig c)
{
    __shared__ Sched<Unit::Rows16> sched[4];
    __shared__ PieceState ps[4];
    cta<Unit::Rows16>(p, ws, c, sched, ps);
}

// ---- host side ------------------------------------------------------------------------------

// The cut of a launch of these limits. Units of 16 rows when every request's rows fit (a
// 2-token tree at 8 heads, a 9-token one at 1 head), so that Sᵀ, the softmax and Oᵀ run at
// N = 16; of 32 when they fit there (N = 32); of 64 when a request needs no more units of 64
// than of 72 (512 rows: 8 units of 64 instead of 7 of 72 and one of 8 that costs a whole unit's
// MMAs); of 72 otherwise (fewer units are fewer passes over the KV).
SchedConfig config_for(const vb_verify_params &lim)
{
    const int64_t rows = (int64_t)lim.max_draft * lim.heads;
    const auto units = [rows](int unit_rows) { return (rows + unit_rows - 1) / unit_rows; };
    const int unit_rows = rows <= kFewRows                         ? kFewRows
                          : rows <= kSmallRows                     ? kSmallRows
                          : units(kMidRows) == units(kMaxRows) ? kMidRows
                                                               : kMaxRows;
    return sched_config(lim, unit_rows, rows > 0 ? (int)units(unit_rows) : 1, kC0, kMinSpan, kKeys * kDqk * 2);
}

// The kernel of a cut's unit size.
decltype(&wgmma_kernel_72) kernel_for(const SchedConfig &c)
{
    return c.rows == kFewRows     ? wgmma_kernel_16
           : c.rows == kSmallRows ? wgmma_kernel_32
           : c.rows == kMidRows   ? wgmma_kernel_64
                                  : wgmma_kernel_72;
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
    if (smem_exceeds_optin(kSmemAlloc, why, n))
        return 1;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kernel_for(config_for(*p))) == cudaSuccess &&
        128 * (kProducerRegs + kScorerRegs) + 256 * kValueRegs > kThreads * fa.numRegs) {
        snprintf(why, n, "built with %d registers a thread: too few for the warpgroups' setmaxnreg split %d/%d/%d",
                 fa.numRegs, kProducerRegs, kScorerRegs, kValueRegs);
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
    const SchedConfig c = config_for(*p);
    const auto kernel = kernel_for(c);
    static bool set = false; // host-side attributes, every unit size's kernel at once: allowed while a capture is open
    if (!set) {
        for (const auto k : {wgmma_kernel_16, wgmma_kernel_32, wgmma_kernel_64, wgmma_kernel_72})
            if (cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemAlloc))
                return e;
        set = true;
    }
    kernel<<<c.grid, kThreads, kSmemAlloc, stream>>>(*p, ws, c);
    if (cudaError_t e = cudaGetLastError())
        return e;
    return launch_combine<kDv, true>(*p, ws, c, stream);
}

} // namespace

extern "C" const vb_kernel vb_kernel_mla_wgmma = {
    "mla_wgmma",
    "Hopper: every row of a request per CTA, wgmma (keys on M; rows on M for 64-row units), a producer warpgroup, sm_90a only",
    90, 1, workspace_bytes, unsupported, launch};
