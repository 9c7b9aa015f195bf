#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {"cpu", "eager", "graph"};
static const char *const status_names[] = {"pass", "FAIL", "skipped", "unsupported", "ERROR"};

const char *vb_mode_name(vb_mode m) { return mode_names[m]; }
const char *vb_status_name(vb_status s) { return status_names[s]; }

int vb_mode_parse(const char *s, vb_mode *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, mode_names[i]))
            return *out = (vb_mode)i, 0;
    return -1;
}

int vb_status_parse(const char *s, vb_status *out)
{
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, status_names[i]))
            return *out = (vb_status)i, 0;
    return -1;
}

void vb_results_init(vb_results *r) { memset(r, 0, sizeof *r); }

void vb_timing_set_floor(vb_timing *t)
{
    /* The larger tensor ceiling gives the smaller share (the same flops over more TFLOP/s). */
    double tensor = t->mma_share;
    if (t->wgmma_share > 0 && (tensor <= 0 || t->wgmma_share < tensor))
        tensor = t->wgmma_share;
    const double share = t->bw_share > tensor ? t->bw_share : tensor;
    t->floor_us = t->samples && share > 0 ? t->median_us * share : 0;
    t->floor_ratio = t->samples && share > 0 ? 1.0 / share : 0;
}

vb_floor_range vb_results_floor_range(const vb_results *r, const char *kernel)
{
    vb_floor_range fr = {0, 0, -1, -1};
    for (int k = 0; k < r->n_records; k++) {
        const vb_record *rec = &r->records[k];
        const double x = rec->hot.floor_ratio;
        if (strcmp(rec->kernel, kernel) || x <= 0)
            continue;
        if (fr.best_rec < 0 || x < fr.best)
            fr.best = x, fr.best_rec = k;
        if (fr.worst_rec < 0 || x > fr.worst)
            fr.worst = x, fr.worst_rec = k;
    }
    return fr;
}

int vb_results_add_scenario(vb_results *r, const vb_scenario_info *info)
{
    if (r->n_scenarios == r->cap_scenarios) {
        int cap = r->cap_scenarios ? 2 * r->cap_scenarios : 16;
        vb_scenario_info *s = realloc(r->scenarios, sizeof *s * (size_t)cap);
        if (!s)
            return -1;
        r->scenarios = s, r->cap_scenarios = cap;
    }
    r->scenarios[r->n_scenarios] = *info;
    return r->n_scenarios++;
}

vb_record *vb_results_add_record(vb_results *r, int scenario, const char *variant, const char *kernel,
                                 vb_mode mode)
{
    if (r->n_records == r->cap_records) {
        int cap = r->cap_records ? 2 * r->cap_records : 64;
        vb_record *x = realloc(r->records, sizeof *x * (size_t)cap);
        if (!x)
            return NULL;
        r->records = x, r->cap_records = cap;
    }
    vb_record *rec = &r->records[r->n_records++];
    memset(rec, 0, sizeof *rec);
    rec->scenario = scenario;
    snprintf(rec->variant, sizeof rec->variant, "%s", variant);
    snprintf(rec->kernel, sizeof rec->kernel, "%s", kernel);
    rec->mode = mode;
    rec->status = VB_SKIPPED;
    snprintf(rec->message, sizeof rec->message, "%s", VB_NOT_RUN);
    return rec;
}

void vb_results_free(vb_results *r)
{
    free(r->scenarios);
    free(r->records);
    memset(r, 0, sizeof *r);
}

int vb_results_failures(const vb_results *r)
{
    int n = 0;
    for (int i = 0; i < r->n_records; i++)
        n += r->records[i].status == VB_FAIL;
    return n;
}
