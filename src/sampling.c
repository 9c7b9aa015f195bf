#include "sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* p10, median and p90 of sorted samples, by the same indices everywhere. */
static void quantiles(const float *sorted, int n, double *p10, double *med, double *p90)
{
    *p10 = sorted[(n - 1) / 10];
    *med = sorted[n / 2];
    *p90 = sorted[(n - 1) - (n - 1) / 10];
}

double vb_sampling_noise(const float *samples, int n)
{
    if (n < 1)
        return INFINITY;
    float *s = malloc(sizeof *s * (size_t)n);
    if (!s)
        return INFINITY;
    memcpy(s, samples, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_float);
    double p10, med, p90;
    quantiles(s, n, &p10, &med, &p90);
    free(s);
    return med > 0 ? (p90 - p10) / 2 / med : INFINITY;
}

static int min_samples(const vb_timing_spec *ts)
{
    int lo = ts->min_samples < 3 ? 3 : ts->min_samples;
    return lo < ts->iterations ? lo : ts->iterations;
}

int vb_sampling_enough(const vb_timing_spec *ts, const float *samples_ms, int n, double total_ms)
{
    if (n >= ts->iterations)
        return 1;
    if (n >= 3 && total_ms >= ts->max_time_ms)
        return 1;
    return n >= min_samples(ts) && vb_sampling_noise(samples_ms, n) <= ts->noise;
}

int vb_sampling_next_batch(const vb_timing_spec *ts, int n, double total_ms, int batch)
{
    int want = n < 3 ? 3 - n : batch;
    if (n >= 3) {
        const double left = ts->max_time_ms - total_ms, per = total_ms / n;
        const double fit = per > 0 ? left / per : batch;
        want = fit < want ? (fit > 0 ? (int)fit : 0) : want;
    }
    return want < ts->iterations - n ? want : ts->iterations - n;
}

void vb_sampling_summarise(float *samples_ms, int n, vb_timing *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1)
        return;
    qsort(samples_ms, (size_t)n, sizeof *samples_ms, cmp_float);
    double p10, med, p90;
    quantiles(samples_ms, n, &p10, &med, &p90);
    out->samples = n;
    out->median_us = 1e3 * med;
    out->p10_us = 1e3 * p10;
    out->p90_us = 1e3 * p90;
}
