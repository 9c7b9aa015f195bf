#include "fastest.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A record that may win: it passed every check and has a hot median. */
static int contender(const vb_record *rec, vb_mode mode)
{
    return rec->mode == mode && rec->status == VB_PASS && rec->hot.samples > 0 && rec->hot.median_us > 0;
}

static double half_spread(const vb_record *rec) { return (rec->hot.p90_us - rec->hot.p10_us) / 2; }

/* Where each shape's pick is, so that finding one costs the variants of its scenario, not every
 * pick so far (a checkpoint of a long sweep ranks thousands of shapes after every scenario). */
typedef struct shape_index {
    int *head;       /* per scenario: its latest pick, or -1 */
    int *next;       /* per pick: the same scenario's pick before it, or -1 */
    int *of_record;  /* per record: its shape's pick, or -1 when it is not a contender */
} shape_index;

static int pick_of(const vb_fastest *x, const shape_index *ix, const vb_record *rec)
{
    for (int p = ix->head[rec->scenario]; p >= 0; p = ix->next[p])
        if (!strcmp(x->picks[p].variant, rec->variant))
            return p;
    return -1;
}

/* Every shape's fastest and runner-up among the records of one mode (picks has room for one
 * per record). */
static void rank_shapes(const vb_results *r, vb_fastest *x, shape_index *ix)
{
    for (int k = 0; k < r->n_records; k++) {
        const vb_record *rec = &r->records[k];
        ix->of_record[k] = -1;
        if (!contender(rec, x->mode))
            continue;
        int p = ix->of_record[k] = pick_of(x, ix, rec);
        if (p < 0) {
            p = ix->of_record[k] = x->n_picks++;
            x->picks[p] = (vb_shape_pick){rec->scenario, rec->variant, k, -1, 0};
            ix->next[p] = ix->head[rec->scenario];
            ix->head[rec->scenario] = p;
            continue;
        }
        vb_shape_pick *s = &x->picks[p];
        const double t = rec->hot.median_us;
        if (t < r->records[s->best].hot.median_us) {
            s->runner_up = s->best;
            s->best = k;
        } else if (s->runner_up < 0 || t < r->records[s->runner_up].hot.median_us) {
            s->runner_up = k;
        }
    }
    for (int p = 0; p < x->n_picks; p++) {
        vb_shape_pick *s = &x->picks[p];
        if (s->runner_up < 0)
            continue;
        const vb_record *b = &r->records[s->best], *u = &r->records[s->runner_up];
        s->clear = u->hot.median_us - b->hot.median_us > half_spread(b) + half_spread(u);
    }
}

static vb_kernel_fit *fit_of(vb_fastest *x, const char *kernel)
{
    for (int i = 0; i < x->n_kernels; i++)
        if (!strcmp(x->kernels[i].kernel, kernel))
            return &x->kernels[i];
    vb_kernel_fit *grown = realloc(x->kernels, sizeof *grown * (size_t)(x->n_kernels + 1));
    if (!grown)
        return NULL;
    x->kernels = grown;
    x->kernels[x->n_kernels] = (vb_kernel_fit){kernel, 0, 0, 0, 0, 0, -1};
    return &x->kernels[x->n_kernels++];
}

static int by_wins(const void *a, const void *b)
{
    const vb_kernel_fit *x = a, *y = b;
    if (x->wins != y->wins)
        return y->wins - x->wins;
    return (x->geomean > y->geomean) - (x->geomean < y->geomean);
}

/* Each kernel's wins and its time over the fastest on every shape it passed. */
static int fit_kernels(const vb_results *r, vb_fastest *x, const shape_index *ix)
{
    for (int k = 0; k < r->n_records; k++) {
        const vb_record *rec = &r->records[k];
        const int p = ix->of_record[k];
        if (p < 0)
            continue;
        vb_kernel_fit *fit = fit_of(x, rec->kernel);
        if (!fit)
            return -1;
        const vb_shape_pick *s = &x->picks[p];
        const double over = rec->hot.median_us / r->records[s->best].hot.median_us;
        fit->wins += s->best == k;
        fit->clear_wins += s->best == k && s->clear;
        fit->shapes++;
        fit->geomean += log(over); /* a sum of logs until the end */
        if (over > fit->worst)
            fit->worst = over, fit->worst_pick = p;
    }
    x->one_for_all = -1;
    for (int i = 0; i < x->n_kernels; i++)
        x->kernels[i].geomean = exp(x->kernels[i].geomean / x->kernels[i].shapes);
    if (x->n_kernels) /* qsort wants an array, even of none */
        qsort(x->kernels, (size_t)x->n_kernels, sizeof *x->kernels, by_wins);
    for (int i = 0; i < x->n_kernels; i++)
        if (x->kernels[i].shapes == x->n_picks &&
            (x->one_for_all < 0 || x->kernels[i].geomean < x->kernels[x->one_for_all].geomean))
            x->one_for_all = i;
    return 0;
}

int vb_fastest_find(const vb_results *r, vb_fastest *out)
{
    memset(out, 0, sizeof *out);
    out->one_for_all = -1;
    const size_t records = (size_t)r->n_records + 1, scenarios = (size_t)r->n_scenarios + 1;
    shape_index ix = {malloc(sizeof(int) * scenarios), malloc(sizeof(int) * records), malloc(sizeof(int) * records)};
    out->picks = malloc(sizeof *out->picks * records);
    int rc = ix.head && ix.next && ix.of_record && out->picks ? 0 : -1;
    const vb_mode modes[] = {VB_MODE_GRAPH, VB_MODE_EAGER};
    for (int m = 0; m < 2 && !out->n_picks && !rc; m++) {
        out->mode = modes[m];
        for (int s = 0; s < r->n_scenarios; s++)
            ix.head[s] = -1;
        rank_shapes(r, out, &ix);
        rc = fit_kernels(r, out, &ix);
    }
    free(ix.head), free(ix.next), free(ix.of_record);
    if (rc)
        vb_fastest_free(out);
    return rc;
}

void vb_fastest_free(vb_fastest *f)
{
    free(f->picks);
    free(f->kernels);
    memset(f, 0, sizeof *f);
    f->one_for_all = -1;
}

static const char *shape_name(const vb_results *r, const vb_shape_pick *s, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", r->scenarios[s->scenario].name, s->variant);
    return buf;
}

void vb_fastest_print_summary(FILE *f, const vb_results *r, const vb_fastest *x, const char *prefix)
{
    if (!x->n_picks)
        return;
    fprintf(f, "%sfastest by %s (hot median, records that passed), %d shapes:\n", prefix,
            x->mode == VB_MODE_GRAPH ? "graph replay" : "eager launch", x->n_picks);
    char shape[2 * VB_NAME_MAX + 2];
    for (int i = 0; i < x->n_kernels; i++) {
        const vb_kernel_fit *k = &x->kernels[i];
        fprintf(f, "%s  %-16s fastest on %d (%d beyond the noise); on the %d it passed: x%.2f the fastest (geomean), "
                "worst x%.2f (%s)\n", prefix, k->kernel, k->wins, k->clear_wins, k->shapes, k->geomean, k->worst,
                shape_name(r, &x->picks[k->worst_pick], shape, sizeof shape));
    }
    if (x->one_for_all >= 0)
        fprintf(f, "%sone kernel for every shape: %s (x%.2f the fastest, geomean over the %d shapes)\n", prefix,
                x->kernels[x->one_for_all].kernel, x->kernels[x->one_for_all].geomean, x->n_picks);
    else
        fprintf(f, "%sone kernel for every shape: none passed them all\n", prefix);
}

void vb_fastest_print_shapes(FILE *f, const vb_results *r, const vb_fastest *x)
{
    if (!x->n_picks)
        return;
    fputs("\n| scenario | variant | fastest | hot µs | runner-up | hot µs | lead |\n|---|---|---|---:|---|---:|---|\n", f);
    for (int p = 0; p < x->n_picks; p++) {
        const vb_shape_pick *s = &x->picks[p];
        const vb_record *b = &r->records[s->best];
        fprintf(f, "| %s | %s | %s | %.2f |", r->scenarios[s->scenario].name, s->variant, b->kernel, b->hot.median_us);
        if (s->runner_up < 0) {
            fputs(" - | - | the only one that passed |\n", f);
            continue;
        }
        const vb_record *u = &r->records[s->runner_up];
        fprintf(f, " %s | %.2f | x%.3f%s |\n", u->kernel, u->hot.median_us, u->hot.median_us / b->hot.median_us,
                s->clear ? "" : ", within the noise");
    }
}

static cJSON *pick_json(const vb_results *r, const vb_shape_pick *s)
{
    cJSON *o = cJSON_CreateObject();
    const vb_record *b = &r->records[s->best], *u = s->runner_up >= 0 ? &r->records[s->runner_up] : NULL;
    cJSON_AddStringToObject(o, "scenario", r->scenarios[s->scenario].name);
    cJSON_AddStringToObject(o, "variant", s->variant);
    cJSON_AddStringToObject(o, "kernel", b->kernel);
    cJSON_AddNumberToObject(o, "median_us", b->hot.median_us);
    cJSON_AddItemToObject(o, "runner_up", u ? cJSON_CreateString(u->kernel) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "runner_up_median_us", u ? cJSON_CreateNumber(u->hot.median_us) : cJSON_CreateNull());
    cJSON_AddBoolToObject(o, "clear", s->clear);
    return o;
}

static cJSON *fit_json(const vb_results *r, const vb_fastest *x, const vb_kernel_fit *k)
{
    cJSON *o = cJSON_CreateObject();
    const vb_shape_pick *w = &x->picks[k->worst_pick];
    cJSON_AddStringToObject(o, "kernel", k->kernel);
    cJSON_AddNumberToObject(o, "wins", k->wins);
    cJSON_AddNumberToObject(o, "clear_wins", k->clear_wins);
    cJSON_AddNumberToObject(o, "shapes", k->shapes);
    cJSON_AddNumberToObject(o, "geomean_vs_fastest", k->geomean);
    cJSON_AddNumberToObject(o, "worst_vs_fastest", k->worst);
    cJSON_AddStringToObject(o, "worst_scenario", r->scenarios[w->scenario].name);
    cJSON_AddStringToObject(o, "worst_variant", w->variant);
    return o;
}

cJSON *vb_fastest_json(const vb_results *r, const vb_fastest *x)
{
    if (!x->n_picks)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "mode", vb_mode_name(x->mode));
    cJSON *shapes = cJSON_AddArrayToObject(o, "shapes");
    for (int p = 0; p < x->n_picks; p++)
        cJSON_AddItemToArray(shapes, pick_json(r, &x->picks[p]));
    cJSON *kernels = cJSON_AddArrayToObject(o, "kernels");
    for (int i = 0; i < x->n_kernels; i++)
        cJSON_AddItemToArray(kernels, fit_json(r, x, &x->kernels[i]));
    cJSON_AddItemToObject(o, "one_for_all",
                          x->one_for_all >= 0 ? cJSON_CreateString(x->kernels[x->one_for_all].kernel) : cJSON_CreateNull());
    return o;
}
