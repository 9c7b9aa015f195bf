/* fastest: which kernel wins each shape, and which one kernel fits every shape. A record that
 * failed never wins however fast; a lead inside the two records' noise is not clear; eager
 * records count only when nothing was replayed; an untimed run has no answer. */
#include "vbtest.h"

#include <math.h>

#include "fastest.h"
#include "result.h"

static int scenario(vb_results *r, const char *name)
{
    vb_scenario_info s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "%s", name);
    s.valid = 1;
    return vb_results_add_scenario(r, &s);
}

/* A timed record with a ±spread p10-p90 around its median; median 0 leaves it untimed. */
static void record(vb_results *r, int s, const char *variant, const char *kernel, vb_mode mode, vb_status st,
                   double median, double spread)
{
    vb_record *rec = vb_results_add_record(r, s, variant, kernel, mode);
    rec->status = st;
    if (median > 0)
        rec->hot = (vb_timing){.samples = 20, .median_us = median, .p10_us = median - spread, .p90_us = median + spread};
}

static const vb_kernel_fit *fit(const vb_fastest *x, const char *kernel)
{
    for (int i = 0; i < x->n_kernels; i++)
        if (!strcmp(x->kernels[i].kernel, kernel))
            return &x->kernels[i];
    return NULL;
}

/* Three shapes, three kernels: "wide" wins two, "short" one; "wrong" is fastest everywhere but
 * fails one shape and is untimed on another. */
static void fill(vb_results *r)
{
    vb_results_init(r);
    const int a = scenario(r, "long"), b = scenario(r, "short");
    record(r, a, "base", "wide", VB_MODE_GRAPH, VB_PASS, 100, 1);
    record(r, a, "base", "short", VB_MODE_GRAPH, VB_PASS, 150, 1);
    record(r, a, "base", "wrong", VB_MODE_GRAPH, VB_FAIL, 50, 1);
    record(r, a, "base", "wide", VB_MODE_EAGER, VB_PASS, 1, 0.1); /* eager: not counted beside graph */
    record(r, b, "base", "wide", VB_MODE_GRAPH, VB_PASS, 20, 0.5);
    record(r, b, "base", "short", VB_MODE_GRAPH, VB_PASS, 10, 0.5);
    record(r, b, "base", "wrong", VB_MODE_GRAPH, VB_SKIPPED, 0, 0);
    record(r, b, "replay", "wide", VB_MODE_GRAPH, VB_PASS, 10, 2); /* a 2% lead inside ±2 µs of noise */
    record(r, b, "replay", "short", VB_MODE_GRAPH, VB_PASS, 10.2, 2);
    record(r, b, "replay", "wrong", VB_MODE_GRAPH, VB_PASS, 12, 0.1);
}

static void test_picks(void)
{
    vb_results r;
    fill(&r);
    vb_fastest x;
    CHECK(vb_fastest_find(&r, &x) == 0);
    CHECK(x.mode == VB_MODE_GRAPH && x.n_picks == 3);
    const vb_shape_pick *p = x.picks;
    CHECK(!strcmp(r.records[p[0].best].kernel, "wide") && !strcmp(r.records[p[0].runner_up].kernel, "short"));
    CHECK(p[0].clear); /* 150 against 100 */
    CHECK(!strcmp(r.records[p[1].best].kernel, "short") && p[1].clear);
    CHECK(!strcmp(p[2].variant, "replay") && !strcmp(r.records[p[2].best].kernel, "wide") && !p[2].clear);

    const vb_kernel_fit *wide = fit(&x, "wide"), *shrt = fit(&x, "short"), *wrong = fit(&x, "wrong");
    CHECK(wide && shrt && wrong);
    CHECK(wide->wins == 2 && wide->clear_wins == 1 && wide->shapes == 3);
    CHECK(fabs(wide->geomean - cbrt(2.0)) < 1e-12 && wide->worst == 2.0); /* 1, 2, 1 */
    CHECK(!strcmp(r.scenarios[x.picks[wide->worst_pick].scenario].name, "short"));
    CHECK(shrt->wins == 1 && shrt->shapes == 3 && fabs(shrt->geomean - cbrt(1.5 * 1.02)) < 1e-12);
    CHECK(wrong->wins == 0 && wrong->shapes == 1); /* passed and timed on the replay alone */
    CHECK(x.kernels[0].kernel == wide->kernel); /* most wins first */
    CHECK(x.one_for_all >= 0 && !strcmp(x.kernels[x.one_for_all].kernel, "short")); /* 1.15 against 1.26 */

    char buf[4096];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    vb_fastest_print_summary(f, &r, &x, "- ");
    vb_fastest_print_shapes(f, &r, &x);
    fclose(f);
    CHECK(strstr(buf, "- fastest by graph replay") && strstr(buf, "3 shapes"));
    CHECK(strstr(buf, "one kernel for every shape: short"));
    CHECK(strstr(buf, "| short | base | wide | 20.00 | short | 10.00 |") == NULL); /* the winner, not the loser */
    CHECK(strstr(buf, "| short | base | short | 10.00 | wide | 20.00 | x2.000 |"));
    CHECK(strstr(buf, "| short | replay | wide | 10.00 | short | 10.20 | x1.020, within the noise |"));
    vb_fastest_free(&x);
    vb_results_free(&r);
}

static void test_eager_and_untimed(void)
{
    vb_results r;
    vb_results_init(&r);
    const int a = scenario(&r, "a");
    record(&r, a, "base", "k1", VB_MODE_EAGER, VB_PASS, 0, 0);
    vb_fastest x;
    CHECK(vb_fastest_find(&r, &x) == 0 && x.n_picks == 0 && x.one_for_all < 0); /* untimed: no answer */
    char buf[256] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    vb_fastest_print_summary(f, &r, &x, "");
    fclose(f);
    CHECK(buf[0] == '\0');
    vb_fastest_free(&x);

    record(&r, a, "base", "k2", VB_MODE_EAGER, VB_PASS, 5, 0.1); /* eager only: eager answers */
    record(&r, a, "base", "k3", VB_MODE_GRAPH, VB_FAIL, 1, 0.1);  /* a failed replay is no answer */
    CHECK(vb_fastest_find(&r, &x) == 0 && x.mode == VB_MODE_EAGER && x.n_picks == 1);
    CHECK(x.picks[0].runner_up == -1 && !strcmp(r.records[x.picks[0].best].kernel, "k2"));
    CHECK(x.n_kernels == 1 && x.one_for_all == 0);
    vb_fastest_free(&x);
    vb_results_free(&r);
}

int main(void)
{
    test_picks();
    test_eager_and_untimed();
    TEST_MAIN_END();
}
