/* Triton baseline dumps (scripts/triton_baseline.py) and the speedup tables built from them.
 * A dump entry is compared with a scenario only when their shape keys are equal. */
#ifndef VB_BASELINE_H
#define VB_BASELINE_H

#include <stdio.h>

#include "cli.h"
#include "result.h"

#define VB_BASELINE_SCHEMA "verifybench.triton_baseline/1"

typedef struct vb_baseline_entry {
    char scenario[VB_NAME_MAX];
    char shape_key[192];
    int correct;
    double max_err_ratio;
    vb_timing eager, graph;
} vb_baseline_entry;

typedef struct vb_baseline {
    char path[256], gpu[128], impl[32], torch[48], triton[48], date[32];
    char sglang_version[32]; /* impl sglang: the SGLang that ran */
    char mirrors[32];        /* impl builtin: the SGLang release whose kernel it re-implements */
    char kernel_module[160]; /* where the kernel that ran came from */
    char kernel_sha256[72];  /* sha256 of that kernel's source */
    char label[96];          /* what the tables call it: "SGLang 0.5.23", "builtin (SGLang 0.5.9)" */
    vb_baseline_entry *entries;
    int count;
} vb_baseline;

/* 0, or -1 with why (unreadable, malformed, another schema). */
int vb_baseline_read(const char *path, vb_baseline *b, char *why, size_t why_len);
/* The same from text in memory (the fuzz target's entry). */
int vb_baseline_parse(const char *text, vb_baseline *b, char *why, size_t why_len);
void vb_baseline_free(vb_baseline *b);
/* Every --baseline of the command line into b[0 .. cli->n_baselines), labels made distinct;
 * 0, or -1 after one line naming the file and the reason (nothing left allocated). */
int vb_baselines_read(const vb_cli *cli, vb_baseline *b);
void vb_baselines_free(vb_baseline *b, int n);

/* One baseline's side of a table line. */
typedef struct vb_speedup_cell {
    double eager_us, eager_speedup; /* NaN when absent */
    double graph_us, graph_speedup;
    const char *note;               /* "no baseline", "shape differs", "baseline wrong" or "" */
} vb_speedup_cell;

/* One line of the table: a scenario and kernel, both modes, against every baseline. */
typedef struct vb_speedup_row {
    int scenario; /* index into results */
    char kernel[48];
    double eager_us, graph_us; /* the kernel's times; NaN when absent */
    vb_speedup_cell base[VB_MAX_BASELINES];
} vb_speedup_row;

/* Builds the rows against baselines b[0 .. nb) (caller frees); prints to stderr one line per
 * scenario whose dump entry has another shape key. Speedup = baseline time / kernel time
 * (above 1: faster). */
int vb_speedup_rows(const vb_results *r, const vb_baseline *b, int nb, vb_speedup_row **rows);
/* Geometric mean of a kernel's speedups against baseline `base` in one mode (0: eager,
 * 1: graph); NaN if none. */
double vb_speedup_geomean(const vb_speedup_row *rows, int n, const char *kernel, int base, int graph, int *count);
/* The table (and geometric means per kernel and baseline) as a terminal table, markdown or
 * CSV; every baseline is named by its label, version and kernel source above the table. */
void vb_speedup_print(FILE *f, vb_format fmt, const vb_results *r, const vb_baseline *b, int nb);
/* What --baseline asks for, after the results are out: the table on stdout and, with
 * --speedup FILE, in FILE (markdown for .md, CSV for .csv, else the terminal table).
 * 0, or -1 when the file cannot be written. */
int vb_speedup_outputs(const vb_cli *cli, const vb_results *r, const vb_baseline *b, int nb);

#endif
