/* Runs of one build on one kind of GPU that split the kernels between them (to fit a time
 * limit, say), joined into one results file: the same scenarios, each record from the run
 * that measured it. Every record keeps its own run's shares and floor; the merged file lists
 * each run's date and ceilings (vb_results.parts), and the reports say it was merged. */
#ifndef VB_MERGE_H
#define VB_MERGE_H

#include <stddef.h>

#include "result.h"

/* Adds part's records to into, after checking that the two can be one result: both whole runs,
 * one build (version and commit), one kind of GPU (name, compute capability, SMs, driver), the
 * same scenarios (names, shape keys, validity, bytes and flops), and no record (scenario,
 * variant, kernel, mode) in both. into_path and part_path name the files in why. Returns 0, or
 * -1 with why set and into unchanged. */
int vb_results_merge(vb_results *into, const char *into_path, const vb_results *part, const char *part_path,
                     char *why, size_t n);

#endif
