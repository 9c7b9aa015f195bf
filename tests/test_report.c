/* Reports: the JSON written is read back into the same model; CSV and markdown carry every
 * record; empty timings stay empty (null) until a GPU fills them. */
#include "vbtest.h"

#include <math.h>

#include "report.h"
#include "result.h"

static void fill(vb_results *r)
{
    vb_results_init(r);
    snprintf(r->version, sizeof r->version, "0.1.0");
    snprintf(r->commit, sizeof r->commit, "abc123");
    snprintf(r->date, sizeof r->date, "2026-11-29T00:00:00Z");
    r->cpus = 16;
    r->gpu.present = 1;
    snprintf(r->gpu.name, sizeof r->gpu.name, "NVIDIA H200");
    r->gpu.cc_major = 9, r->gpu.sms = 132, r->gpu.read_gbps = 4400, r->gpu.mma_tflops = 640, r->gpu.wgmma_tflops = 780;
    vb_scenario_info s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "bs8-200k");
    snprintf(s.tree, sizeof s.tree, "ddtree9");
    s.valid = 1, s.batch = 8, s.draft = 9, s.heads = 8, s.d_qk = 576, s.d_v = 512, s.bytes = 1.8e9, s.flops = 1e12;
    s.pmax_median = 0.11, s.accepted_mean = 1.5;
    int i = vb_results_add_scenario(r, &s);
    snprintf(s.name, sizeof s.name, "broken");
    s.valid = 0;
    snprintf(s.message, sizeof s.message, "batch: too big");
    vb_results_add_scenario(r, &s);
    vb_record *a = vb_results_add_record(r, i, "base", "flash_paged", VB_MODE_EAGER);
    a->status = VB_PASS;
    a->checks.ran = 1, a->checks.max_err_ratio = 0.43, a->checks.requests = 8, a->checks.paths_equal = 8;
    a->checks.near_ties = 2, a->checks.worst[2] = 5, a->checks.lse_max_err = 1e-5;
    a->hot = (vb_timing){.samples = 30, .median_us = 1234.5, .p10_us = 1200.0, .p90_us = 1300.0, .gbps = 1500.0,
                         .tflops = 0.8, .bw_share = 0.34, .mma_share = 0.001};
    vb_timing_set_floor(&a->hot); /* bandwidth-bound: floor 1234.5 · 0.34 = 419.73 us */
    vb_record *b = vb_results_add_record(r, i, "ragged", "naive_gpu", VB_MODE_GRAPH);
    b->status = VB_FAIL;
    snprintf(b->message, sizeof b->message, "12 elements beyond tolerance, \"quoted\"");
}

static void test_json_round_trip(void)
{
    vb_results r, back;
    fill(&r);
    char path[] = "/tmp/vb_report_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    CHECK(vb_report_json(f, &r) == 0);
    fclose(f);
    char why[200];
    CHECK(vb_results_read_json(path, &back, why, sizeof why) == 0);
    CHECK(back.n_scenarios == 2 && back.n_records == 2);
    CHECK(!strcmp(back.commit, "abc123") && !strcmp(back.gpu.name, "NVIDIA H200") && back.gpu.cc_major == 9);
    CHECK(back.phase_stamps == 0);
    CHECK(back.gpu.read_gbps == 4400 && back.gpu.wgmma_tflops == 780 && back.cpus == 16);
    CHECK(!strcmp(back.scenarios[0].tree, "ddtree9") && back.scenarios[0].d_qk == 576 && back.scenarios[0].valid);
    CHECK(!back.scenarios[1].valid && !strcmp(back.scenarios[1].message, "batch: too big"));
    const vb_record *a = &back.records[0], *b = &back.records[1];
    CHECK(!strcmp(a->kernel, "flash_paged") && a->mode == VB_MODE_EAGER && a->status == VB_PASS);
    CHECK(a->checks.ran && a->checks.max_err_ratio == 0.43 && a->checks.near_ties == 2 && a->checks.worst[2] == 5);
    CHECK(a->hot.samples == 30 && a->hot.median_us == 1234.5 && a->hot.p90_us == 1300.0 && a->hot.bw_share == 0.34);
    CHECK(fabs(a->hot.floor_us - 419.73) < 1e-9 && fabs(a->hot.floor_ratio - 1 / 0.34) < 1e-12);
    /* A file without wgmma_share (written before it existed) gets it from the ceiling on load. */
    CHECK(fabs(a->hot.wgmma_share - 0.8 / 780) < 1e-15);
    CHECK(a->cold.samples == 0 && a->cold.floor_ratio == 0);
    CHECK(b->status == VB_FAIL && !strcmp(b->variant, "ragged") && strstr(b->message, "\"quoted\""));
    CHECK(!b->checks.ran && b->hot.samples == 0);
    vb_results_free(&back);
    /* A phase-stamps build's run says so in the file, and reads back so. */
    r.phase_stamps = 1;
    f = fopen(path, "w");
    CHECK(f && vb_report_json(f, &r) == 0);
    fclose(f);
    CHECK(vb_results_read_json(path, &back, why, sizeof why) == 0 && back.phase_stamps == 1);
    vb_results_free(&back);
    /* Unmeasured timings are null in the file, not zero. */
    f = fopen(path, "r");
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    CHECK(strstr(buf, "\"median_us\":\tnull") != NULL && strstr(buf, "\"schema\":\t\"verifybench.results/1\""));
    remove(path);
    /* Not a results file. */
    f = fopen(path, "w");
    fputs("{\"schema\": \"other\"}", f);
    fclose(f);
    CHECK(vb_results_read_json(path, &back, why, sizeof why) == -1 && strstr(why, "not a verifybench.results/1"));
    remove(path);
    vb_results_free(&r);
}

/* The reader checks every value's type and range, and names where it found one it rejects. */
static void expect_unreadable(const char *body, const char *want)
{
    char path[] = "/tmp/vb_report_bad_XXXXXX", why[320] = "";
    FILE *f = fdopen(mkstemp(path), "w");
    fprintf(f, "{\"schema\": \"verifybench.results/1\", %s}", body);
    fclose(f);
    vb_results back;
    CHECK_MSG(vb_results_read_json(path, &back, why, sizeof why) == -1 && strstr(why, want), "%s: got '%s'", body, why);
    remove(path);
}

static void test_strict_reader(void)
{
    /* The header's integers too: a double past int's range was converted as it stood
     * (undefined behaviour), until the readers' fuzzer gave host_cpus = 2539375241871. */
    expect_unreadable("\"host_cpus\": 2539375241871, \"scenarios\": []",
                      "host_cpus: expected an integer in [-2147483648, 2147483647], got 2.53938e+12");
    expect_unreadable("\"scenarios_planned\": 1.5, \"scenarios\": []", "scenarios_planned: expected an integer");
    expect_unreadable("\"gpu\": {\"sms\": -1e10}, \"scenarios\": []", "gpu.sms: expected an integer");
    expect_unreadable("\"gpu\": {\"memory_bytes\": 1e30}, \"scenarios\": []", "gpu.memory_bytes: expected an integer");
    expect_unreadable("\"gpu\": {\"driver_version\": \"13.0\"}, \"scenarios\": []",
                      "gpu.driver_version: expected a number");
    expect_unreadable("\"gpu\": 7, \"scenarios\": []", "gpu: expected an object");
    expect_unreadable("\"scenarios\": \"all of them\"", "scenarios: expected an array");
    expect_unreadable("\"scenarios\": [3]", "scenarios[0]: expected an object");
    expect_unreadable("\"scenarios\": [{\"name\": 5}]", "scenarios[0].name: expected a string");
    expect_unreadable("\"scenarios\": [{\"shape\": {\"batch\": 1e300}}]",
                      "scenarios[0].shape.batch: expected an integer in [-2147483648, 2147483647], got 1e+300");
    expect_unreadable("\"scenarios\": [{\"records\": [{\"mode\": \"graph\", \"status\": \"pass\", "
                      "\"timing\": {\"hot\": {\"samples\": 2.5}}}]}]",
                      "scenarios[0].records[0].timing.hot.samples: expected an integer");
    expect_unreadable("\"scenarios\": [{\"records\": [{\"mode\": \"graph\", \"status\": \"pass\", "
                      "\"timing\": {\"hot\": {\"median_us\": \"fast\"}}}]}]",
                      "scenarios[0].records[0].timing.hot.median_us: expected a number");
    expect_unreadable("\"scenarios\": [{\"records\": [{\"mode\": \"warp\", \"status\": \"pass\"}]}]",
                      "scenarios[0].records[0]: unknown mode 'warp'");
    expect_unreadable("\"scenarios\": [{\"records\": [{\"mode\": \"cpu\", \"status\": \"pass\", "
                      "\"checks\": {\"worst_index\": [1, 2, \"x\", 4]}}]}]",
                      "scenarios[0].records[0].checks.worst_index[2]: expected a number");
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The floor takes the fastest tensor ceiling the device measured: on sm_90 wgmma's, whose share
 * of the same flops is the smaller; elsewhere mma.sync's. */
static void test_floor(void)
{
    vb_timing t = {.samples = 10, .median_us = 200.0, .bw_share = 0.05, .mma_share = 0.5, .wgmma_share = 0.34};
    vb_timing_set_floor(&t);
    CHECK(fabs(t.floor_us - 68.0) < 1e-9 && fabs(t.floor_ratio - 1 / 0.34) < 1e-12);
    t.wgmma_share = 0; /* no wgmma ceiling (not Hopper) */
    vb_timing_set_floor(&t);
    CHECK(fabs(t.floor_us - 100.0) < 1e-9);
    t.bw_share = 0.9, t.wgmma_share = 0.34; /* bandwidth-bound whatever the tensor shares */
    vb_timing_set_floor(&t);
    CHECK(fabs(t.floor_us - 180.0) < 1e-9);
    t = (vb_timing){.samples = 10, .median_us = 200.0}; /* no ceiling measured: no floor */
    vb_timing_set_floor(&t);
    CHECK(t.floor_us == 0 && t.floor_ratio == 0);
}

static void test_text_formats(void)
{
    vb_results r;
    fill(&r);
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    vb_report_csv(f, &r);
    fclose(f);
    CHECK(count_lines(buf) == 3 && !strncmp(buf, "scenario,variant,kernel,mode,status", 35));
    CHECK(strstr(buf, "\"12 elements beyond tolerance, \"\"quoted\"\"\"") != NULL); /* CSV quoting */
    CHECK(strstr(buf, ",30,1234.5,1200,1300,1500,0.8,") != NULL); /* hot: samples, median, p10, p90, GB/s, TFLOP/s */
    CHECK(strstr(buf, ",hot_mma_share,hot_wgmma_share,hot_floor_us,hot_floor_ratio,") != NULL);
    CHECK(strstr(buf, ",0.34,0.001,,419.73,2.94118,") != NULL); /* no wgmma ceiling in the record: empty */
    free(buf);
    f = open_memstream(&buf, &len);
    vb_report_markdown(f, &r);
    fclose(f);
    CHECK(strstr(buf, "| scenario | variant |") && strstr(buf, "| bs8-200k | base | flash_paged | eager | pass |"));
    CHECK(strstr(buf, "| x2.9 of 419.7 |") && strstr(buf, "- flash_paged: time / floor from x2.94 (bs8-200k/base eager)"));
    /* Which kernel to run: nothing was replayed that passed, so the eager launches answer. */
    CHECK(strstr(buf, "- fastest by eager launch (hot median, records that passed), 1 shapes:") &&
          strstr(buf, "| bs8-200k | base | flash_paged | 1234.50 | - | - | the only one that passed |"));
    free(buf);
    f = open_memstream(&buf, &len);
    vb_report_table(f, &r);
    fclose(f);
    CHECK(strstr(buf, "1234.5 (1200.0-1300.0)") && strstr(buf, "8/8 paths, 2 ties"));
    CHECK(strstr(buf, "FAIL bs8-200k/ragged naive_gpu graph: 12 elements") && strstr(buf, "invalid: broken: batch: too big"));
    CHECK(strstr(buf, "2 records: 1 pass, 1 FAIL"));
    CHECK(strstr(buf, "x2.9 of 419.7") && strstr(buf, "\nflash_paged: time / floor from x2.94") &&
          !strstr(buf, "naive_gpu: time / floor")); /* an untimed kernel has no range */
    const char *fastest = strstr(buf, "fastest by eager launch");
    CHECK(fastest && strstr(fastest, "one kernel for every shape: flash_paged (x1.00 the fastest") &&
          !strstr(fastest, "naive_gpu")); /* its one record failed: it is not ranked */
    free(buf);
    vb_results_free(&r);
}

int main(void)
{
    test_json_round_trip();
    test_strict_reader();
    test_floor();
    test_text_formats();
    TEST_MAIN_END();
}
