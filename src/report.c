#include "report.h"

#include "fileutil.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared cell formatting ---------------------------------------------------------- */

static const char *fmt_num(char *buf, size_t n, double x, const char *fmt)
{
    if (isnan(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fmt, x);
    return buf;
}

static void cell_tokens(const vb_record *rec, char *buf, size_t n)
{
    const vb_checks *c = &rec->checks;
    if (!c->ran)
        snprintf(buf, n, "-");
    else if (c->near_ties)
        snprintf(buf, n, "%d/%d paths, %lld tie%s", c->paths_equal, c->requests, (long long)c->near_ties,
                 c->near_ties > 1 ? "s" : "");
    else
        snprintf(buf, n, "%d/%d paths", c->paths_equal, c->requests);
}

static void cell_time(const vb_timing *t, char *buf, size_t n)
{
    if (!t->samples)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f (%.1f-%.1f)", t->median_us, t->p10_us, t->p90_us);
}

static void cell_share(const vb_timing *t, char *buf, size_t n)
{
    if (!t->samples || t->bw_share <= 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.0f%%", 100.0 * t->bw_share);
}

typedef struct row_cells {
    char scen[VB_NAME_MAX], variant[VB_NAME_MAX], kernel[48], mode[8], status[16];
    char err[16], tokens[48], hot[48], gbps[16], share[16], floor[24], cold[48];
} row_cells;

/* "x4.3 of 195.1": the hot median over its floor, and the floor in microseconds. */
static void cell_floor(const vb_timing *t, char *buf, size_t n)
{
    if (!t->samples || t->floor_ratio <= 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "x%.1f of %.1f", t->floor_ratio, t->floor_us);
}

static void cells_of(const vb_results *r, const vb_record *rec, row_cells *c)
{
    snprintf(c->scen, sizeof c->scen, "%s", r->scenarios[rec->scenario].name);
    snprintf(c->variant, sizeof c->variant, "%s", rec->variant);
    snprintf(c->kernel, sizeof c->kernel, "%s", rec->kernel);
    snprintf(c->mode, sizeof c->mode, "%s", vb_mode_name(rec->mode));
    snprintf(c->status, sizeof c->status, "%s", vb_status_name(rec->status));
    fmt_num(c->err, sizeof c->err, rec->checks.ran ? rec->checks.max_err_ratio : NAN, "%.3f");
    cell_tokens(rec, c->tokens, sizeof c->tokens);
    cell_time(&rec->hot, c->hot, sizeof c->hot);
    fmt_num(c->gbps, sizeof c->gbps, rec->hot.samples ? rec->hot.gbps : NAN, "%.0f");
    cell_share(&rec->hot, c->share, sizeof c->share);
    cell_floor(&rec->hot, c->floor, sizeof c->floor);
    cell_time(&rec->cold, c->cold, sizeof c->cold);
}

static const char *const headers[] = {"scenario", "variant", "kernel", "mode", "status", "err/tol",
                                      "tokens", "hot us median (p10-p90)", "GB/s", "of bw",
                                      "hot / floor us", "cold us median (p10-p90)"};
enum { NCOL = 12 };

static const char *col(const row_cells *c, int i)
{
    const char *cols[NCOL] = {c->scen, c->variant, c->kernel, c->mode, c->status, c->err,
                              c->tokens, c->hot, c->gbps, c->share, c->floor, c->cold};
    return cols[i];
}

/* ---- human table --------------------------------------------------------------------- */

/* One line per kernel that was timed: its best and worst hot time over the floor. */
static void print_floor_ranges(FILE *f, const vb_results *r, const char *prefix)
{
    for (int k = 0; k < r->n_records; k++) {
        const char *name = r->records[k].kernel;
        int first = 1;
        for (int j = 0; j < k && first; j++)
            first = strcmp(r->records[j].kernel, name) != 0;
        const vb_floor_range fr = vb_results_floor_range(r, name);
        if (!first || fr.best_rec < 0)
            continue;
        const vb_record *b = &r->records[fr.best_rec], *w = &r->records[fr.worst_rec];
        fprintf(f, "%s%s: time / floor from x%.2f (%s/%s %s) to x%.2f (%s/%s %s)\n", prefix, name, fr.best,
                r->scenarios[b->scenario].name, b->variant, vb_mode_name(b->mode), fr.worst,
                r->scenarios[w->scenario].name, w->variant, vb_mode_name(w->mode));
    }
}

static void print_gpu_line(FILE *f, const vb_results *r)
{
    if (r->gpu.present)
        fprintf(f, "GPU: %s (sm_%d%d, %d SMs), driver %s, CUDA runtime %d.%d; measured read %.0f GB/s, mma bf16 %.0f TFLOP/s\n",
                r->gpu.name, r->gpu.cc_major, r->gpu.cc_minor, r->gpu.sms, r->gpu.driver,
                r->gpu.runtime_version / 1000, r->gpu.runtime_version % 1000 / 10, r->gpu.read_gbps, r->gpu.mma_tflops);
    else
        fprintf(f, "GPU: none (%s): GPU stages skipped\n", r->gpu.skipped_reason);
}

void vb_report_table(FILE *f, const vb_results *r)
{
    int w[NCOL];
    for (int i = 0; i < NCOL; i++)
        w[i] = (int)strlen(headers[i]);
    row_cells c;
    for (int k = 0; k < r->n_records; k++) {
        cells_of(r, &r->records[k], &c);
        for (int i = 0; i < NCOL; i++)
            w[i] = (int)strlen(col(&c, i)) > w[i] ? (int)strlen(col(&c, i)) : w[i];
    }
    print_gpu_line(f, r);
    for (int i = 0; i < NCOL; i++)
        fprintf(f, "%-*s%s", w[i], headers[i], i + 1 < NCOL ? "  " : "\n");
    for (int k = 0; k < r->n_records; k++) {
        cells_of(r, &r->records[k], &c);
        for (int i = 0; i < NCOL; i++)
            fprintf(f, "%-*s%s", w[i], col(&c, i), i + 1 < NCOL ? "  " : "\n");
    }
    int bad = 0;
    for (int s = 0; s < r->n_scenarios; s++)
        if (!r->scenarios[s].valid)
            fprintf(f, "%sinvalid: %s: %s\n", bad++ ? "" : "\n", r->scenarios[s].name, r->scenarios[s].message);
    int listed = 0;
    for (int k = 0; k < r->n_records; k++) {
        const vb_record *rec = &r->records[k];
        if (rec->status != VB_FAIL && rec->status != VB_ERROR)
            continue;
        fprintf(f, "%s%s %s/%s %s %s: %s\n", listed++ ? "" : "\nproblems:\n", vb_status_name(rec->status),
                r->scenarios[rec->scenario].name, rec->variant, rec->kernel, vb_mode_name(rec->mode), rec->message);
    }
    int counts[5] = {0};
    for (int k = 0; k < r->n_records; k++)
        counts[r->records[k].status]++;
    fprintf(f, "\n%d records: %d pass, %d FAIL, %d ERROR, %d skipped, %d unsupported\n", r->n_records,
            counts[VB_PASS], counts[VB_FAIL], counts[VB_ERROR], counts[VB_SKIPPED], counts[VB_UNSUPPORTED]);
    print_floor_ranges(f, r, "");
}

/* ---- markdown and CSV ---------------------------------------------------------------- */

void vb_report_markdown(FILE *f, const vb_results *r)
{
    fprintf(f, "verifybench %s, commit %s, %s. ", r->version, r->commit, r->date);
    print_gpu_line(f, r);
    fputs("\n|", f);
    for (int i = 0; i < NCOL; i++)
        fprintf(f, " %s |", headers[i]);
    fputs("\n|", f);
    for (int i = 0; i < NCOL; i++)
        fputs(i >= 5 ? "---:|" : "---|", f);
    fputc('\n', f);
    row_cells c;
    for (int k = 0; k < r->n_records; k++) {
        cells_of(r, &r->records[k], &c);
        fputc('|', f);
        for (int i = 0; i < NCOL; i++)
            fprintf(f, " %s |", col(&c, i));
        fputc('\n', f);
    }
    fputc('\n', f);
    print_floor_ranges(f, r, "- ");
}

static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double x, int present)
{
    if (present && !isnan(x))
        fprintf(f, ",%.6g", x);
    else
        fputs(",", f);
}

void vb_report_csv(FILE *f, const vb_results *r)
{
    fputs("scenario,variant,kernel,mode,status,message,max_err_ratio,max_abs_err,rel_l2,unwritten,nonfinite,"
          "stray,token_mismatches,near_ties,paths_equal,requests,hot_median_us,hot_p10_us,hot_p90_us,"
          "hot_samples,hot_gbps,hot_tflops,hot_bw_share,hot_mma_share,hot_floor_us,hot_floor_ratio,"
          "cold_median_us,cold_p10_us,cold_p90_us,cold_samples,cold_gbps,cold_tflops,cold_bw_share,cold_mma_share,"
          "cold_floor_us,cold_floor_ratio\n", f);
    for (int k = 0; k < r->n_records; k++) {
        const vb_record *rec = &r->records[k];
        const vb_checks *c = &rec->checks;
        csv_str(f, r->scenarios[rec->scenario].name);
        fputc(',', f), csv_str(f, rec->variant);
        fputc(',', f), csv_str(f, rec->kernel);
        fprintf(f, ",%s,%s,", vb_mode_name(rec->mode), vb_status_name(rec->status));
        csv_str(f, rec->message);
        csv_num(f, c->max_err_ratio, c->ran), csv_num(f, c->max_abs_err, c->ran), csv_num(f, c->rel_l2, c->ran);
        csv_num(f, (double)c->unwritten, c->ran), csv_num(f, (double)c->nonfinite, c->ran);
        csv_num(f, (double)c->stray, c->ran), csv_num(f, (double)c->token_mismatches, c->ran);
        csv_num(f, (double)c->near_ties, c->ran), csv_num(f, c->paths_equal, c->ran), csv_num(f, c->requests, c->ran);
        const vb_timing *ts[2] = {&rec->hot, &rec->cold};
        for (int i = 0; i < 2; i++) {
            const vb_timing *t = ts[i];
            csv_num(f, t->median_us, t->samples), csv_num(f, t->p10_us, t->samples);
            csv_num(f, t->p90_us, t->samples), csv_num(f, t->samples, t->samples);
            csv_num(f, t->gbps, t->samples), csv_num(f, t->tflops, t->samples);
            csv_num(f, t->bw_share, t->samples && t->bw_share > 0);
            csv_num(f, t->mma_share, t->samples && t->mma_share > 0);
            csv_num(f, t->floor_us, t->samples && t->floor_us > 0);
            csv_num(f, t->floor_ratio, t->samples && t->floor_ratio > 0);
        }
        fputc('\n', f);
    }
}

/* ---- JSON ---------------------------------------------------------------------------- */

static void add_num(cJSON *o, const char *k, double x, int present)
{
    if (present && isfinite(x))
        cJSON_AddNumberToObject(o, k, x);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *timing_json(const vb_timing *t)
{
    cJSON *o = cJSON_CreateObject();
    int p = t->samples > 0;
    cJSON_AddNumberToObject(o, "samples", t->samples);
    add_num(o, "median_us", t->median_us, p);
    add_num(o, "p10_us", t->p10_us, p);
    add_num(o, "p90_us", t->p90_us, p);
    add_num(o, "gbps", t->gbps, p);
    add_num(o, "tflops", t->tflops, p);
    add_num(o, "bw_share", t->bw_share, p && t->bw_share > 0);
    add_num(o, "mma_share", t->mma_share, p && t->mma_share > 0);
    add_num(o, "floor_us", t->floor_us, p && t->floor_us > 0);
    add_num(o, "floor_ratio", t->floor_ratio, p && t->floor_ratio > 0);
    return o;
}

static cJSON *checks_json(const vb_checks *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ran", c->ran);
    int p = c->ran;
    add_num(o, "elements", (double)c->elements, p);
    add_num(o, "unwritten", (double)c->unwritten, p);
    add_num(o, "nonfinite", (double)c->nonfinite, p);
    add_num(o, "stray_writes", (double)c->stray, p);
    add_num(o, "out_of_tolerance", (double)c->out_of_tol, p);
    add_num(o, "max_abs_err", c->max_abs_err, p);
    add_num(o, "max_err_ratio", c->max_err_ratio, p);
    add_num(o, "rel_l2", c->rel_l2, p);
    cJSON *w = cJSON_AddArrayToObject(o, "worst_index");
    for (int i = 0; p && i < 4; i++)
        cJSON_AddItemToArray(w, cJSON_CreateNumber((double)c->worst[i]));
    add_num(o, "lse_max_err", c->lse_max_err, p);
    add_num(o, "lse_bad", (double)c->lse_bad, p);
    add_num(o, "rows", (double)c->rows, p);
    add_num(o, "token_mismatches", (double)c->token_mismatches, p);
    add_num(o, "near_ties", (double)c->near_ties, p);
    add_num(o, "requests", c->requests, p);
    add_num(o, "paths_equal", c->paths_equal, p);
    add_num(o, "paths_near_tie", c->paths_near_tie, p);
    add_num(o, "accepted_mean", c->accepted_mean, p);
    return o;
}

static cJSON *scenario_json(const vb_results *r, int s)
{
    const vb_scenario_info *i = &r->scenarios[s];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", i->name);
    cJSON_AddStringToObject(o, "file", i->file);
    cJSON_AddStringToObject(o, "shape_key", i->shape_key);
    cJSON_AddBoolToObject(o, "valid", i->valid);
    cJSON_AddStringToObject(o, "message", i->message);
    cJSON *sh = cJSON_AddObjectToObject(o, "shape");
    cJSON_AddNumberToObject(sh, "batch", i->batch);
    cJSON_AddNumberToObject(sh, "bucket", i->bucket);
    cJSON_AddNumberToObject(sh, "draft_tokens", i->draft);
    cJSON_AddNumberToObject(sh, "heads", i->heads);
    cJSON_AddNumberToObject(sh, "d_qk", i->d_qk);
    cJSON_AddNumberToObject(sh, "d_v", i->d_v);
    cJSON_AddNumberToObject(sh, "page_size", i->page_size);
    cJSON_AddStringToObject(sh, "tree", i->tree);
    cJSON_AddStringToObject(sh, "prefix_len", i->prefix);
    cJSON_AddStringToObject(sh, "layout", i->layout);
    cJSON_AddStringToObject(sh, "index_dtypes", i->dtypes);
    cJSON_AddNumberToObject(sh, "total_prefix", (double)i->total_prefix);
    cJSON_AddNumberToObject(sh, "num_slots", (double)i->num_slots);
    cJSON_AddNumberToObject(sh, "replays", i->n_replays);
    cJSON_AddNumberToObject(o, "bytes", i->bytes);
    cJSON_AddNumberToObject(o, "flops", i->flops);
    add_num(o, "oracle_seconds", i->oracle_s, i->valid);
    add_num(o, "softmax_pmax_median", i->pmax_median, i->valid);
    add_num(o, "oracle_accepted_mean", i->accepted_mean, i->valid);
    cJSON *recs = cJSON_AddArrayToObject(o, "records");
    for (int k = 0; k < r->n_records; k++) {
        const vb_record *rec = &r->records[k];
        if (rec->scenario != s)
            continue;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "variant", rec->variant);
        cJSON_AddStringToObject(x, "kernel", rec->kernel);
        cJSON_AddStringToObject(x, "mode", vb_mode_name(rec->mode));
        cJSON_AddStringToObject(x, "status", vb_status_name(rec->status));
        cJSON_AddStringToObject(x, "message", rec->message);
        cJSON_AddItemToObject(x, "checks", checks_json(&rec->checks));
        cJSON *t = cJSON_AddObjectToObject(x, "timing");
        cJSON_AddItemToObject(t, "hot", timing_json(&rec->hot));
        cJSON_AddItemToObject(t, "cold", timing_json(&rec->cold));
        cJSON_AddItemToArray(recs, x);
    }
    return o;
}

int vb_report_json(FILE *f, const vb_results *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", VB_RESULTS_SCHEMA);
    cJSON *tool = cJSON_AddObjectToObject(root, "tool");
    cJSON_AddStringToObject(tool, "version", r->version);
    cJSON_AddStringToObject(tool, "commit", r->commit);
    cJSON_AddStringToObject(root, "date", r->date);
    cJSON_AddNumberToObject(root, "host_cpus", r->cpus);
    cJSON *g = cJSON_AddObjectToObject(root, "gpu");
    cJSON_AddBoolToObject(g, "present", r->gpu.present);
    if (r->gpu.present) {
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", r->gpu.cc_major, r->gpu.cc_minor);
        cJSON_AddStringToObject(g, "name", r->gpu.name);
        cJSON_AddStringToObject(g, "compute_capability", cc);
        cJSON_AddNumberToObject(g, "sms", r->gpu.sms);
        cJSON_AddNumberToObject(g, "l2_bytes", (double)r->gpu.l2_bytes);
        cJSON_AddNumberToObject(g, "memory_bytes", (double)r->gpu.mem_bytes);
        cJSON_AddStringToObject(g, "driver", r->gpu.driver);
        cJSON_AddNumberToObject(g, "driver_version", r->gpu.driver_version);
        cJSON_AddNumberToObject(g, "runtime_version", r->gpu.runtime_version);
        cJSON_AddNullToObject(g, "skipped_reason");
    } else {
        cJSON_AddStringToObject(g, "skipped_reason", r->gpu.skipped_reason);
    }
    cJSON *c = cJSON_AddObjectToObject(root, "ceilings");
    add_num(c, "read_gbps", r->gpu.read_gbps, r->gpu.read_gbps > 0);
    add_num(c, "mma_bf16_tflops", r->gpu.mma_tflops, r->gpu.mma_tflops > 0);
    cJSON *sc = cJSON_AddArrayToObject(root, "scenarios");
    for (int s = 0; s < r->n_scenarios; s++)
        cJSON_AddItemToArray(sc, scenario_json(r, s));
    char *text = cJSON_Print(root);
    int rc = text && fputs(text, f) >= 0 && fputc('\n', f) != EOF ? 0 : -1;
    free(text);
    cJSON_Delete(root);
    return rc;
}

void vb_report_print(FILE *f, vb_format fmt, const vb_results *r)
{
    switch (fmt) {
    case VB_FMT_TABLE: vb_report_table(f, r); break;
    case VB_FMT_MARKDOWN: vb_report_markdown(f, r); break;
    case VB_FMT_CSV: vb_report_csv(f, r); break;
    case VB_FMT_JSON: vb_report_json(f, r); break;
    }
}

int vb_report_write(const char *path, vb_format fmt, const vb_results *r)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "verifybench: %s: cannot write the report\n", path);
        return -1;
    }
    vb_report_print(f, fmt, r);
    if (fclose(f)) {
        fprintf(stderr, "verifybench: %s: writing the report failed\n", path);
        return -1;
    }
    return 0;
}

/* ---- reading JSON back --------------------------------------------------------------- */


static double jnum0(const cJSON *o, const char *k)
{
    double x = vb_json_num(o, k);
    return isnan(x) ? 0 : x;
}

static void read_timing(const cJSON *t, vb_timing *out)
{
    memset(out, 0, sizeof *out);
    out->samples = (int)jnum0(t, "samples");
    out->median_us = jnum0(t, "median_us");
    out->p10_us = jnum0(t, "p10_us");
    out->p90_us = jnum0(t, "p90_us");
    out->gbps = jnum0(t, "gbps");
    out->tflops = jnum0(t, "tflops");
    out->bw_share = jnum0(t, "bw_share");
    out->mma_share = jnum0(t, "mma_share");
    vb_timing_set_floor(out); /* derived, so files written before the field existed have it too */
}

static void read_checks(const cJSON *o, vb_checks *c)
{
    memset(c, 0, sizeof *c);
    c->ran = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ran"));
    c->elements = (int64_t)jnum0(o, "elements");
    c->unwritten = (int64_t)jnum0(o, "unwritten");
    c->nonfinite = (int64_t)jnum0(o, "nonfinite");
    c->stray = (int64_t)jnum0(o, "stray_writes");
    c->out_of_tol = (int64_t)jnum0(o, "out_of_tolerance");
    c->max_abs_err = jnum0(o, "max_abs_err");
    c->max_err_ratio = jnum0(o, "max_err_ratio");
    c->rel_l2 = jnum0(o, "rel_l2");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "worst_index");
    for (int i = 0; i < 4 && cJSON_GetArraySize(w) == 4; i++)
        c->worst[i] = (int64_t)cJSON_GetArrayItem(w, i)->valuedouble;
    c->lse_max_err = vb_json_num(o, "lse_max_err");
    c->lse_bad = (int64_t)jnum0(o, "lse_bad");
    c->rows = (int64_t)jnum0(o, "rows");
    c->token_mismatches = (int64_t)jnum0(o, "token_mismatches");
    c->near_ties = (int64_t)jnum0(o, "near_ties");
    c->requests = (int)jnum0(o, "requests");
    c->paths_equal = (int)jnum0(o, "paths_equal");
    c->paths_near_tie = (int)jnum0(o, "paths_near_tie");
    c->accepted_mean = jnum0(o, "accepted_mean");
}

static void read_scenario(const cJSON *s, vb_results *r)
{
    vb_scenario_info i;
    memset(&i, 0, sizeof i);
    vb_json_str(s, "name", i.name, sizeof i.name);
    vb_json_str(s, "file", i.file, sizeof i.file);
    vb_json_str(s, "shape_key", i.shape_key, sizeof i.shape_key);
    vb_json_str(s, "message", i.message, sizeof i.message);
    i.valid = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "valid"));
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(s, "shape");
    i.batch = (int)jnum0(sh, "batch");
    i.bucket = (int)jnum0(sh, "bucket");
    i.draft = (int)jnum0(sh, "draft_tokens");
    i.heads = (int)jnum0(sh, "heads");
    i.d_qk = (int)jnum0(sh, "d_qk");
    i.d_v = (int)jnum0(sh, "d_v");
    i.page_size = (int)jnum0(sh, "page_size");
    i.n_replays = (int)jnum0(sh, "replays");
    vb_json_str(sh, "tree", i.tree, sizeof i.tree);
    vb_json_str(sh, "prefix_len", i.prefix, sizeof i.prefix);
    vb_json_str(sh, "layout", i.layout, sizeof i.layout);
    vb_json_str(sh, "index_dtypes", i.dtypes, sizeof i.dtypes);
    i.total_prefix = (int64_t)jnum0(sh, "total_prefix");
    i.num_slots = (int64_t)jnum0(sh, "num_slots");
    i.bytes = jnum0(s, "bytes");
    i.flops = jnum0(s, "flops");
    i.oracle_s = jnum0(s, "oracle_seconds");
    i.pmax_median = jnum0(s, "softmax_pmax_median");
    i.accepted_mean = jnum0(s, "oracle_accepted_mean");
    int idx = vb_results_add_scenario(r, &i);
    const cJSON *recs = cJSON_GetObjectItemCaseSensitive(s, "records");
    for (const cJSON *x = recs ? recs->child : NULL; x && idx >= 0; x = x->next) {
        char variant[VB_NAME_MAX], kernel[48], mode[16], status[16];
        vb_json_str(x, "variant", variant, sizeof variant);
        vb_json_str(x, "kernel", kernel, sizeof kernel);
        vb_json_str(x, "mode", mode, sizeof mode);
        vb_json_str(x, "status", status, sizeof status);
        vb_mode m = VB_MODE_CPU;
        vb_mode_parse(mode, &m);
        vb_record *rec = vb_results_add_record(r, idx, variant, kernel, m);
        if (!rec)
            return;
        vb_status_parse(status, &rec->status);
        vb_json_str(x, "message", rec->message, sizeof rec->message);
        read_checks(cJSON_GetObjectItemCaseSensitive(x, "checks"), &rec->checks);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(x, "timing");
        read_timing(cJSON_GetObjectItemCaseSensitive(t, "hot"), &rec->hot);
        read_timing(cJSON_GetObjectItemCaseSensitive(t, "cold"), &rec->cold);
    }
}

int vb_results_read_json(const char *path, vb_results *r, char *why, size_t why_len)
{
    vb_results_init(r);
    char *text = vb_read_file(path, (size_t)1 << 30, NULL);
    if (!text) {
        snprintf(why, why_len, "cannot read: %s", strerror(errno));
        return -1;
    }
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!root || !cJSON_IsString(schema) || strcmp(schema->valuestring, VB_RESULTS_SCHEMA)) {
        snprintf(why, why_len, root ? "schema: not a %s file" : "malformed JSON", VB_RESULTS_SCHEMA);
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(root, "tool");
    vb_json_str(tool, "version", r->version, sizeof r->version);
    vb_json_str(tool, "commit", r->commit, sizeof r->commit);
    vb_json_str(root, "date", r->date, sizeof r->date);
    r->cpus = (int)jnum0(root, "host_cpus");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    r->gpu.present = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "present"));
    vb_json_str(g, "name", r->gpu.name, sizeof r->gpu.name);
    vb_json_str(g, "skipped_reason", r->gpu.skipped_reason, sizeof r->gpu.skipped_reason);
    char cc[16];
    vb_json_str(g, "compute_capability", cc, sizeof cc);
    sscanf(cc, "%d.%d", &r->gpu.cc_major, &r->gpu.cc_minor);
    r->gpu.sms = (int)jnum0(g, "sms");
    r->gpu.l2_bytes = (int64_t)jnum0(g, "l2_bytes");
    r->gpu.mem_bytes = (int64_t)jnum0(g, "memory_bytes");
    vb_json_str(g, "driver", r->gpu.driver, sizeof r->gpu.driver);
    r->gpu.driver_version = (int)jnum0(g, "driver_version");
    r->gpu.runtime_version = (int)jnum0(g, "runtime_version");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "ceilings");
    r->gpu.read_gbps = jnum0(c, "read_gbps");
    r->gpu.mma_tflops = jnum0(c, "mma_bf16_tflops");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "scenarios");
    for (const cJSON *s = sc ? sc->child : NULL; s; s = s->next)
        read_scenario(s, r);
    cJSON_Delete(root);
    return 0;
}
