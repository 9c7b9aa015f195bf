/* The device: opening it, its measured ceilings, and checked CUDA calls. */
#include "gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_util.h"
#include "watchdog.h"

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
int vb_gpu_check(vb_gpu *g, cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess)
        return 1;
    g->had_error = 1;
    if (sticky(e))
        g->dead = 1;
    else /* taken: the next kernel's launch, which reads the last error, must not report it */
        (void)cudaGetLastError();
    snprintf(g->err, sizeof g->err, "%s: %s (%s) at %s:%d", what, cudaGetErrorName(e), cudaGetErrorString(e),
             base_name(file), line);
    return 0;
}

void vb_gpu_record_error(vb_gpu *g, vb_record *rec)
{
    rec->status = VB_ERROR;
    snprintf(rec->message, sizeof rec->message, "%s%s", g->err, g->dead ? " [sticky: GPU stages end here]" : "");
}

int vb_gpu_dead(const vb_gpu *g) { return g->dead; }
int vb_gpu_had_error(const vb_gpu *g) { return g->had_error; }
int vb_gpu_cc(const vb_gpu *g) { return g ? g->cc : 0; }
vb_record *vb_gpu_running_record(const vb_gpu *g) { return g ? g->running : NULL; }
const char *vb_gpu_error_text(const vb_gpu *g) { return g ? g->err : ""; }

cudaError_t vb_gpu_sync(vb_gpu *g)
{
    vb_watchdog_enter();
    const cudaError_t e = cudaStreamSynchronize(g->stream);
    vb_watchdog_leave();
    return e;
}

double vb_gpu_free_bytes(vb_gpu *g)
{
    size_t free_b = 0, total = 0;
    return CU(g, cudaMemGetInfo(&free_b, &total)) ? (double)free_b : 0.0;
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

static cudaError_t wgmma_probe_launch(void *ctx, cudaStream_t s)
{
    void **a = ctx;
    double flops;
    return vb_dev_wgmma_probe(a[0], (int)(uintptr_t)a[1], 1024, &flops, s);
}

/* The tensor-core rate of one probe kernel (launch once to load it, then time it); 0 on error. */
static double tensor_ceiling(vb_gpu *g, cudaError_t (*probe)(float *, int, int, double *, cudaStream_t), int iters,
                             cudaError_t (*launch)(void *, cudaStream_t))
{
    const vb_timing_spec ts = {.warmup = 2, .iterations = 10, .min_samples = 10, .max_time_ms = 5000.0};
    const vb_ceilings none = {0, 0, 0};
    double flops = 0;
    vb_timing t;
    probe(g->sink, g->prop.multiProcessorCount, iters, &flops, g->stream);
    void *args[2] = {g->sink, (void *)(uintptr_t)g->prop.multiProcessorCount};
    if (CU(g, vb_gpu_sync(g)) && !vb_gpu_measure(g, launch, args, &ts, 0, 0, flops, &none, &t))
        return t.tflops;
    return 0;
}

/* The device's own ceilings, measured now: a streaming read of a buffer 16x the L2, a
 * register-only bf16 mma.sync loop (the tensor-core rate a non-wgmma kernel can reach) and, on
 * compute capability 9.0, a bf16 wgmma loop with both operands in shared memory (the rate a
 * Hopper kernel can reach; kernels/wgmma_probe_sm90a.cu). */
static void measure_ceilings(vb_gpu *g, vb_gpu_info *info)
{
    vb_timing_spec ts = {.warmup = 2, .iterations = 10, .min_samples = 10, .max_time_ms = 5000.0};
    const vb_ceilings none = {0, 0, 0};
    vb_timing t;
    size_t bytes = (size_t)g->prop.l2CacheSize * 16;
    void *buf = NULL;
    if (CU(g, cudaMalloc(&buf, bytes)) && CU(g, cudaMemset(buf, 1, bytes))) {
        void *args[4] = {buf, (void *)(uintptr_t)(bytes / 16), g->sink, (void *)(uintptr_t)g->prop.multiProcessorCount};
        if (!vb_gpu_measure(g, read_probe_launch, args, &ts, 0, (double)bytes, 0, &none, &t))
            g->ceil.read_gbps = info->read_gbps = t.gbps;
    }
    cudaFree(buf);
    g->ceil.mma_tflops = info->mma_tflops = tensor_ceiling(g, vb_dev_mma_probe, 4096, mma_probe_launch);
    if (g->prop.major == 9 && g->prop.minor == 0) /* the sm_90a image runs on 9.0 only */
        g->ceil.wgmma_tflops = info->wgmma_tflops = tensor_ceiling(g, vb_dev_wgmma_probe, 1024, wgmma_probe_launch);
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
        (void)(CU(g, vb_dev_read_probe(g->flush, 1, g->sink, 1, g->stream)) && CU(g, vb_gpu_sync(g)));
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
