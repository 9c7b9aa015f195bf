#include "gpu.h"

#include <cuda_runtime_api.h>
#include <curand.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "device_util.h"
#include "vb_bf16.h"

#define MAX_KERNELS 64

/* This run's measured ceilings: GB/s and TFLOP/s are reported as shares of them. */
typedef struct ceilings {
    double read_gbps, mma_tflops;
} ceilings;

struct vb_gpu {
    struct cudaDeviceProp prop;
    ceilings ceil;
    int cc;
    cudaStream_t stream;
    void *flush;          /* written between cold samples: evicts the L2 */
    size_t flush_bytes;
    void *sink;
    int dead, had_error;
    char err[320];
};

/* ---- error handling ---------------------------------------------------------------- */

static int sticky(cudaError_t e)
{
    return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorIllegalInstruction ||
           e == cudaErrorMisalignedAddress || e == cudaErrorHardwareStackError || e == cudaErrorAssert ||
           e == cudaErrorInvalidPc || e == cudaErrorLaunchTimeout || e == cudaErrorECCUncorrectable ||
           e == cudaErrorInvalidAddressSpace || e == cudaErrorUnknown;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Records the first failing call; later failures of the same run keep the first message. */
static int gpu_ok(vb_gpu *g, cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess)
        return 1;
    g->had_error = 1;
    if (sticky(e))
        g->dead = 1;
    snprintf(g->err, sizeof g->err, "%s: %s (%s) at %s:%d", what, cudaGetErrorName(e), cudaGetErrorString(e),
             base_name(file), line);
    return 0;
}
#define CU(g, call) gpu_ok((g), (call), #call, __FILE__, __LINE__)

static void record_error(vb_gpu *g, vb_record *rec)
{
    rec->status = VB_ERROR;
    snprintf(rec->message, sizeof rec->message, "%s%s", g->err, g->dead ? " [sticky: GPU stages end here]" : "");
}

int vb_gpu_dead(const vb_gpu *g) { return g->dead; }
int vb_gpu_had_error(const vb_gpu *g) { return g->had_error; }
int vb_gpu_cc(const vb_gpu *g) { return g ? g->cc : 0; }

double vb_gpu_free_bytes(vb_gpu *g)
{
    size_t free_b = 0, total = 0;
    return CU(g, cudaMemGetInfo(&free_b, &total)) ? (double)free_b : 0.0;
}

/* ---- timing ------------------------------------------------------------------------ */

typedef cudaError_t (*launch_fn)(void *ctx, cudaStream_t stream);

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Warm-up, one probe sample to size the run, then up to ts->iterations samples each
 * bracketed by events (the L2 flush, when cold, stays outside the brackets). */
static int measure(vb_gpu *g, launch_fn fn, void *ctx, const vb_timing_spec *ts, int cold, double bytes,
                   double flops, const ceilings *ceil, vb_timing *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < ts->warmup; i++)
        if (!CU(g, fn(ctx, g->stream)))
            return -1;
    int n = ts->iterations;
    cudaEvent_t *ev = calloc((size_t)(2 * n + 2), sizeof *ev);
    float *ms = calloc((size_t)n + 1, sizeof *ms);
    int made = 0, ok = ev && ms;
    for (; ok && made < 2 * n + 2; made++)
        ok = CU(g, cudaEventCreate(&ev[made]));
    float probe = 0;
    ok = ok && CU(g, cudaEventRecord(ev[0], g->stream)) && CU(g, fn(ctx, g->stream)) &&
         CU(g, cudaEventRecord(ev[1], g->stream)) && CU(g, cudaEventSynchronize(ev[1])) &&
         CU(g, cudaEventElapsedTime(&probe, ev[0], ev[1]));
    if (ok && probe > 0 && probe * n > ts->max_time_ms)
        n = (int)(ts->max_time_ms / probe) > 3 ? (int)(ts->max_time_ms / probe) : 3;
    for (int i = 0; ok && i < n; i++) {
        if (cold)
            ok = CU(g, cudaMemsetAsync(g->flush, i & 0xFF, g->flush_bytes, g->stream));
        ok = ok && CU(g, cudaEventRecord(ev[2 + 2 * i], g->stream)) && CU(g, fn(ctx, g->stream)) &&
             CU(g, cudaEventRecord(ev[3 + 2 * i], g->stream));
    }
    ok = ok && CU(g, cudaStreamSynchronize(g->stream));
    for (int i = 0; ok && i < n; i++)
        ok = CU(g, cudaEventElapsedTime(&ms[i], ev[2 + 2 * i], ev[3 + 2 * i]));
    if (ok) {
        qsort(ms, (size_t)n, sizeof *ms, cmp_float);
        out->samples = n;
        out->median_us = 1e3 * ms[n / 2];
        out->p10_us = 1e3 * ms[(n - 1) / 10];
        out->p90_us = 1e3 * ms[(n - 1) - (n - 1) / 10];
        out->gbps = bytes / (out->median_us * 1e3);
        out->tflops = flops / (out->median_us * 1e6);
        out->bw_share = ceil->read_gbps > 0 ? out->gbps / ceil->read_gbps : 0;
        out->mma_share = ceil->mma_tflops > 0 ? out->tflops / ceil->mma_tflops : 0;
        vb_timing_set_floor(out);
    }
    for (int i = 0; i < made; i++)
        cudaEventDestroy(ev[i]);
    free(ev);
    free(ms);
    return ok ? 0 : -1;
}

/* ---- device and ceilings ----------------------------------------------------------- */

static cudaError_t read_probe_launch(void *ctx, cudaStream_t s)
{
    void **a = ctx;
    return vb_dev_read_probe(a[0], (size_t)(uintptr_t)a[1], a[2], (int)(uintptr_t)a[3], s);
}

static cudaError_t mma_probe_launch(void *ctx, cudaStream_t s)
{
    void **a = ctx;
    double flops;
    return vb_dev_mma_probe(a[0], (int)(uintptr_t)a[1], 4096, &flops, s);
}

/* The device's own ceilings, measured now: a streaming read of a buffer 16x the L2, and a
 * register-only bf16 mma.sync loop (the tensor-core rate a non-wgmma kernel can reach). */
static void measure_ceilings(vb_gpu *g, vb_gpu_info *info)
{
    vb_timing_spec ts = {2, 10, 5000.0, 0};
    const ceilings none = {0, 0};
    vb_timing t;
    size_t bytes = (size_t)g->prop.l2CacheSize * 16;
    void *buf = NULL;
    if (CU(g, cudaMalloc(&buf, bytes)) && CU(g, cudaMemset(buf, 1, bytes))) {
        void *args[4] = {buf, (void *)(uintptr_t)(bytes / 16), g->sink, (void *)(uintptr_t)g->prop.multiProcessorCount};
        if (!measure(g, read_probe_launch, args, &ts, 0, (double)bytes, 0, &none, &t))
            g->ceil.read_gbps = info->read_gbps = t.gbps;
    }
    cudaFree(buf);
    double flops = 0;
    vb_dev_mma_probe(g->sink, g->prop.multiProcessorCount, 4096, &flops, g->stream);
    void *args[2] = {g->sink, (void *)(uintptr_t)g->prop.multiProcessorCount};
    if (CU(g, cudaStreamSynchronize(g->stream)) && !measure(g, mma_probe_launch, args, &ts, 0, 0, flops, &none, &t))
        g->ceil.mma_tflops = info->mma_tflops = t.tflops;
}

/* The driver release as the kernel module reports it: the first dotted number after
 * "Kernel Module" ("... Open Kernel Module for x86_64  580.159.04  Release Build ..."). */
static void driver_release(char *out, size_t n)
{
    char line[256] = "";
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    snprintf(out, n, "unknown");
    if (!f)
        return;
    const char *k = fgets(line, sizeof line, f) ? strstr(line, "Kernel Module") : NULL;
    for (char *tok = k ? strtok(line + (k - line), " \t\n") : NULL; tok; tok = strtok(NULL, " \t\n"))
        if (tok[0] >= '0' && tok[0] <= '9' && strchr(tok, '.')) {
            snprintf(out, n, "%s", tok);
            break;
        }
    fclose(f);
}

vb_gpu *vb_gpu_open(vb_gpu_info *info, int ceilings)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        snprintf(info->skipped_reason, sizeof info->skipped_reason, "%s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
        return NULL;
    }
    vb_gpu *g = calloc(1, sizeof *g);
    if (!g || !CU(g, cudaSetDevice(0)) || !CU(g, cudaGetDeviceProperties(&g->prop, 0)) ||
        !CU(g, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) || !CU(g, cudaMalloc(&g->sink, 64))) {
        snprintf(info->skipped_reason, sizeof info->skipped_reason, "%s", g ? g->err : "out of memory");
        free(g);
        return NULL;
    }
    g->cc = g->prop.major * 10 + g->prop.minor;
    g->flush_bytes = (size_t)g->prop.l2CacheSize * 2;
    if (!CU(g, cudaMalloc(&g->flush, g->flush_bytes)) || !CU(g, cudaMemset(g->flush, 0, g->flush_bytes))) {
        snprintf(info->skipped_reason, sizeof info->skipped_reason, "%s", g->err);
        vb_gpu_close(g);
        return NULL;
    }
    info->present = 1;
    snprintf(info->name, sizeof info->name, "%s", g->prop.name);
    info->cc_major = g->prop.major;
    info->cc_minor = g->prop.minor;
    info->sms = g->prop.multiProcessorCount;
    info->l2_bytes = g->prop.l2CacheSize;
    info->mem_bytes = (int64_t)g->prop.totalGlobalMem;
    cudaDriverGetVersion(&info->driver_version);
    driver_release(info->driver, sizeof info->driver);
    cudaRuntimeGetVersion(&info->runtime_version);
    if (ceilings)
        measure_ceilings(g, info);
    else /* still launch one kernel: a binary without code for this GPU fails here */
        (void)(CU(g, vb_dev_read_probe(g->flush, 1, g->sink, 1, g->stream)) && CU(g, cudaStreamSynchronize(g->stream)));
    if (g->had_error) { /* e.g. no kernel image for this GPU: nothing else would run either */
        snprintf(info->skipped_reason, sizeof info->skipped_reason, "%s", g->err);
        info->present = 0;
        vb_gpu_close(g);
        return NULL;
    }
    return g;
}

void vb_gpu_close(vb_gpu *g)
{
    if (!g)
        return;
    cudaFree(g->flush);
    cudaFree(g->sink);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g);
}

/* ---- input generation on the device ------------------------------------------------ */

static int gen_device(vb_gpu *g, const vb_gen_stream *s, uint16_t *host_out, char *why, size_t n)
{
    int64_t chunk = vb_gen_chunk_words(s->count), rows = (s->count + s->row_len - 1) / s->row_len;
    uint16_t *d_out = NULL;
    uint32_t *d_bits = NULL;
    float *d_amp = NULL;
    curandGenerator_t gen = NULL;
    int ok = CU(g, cudaMalloc((void **)&d_out, sizeof *d_out * (size_t)s->count)) &&
             CU(g, cudaMalloc((void **)&d_bits, sizeof *d_bits * (size_t)chunk)) &&
             CU(g, cudaMalloc((void **)&d_amp, sizeof *d_amp * (size_t)rows)) &&
             CU(g, cudaMemcpy(d_amp, s->amplitude, sizeof *d_amp * (size_t)rows, cudaMemcpyHostToDevice));
    curandStatus_t st = CURAND_STATUS_SUCCESS;
    if (ok) {
        st = curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10);
        if (st == CURAND_STATUS_SUCCESS)
            st = curandSetStream(gen, g->stream);
        if (st == CURAND_STATUS_SUCCESS)
            st = curandSetPseudoRandomGeneratorSeed(gen, s->seed);
    }
    for (int64_t done = 0; ok && st == CURAND_STATUS_SUCCESS && done < s->count; done += chunk) {
        int64_t m = s->count - done < chunk ? s->count - done : chunk;
        st = curandGenerate(gen, d_bits, (size_t)vb_gen_round4(m));
        ok = st == CURAND_STATUS_SUCCESS &&
             CU(g, vb_dev_synth_bf16(d_out, d_bits, done, m, d_amp, s->row_len, g->stream));
    }
    ok = ok && st == CURAND_STATUS_SUCCESS && CU(g, cudaStreamSynchronize(g->stream)) &&
         CU(g, cudaMemcpy(host_out, d_out, sizeof *d_out * (size_t)s->count, cudaMemcpyDeviceToHost));
    if (gen)
        curandDestroyGenerator(gen);
    cudaFree(d_out), cudaFree(d_bits), cudaFree(d_amp);
    if (st != CURAND_STATUS_SUCCESS)
        snprintf(why, n, "cuRAND device generator: status %d", (int)st);
    else if (!ok)
        snprintf(why, n, "%s", g->err);
    return ok && st == CURAND_STATUS_SUCCESS ? 0 : -1;
}

/* The host generator must give the very same bits: compare every value. */
static int verify_against_host(const vb_gen_stream *s, const uint16_t *dev_values, const char *what, char *why,
                               size_t n)
{
    uint16_t *host = malloc(sizeof *host * (size_t)s->count);
    if (!host || vb_gen_host(s, host, why, n)) {
        free(host);
        return -1;
    }
    int64_t bad = -1;
    for (int64_t i = 0; i < s->count && bad < 0; i++)
        if (host[i] != dev_values[i])
            bad = i;
    if (bad >= 0)
        snprintf(why, n, "generator: %s value %lld differs between host (0x%04x) and GPU (0x%04x)", what,
                 (long long)bad, host[bad], dev_values[bad]);
    free(host);
    return bad >= 0 ? -1 : 0;
}

int vb_gpu_fill_instance(vb_gpu *g, vb_instance *in, int verify, char *why, size_t why_len)
{
    if (gen_device(g, &in->q_gen, in->q, why, why_len) || gen_device(g, &in->kv_gen, in->kv, why, why_len))
        return -1;
    if (verify && (verify_against_host(&in->q_gen, in->q, "q", why, why_len) ||
                   verify_against_host(&in->kv_gen, in->kv, "kv", why, why_len)))
        return -1;
    vb_instance_poison_unused(in);
    return 0;
}

/* ---- device copies of an instance -------------------------------------------------- */

/* Capacities: the largest instance a set of buffers must hold. */
typedef struct dev_caps {
    int64_t batch, tokens, out_tokens, sum_prefix, num_slots, mask_bytes;
    int heads, d_qk, d_v;
    size_t ws_bytes;
} dev_caps;

typedef struct dev_inputs {
    dev_caps cap;
    uint16_t *q, *kv, *o;
    void *kv_indptr, *kv_indices, *qo_indptr, *out_cache_loc, *mask_indptr, *ws;
    uint8_t *mask;
    float *lse;
} dev_inputs;

static double caps_bytes(const dev_caps *c)
{
    return 2.0 * c->tokens * c->heads * c->d_qk + 2.0 * c->num_slots * c->d_qk + 8.0 * (3 * (c->batch + 1)) +
           8.0 * (c->sum_prefix + c->tokens) + (double)c->mask_bytes + c->out_tokens * c->heads * (2.0 * c->d_v + 4.0) +
           (double)c->ws_bytes;
}

static size_t max_workspace(const vb_kernel *const *ks, int nk, const vb_verify_params *limits)
{
    size_t ws = 0;
    for (int k = 0; k < nk; k++)
        if (ks[k]->workspace_bytes && ks[k]->workspace_bytes(limits) > ws)
            ws = ks[k]->workspace_bytes(limits);
    return ws;
}

static int dev_alloc(vb_gpu *g, dev_inputs *d, const dev_caps *c)
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

static void dev_free(dev_inputs *d)
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
static int dev_upload(vb_gpu *g, dev_inputs *d, const vb_instance *in)
{
    const dev_caps *c = &d->cap;
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
static vb_verify_params dev_params(const dev_inputs *d, const vb_instance *in, int batch, int max_draft)
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

static int poison_outputs(vb_gpu *g, dev_inputs *d)
{
    const dev_caps *c = &d->cap;
    return CU(g, cudaMemsetAsync(d->o, VB_POISON_BYTE, 2 * (size_t)(c->out_tokens * c->heads * c->d_v), g->stream)) &&
           CU(g, cudaMemsetAsync(d->lse, VB_POISON_BYTE, 4 * (size_t)(c->out_tokens * c->heads), g->stream));
}

/* Copies the outputs back and runs every check layer on them. */
static void check_outputs(vb_gpu *g, dev_inputs *d, const vb_kernel *k, const vb_case *c, int64_t launch_tokens,
                          vb_record *rec)
{
    const dev_caps *cap = &d->cap;
    size_t on = (size_t)(cap->out_tokens * cap->heads * cap->d_v), ln = (size_t)(cap->out_tokens * cap->heads);
    uint16_t *o = malloc(sizeof *o * on);
    float *lse = malloc(sizeof *lse * ln);
    if (!o || !lse) {
        rec->status = VB_ERROR;
        snprintf(rec->message, sizeof rec->message, "out of host memory for the outputs");
    } else if (!CU(g, cudaStreamSynchronize(g->stream)) || !CU(g, cudaMemcpy(o, d->o, 2 * on, cudaMemcpyDeviceToHost)) ||
               !CU(g, cudaMemcpy(lse, d->lse, 4 * ln, cudaMemcpyDeviceToHost))) {
        record_error(g, rec);
    } else {
        vb_kernel_output out = {o, k->writes_lse ? lse : NULL, launch_tokens, cap->out_tokens};
        rec->status = vb_check_output(c->in, c->ref, c->vref, &out, c->threads, &rec->checks, rec->message,
                                      sizeof rec->message);
    }
    free(o);
    free(lse);
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

static dev_caps eager_caps(const vb_instance *in, const vb_kernel *const *ks, int nk)
{
    dev_caps c = {in->batch, in->tokens, in->tokens + in->draft, in->kv_indices.count, in->num_slots, in->mask_bytes,
                  in->heads, in->d_qk, in->d_v, 0};
    vb_verify_params lim = vb_instance_launch_params(in, in->live_batch);
    c.ws_bytes = max_workspace(ks, nk, &lim);
    return c;
}

double vb_gpu_eager_bytes(const vb_instance *in, const vb_kernel *const *ks, int nk)
{
    dev_caps c = eager_caps(in, ks, nk);
    return caps_bytes(&c);
}

static void time_record(vb_gpu *g, launch_fn fn, void *ctx, const vb_case *c, int batch, vb_record *rec)
{
    double bytes, flops;
    vb_instance_traffic(c->in, batch, &bytes, &flops);
    if (measure(g, fn, ctx, &c->timing, 0, bytes, flops, &g->ceil, &rec->hot) ||
        (c->timing.cold_l2 && measure(g, fn, ctx, &c->timing, 1, bytes, flops, &g->ceil, &rec->cold)))
        record_error(g, rec);
}

void vb_gpu_run_eager(vb_gpu *g, const vb_kernel *const *ks, int nk, const vb_case *c, vb_record *const *recs)
{
    const vb_instance *in = c->in;
    dev_caps caps = eager_caps(in, ks, nk);
    dev_inputs d;
    if (!dev_alloc(g, &d, &caps) || !dev_upload(g, &d, in)) {
        for (int k = 0; k < nk; k++)
            record_error(g, recs[k]);
        dev_free(&d);
        return;
    }
    for (int k = 0; k < nk && !g->dead; k++) {
        kernel_call kc = {ks[k], dev_params(&d, in, in->live_batch, in->draft), d.ws};
        if (!poison_outputs(g, &d) || !CU(g, kernel_launch(&kc, g->stream))) {
            record_error(g, recs[k]);
            continue;
        }
        check_outputs(g, &d, ks[k], c, in->live_tokens, recs[k]);
        if (recs[k]->status != VB_ERROR)
            time_record(g, kernel_launch, &kc, c, in->live_batch, recs[k]);
    }
    dev_free(&d);
}

/* ---- CUDA graphs --------------------------------------------------------------------- */

struct vb_graph_set {
    vb_gpu *g;
    int nk, bucket, max_draft, captured;
    const vb_kernel *k[MAX_KERNELS];
    cudaGraphExec_t exec[MAX_KERNELS];
    char capture_error[MAX_KERNELS][320]; /* non-empty: this kernel is not capture-safe */
    dev_inputs d;
};

static dev_caps graph_caps(const vb_scenario *s, const vb_kernel *const *ks, int nk)
{
    dev_caps c = {s->bucket, 0, 0, 0, 0, 0, s->heads, vb_scenario_d_qk(s), vb_scenario_d_v(s), 0};
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
    c.ws_bytes = max_workspace(ks, nk, &lim);
    return c;
}

double vb_graph_bytes(const vb_scenario *s, const vb_kernel *const *ks, int nk)
{
    dev_caps c = graph_caps(s, ks, nk);
    return caps_bytes(&c);
}

vb_graph_set *vb_graph_create(vb_gpu *g, const vb_scenario *s, const vb_kernel *const *ks, int nk)
{
    vb_graph_set *gs = calloc(1, sizeof *gs);
    if (!gs || nk > MAX_KERNELS) {
        free(gs);
        return NULL;
    }
    gs->g = g, gs->nk = nk, gs->bucket = s->bucket, gs->max_draft = vb_scenario_max_draft(s);
    memcpy(gs->k, ks, sizeof *ks * (size_t)nk);
    dev_caps caps = graph_caps(s, ks, nk);
    if (!dev_alloc(g, &gs->d, &caps)) {
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
    vb_verify_params p = dev_params(&gs->d, in, gs->bucket, gs->max_draft);
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
    if (!dev_upload(g, &gs->d, c->in)) {
        for (int k = 0; k < gs->nk; k++)
            record_error(g, recs[k]);
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
        if (!poison_outputs(g, &gs->d) || !CU(g, cudaGraphLaunch(gs->exec[k], g->stream))) {
            record_error(g, rec);
            continue;
        }
        check_outputs(g, &gs->d, gs->k[k], c, c->in->tokens, rec);
        if (rec->status != VB_ERROR)
            time_record(g, graph_launch, &gs->exec[k], c, c->in->batch, rec);
    }
}

void vb_graph_free(vb_graph_set *gs)
{
    if (!gs)
        return;
    for (int k = 0; k < gs->nk; k++)
        if (gs->exec[k])
            cudaGraphExecDestroy(gs->exec[k]);
    dev_free(&gs->d);
    free(gs);
}
