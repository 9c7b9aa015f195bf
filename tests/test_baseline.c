/* The Triton baseline path without a GPU: bundles round-trip, dumps parse, a shape-key
 * mismatch is refused (never compared), a missing scenario shows "no baseline", and the
 * speedups and geometric means are right on a fixture. */
#include "vbtest.h"

#include <math.h>

#include "baseline.h"
#include "bundle.h"
#include "prepare.h"
#include "scenario.h"

static void test_bundle_round_trip(void)
{
    vb_scenario_list l = {0};
    capture_begin();
    int rc = vb_scenario_load_text("b.json",
                                   "{\"name\": \"grp/b1\", \"batch\": {\"size\": 2, \"prefix_len\": [3, 50]},"
                                   " \"tree\": {\"preset\": \"chain\", \"nodes\": 3}, \"kv_cache\": {\"page_size\": 16},"
                                   " \"index_dtypes\": {\"kv_indices\": \"int32\", \"custom_mask\": \"bool\"}}",
                                   &l);
    free(capture_end());
    CHECK(rc == 0);
    vb_prepared p;
    char why[300], dir[] = "/tmp/vb_bundle_XXXXXX", sub[512], key[192];
    CHECK(mkdtemp(dir) != NULL);
    if (rc || vb_prepare(&l.items[0], &l.items[0].base, 0, NULL, 0, 2, &p, why, sizeof why))
        return;
    CHECK_MSG(vb_bundle_write(dir, &l.items[0], &p, why, sizeof why) == 0, "%s", why);
    char name[64];
    vb_bundle_dirname("grp/b1", name, sizeof name);
    CHECK(!strcmp(name, "grp%2Fb1"));
    char other[64];
    vb_bundle_dirname("grp__b1", other, sizeof other); /* another name, another directory */
    CHECK(!strcmp(other, "grp__b1"));
    vb_bundle_dirname("..", other, sizeof other);     /* never a path out of the export directory */
    CHECK(!strcmp(other, "%2E.") && strchr(other, '/') == NULL);
    vb_bundle_dirname(".", other, sizeof other);
    CHECK(!strcmp(other, "%2E"));
    snprintf(sub, sizeof sub, "%s/%s", dir, name);
    struct { const char *array, *dtype; const void *want; size_t bytes; } cases[] = {
        {"q", "bfloat16", p.in.q, 2 * (size_t)(p.in.tokens * p.in.heads * p.in.d_qk)},
        {"kv_buffer", "bfloat16", p.in.kv, 2 * (size_t)(p.in.num_slots * p.in.d_qk)},
        {"kv_indptr", "int32", p.in.kv_indptr.data, vb_ibuf_bytes(&p.in.kv_indptr)},
        {"kv_indices", "int32", p.in.kv_indices.data, vb_ibuf_bytes(&p.in.kv_indices)},
        {"qo_indptr", "int64", p.in.qo_indptr.data, vb_ibuf_bytes(&p.in.qo_indptr)},
        {"out_cache_loc", "int64", p.in.out_cache_loc.data, vb_ibuf_bytes(&p.in.out_cache_loc)},
        {"mask_indptr", "int64", p.in.mask_indptr.data, vb_ibuf_bytes(&p.in.mask_indptr)},
        {"custom_mask", "bool", p.in.custom_mask, (size_t)p.in.mask_bytes},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        void *data;
        size_t bytes;
        char dtype[32];
        CHECK_MSG(vb_bundle_read_array(sub, cases[i].array, &data, &bytes, dtype, sizeof dtype, why, sizeof why) == 0,
                  "%s", why);
        CHECK_MSG(bytes == cases[i].bytes && !strcmp(dtype, cases[i].dtype) && !memcmp(data, cases[i].want, bytes),
                  "array %s differs after the round trip", cases[i].array);
        free(data);
    }
    void *o;
    size_t bytes;
    char dtype[32];
    CHECK(vb_bundle_read_array(sub, "o_ref", &o, &bytes, dtype, sizeof dtype, why, sizeof why) == 0);
    CHECK(bytes == 4 * (size_t)(p.in.tokens * p.in.heads * p.in.d_v) && !strcmp(dtype, "float32"));
    CHECK(fabs(((float *)o)[17] - p.ref.o[17]) < 1e-6);
    free(o);
    CHECK(vb_bundle_read_array(sub, "nothing", &o, &bytes, dtype, sizeof dtype, why, sizeof why) == -1);
    vb_shape_key(&p.in, &l.items[0], key, sizeof key);
    CHECK(!strncmp(key, "bs2.T3.H8.dqk576.dv512.page16.shuffled.P53:", 43) && strstr(key, ".idx3232646464.mask-bool"));
    vb_prepared_free(&p);
    vb_scenario_list_free(&l);
}

static void add(vb_results *r, const char *name, const char *key, double a_eager, double a_graph)
{
    vb_scenario_info s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "%s", name);
    snprintf(s.shape_key, sizeof s.shape_key, "%s", key);
    s.valid = 1;
    int i = vb_results_add_scenario(r, &s);
    const char *kernels[] = {"A", "B"};
    for (int k = 0; k < 2; k++)
        for (int m = 1; m <= 2; m++) {
            vb_record *rec = vb_results_add_record(r, i, "base", kernels[k], (vb_mode)m);
            rec->status = VB_PASS;
            rec->hot.samples = 10;
            double t = m == VB_MODE_EAGER ? a_eager : a_graph;
            rec->hot.median_us = k == 0 ? t : 4 * t; /* B is four times slower than A */
        }
}

static void test_speedups(void)
{
    vb_baseline b;
    char why[200], path[512];
    const char *data = getenv("VB_TEST_DATA") ? getenv("VB_TEST_DATA") : "tests/data";
    snprintf(path, sizeof path, "%s/baseline_fixture.json", data);
    CHECK_MSG(vb_baseline_read(path, &b, why, sizeof why) == 0, "%s", why);
    CHECK(b.count == 4 && !strcmp(b.impl, "builtin") && !strcmp(b.triton, "3.6.0"));
    CHECK(b.entries[0].eager.median_us == 100.0 && b.entries[0].graph.p90_us == 81.0 && b.entries[2].correct == 0);

    vb_results r;
    vb_results_init(&r);
    add(&r, "s-match", "K1", 50.0, 40.0);    /* A: 2x eager, 2x graph; B: 0.5x */
    add(&r, "s-shape", "K2", 50.0, 40.0);    /* dump has another key: refused */
    add(&r, "s-missing", "K3", 50.0, 40.0);  /* not in the dump */
    add(&r, "s-wrong", "K4", 5.0, 4.0);      /* the baseline failed its check */
    add(&r, "s-second", "K5", 50.0, 300.0);  /* A: 8x eager, 1x graph */
    vb_speedup_row *rows;
    capture_begin();
    int n = vb_speedup_rows(&r, &b, 1, &rows);
    char *msgs = capture_end();
    CHECK(n == 10);
    CHECK_MSG(strstr(msgs, "s-shape: shape key differs (dump K-other, run K2): not compared") != NULL, "%s", msgs);
    const vb_speedup_cell *c = &rows[0].base[0];
    CHECK(!strcmp(rows[0].kernel, "A") && fabs(c->eager_speedup - 2.0) < 1e-12 && fabs(c->graph_speedup - 2.0) < 1e-12);
    CHECK(!strcmp(rows[1].kernel, "B") && fabs(rows[1].base[0].eager_speedup - 0.5) < 1e-12);
    CHECK(!strcmp(rows[2].base[0].note, "shape differs") && isnan(rows[2].base[0].eager_speedup) &&
          isnan(rows[2].base[0].eager_us));
    CHECK(!strcmp(rows[4].base[0].note, "no baseline") && isnan(rows[4].base[0].graph_speedup));
    CHECK(!strcmp(rows[6].base[0].note, "baseline wrong") && isnan(rows[6].base[0].eager_speedup));
    CHECK(fabs(rows[8].base[0].eager_speedup - 8.0) < 1e-12 && fabs(rows[8].base[0].graph_speedup - 1.0) < 1e-12);
    int count;
    CHECK(fabs(vb_speedup_geomean(rows, n, "A", 0, 0, &count) - 4.0) < 1e-12 && count == 2); /* sqrt(2 * 8) */
    CHECK(fabs(vb_speedup_geomean(rows, n, "A", 0, 1, &count) - sqrt(2.0)) < 1e-12 && count == 2);
    CHECK(fabs(vb_speedup_geomean(rows, n, "B", 0, 0, &count) - 1.0) < 1e-12); /* sqrt(0.5 * 2) */
    CHECK(isnan(vb_speedup_geomean(rows, n, "C", 0, 0, &count)) && count == 0);
    free(rows);
    free(msgs);

    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    capture_begin();
    vb_speedup_print(f, VB_FMT_MARKDOWN, &r, &b, 1);
    free(capture_end());
    fclose(f);
    CHECK(strstr(buf, "[1] builtin: kernel source not recorded; triton 3.6.0") != NULL); /* an older dump */
    CHECK(strstr(buf, "| s-match | A | 50.0 | 40.0 | 100.0 | 2.000 | 80.0 | 2.000 | |") != NULL);
    CHECK(strstr(buf, "| **geomean** | A | | | | **4.000** | | **1.414** | 2 eager / 2 graph scenarios |") != NULL);
    CHECK(strstr(buf, "| s-missing | A | 50.0 | 40.0 | - | - | - | - | no baseline |") != NULL);
    free(buf);
    f = open_memstream(&buf, &len);
    capture_begin();
    vb_speedup_print(f, VB_FMT_CSV, &r, &b, 1);
    free(capture_end());
    fclose(f);
    CHECK(!strncmp(buf, "scenario,kernel,eager_us,graph_us,builtin_eager_us,builtin_eager_speedup,", 73));
    CHECK(strstr(buf, "\"geomean\",B,,,,1.000,,") != NULL);
    free(buf);
    vb_results_free(&r);
    vb_baseline_free(&b);

    /* Not a dump: refused with the reason. */
    snprintf(path, sizeof path, "%s/tiny.json", data);
    CHECK(vb_baseline_read(path, &b, why, sizeof why) == -1 && strstr(why, "not a verifybench.triton_baseline/1 dump"));
    CHECK(vb_baseline_read("/nonexistent.json", &b, why, sizeof why) == -1 && !strcmp(why, "cannot open: No such file or directory"));
}

/* Two dumps in one table: a column group each, named by implementation and SGLang version,
 * a geometric mean per kernel and dump, notes per dump; a second dump of the same version is
 * told apart. */
static void test_two_baselines(void)
{
    const char *data = getenv("VB_TEST_DATA") ? getenv("VB_TEST_DATA") : "tests/data";
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/baseline_fixture.json", data);
    snprintf(p2, sizeof p2, "%s/baseline_sglang_fixture.json", data);
    vb_cli cli;
    memset(&cli, 0, sizeof cli);
    cli.baselines[0] = p1, cli.baselines[1] = p2, cli.baselines[2] = p2;
    cli.n_baselines = 3;
    vb_baseline b[VB_MAX_BASELINES];
    CHECK(vb_baselines_read(&cli, b) == 0);
    CHECK(!strcmp(b[0].label, "builtin") && !strcmp(b[1].label, "SGLang 0.5.23") && !strcmp(b[2].label, "SGLang 0.5.23 #2"));
    CHECK(!strcmp(b[1].kernel_module, "sglang.kernels.ops.attention.extend_attention") &&
          !strncmp(b[1].kernel_sha256, "be3baffc80ef", 12));

    vb_results r;
    vb_results_init(&r);
    add(&r, "s-match", "K1", 50.0, 40.0);
    add(&r, "s-missing", "K3", 50.0, 40.0);
    vb_speedup_row *rows;
    capture_begin();
    int n = vb_speedup_rows(&r, b, 2, &rows);
    free(capture_end());
    CHECK(n == 4);
    CHECK(fabs(rows[0].base[0].graph_speedup - 2.0) < 1e-12 && fabs(rows[0].base[1].graph_speedup - 3.0) < 1e-12);
    CHECK(!strcmp(rows[2].base[0].note, "no baseline") && !*rows[2].base[1].note &&
          fabs(rows[2].base[1].eager_speedup - 0.5) < 1e-12);
    int count;
    CHECK(fabs(vb_speedup_geomean(rows, n, "A", 1, 1, &count) - sqrt(3.0 * 0.5)) < 1e-12 && count == 2);
    CHECK(fabs(vb_speedup_geomean(rows, n, "A", 0, 1, &count) - 2.0) < 1e-12 && count == 1);
    free(rows);

    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    capture_begin();
    vb_speedup_print(f, VB_FMT_MARKDOWN, &r, b, 2);
    free(capture_end());
    fclose(f);
    CHECK_MSG(strstr(buf, "- [2] SGLang 0.5.23: sglang.kernels.ops.attention.extend_attention, sha256 be3baffc80ef;") != NULL,
              "%s", buf);
    CHECK(strstr(buf, "| [1] graph speedup | [2] eager us |") != NULL);
    CHECK(strstr(buf, "| s-missing | A | 50.0 | 40.0 | - | - | - | - | 25.0 | 0.500 | 20.0 | 0.500 | [1] no baseline |") != NULL);
    CHECK(strstr(buf, "| **geomean** | A | | | | **2.000** | | **2.000** | | **1.225** | | **1.225** | "
                      "[1] 1 eager / 1 graph scenarios; [2] 2 eager / 2 graph scenarios |") != NULL);
    free(buf);
    f = open_memstream(&buf, &len);
    capture_begin();
    vb_speedup_print(f, VB_FMT_CSV, &r, b, 2);
    free(capture_end());
    fclose(f);
    CHECK_MSG(strstr(buf, ",builtin_graph_speedup,sglang-0.5.23_eager_us,sglang-0.5.23_eager_speedup,") != NULL, "%s", buf);
    free(buf);
    vb_results_free(&r);
    vb_baselines_free(b, 3);

    /* A bad second dump: one line naming it, nothing kept. */
    cli.baselines[1] = "/nonexistent-dump.json";
    capture_begin();
    CHECK(vb_baselines_read(&cli, b) == -1);
    char *msg = capture_end();
    CHECK_MSG(strstr(msg, "/nonexistent-dump.json: cannot open: No such file or directory") != NULL, "%s", msg);
    free(msg);
}

/* The dump reader checks every timing value and names where it found a bad one. */
static void test_strict_dump(void)
{
    char path[] = "/tmp/vb_dump_bad_XXXXXX", why[320] = "";
    FILE *f = fdopen(mkstemp(path), "w");
    fputs("{\"schema\": \"verifybench.triton_baseline/1\", \"entries\": [{\"shape_key\": \"k\", "
          "\"eager\": {\"median_us\": 10, \"samples\": 1e300}}]}", f);
    fclose(f);
    vb_baseline b;
    CHECK(vb_baseline_read(path, &b, why, sizeof why) == -1 && strstr(why, "entries[0].eager.samples: expected an integer"));
    f = fopen(path, "w");
    fputs("{\"schema\": \"verifybench.triton_baseline/1\", \"entries\": \"none\"}", f);
    fclose(f);
    CHECK(vb_baseline_read(path, &b, why, sizeof why) == -1 && strstr(why, "not a verifybench.triton_baseline/1"));
    remove(path);
}

int main(void)
{
    test_strict_dump();
    test_bundle_round_trip();
    test_speedups();
    test_two_baselines();
    TEST_MAIN_END();
}
