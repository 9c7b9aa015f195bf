#include "baseline.h"

#include "fields.h"
#include "fileutil.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* A dump's timing: the results' timing fields it has (samples, median and spread), checked. */
static int read_timing(const cJSON *t, vb_timing *out, const char *path, char *why, size_t n)
{
    memset(out, 0, sizeof *out);
    if (vb_fields_from_json(t, &vb_timing_table, out, path, why, n))
        return -1;
    if (out->median_us > 0 && out->samples == 0)
        out->samples = 1; /* dumps before samples were recorded */
    if (!(out->median_us > 0))
        memset(out, 0, sizeof *out);
    return 0;
}

int vb_baseline_read(const char *path, vb_baseline *b, char *why, size_t why_len)
{
    memset(b, 0, sizeof *b);
    char *text = vb_read_text(path, (size_t)1 << 30, why, why_len);
    if (!text)
        return -1;
    int rc = vb_baseline_parse(text, b, why, why_len);
    free(text);
    snprintf(b->path, sizeof b->path, "%s", path);
    return rc;
}

int vb_baseline_parse(const char *text, vb_baseline *b, char *why, size_t why_len)
{
    memset(b, 0, sizeof *b);
    cJSON *root = cJSON_Parse(text);
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    if (!root || !cJSON_IsString(schema) || strcmp(schema->valuestring, VB_BASELINE_SCHEMA) || !cJSON_IsArray(entries)) {
        snprintf(why, why_len, root ? "schema: not a %s dump" : "malformed JSON", VB_BASELINE_SCHEMA);
        cJSON_Delete(root);
        return -1;
    }
    vb_json_str(root, "gpu", b->gpu, sizeof b->gpu);
    vb_json_str(root, "impl", b->impl, sizeof b->impl);
    vb_json_str(root, "torch", b->torch, sizeof b->torch);
    vb_json_str(root, "triton", b->triton, sizeof b->triton);
    vb_json_str(root, "date", b->date, sizeof b->date);
    b->entries = calloc((size_t)cJSON_GetArraySize(entries) + 1, sizeof *b->entries);
    int rc = b->entries ? 0 : (snprintf(why, why_len, "out of memory"), -1);
    for (const cJSON *e = entries->child; e && !rc; e = e->next) {
        vb_baseline_entry *x = &b->entries[b->count];
        char path[96];
        snprintf(path, sizeof path, "entries[%d]", b->count++);
        if (!cJSON_IsObject(e)) {
            snprintf(why, why_len, "%s: expected an object", path);
            rc = -1;
            break;
        }
        vb_json_str(e, "scenario", x->scenario, sizeof x->scenario);
        vb_json_str(e, "shape_key", x->shape_key, sizeof x->shape_key);
        x->correct = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "correct"));
        x->max_err_ratio = vb_json_num(e, "max_err_ratio");
        const char *modes[2] = {"eager", "graph"};
        vb_timing *ts[2] = {&x->eager, &x->graph};
        for (int m = 0; m < 2 && !rc; m++) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s.%s", path, modes[m]);
            rc = read_timing(cJSON_GetObjectItemCaseSensitive(e, modes[m]), ts[m], sub, why, why_len);
        }
    }
    cJSON_Delete(root);
    if (rc)
        vb_baseline_free(b);
    return rc;
}

void vb_baseline_free(vb_baseline *b)
{
    free(b->entries);
    memset(b, 0, sizeof *b);
}

static const vb_baseline_entry *find_entry(const vb_baseline *b, const char *scenario)
{
    for (int i = 0; i < b->count; i++)
        if (!strcmp(b->entries[i].scenario, scenario))
            return &b->entries[i];
    return NULL;
}

/* The kernel's time for the base variant in one mode; NaN if it did not pass or was not timed. */
static double kernel_time(const vb_results *r, int s, const char *kernel, vb_mode mode)
{
    for (int k = 0; k < r->n_records; k++) {
        const vb_record *rec = &r->records[k];
        if (rec->scenario == s && rec->mode == mode && !strcmp(rec->kernel, kernel) && !strcmp(rec->variant, "base"))
            return rec->status == VB_PASS && rec->hot.samples ? rec->hot.median_us : NAN;
    }
    return NAN;
}

int vb_speedup_rows(const vb_results *r, const vb_baseline *b, vb_speedup_row **out)
{
    int n = 0, cap = 16;
    vb_speedup_row *rows = malloc(sizeof *rows * (size_t)cap);
    for (int s = 0; s < r->n_scenarios && rows; s++) {
        const vb_scenario_info *info = &r->scenarios[s];
        if (!info->valid)
            continue;
        const vb_baseline_entry *e = find_entry(b, info->name);
        const char *note = !e ? "no baseline" : strcmp(e->shape_key, info->shape_key) ? "shape differs"
                                              : !e->correct ? "baseline wrong" : "";
        if (e && !strcmp(note, "shape differs"))
            fprintf(stderr, "%s: %s: shape key differs (dump %s, run %s): not compared\n", b->path, info->name,
                    e->shape_key, info->shape_key);
        for (int k = 0; k < r->n_records; k++) { /* one row per kernel with an eager base record */
            const vb_record *rec = &r->records[k];
            if (rec->scenario != s || rec->mode != VB_MODE_EAGER || strcmp(rec->variant, "base"))
                continue;
            if (n == cap && !(rows = realloc(rows, sizeof *rows * (size_t)(cap *= 2))))
                break;
            vb_speedup_row *row = &rows[n++];
            memset(row, 0, sizeof *row);
            row->scenario = s;
            snprintf(row->kernel, sizeof row->kernel, "%s", rec->kernel);
            row->note = note;
            int usable = !*note;
            row->eager_us = kernel_time(r, s, rec->kernel, VB_MODE_EAGER);
            row->graph_us = kernel_time(r, s, rec->kernel, VB_MODE_GRAPH);
            row->base_eager_us = usable && e->eager.samples ? e->eager.median_us : NAN;
            row->base_graph_us = usable && e->graph.samples ? e->graph.median_us : NAN;
            row->eager_speedup = row->base_eager_us / row->eager_us;
            row->graph_speedup = row->base_graph_us / row->graph_us;
        }
    }
    *out = rows;
    return rows ? n : 0;
}

double vb_speedup_geomean(const vb_speedup_row *rows, int n, const char *kernel, int graph, int *count)
{
    double logs = 0;
    int c = 0;
    for (int i = 0; i < n; i++) {
        double x = graph ? rows[i].graph_speedup : rows[i].eager_speedup;
        if (!strcmp(rows[i].kernel, kernel) && isfinite(x) && x > 0)
            logs += log(x), c++;
    }
    if (count)
        *count = c;
    return c ? exp(logs / c) : NAN;
}

static void cell(char *buf, size_t n, double x, const char *fmt)
{
    if (isfinite(x))
        snprintf(buf, n, fmt, x);
    else
        snprintf(buf, n, "-");
}

void vb_speedup_print(FILE *f, vb_format fmt, const vb_results *r, const vb_baseline *b)
{
    vb_speedup_row *rows;
    int n = vb_speedup_rows(r, b, &rows);
    static const char *const head[] = {"scenario", "kernel", "eager us", "triton eager us", "eager speedup",
                                       "graph us", "triton graph us", "graph speedup", "note"};
    if (fmt == VB_FMT_CSV) {
        fputs("scenario,kernel,eager_us,triton_eager_us,eager_speedup,graph_us,triton_graph_us,graph_speedup,note\n", f);
    } else if (fmt == VB_FMT_MARKDOWN) {
        fprintf(f, "\nSpeedup against the Triton baseline (%s, %s, triton %s, torch %s, %s): baseline time / kernel "
                   "time, median of hot samples; graph against graph.\n\n",
                b->impl, b->gpu, b->triton, b->torch, b->date);
        fputs("| scenario | kernel | eager us | triton eager us | eager speedup | graph us | triton graph us | graph speedup | note |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|---|\n", f);
    } else {
        fprintf(f, "\nspeedup against the Triton baseline %s (%s, %s): triton time / kernel time\n", b->path, b->impl,
                b->gpu);
        fprintf(f, "%-52s %-14s %10s %15s %13s %10s %15s %13s  %s\n", head[0], head[1], head[2], head[3], head[4],
                head[5], head[6], head[7], head[8]);
    }
    for (int i = 0; i < n; i++) {
        const vb_speedup_row *x = &rows[i];
        char c[6][32];
        cell(c[0], 32, x->eager_us, "%.1f"), cell(c[1], 32, x->base_eager_us, "%.1f");
        cell(c[2], 32, x->eager_speedup, "%.3f"), cell(c[3], 32, x->graph_us, "%.1f");
        cell(c[4], 32, x->base_graph_us, "%.1f"), cell(c[5], 32, x->graph_speedup, "%.3f");
        const char *name = r->scenarios[x->scenario].name;
        if (fmt == VB_FMT_CSV)
            fprintf(f, "\"%s\",%s,%s,%s,%s,%s,%s,%s,%s\n", name, x->kernel, c[0], c[1], c[2], c[3], c[4], c[5], x->note);
        else if (fmt == VB_FMT_MARKDOWN)
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, x->kernel, c[0], c[1], c[2], c[3],
                    c[4], c[5], x->note);
        else
            fprintf(f, "%-52s %-14s %10s %15s %13s %10s %15s %13s  %s\n", name, x->kernel, c[0], c[1], c[2], c[3],
                    c[4], c[5], x->note);
    }
    /* Geometric means, one line per kernel, in first-seen order. */
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= !strcmp(rows[j].kernel, rows[i].kernel);
        if (seen)
            continue;
        int ce, cg;
        double ge = vb_speedup_geomean(rows, n, rows[i].kernel, 0, &ce);
        double gg = vb_speedup_geomean(rows, n, rows[i].kernel, 1, &cg);
        char a[32], g[32];
        cell(a, sizeof a, ge, "%.3f"), cell(g, sizeof g, gg, "%.3f");
        if (fmt == VB_FMT_CSV)
            fprintf(f, "geomean,%s,,,%s,,,%s,%d eager / %d graph scenarios\n", rows[i].kernel, a, g, ce, cg);
        else if (fmt == VB_FMT_MARKDOWN)
            fprintf(f, "| **geomean** | %s | | | **%s** | | | **%s** | %d eager / %d graph scenarios |\n",
                    rows[i].kernel, a, g, ce, cg);
        else
            fprintf(f, "%-52s %-14s %10s %15s %13s %10s %15s %13s  %d eager / %d graph scenarios\n", "geomean",
                    rows[i].kernel, "", "", a, "", "", g, ce, cg);
    }
    free(rows);
}

static vb_format format_for(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcmp(dot, ".md"))
        return VB_FMT_MARKDOWN;
    return dot && !strcmp(dot, ".csv") ? VB_FMT_CSV : VB_FMT_TABLE;
}

int vb_speedup_outputs(const vb_cli *cli, const vb_results *r, const vb_baseline *b)
{
    /* JSON and CSV on stdout stay one document: there the table goes only to --speedup FILE. */
    if (cli->format != VB_FMT_JSON && cli->format != VB_FMT_CSV)
        vb_speedup_print(stdout, cli->format, r, b);
    if (!cli->speedup_path)
        return 0;
    vb_output out;
    char why[1200];
    if (vb_output_open(&out, cli->speedup_path, why, sizeof why) == 0) {
        if (format_for(cli->speedup_path) == VB_FMT_MARKDOWN)
            fprintf(out.f, "# Speedup against the Triton baseline\n\nverifybench %s, commit %s, %s, on %s.\n",
                    r->version, r->commit, r->date, r->gpu.present ? r->gpu.name : "no GPU");
        vb_speedup_print(out.f, format_for(cli->speedup_path), r, b);
        if (vb_output_close(&out, why, sizeof why) == 0)
            return 0;
    }
    fprintf(stderr, "verifybench: %s\n", why);
    return -1;
}
