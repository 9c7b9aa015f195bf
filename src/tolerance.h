/* The numeric tolerance of a kernel output element against the oracle, from bf16 rounding.
 *
 * u = 2^-8 is bf16's unit roundoff (8-bit significand: round to nearest errs by at most half an
 * ulp, 2^-8 of the value). A kernel that
 *   - rounds its output to bf16 errs by at most u·|o|;
 *   - rounds the softmax weights p_j to bf16 before the PV product errs by at most
 *     u·Σ_j p_j|v_j[d]| (the oracle returns that sum as absw);
 *   - computes scores and accumulates in fp32 errs far less (2^-24 per operation; at most
 *     about 2^-11·absw for 2^18 keys summed in flash-style tiles, and far less in practice,
 *     where independent rounding errors grow as the square root of their number).
 * The tolerance is the two bf16 terms' worst cases summed: tol = u·(|o| + absw) + 2^-24. Since
 * |o| <= absw, the output's rounding alone uses at most half of it. It leaves no room for a
 * third bf16 rounding: mla_wgmma and mla_onepass with their split partials rounded to bf16
 * before the combine measured err/tol up to 1.1 on 15-16 of 60 records (results/h200/NOTES.md,
 * eighteenth session). */
#ifndef VB_TOLERANCE_H
#define VB_TOLERANCE_H

#include <math.h>

#define VB_TOL_REL 0x1p-8
#define VB_TOL_ABS 0x1p-24
/* lse: fp32 scores over d_qk <= 576 products err by < 1e-4 in practice; 1e-3 leaves room. */
#define VB_TOL_LSE 1e-3

static inline double vb_tolerance(double ref, double absw)
{
    return VB_TOL_REL * (fabs(ref) + absw) + VB_TOL_ABS;
}

#endif
