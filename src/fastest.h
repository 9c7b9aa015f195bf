/* fastest: which kernel to run on the GPU a run measured, from its results alone.
 *
 * A shape is one scenario and variant. Each shape's records of one mode (graph replay, as
 * SGLang runs the verify step; eager when nothing was replayed) are ranked by hot median, and
 * only records that passed every check and were timed take part: a kernel that is fast and
 * wrong never wins. The fastest leads clearly when the runner-up is slower by more than both
 * records' noise (half their p10-p90 spreads, as `compare` counts noise); otherwise the two
 * are within each other's noise. For the question "one kernel for everything?", every kernel
 * also gets its time over each shape's fastest, as a geometric mean and a worst case, over the
 * shapes it passed. */
#ifndef VB_FASTEST_H
#define VB_FASTEST_H

#include <stdio.h>

#include "result.h"

typedef struct vb_shape_pick {
    int scenario;            /* index into the results' scenarios */
    const char *variant;
    int best, runner_up;     /* record indices; runner_up is -1 when one kernel alone passed */
    int clear;               /* the runner-up is slower by more than the two records' noise */
} vb_shape_pick;

typedef struct vb_kernel_fit {
    const char *kernel;
    int wins, clear_wins;    /* shapes it is fastest on; of those, the ones it leads clearly */
    int shapes;              /* shapes it passed and was timed on */
    double geomean, worst;   /* its time / the shape's fastest: geometric mean and largest */
    int worst_pick;          /* index into picks of the largest */
} vb_kernel_fit;

typedef struct vb_fastest {
    vb_mode mode;
    vb_shape_pick *picks;    /* in the order the shapes first appear in the run */
    int n_picks;
    vb_kernel_fit *kernels;  /* most wins first, then the lowest geometric mean */
    int n_kernels;
    int one_for_all;         /* index into kernels of the kernel that passed every shape with the
                              * lowest geometric mean; -1 when none passed every shape */
} vb_fastest;

/* 0, or -1 when out of memory. n_picks is 0 when no record of either mode was timed. */
int vb_fastest_find(const vb_results *r, vb_fastest *out);
void vb_fastest_free(vb_fastest *f);

/* Each kernel's wins and fit, one line each, and the one-for-all line; nothing when untimed.
 * PREFIX starts every line ("- " for markdown). */
void vb_fastest_print_summary(FILE *f, const vb_results *r, const vb_fastest *x, const char *prefix);
/* A markdown table of every shape's fastest kernel and its runner-up. */
void vb_fastest_print_shapes(FILE *f, const vb_results *r, const vb_fastest *x);
/* The same as a JSON object (the results file's "fastest"); a cJSON null when untimed. */
struct cJSON *vb_fastest_json(const vb_results *r, const vb_fastest *x);

#endif
