#include "oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"

static int64_t idx(const void *buf, vb_index_width w, int64_t i)
{
    return w == VB_I64 ? ((const int64_t *)buf)[i] : ((const int32_t *)buf)[i];
}

static double bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

typedef struct oracle_job {
    const vb_verify_params *p;
    vb_oracle_out *out;
    int64_t max_keys;
    double **scores; /* per worker: [heads][max_keys] */
    double **rowbuf; /* per worker: q transposed [d_qk][heads], then one KV row */
    int failed;
} oracle_job;

/* The request that owns q row t: the b with qo_indptr[b] <= t < qo_indptr[b+1]. */
static int request_of(const vb_verify_params *p, int64_t t)
{
    int b = 0;
    while (b + 1 < p->batch && idx(p->qo_indptr, p->qo_indptr_width, b + 1) <= t)
        b++;
    return b;
}

/* All heads of one draft token: one row of the formula per head. */
/* One request's view of one draft token t: where its keys live and which of them it sees. */
typedef struct token_view {
    const vb_verify_params *p;
    int64_t t, kv0, P, q0, T;
    const uint8_t *mask;     /* row i of the request's mask: P + T bytes */
} token_view;

static token_view view_of(const vb_verify_params *p, int64_t t)
{
    token_view v = {p, t, 0, 0, 0, 0, NULL};
    const int b = request_of(p, t);
    v.kv0 = idx(p->kv_indptr, p->kv_indptr_width, b);
    v.P = idx(p->kv_indptr, p->kv_indptr_width, b + 1) - v.kv0;
    v.q0 = idx(p->qo_indptr, p->qo_indptr_width, b);
    v.T = idx(p->qo_indptr, p->qo_indptr_width, b + 1) - v.q0;
    v.mask = p->custom_mask + idx(p->mask_indptr, p->mask_indptr_width, b) + (t - v.q0) * (v.P + v.T);
    return v;
}

/* slot(j) exactly as the spec writes it: a prefix key through kv_indices, a draft key through
 * out_cache_loc. */
static const uint16_t *key_row(const token_view *v, int64_t j)
{
    const vb_verify_params *p = v->p;
    const int64_t slot = j < v->P ? idx(p->kv_indices, p->kv_indices_width, v->kv0 + j)
                                  : idx(p->out_cache_loc, p->out_cache_loc_width, v->q0 + j - v->P);
    return p->kv_buffer + slot * p->stride_kv_slot;
}

/* s[h][j] = sm_scale · q_h · k_j for every visible key, -inf for the others; qt is q with heads
 * innermost. Returns whether any key is visible. */
static int scores(const token_view *v, const double *qt, double *s, int64_t max_keys)
{
    const int H = v->p->heads, DQ = v->p->d_qk;
    int any_visible = 0;
    for (int64_t j = 0; j < v->P + v->T; j++) {
        if (!v->mask[j]) {
            for (int h = 0; h < H; h++)
                s[h * max_keys + j] = -INFINITY;
            continue;
        }
        any_visible = 1;
        const uint16_t *k = key_row(v, j);
        double acc[VB_ORACLE_MAX_HEADS] = {0};
        for (int d = 0; d < DQ; d++) {
            double kd = bf16(k[d]);
            for (int h = 0; h < H; h++)
                acc[h] += qt[d * H + h] * kd;
        }
        for (int h = 0; h < H; h++)
            s[h * max_keys + j] = (double)v->p->sm_scale * acc[h];
    }
    return any_visible;
}

static void oracle_token(int64_t t, int worker, void *ctx)
{
    oracle_job *job = ctx;
    const vb_verify_params *p = job->p;
    const int H = p->heads, DQ = p->d_qk, DV = p->d_v;
    const token_view view = view_of(p, t);
    const int64_t keys = view.P + view.T;
    double *s = job->scores[worker], *qt = job->rowbuf[worker], *kv = qt + (size_t)DQ * H;

    for (int d = 0; d < DQ; d++)
        for (int h = 0; h < H; h++)
            qt[d * H + h] = bf16(p->q[t * p->stride_q_token + h * p->stride_q_head + d]);
    const int any_visible = scores(&view, qt, s, job->max_keys);

    double *o = job->out->o + t * H * DV, *absw = job->out->absw + t * H * DV;
    memset(o, 0, sizeof *o * (size_t)(H * DV));
    memset(absw, 0, sizeof *absw * (size_t)(H * DV));
    if (!any_visible) {
        for (int h = 0; h < H; h++)
            job->out->lse[t * H + h] = -INFINITY, job->out->pmax[t * H + h] = 0;
        return;
    }
    /* The softmax's max and sum per head, over every key (hidden ones add exp(-inf) = 0). */
    double m[VB_ORACLE_MAX_HEADS], l[VB_ORACLE_MAX_HEADS];
    for (int h = 0; h < H; h++) {
        const double *sh = s + h * job->max_keys;
        m[h] = -INFINITY;
        for (int64_t j = 0; j < keys; j++)
            m[h] = sh[j] > m[h] ? sh[j] : m[h];
        l[h] = 0;
        for (int64_t j = 0; j < keys; j++)
            l[h] += exp(sh[j] - m[h]);
        job->out->lse[t * H + h] = m[h] + log(l[h]);
        job->out->pmax[t * H + h] = 1.0 / l[h];
    }
    /* o = Σ_j p_j · V_j over the visible keys; absw = Σ_j p_j · |V_j| for the tolerance. */
    for (int64_t j = 0; j < keys; j++) {
        if (!view.mask[j])
            continue;
        const uint16_t *v = key_row(&view, j);
        for (int d = 0; d < DV; d++)
            kv[d] = bf16(v[d]);
        for (int h = 0; h < H; h++) {
            double w = exp(s[h * job->max_keys + j] - m[h]) / l[h];
            double *oh = o + h * DV, *ah = absw + h * DV;
            for (int d = 0; d < DV; d++) {
                oh[d] += w * kv[d];
                ah[d] += w * fabs(kv[d]);
            }
        }
    }
}

int vb_oracle_run(const vb_verify_params *p, int threads, vb_oracle_out *out)
{
    memset(out, 0, sizeof *out);
    out->tokens = idx(p->qo_indptr, p->qo_indptr_width, p->batch);
    out->heads = p->heads;
    out->d_v = p->d_v;
    if (p->heads > VB_ORACLE_MAX_HEADS)
        return -1;
    size_t rows = (size_t)out->tokens * (size_t)p->heads;
    out->o = malloc(sizeof *out->o * rows * (size_t)p->d_v + 1);
    out->absw = malloc(sizeof *out->absw * rows * (size_t)p->d_v + 1);
    out->lse = malloc(sizeof *out->lse * rows + 1);
    out->pmax = malloc(sizeof *out->pmax * rows + 1);
    oracle_job job = {p, out, 0, NULL, NULL, 0};
    for (int b = 0; b < p->batch; b++) {
        int64_t keys = idx(p->kv_indptr, p->kv_indptr_width, b + 1) - idx(p->kv_indptr, p->kv_indptr_width, b) +
                       idx(p->qo_indptr, p->qo_indptr_width, b + 1) - idx(p->qo_indptr, p->qo_indptr_width, b);
        job.max_keys = keys > job.max_keys ? keys : job.max_keys;
    }
    int nw = vb_parallel_workers(threads);
    job.scores = calloc((size_t)nw, sizeof *job.scores);
    job.rowbuf = calloc((size_t)nw, sizeof *job.rowbuf);
    int ok = out->o && out->absw && out->lse && out->pmax && job.scores && job.rowbuf;
    for (int w = 0; ok && w < nw; w++) {
        job.scores[w] = malloc(sizeof(double) * (size_t)p->heads * (size_t)(job.max_keys + 1));
        job.rowbuf[w] = malloc(sizeof(double) * ((size_t)p->d_qk * (size_t)p->heads + (size_t)p->d_qk));
        ok = job.scores[w] && job.rowbuf[w];
    }
    if (ok)
        vb_parallel_for(out->tokens, nw, oracle_token, &job);
    for (int w = 0; w < nw && job.scores; w++) {
        free(job.scores[w]);
        if (job.rowbuf)
            free(job.rowbuf[w]);
    }
    free(job.scores);
    free(job.rowbuf);
    if (!ok) {
        vb_oracle_free(out);
        return -1;
    }
    return 0;
}

void vb_oracle_free(vb_oracle_out *out)
{
    if (!out)
        return;
    free(out->o), free(out->absw), free(out->lse), free(out->pmax);
    memset(out, 0, sizeof *out);
}
