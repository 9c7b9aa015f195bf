/* The device schedule's cut (kernels/mla_schedule.cuh), walked on the host for every CTA of a
 * grid and checked, so that the tests can prove on a machine without a GPU that the cut loses
 * no tile, gives no tile twice and never has two pieces share a partial slot. */
#ifndef VB_SCHEDULE_CHECK_H
#define VB_SCHEDULE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A scheduled kernel's configuration: keys per KV tile (64: mla_wgmma, 32: mla_onepass), rows
 * per unit, a piece's fixed cost and the smallest span in tiles, the grid (CTAs), the CTAs
 * that share each span (1; 2 for row pairs, 4 for quads, both kernels; 8 for mla_wgmma's
 * octets; 0 reads as 1), the span above which the combine drops merged partials from L2
 * (0: an H200's, 60 MB of L2 over the grid's tiles, as drop_span_for computes it there), and
 * whether the cut aligns a uniform batch's units to its spans (cut_span in mla_schedule.cuh:
 * mla_wgmma's 64-row walk on one CTA does, no other cut). */
typedef struct {
    int keys_per_tile;
    int rows;
    int c0;
    int min_span;
    int grid;
    int halves;
    int drop_span;
    int align;
} vb_sched_config;

/* Bugs to plant in the walk's output before it is checked (to see the checks fail). */
enum {
    VB_SCHED_NO_BUG = 0,
    VB_SCHED_BUG_DROP_PIECE = 1,
    VB_SCHED_BUG_SHARED_SLOT = 2,
    VB_SCHED_BUG_COMBINE_ROW = 3,
    VB_SCHED_BUG_TWIN = 4, /* row pairs or quads: one CTA of a group walks a piece the first does not */
    VB_SCHED_BUG_DROP_LINE = 5, /* the combine drops the line after one it merged instead of it */
    VB_SCHED_BUG_FAST_DIV = 6   /* vb_fast_div_check: the reciprocal rounded down */
};

/* Walks the cut of a batch (request b: prefix_lens[b] keys of prefix, draft_lens[b] draft tokens,
 * heads query heads) for every CTA of cfg->grid, and checks that CTAs sharing a span (row pairs:
 * 2g and 2g + 1; quads: 4g .. 4g + 3) walk the same pieces, that every tile of every unit is in
 * exactly one non-empty piece, that the pieces of a unit agree on its plan (piece count, first
 * slot), that exactly its first piece owns the plan, that a unit is written directly exactly
 * when it is one piece, and that the partial slots of cut units are the ones the combine reads
 * (piece k at piece_slot(plan, k)), below 2 * grid and all distinct; then that the combine's
 * items (combine_item over the plans the walk recorded, stale entries for the units not in the
 * batch) merge every row of every cut unit exactly once in each d_v slice and touch no other
 * row (VB_SCHED_BUG_COMBINE_ROW drops the items of one cut row); and that every unit's plan
 * carries the launch's drop decision (its span above drop_span), and, when it is set, that the
 * partial lines the combine drops after merging (MergedLines, as drop_listed walks them) are
 * exactly the lines each item's merge reads, none read by two items. Returns 0 when all hold,
 * else 1 with the first violation in why; 2 (with why) for a configuration it cannot walk.
 * pieces_out, when not NULL, receives the number of pieces walked; cut_out the cut units;
 * dropped_out the partial lines the combine drops. */
int vb_schedule_check(int batch, const int64_t *prefix_lens, const int64_t *draft_lens, int heads,
                      const vb_sched_config *cfg, int plant_bug, long *pieces_out, long *cut_out, long *dropped_out,
                      char *why, size_t n);

/* The combine numbers its items by divisions by launch constants done as a multiply-high by a
 * reciprocal the host computes (FastDiv, kernels/mla_schedule.cuh). Checks its quotient and
 * remainder against the hardware's for every divisor 1 .. max_divisor and the powers of two up to
 * 2^31 and their neighbours, at the edges (multiples of the divisor, 2^31 - 1) and at
 * pseudo-random dividends below 2^31. Returns 0 when all agree, else 1 with the first
 * disagreement in why. */
int vb_fast_div_check(unsigned max_divisor, int plant_bug, char *why, size_t n);

#ifdef __cplusplus
}
#endif

#endif
