/* libFuzzer target: the results reader (first byte 'r') and the Triton dump reader (anything
 * else) on arbitrary text, and the writers on whatever a reader accepted: no crash, leak,
 * out-of-bounds access or undefined behaviour (1e300 cast to int was one). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    char why[320];
    if (data[0] == 'r') {
        vb_results r;
        if (vb_results_parse(text, &r, why, sizeof why) == 0) {
            FILE *sink = fopen("/dev/null", "w");
            if (sink) {
                vb_report_print(sink, VB_FMT_JSON, &r);
                vb_report_print(sink, VB_FMT_CSV, &r);
                vb_report_print(sink, VB_FMT_TABLE, &r);
                fclose(sink);
            }
            vb_results_free(&r);
        }
    } else {
        vb_baseline b;
        if (vb_baseline_parse(text, &b, why, sizeof why) == 0)
            vb_baseline_free(&b);
    }
    free(text);
    return 0;
}
