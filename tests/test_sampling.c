/* The sampling policy: the noise statistic, when a measurement stops (noise target after the
 * minimum, the sample cap, the time cap) and how the batches fit the time cap. */
#include "vbtest.h"

#include <math.h>

#include "sampling.h"

static vb_timing_spec spec(int min, int max, double noise, double cap_ms)
{
    vb_timing_spec t = {.warmup = 0, .iterations = max, .min_samples = min, .noise = noise, .max_time_ms = cap_ms};
    return t;
}

static void test_noise_and_summary(void)
{
    float flat[5] = {2, 2, 2, 2, 2};
    CHECK(vb_sampling_noise(flat, 5) == 0);
    /* 10 samples 100..109: p10 = 100, median = 105, p90 = 109 -> (109 - 100) / 2 / 105. */
    float s[10] = {109, 100, 101, 102, 103, 104, 105, 106, 107, 108};
    CHECK(fabs(vb_sampling_noise(s, 10) - 9.0 / 2 / 105) < 1e-12);
    CHECK(s[0] == 109); /* the noise leaves the samples as they are */
    vb_timing t;
    vb_sampling_summarise(s, 10, &t);
    CHECK(t.samples == 10 && t.median_us == 105e3 && t.p10_us == 100e3 && t.p90_us == 109e3);
    CHECK(isinf(vb_sampling_noise(s, 0)));
}

static void test_stopping(void)
{
    float quiet[30], loud[30];
    for (int i = 0; i < 30; i++)
        quiet[i] = 1.0f + 0.001f * (float)(i % 3), loud[i] = (float)(1 + i % 2); /* ~0.1% and 50% noise */
    vb_timing_spec t = spec(10, 30, 0.02, 1e9);
    CHECK(!vb_sampling_enough(&t, quiet, 9, 9));  /* quiet, but fewer than min_samples */
    CHECK(vb_sampling_enough(&t, quiet, 10, 10)); /* quiet at min_samples: done */
    CHECK(!vb_sampling_enough(&t, loud, 29, 44)); /* noisy: keeps going ... */
    CHECK(vb_sampling_enough(&t, loud, 30, 45));  /* ... up to the sample cap */
    vb_timing_spec capped = spec(10, 30, 0.02, 40.0);
    CHECK(!vb_sampling_enough(&capped, loud, 2, 100)); /* never fewer than 3 samples */
    CHECK(vb_sampling_enough(&capped, loud, 3, 40.0)); /* the time cap */
    vb_timing_spec few = spec(10, 2, 0.02, 1e9);     /* --iterations 2 caps min_samples too */
    CHECK(vb_sampling_next_batch(&few, 0, 0, 10) == 2 && vb_sampling_enough(&few, loud, 2, 3));
}

static void test_batches(void)
{
    vb_timing_spec t = spec(10, 30, 0.02, 2000.0);
    CHECK(vb_sampling_next_batch(&t, 0, 0, 10) == 3);          /* the first three at once */
    CHECK(vb_sampling_next_batch(&t, 3, 300.0, 10) == 10);     /* 100 ms each: 17 fit, batch 10 */
    CHECK(vb_sampling_next_batch(&t, 13, 1800.0, 10) == 1);    /* 200 ms left: one more */
    CHECK(vb_sampling_next_batch(&t, 3, 2000.0, 10) == 0);     /* the cap is spent */
    CHECK(vb_sampling_next_batch(&t, 25, 25.0, 10) == 5);      /* never past the sample cap */
}

int main(void)
{
    test_noise_and_summary();
    test_stopping();
    test_batches();
    TEST_MAIN_END();
}
