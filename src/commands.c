#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "report.h"
#include "verify_attn.h"

static void print_kernels(const vb_kernel *const *k, size_t n, const char *tag)
{
    for (size_t i = 0; i < n; i++)
        printf("%-16s sm_%-3d %-4s %s%s\n", k[i]->name, k[i]->min_cc, k[i]->writes_lse ? "yes" : "no",
               k[i]->description, tag);
}

int vb_cmd_list_kernels(const vb_cli *cli)
{
    printf("%-16s %-6s %-4s %s\n", "kernel", "min", "lse", "description");
    print_kernels(vb_kernels, vb_kernel_count, "");
    if (cli->all_kernels)
        print_kernels(vb_test_kernels, vb_test_kernel_count, " [test only: runs when named]");
    return VB_EXIT_OK;
}

int vb_cmd_validate(const vb_scenario_list *list, int bad_input)
{
    for (int i = 0; i < list->count; i++) {
        const vb_scenario *s = &list->items[i];
        printf("ok  %-48s bs %d, prefix %s, tree %s, page %d %s, graph %s bucket %d, %d replays\n", s->name,
               s->base.batch, s->base.prefix_label, s->base.tree.label, s->base.page_size,
               vb_layout_name(s->base.layout), s->graph_enabled ? "on" : "off", s->bucket, s->n_replays);
    }
    printf("%d scenarios valid%s\n", list->count, bad_input ? "; some input was rejected (see above)" : "");
    return bad_input ? VB_EXIT_INPUT : VB_EXIT_OK;
}

int vb_cmd_report(const vb_cli *cli)
{
    vb_results r;
    char why[200];
    if (vb_results_read_json(cli->files[0], &r, why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", cli->files[0], why);
        return VB_EXIT_INPUT;
    }
    vb_report_print(stdout, cli->format, &r);
    int rc = VB_EXIT_OK;
    if (cli->csv_path)
        rc |= vb_report_write(cli->csv_path, VB_FMT_CSV, &r) ? VB_EXIT_INPUT : 0;
    if (cli->markdown_path)
        rc |= vb_report_write(cli->markdown_path, VB_FMT_MARKDOWN, &r) ? VB_EXIT_INPUT : 0;
    if (cli->json_path)
        rc |= vb_report_write(cli->json_path, VB_FMT_JSON, &r) ? VB_EXIT_INPUT : 0;
    vb_results_free(&r);
    return rc;
}

int vb_cmd_export(const vb_cli *cli, const vb_scenario_list *list, int bad_input)
{
    (void)cli, (void)list, (void)bad_input;
    fprintf(stderr, "verifybench: export: not implemented yet\n");
    return VB_EXIT_INPUT;
}
