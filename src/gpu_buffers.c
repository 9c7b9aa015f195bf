/* Device copies of an instance: allocation at a capacity, in-place uploads (as SGLang rewrites
 * its static buffers), poisoned outputs and the checks run on what a kernel wrote. */
#include "gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "vb_bf16.h"

double vb_dev_caps_bytes(const vb_dev_caps *c)
{
    return 2.0 * c->tokens * c->heads * c->d_qk + 2.0 * c->num_slots * c->d_qk + 8.0 * (3 * (c->batch + 1)) +
           8.0 * (c->sum_prefix + c->tokens) + (double)c->mask_bytes + c->out_tokens * c->heads * (2.0 * c->d_v + 4.0) +
           (double)c->ws_bytes;
}

size_t vb_dev_max_workspace(const vb_kernel *const *ks, int nk, const vb_verify_params *limits)
{
    size_t ws = 0;
    for (int k = 0; k < nk; k++)
        if (ks[k]->workspace_bytes && ks[k]->workspace_bytes(limits) > ws)
            ws = ks[k]->workspace_bytes(limits);
    return ws;
}

int vb_dev_alloc(vb_gpu *g, vb_dev_inputs *d, const vb_dev_caps *c)
{
    memset(d, 0, sizeof *d);
    d->cap = *c;
    const size_t ib = 8; /* index buffers sized for int64; int32 uses half */
    return CU(g, cudaMalloc((void **)&d->q, 2 * (size_t)(c->tokens * c->heads * c->d_qk))) &&
           CU(g, cudaMalloc((void **)&d->kv, 2 * (size_t)(c->num_slots * c->d_qk))) &&
           CU(g, cudaMalloc(&d->kv_indptr, ib * (size_t)(c->batch + 1))) &&
           CU(g, cudaMalloc(&d->kv_indices, ib * (size_t)(c->sum_prefix + 1))) &&
           CU(g, cudaMalloc(&d->qo_indptr, ib * (size_t)(c->batch + 1))) &&
           CU(g, cudaMalloc(&d->out_cache_loc, ib * (size_t)c->tokens)) &&
           CU(g, cudaMalloc(&d->mask_indptr, ib * (size_t)(c->batch + 1))) &&
           CU(g, cudaMalloc((void **)&d->mask, (size_t)c->mask_bytes)) &&
           CU(g, cudaMalloc((void **)&d->o, 2 * (size_t)(c->out_tokens * c->heads * c->d_v))) &&
           CU(g, cudaMalloc((void **)&d->lse, 4 * (size_t)(c->out_tokens * c->heads))) &&
           (c->ws_bytes == 0 || CU(g, cudaMalloc(&d->ws, c->ws_bytes)));
}

void vb_dev_free(vb_dev_inputs *d)
{
    void *ptrs[] = {d->q, d->kv, d->kv_indptr, d->kv_indices, d->qo_indptr, d->out_cache_loc,
                    d->mask_indptr, d->mask, d->o, d->lse, d->ws};
    for (size_t i = 0; i < sizeof ptrs / sizeof *ptrs; i++)
        cudaFree(ptrs[i]);
    memset(d, 0, sizeof *d);
}

static int copy_in(vb_gpu *g, void *dst, const void *src, size_t bytes)
{
    return bytes == 0 || CU(g, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, g->stream));
}

/* Writes an instance into the buffers in place (as SGLang rewrites its static buffers
 * before a replay). What the instance does not fill is set to all-ones bytes: NaN KV rows
 * and index -1, so a read past the live data cannot pass unnoticed. */
int vb_dev_upload(vb_gpu *g, vb_dev_inputs *d, const vb_instance *in)
{
    const vb_dev_caps *c = &d->cap;
    size_t kv_bytes = 2 * (size_t)(in->num_slots * in->d_qk), kv_cap = 2 * (size_t)(c->num_slots * c->d_qk);
    size_t ki = vb_ibuf_bytes(&in->kv_indices), ki_cap = 8 * (size_t)(c->sum_prefix + 1);
    size_t mk_cap = (size_t)c->mask_bytes;
    return copy_in(g, d->q, in->q, 2 * (size_t)(in->tokens * in->heads * in->d_qk)) &&
           copy_in(g, d->kv, in->kv, kv_bytes) &&
           CU(g, cudaMemsetAsync((char *)d->kv + kv_bytes, VB_POISON_BYTE, kv_cap - kv_bytes, g->stream)) &&
           copy_in(g, d->kv_indptr, in->kv_indptr.data, vb_ibuf_bytes(&in->kv_indptr)) &&
           copy_in(g, d->kv_indices, in->kv_indices.data, ki) &&
           CU(g, cudaMemsetAsync((char *)d->kv_indices + ki, VB_POISON_BYTE, ki_cap - ki, g->stream)) &&
           copy_in(g, d->qo_indptr, in->qo_indptr.data, vb_ibuf_bytes(&in->qo_indptr)) &&
           copy_in(g, d->out_cache_loc, in->out_cache_loc.data, vb_ibuf_bytes(&in->out_cache_loc)) &&
           copy_in(g, d->mask_indptr, in->mask_indptr.data, vb_ibuf_bytes(&in->mask_indptr)) &&
           copy_in(g, d->mask, in->custom_mask, (size_t)in->mask_bytes) &&
           CU(g, cudaMemsetAsync(d->mask + in->mask_bytes, VB_POISON_BYTE, mk_cap - (size_t)in->mask_bytes, g->stream));
}

/* The kernel's view of the device buffers; shape and index widths from the instance. */
vb_verify_params vb_dev_params(const vb_dev_inputs *d, const vb_instance *in, int batch, int max_draft)
{
    vb_verify_params p = vb_instance_params(in);
    p.batch = batch;
    p.max_draft = max_draft;
    p.max_tokens = batch * max_draft;
    p.q = d->q, p.kv_buffer = d->kv, p.o = d->o, p.lse = d->lse, p.custom_mask = d->mask;
    p.kv_indptr = d->kv_indptr, p.kv_indices = d->kv_indices, p.qo_indptr = d->qo_indptr;
    p.out_cache_loc = d->out_cache_loc, p.mask_indptr = d->mask_indptr;
    return p;
}

int vb_dev_poison_outputs(vb_gpu *g, vb_dev_inputs *d)
{
    const vb_dev_caps *c = &d->cap;
    return CU(g, cudaMemsetAsync(d->o, VB_POISON_BYTE, 2 * (size_t)(c->out_tokens * c->heads * c->d_v), g->stream)) &&
           CU(g, cudaMemsetAsync(d->lse, VB_POISON_BYTE, 4 * (size_t)(c->out_tokens * c->heads), g->stream));
}

/* Copies the outputs back and runs every check layer on them. */
void vb_dev_check_outputs(vb_gpu *g, vb_dev_inputs *d, const vb_kernel *k, const vb_case *c, int64_t launch_tokens,
                          vb_record *rec)
{
    const vb_dev_caps *cap = &d->cap;
    size_t on = (size_t)(cap->out_tokens * cap->heads * cap->d_v), ln = (size_t)(cap->out_tokens * cap->heads);
    uint16_t *o = malloc(sizeof *o * on);
    float *lse = malloc(sizeof *lse * ln);
    if (!o || !lse) {
        rec->status = VB_ERROR;
        snprintf(rec->message, sizeof rec->message, "out of host memory for the outputs");
    } else if (!CU(g, vb_gpu_sync(g)) || !CU(g, cudaMemcpy(o, d->o, 2 * on, cudaMemcpyDeviceToHost)) ||
               !CU(g, cudaMemcpy(lse, d->lse, 4 * ln, cudaMemcpyDeviceToHost))) {
        vb_gpu_record_error(g, rec);
    } else {
        vb_kernel_output out = {o, k->writes_lse ? lse : NULL, launch_tokens, cap->out_tokens};
        rec->status = vb_check_output(c->in, c->ref, c->vref, &out, c->threads, &rec->checks, rec->message,
                                      sizeof rec->message);
    }
    free(o);
    free(lse);
}
