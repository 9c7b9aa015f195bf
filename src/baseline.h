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
    vb_baseline_entry *entries;
    int count;
} vb_baseline;

/* 0, or -1 with why (unreadable, malformed, another schema). */
int vb_baseline_read(const char *path, vb_baseline *b, char *why, size_t why_len);
/* The same from text in memory (the fuzz target's entry). */
int vb_baseline_parse(const char *text, vb_baseline *b, char *why, size_t why_len);
void vb_baseline_free(vb_baseline *b);

/* One line of the table: a scenario and kernel, both modes. */
typedef struct vb_speedup_row {
    int scenario;             /* index into results */
    char kernel[48];
    double eager_us, base_eager_us, eager_speedup; /* NaN when absent */
    double graph_us, base_graph_us, graph_speedup;
    const char *note;         /* "no baseline", "shape differs", "baseline wrong" or "" */
} vb_speedup_row;

/* Builds the rows (caller frees); prints to stderr one line per scenario whose dump entry
 * has another shape key. Speedup = baseline time / kernel time (above 1: faster). */
int vb_speedup_rows(const vb_results *r, const vb_baseline *b, vb_speedup_row **rows);
/* Geometric mean of a kernel's speedups in one mode (0: eager, 1: graph); NaN if none. */
double vb_speedup_geomean(const vb_speedup_row *rows, int n, const char *kernel, int graph, int *count);
/* The table (and geometric means) as a terminal table, markdown or CSV. */
void vb_speedup_print(FILE *f, vb_format fmt, const vb_results *r, const vb_baseline *b);
/* What --baseline asks for, after the results are out: the table on stdout and, with
 * --speedup FILE, in FILE (markdown for .md, CSV for .csv, else the terminal table).
 * 0, or -1 when the file cannot be written. */
int vb_speedup_outputs(const vb_cli *cli, const vb_results *r, const vb_baseline *b);

#endif
