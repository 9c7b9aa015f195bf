#include "baseline.h"

#include "fields.h"
#include "fileutil.h"

#include <cjson/cJSON.h>
#include <ctype.h>
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

/* What a table calls a dump: the SGLang it ran, or for the builtin the release it mirrors.
 * Dumps written before these fields existed are named by their impl alone. */
static void make_label(vb_baseline *b)
{
    const char *impl = *b->impl ? b->impl : "unknown impl";
    if (!strcmp(impl, "sglang"))
        snprintf(b->label, sizeof b->label, "SGLang %s", *b->sglang_version ? b->sglang_version : "(version not recorded)");
    else if (*b->mirrors)
        snprintf(b->label, sizeof b->label, "%s (SGLang %s)", impl, b->mirrors);
    else
        snprintf(b->label, sizeof b->label, "%s", impl);
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
    vb_json_str(root, "sglang_version", b->sglang_version, sizeof b->sglang_version);
    vb_json_str(root, "mirrors_sglang", b->mirrors, sizeof b->mirrors);
    vb_json_str(root, "kernel_module", b->kernel_module, sizeof b->kernel_module);
    vb_json_str(root, "kernel_sha256", b->kernel_sha256, sizeof b->kernel_sha256);
    make_label(b);
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

int vb_baselines_read(const vb_cli *cli, vb_baseline *b)
{
    char why[300], base[VB_MAX_BASELINES][sizeof b->label];
    for (int i = 0; i < cli->n_baselines; i++) {
        if (vb_baseline_read(cli->baselines[i], &b[i], why, sizeof why)) {
            fprintf(stderr, "%s: %s\n", cli->baselines[i], why);
            vb_baselines_free(b, i);
            return -1;
        }
        /* Two dumps of one implementation and version stay apart in the table: "#2". */
        memcpy(base[i], b[i].label, sizeof base[i]);
        int same = 0;
        for (int j = 0; j < i; j++)
            same += !strcmp(base[j], base[i]);
        if (same) {
            size_t len = strlen(b[i].label);
            snprintf(b[i].label + len, sizeof b[i].label - len, " #%d", same + 1);
        }
    }
    return 0;
}

void vb_baselines_free(vb_baseline *b, int n)
{
    for (int i = 0; i < n; i++)
        vb_baseline_free(&b[i]);
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

/* The note of one scenario against one dump; warns once when the shape keys differ. */
static const char *entry_note(const vb_baseline *b, const vb_scenario_info *info, const vb_baseline_entry **e)
{
    *e = find_entry(b, info->name);
    if (!*e)
        return "no baseline";
    if (strcmp((*e)->shape_key, info->shape_key)) {
        fprintf(stderr, "%s: %s: shape key differs (dump %s, run %s): not compared\n", b->path, info->name,
                (*e)->shape_key, info->shape_key);
        return "shape differs";
    }
    return (*e)->correct ? "" : "baseline wrong";
}

int vb_speedup_rows(const vb_results *r, const vb_baseline *b, int nb, vb_speedup_row **out)
{
    int n = 0, cap = 16;
    vb_speedup_row *rows = malloc(sizeof *rows * (size_t)cap);
    for (int s = 0; s < r->n_scenarios && rows; s++) {
        const vb_scenario_info *info = &r->scenarios[s];
        if (!info->valid)
            continue;
        const vb_baseline_entry *e[VB_MAX_BASELINES];
        const char *note[VB_MAX_BASELINES];
        for (int i = 0; i < nb; i++)
            note[i] = entry_note(&b[i], info, &e[i]);
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
            row->eager_us = kernel_time(r, s, rec->kernel, VB_MODE_EAGER);
            row->graph_us = kernel_time(r, s, rec->kernel, VB_MODE_GRAPH);
            for (int i = 0; i < nb; i++) {
                vb_speedup_cell *c = &row->base[i];
                int usable = !*note[i];
                c->note = note[i];
                c->eager_us = usable && e[i]->eager.samples ? e[i]->eager.median_us : NAN;
                c->graph_us = usable && e[i]->graph.samples ? e[i]->graph.median_us : NAN;
                c->eager_speedup = c->eager_us / row->eager_us;
                c->graph_speedup = c->graph_us / row->graph_us;
            }
        }
    }
    *out = rows;
    return rows ? n : 0;
}

double vb_speedup_geomean(const vb_speedup_row *rows, int n, const char *kernel, int base, int graph, int *count)
{
    double logs = 0;
    int c = 0;
    for (int i = 0; i < n; i++) {
        double x = graph ? rows[i].base[base].graph_speedup : rows[i].base[base].eager_speedup;
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

/* A CSV column prefix from a label: "SGLang 0.5.23" -> "sglang-0.5.23". */
static void csv_tag(char *out, size_t n, const char *label)
{
    size_t k = 0;
    for (const char *p = label; *p && k + 1 < n; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) || c == '.')
            out[k++] = (char)tolower(c);
        else if (k && out[k - 1] != '-')
            out[k++] = '-';
    }
    while (k && out[k - 1] == '-')
        k--;
    out[k] = 0;
}

/* One line per baseline saying what it is: label, kernel source and its hash, software, GPU. */
static void print_legend(FILE *f, vb_format fmt, const vb_baseline *b, int nb)
{
    const char *bullet = fmt == VB_FMT_MARKDOWN ? "- " : "  ";
    for (int i = 0; i < nb; i++) {
        const vb_baseline *x = &b[i];
        char hash[24] = "";
        if (*x->kernel_sha256)
            snprintf(hash, sizeof hash, ", sha256 %.12s", x->kernel_sha256);
        fprintf(f, "%s[%d] %s: %s%s%s; triton %s, torch %s, %s, %s (%s)\n", bullet, i + 1, x->label,
                *x->kernel_module ? x->kernel_module : "kernel source not recorded", hash,
                !strcmp(x->impl, "builtin") && *x->mirrors ? ", a re-implementation of that release's kernel" : "",
                x->triton, x->torch, x->gpu, x->date, x->path);
    }
}

static void print_header(FILE *f, vb_format fmt, const vb_baseline *b, int nb)
{
    if (fmt == VB_FMT_CSV) {
        fputs("scenario,kernel,eager_us,graph_us", f);
        for (int i = 0; i < nb; i++) {
            char t[96];
            csv_tag(t, sizeof t, b[i].label);
            fprintf(f, ",%s_eager_us,%s_eager_speedup,%s_graph_us,%s_graph_speedup", t, t, t, t);
        }
        fputs(",note\n", f);
        return;
    }
    fprintf(f, "\n%s baseline time / kernel time (above 1: the kernel is faster), medians of hot samples; graph "
               "against graph. Baselines:\n%s",
            fmt == VB_FMT_MARKDOWN ? "Speedup against the Triton baselines:" : "speedup against the Triton baselines:",
            fmt == VB_FMT_MARKDOWN ? "\n" : "");
    print_legend(f, fmt, b, nb);
    if (fmt == VB_FMT_MARKDOWN) {
        fputs("\n| scenario | kernel | eager us | graph us |", f);
        for (int i = 0; i < nb; i++)
            fprintf(f, " [%d] eager us | [%d] eager speedup | [%d] graph us | [%d] graph speedup |", i + 1, i + 1,
                    i + 1, i + 1);
        fputs(" note |\n|---|---|---:|---:|", f);
        for (int i = 0; i < nb; i++)
            fputs("---:|---:|---:|---:|", f);
        fputs("---|\n", f);
    } else {
        fprintf(f, "%-52s %-14s %10s %10s", "scenario", "kernel", "eager us", "graph us");
        for (int i = 0; i < nb; i++) {
            char h[4][24];
            snprintf(h[0], 24, "[%d] eager us", i + 1), snprintf(h[1], 24, "[%d] eager x", i + 1);
            snprintf(h[2], 24, "[%d] graph us", i + 1), snprintf(h[3], 24, "[%d] graph x", i + 1);
            fprintf(f, " %13s %12s %13s %12s", h[0], h[1], h[2], h[3]);
        }
        fputs("  note\n", f);
    }
}

/* " text |", or " |" for an empty cell. */
static void md_cell(FILE *f, const char *text)
{
    fprintf(f, *text ? " %s |" : " |", text);
}

/* Fields of one line: first, second, the kernel's two times, four per baseline, the note. */
static void print_line(FILE *f, vb_format fmt, const char *first, const char *second, const char *times[2],
                       const char (*base)[4][32], int nb, const char *note)
{
    if (fmt == VB_FMT_CSV) {
        vb_csv_string(f, first);
        fprintf(f, ",%s,%s,%s", second, times[0], times[1]);
        for (int i = 0; i < nb; i++)
            fprintf(f, ",%s,%s,%s,%s", base[i][0], base[i][1], base[i][2], base[i][3]);
        fputc(',', f);
        vb_csv_string(f, note);
        fputc('\n', f);
    } else if (fmt == VB_FMT_MARKDOWN) {
        fputc('|', f);
        md_cell(f, first), md_cell(f, second), md_cell(f, times[0]), md_cell(f, times[1]);
        for (int i = 0; i < nb; i++)
            for (int k = 0; k < 4; k++)
                md_cell(f, base[i][k]);
        md_cell(f, note);
        fputc('\n', f);
    } else {
        fprintf(f, "%-52s %-14s %10s %10s", first, second, times[0], times[1]);
        for (int i = 0; i < nb; i++)
            fprintf(f, " %13s %12s %13s %12s", base[i][0], base[i][1], base[i][2], base[i][3]);
        fprintf(f, "  %s\n", note);
    }
}

/* "no baseline" with one dump; "[2] no baseline; [3] baseline wrong" with several. */
static void join_notes(char *out, size_t n, const vb_speedup_row *x, int nb)
{
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < nb && k < n; i++) {
        if (!*x->base[i].note)
            continue;
        if (nb == 1)
            k += (size_t)snprintf(out + k, n - k, "%s", x->base[i].note);
        else
            k += (size_t)snprintf(out + k, n - k, "%s[%d] %s", k ? "; " : "", i + 1, x->base[i].note);
    }
}

/* One kernel's geometric-mean line: a pair of means per baseline, the counts as the note. */
static void print_geomeans(FILE *f, vb_format fmt, const vb_speedup_row *rows, int n, const char *kernel, int nb)
{
    const int md = fmt == VB_FMT_MARKDOWN;
    char c[VB_MAX_BASELINES][4][32] = {{{0}}}, note[256] = "";
    size_t k = 0;
    for (int q = 0; q < nb; q++) {
        int ce, cg;
        char a[24], g[24], tag[16] = "";
        cell(a, sizeof a, vb_speedup_geomean(rows, n, kernel, q, 0, &ce), "%.3f");
        cell(g, sizeof g, vb_speedup_geomean(rows, n, kernel, q, 1, &cg), "%.3f");
        snprintf(c[q][1], 32, md ? "**%s**" : "%s", a), snprintf(c[q][3], 32, md ? "**%s**" : "%s", g);
        if (nb > 1)
            snprintf(tag, sizeof tag, "[%d] ", q + 1);
        if (k < sizeof note)
            k += (size_t)snprintf(note + k, sizeof note - k, "%s%s%d eager / %d graph scenarios", k ? "; " : "", tag,
                                  ce, cg);
    }
    const char *times[2] = {"", ""};
    print_line(f, fmt, md ? "**geomean**" : "geomean", kernel, times, (const char (*)[4][32])c, nb, note);
}

void vb_speedup_print(FILE *f, vb_format fmt, const vb_results *r, const vb_baseline *b, int nb)
{
    vb_speedup_row *rows;
    int n = vb_speedup_rows(r, b, nb, &rows);
    print_header(f, fmt, b, nb);
    for (int i = 0; i < n; i++) {
        const vb_speedup_row *x = &rows[i];
        char t[2][32], c[VB_MAX_BASELINES][4][32], note[256];
        cell(t[0], 32, x->eager_us, "%.1f"), cell(t[1], 32, x->graph_us, "%.1f");
        for (int k = 0; k < nb; k++) {
            cell(c[k][0], 32, x->base[k].eager_us, "%.1f"), cell(c[k][1], 32, x->base[k].eager_speedup, "%.3f");
            cell(c[k][2], 32, x->base[k].graph_us, "%.1f"), cell(c[k][3], 32, x->base[k].graph_speedup, "%.3f");
        }
        join_notes(note, sizeof note, x, nb);
        const char *times[2] = {t[0], t[1]};
        print_line(f, fmt, r->scenarios[x->scenario].name, x->kernel, times, (const char (*)[4][32])c, nb, note);
    }
    /* Geometric means, one line per kernel, in first-seen order. */
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= !strcmp(rows[j].kernel, rows[i].kernel);
        if (!seen)
            print_geomeans(f, fmt, rows, n, rows[i].kernel, nb);
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

int vb_speedup_outputs(const vb_cli *cli, const vb_results *r, const vb_baseline *b, int nb)
{
    /* JSON and CSV on stdout stay one document: there the table goes only to --speedup FILE. */
    if (cli->format != VB_FMT_JSON && cli->format != VB_FMT_CSV)
        vb_speedup_print(stdout, cli->format, r, b, nb);
    if (!cli->speedup_path)
        return 0;
    vb_output out;
    char why[1200];
    if (vb_output_open(&out, cli->speedup_path, why, sizeof why) == 0) {
        if (format_for(cli->speedup_path) == VB_FMT_MARKDOWN)
            fprintf(out.f, "# Speedup against the Triton baselines\n\nverifybench %s, commit %s, %s, on %s.\n",
                    r->version, r->commit, r->date, r->gpu.present ? r->gpu.name : "no GPU");
        vb_speedup_print(out.f, format_for(cli->speedup_path), r, b, nb);
        if (vb_output_close(&out, why, sizeof why) == 0)
            return 0;
    }
    fprintf(stderr, "verifybench: %s\n", why);
    return -1;
}
