#include "merge.h"

#include <stdio.h>
#include <string.h>

#include "report.h"

/* What a file that is not merged contributes to the parts list: itself. */
static vb_run_part part_of(const vb_results *r)
{
    vb_run_part p;
    memset(&p, 0, sizeof p);
    snprintf(p.date, sizeof p.date, "%s", r->date);
    p.read_gbps = r->gpu.read_gbps;
    p.mma_tflops = r->gpu.mma_tflops;
    p.wgmma_tflops = r->gpu.wgmma_tflops;
    return p;
}

/* Appends r's runs (its parts, or r itself) to parts[*n]; -1 when VB_MAX_PARTS would be passed. */
static int add_parts(vb_run_part *parts, int *n, const vb_results *r)
{
    const int k = r->n_parts ? r->n_parts : 1;
    if (*n + k > VB_MAX_PARTS)
        return -1;
    for (int i = 0; i < k; i++)
        parts[(*n)++] = r->n_parts ? r->parts[i] : part_of(r);
    return 0;
}

static int same_build(const vb_results *a, const char *a_path, const vb_results *b, const char *b_path, char *why,
                      size_t n)
{
    if (strcmp(a->version, b->version) || strcmp(a->commit, b->commit))
        snprintf(why, n, "%s: tool: version %s, commit %s, but %s's is %s, %s: merge joins runs of one build", b_path,
                 b->version, b->commit, a_path, a->version, a->commit);
    else if (a->phase_stamps != b->phase_stamps)
        snprintf(why, n, "%s: tool: phase_stamps %s, but %s's is %s: merge joins runs of one build", b_path,
                 b->phase_stamps ? "true" : "false", a_path, a->phase_stamps ? "true" : "false");
    else
        return 1;
    return 0;
}

static int same_gpu(const vb_results *a, const char *a_path, const vb_results *b, const char *b_path, char *why,
                    size_t n)
{
    const vb_gpu_info *x = &a->gpu, *y = &b->gpu;
    if (x->present == y->present &&
        (!x->present || (!strcmp(x->name, y->name) && x->cc_major == y->cc_major && x->cc_minor == y->cc_minor &&
                         x->sms == y->sms && !strcmp(x->driver, y->driver))))
        return 1;
    snprintf(why, n, "%s: gpu: %s (sm_%d%d, %d SMs, driver %s), but %s ran on %s (sm_%d%d, %d SMs, driver %s): merge "
             "joins runs on one kind of GPU", b_path, y->present ? y->name : "none", y->cc_major, y->cc_minor, y->sms,
             y->driver, a_path, x->present ? x->name : "none", x->cc_major, x->cc_minor, x->sms, x->driver);
    return 0;
}

static int same_scenarios(const vb_results *a, const char *a_path, const vb_results *b, const char *b_path,
                          char *why, size_t n)
{
    if (a->n_scenarios != b->n_scenarios) {
        snprintf(why, n, "%s: scenarios: %d, but %s has %d: merge joins runs of the same scenarios", b_path,
                 b->n_scenarios, a_path, a->n_scenarios);
        return 0;
    }
    for (int s = 0; s < a->n_scenarios; s++) {
        const vb_scenario_info *x = &a->scenarios[s], *y = &b->scenarios[s];
        if (!strcmp(x->name, y->name) && !strcmp(x->shape_key, y->shape_key) && x->valid == y->valid &&
            x->bytes == y->bytes && x->flops == y->flops)
            continue;
        snprintf(why, n, "%s: scenarios[%d]: '%s' (%s) is not %s's '%s' (%s): merge joins runs of the same scenarios",
                 b_path, s, y->name, y->shape_key, a_path, x->name, x->shape_key);
        return 0;
    }
    return 1;
}

/* A record of b that a has too (same scenario, variant, kernel and mode): each must come from one run. */
static int no_shared_record(const vb_results *a, const char *a_path, const vb_results *b, const char *b_path,
                            char *why, size_t n)
{
    for (int j = 0; j < b->n_records; j++) {
        const vb_record *y = &b->records[j];
        for (int i = 0; i < a->n_records; i++) {
            const vb_record *x = &a->records[i];
            if (x->scenario != y->scenario || x->mode != y->mode || strcmp(x->kernel, y->kernel) ||
                strcmp(x->variant, y->variant))
                continue;
            snprintf(why, n, "%s: scenarios[%d]: the %s record of %s/%s %s is in %s too: merge joins runs of "
                     "different kernels", b_path, y->scenario, vb_mode_name(y->mode), b->scenarios[y->scenario].name,
                     y->variant, y->kernel, a_path);
            return 0;
        }
    }
    return 1;
}

int vb_results_merge(vb_results *into, const char *into_path, const vb_results *part, const char *part_path,
                     char *why, size_t n)
{
    const vb_results *runs[2] = {into, part};
    const char *paths[2] = {into_path, part_path};
    for (int i = 0; i < 2; i++) {
        char what[128];
        if (vb_results_incomplete(runs[i], what, sizeof what)) {
            snprintf(why, n, "%s: complete: false (%s): merge joins whole runs", paths[i], what);
            return -1;
        }
    }
    if (!same_build(into, into_path, part, part_path, why, n) || !same_gpu(into, into_path, part, part_path, why, n) ||
        !same_scenarios(into, into_path, part, part_path, why, n) ||
        !no_shared_record(into, into_path, part, part_path, why, n))
        return -1;
    vb_run_part parts[VB_MAX_PARTS];
    int n_parts = 0;
    if (add_parts(parts, &n_parts, into) || add_parts(parts, &n_parts, part)) {
        snprintf(why, n, "%s: more than %d runs in one merged file", part_path, VB_MAX_PARTS);
        return -1;
    }
    const int had = into->n_records;
    for (int j = 0; j < part->n_records; j++) {
        const vb_record *y = &part->records[j];
        vb_record *x = vb_results_add_record(into, y->scenario, y->variant, y->kernel, y->mode);
        if (!x) {
            into->n_records = had;
            snprintf(why, n, "%s: out of memory", part_path);
            return -1;
        }
        *x = *y;
    }
    memcpy(into->parts, parts, sizeof parts);
    into->n_parts = n_parts;
    return 0;
}
