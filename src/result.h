/* The result model: every outcome of a run is a record (scenario, variant, kernel, mode)
 * with its checks and timings. Measurement fills it; printers (report.c) only format it. */
#ifndef VB_RESULT_H
#define VB_RESULT_H

#include <stdint.h>

#include "scenario.h"

#define VB_RESULTS_SCHEMA "verifybench.results/1"

typedef enum vb_mode { VB_MODE_CPU, VB_MODE_EAGER, VB_MODE_GRAPH } vb_mode;

typedef enum vb_status {
    VB_PASS,        /* every check passed (near-ties are reported, not failures) */
    VB_FAIL,        /* a correctness, capture or token-exact check failed */
    VB_SKIPPED,     /* not run: no GPU, or the GPU stages ended early */
    VB_UNSUPPORTED, /* the kernel does not take this shape or this GPU */
    VB_ERROR        /* a CUDA runtime error */
} vb_status;

typedef struct vb_checks {
    int ran;
    int64_t elements;       /* live output elements compared */
    int64_t unwritten;      /* live or padding elements still holding the poison */
    int64_t nonfinite;      /* NaN or Inf written into live or padding rows */
    int64_t stray;          /* elements beyond the launch's rows that changed */
    int64_t out_of_tol;
    double max_abs_err;
    double max_err_ratio;   /* max |err| / tol: below 1 passes */
    double rel_l2;          /* ||o - ref|| / ||ref|| */
    int64_t worst[4];       /* request, draft token, head, dim of the largest err/tol */
    double lse_max_err;     /* NaN when the kernel writes no lse */
    int64_t lse_bad;
    int64_t rows, token_mismatches, near_ties;
    int requests, paths_equal, paths_near_tie;
    double accepted_mean;
} vb_checks;

typedef struct vb_timing {
    int samples;            /* 0: not measured (fields empty in every report) */
    double median_us, p10_us, p90_us;
    double gbps, tflops;    /* from the minimal traffic and flop counts */
    double bw_share, mma_share; /* of this run's measured ceilings; 0 if not measured */
    double wgmma_share;     /* of the sm_90a wgmma ceiling; 0 off Hopper or if not measured */
    /* The floor: max(bytes / read ceiling, flops / tensor ceiling), where the tensor ceiling is
     * the fastest tensor instruction measured on the device (wgmma on sm_90, else mma.sync), so
     * one floor per scenario bounds every kernel on this GPU: median · max(bw_share, the smaller
     * nonzero tensor share). Also median ÷ floor (1 would be a kernel at the ceiling); 0 if no
     * ceiling was measured. */
    double floor_us, floor_ratio;
} vb_timing;

typedef struct vb_record {
    int scenario;           /* index into vb_results.scenarios */
    char variant[VB_NAME_MAX];
    char kernel[48];
    vb_mode mode;
    vb_status status;
    char message[320];      /* why it failed, was skipped or errored */
    vb_checks checks;
    vb_timing hot, cold;
} vb_record;

typedef struct vb_scenario_info {
    char name[VB_NAME_MAX];
    char file[256];
    char shape_key[192];    /* what a baseline dump entry must match (prepare.h) */
    int valid;              /* 0: rejected at build time; see message */
    char message[320];
    int batch, bucket, draft, heads, d_qk, d_v, page_size, n_replays;
    char tree[48], prefix[48], layout[16], dtypes[96];
    int64_t total_prefix, num_slots;
    double bytes, flops;    /* minimal traffic and flops of the base step */
    double oracle_s;        /* oracle wall time, base step */
    double pmax_median;     /* median largest softmax weight of a row */
    double accepted_mean;   /* oracle's mean accepted draft tokens per request */
} vb_scenario_info;

typedef struct vb_gpu_info {
    int present;
    char skipped_reason[256];
    char name[128];
    int cc_major, cc_minor, sms;
    int64_t l2_bytes, mem_bytes;
    char driver[32];        /* the NVIDIA driver release, e.g. 580.159.04 */
    int driver_version, runtime_version; /* CUDA driver API and runtime versions */
    double read_gbps, mma_tflops;   /* ceilings measured in this run; 0 if not */
    double wgmma_tflops;            /* the sm_90a warpgroup-MMA ceiling; 0 off Hopper or if not measured */
} vb_gpu_info;

/* One of the runs a merged results file was joined from (merge.c): when it ran and the ceilings
 * its records' shares are of. */
#define VB_MAX_PARTS 16
typedef struct vb_run_part {
    char date[32];
    double read_gbps, mma_tflops, wgmma_tflops;
} vb_run_part;

typedef struct vb_results {
    char version[32], commit[48], date[32], host[64];
    int cpus;
    /* A run that ended before its last scenario: a checkpoint written while it ran (the --json
     * file is rewritten after every scenario) or a run stopped by a signal. 0 is a complete run,
     * and what a file without these fields (written before they existed) reads as. */
    int incomplete;
    char interrupted_by[16]; /* "SIGINT", "SIGTERM"; empty when no signal stopped it */
    /* Built with -Dphase_stamps=true: the onepass kernels printed stamps, so their times are
     * not the kernels' own (kernels/phase_stamps.cuh). 0 in a file without the field. */
    int phase_stamps;
    int scenarios_planned;   /* scenarios the run was given; 0: unknown (n_scenarios) */
    vb_gpu_info gpu;
    vb_scenario_info *scenarios;
    int n_scenarios, cap_scenarios;
    vb_record *records;
    int n_records, cap_records;
    /* A merged file's runs, the first one's date and ceilings being the file's own; 0: one run. */
    vb_run_part parts[VB_MAX_PARTS];
    int n_parts;
} vb_results;

void vb_results_init(vb_results *r);
int vb_results_add_scenario(vb_results *r, const vb_scenario_info *info);
/* A new record is skipped with message VB_NOT_RUN until a stage fills it; seeing that message
 * in a report means a record was never filled. The array may move, so a pointer from an
 * earlier call is stale after it. */
#define VB_NOT_RUN "not run"
/* The message of records that a sticky CUDA error kept from running. */
#define VB_NOT_RUN_GPU_ENDED VB_NOT_RUN ": an earlier CUDA error ended the GPU stages"
vb_record *vb_results_add_record(vb_results *r, int scenario, const char *variant, const char *kernel,
                                 vb_mode mode);
void vb_results_free(vb_results *r);
/* Worst status over all records: what main() turns into the exit code. */
int vb_results_failures(const vb_results *r);

/* Derives floor_us and floor_ratio from the median and the shares. */
void vb_timing_set_floor(vb_timing *t);

/* Best and worst floor ratio (hot timings) over one kernel's records; 0 when none is timed. */
typedef struct vb_floor_range {
    double best, worst;
    int best_rec, worst_rec; /* record indices */
} vb_floor_range;
vb_floor_range vb_results_floor_range(const vb_results *r, const char *kernel);

const char *vb_mode_name(vb_mode m);
const char *vb_status_name(vb_status s);
int vb_mode_parse(const char *s, vb_mode *out);
int vb_status_parse(const char *s, vb_status *out);

#endif
