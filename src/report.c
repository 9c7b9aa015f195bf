#include "report.h"

#include "fastest.h"
#include "fields.h"
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

/* Which kernel to run, from the run's timings (fastest.h); nothing for an untimed run. */
static void print_fastest(FILE *f, const vb_results *r, const char *prefix, int markdown)
{
    vb_fastest x;
    if (vb_fastest_find(r, &x))
        return;
    if (x.n_picks)
        fputc('\n', f);
    vb_fastest_print_summary(f, r, &x, prefix);
    if (markdown)
        vb_fastest_print_shapes(f, r, &x);
    vb_fastest_free(&x);
}

/* A scenario the run listed without starting it (a signal or a hung GPU stopped the run first). */
static int listed_not_run(const vb_scenario_info *s)
{
    return !s->valid && !strncmp(s->message, VB_NOT_RUN ": ", strlen(VB_NOT_RUN ": "));
}

const char *vb_results_incomplete(const vb_results *r, char *buf, size_t n)
{
    if (!r->incomplete)
        return NULL;
    int ran = 0;
    for (int s = 0; s < r->n_scenarios; s++)
        ran += !listed_not_run(&r->scenarios[s]);
    const int planned = r->scenarios_planned ? r->scenarios_planned : r->n_scenarios;
    if (r->interrupted_by[0])
        snprintf(buf, n, "interrupted by %s after %d of %d scenarios", r->interrupted_by, ran, planned);
    else
        snprintf(buf, n, "a checkpoint of a run that had finished %d of %d scenarios", ran, planned);
    return buf;
}

/* One line when the run ended early, so that no reader takes it for a whole run. */
static void print_incomplete_line(FILE *f, const vb_results *r, const char *prefix)
{
    char what[128];
    if (vb_results_incomplete(r, what, sizeof what))
        fprintf(f, "%sINCOMPLETE: %s\n", prefix, what);
}

static void print_gpu_line(FILE *f, const vb_results *r)
{
    if (r->gpu.present)
    {
        fprintf(f, "GPU: %s (sm_%d%d, %d SMs), driver %s, CUDA runtime %d.%d; measured read %.0f GB/s, mma bf16 %.0f TFLOP/s",
                r->gpu.name, r->gpu.cc_major, r->gpu.cc_minor, r->gpu.sms, r->gpu.driver,
                r->gpu.runtime_version / 1000, r->gpu.runtime_version % 1000 / 10, r->gpu.read_gbps, r->gpu.mma_tflops);
        if (r->gpu.wgmma_tflops > 0)
            fprintf(f, ", wgmma bf16 %.0f TFLOP/s", r->gpu.wgmma_tflops);
        fputc('\n', f);
    }
    else
        fprintf(f, "GPU: none (%s): GPU stages skipped\n", r->gpu.skipped_reason);
    if (!r->n_parts)
        return;
    fprintf(f, "merged from %d runs of one build (verifybench merge), each record's shares and floor of its own run's "
            "ceilings:", r->n_parts);
    for (int i = 0; i < r->n_parts; i++) {
        const vb_run_part *p = &r->parts[i];
        fprintf(f, "%s %s", i ? ";" : "", p->date);
        if (p->read_gbps > 0)
            fprintf(f, " (read %.0f GB/s, mma %.0f, wgmma %.0f TFLOP/s)", p->read_gbps, p->mma_tflops, p->wgmma_tflops);
    }
    fputc('\n', f);
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
    for (int s = 0; s < r->n_scenarios; s++) {
        const vb_scenario_info *si = &r->scenarios[s];
        if (listed_not_run(si))
            fprintf(f, "%snot run: %s: %s\n", bad++ ? "" : "\n", si->name, si->message + strlen(VB_NOT_RUN ": "));
        else if (!si->valid)
            fprintf(f, "%sinvalid: %s: %s\n", bad++ ? "" : "\n", si->name, si->message);
    }
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
    print_incomplete_line(f, r, "");
    print_floor_ranges(f, r, "");
    print_fastest(f, r, "", 0);
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
    print_incomplete_line(f, r, "- ");
    print_floor_ranges(f, r, "- ");
    print_fastest(f, r, "- ", 1);
}

void vb_report_csv(FILE *f, const vb_results *r)
{
    fputs("scenario,variant,kernel,mode,status,message", f);
    vb_fields_csv_header(f, &vb_checks_table, "");
    vb_fields_csv_header(f, &vb_timing_table, "hot_");
    vb_fields_csv_header(f, &vb_timing_table, "cold_");
    fputc('\n', f);
    for (int k = 0; k < r->n_records; k++) {
        const vb_record *rec = &r->records[k];
        vb_csv_string(f, r->scenarios[rec->scenario].name);
        fputc(',', f), vb_csv_string(f, rec->variant);
        fputc(',', f), vb_csv_string(f, rec->kernel);
        fprintf(f, ",%s,%s,", vb_mode_name(rec->mode), vb_status_name(rec->status));
        vb_csv_string(f, rec->message);
        vb_fields_csv_row(f, &vb_checks_table, &rec->checks, rec->checks.ran);
        vb_fields_csv_row(f, &vb_timing_table, &rec->hot, rec->hot.samples > 0);
        vb_fields_csv_row(f, &vb_timing_table, &rec->cold, rec->cold.samples > 0);
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

/* The measured ceilings of a run as parent's "ceilings" object: a missing one (0) is null. */
static void add_ceilings(cJSON *parent, double read_gbps, double mma_tflops, double wgmma_tflops)
{
    cJSON *c = cJSON_AddObjectToObject(parent, "ceilings");
    add_num(c, "read_gbps", read_gbps, read_gbps > 0);
    add_num(c, "mma_bf16_tflops", mma_tflops, mma_tflops > 0);
    add_num(c, "wgmma_bf16_tflops", wgmma_tflops, wgmma_tflops > 0);
}

static cJSON *table_json(const vb_field_table *t, const void *obj, int gate)
{
    cJSON *o = cJSON_CreateObject();
    vb_fields_to_json(o, t, obj, gate);
    return o;
}

static cJSON *scenario_json(const vb_results *r, int s)
{
    const vb_scenario_info *i = &r->scenarios[s];
    cJSON *o = cJSON_CreateObject();
    vb_fields_to_json(o, &vb_scenario_table, i, i->valid);
    cJSON_AddItemToObject(o, "shape", table_json(&vb_shape_table, i, 1));
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
        cJSON_AddItemToObject(x, "checks", table_json(&vb_checks_table, &rec->checks, rec->checks.ran));
        cJSON *t = cJSON_AddObjectToObject(x, "timing");
        cJSON_AddItemToObject(t, "hot", table_json(&vb_timing_table, &rec->hot, rec->hot.samples > 0));
        cJSON_AddItemToObject(t, "cold", table_json(&vb_timing_table, &rec->cold, rec->cold.samples > 0));
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
    cJSON_AddBoolToObject(tool, "phase_stamps", r->phase_stamps);
    cJSON_AddStringToObject(root, "date", r->date);
    cJSON_AddNumberToObject(root, "host_cpus", r->cpus);
    cJSON_AddBoolToObject(root, "complete", !r->incomplete);
    if (r->interrupted_by[0])
        cJSON_AddStringToObject(root, "interrupted_by", r->interrupted_by);
    else
        cJSON_AddNullToObject(root, "interrupted_by");
    cJSON_AddNumberToObject(root, "scenarios_planned", r->scenarios_planned ? r->scenarios_planned : r->n_scenarios);
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
    add_ceilings(root, r->gpu.read_gbps, r->gpu.mma_tflops, r->gpu.wgmma_tflops);
    if (r->n_parts) {
        cJSON *parts = cJSON_AddArrayToObject(root, "merged_from");
        for (int i = 0; i < r->n_parts; i++) {
            const vb_run_part *p = &r->parts[i];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "date", p->date);
            add_ceilings(x, p->read_gbps, p->mma_tflops, p->wgmma_tflops);
            cJSON_AddItemToArray(parts, x);
        }
    }
    cJSON *sc = cJSON_AddArrayToObject(root, "scenarios");
    for (int s = 0; s < r->n_scenarios; s++)
        cJSON_AddItemToArray(sc, scenario_json(r, s));
    vb_fastest x;
    if (vb_fastest_find(r, &x) == 0) {
        cJSON_AddItemToObject(root, "fastest", vb_fastest_json(r, &x));
        vb_fastest_free(&x);
    }
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
    vb_output out;
    char why[1200];
    if (vb_output_open(&out, path, why, sizeof why) == 0) {
        vb_report_print(out.f, fmt, r);
        if (vb_output_close(&out, why, sizeof why) == 0)
            return 0;
    }
    fprintf(stderr, "verifybench: %s\n", why);
    return -1;
}

int vb_report_write_files(const vb_cli *cli, const vb_results *r)
{
    int rc = 0;
    if (cli->json_path)
        rc |= vb_report_write(cli->json_path, VB_FMT_JSON, r);
    if (cli->csv_path)
        rc |= vb_report_write(cli->csv_path, VB_FMT_CSV, r);
    if (cli->markdown_path)
        rc |= vb_report_write(cli->markdown_path, VB_FMT_MARKDOWN, r);
    return rc;
}

/* ---- reading JSON back --------------------------------------------------------------- */


static double jnum0(const cJSON *o, const char *k)
{
    double x = vb_json_num(o, k);
    return isnan(x) ? 0 : x;
}

/* add_ceilings read back: 0 for a ceiling that is null or absent (wgmma's, before it was measured). */
static void read_ceilings(const cJSON *parent, double *read_gbps, double *mma_tflops, double *wgmma_tflops)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(parent, "ceilings");
    *read_gbps = jnum0(c, "read_gbps");
    *mma_tflops = jnum0(c, "mma_bf16_tflops");
    *wgmma_tflops = jnum0(c, "wgmma_bf16_tflops");
}

/* One record, at path ("scenarios[s].records[k]"), into the scenario at index idx. */
static int read_record(const cJSON *x, vb_results *r, int idx, const char *path, char *why, size_t n)
{
    if (!cJSON_IsObject(x)) {
        snprintf(why, n, "%s: expected an object", path);
        return -1;
    }
    char variant[VB_NAME_MAX], kernel[48], mode[16], status[16], sub[160];
    vb_json_str(x, "variant", variant, sizeof variant);
    vb_json_str(x, "kernel", kernel, sizeof kernel);
    vb_json_str(x, "mode", mode, sizeof mode);
    vb_json_str(x, "status", status, sizeof status);
    vb_mode m;
    vb_status st;
    if (vb_mode_parse(mode, &m) || vb_status_parse(status, &st)) {
        snprintf(why, n, "%s: unknown mode '%s' or status '%s'", path, mode, status);
        return -1;
    }
    vb_record *rec = vb_results_add_record(r, idx, variant, kernel, m);
    if (!rec) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    rec->status = st;
    vb_json_str(x, "message", rec->message, sizeof rec->message);
    snprintf(sub, sizeof sub, "%s.checks", path);
    if (vb_fields_from_json(cJSON_GetObjectItemCaseSensitive(x, "checks"), &vb_checks_table, &rec->checks, sub, why, n))
        return -1;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(x, "timing");
    vb_timing *ts[2] = {&rec->hot, &rec->cold};
    const char *names[2] = {"hot", "cold"};
    for (int i = 0; i < 2; i++) {
        snprintf(sub, sizeof sub, "%s.timing.%s", path, names[i]);
        if (vb_fields_from_json(cJSON_GetObjectItemCaseSensitive(t, names[i]), &vb_timing_table, ts[i], sub, why, n))
            return -1;
        /* Derived, so files written before these fields existed have them too. */
        if (ts[i]->wgmma_share <= 0 && r->gpu.wgmma_tflops > 0 && ts[i]->tflops > 0)
            ts[i]->wgmma_share = ts[i]->tflops / r->gpu.wgmma_tflops;
        vb_timing_set_floor(ts[i]);
    }
    return 0;
}

static int read_scenario(const cJSON *s, int si, vb_results *r, char *why, size_t n)
{
    char path[64], sub[160];
    snprintf(path, sizeof path, "scenarios[%d]", si);
    vb_scenario_info i;
    memset(&i, 0, sizeof i);
    snprintf(sub, sizeof sub, "%s.shape", path);
    if (vb_fields_from_json(s, &vb_scenario_table, &i, path, why, n) ||
        vb_fields_from_json(cJSON_GetObjectItemCaseSensitive(s, "shape"), &vb_shape_table, &i, sub, why, n))
        return -1;
    const int idx = vb_results_add_scenario(r, &i);
    const cJSON *recs = cJSON_GetObjectItemCaseSensitive(s, "records");
    if (idx < 0 || (recs && !cJSON_IsArray(recs))) {
        snprintf(why, n, idx < 0 ? "out of memory" : "%s.records: expected an array", path);
        return -1;
    }
    int k = 0;
    for (const cJSON *x = recs ? recs->child : NULL; x; x = x->next, k++) {
        snprintf(sub, sizeof sub, "%s.records[%d]", path, k);
        if (read_record(x, r, idx, sub, why, n))
            return -1;
    }
    return 0;
}

int vb_results_read_json(const char *path, vb_results *r, char *why, size_t why_len)
{
    vb_results_init(r);
    char *text = vb_read_text(path, (size_t)1 << 30, why, why_len);
    if (!text)
        return -1;
    int rc = vb_results_parse(text, r, why, why_len);
    free(text);
    return rc;
}

int vb_results_parse(const char *text, vb_results *r, char *why, size_t why_len)
{
    vb_results_init(r);
    cJSON *root = cJSON_Parse(text);
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!root || !cJSON_IsString(schema) || strcmp(schema->valuestring, VB_RESULTS_SCHEMA)) {
        snprintf(why, why_len, root ? "schema: not a %s file" : "malformed JSON", VB_RESULTS_SCHEMA);
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(root, "tool");
    vb_json_str(tool, "version", r->version, sizeof r->version);
    vb_json_str(tool, "commit", r->commit, sizeof r->commit);
    r->phase_stamps = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tool, "phase_stamps"));
    vb_json_str(root, "date", r->date, sizeof r->date);
    r->incomplete = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(root, "complete")); /* absent: complete */
    vb_json_str(root, "interrupted_by", r->interrupted_by, sizeof r->interrupted_by);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    if (vb_fields_from_json(root, &vb_results_int_table, r, "", why, why_len) ||
        vb_fields_from_json(g, &vb_gpu_int_table, &r->gpu, "gpu", why, why_len)) {
        cJSON_Delete(root);
        return -1;
    }
    r->gpu.present = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "present"));
    vb_json_str(g, "name", r->gpu.name, sizeof r->gpu.name);
    vb_json_str(g, "skipped_reason", r->gpu.skipped_reason, sizeof r->gpu.skipped_reason);
    char cc[16];
    vb_json_str(g, "compute_capability", cc, sizeof cc);
    sscanf(cc, "%d.%d", &r->gpu.cc_major, &r->gpu.cc_minor);
    vb_json_str(g, "driver", r->gpu.driver, sizeof r->gpu.driver);
    read_ceilings(root, &r->gpu.read_gbps, &r->gpu.mma_tflops, &r->gpu.wgmma_tflops);
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(root, "merged_from");
    for (const cJSON *x = cJSON_IsArray(parts) ? parts->child : NULL; x && r->n_parts < VB_MAX_PARTS; x = x->next) {
        vb_run_part *p = &r->parts[r->n_parts++];
        vb_json_str(x, "date", p->date, sizeof p->date);
        read_ceilings(x, &p->read_gbps, &p->mma_tflops, &p->wgmma_tflops);
    }
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "scenarios");
    int rc = 0, si = 0;
    if (!cJSON_IsArray(sc)) {
        snprintf(why, why_len, "scenarios: expected an array");
        rc = -1;
    }
    for (const cJSON *s = rc ? NULL : sc->child; s && !rc; s = s->next, si++)
        if (!cJSON_IsObject(s)) {
            snprintf(why, why_len, "scenarios[%d]: expected an object", si);
            rc = -1;
        } else {
            rc = read_scenario(s, si, r, why, why_len);
        }
    cJSON_Delete(root);
    if (rc)
        vb_results_free(r);
    return rc;
}
