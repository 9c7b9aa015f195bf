// The device schedule's cut walked on the host (schedule_check.h). The walk is mla_schedule.cuh's
// own code (Schedule::start and next, load_request, unit_cost and piece_slot are host and device
// functions); only the prefix of unit costs, which the device computes with a block-wide scan,
// is summed here in a loop.
#include "schedule_check.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "mla_schedule.cuh"

namespace {

using namespace vb;

struct Walked {
    int cta;
    Piece pc;
};

int fail(char *why, size_t n, int code, const char *fmt, long a, long b, long c)
{
    snprintf(why, n, fmt, a, b, c);
    return code;
}

// The pieces of every CTA, in walk order.
template <int kKeys, int kHalves, bool kAlign>
std::vector<Walked> walk(const vb_verify_params &p, const SchedConfig &c)
{
    std::vector<int> pos((size_t)p.batch + 1, 0);
    for (int b = 0; b < p.batch; b++)
        pos[b + 1] = pos[b] + unit_cost(load_request<kKeys>(p, c, b), c);
    std::vector<Walked> out;
    for (int g = 0; g < c.grid; g++) {
        Schedule<kKeys, 128, 0, kHalves, kAlign> s;
        if (!s.start(p, c, pos.data(), pos[p.batch], g))
            continue;
        Piece pc;
        while (s.next(p, c, pc, g))
            out.push_back({g, pc});
    }
    return out;
}

bool same_piece(const Piece &x, const Piece &y)
{
    return x.b == y.b && x.rt == y.rt && x.tile_lo == y.tile_lo && x.tile_hi == y.tile_hi && x.direct == y.direct &&
           x.slot == y.slot && x.plan_owner == y.plan_owner && x.plan.pieces == y.plan.pieces &&
           x.plan.slot0 == y.plan.slot0 && x.plan.drop == y.plan.drop;
}

// Row pairs (and quads): CTAs h·g .. h·g + h - 1 must walk the same pieces (each computes a
// share of their rows), and a CTA past the last group (grid not a multiple of h) none. Returns
// the pieces of the first CTA of each group, named by the group's index: the cut over grid / h
// CTAs that the other checks see.
int group_pieces(const std::vector<Walked> &all, int grid, int h, std::vector<Walked> &out, char *why, size_t n)
{
    std::vector<std::vector<Piece>> of_cta((size_t)grid);
    for (const Walked &w : all)
        of_cta[(size_t)w.cta].push_back(w.pc);
    for (int g = 0; g + h <= grid; g += h) {
        const std::vector<Piece> &a = of_cta[(size_t)g];
        for (int j = g + 1; j < g + h; j++) {
            const std::vector<Piece> &b = of_cta[(size_t)j];
            if (a.size() != b.size())
                return fail(why, n, 1, "CTAs %ld and %ld of a pair (or quad) walked %ld and a different number of pieces",
                            g, j, (long)a.size());
            for (size_t k = 0; k < a.size(); k++)
                if (!same_piece(a[k], b[k]))
                    return fail(why, n, 1, "CTAs %ld and %ld of a pair (or quad) differ at piece %ld", g, j, (long)k);
        }
        for (const Piece &pc : a)
            out.push_back({g / h, pc});
    }
    for (int j = grid / h * h; j < grid; j++)
        if (!of_cta[(size_t)j].empty())
            return fail(why, n, 1, "CTA %ld, outside every pair (or quad), walked %ld pieces", j,
                        (long)of_cta[(size_t)j].size(), 0);
    return 0;
}

// The checks of schedule_check.h over the walked pieces.
template <int kKeys>
int check(const vb_verify_params &p, const SchedConfig &c, const std::vector<Walked> &pieces, long *cut_out,
          char *why, size_t n)
{
    const size_t units = (size_t)p.batch * c.row_tiles;
    std::vector<std::vector<const Walked *>> of_unit(units);
    for (const Walked &w : pieces) {
        if (w.pc.tile_hi <= w.pc.tile_lo)
            return fail(why, n, 1, "CTA %ld walked an empty piece of request %ld (row tile %ld)", w.cta, w.pc.b,
                        w.pc.rt);
        of_unit[(size_t)w.pc.b * c.row_tiles + w.pc.rt].push_back(&w);
    }
    std::vector<bool> slot_taken((size_t)2 * c.grid, false);
    long cut = 0;
    for (int b = 0; b < p.batch; b++) {
        const Request r = load_request<kKeys>(p, c, b);
        for (int rt = 0; rt < c.row_tiles; rt++) {
            std::vector<const Walked *> &u = of_unit[(size_t)b * c.row_tiles + rt];
            if (rt >= r.row_tiles) {
                if (!u.empty())
                    return fail(why, n, 1, "request %ld has no row tile %ld, but %ld pieces of it were walked", b, rt,
                                (long)u.size());
                continue;
            }
            std::sort(u.begin(), u.end(), [](const Walked *x, const Walked *y) { return x->pc.tile_lo < y->pc.tile_lo; });
            int next_tile = 0;
            for (size_t k = 0; k < u.size(); k++) {
                const Piece &pc = u[k]->pc;
                if (pc.tile_lo != next_tile)
                    return fail(why, n, 1, "request %ld row tile %ld: tile %ld is in no piece or in two", b, rt,
                                std::min(pc.tile_lo, next_tile));
                next_tile = pc.tile_hi;
                if (pc.plan.pieces != (int)u.size() || pc.plan.slot0 != u[0]->pc.plan.slot0)
                    return fail(why, n, 1, "request %ld row tile %ld: a piece's plan says %ld pieces", b, rt,
                                pc.plan.pieces);
                if (pc.plan_owner != (k == 0))
                    return fail(why, n, 1, "request %ld row tile %ld: piece %ld owns the plan or the first does not",
                                b, rt, (long)k);
                if (pc.direct != (u.size() == 1))
                    return fail(why, n, 1, "request %ld row tile %ld: written directly with %ld pieces", b, rt,
                                (long)u.size());
                if (u.size() == 1)
                    continue;
                if (pc.slot != piece_slot(pc.plan, (int)k) || pc.slot < 0 || pc.slot >= 2 * c.grid)
                    return fail(why, n, 1, "request %ld row tile %ld: its pieces' slots are not what the combine reads "
                                           "(slot %ld)", b, rt, pc.slot);
                if (slot_taken[pc.slot])
                    return fail(why, n, 1, "partial slot %ld is written by two pieces (request %ld row tile %ld)",
                                pc.slot, b, rt);
                slot_taken[pc.slot] = true;
            }
            if (next_tile != r.tiles)
                return fail(why, n, 1, "request %ld row tile %ld: tiles from %ld on are in no piece", b, rt, next_tile);
            cut += u.size() > 1;
        }
    }
    if (cut_out)
        *cut_out = cut;
    return 0;
}

// With the drop bit set, the lines the combine drops after merging (MergedLines, as drop_listed
// walks each listed item's) against the lines each item's merge reads, derived here from
// PieceMerge::read's addressing: piece k's row piece_slot(plan, k) * rows + rr, all of d_v for a
// row of one block (a warp a half row or a slice) and the item's slice for a spread row. Each
// line must be read by one item only and dropped once, by the item that read it (so by the block
// that merged it), and every line read must be dropped. Every item is checked as if it were in
// the last round; the combine drops only the last round's, a subset.
int check_dropped_lines(const vb_verify_params &p, const SchedConfig &c, const CombineList &list,
                        const std::vector<PlanEntry> &plans, int plant_bug, long *dropped_out, char *why, size_t n)
{
    constexpr int kDv = kCombineSlices * kCombineSliceDims, kLine = 32; // floats in a 128-byte line
    const int items = list.items;
    const size_t lines = (size_t)2 * c.grid * c.rows * kDv / kLine;
    std::vector<int> reader(lines, -1);
    std::vector<char> dropped(lines, 0);
    long count = 0;
    for (int i = 0; i < items; i++) { // the lines each item's merge reads
        CombineItem it;
        if (!combine_item(p, list, plans.data(), i, it))
            continue;
        const int d0 = it.slice < 0 ? 0 : it.slice * kCombineSliceDims, dims = it.slice < 0 ? kDv : kCombineSliceDims;
        for (int k = 0; k < it.plan.pieces; k++)
            for (int d = d0; d < d0 + dims; d += kLine) {
                const size_t line = (((size_t)piece_slot(it.plan, k) * c.rows + it.rr) * kDv + d) / kLine;
                if (line >= lines || reader[line] >= 0)
                    return fail(why, n, 1, "partial line %ld is read by items %ld and %ld", (long)line, reader[line], i);
                reader[line] = i;
            }
    }
    bool planted = false;
    for (int i = 0; i < items; i++) { // the lines it drops
        CombineItem it;
        if (!combine_item(p, list, plans.data(), i, it))
            continue;
        const MergedLines<kDv> merged(it);
        for (int x = 0; x < it.plan.pieces * merged.lines; x++) {
            size_t off = merged.row(it, c.rows, x) * kDv + merged.col(x); // what line() adds to acc
            if (plant_bug == VB_SCHED_BUG_DROP_LINE && !planted)
                off += kLine, planted = true;
            const size_t line = off / kLine;
            if (off % kLine || line >= lines || reader[line] != i || dropped[line])
                return fail(why, n, 1, "item %ld drops partial float %ld, which it did not merge or was dropped before",
                            i, (long)off, 0);
            dropped[line] = 1;
            count++;
        }
    }
    for (size_t line = 0; line < lines; line++)
        if (reader[line] >= 0 && !dropped[line])
            return fail(why, n, 1, "partial line %ld is merged by item %ld and never dropped", (long)line, reader[line],
                        0);
    if (dropped_out)
        *dropped_out = count;
    return 0;
}

// The combine's items over the plans the walk recorded: every row of a cut unit merged once in
// each slice, no other row touched. Units not in the batch keep stale plan entries (a piece
// count the combine would spread), as a workspace from an earlier launch would.
template <int kKeys>
int check_combine(const vb_verify_params &p, const SchedConfig &c, const std::vector<Walked> &pieces, bool drop,
                  int plant_bug, long *dropped_out, char *why, size_t n)
{
    std::vector<PlanEntry> plans((size_t)p.batch * c.row_tiles, PlanEntry{1 << 20, 0, 0});
    for (const Walked &w : pieces)
        if (w.pc.plan_owner)
            plans[(size_t)w.pc.b * c.row_tiles + w.pc.rt] = w.pc.plan;
    const int unit_rows = p.batch * c.row_tiles * c.rows, items = unit_rows * kCombineSlices;
    const CombineList list(p, c);
    std::vector<int> merged((size_t)items, 0); // [unit row][slice]
    int dropped = -1;
    for (int i = 0; i < items; i++) {
        CombineItem it;
        if (!combine_item(p, list, plans.data(), i, it))
            continue;
        const int idx = i % unit_rows;
        if (plant_bug == VB_SCHED_BUG_COMBINE_ROW && (dropped < 0 || dropped == idx)) {
            dropped = idx;
            continue;
        }
        for (int s = 0; s < kCombineSlices; s++)
            merged[(size_t)idx * kCombineSlices + s] += it.slice < 0 || it.slice == s;
    }
    for (const Walked &w : pieces)
        if (w.pc.plan_owner && w.pc.plan.drop != drop)
            return fail(why, n, 1, "request %ld row tile %ld: the plan's drop bit is %ld, the launch's is not",
                        w.pc.b, w.pc.rt, w.pc.plan.drop);
    if (drop)
        if (int rc = check_dropped_lines(p, c, list, plans, plant_bug, dropped_out, why, n))
            return rc;
    for (int b = 0; b < p.batch; b++) {
        const Request r = load_request<kKeys>(p, c, b);
        for (int rt = 0; rt < c.row_tiles; rt++)
            for (int rr = 0; rr < c.rows; rr++) {
                const int idx = (b * c.row_tiles + rt) * c.rows + rr;
                const bool cut = rt < r.row_tiles && rt * c.rows + rr < r.T * p.heads &&
                                 plans[(size_t)b * c.row_tiles + rt].pieces > 1;
                for (int s = 0; s < kCombineSlices; s++)
                    if (merged[(size_t)idx * kCombineSlices + s] != (int)cut)
                        return fail(why, n, 1, "request %ld row %ld: slice %ld merged a wrong number of times", b,
                                    rt * c.rows + rr, s);
            }
    }
    return 0;
}

// FastDiv's quotient and remainder against the hardware's for one divisor: at the edges (0, the
// multiples of d and their neighbours, 2^31 - 1) and at pseudo-random n below 2^31.
int check_fast_div(unsigned d, bool plant_bug, char *why, size_t n)
{
    FastDiv f(d);
    if (plant_bug)
        f.m -= 1; // the reciprocal rounded down: too small for some n
    const unsigned top = 0x7fffffffu, last = top / d * d;
    unsigned probe[9 + 64] = {0, 1, d - 1, d, d + 1, last - 1, last, top - 1, top};
    uint64_t x = 0x9e3779b97f4a7c15ull ^ d;
    for (int k = 9; k < 9 + 64; k++)
        x = x * 6364136223846793005ull + 1442695040888963407ull, probe[k] = (unsigned)(x >> 33);
    for (unsigned v : probe) {
        if (v > top)
            continue;
        const unsigned q = f.div(v);
        if (q != v / d || f.mod(v, q) != v % d)
            return fail(why, n, 1, "FastDiv(%ld): %ld / d gives %ld", (long)d, (long)v, (long)q);
    }
    return 0;
}

template <int kKeys, bool kAlign>
int run(const vb_verify_params &p, SchedConfig c, int halves, int plant_bug, long *pieces_out, long *cut_out,
        long *dropped_out, char *why, size_t n)
{
    int64_t positions = 0; // the device sums them in an int
    for (int b = 0; b < p.batch; b++) {
        const Request r = load_request<kKeys>(p, c, b);
        positions += (int64_t)r.row_tiles * (r.tiles + c.c0);
    }
    if (positions > INT32_MAX)
        return fail(why, n, 2, "%ld positions do not fit the schedule's int (batch %ld, heads %ld)", (long)positions,
                    p.batch, p.heads);
    std::vector<Walked> pieces;
    if (halves > 1) {
        std::vector<Walked> all = halves == 2   ? walk<kKeys, 2, kAlign>(p, c)
                                  : halves == 4 ? walk<kKeys, 4, kAlign>(p, c)
                                                : walk<kKeys, 8, kAlign>(p, c);
        if (plant_bug == VB_SCHED_BUG_TWIN) // the last CTA of a group ends its first piece a tile late
            for (Walked &w : all)
                if (w.cta % halves == halves - 1) {
                    w.pc.tile_hi++;
                    break;
                }
        if (int rc = group_pieces(all, c.grid, halves, pieces, why, n))
            return rc;
        c.grid /= halves; // the spans, each walked by one group
    } else {
        pieces = walk<kKeys, 1, kAlign>(p, c);
    }
    if (plant_bug == VB_SCHED_BUG_DROP_PIECE && !pieces.empty())
        pieces.erase(pieces.begin() + (long)pieces.size() / 2);
    if (plant_bug == VB_SCHED_BUG_SHARED_SLOT) // a non-owner piece writes its CTA's other slot
        for (Walked &w : pieces)
            if (!w.pc.direct && !w.pc.plan_owner) {
                w.pc.slot = 2 * w.cta + 1;
                break;
            }
    if (pieces_out)
        *pieces_out = (long)pieces.size();
    if (int rc = check<kKeys>(p, c, pieces, cut_out, why, n))
        return rc;
    // The launch's drop decision, from its total (Schedule::start's span, over grid / halves spans):
    // drop when the distinct KV streamed, span · grid / halves tiles, overflows drop_span · grid.
    const int first = unit_cost(load_request<kKeys>(p, c, 0), c); // pos[1], as Schedule::start reads it
    const int span = cut_span<kAlign>(c, c.grid, p.batch, first, (int)positions);
    return check_combine<kKeys>(p, c, pieces, span > c.drop_span * halves, plant_bug, dropped_out, why, n);
}

} // namespace

extern "C" int vb_schedule_check(int batch, const int64_t *prefix_lens, const int64_t *draft_lens, int heads,
                                 const vb_sched_config *cfg, int plant_bug, long *pieces_out, long *cut_out,
                                 long *dropped_out, char *why, size_t n)
{
    const int halves = cfg->halves ? cfg->halves : 1;
    if (batch < 1 || heads < 1 || cfg->grid < halves || cfg->rows < 8 || cfg->rows % 8 || cfg->c0 < 0 ||
        cfg->min_span < 1 || (halves != 1 && halves != 2 && halves != 4 && halves != 8))
        return fail(why, n, 2, "cannot walk batch %ld, heads %ld, grid %ld (or rows, c0, min_span, halves)", batch,
                    heads, cfg->grid);
    std::vector<int64_t> kv(batch + 1, 0), qo(batch + 1, 0), mask(batch + 1, 0);
    int64_t max_draft = 0;
    for (int b = 0; b < batch; b++) {
        kv[b + 1] = kv[b] + prefix_lens[b];
        qo[b + 1] = qo[b] + draft_lens[b];
        max_draft = std::max(max_draft, draft_lens[b]);
    }
    vb_verify_params p = {};
    p.batch = batch, p.heads = heads;
    p.kv_indptr = kv.data(), p.qo_indptr = qo.data(), p.mask_indptr = mask.data();
    p.kv_indptr_width = p.qo_indptr_width = p.mask_indptr_width = VB_I64;
    SchedConfig c;
    c.grid = cfg->grid, c.rows = cfg->rows, c.c0 = cfg->c0, c.min_span = cfg->min_span;
    c.row_tiles = max_draft > 0 ? (int)((max_draft * heads + c.rows - 1) / c.rows) : 1;
    c.drop_span = cfg->drop_span > 0 ? cfg->drop_span : drop_span_of(60 << 20, c.grid, cfg->keys_per_tile * 576 * 2);
    c.heads = FastDiv((unsigned)heads);
    switch (cfg->keys_per_tile) {
    case 64:
        return cfg->align ? run<64, true>(p, c, halves, plant_bug, pieces_out, cut_out, dropped_out, why, n)
                          : run<64, false>(p, c, halves, plant_bug, pieces_out, cut_out, dropped_out, why, n);
    case 32:
        return cfg->align ? run<32, true>(p, c, halves, plant_bug, pieces_out, cut_out, dropped_out, why, n)
                          : run<32, false>(p, c, halves, plant_bug, pieces_out, cut_out, dropped_out, why, n);
    default:
        return fail(why, n, 2, "no scheduled kernel has %ld keys a tile (64 or 32)", cfg->keys_per_tile, 0, 0);
    }
}

extern "C" int vb_fast_div_check(unsigned max_divisor, int plant_bug, char *why, size_t n)
{
    for (unsigned d = 1; d <= max_divisor; d++)
        if (int rc = check_fast_div(d, plant_bug == VB_SCHED_BUG_FAST_DIV, why, n))
            return rc;
    for (unsigned l = 1; l <= 31; l++) // the powers of two up to 2^31 and their neighbours
        for (unsigned d : {(1u << l) - 1, 1u << l, (1u << l) + 1})
            if (d <= 0x80000000u)
                if (int rc = check_fast_div(d, plant_bug == VB_SCHED_BUG_FAST_DIV, why, n))
                    return rc;
    return 0;
}
