/* Command line: sub-commands, options, help text and exit codes. */
#ifndef VB_CLI_H
#define VB_CLI_H

enum vb_exit {
    VB_EXIT_OK = 0,        /* every check passed */
    VB_EXIT_FAIL = 1,      /* a correctness, capture or token-exact check failed */
    VB_EXIT_INPUT = 2,     /* bad input or usage */
    VB_EXIT_NO_GPU = 3,    /* --require-gpu and no usable GPU */
    VB_EXIT_CUDA = 4       /* a CUDA runtime error */
};

typedef enum vb_command {
    VB_CMD_RUN, VB_CMD_LIST_KERNELS, VB_CMD_VALIDATE, VB_CMD_EXPORT, VB_CMD_REPORT, VB_CMD_COMPARE, VB_CMD_MERGE
} vb_command;
typedef enum vb_format { VB_FMT_TABLE, VB_FMT_MARKDOWN, VB_FMT_CSV, VB_FMT_JSON } vb_format;

#define VB_CLI_MAX 64
#define VB_MAX_BASELINES 8 /* --baseline dumps in one table */

typedef struct vb_cli {
    vb_command command;
    const char *files[1024];
    int n_files;
    const char *kernels[VB_CLI_MAX];
    int n_kernels;
    const char *filters[VB_CLI_MAX];
    int n_filters;
    const char *json_path, *csv_path, *markdown_path, *speedup_path, *out_dir;
    const char *baselines[VB_MAX_BASELINES]; /* --baseline, in order */
    int n_baselines;
    vb_format format;
    int quiet, require_gpu, no_gpu, threads, all_kernels;
    int cpu_model;         /* -1 auto (only without a GPU), 0 off, 1 on */
    int cold_l2;           /* -1 as the scenario says, 0 off, 1 on */
    int iterations;        /* 0 as the scenario says */
    int verify_generator;
    int no_ceilings;
    int gpu_timeout_s;     /* a GPU wait longer than this is a hang (0: no watchdog) */
    int cpu_model_bug;     /* vb_cpu_bug planted in the CPU model: proves the checks fail */
    double threshold;      /* compare: smallest change that counts, as a fraction (default 0.05) */
    int allow_different_gpu;
    char pair_old[48], pair_new[48]; /* compare --kernel-pair OLD=NEW; empty: same kernels */
    int format_given;      /* --format was on the command line */
} vb_cli;

/* The exit code when two outcomes apply: 4 outranks 1, 1 outranks 2, 2 outranks 3 and 0. */
int vb_exit_worst(int a, int b);

/* Returns -1 to continue, else the exit code (help and version print and return 0). */
int vb_cli_parse(int argc, char **argv, vb_cli *cli);

#endif
