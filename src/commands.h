/* The sub-commands other than the main run. */
#ifndef VB_COMMANDS_H
#define VB_COMMANDS_H

#include "cli.h"
#include "scenario.h"

int vb_cmd_list_kernels(const vb_cli *cli);
int vb_cmd_validate(const vb_cli *cli, const vb_scenario_list *list, int bad_input);
int vb_cmd_report(const vb_cli *cli);
int vb_cmd_export(const vb_cli *cli, const vb_scenario_list *list, int bad_input);
int vb_cmd_compare(const vb_cli *cli);
int vb_cmd_merge(const vb_cli *cli);

#endif
