#include "verdict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "prng.h"
#include "tolerance.h"
#include "vb_bf16.h"

static void make_lm_head(vb_verdict_ref *r)
{
    vb_prng rng = vb_prng_make(VB_LM_SEED, (uint64_t)r->width);
    for (int64_t i = 0; i < (int64_t)r->vocab * r->width; i++)
        r->lm_head[i] = (float)(2.0 * vb_prng_unit(&rng) - 1.0);
}

/* Top token of one row of H·d_v activations; also the runner-up and the gap to it. */
static int top2(const vb_verdict_ref *r, const double *x, int *runner_up, double *margin)
{
    double best = -INFINITY, second = -INFINITY;
    int arg = 0, arg2 = 0;
    for (int v = 0; v < r->vocab; v++) {
        const float *w = r->lm_head + (int64_t)v * r->width;
        double z = 0;
        for (int k = 0; k < r->width; k++)
            z += w[k] * x[k];
        if (z > best)
            second = best, arg2 = arg, best = z, arg = v;
        else if (z > second)
            second = z, arg2 = v;
    }
    if (margin)
        *margin = best - second, *runner_up = arg2;
    return arg;
}

typedef struct rows_job {
    vb_verdict_ref *r;
    const vb_oracle_out *ref;
    const uint16_t *o;
    int *tokens_out;
    double **scratch;
} rows_job;

static void oracle_row(int64_t t, int worker, void *ctx)
{
    rows_job *j = ctx;
    const double *x = j->ref->o + t * j->r->width, *a = j->ref->absw + t * j->r->width;
    int second = 0;
    int first = j->r->top1[t] = top2(j->r, x, &second, &j->r->margin[t]);
    /* Errors e_k within tolerance, independent across k, move the top-2 gap by
     * sum_k (W1k - W2k) e_k: its standard deviation is at most this root-sum-square. */
    const float *w1 = j->r->lm_head + (int64_t)first * j->r->width;
    const float *w2 = j->r->lm_head + (int64_t)second * j->r->width;
    double ss = 0;
    for (int k = 0; k < j->r->width; k++) {
        double d = (double)(w1[k] - w2[k]) * vb_tolerance(x[k], a[k]);
        ss += d * d;
    }
    j->r->bound[t] = VB_TIE_SIGMAS * sqrt(ss);
    (void)worker;
}

static void kernel_row(int64_t t, int worker, void *ctx)
{
    rows_job *j = ctx;
    double *x = j->scratch[worker];
    for (int k = 0; k < j->r->width; k++)
        x[k] = vb_bf16_to_float(j->o[t * j->r->width + k]);
    j->tokens_out[t] = top2(j->r, x, NULL, NULL);
}

int vb_tree_walk(const vb_tree *t, const int *draft_token, const int *target_token, int *path, int *bonus)
{
    int node = 0, len = 0;
    for (;;) {
        int next = -1;
        for (int c = node + 1; c < t->nodes && next < 0; c++)
            if (t->parent[c] == node && draft_token[c] == target_token[node])
                next = c;
        if (next < 0)
            break;
        path[len++] = next;
        node = next;
    }
    *bonus = target_token[node];
    return len;
}

/* Draft tokens: at each node, with probability accept_prob one random child carries the
 * oracle's token (so the walk can continue there); every other child carries another. */
static void synth_drafts(vb_verdict_ref *r, const vb_tree *t, double accept_prob, uint64_t seed)
{
    vb_prng rng = vb_prng_make(seed, 0xD4AF7);
    for (int b = 0; b < r->requests; b++) {
        int *draft = r->draft_token + b * r->draft;
        const int *target = r->top1 + b * r->draft;
        draft[0] = (int)vb_prng_range(&rng, 0, r->vocab - 1);
        for (int n = 0; n < t->nodes; n++) {
            int kids = 0, chosen = -1;
            for (int c = n + 1; c < t->nodes; c++)
                kids += t->parent[c] == n;
            if (kids && vb_prng_unit(&rng) < accept_prob)
                chosen = (int)vb_prng_range(&rng, 0, kids - 1);
            for (int c = n + 1, k = 0; c < t->nodes; c++) {
                if (t->parent[c] != n)
                    continue;
                if (k++ == chosen) {
                    draft[c] = target[n];
                } else {
                    int wrong = (int)vb_prng_range(&rng, 0, r->vocab - 2);
                    draft[c] = wrong >= target[n] ? wrong + 1 : wrong;
                }
            }
        }
    }
}

int vb_verdict_prepare(const vb_instance *in, const vb_oracle_out *ref, double accept_prob,
                       uint64_t seed, int threads, vb_verdict_ref *r)
{
    memset(r, 0, sizeof *r);
    r->width = in->heads * in->d_v;
    r->vocab = VB_LM_VOCAB;
    r->requests = in->live_batch;
    r->draft = in->draft;
    int64_t rows = in->live_tokens;
    r->lm_head = malloc(sizeof *r->lm_head * (size_t)r->vocab * (size_t)r->width);
    r->draft_token = malloc(sizeof(int) * (size_t)rows);
    r->top1 = malloc(sizeof(int) * (size_t)rows);
    r->margin = malloc(sizeof(double) * (size_t)rows);
    r->bound = malloc(sizeof(double) * (size_t)rows);
    r->path = malloc(sizeof(int) * (size_t)rows);
    r->path_len = malloc(sizeof(int) * (size_t)r->requests);
    r->bonus = malloc(sizeof(int) * (size_t)r->requests);
    if (!r->lm_head || !r->draft_token || !r->top1 || !r->margin || !r->bound ||
        !r->path || !r->path_len || !r->bonus) {
        vb_verdict_free(r);
        return -1;
    }
    make_lm_head(r);
    rows_job job = {r, ref, NULL, NULL, NULL};
    vb_parallel_for(rows, threads, oracle_row, &job);
    synth_drafts(r, &in->tree, accept_prob, seed);
    for (int b = 0; b < r->requests; b++)
        r->path_len[b] = vb_tree_walk(&in->tree, r->draft_token + b * r->draft, r->top1 + b * r->draft,
                                      r->path + b * r->draft, &r->bonus[b]);
    return 0;
}

double vb_verdict_oracle_accept_mean(const vb_verdict_ref *r)
{
    double sum = 0;
    for (int b = 0; b < r->requests; b++)
        sum += r->path_len[b];
    return r->requests ? sum / r->requests : 0;
}

vb_verdict vb_verdict_judge(const vb_verdict_ref *r, const vb_instance *in, const uint16_t *o, int threads)
{
    vb_verdict v = {0};
    v.worst_row = -1;
    int64_t rows = in->live_tokens;
    int *tokens = malloc(sizeof *tokens * (size_t)rows);
    int nw = vb_parallel_workers(threads);
    double **scratch = calloc((size_t)nw, sizeof *scratch);
    int ok = tokens && scratch;
    for (int w = 0; ok && w < nw; w++)
        ok = (scratch[w] = malloc(sizeof(double) * (size_t)r->width)) != NULL;
    if (ok) {
        rows_job job = {(vb_verdict_ref *)r, NULL, o, tokens, scratch};
        vb_parallel_for(rows, nw, kernel_row, &job);
    }
    v.rows = ok ? rows : 0;
    v.requests = ok ? r->requests : 0;
    double accepted = 0;
    int *path = malloc(sizeof *path * (size_t)(r->draft + 1));
    for (int64_t t = 0; ok && t < rows; t++) {
        if (tokens[t] == r->top1[t])
            continue;
        if (r->margin[t] <= r->bound[t]) {
            v.near_ties++;
        } else {
            v.mismatches++;
            if (v.worst_row < 0)
                v.worst_row = t;
        }
    }
    for (int b = 0; ok && path && b < r->requests; b++) {
        int bonus, len = vb_tree_walk(&in->tree, r->draft_token + b * r->draft, tokens + b * r->draft,
                                      path, &bonus);
        accepted += len;
        int same = len == r->path_len[b] && bonus == r->bonus[b] &&
                   !memcmp(path, r->path + b * r->draft, sizeof *path * (size_t)len);
        if (same) {
            v.paths_equal++;
            continue;
        }
        /* A differing walk is a near-tie only if every row that differs on it is one. */
        int clear = 0;
        for (int n = 0; n < r->draft; n++) {
            int64_t t = (int64_t)b * r->draft + n;
            clear |= tokens[t] != r->top1[t] && r->margin[t] > r->bound[t];
        }
        v.paths_near_tie += !clear;
    }
    v.accepted_mean = r->requests ? accepted / r->requests : 0;
    free(path);
    for (int w = 0; scratch && w < nw; w++)
        free(scratch[w]);
    free(scratch);
    free(tokens);
    return v;
}

void vb_verdict_free(vb_verdict_ref *r)
{
    if (!r)
        return;
    free(r->lm_head), free(r->draft_token), free(r->top1), free(r->margin);
    free(r->bound), free(r->path), free(r->path_len), free(r->bonus);
    memset(r, 0, sizeof *r);
}
