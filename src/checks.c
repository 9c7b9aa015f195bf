#include "checks.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tolerance.h"
#include "vb_bf16.h"

static int lse_is_poison(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u == VB_F32_POISON;
}

void vb_poison_output(uint16_t *o, float *lse, int64_t tokens, int heads, int d_v)
{
    memset(o, VB_POISON_BYTE, sizeof *o * (size_t)(tokens * heads * d_v));
    if (lse)
        memset(lse, VB_POISON_BYTE, sizeof *lse * (size_t)(tokens * heads));
}

/* Element index -> [request, draft token, head, dim]. */
static void locate(const vb_instance *in, int64_t e, int64_t out[4])
{
    int64_t row = e / in->d_v, t = row / in->heads;
    out[0] = t / in->draft;
    out[1] = t % in->draft;
    out[2] = row % in->heads;
    out[3] = e % in->d_v;
}

/* Layers 1-3: what was written where. Returns the first bad element or -1. */
static int64_t check_coverage(const vb_instance *in, const vb_kernel_output *out, vb_checks *c)
{
    const int64_t row = (int64_t)in->heads * in->d_v;
    int64_t first_bad = -1;
    for (int64_t e = out->launch_tokens * row; e < out->capacity_tokens * row; e++)
        c->stray += out->o[e] != VB_BF16_POISON;
    for (int64_t i = out->launch_tokens * in->heads; out->lse && i < out->capacity_tokens * in->heads; i++)
        c->stray += !lse_is_poison(out->lse[i]);
    for (int64_t e = 0; e < out->launch_tokens * row; e++) {
        uint16_t h = out->o[e];
        int bad = 0;
        if (h == VB_BF16_POISON)
            c->unwritten++, bad = 1;
        else if (!vb_bf16_is_finite(h))
            c->nonfinite++, bad = 1;
        if (bad && first_bad < 0)
            first_bad = e;
    }
    return first_bad;
}

/* Layer 4-5: numbers on the live rows. */
static void check_numbers(const vb_instance *in, const vb_oracle_out *ref, const vb_kernel_output *out,
                          vb_checks *c, int64_t *worst_e)
{
    const int64_t n = in->live_tokens * in->heads * in->d_v;
    double err2 = 0, ref2 = 0;
    *worst_e = -1;
    for (int64_t e = 0; e < n; e++) {
        double got = vb_bf16_to_float(out->o[e]), want = ref->o[e];
        double err = fabs(got - want), ratio = err / vb_tolerance(want, ref->absw[e]);
        if (!(ratio <= 1.0))
            c->out_of_tol++;
        if (!(ratio <= c->max_err_ratio)) { /* NaN counts as worst */
            c->max_err_ratio = isnan(ratio) ? INFINITY : ratio;
            *worst_e = e;
        }
        c->max_abs_err = err > c->max_abs_err ? err : c->max_abs_err;
        err2 += (got - want) * (got - want);
        ref2 += want * want;
    }
    c->elements = n;
    c->rel_l2 = ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
    c->lse_max_err = NAN;
    if (!out->lse)
        return;
    c->lse_max_err = 0;
    for (int64_t i = 0; i < in->live_tokens * in->heads; i++) {
        double err = fabs((double)out->lse[i] - ref->lse[i]);
        if (isinf(ref->lse[i]) && out->lse[i] == ref->lse[i])
            err = 0;
        if (!(err <= VB_TOL_LSE))
            c->lse_bad++;
        if (!(err <= c->lse_max_err))
            c->lse_max_err = isnan(err) ? INFINITY : err;
    }
}

vb_status vb_check_output(const vb_instance *in, const vb_oracle_out *ref, const vb_verdict_ref *vref,
                          const vb_kernel_output *out, int threads, vb_checks *c, char *msg, size_t n)
{
    memset(c, 0, sizeof *c);
    c->ran = 1;
    msg[0] = 0;
    int64_t loc[4], worst_e;
    int64_t first_bad = check_coverage(in, out, c);
    check_numbers(in, ref, out, c, &worst_e);
    if (worst_e >= 0) {
        locate(in, worst_e, loc);
        memcpy(c->worst, loc, sizeof loc);
    }
    vb_verdict v = vb_verdict_judge(vref, in, out->o, threads);
    c->rows = v.rows;
    c->token_mismatches = v.mismatches;
    c->near_ties = v.near_ties;
    c->requests = v.requests;
    c->paths_equal = v.paths_equal;
    c->paths_near_tie = v.paths_near_tie;
    c->accepted_mean = v.accepted_mean;

    if (c->stray) {
        snprintf(msg, n, "%lld elements written past the launch's %lld rows", (long long)c->stray,
                 (long long)out->launch_tokens);
    } else if (c->unwritten || c->nonfinite) {
        locate(in, first_bad, loc);
        snprintf(msg, n, "%lld elements unwritten, %lld NaN/Inf; first at request %lld token %lld head %lld dim %lld%s",
                 (long long)c->unwritten, (long long)c->nonfinite, (long long)loc[0], (long long)loc[1],
                 (long long)loc[2], (long long)loc[3], loc[0] >= in->live_batch ? " (padding)" : "");
    } else if (c->out_of_tol) {
        snprintf(msg, n, "%lld elements beyond tolerance; worst err/tol %.3g at request %lld token %lld head %lld dim %lld: got %.6g, want %.6g",
                 (long long)c->out_of_tol, c->max_err_ratio, (long long)loc[0], (long long)loc[1],
                 (long long)loc[2], (long long)loc[3], vb_bf16_to_float(out->o[worst_e]), ref->o[worst_e]);
    } else if (c->lse_bad) {
        snprintf(msg, n, "%lld lse values off by more than %g (max %.3g)", (long long)c->lse_bad, VB_TOL_LSE,
                 c->lse_max_err);
    } else if (c->token_mismatches || c->paths_equal + c->paths_near_tie < c->requests) {
        snprintf(msg, n, "token-exact: %lld rows pick another token with a clear margin (first: row %lld); %d of %d accepted paths differ",
                 (long long)c->token_mismatches, (long long)v.worst_row, c->requests - c->paths_equal,
                 c->requests);
    } else {
        return VB_PASS;
    }
    return VB_FAIL;
}
