#include "commands.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "compare.h"
#include "fileutil.h"
#include "inputs.h"
#include "merge.h"
#include "bundle.h"
#include "prepare.h"
#include "progress.h"
#include "report.h"
#include "verify_attn.h"

static void print_kernels(const vb_kernel *const *k, size_t n, const char *tag)
{
    for (size_t i = 0; i < n; i++)
        printf("%-16s sm_%-3d %-4s %s%s\n", k[i]->name, k[i]->min_cc, k[i]->writes_lse ? "yes" : "no",
               k[i]->description, tag);
}

static void add_kernels(cJSON *arr, const vb_kernel *const *k, size_t n, int test_only)
{
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", k[i]->name);
        cJSON_AddStringToObject(o, "description", k[i]->description);
        cJSON_AddNumberToObject(o, "min_sm", k[i]->min_cc);
        cJSON_AddBoolToObject(o, "writes_lse", k[i]->writes_lse);
        cJSON_AddBoolToObject(o, "test_only", test_only);
        cJSON_AddItemToArray(arr, o);
    }
}

/* A JSON document to stdout, then freed. */
static void print_json(cJSON *root)
{
    char *text = cJSON_Print(root);
    if (text)
        printf("%s\n", text);
    free(text);
    cJSON_Delete(root);
}

int vb_cmd_list_kernels(const vb_cli *cli)
{
    if (cli->format == VB_FMT_JSON) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "schema", "verifybench.kernels/1");
        cJSON *arr = cJSON_AddArrayToObject(root, "kernels");
        add_kernels(arr, vb_kernels, vb_kernel_count, 0);
        if (cli->all_kernels)
            add_kernels(arr, vb_test_kernels, vb_test_kernel_count, 1);
        print_json(root);
        return VB_EXIT_OK;
    }
    printf("%-16s %-6s %-4s %s\n", "kernel", "min", "lse", "description");
    print_kernels(vb_kernels, vb_kernel_count, "");
    if (cli->all_kernels)
        print_kernels(vb_test_kernels, vb_test_kernel_count, " [test only: runs when named]");
    return VB_EXIT_OK;
}

static cJSON *scenario_summary(const vb_scenario *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "file", s->file);
    cJSON_AddNumberToObject(o, "batch", s->base.batch);
    cJSON_AddStringToObject(o, "prefix_len", s->base.prefix_label);
    cJSON_AddStringToObject(o, "tree", s->base.tree.label);
    cJSON_AddNumberToObject(o, "heads", s->heads);
    cJSON_AddNumberToObject(o, "page_size", s->base.page_size);
    cJSON_AddStringToObject(o, "layout", vb_layout_name(s->base.layout));
    cJSON_AddBoolToObject(o, "graph", s->graph_enabled);
    cJSON_AddNumberToObject(o, "bucket", s->bucket);
    cJSON_AddNumberToObject(o, "replays", s->n_replays);
    return o;
}

int vb_cmd_validate(const vb_cli *cli, const vb_scenario_list *list, int bad_input)
{
    const int json = cli->format == VB_FMT_JSON;
    cJSON *root = json ? cJSON_CreateObject() : NULL, *arr = NULL;
    if (json) {
        cJSON_AddStringToObject(root, "schema", "verifybench.validate/1");
        arr = cJSON_AddArrayToObject(root, "scenarios");
    }
    int valid = 0;
    for (int i = 0; i < list->count; i++) {
        const vb_scenario *s = &list->items[i];
        char why[300];
        int fits = 1;
        for (int v = 0; v <= s->n_replays && fits; v++)
            if (vb_instance_check(s, v ? &s->replays[v - 1] : &s->base, s->graph_enabled ? s->bucket : 0, why,
                                  sizeof why)) {
                fprintf(stderr, "%s: %s%s%s\n", s->file, v ? s->replays[v - 1].name : "", v ? ": " : "", why);
                fits = 0;
            }
        if (!fits) {
            bad_input = 1;
            continue;
        }
        valid++;
        if (json)
            cJSON_AddItemToArray(arr, scenario_summary(s));
        else
            printf("ok  %-48s bs %d, prefix %s, tree %s, page %d %s, graph %s bucket %d, %d replays\n", s->name,
                   s->base.batch, s->base.prefix_label, s->base.tree.label, s->base.page_size,
                   vb_layout_name(s->base.layout), s->graph_enabled ? "on" : "off", s->bucket, s->n_replays);
    }
    if (json) { /* the rejected input's reasons went to stderr as they were found */
        cJSON_AddNumberToObject(root, "valid", valid);
        cJSON_AddBoolToObject(root, "rejected_input", bad_input);
        print_json(root);
    } else {
        printf("%d scenarios valid%s\n", valid, bad_input ? "; some input was rejected (see above)" : "");
    }
    return bad_input ? VB_EXIT_INPUT : VB_EXIT_OK;
}

int vb_cmd_report(const vb_cli *cli)
{
    vb_results r;
    vb_baseline b[VB_MAX_BASELINES];
    char why[200];
    if (vb_results_read_json(cli->files[0], &r, why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", cli->files[0], why);
        return VB_EXIT_INPUT;
    }
    if (vb_baselines_read(cli, b)) {
        vb_results_free(&r);
        return VB_EXIT_INPUT;
    }
    vb_report_print(stdout, cli->format, &r);
    int rc = vb_report_write_files(cli, &r) ? VB_EXIT_INPUT : VB_EXIT_OK;
    if (cli->n_baselines)
        rc |= vb_speedup_outputs(cli, &r, b, cli->n_baselines) ? VB_EXIT_INPUT : 0;
    vb_baselines_free(b, cli->n_baselines);
    vb_results_free(&r);
    return rc;
}

/* Two results files into a verdict: 0 nothing regressed, 1 a regression, 2 bad input. */
int vb_cmd_compare(const vb_cli *cli)
{
    vb_results old_r, new_r;
    vb_compare c;
    char why[320];
    if (vb_results_read_json(cli->files[0], &old_r, why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", cli->files[0], why);
        return VB_EXIT_INPUT;
    }
    if (vb_results_read_json(cli->files[1], &new_r, why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", cli->files[1], why);
        vb_results_free(&old_r);
        return VB_EXIT_INPUT;
    }
    int rc = VB_EXIT_INPUT;
    char what[128];
    const char *cut = NULL, *cut_file = NULL;
    for (int i = 0; i < 2 && !cut; i++) {
        cut = vb_results_incomplete(i ? &new_r : &old_r, what, sizeof what);
        cut_file = cli->files[i];
    }
    if (cut) {
        /* Records a cut run never reached would read as removed, not as regressions. */
        fprintf(stderr, "%s: complete: false (%s): compare needs whole runs\n", cut_file, cut);
    } else if (vb_compare_kernels(&old_r, &new_r, cli->threshold, cli->allow_different_gpu,
                                  cli->pair_old[0] ? cli->pair_old : NULL, cli->pair_new[0] ? cli->pair_new : NULL, &c,
                                  why, sizeof why)) {
        fprintf(stderr, "verifybench: compare %s %s: %s\n", cli->files[0], cli->files[1], why);
    } else {
        vb_compare_print(stdout, cli->format, &c, &old_r, &new_r);
        rc = c.regressions ? VB_EXIT_FAIL : VB_EXIT_OK;
        const char *paths[2] = {cli->markdown_path, cli->json_path};
        const vb_format fmts[2] = {VB_FMT_MARKDOWN, VB_FMT_JSON};
        for (int i = 0; i < 2; i++) {
            vb_output out;
            char err[1200];
            if (!paths[i])
                continue;
            if (vb_output_open(&out, paths[i], err, sizeof err) == 0) {
                vb_compare_print(out.f, fmts[i], &c, &old_r, &new_r);
                if (vb_output_close(&out, err, sizeof err) == 0)
                    continue;
            }
            fprintf(stderr, "verifybench: %s\n", err);
            rc = vb_exit_worst(rc, VB_EXIT_INPUT);
        }
        vb_compare_free(&c);
    }
    vb_results_free(&old_r);
    vb_results_free(&new_r);
    return rc;
}

/* Results files of one build that split the kernels into one (merge.c): --json OUT, and --csv
 * or --markdown if asked; stdout gets one line saying what was joined. */
int vb_cmd_merge(const vb_cli *cli)
{
    vb_results merged, part;
    char why[600];
    if (vb_results_read_json(cli->files[0], &merged, why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", cli->files[0], why);
        return VB_EXIT_INPUT;
    }
    int rc = VB_EXIT_OK;
    for (int i = 1; i < cli->n_files && rc == VB_EXIT_OK; i++) {
        if (vb_results_read_json(cli->files[i], &part, why, sizeof why)) {
            fprintf(stderr, "%s: %s\n", cli->files[i], why);
            rc = VB_EXIT_INPUT;
            continue;
        }
        if (vb_results_merge(&merged, cli->files[0], &part, cli->files[i], why, sizeof why)) {
            fprintf(stderr, "verifybench: merge: %s\n", why);
            rc = VB_EXIT_INPUT;
        }
        vb_results_free(&part);
    }
    if (rc == VB_EXIT_OK && vb_report_write_files(cli, &merged))
        rc = VB_EXIT_INPUT;
    if (rc == VB_EXIT_OK)
        printf("merged %d runs: %d scenarios, %d records into %s\n", merged.n_parts, merged.n_scenarios,
               merged.n_records, cli->json_path);
    vb_results_free(&merged);
    return rc;
}

/* Bundles are built on the host (the same bits the GPU generator gives) for the live batch. */
int vb_cmd_export(const vb_cli *cli, const vb_scenario_list *list, int bad_input)
{
    int rc = bad_input ? VB_EXIT_INPUT : VB_EXIT_OK;
    for (int i = 0; i < list->count; i++) {
        const vb_scenario *s = &list->items[i];
        vb_prepared p;
        char why[320], sub[VB_NAME_MAX + 8];
        vb_progress(i, list->count, s->name, "export");
        if (vb_prepare(s, &s->base, 0, NULL, 0, cli->threads, &p, why, sizeof why) ||
            (vb_bundle_write(cli->out_dir, s, &p, why, sizeof why) && (vb_prepared_free(&p), 1))) {
            vb_progress_done();
            fprintf(stderr, "%s: %s: %s\n", s->file, s->name, why);
            rc = VB_EXIT_INPUT;
            continue;
        }
        vb_bundle_dirname(s->name, sub, sizeof sub);
        double mib = (double)(p.in.num_slots * p.in.d_qk * 2 + p.in.mask_bytes) / 1048576.0;
        vb_progress_done();
        printf("%s -> %s/%s (%.1f MiB)\n", s->name, cli->out_dir, sub, mib);
        vb_prepared_free(&p);
    }
    return rc;
}
