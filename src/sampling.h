/* The sampling policy every timed run shares, apart from how samples are taken (events on a
 * GPU stream, in gpu_timing.c): when to stop, and what a set of samples says.
 *
 * A measurement takes at least min_samples (3 if fewer), then stops as soon as the samples'
 * relative noise, (p90 - p10) / 2 / median, is at or under the target; it always stops at
 * max_samples, and once the samples add up to max_time_ms (with at least 3). */
#ifndef VB_SAMPLING_H
#define VB_SAMPLING_H

#include "result.h"
#include "scenario.h"

/* Relative noise of n samples (milliseconds or any unit): (p90 - p10) / 2 / median. */
double vb_sampling_noise(const float *samples, int n);
/* 1 when a measurement with these n samples (summing to total_ms) is done. */
int vb_sampling_enough(const vb_timing_spec *ts, const float *samples_ms, int n, double total_ms);
/* How many samples to take next: the first 3 at once, then batches of at most `batch` that
 * fit in what is left of the time cap at the mean so far; 0 when done by the cap alone. */
int vb_sampling_next_batch(const vb_timing_spec *ts, int n, double total_ms, int batch);
/* samples (milliseconds, reordered in place) into median, p10, p90 (microseconds) and count. */
void vb_sampling_summarise(float *samples_ms, int n, vb_timing *out);

#endif
