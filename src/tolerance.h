/* The numeric tolerance of a kernel output element against the oracle, from bf16 rounding.
 *
 * u = 2^-9 is bf16's unit roundoff (8-bit significand). A kernel that
 *   - rounds its output to bf16 errs by at most u·|o|;
 *   - rounds the softmax weights p_j to bf16 before the PV product errs by at most
 *     u·Σ_j p_j|v_j[d]| (the oracle returns that sum as absw);
 *   - computes scores and accumulates in fp32 errs far less (2^-24 per operation; at most
 *     about 2^-11·absw for 2^18 keys summed in flash-style tiles).
 * Twice the two bf16 terms bounds all three: tol = 2u·(|o| + absw) + 2^-24. */
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
