/* compare: two results files into a verdict a CI job or a reviewer can act on.
 *
 * Records are matched by (scenario shape key, variant, kernel, mode). A timing change is
 * real only when it exceeds both the threshold and the noise the two runs measured: the
 * hot medians must differ by more than the sum of both half-spreads ((p90 - p10) / 2 each).
 * A pass that became FAIL or ERROR, or a token verdict that changed (accepted paths equal
 * to the oracle's, rows whose token differs), is a regression whatever the timing. */
#ifndef VB_COMPARE_H
#define VB_COMPARE_H

#include <stdio.h>

#include "cli.h"
#include "result.h"

typedef enum vb_verdict_kind {
    VB_CMP_SAME,      /* within the threshold or the noise */
    VB_CMP_FASTER,
    VB_CMP_SLOWER,    /* a regression */
    VB_CMP_FIXED,     /* FAIL/ERROR before, pass now */
    VB_CMP_BROKEN,    /* pass before, FAIL or ERROR now: a regression */
    VB_CMP_TOKENS,    /* the token verdict changed: a regression */
    VB_CMP_UNTIMED,   /* matched, but one side has no timing (no GPU, skipped, unsupported) */
    VB_CMP_OLD_ONLY,  /* present in the old file only */
    VB_CMP_NEW_ONLY   /* present in the new file only */
} vb_verdict_kind;

typedef struct vb_compare_row {
    const vb_record *old_rec, *new_rec; /* either NULL for *_ONLY */
    const char *scenario;               /* name, from whichever side has it */
    vb_verdict_kind kind;
    double change;                      /* new / old - 1 of the hot medians; NaN if untimed */
    double noise_us;                    /* half-spread of old plus half-spread of new */
} vb_compare_row;

typedef struct vb_compare {
    vb_compare_row *rows;
    int n_rows;
    int regressions;                    /* SLOWER + BROKEN + TOKENS */
    double threshold;                   /* as a fraction: 0.05 for 5% */
    char old_kernel[48], new_kernel[48]; /* a kernel pair (vb_compare_kernels); empty otherwise */
} vb_compare;

/* 0, or -1 with why when the two runs cannot be compared: different GPU names or drivers
 * (unless allow_different_gpu), or out of memory. */
int vb_compare_results(const vb_results *old_r, const vb_results *new_r, double threshold,
                       int allow_different_gpu, vb_compare *out, char *why, size_t why_len);
/* The same for two kernels: old_kernel's records in old_r against new_kernel's in new_r
 * (which may be the same run), matched by shape key, variant and mode; other kernels' records
 * are left out. "Is the new kernel slower than the old one anywhere, beyond the noise?" */
int vb_compare_kernels(const vb_results *old_r, const vb_results *new_r, double threshold, int allow_different_gpu,
                       const char *old_kernel, const char *new_kernel, vb_compare *out, char *why, size_t why_len);
void vb_compare_free(vb_compare *c);
const char *vb_verdict_kind_name(vb_verdict_kind k);

/* Geometric mean of new / old hot medians over a kernel's rows timed on both sides, in one
 * mode; NaN when there is none. count receives how many rows went in. */
double vb_compare_geomean(const vb_compare *c, const char *kernel, vb_mode mode, int *count);

/* The verdict as a terminal table, a markdown table for a pull request, or JSON. */
void vb_compare_print(FILE *f, vb_format fmt, const vb_compare *c, const vb_results *old_r,
                      const vb_results *new_r);

#endif
