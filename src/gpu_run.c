/* The runners: every kernel eagerly over the live batch, and captured once in a CUDA graph
 * replayed over every variant written into the same static buffers. Each launch is checked
 * against the oracle before it is timed. */
#include "gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Records a sticky CUDA error left unfilled: they say why they did not run. */
static void mark_not_run(vb_record *const *recs, int n)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(recs[k]->message, VB_NOT_RUN))
            snprintf(recs[k]->message, sizeof recs[k]->message, "%s", VB_NOT_RUN_GPU_ENDED);
}

/* ---- eager ------------------------------------------------------------------------- */

typedef struct kernel_call {
    const vb_kernel *k;
    vb_verify_params p;
    void *ws;
} kernel_call;

static cudaError_t kernel_launch(void *ctx, cudaStream_t s)
{
    kernel_call *kc = ctx;
    return kc->k->launch(&kc->p, kc->ws, s);
}

static vb_dev_caps eager_caps(const vb_instance *in, const vb_kernel *const *ks, int nk)
{
    vb_dev_caps c = {in->batch, in->tokens, in->tokens + in->draft, in->kv_indices.count, in->num_slots,
                     in->mask_bytes, in->heads, in->d_qk, in->d_v, 0};
    vb_verify_params lim = vb_instance_launch_params(in, in->live_batch);
    c.ws_bytes = vb_dev_max_workspace(ks, nk, &lim);
    return c;
}

double vb_gpu_eager_bytes(const vb_instance *in, const vb_kernel *const *ks, int nk)
{
    vb_dev_caps c = eager_caps(in, ks, nk);
    return vb_dev_caps_bytes(&c);
}

static void time_record(vb_gpu *g, vb_launch_fn fn, void *ctx, const vb_case *c, int batch, vb_record *rec)
{
    double bytes, flops;
    vb_instance_traffic(c->in, batch, &bytes, &flops);
    if (vb_gpu_measure(g, fn, ctx, &c->timing, 0, bytes, flops, &g->ceil, &rec->hot) ||
        (c->timing.cold_l2 && vb_gpu_measure(g, fn, ctx, &c->timing, 1, bytes, flops, &g->ceil, &rec->cold)))
        vb_gpu_record_error(g, rec);
}

void vb_gpu_run_eager(vb_gpu *g, const vb_kernel *const *ks, int nk, const vb_case *c, vb_record *const *recs)
{
    const vb_instance *in = c->in;
    vb_dev_caps caps = eager_caps(in, ks, nk);
    vb_dev_inputs d;
    if (!vb_dev_alloc(g, &d, &caps) || !vb_dev_upload(g, &d, in)) {
        for (int k = 0; k < nk; k++)
            vb_gpu_record_error(g, recs[k]);
        vb_dev_free(&d);
        return;
    }
    for (int k = 0; k < nk && !g->dead; k++) {
        kernel_call kc = {ks[k], vb_dev_params(&d, in, in->live_batch, in->draft), d.ws};
        if (!vb_dev_poison_outputs(g, &d) || !CU(g, kernel_launch(&kc, g->stream))) {
            vb_gpu_record_error(g, recs[k]);
            continue;
        }
        g->running = recs[k];
        vb_dev_check_outputs(g, &d, ks[k], c, in->live_tokens, recs[k]);
        if (recs[k]->status != VB_ERROR)
            time_record(g, kernel_launch, &kc, c, in->live_batch, recs[k]);
        g->running = NULL;
    }
    mark_not_run(recs, nk);
    vb_dev_free(&d);
}

/* ---- CUDA graphs --------------------------------------------------------------------- */

struct vb_graph_set {
    vb_gpu *g;
    int nk, bucket, max_draft, captured;
    const vb_kernel *k[VB_MAX_KERNELS];
    cudaGraphExec_t exec[VB_MAX_KERNELS];
    char capture_error[VB_MAX_KERNELS][320]; /* non-empty: this kernel is not capture-safe */
    vb_dev_inputs d;
};

static vb_dev_caps graph_caps(const vb_scenario *s, const vb_kernel *const *ks, int nk)
{
    vb_dev_caps c = {s->bucket, 0, 0, 0, 0, 0, s->heads, vb_scenario_d_qk(s), vb_scenario_d_v(s), 0};
    int T = vb_scenario_max_draft(s);
    for (int v = 0; v <= s->n_replays; v++) {
        vb_instance_sizes z;
        vb_instance_measure(v ? &s->replays[v - 1] : &s->base, s->bucket, &z);
        c.sum_prefix = z.sum_prefix > c.sum_prefix ? z.sum_prefix : c.sum_prefix;
        c.num_slots = z.num_slots > c.num_slots ? z.num_slots : c.num_slots;
        c.mask_bytes = z.mask_bytes > c.mask_bytes ? z.mask_bytes : c.mask_bytes;
    }
    c.tokens = (int64_t)s->bucket * T;
    c.out_tokens = c.tokens + T;
    vb_verify_params lim = {0};
    lim.batch = s->bucket, lim.heads = s->heads, lim.d_qk = c.d_qk, lim.d_v = c.d_v;
    lim.max_draft = T, lim.max_tokens = (int32_t)c.tokens;
    c.ws_bytes = vb_dev_max_workspace(ks, nk, &lim);
    return c;
}

double vb_graph_bytes(const vb_scenario *s, const vb_kernel *const *ks, int nk)
{
    vb_dev_caps c = graph_caps(s, ks, nk);
    return vb_dev_caps_bytes(&c);
}

vb_graph_set *vb_graph_create(vb_gpu *g, const vb_scenario *s, const vb_kernel *const *ks, int nk)
{
    vb_graph_set *gs = calloc(1, sizeof *gs);
    if (!gs || nk > VB_MAX_KERNELS) {
        free(gs);
        return NULL;
    }
    gs->g = g, gs->nk = nk, gs->bucket = s->bucket, gs->max_draft = vb_scenario_max_draft(s);
    memcpy(gs->k, ks, sizeof *ks * (size_t)nk);
    vb_dev_caps caps = graph_caps(s, ks, nk);
    if (!vb_dev_alloc(g, &gs->d, &caps)) {
        vb_graph_free(gs);
        return NULL;
    }
    return gs;
}

/* One launch captured under the global mode: a sync, an allocation or any call the capture
 * refuses invalidates it, and the kernel is reported not capture-safe with the error. */
static void capture_one(vb_graph_set *gs, int k, const vb_instance *in)
{
    vb_gpu *g = gs->g;
    vb_verify_params p = vb_dev_params(&gs->d, in, gs->bucket, gs->max_draft);
    cudaGraph_t graph = NULL;
    if (!CU(g, cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeGlobal))) {
        snprintf(gs->capture_error[k], sizeof gs->capture_error[k], "%s", g->err);
        return;
    }
    cudaError_t launched = gs->k[k]->launch(&p, gs->d.ws, g->stream);
    cudaError_t ended = cudaStreamEndCapture(g->stream, &graph);
    cudaGetLastError(); /* the capture's errors are reported below, not left pending */
    if (launched != cudaSuccess || ended != cudaSuccess) {
        snprintf(gs->capture_error[k], sizeof gs->capture_error[k],
                 "not capture-safe: during capture the launch returned %s (%s); ending the capture returned %s",
                 cudaGetErrorName(launched), cudaGetErrorString(launched), cudaGetErrorName(ended));
    } else if (!CU(g, cudaGraphInstantiate(&gs->exec[k], graph, 0))) {
        snprintf(gs->capture_error[k], sizeof gs->capture_error[k], "%s", g->err);
    }
    if (graph)
        cudaGraphDestroy(graph);
}

static cudaError_t graph_launch(void *ctx, cudaStream_t s) { return cudaGraphLaunch(*(cudaGraphExec_t *)ctx, s); }

void vb_graph_replay(vb_graph_set *gs, const vb_case *c, vb_record *const *recs)
{
    vb_gpu *g = gs->g;
    if (!vb_dev_upload(g, &gs->d, c->in)) {
        for (int k = 0; k < gs->nk; k++)
            vb_gpu_record_error(g, recs[k]);
        return;
    }
    for (int k = 0; !gs->captured && k < gs->nk; k++)
        capture_one(gs, k, c->in);
    int first = !gs->captured;
    gs->captured = 1;
    for (int k = 0; k < gs->nk && !g->dead; k++) {
        vb_record *rec = recs[k];
        if (gs->capture_error[k][0]) {
            rec->status = first ? VB_FAIL : VB_SKIPPED;
            snprintf(rec->message, sizeof rec->message, "%s%s", first ? "" : "skipped: capture failed: ",
                     gs->capture_error[k]);
            continue;
        }
        if (!vb_dev_poison_outputs(g, &gs->d) || !CU(g, cudaGraphLaunch(gs->exec[k], g->stream))) {
            vb_gpu_record_error(g, rec);
            continue;
        }
        g->running = rec;
        vb_dev_check_outputs(g, &gs->d, gs->k[k], c, c->in->tokens, rec);
        if (rec->status != VB_ERROR)
            time_record(g, graph_launch, &gs->exec[k], c, c->in->batch, rec);
        g->running = NULL;
    }
    mark_not_run(recs, gs->nk);
}

void vb_graph_free(vb_graph_set *gs)
{
    if (!gs)
        return;
    for (int k = 0; k < gs->nk; k++)
        if (gs->exec[k])
            cudaGraphExecDestroy(gs->exec[k]);
    vb_dev_free(&gs->d);
    free(gs);
}
