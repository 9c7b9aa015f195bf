/* verifybench: proves speculative-decoding verify kernels right, capture-safe and fast.
 *
 * The pipeline, per scenario:
 *   scenario  (scenario.c: a validated JSON file, sweeps expanded)
 *   -> inputs (inputs.c: SGLang's buffers; q and KV from cuRAND, on the GPU when present)
 *   -> oracle (oracle/: naive, double precision) and the token verdict (verdict.c)
 *   -> kernels: the CPU model, then every registered kernel eagerly and in a CUDA graph
 *      replayed over the scenario's variants (gpu_run.c; timing in gpu_timing.c, sampling.c)
 *   -> checks (checks.c) inside every run
 *   -> report (report.c: table, JSON, CSV, markdown) and the exit code.
 * The --json file is also written after every scenario (a checkpoint), and SIGINT or SIGTERM
 * stops the run at the next stage with everything reported (interrupt.c). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"
#include "checks.h"
#include "cli.h"
#include "cpu_model.h"
#include "device_util.h"
#include "fileutil.h"
#include "gpu.h"
#include "inputs.h"
#include "interrupt.h"
#include "oracle.h"
#include "parallel.h"
#include "progress.h"
#include "report.h"
#include "scenario.h"
#include "verdict.h"
#include "verify_attn.h"
#include "version.h"
#include "watchdog.h"
#include "commands.h"
#include "prepare.h"

typedef struct run_ctx {
    const vb_cli *cli;
    vb_baseline baselines[VB_MAX_BASELINES]; /* --baseline, read before anything runs */
    vb_results results;
    vb_gpu *gpu;
    const vb_kernel *kernels[64];
    int n_kernels;
    int cpu_model;
    int bad_input;
    int total, index;
    const vb_scenario_list *list;
    int stopped;           /* a signal kept some scenario, stage or variant from running */
    int checkpoint_failed; /* the --json file could not be written after a scenario: stop trying */
} run_ctx;

/* 1 when a signal asks the run to stop (then why is the message for what is not run). */
static int stop_requested(run_ctx *x, char *why, size_t n)
{
    const int sig = vb_interrupt_signal();
    if (!sig)
        return 0;
    char name[16];
    snprintf(why, n, VB_NOT_RUN ": interrupted by %s", vb_interrupt_name(sig, name, sizeof name));
    x->stopped = 1;
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* scenario -> inputs -> oracle -> verdict reference, for one variant. */
static int prepare(run_ctx *x, const vb_scenario *s, const vb_variant *v, vb_prepared *p, char *why, size_t n)
{
    vb_progress(x->index, x->total, s->name, v == &s->base ? "inputs and oracle" : v->name);
    return vb_prepare(s, v, s->graph_enabled ? s->bucket : 0, x->gpu, x->cli->verify_generator, x->cli->threads, p,
                      why, n);
}

static void describe(const vb_scenario *s, vb_scenario_info *i)
{
    memset(i, 0, sizeof *i);
    snprintf(i->name, sizeof i->name, "%s", s->name);
    snprintf(i->file, sizeof i->file, "%s", s->file);
    i->batch = s->base.batch;
    i->bucket = s->graph_enabled ? s->bucket : 0;
    i->draft = s->base.tree.nodes;
    i->heads = s->heads;
    i->d_qk = vb_scenario_d_qk(s);
    i->d_v = vb_scenario_d_v(s);
    i->page_size = s->base.page_size;
    i->n_replays = s->graph_enabled ? s->n_replays : 0;
    snprintf(i->tree, sizeof i->tree, "%s", s->base.tree.label);
    snprintf(i->prefix, sizeof i->prefix, "%s", s->base.prefix_label);
    snprintf(i->layout, sizeof i->layout, "%s", vb_layout_name(s->base.layout));
    const vb_index_dtypes *d = &s->dtypes;
    snprintf(i->dtypes, sizeof i->dtypes, "kv_indptr=%s,kv_indices=%s,qo_indptr=%s,out_cache_loc=%s,mask_indptr=%s,custom_mask=%s",
             vb_index_width_name(d->kv_indptr), vb_index_width_name(d->kv_indices), vb_index_width_name(d->qo_indptr),
             vb_index_width_name(d->out_cache_loc), vb_index_width_name(d->mask_indptr), d->mask_is_bool ? "bool" : "uint8");
    for (int b = 0; b < s->base.batch; b++)
        i->total_prefix += s->base.prefix_len[b];
    i->valid = 1;
}

static void summarise_oracle(vb_scenario_info *info, const vb_scenario *s, const vb_prepared *p)
{
    int64_t rows = p->in.live_tokens * p->in.heads;
    double *pm = malloc(sizeof *pm * (size_t)(rows ? rows : 1));
    if (pm && rows) {
        memcpy(pm, p->ref.pmax, sizeof *pm * (size_t)rows);
        qsort(pm, (size_t)rows, sizeof *pm, cmp_double);
        info->pmax_median = pm[rows / 2];
    }
    free(pm);
    info->oracle_s = p->oracle_s;
    vb_shape_key(&p->in, s, info->shape_key, sizeof info->shape_key);
    info->accepted_mean = vb_verdict_oracle_accept_mean(&p->vref);
    info->num_slots = p->in.num_slots;
    vb_instance_traffic(&p->in, p->in.live_batch, &info->bytes, &info->flops);
}

/* The CPU model of the split-K design, checked like any kernel. */
static void run_cpu_model(run_ctx *x, int sidx, const vb_prepared *p)
{
    vb_record *rec = vb_results_add_record(&x->results, sidx, "base", VB_CPU_MODEL_NAME, VB_MODE_CPU);
    const vb_instance *in = &p->in;
    int64_t cap = in->live_tokens + in->draft;
    uint16_t *o = malloc(sizeof *o * (size_t)(cap * in->heads * in->d_v));
    float *lse = malloc(sizeof *lse * (size_t)(cap * in->heads));
    vb_verify_params hp = vb_instance_launch_params(in, in->live_batch);
    hp.o = o, hp.lse = lse;
    if (o && lse)
        vb_poison_output(o, lse, cap, in->heads, in->d_v);
    if (!o || !lse || vb_cpu_model_run(&hp, (vb_cpu_bug)x->cli->cpu_model_bug, x->cli->threads)) {
        /* too little host memory is bad input for this scenario, like too little GPU memory; not
         * a row the model failed to write, which the checks would call a kernel bug */
        rec->status = VB_SKIPPED;
        snprintf(rec->message, sizeof rec->message, "not run: out of host memory for the CPU model");
        fprintf(stderr, "%s: batch: scenario '%s' needs more host memory for the CPU model than is free\n",
                x->results.scenarios[sidx].file, x->results.scenarios[sidx].name);
        x->bad_input = 1;
    } else {
        vb_kernel_output out = {o, lse, in->live_tokens, cap};
        rec->status = vb_check_output(in, &p->ref, &p->vref, &out, x->cli->threads, &rec->checks,
                                      rec->message, sizeof rec->message);
    }
    free(o);
    free(lse);
}

static vb_timing_spec timing_of(const run_ctx *x, const vb_scenario *s)
{
    vb_timing_spec t = s->timing;
    if (x->cli->cold_l2 >= 0)
        t.cold_l2 = x->cli->cold_l2;
    if (x->cli->iterations)
        t.iterations = x->cli->iterations;
    return t;
}

static void skip_gpu_records(run_ctx *x, int sidx, const vb_scenario *s, const char *why)
{
    for (int k = 0; k < x->n_kernels; k++) {
        vb_record *r = vb_results_add_record(&x->results, sidx, "base", x->kernels[k]->name, VB_MODE_EAGER);
        snprintf(r->message, sizeof r->message, "%s", why);
        if (!s->graph_enabled)
            continue;
        for (int v = 0; v <= s->n_replays; v++) {
            r = vb_results_add_record(&x->results, sidx, v ? s->replays[v - 1].name : "base",
                                      x->kernels[k]->name, VB_MODE_GRAPH);
            snprintf(r->message, sizeof r->message, "%s", why);
        }
    }
}

/* One record per kernel for a stage. Adding a record may move the array, so the pointers
 * are taken only once all are added (nothing adds records while a stage runs). */
static void add_records(run_ctx *x, int sidx, const char *variant, const vb_kernel *const *ks, int nk,
                        vb_mode mode, vb_record **recs)
{
    int first = x->results.n_records;
    for (int k = 0; k < nk; k++)
        vb_results_add_record(&x->results, sidx, variant, ks[k]->name, mode);
    for (int k = 0; k < nk; k++)
        recs[k] = &x->results.records[first + k];
}

/* Which kernels can run here at all; the rest get an "unsupported" record. */
static int runnable(run_ctx *x, int sidx, const vb_kernel *k, const vb_prepared *p, vb_mode mode, const char *variant)
{
    char why[200] = "";
    vb_verify_params hp = vb_instance_params(&p->in);
    int cc = vb_gpu_cc(x->gpu);
    if (cc < k->min_cc)
        snprintf(why, sizeof why, "needs sm_%d, this GPU is sm_%d", k->min_cc, cc);
    else if (k->unsupported && k->unsupported(&hp, why, sizeof why))
        ;
    else
        return 1;
    vb_record *r = vb_results_add_record(&x->results, sidx, variant, k->name, mode);
    r->status = VB_UNSUPPORTED;
    snprintf(r->message, sizeof r->message, "%s", why);
    return 0;
}

/* Too little GPU memory is bad input for this scenario: say so and skip the stage. */
static int memory_ok(run_ctx *x, const vb_scenario *s, double need, const char *stage)
{
    double free_b = vb_gpu_free_bytes(x->gpu);
    if (need <= free_b * 0.95)
        return 1;
    fprintf(stderr, "%s: batch: scenario '%s' needs %.1f GiB of GPU memory for the %s stage, %.1f GiB free\n",
            s->file, s->name, need / 1073741824.0, stage, free_b / 1073741824.0);
    x->bad_input = 1;
    return 0;
}

static void run_eager_all(run_ctx *x, const vb_scenario *s, int sidx, const vb_prepared *p)
{
    const vb_case c = {&p->in, &p->ref, &p->vref, timing_of(x, s), x->cli->threads};
    const vb_kernel *ks[64];
    vb_record *recs[64];
    int nk = 0;
    for (int k = 0; k < x->n_kernels; k++)
        if (runnable(x, sidx, x->kernels[k], p, VB_MODE_EAGER, "base"))
            ks[nk++] = x->kernels[k];
    if (!nk || !memory_ok(x, s, vb_gpu_eager_bytes(&p->in, ks, nk), "eager"))
        return;
    add_records(x, sidx, "base", ks, nk, VB_MODE_EAGER, recs);
    vb_progress(x->index, x->total, s->name, "eager");
    vb_gpu_run_eager(x->gpu, ks, nk, &c, recs);
}

/* Records for graph variants [from, to] that will not run, with why and the status it earns,
 * so that nothing vanishes from the reports. */
static void graph_not_run(run_ctx *x, int sidx, const vb_scenario *s, const vb_kernel *const *ks, int nk, int from,
                          int to, vb_status status, const char *why)
{
    for (int v = from; v <= to; v++) {
        vb_record *recs[64];
        add_records(x, sidx, v ? s->replays[v - 1].name : "base", ks, nk, VB_MODE_GRAPH, recs);
        for (int k = 0; k < nk; k++) {
            recs[k]->status = status;
            snprintf(recs[k]->message, sizeof recs[k]->message, "%s", why);
        }
    }
}

/* Graph mode: capture once, then replay the base and every replay variant, each written
 * into the same static buffers. Takes the prepared base and frees what it builds. */
static void run_graph_all(run_ctx *x, const vb_scenario *s, int sidx, const vb_prepared *base)
{
    const vb_kernel *ks[64];
    int nk = 0;
    for (int k = 0; k < x->n_kernels; k++) {
        if (runnable(x, sidx, x->kernels[k], base, VB_MODE_GRAPH, "base"))
            ks[nk++] = x->kernels[k];
    }
    if (!nk || !memory_ok(x, s, vb_graph_bytes(s, ks, nk), "graph"))
        return;
    vb_graph_set *gs = vb_graph_create(x->gpu, s, ks, nk);
    if (!gs) {
        char why[400];
        snprintf(why, sizeof why, "the CUDA-graph buffers: %s", vb_gpu_error_text(x->gpu));
        graph_not_run(x, sidx, s, ks, nk, 0, s->n_replays, VB_ERROR, why);
        return;
    }
    for (int v = 0; v <= s->n_replays; v++) {
        vb_prepared rp, *p = (vb_prepared *)base;
        const vb_variant *var = v ? &s->replays[v - 1] : &s->base;
        char why[320], msg[340];
        if (vb_gpu_dead(x->gpu)) {
            graph_not_run(x, sidx, s, ks, nk, v, s->n_replays, VB_SKIPPED,
                          VB_NOT_RUN_GPU_ENDED);
            break;
        }
        if (stop_requested(x, why, sizeof why)) {
            graph_not_run(x, sidx, s, ks, nk, v, s->n_replays, VB_SKIPPED, why);
            break;
        }
        vb_progress(x->index, x->total, s->name, v ? var->name : "graph");
        if (v && prepare(x, s, var, &rp, why, sizeof why)) {
            fprintf(stderr, "%s: graph.replays[%d]: %s\n", s->file, v - 1, why);
            snprintf(msg, sizeof msg, "not run: %s", why);
            graph_not_run(x, sidx, s, ks, nk, v, v, VB_SKIPPED, msg);
            x->bad_input = 1;
            continue;
        }
        if (v)
            p = &rp;
        vb_record *recs[64];
        add_records(x, sidx, v ? var->name : "base", ks, nk, VB_MODE_GRAPH, recs);
        const vb_case c = {&p->in, &p->ref, &p->vref, timing_of(x, s), x->cli->threads};
        vb_graph_replay(gs, &c, recs);
        if (v)
            vb_prepared_free(&rp);
    }
    vb_graph_free(gs);
}

static void run_scenario(run_ctx *x, const vb_scenario *s)
{
    vb_scenario_info info;
    describe(s, &info);
    double host_need = vb_instance_estimate_bytes(s, &s->base, s->bucket) * 1.3;
    double host_have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    vb_prepared p;
    char why[320] = "";
    if (host_need > host_have)
        snprintf(why, sizeof why, "batch: needs %.1f GiB of host memory, this machine has %.1f GiB",
                 host_need / 1073741824.0, host_have / 1073741824.0);
    if (*why || prepare(x, s, &s->base, &p, why, sizeof why)) {
        info.valid = 0;
        snprintf(info.message, sizeof info.message, "%s", why);
        fprintf(stderr, "%s: scenario '%s': %s\n", s->file, s->name, why);
        vb_results_add_scenario(&x->results, &info);
        x->bad_input = 1;
        return;
    }
    summarise_oracle(&info, s, &p);
    int sidx = vb_results_add_scenario(&x->results, &info);
    if (x->cpu_model) {
        vb_progress(x->index, x->total, s->name, VB_CPU_MODEL_NAME);
        run_cpu_model(x, sidx, &p);
    }
    if (!x->gpu || vb_gpu_dead(x->gpu)) {
        skip_gpu_records(x, sidx, s, x->gpu ? "skipped: an earlier CUDA error ended the GPU stages"
                                            : "skipped: no usable GPU");
    } else if (stop_requested(x, why, sizeof why)) {
        skip_gpu_records(x, sidx, s, why);
    } else {
        run_eager_all(x, s, sidx, &p);
        if (s->graph_enabled && vb_gpu_dead(x->gpu)) /* the eager stage ended the GPU stages */
            graph_not_run(x, sidx, s, x->kernels, x->n_kernels, 0, s->n_replays, VB_SKIPPED,
                          VB_NOT_RUN_GPU_ENDED);
        else if (s->graph_enabled && stop_requested(x, why, sizeof why))
            graph_not_run(x, sidx, s, x->kernels, x->n_kernels, 0, s->n_replays, VB_SKIPPED, why);
        else if (s->graph_enabled)
            run_graph_all(x, s, sidx, &p);
    }
    vb_prepared_free(&p);
}

/* --kernel names, or every registered kernel. Test kernels run only when named. */
static int select_kernels(run_ctx *x)
{
    if (!x->cli->n_kernels) {
        for (size_t i = 0; i < vb_kernel_count; i++)
            x->kernels[x->n_kernels++] = vb_kernels[i];
        return 0;
    }
    for (int n = 0; n < x->cli->n_kernels; n++) {
        const vb_kernel *found = NULL;
        for (size_t i = 0; i < vb_kernel_count && !found; i++)
            if (!strcmp(vb_kernels[i]->name, x->cli->kernels[n]))
                found = vb_kernels[i];
        for (size_t i = 0; i < vb_test_kernel_count && !found; i++)
            if (!strcmp(vb_test_kernels[i]->name, x->cli->kernels[n]))
                found = vb_test_kernels[i];
        if (!found) {
            fprintf(stderr, "verifybench: --kernel: no kernel named '%s' (see verifybench list-kernels --all)\n",
                    x->cli->kernels[n]);
            return -1;
        }
        x->kernels[x->n_kernels++] = found;
    }
    return 0;
}

static void stamp_results(vb_results *r)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(r->version, sizeof r->version, "%s", VB_VERSION);
    snprintf(r->commit, sizeof r->commit, "%s", VB_GIT_COMMIT);
    r->cpus = vb_parallel_workers(0);
    r->phase_stamps = vb_dev_phase_stamps();
}

static int write_reports(const run_ctx *x)
{
    const vb_cli *cli = x->cli;
    int rc = 0;
    vb_report_print(stdout, cli->format, &x->results);
    rc |= vb_report_write_files(cli, &x->results);
    if (cli->n_baselines)
        rc |= vb_speedup_outputs(cli, &x->results, x->baselines, cli->n_baselines);
    return rc;
}

/* Scenarios [from, count) that a signal kept from starting: listed, so that none vanishes. */
static void scenarios_not_run(run_ctx *x, const vb_scenario_list *list, int from, const char *why)
{
    for (int i = from; i < list->count; i++) {
        vb_scenario_info info;
        describe(&list->items[i], &info);
        info.valid = 0;
        snprintf(info.message, sizeof info.message, "%s", why);
        vb_results_add_scenario(&x->results, &info);
    }
}

/* The --json file again after every scenario, marked incomplete, so that a run that is killed,
 * crashes or hangs leaves what it finished. Only where the write can be atomic (a regular file
 * or a new one: temporary file, then rename); a pipe or /dev/stdout gets the final document
 * alone. */
static void checkpoint(run_ctx *x)
{
    if (!x->cli->json_path || x->checkpoint_failed || !vb_path_replaceable(x->cli->json_path))
        return;
    x->results.incomplete = 1;
    x->checkpoint_failed = vb_report_write(x->cli->json_path, VB_FMT_JSON, &x->results) != 0;
    x->results.incomplete = 0;
}

static int has_record(const vb_results *r, int sidx, const char *variant, const char *kernel, vb_mode mode)
{
    for (int i = 0; i < r->n_records; i++) {
        const vb_record *rec = &r->records[i];
        if (rec->scenario == sidx && rec->mode == mode && !strcmp(rec->variant, variant) && !strcmp(rec->kernel, kernel))
            return 1;
    }
    return 0;
}

/* The graph records of the scenario under way that its stages never reached (the graph stage
 * adds them variant by variant), so that none vanishes when the run stops in the middle. */
static void graph_unreached(run_ctx *x, const char *why)
{
    const vb_scenario *s = &x->list->items[x->index];
    const int sidx = x->results.n_scenarios - 1;
    if (!s->graph_enabled || sidx < 0 || strcmp(x->results.scenarios[sidx].name, s->name))
        return;
    for (int v = 0; v <= s->n_replays; v++)
        for (int k = 0; k < x->n_kernels; k++) {
            const char *variant = v ? s->replays[v - 1].name : "base";
            if (has_record(&x->results, sidx, variant, x->kernels[k]->name, VB_MODE_GRAPH))
                continue;
            vb_record *r = vb_results_add_record(&x->results, sidx, variant, x->kernels[k]->name, VB_MODE_GRAPH);
            snprintf(r->message, sizeof r->message, "%s", why);
        }
}

/* The watchdog's report of a GPU wait that never returned (run on its thread while this one is
 * held in that wait): the record under way is a timed-out ERROR, everything not yet run is
 * listed as such, and every report is written as the run stands. Adding records may move the
 * array under the held thread's pointers: it never runs again. */
static int on_gpu_hang(void *ctx, double waited_s)
{
    run_ctx *x = ctx;
    static const char not_run[] = VB_NOT_RUN ": the GPU stopped answering (--gpu-timeout)";
    vb_record *rec = vb_gpu_running_record(x->gpu);
    fprintf(stderr, "\nverifybench: a wait for the GPU has lasted %.0f s (--gpu-timeout %d): a kernel that never "
            "finishes? Writing the reports and exiting.\n", waited_s, x->cli->gpu_timeout_s);
    if (rec) {
        rec->status = VB_ERROR;
        snprintf(rec->message, sizeof rec->message,
                 "timed out: not finished after %.0f s (--gpu-timeout %d); a kernel that never ends?", waited_s,
                 x->cli->gpu_timeout_s);
    }
    for (int i = 0; i < x->results.n_records; i++)
        if (!strcmp(x->results.records[i].message, VB_NOT_RUN))
            snprintf(x->results.records[i].message, sizeof x->results.records[i].message, "%s", not_run);
    graph_unreached(x, not_run);
    scenarios_not_run(x, x->list, x->index + 1, not_run);
    x->results.incomplete = 1;
    snprintf(x->results.interrupted_by, sizeof x->results.interrupted_by, "GPU timeout");
    vb_progress_done();
    write_reports(x);
    return VB_EXIT_CUDA;
}

/* Every scenario in turn, checkpointing after each, until the list ends or a signal stops it. */
static void run_all(run_ctx *x, const vb_scenario_list *list)
{
    x->list = list;
    x->results.scenarios_planned = list->count;
    if (x->gpu && x->cli->gpu_timeout_s > 0 && vb_watchdog_start(x->cli->gpu_timeout_s, on_gpu_hang, x))
        vb_notice("could not start the GPU watchdog: a kernel that never finishes will hang the run");
    vb_interrupt_install();
    for (x->index = 0; x->index < list->count; x->index++) {
        char why[64];
        if (stop_requested(x, why, sizeof why)) {
            scenarios_not_run(x, list, x->index, why);
            break;
        }
        run_scenario(x, &list->items[x->index]);
        if (x->index + 1 < list->count)
            checkpoint(x);
    }
    vb_watchdog_stop();
    vb_progress_done();
    if (x->stopped) {
        x->results.incomplete = 1;
        vb_interrupt_name(vb_interrupt_signal(), x->results.interrupted_by, sizeof x->results.interrupted_by);
    }
}

static int exit_code(const run_ctx *x)
{
    int errors = 0;
    for (int i = 0; i < x->results.n_records; i++)
        errors += x->results.records[i].status == VB_ERROR;
    if (errors || (x->gpu && vb_gpu_had_error(x->gpu)))
        return VB_EXIT_CUDA;
    if (vb_results_failures(&x->results))
        return VB_EXIT_FAIL;
    return x->bad_input ? VB_EXIT_INPUT : VB_EXIT_OK;
}

/* 1 when a file the run was told to write cannot be (no such directory, no permission): said
 * now, before any scenario runs, rather than found out when the run ends. */
static int outputs_unwritable(const vb_cli *cli)
{
    const char *paths[] = {cli->json_path, cli->csv_path, cli->markdown_path, cli->speedup_path};
    int bad = 0;
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        char why[1200];
        if (paths[i] && vb_output_probe(paths[i], why, sizeof why)) {
            fprintf(stderr, "verifybench: %s (nothing was run)\n", why);
            bad = 1;
        }
    }
    return bad;
}

static int run(const vb_cli *cli, const vb_scenario_list *list, int bad_input)
{
    run_ctx x;
    memset(&x, 0, sizeof x);
    x.cli = cli;
    x.bad_input = bad_input;
    x.total = list->count;
    vb_results_init(&x.results);
    stamp_results(&x.results);
    if (x.results.phase_stamps)
        vb_notice("built with -Dphase_stamps=true: mla_onepass and mla_onepass_ws print phase stamps, "
                  "and their times are not the kernels' own (the results file says so)");
    if (select_kernels(&x))
        return VB_EXIT_INPUT;
    if (outputs_unwritable(cli) || vb_baselines_read(cli, x.baselines)) {
        vb_results_free(&x.results);
        return VB_EXIT_INPUT;
    }
    if (cli->no_gpu)
        snprintf(x.results.gpu.skipped_reason, sizeof x.results.gpu.skipped_reason, "--no-gpu");
    else
        x.gpu = vb_gpu_open(&x.results.gpu, !cli->no_ceilings);
    if (!x.gpu) {
        vb_notice("no usable GPU (%s): skipping the GPU stages (device input generation, eager and "
                  "CUDA-graph runs, timing); parsing, input generation, the oracle and the CPU checks still run",
                  x.results.gpu.skipped_reason);
        if (cli->require_gpu) {
            vb_results_free(&x.results);
            vb_baselines_free(x.baselines, cli->n_baselines);
            return VB_EXIT_NO_GPU;
        }
    }
    x.cpu_model = cli->cpu_model >= 0 ? cli->cpu_model : x.gpu == NULL;
    run_all(&x, list);
    int rc = exit_code(&x);
    if (write_reports(&x) && rc == VB_EXIT_OK)
        rc = VB_EXIT_INPUT;
    if (x.stopped) /* the shell's convention, whatever else happened: the run is not whole */
        rc = 128 + vb_interrupt_signal();
    vb_gpu_close(x.gpu);
    vb_results_free(&x.results);
    vb_baselines_free(x.baselines, cli->n_baselines);
    return rc;
}

static int matches_filters(const vb_cli *cli, const char *name)
{
    if (!cli->n_filters)
        return 1;
    for (int i = 0; i < cli->n_filters; i++)
        if (strstr(name, cli->filters[i]))
            return 1;
    return 0;
}

/* Whether name was seen before (then 1), else remembers it: an open-addressing set of the
 * names kept so far, so that checking N scenarios costs N lookups, not N^2 comparisons. */
static int seen_before(const char **set, size_t cap, const char *name)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001B3ull;
    for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (!set[i])
            return set[i] = name, 0;
        if (!strcmp(set[i], name))
            return 1;
    }
}

/* Loads every file; bad files are reported and skipped. Returns 1 if any input was bad. */
static int load_scenarios(const vb_cli *cli, vb_scenario_list *out)
{
    int bad = 0;
    vb_scenario_list all = {0};
    for (int i = 0; i < cli->n_files; i++)
        bad |= vb_scenario_load_file(cli->files[i], &all) != 0;
    size_t cap = 16;
    while (cap < 2 * (size_t)all.count)
        cap *= 2;
    const char **names = calloc(cap, sizeof *names);
    if (!names && all.count) {
        fprintf(stderr, "verifybench: out of host memory for %d scenarios\n", all.count);
        vb_scenario_list_free(&all);
        return 1;
    }
    for (int i = 0; i < all.count; i++) {
        vb_scenario *s = &all.items[i];
        const int dup = seen_before(names, cap, s->name);
        if (dup) {
            fprintf(stderr, "%s: name: '%s' is used by another scenario; names key every report\n", s->file, s->name);
            bad = 1;
        }
        if (dup || !matches_filters(cli, s->name)) {
            vb_scenario_free(s);
            continue;
        }
        if (out->count == out->cap) {
            vb_scenario *grown = realloc(out->items, sizeof *out->items * (size_t)(out->cap ? 2 * out->cap : 16));
            if (!grown) {
                fprintf(stderr, "%s: %s: out of host memory for the scenario list\n", s->file, s->name);
                vb_scenario_free(s);
                bad = 1;
                continue;
            }
            out->items = grown, out->cap = out->cap ? 2 * out->cap : 16;
        }
        out->items[out->count++] = *s;
    }
    free(names);
    free(all.items);
    return bad;
}

/* Everything printed must have reached stdout: a full disk or a closed pipe is an error. */
static int finish_stdout(int rc)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) /* errno kept: a failed write earlier says why */
        return rc;
    fprintf(stderr, "verifybench: writing to stdout failed: %s\n", strerror(errno ? errno : EIO));
    return vb_exit_worst(rc, VB_EXIT_INPUT);
}

int main(int argc, char **argv)
{
    vb_cli cli;
    int rc = vb_cli_parse(argc, argv, &cli);
    if (rc >= 0)
        return rc;
    vb_progress_init(cli.quiet);
    switch (cli.command) {
    case VB_CMD_LIST_KERNELS: return finish_stdout(vb_cmd_list_kernels(&cli));
    case VB_CMD_REPORT: return finish_stdout(vb_cmd_report(&cli));
    case VB_CMD_COMPARE: return finish_stdout(vb_cmd_compare(&cli));
    case VB_CMD_MERGE: return finish_stdout(vb_cmd_merge(&cli));
    default: break;
    }
    vb_scenario_list list = {0};
    int bad = load_scenarios(&cli, &list);
    if (cli.command == VB_CMD_VALIDATE)
        rc = vb_cmd_validate(&cli, &list, bad);
    else if (cli.command == VB_CMD_EXPORT)
        rc = vb_cmd_export(&cli, &list, bad);
    else if (!list.count)
        rc = (fprintf(stderr, "verifybench: no scenario to run\n"), VB_EXIT_INPUT);
    else
        rc = run(&cli, &list, bad);
    vb_scenario_list_free(&list);
    return finish_stdout(rc);
}
