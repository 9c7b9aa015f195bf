#include "compare.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"same",   "FASTER", "SLOWER",   "fixed",   "BROKEN",
                                         "TOKENS", "untimed", "old only", "new only"};

const char *vb_verdict_kind_name(vb_verdict_kind k) { return kind_names[k]; }

static const char *shape_of(const vb_results *r, const vb_record *rec) { return r->scenarios[rec->scenario].shape_key; }

/* With a kernel pair, x must be the old kernel's and y the new kernel's; else the same kernel. */
static int same_record(const vb_compare *c, const vb_results *a, const vb_record *x, const vb_results *b,
                       const vb_record *y)
{
    const int kernels = c->old_kernel[0] ? !strcmp(x->kernel, c->old_kernel) && !strcmp(y->kernel, c->new_kernel)
                                         : !strcmp(x->kernel, y->kernel);
    return kernels && x->mode == y->mode && !strcmp(x->variant, y->variant) && !strcmp(shape_of(a, x), shape_of(b, y));
}

/* Whether a record takes part: all of them, or with a kernel pair only that side's kernel. */
static int in_scope(const vb_compare *c, const vb_record *r, int new_side)
{
    return !c->old_kernel[0] || !strcmp(r->kernel, new_side ? c->new_kernel : c->old_kernel);
}

static int failed(const vb_record *r) { return r->status == VB_FAIL || r->status == VB_ERROR; }

/* The token verdict of a record that ran its checks: equal paths and differing rows. */
static int tokens_changed(const vb_record *o, const vb_record *n)
{
    return o->checks.ran && n->checks.ran &&
           (o->checks.paths_equal != n->checks.paths_equal || o->checks.token_mismatches != n->checks.token_mismatches);
}

static vb_compare_row judge(const vb_record *o, const vb_record *n, double threshold)
{
    vb_compare_row row = {o, n, NULL, VB_CMP_SAME, NAN, NAN};
    if (!failed(o) && failed(n))
        row.kind = VB_CMP_BROKEN;
    else if (failed(o) && n->status == VB_PASS)
        row.kind = VB_CMP_FIXED;
    else if (tokens_changed(o, n))
        row.kind = VB_CMP_TOKENS;
    if (!o->hot.samples || !n->hot.samples || o->hot.median_us <= 0) {
        if (row.kind == VB_CMP_SAME)
            row.kind = VB_CMP_UNTIMED;
        return row;
    }
    const double diff = n->hot.median_us - o->hot.median_us;
    row.change = diff / o->hot.median_us;
    row.noise_us = (o->hot.p90_us - o->hot.p10_us) / 2 + (n->hot.p90_us - n->hot.p10_us) / 2;
    if (row.kind == VB_CMP_SAME && fabs(row.change) > threshold && fabs(diff) > row.noise_us)
        row.kind = diff > 0 ? VB_CMP_SLOWER : VB_CMP_FASTER;
    return row;
}

static int same_gpu(const vb_results *a, const vb_results *b, char *why, size_t n)
{
    if (!a->gpu.present || !b->gpu.present)
        return 1; /* statuses still compare; nothing is timed on a side without a GPU */
    if (strcmp(a->gpu.name, b->gpu.name))
        snprintf(why, n, "the runs are on different GPUs ('%s' and '%s'); --allow-different-gpu compares anyway",
                 a->gpu.name, b->gpu.name);
    else if (strcmp(a->gpu.driver, b->gpu.driver))
        snprintf(why, n, "the runs use different drivers (%s and %s); --allow-different-gpu compares anyway",
                 a->gpu.driver, b->gpu.driver);
    else
        return 1;
    return 0;
}

/* A phase-stamps build's times are not the kernels' own: it compares only with another such
 * build, whatever --allow-different-gpu says. */
static int same_kind_of_build(const vb_results *old_r, const vb_results *new_r, char *why, size_t n)
{
    if (old_r->phase_stamps == new_r->phase_stamps)
        return 1;
    snprintf(why, n, "the %s run was built with -Dphase_stamps=true and the %s was not: its onepass kernels' times "
             "are not their own", old_r->phase_stamps ? "old" : "new", old_r->phase_stamps ? "new" : "old");
    return 0;
}

int vb_compare_results(const vb_results *old_r, const vb_results *new_r, double threshold, int allow_different_gpu,
                       vb_compare *out, char *why, size_t why_len)
{
    return vb_compare_kernels(old_r, new_r, threshold, allow_different_gpu, NULL, NULL, out, why, why_len);
}

int vb_compare_kernels(const vb_results *old_r, const vb_results *new_r, double threshold, int allow_different_gpu,
                       const char *old_kernel, const char *new_kernel, vb_compare *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->threshold = threshold;
    if (old_kernel && new_kernel) {
        snprintf(out->old_kernel, sizeof out->old_kernel, "%s", old_kernel);
        snprintf(out->new_kernel, sizeof out->new_kernel, "%s", new_kernel);
        for (int side = 0; side < 2; side++) { /* a misspelt name would compare nothing and pass */
            const vb_results *r = side ? new_r : old_r;
            int n = 0;
            for (int i = 0; i < r->n_records && !n; i++)
                n = in_scope(out, &r->records[i], side);
            if (!n) {
                snprintf(why, why_len, "the %s run has no records of kernel '%s'", side ? "new" : "old",
                         side ? new_kernel : old_kernel);
                return -1;
            }
        }
    }
    if (!same_kind_of_build(old_r, new_r, why, why_len) ||
        (!allow_different_gpu && !same_gpu(old_r, new_r, why, why_len)))
        return -1;
    out->rows = calloc((size_t)(old_r->n_records + new_r->n_records) + 1, sizeof *out->rows);
    char *matched = calloc((size_t)new_r->n_records + 1, 1);
    if (!out->rows || !matched) {
        free(matched);
        vb_compare_free(out);
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    for (int i = 0; i < old_r->n_records; i++) {
        const vb_record *o = &old_r->records[i];
        if (!in_scope(out, o, 0))
            continue;
        int j = 0;
        while (j < new_r->n_records && (matched[j] || !same_record(out, old_r, o, new_r, &new_r->records[j])))
            j++;
        vb_compare_row row = {o, NULL, old_r->scenarios[o->scenario].name, VB_CMP_OLD_ONLY, NAN, NAN};
        if (j < new_r->n_records) {
            matched[j] = 1;
            row = judge(o, &new_r->records[j], threshold);
            row.scenario = new_r->scenarios[new_r->records[j].scenario].name;
        }
        out->rows[out->n_rows++] = row;
    }
    for (int j = 0; j < new_r->n_records; j++)
        if (!matched[j] && in_scope(out, &new_r->records[j], 1))
            out->rows[out->n_rows++] = (vb_compare_row){NULL, &new_r->records[j],
                                                        new_r->scenarios[new_r->records[j].scenario].name,
                                                        VB_CMP_NEW_ONLY, NAN, NAN};
    free(matched);
    for (int i = 0; i < out->n_rows; i++) {
        const vb_verdict_kind k = out->rows[i].kind;
        out->regressions += k == VB_CMP_SLOWER || k == VB_CMP_BROKEN || k == VB_CMP_TOKENS;
    }
    return 0;
}

void vb_compare_free(vb_compare *c)
{
    if (!c)
        return;
    free(c->rows);
    memset(c, 0, sizeof *c);
}

static const vb_record *any_rec(const vb_compare_row *r) { return r->new_rec ? r->new_rec : r->old_rec; }

double vb_compare_geomean(const vb_compare *c, const char *kernel, vb_mode mode, int *count)
{
    double logs = 0;
    int n = 0;
    for (int i = 0; i < c->n_rows; i++) {
        const vb_compare_row *r = &c->rows[i];
        if (isnan(r->change) || any_rec(r)->mode != mode || strcmp(any_rec(r)->kernel, kernel))
            continue;
        logs += log1p(r->change);
        n++;
    }
    if (count)
        *count = n;
    return n ? exp(logs / n) : NAN;
}

/* ---- printing ---------------------------------------------------------------------------- */

/* Each kernel once, in the order of first appearance. */
static int kernels_of(const vb_compare *c, const char **names, int cap)
{
    int n = 0;
    for (int i = 0; i < c->n_rows; i++) {
        const char *k = any_rec(&c->rows[i])->kernel;
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = !strcmp(names[j], k);
        if (!seen && n < cap)
            names[n++] = k;
    }
    return n;
}

static void fmt_us(char *buf, size_t n, const vb_record *r)
{
    if (r && r->hot.samples)
        snprintf(buf, n, "%.1f", r->hot.median_us);
    else
        snprintf(buf, n, "-");
}

static void fmt_change(char *buf, size_t n, const vb_compare_row *r)
{
    if (isnan(r->change))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%+.1f%%", 100 * r->change);
}

static void describe_run(FILE *f, const char *what, const vb_results *r)
{
    fprintf(f, "%s: commit %s, %s, %s%s\n", what, r->commit, r->date, r->gpu.present ? r->gpu.name : "no GPU",
            r->phase_stamps ? " (a -Dphase_stamps=true build)" : "");
}

static void print_rows(FILE *f, const vb_compare *c, int markdown)
{
    if (markdown)
        fputs("| scenario | variant | kernel | mode | old µs | new µs | change | noise µs | verdict |\n"
              "|---|---|---|---|---:|---:|---:|---:|---|\n",
              f);
    int same = 0;
    for (int i = 0; i < c->n_rows; i++) {
        const vb_compare_row *r = &c->rows[i];
        if (r->kind == VB_CMP_SAME || r->kind == VB_CMP_UNTIMED) {
            same++;
            continue;
        }
        const vb_record *rec = any_rec(r);
        char o[24], n[24], ch[24], noise[24];
        fmt_us(o, sizeof o, r->old_rec), fmt_us(n, sizeof n, r->new_rec), fmt_change(ch, sizeof ch, r);
        snprintf(noise, sizeof noise, isnan(r->noise_us) ? "-" : "%.1f", r->noise_us);
        if (markdown)
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->scenario, rec->variant, rec->kernel,
                    vb_mode_name(rec->mode), o, n, ch, noise, vb_verdict_kind_name(r->kind));
        else
            fprintf(f, "%-8s %-44s %-14s %-12s %-5s %10s -> %10s us  %8s  (noise %s us)\n",
                    vb_verdict_kind_name(r->kind), r->scenario, rec->variant, rec->kernel, vb_mode_name(rec->mode), o, n,
                    ch, noise);
    }
    fprintf(f, "%s%d records within the threshold and the noise or not timed on both sides\n", markdown ? "\n" : "", same);
}

static void print_geomeans(FILE *f, const vb_compare *c, int markdown)
{
    const char *names[64];
    const int nk = kernels_of(c, names, 64);
    fputs(markdown ? "\n| kernel | eager: new / old (geomean) | graph: new / old (geomean) |\n|---|---:|---:|\n"
                   : "\ngeomean of new / old hot medians per kernel:\n",
          f);
    for (int k = 0; k < nk; k++) {
        int ne, ng;
        const double e = vb_compare_geomean(c, names[k], VB_MODE_EAGER, &ne);
        const double g = vb_compare_geomean(c, names[k], VB_MODE_GRAPH, &ng);
        char es[48], gs[48];
        snprintf(es, sizeof es, isnan(e) ? "-" : "%.3f (%d)", e, ne);
        snprintf(gs, sizeof gs, isnan(g) ? "-" : "%.3f (%d)", g, ng);
        if (markdown)
            fprintf(f, "| %s | %s | %s |\n", names[k], es, gs);
        else
            fprintf(f, "  %-16s eager %-14s graph %s\n", names[k], es, gs);
    }
}

static cJSON *row_json(const vb_compare_row *r)
{
    cJSON *o = cJSON_CreateObject();
    const vb_record *rec = any_rec(r);
    cJSON_AddStringToObject(o, "scenario", r->scenario);
    cJSON_AddStringToObject(o, "variant", rec->variant);
    cJSON_AddStringToObject(o, "kernel", rec->kernel);
    cJSON_AddStringToObject(o, "mode", vb_mode_name(rec->mode));
    cJSON_AddStringToObject(o, "verdict", vb_verdict_kind_name(r->kind));
    cJSON_AddStringToObject(o, "old_status", r->old_rec ? vb_status_name(r->old_rec->status) : "");
    cJSON_AddStringToObject(o, "new_status", r->new_rec ? vb_status_name(r->new_rec->status) : "");
    const double vals[] = {r->old_rec && r->old_rec->hot.samples ? r->old_rec->hot.median_us : NAN,
                           r->new_rec && r->new_rec->hot.samples ? r->new_rec->hot.median_us : NAN, r->change,
                           r->noise_us};
    const char *keys[] = {"old_median_us", "new_median_us", "change", "noise_us"};
    for (int i = 0; i < 4; i++)
        cJSON_AddItemToObject(o, keys[i], isnan(vals[i]) ? cJSON_CreateNull() : cJSON_CreateNumber(vals[i]));
    return o;
}

static void print_json(FILE *f, const vb_compare *c, const vb_results *old_r, const vb_results *new_r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "verifybench.compare/1");
    const vb_results *runs[2] = {old_r, new_r};
    const char *names[2] = {"old", "new"};
    for (int i = 0; i < 2; i++) {
        cJSON *o = cJSON_AddObjectToObject(root, names[i]);
        cJSON_AddStringToObject(o, "commit", runs[i]->commit);
        cJSON_AddStringToObject(o, "date", runs[i]->date);
        cJSON_AddStringToObject(o, "gpu", runs[i]->gpu.present ? runs[i]->gpu.name : "");
    }
    cJSON_AddNumberToObject(root, "threshold", c->threshold);
    if (c->old_kernel[0]) {
        cJSON *kp = cJSON_AddObjectToObject(root, "kernel_pair");
        cJSON_AddStringToObject(kp, "old", c->old_kernel);
        cJSON_AddStringToObject(kp, "new", c->new_kernel);
    } else {
        cJSON_AddNullToObject(root, "kernel_pair");
    }
    cJSON_AddNumberToObject(root, "regressions", c->regressions);
    cJSON *rows = cJSON_AddArrayToObject(root, "records");
    for (int i = 0; i < c->n_rows; i++)
        cJSON_AddItemToArray(rows, row_json(&c->rows[i]));
    cJSON *gm = cJSON_AddObjectToObject(root, "geomean");
    const char *kn[64];
    const int nk = kernels_of(c, kn, 64);
    for (int k = 0; k < nk; k++) {
        cJSON *o = cJSON_AddObjectToObject(gm, kn[k]);
        for (int m = VB_MODE_EAGER; m <= VB_MODE_GRAPH; m++) {
            const double g = vb_compare_geomean(c, kn[k], (vb_mode)m, NULL);
            cJSON_AddItemToObject(o, vb_mode_name((vb_mode)m), isnan(g) ? cJSON_CreateNull() : cJSON_CreateNumber(g));
        }
    }
    char *text = cJSON_Print(root);
    if (text)
        fprintf(f, "%s\n", text);
    free(text);
    cJSON_Delete(root);
}

void vb_compare_print(FILE *f, vb_format fmt, const vb_compare *c, const vb_results *old_r, const vb_results *new_r)
{
    if (fmt == VB_FMT_JSON) {
        print_json(f, c, old_r, new_r);
        return;
    }
    const int md = fmt == VB_FMT_MARKDOWN;
    if (md)
        fputs("### verifybench compare\n\n", f);
    describe_run(f, md ? "- old" : "old", old_r);
    describe_run(f, md ? "- new" : "new", new_r);
    if (c->old_kernel[0])
        fprintf(f, "%skernels: %s (new) against %s (old), record by record\n", md ? "- " : "", c->new_kernel,
                c->old_kernel);
    fprintf(f, "%sa change counts when it exceeds %.1f%% and the two runs' noise (half their p10-p90 spreads)\n\n",
            md ? "- " : "", 100 * c->threshold);
    print_rows(f, c, md);
    print_geomeans(f, c, md);
    const char *plural = c->regressions == 1 ? "" : "s";
    if (md)
        fprintf(f, "\n**%d regression%s**\n", c->regressions, plural);
    else
        fprintf(f, "\n%d regression%s\n", c->regressions, plural);
}
