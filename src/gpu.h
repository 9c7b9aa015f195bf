/* The GPU stages: device probing and ceilings, input generation on the device, eager runs
 * and CUDA-graph capture and replay of every kernel, with checks and timing.
 *
 * Every CUDA call is checked; a failure records "call, file:line, error name and text".
 * A sticky error (the context is lost) marks the GPU dead: later GPU stages are skipped and
 * the results so far are still reported. */
#ifndef VB_GPU_H
#define VB_GPU_H

#include "inputs.h"
#include "oracle.h"
#include "result.h"
#include "scenario.h"
#include "verdict.h"
#include "verify_attn.h"

typedef struct vb_gpu vb_gpu;

/* Opens device 0. NULL when no GPU is usable, with the CUDA error text in
 * info->skipped_reason. With ceilings, measures the read-bandwidth and bf16 mma ceilings. */
vb_gpu *vb_gpu_open(vb_gpu_info *info, int ceilings);
void vb_gpu_close(vb_gpu *g);
/* 1 once a sticky CUDA error has ended the GPU stages. */
int vb_gpu_dead(const vb_gpu *g);
/* 1 if any CUDA runtime error was recorded (exit code 4). */
int vb_gpu_had_error(const vb_gpu *g);
int vb_gpu_cc(const vb_gpu *g);
/* The first CUDA error of the run, as "call: error (text) at file:line"; "" if none. */
const char *vb_gpu_error_text(const vb_gpu *g);
/* The record whose kernel the run is waiting for, or NULL (for the watchdog's report). */
vb_record *vb_gpu_running_record(const vb_gpu *g);
/* Free device memory in bytes. */
double vb_gpu_free_bytes(vb_gpu *g);

/* Generates in's q and KV with cuRAND's device generator (the same Philox stream the host
 * generator gives) and copies them to the host arrays. With verify, also generates them
 * on the host and compares every bit. 0 on success; -1 with why. */
int vb_gpu_fill_instance(vb_gpu *g, vb_instance *in, int verify, char *why, size_t why_len);

/* Everything one kernel run is checked against. */
typedef struct vb_case {
    const vb_instance *in;
    const vb_oracle_out *ref;
    const vb_verdict_ref *vref;
    vb_timing_spec timing;
    int threads;
} vb_case;

/* Device bytes an eager run of in needs (buffers and the largest workspace). */
double vb_gpu_eager_bytes(const vb_instance *in, const vb_kernel *const *kernels, int nk);

/* Eager: upload the inputs once, then per kernel: poison the outputs, launch over the live
 * batch, check against the oracle, time hot (and cold if asked). recs[k] is kernel k's. */
void vb_gpu_run_eager(vb_gpu *g, const vb_kernel *const *kernels, int nk, const vb_case *c,
                      vb_record *const *recs);

/* CUDA graphs: static buffers sized for every variant of s, one graph per kernel captured
 * under cudaStreamCaptureModeGlobal (a hidden sync or allocation fails the capture). */
typedef struct vb_graph_set vb_graph_set;
double vb_graph_bytes(const vb_scenario *s, const vb_kernel *const *kernels, int nk);
vb_graph_set *vb_graph_create(vb_gpu *g, const vb_scenario *s, const vb_kernel *const *kernels, int nk);
/* Loads c's variant into the static buffers; on the first call captures each kernel's
 * graph. Then, per kernel: poison, replay, check, time. recs[k] receives kernel k's record
 * (a kernel whose capture failed is reported FAIL once and skipped afterwards). */
void vb_graph_replay(vb_graph_set *gs, const vb_case *c, vb_record *const *recs);
void vb_graph_free(vb_graph_set *gs);

#endif
