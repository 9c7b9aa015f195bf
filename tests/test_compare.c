/* compare: a planted slowdown beyond the noise is flagged, a noise-only difference is not,
 * a broken pass or a changed token verdict is a regression whatever the timing, records on
 * one side only are listed, runs on different GPUs are refused, every format parses; a kernel
 * pair compares two kernels of one run. */
#include "vbtest.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "compare.h"
#include "result.h"

/* A run with one scenario and the given kernels' graph records, each hot median with a
 * +-spread around it. */
static void run(vb_results *r, const char *gpu, int n, const char *const *kernels, const double *median,
                const double *spread)
{
    vb_results_init(r);
    snprintf(r->commit, sizeof r->commit, "c%d", n);
    r->gpu.present = 1;
    snprintf(r->gpu.name, sizeof r->gpu.name, "%s", gpu);
    snprintf(r->gpu.driver, sizeof r->gpu.driver, "580.159.04");
    vb_scenario_info s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "bs8-91k");
    snprintf(s.shape_key, sizeof s.shape_key, "bs8.T9.H8.key");
    s.valid = 1;
    int si = vb_results_add_scenario(r, &s);
    for (int k = 0; k < n; k++) {
        vb_record *rec = vb_results_add_record(r, si, "base", kernels[k], VB_MODE_GRAPH);
        rec->status = VB_PASS;
        rec->checks.ran = 1, rec->checks.requests = 8, rec->checks.paths_equal = 8;
        rec->hot.samples = 30, rec->hot.median_us = median[k];
        rec->hot.p10_us = median[k] - spread[k], rec->hot.p90_us = median[k] + spread[k];
    }
}

static const vb_compare_row *row_of(const vb_compare *c, const char *kernel)
{
    for (int i = 0; i < c->n_rows; i++) {
        const vb_record *r = c->rows[i].new_rec ? c->rows[i].new_rec : c->rows[i].old_rec;
        if (!strcmp(r->kernel, kernel))
            return &c->rows[i];
    }
    return NULL;
}

static void test_verdicts(void)
{
    static const char *const ks[] = {"slow", "noisy", "small", "same", "broken", "fixed", "tokens", "gone"};
    const double old_med[] = {100, 100, 100, 100, 100, 100, 100, 100};
    const double new_med[] = {130, 108, 103, 100.5, 100, 100, 100};
    const double tight[] = {2, 2, 1, 1, 1, 1, 1, 1}, wide[] = {2, 10, 1, 1, 1, 1, 1};
    vb_results o, n;
    run(&o, "NVIDIA H200", 8, ks, old_med, tight);
    run(&n, "NVIDIA H200", 7, ks, new_med, wide); /* "gone" is missing from the new run */
    n.records[4].status = VB_FAIL;               /* broken: passed before */
    o.records[5].status = VB_ERROR;              /* fixed: errored before */
    n.records[6].checks.paths_equal = 7;         /* tokens: one request's path changed */
    vb_record *extra = vb_results_add_record(&n, 0, "base", "brand_new", VB_MODE_GRAPH);
    extra->status = VB_PASS;
    vb_compare c;
    char why[320];
    CHECK(vb_compare_results(&o, &n, 0.05, 0, &c, why, sizeof why) == 0);
    CHECK(row_of(&c, "slow")->kind == VB_CMP_SLOWER);     /* +30%, noise 2 + 2 */
    CHECK(fabs(row_of(&c, "slow")->change - 0.30) < 1e-12 && row_of(&c, "slow")->noise_us == 4);
    CHECK(row_of(&c, "noisy")->kind == VB_CMP_SAME);      /* +8% but inside 2 + 10 us of noise */
    CHECK(row_of(&c, "small")->kind == VB_CMP_SAME);      /* beyond the noise, under 5% */
    CHECK(row_of(&c, "same")->kind == VB_CMP_SAME);
    CHECK(row_of(&c, "broken")->kind == VB_CMP_BROKEN);
    CHECK(row_of(&c, "fixed")->kind == VB_CMP_FIXED);
    CHECK(row_of(&c, "tokens")->kind == VB_CMP_TOKENS);
    CHECK(row_of(&c, "gone")->kind == VB_CMP_OLD_ONLY && row_of(&c, "brand_new")->kind == VB_CMP_NEW_ONLY);
    CHECK_MSG(c.regressions == 3, "%d regressions", c.regressions);
    /* The same slowdown at a 40% threshold is not one. */
    vb_compare loose;
    CHECK(vb_compare_results(&o, &n, 0.40, 0, &loose, why, sizeof why) == 0);
    CHECK(row_of(&loose, "slow")->kind == VB_CMP_SAME && loose.regressions == 2);
    vb_compare_free(&loose);
    int count;
    CHECK(fabs(vb_compare_geomean(&c, "slow", VB_MODE_GRAPH, &count) - 1.3) < 1e-12 && count == 1);
    CHECK(isnan(vb_compare_geomean(&c, "slow", VB_MODE_EAGER, &count)) && count == 0);

    /* Every format: JSON parses and says the same; markdown has the pull-request table. */
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    vb_compare_print(f, VB_FMT_JSON, &c, &o, &n);
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    CHECK(j && cJSON_GetObjectItem(j, "regressions")->valueint == 3);
    CHECK(j && cJSON_GetArraySize(cJSON_GetObjectItem(j, "records")) == c.n_rows);
    cJSON_Delete(j);
    free(buf);
    f = open_memstream(&buf, &len);
    vb_compare_print(f, VB_FMT_MARKDOWN, &c, &o, &n);
    fclose(f);
    CHECK(strstr(buf, "| bs8-91k | base | slow | graph | 100.0 | 130.0 | +30.0% | 4.0 | SLOWER |"));
    CHECK(strstr(buf, "| slow | - | 1.300 (1) |") && strstr(buf, "**3 regressions**"));
    free(buf);
    vb_compare_free(&c);
    vb_results_free(&o), vb_results_free(&n);
}

static void test_refuses_other_gpus(void)
{
    static const char *const ks[] = {"k"};
    const double m[] = {100}, s[] = {1};
    vb_results a, b;
    run(&a, "NVIDIA H200", 1, ks, m, s);
    run(&b, "NVIDIA H100 80GB HBM3", 1, ks, m, s);
    vb_compare c;
    char why[320] = "";
    CHECK(vb_compare_results(&a, &b, 0.05, 0, &c, why, sizeof why) == -1 && strstr(why, "different GPUs"));
    CHECK(vb_compare_results(&a, &b, 0.05, 1, &c, why, sizeof why) == 0 && c.regressions == 0);
    vb_compare_free(&c);
    snprintf(b.gpu.name, sizeof b.gpu.name, "NVIDIA H200");
    snprintf(b.gpu.driver, sizeof b.gpu.driver, "575.51.03");
    CHECK(vb_compare_results(&a, &b, 0.05, 0, &c, why, sizeof why) == -1 && strstr(why, "different drivers"));
    vb_results_free(&a), vb_results_free(&b);
}

/* A phase-stamps build's times are not the kernels': compared only with another such build, and
 * no option lets it through. */
static void test_refuses_stamps_against_plain(void)
{
    static const char *const ks[] = {"k"};
    const double m[] = {100}, s[] = {1};
    vb_results a, b;
    run(&a, "NVIDIA H200", 1, ks, m, s);
    run(&b, "NVIDIA H200", 1, ks, m, s);
    b.phase_stamps = 1;
    vb_compare c;
    char why[320] = "";
    CHECK(vb_compare_results(&a, &b, 0.05, 1, &c, why, sizeof why) == -1 && strstr(why, "the new run was built with "
                                                                                       "-Dphase_stamps=true"));
    a.phase_stamps = 1;
    CHECK(vb_compare_results(&a, &b, 0.05, 0, &c, why, sizeof why) == 0 && c.regressions == 0);
    vb_compare_free(&c);
    vb_results_free(&a), vb_results_free(&b);
}

/* --kernel-pair: one run's kernel b against its kernel a, record by record; other kernels left
 * out; a name with no records refused. */
static void test_kernel_pair(void)
{
    static const char *const ks[] = {"a", "b", "c"};
    const double m[] = {100, 140, 50}, s[] = {1, 1, 1};
    vb_results r;
    run(&r, "NVIDIA H200", 3, ks, m, s);
    vb_compare c;
    char why[320] = "";
    CHECK(vb_compare_kernels(&r, &r, 0.05, 0, "a", "b", &c, why, sizeof why) == 0);
    CHECK(c.n_rows == 1 && c.rows[0].kind == VB_CMP_SLOWER && fabs(c.rows[0].change - 0.40) < 1e-12);
    CHECK(!strcmp(c.rows[0].old_rec->kernel, "a") && !strcmp(c.rows[0].new_rec->kernel, "b") && c.regressions == 1);
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    vb_compare_print(f, VB_FMT_TABLE, &c, &r, &r);
    fclose(f);
    CHECK(strstr(buf, "kernels: b (new) against a (old)") != NULL);
    free(buf);
    vb_compare_free(&c);
    CHECK(vb_compare_kernels(&r, &r, 0.05, 0, "b", "a", &c, why, sizeof why) == 0);
    CHECK(c.n_rows == 1 && c.rows[0].kind == VB_CMP_FASTER && c.regressions == 0);
    vb_compare_free(&c);
    CHECK(vb_compare_kernels(&r, &r, 0.05, 0, "a", "zz", &c, why, sizeof why) == -1 &&
          strstr(why, "the new run has no records of kernel 'zz'"));
    vb_results_free(&r);
}

int main(void)
{
    test_verdicts();
    test_refuses_other_gpus();
    test_refuses_stamps_against_plain();
    test_kernel_pair();
    TEST_MAIN_END();
}
