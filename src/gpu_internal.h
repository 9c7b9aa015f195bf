/* What the GPU modules share and nothing else sees: the device handle, checked CUDA calls,
 * timing a launch, and the device copies of an instance.
 *   gpu_device.c   probe, ceilings, errors      gpu_inputs.c   inputs generated on the device
 *   gpu_timing.c   samples by CUDA events       gpu_buffers.c  device buffers and output checks
 *   gpu_run.c      the eager and CUDA-graph runners */
#ifndef VB_GPU_INTERNAL_H
#define VB_GPU_INTERNAL_H

#include <cuda_runtime_api.h>

#include "gpu.h"

#define VB_MAX_KERNELS 64

/* This run's measured ceilings: GB/s and TFLOP/s are reported as shares of them. */
typedef struct vb_ceilings {
    double read_gbps, mma_tflops;
    double wgmma_tflops; /* sm_90 only; 0 elsewhere */
} vb_ceilings;

struct vb_gpu {
    struct cudaDeviceProp prop;
    vb_ceilings ceil;
    int cc;
    cudaStream_t stream;
    void *flush;          /* written between cold samples: evicts the L2 */
    size_t flush_bytes;
    void *sink;
    int dead, had_error;
    char err[320];
    vb_record *running; /* the record whose kernel a wait is for (vb_gpu_running_record) */
};

/* cudaStreamSynchronize on the run's stream, watched (watchdog.h): every host wait for the
 * GPU's work goes through here, so that a kernel that never ends becomes a reported hang. */
cudaError_t vb_gpu_sync(vb_gpu *g);

/* 1 when e is cudaSuccess; else records "call: error (text) at file:line" as the run's
 * first error (a sticky one ends the GPU stages) and returns 0. */
int vb_gpu_check(vb_gpu *g, cudaError_t e, const char *what, const char *file, int line);
#define CU(g, call) vb_gpu_check((g), (call), #call, __FILE__, __LINE__)
/* Marks rec as a CUDA error with the recorded message. */
void vb_gpu_record_error(vb_gpu *g, vb_record *rec);

/* ---- timing (gpu_timing.c) ---- */
typedef cudaError_t (*vb_launch_fn)(void *ctx, cudaStream_t stream);
/* Warm-up, then samples bracketed by events as sampling.h's policy asks (the L2 flush, when
 * cold, stays outside the brackets); bytes and flops turn the median into rates and shares
 * of ceil. 0, or -1 with the CUDA error recorded. */
int vb_gpu_measure(vb_gpu *g, vb_launch_fn fn, void *ctx, const vb_timing_spec *ts, int cold, double bytes,
                   double flops, const vb_ceilings *ceil, vb_timing *out);

/* ---- device buffers (gpu_buffers.c) ---- */

/* Capacities: the largest instance a set of buffers must hold. */
typedef struct vb_dev_caps {
    int64_t batch, tokens, out_tokens, sum_prefix, num_slots, mask_bytes;
    int heads, d_qk, d_v;
    size_t ws_bytes;
} vb_dev_caps;

typedef struct vb_dev_inputs {
    vb_dev_caps cap;
    uint16_t *q, *kv, *o;
    void *kv_indptr, *kv_indices, *qo_indptr, *out_cache_loc, *mask_indptr, *ws;
    uint8_t *mask;
    float *lse;
} vb_dev_inputs;

double vb_dev_caps_bytes(const vb_dev_caps *c);
size_t vb_dev_max_workspace(const vb_kernel *const *ks, int nk, const vb_verify_params *limits);
int vb_dev_alloc(vb_gpu *g, vb_dev_inputs *d, const vb_dev_caps *c);
void vb_dev_free(vb_dev_inputs *d);
/* Writes an instance into the buffers in place (as SGLang rewrites its static buffers). */
int vb_dev_upload(vb_gpu *g, vb_dev_inputs *d, const vb_instance *in);
vb_verify_params vb_dev_params(const vb_dev_inputs *d, const vb_instance *in, int batch, int max_draft);
int vb_dev_poison_outputs(vb_gpu *g, vb_dev_inputs *d);
/* Copies the outputs back and runs every check layer on them into rec. */
void vb_dev_check_outputs(vb_gpu *g, vb_dev_inputs *d, const vb_kernel *k, const vb_case *c, int64_t launch_tokens,
                          vb_record *rec);

#endif
