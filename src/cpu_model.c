#include "cpu_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "vb_bf16.h"

#define NSPLIT 64

typedef struct model_job {
    const vb_verify_params *p;
    vb_cpu_bug bug;
    float **acc;   /* per worker: NSPLIT partial outputs of d_v floats */
} model_job;

static int64_t ld(const void *b, vb_index_width w, int64_t i)
{
    return w == VB_I64 ? ((const int64_t *)b)[i] : ((const int32_t *)b)[i];
}

/* One (token, head) row: NSPLIT partial softmaxes, then their combination. */
static void model_row(int64_t row, int worker, void *ctx)
{
    const model_job *job = ctx;
    const vb_verify_params *p = job->p;
    const int64_t t = row / p->heads;
    const int h = (int)(row % p->heads);
    int b = 0;
    while (b + 1 < p->batch && ld(p->qo_indptr, p->qo_indptr_width, b + 1) <= t)
        b++;
    const int64_t kv0 = ld(p->kv_indptr, p->kv_indptr_width, b);
    const int64_t P = ld(p->kv_indptr, p->kv_indptr_width, b + 1) - kv0;
    const int64_t q0 = ld(p->qo_indptr, p->qo_indptr_width, b);
    const int64_t T = ld(p->qo_indptr, p->qo_indptr_width, b + 1) - q0;
    const int64_t i = t - q0, keys = P + T, chunk = (keys + NSPLIT - 1) / NSPLIT;
    const uint8_t *mask = p->custom_mask + ld(p->mask_indptr, p->mask_indptr_width, b) + i * keys;
    const uint16_t *q = p->q + t * p->stride_q_token + h * p->stride_q_head;
    const float scale = job->bug == VB_BUG_WRONG_SCALE ? 1.0f / sqrtf((float)p->d_qk) : p->sm_scale;
    float m_split[NSPLIT], l_split[NSPLIT], *acc = job->acc[worker];
    memset(acc, 0, sizeof *acc * (size_t)NSPLIT * (size_t)p->d_v);
    for (int s = 0; s < NSPLIT; s++) {
        float m = -INFINITY, l = 0, *a = acc + (size_t)s * (size_t)p->d_v;
        for (int64_t j = s * chunk; j < keys && j < (s + 1) * chunk; j++) {
            int64_t mj = job->bug == VB_BUG_MASK_OFF_BY_ONE && j >= P ? j - 1 : j;
            if (!mask[mj])
                continue;
            int64_t slot;
            if (j < P)
                slot = ld(p->kv_indices, p->kv_indices_width, kv0 + j);
            else if (job->bug == VB_BUG_WRONG_SLOT)
                slot = ld(p->out_cache_loc, p->out_cache_loc_width, q0 + (j - P + 1) % T);
            else
                slot = ld(p->out_cache_loc, p->out_cache_loc_width, q0 + j - P);
            const uint16_t *k = p->kv_buffer + slot * p->stride_kv_slot;
            float dot = 0;
            for (int d = 0; d < p->d_qk; d++)
                dot += vb_bf16_to_float(q[d]) * vb_bf16_to_float(k[d]);
            float sc = dot * scale, m_new = sc > m ? sc : m;
            float corr = expf(m - m_new), w = expf(sc - m_new);
            for (int d = 0; d < p->d_v; d++)
                a[d] = a[d] * corr + w * vb_bf16_to_float(k[d]);
            l = l * corr + w;
            m = m_new;
        }
        m_split[s] = m, l_split[s] = l;
    }
    float m = -INFINITY, l = 0;
    for (int s = 0; s < NSPLIT; s++)
        m = m_split[s] > m ? m_split[s] : m;
    for (int s = 0; s < NSPLIT; s++)
        l += l_split[s] > 0 ? l_split[s] * expf(m_split[s] - m) : 0;
    int skip = job->bug == VB_BUG_UNWRITTEN_ROW && t == 1 && h == 0;
    int rows_out = job->bug == VB_BUG_STRAY_WRITE && t + 1 == ld(p->qo_indptr, p->qo_indptr_width, p->batch) ? 2 : 1;
    for (int r = 0; r < rows_out && !skip; r++) {
        uint16_t *o = p->o + (t + r) * p->stride_o_token + h * p->stride_o_head;
        for (int d = 0; d < p->d_v; d++) {
            float x = 0;
            for (int s = 0; s < NSPLIT; s++)
                x += l_split[s] > 0 ? acc[(size_t)s * (size_t)p->d_v + d] * expf(m_split[s] - m) : 0;
            o[d] = vb_bf16_from_float(l > 0 ? x / l : 0.0f);
        }
        if (p->lse)
            p->lse[(t + r) * p->heads + h] = l > 0 ? m + logf(l) : -INFINITY;
    }
}

int vb_cpu_model_run(const vb_verify_params *p, vb_cpu_bug bug, int threads)
{
    const int workers = vb_parallel_workers(threads);
    model_job job = {p, bug, calloc((size_t)workers, sizeof(float *))};
    int ok = job.acc != NULL;
    for (int w = 0; ok && w < workers; w++)
        ok = (job.acc[w] = malloc(sizeof(float) * (size_t)NSPLIT * (size_t)p->d_v)) != NULL;
    if (ok) {
        int64_t tokens = ld(p->qo_indptr, p->qo_indptr_width, p->batch);
        vb_parallel_for(tokens * p->heads, workers, model_row, &job);
    }
    for (int w = 0; job.acc && w < workers; w++)
        free(job.acc[w]);
    free(job.acc);
    return ok ? 0 : -1;
}
