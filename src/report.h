/* Printers of the result model (table, markdown, CSV, JSON) and the JSON reader. */
#ifndef VB_REPORT_H
#define VB_REPORT_H

#include <stdio.h>

#include "cli.h"
#include "result.h"

void vb_report_table(FILE *f, const vb_results *r);
void vb_report_markdown(FILE *f, const vb_results *r);
void vb_report_csv(FILE *f, const vb_results *r);
int vb_report_json(FILE *f, const vb_results *r);
/* Writes r to path in the given format; prints why and returns -1 on failure. */
int vb_report_write(const char *path, vb_format fmt, const vb_results *r);
/* The files cli asks for (--json, --csv, --markdown); -1 when any write failed (each said why). */
int vb_report_write_files(const vb_cli *cli, const vb_results *r);
void vb_report_print(FILE *f, vb_format fmt, const vb_results *r);

/* NULL for a complete run; else what ended it early ("interrupted by SIGINT after 2 of 5
 * scenarios", or a checkpoint's count), written into buf. */
const char *vb_results_incomplete(const vb_results *r, char *buf, size_t n);
/* Reads a results file written by vb_report_json. 0, or -1 with why. */
int vb_results_read_json(const char *path, vb_results *r, char *why, size_t why_len);
/* The same from text in memory (the fuzz target's entry). */
int vb_results_parse(const char *text, vb_results *r, char *why, size_t why_len);

#endif
