/* The scenario parser and validator: defaults, sweeps, replays, and one assertion on the
 * exact message of every kind of bad input. */
#include "vbtest.h"

#include "scenario.h"

/* Parses text; returns the number of problems and the captured messages. */
static int parse(const char *text, vb_scenario_list *out, char **msgs)
{
    capture_begin();
    int n = vb_scenario_load_text("x.json", text, out);
    *msgs = capture_end();
    return n;
}

/* The file must be rejected with a line containing want. */
static void expect_error(const char *text, const char *want)
{
    vb_scenario_list l = {0};
    char *msgs;
    int n = parse(text, &l, &msgs);
    CHECK_MSG(n > 0 && l.count == 0, "accepted: %s", text);
    CHECK_MSG(strstr(msgs, want) != NULL, "wanted '%s', got '%s'", want, msgs);
    CHECK_MSG(strncmp(msgs, "x.json", 6) == 0, "message does not start with the file: '%s'", msgs);
    free(msgs);
    vb_scenario_list_free(&l);
}

/* A list or sweep with a bad entry: that entry is reported with want, the good ones (count
 * of them) are kept. */
static void expect_partial(const char *text, int good, const char *want)
{
    vb_scenario_list l = {0};
    char *msgs;
    int n = parse(text, &l, &msgs);
    CHECK_MSG(n > 0 && l.count == good, "%s: %d problems, %d kept", text, n, l.count);
    CHECK_MSG(strstr(msgs, want) != NULL, "wanted '%s', got '%s'", want, msgs);
    free(msgs);
    vb_scenario_list_free(&l);
}

static void test_defaults(void)
{
    vb_scenario_list l = {0};
    char *msgs;
    CHECK(parse("{\"batch\": {\"size\": 2}}", &l, &msgs) == 0);
    CHECK(l.count == 1);
    const vb_scenario *s = &l.items[0];
    CHECK(!strcmp(s->name, "x"));
    CHECK(s->heads == 8 && s->latent_dim == 512 && s->rope_dim == 64);
    CHECK(s->sm_scale == 0.14468);
    CHECK(s->base.batch == 2 && s->base.prefix_len[0] == 4096 && s->base.prefix_len[1] == 4096);
    CHECK(s->base.tree.nodes == 9 && !strcmp(s->base.tree.label, "ddtree9"));
    CHECK(s->base.page_size == 1 && s->base.layout == VB_LAYOUT_SHUFFLED);
    CHECK(s->dtypes.kv_indptr == VB_I32 && s->dtypes.kv_indices == VB_I64 && s->dtypes.qo_indptr == VB_I64);
    CHECK(s->dtypes.out_cache_loc == VB_I64 && s->dtypes.mask_indptr == VB_I64 && !s->dtypes.mask_is_bool);
    CHECK(s->graph_enabled && s->bucket == 2 && s->n_replays == 0);
    CHECK(s->timing.iterations == 30 && s->timing.cold_l2 == 1 && s->timing.min_samples == 10 && s->timing.noise == 0.02);
    free(msgs);
    vb_scenario_list_free(&l);
}

static void test_prefix_forms(void)
{
    vb_scenario_list l = {0};
    char *msgs;
    CHECK(parse("[{\"batch\": {\"size\": 3, \"prefix_len\": [1, 200000, 7]}},"
                " {\"batch\": {\"size\": 50, \"prefix_len\": {\"min\": 10, \"max\": 20, \"seed\": 4}}}]",
                &l, &msgs) == 0);
    CHECK(l.count == 2);
    CHECK(l.items[0].base.prefix_len[1] == 200000);
    CHECK(!strcmp(l.items[0].name, "x.0") && !strcmp(l.items[1].name, "x.1"));
    int lo = 1 << 30, hi = 0;
    for (int i = 0; i < 50; i++) {
        int p = (int)l.items[1].base.prefix_len[i];
        lo = p < lo ? p : lo, hi = p > hi ? p : hi;
    }
    CHECK(lo >= 10 && hi <= 20 && lo < hi);
    free(msgs);
    vb_scenario_list_free(&l);
}

static void test_sweep(void)
{
    vb_scenario_list l = {0};
    char *msgs;
    CHECK(parse("{\"name\": \"s\", \"sweep\": {\"batch.size\": [1, 8], \"tree\": "
                "[{\"preset\": \"chain\", \"nodes\": 4}, {\"preset\": \"ddtree\", \"nodes\": 9}]}}",
                &l, &msgs) == 0);
    CHECK(l.count == 4);
    CHECK(!strcmp(l.items[0].name, "s/batch.size=1,tree=chain-4"));
    CHECK(!strcmp(l.items[3].name, "s/batch.size=8,tree=ddtree-9"));
    CHECK(l.items[3].base.batch == 8 && l.items[3].base.tree.nodes == 9);
    free(msgs);
    vb_scenario_list_free(&l);
}

static void test_replays(void)
{
    vb_scenario_list l = {0};
    char *msgs;
    CHECK(parse("{\"batch\": {\"size\": 4, \"prefix_len\": [5, 6, 7, 8]}, \"tree\": {\"preset\": \"chain\", \"nodes\": 5},"
                " \"graph\": {\"bucket\": 6, \"replays\": [{\"batch\": {\"size\": 6}},"
                " {\"name\": \"t\", \"tree\": {\"preset\": \"chain\", \"nodes\": 2}, \"kv_cache\": {\"page_size\": 16}}]}}",
                &l, &msgs) == 0);
    CHECK_MSG(l.count == 1, "%s", msgs);
    if (l.count == 1) {
        const vb_scenario *s = &l.items[0];
        CHECK(s->bucket == 6 && s->n_replays == 2);
        CHECK(s->replays[0].batch == 6 && s->replays[0].prefix_len[5] == 4096); /* list dropped: default */
        CHECK(!strcmp(s->replays[0].name, "replay1") && !strcmp(s->replays[1].name, "t"));
        CHECK(s->replays[1].batch == 4 && s->replays[1].prefix_len[3] == 8);   /* batch inherited */
        CHECK(s->replays[1].page_size == 16 && s->replays[1].tree.nodes == 2);
        CHECK(s->replays[0].seed != s->base.seed);                             /* fresh values */
        CHECK(vb_scenario_max_draft(s) == 5);
    }
    free(msgs);
    vb_scenario_list_free(&l);
}

static void test_errors(void)
{
    expect_error("{\"batch\": {\"size\": 2,}}", "x.json:1:23: malformed JSON near");
    expect_error("{\"batch\": {\"prefx_len\": 5}}", "x.json: batch.prefx_len: unknown key (did you mean 'prefix_len'?)");
    expect_error("{\"bacth\": {}}", "bacth: unknown key (did you mean 'batch'?)");
    expect_error("{\"batch\": {\"size\": \"8\"}}", "batch.size: expected an integer, got a string");
    expect_error("{\"batch\": {\"size\": 2.5}}", "batch.size: expected an integer, got 2.5");
    expect_error("{\"batch\": {\"size\": 0}}", "batch.size: 0 is out of range [1, 1024]");
    expect_error("{\"mask\": {\"prefix_hidden\": 1.5}}", "x.json: mask.prefix_hidden: 1.5 is out of range");
    expect_error("{\"mask\": {\"prefix_visible\": 1}}", "x.json: mask.prefix_visible: unknown key");
    expect_error("{\"batch\": {\"prefix_len\": 300000}}", "batch.prefix_len: 300000 exceeds the maximum context 262144");
    expect_error("{\"batch\": {\"prefix_len\": 262140}}", "batch.prefix_len: 262140 plus 9 draft tokens exceeds the maximum context 262144");
    expect_error("{\"batch\": {\"prefix_len\": -1}}", "batch.prefix_len: -1 is below the minimum 0");
    expect_error("{\"batch\": {\"size\": 3, \"prefix_len\": [1, 2]}}", "batch.prefix_len: the list has 2 entries but batch.size is 3");
    expect_error("{\"batch\": {\"size\": 2, \"prefix_len\": [1, 262200]}}", "batch.prefix_len[1]: 262200 plus 9 draft tokens");
    expect_error("{\"batch\": {\"prefix_len\": {\"min\": 9, \"max\": 3}}}", "batch.prefix_len: min 9 is larger than max 3");
    expect_error("{\"tree\": {\"parents\": [-1, 2, 1]}}", "tree.parents[1]: a cycle: following parents from node 1 never reaches the root");
    expect_error("{\"tree\": {\"parents\": [-1, 0, 0, -1]}}", "tree.parents[3]: a second root: only node 0 may have parent -1");
    expect_error("{\"tree\": {\"parents\": [-1, 0, 3, 0]}}", "tree.parents[2]: parent 3 is not before its child 2");
    expect_error("{\"tree\": {\"parents\": [0, 0]}}", "tree.parents[0]: node 0 is the root and must have parent -1");
    expect_error("{\"tree\": {\"parents\": [-1, 7]}}", "tree.parents[1]: parent 7 is not a node of this 2-node tree");
    expect_error("{\"tree\": {\"preset\": \"chain\", \"topk\": 4}}", "tree.topk: the chain preset does not take this key");
    expect_error("{\"tree\": {\"preset\": \"medusa\"}}", "tree.preset: 'medusa' is not one of 'chain', 'eagle', 'ddtree', 'explicit'");
    expect_error("{\"tree\": {\"preset\": \"eagle\", \"topk\": 2, \"depth\": 2, \"nodes\": 64}}",
                 "tree.nodes: 64 nodes exceed the 7 candidates that topk 2 and depth 2 produce");
    expect_error("{\"tree\": {\"nodes\": 300}}", "tree.nodes: 300 is out of range [1, 256]");
    expect_partial("[{\"batch\": {\"size\": 1}}, {\"batch\": {\"size\": -4}}]", 1, "x.json: [1]: batch.size: -4 is out of range");
    expect_error("{\"kv_cache\": {\"dtype\": \"fp8_e4m3\"}}", "kv_cache.dtype: fp8_e4m3 KV caches are not implemented yet");
    expect_error("{\"kv_cache\": {\"free_fraction\": 0.2}}", "kv_cache.free_fraction: only the fragmented layout leaves pages free");
    expect_error("{\"kv_cache\": {\"amplitude\": 0}}", "kv_cache.amplitude: 0 is out of range");
    expect_error("{\"index_dtypes\": {\"kv_indices\": \"int16\"}}", "index_dtypes.kv_indices: 'int16' is not one of 'int32', 'int64'");
    expect_error("{\"model\": {\"rope_dim\": 63}}", "model.rope_dim: latent_dim + rope_dim must be even");
    expect_error("{\"model\": 5}", "model: expected an object, got a number");
    expect_error("{\"batch\": {\"size\": 8}, \"graph\": {\"bucket\": 4}}", "graph.bucket: 4 is smaller than a batch it must replay (8 requests)");
    expect_error("{\"graph\": {\"bucket\": 2, \"replays\": [{\"batch\": {\"size\": 3}}]}}", "graph.bucket: 2 is smaller than a batch it must replay (3 requests)");
    expect_error("{\"graph\": {\"replays\": [{\"tree\": {\"parents\": [-1, 1]}}]}}", "graph.replays[0].tree.parents[1]: a cycle");
    expect_error("{\"graph\": {\"replays\": [{\"model\": {}}]}}", "graph.replays[0].model: unknown key");
    expect_error("{\"timing\": {\"cold_l2\": 1}}", "timing.cold_l2: expected true or false, got a number");
    expect_error("{\"timing\": {\"noise\": 2}}", "timing.noise: 2 is out of range");
    expect_error("{\"name\": \"a b\"}", "name: 'a b' must be 1 to 99 letters");
    expect_error("{\"sweep\": {\"batch.size\": []}}", "sweep.batch.size: expected a non-empty list of values");
    expect_partial("{\"name\": \"s\", \"sweep\": {\"batch.size\": [1, 2000]}}", 1,
                   "sweep s/batch.size=2000: batch.size: 2000 is out of range");
    expect_partial("[{\"name\": \"okA\", \"batch\": {\"size\": 1, \"prefix_len\": 16}}, {\"name\": \"badB\", \"batch\": "
                   "{\"size\": 0}}]", 1, "x.json: [1]: batch.size: 0 is out of range");
    expect_error("{\"name\": \"s\", \"sweep\": {\"x\": [1, 2]}}", "sweep.x: 'x' is not a scenario key");
    expect_error("{\"name\": \"a\", \"name\": \"b\"}", "x.json: name: appears twice in one object");
    expect_error("{\"batch\": {\"size\": 2, \"size\": 3}}", "x.json: batch.size: appears twice in one object");
    expect_error("{\"name\": \"a\\u001b[31m\\nb\"}", "name: 'a\\x1b[31m\\x0ab' must be"); /* one line, no escape codes */
    expect_error("{\"batch\": {\"size\": 2}, \"graph\": {\"replays\": [{\"name\": \"base\"}]}}",
                 "graph.replays[0].name: 'base' names the scenario's own variant");
    expect_error("{\"batch\": {\"size\": 2}, \"graph\": {\"replays\": [{\"name\": \"r\"}, {\"name\": \"r\"}]}}",
                 "graph.replays[1].name: 'r' is the name of graph.replays[0] too");
    expect_error("{\"batch\": {\"size\": 2}, \"graph\": {\"replays\": [{\"name\": \"a|b\"}]}}",
                 "graph.replays[0].name: 'a|b' must be");
    expect_error("{\"batch\": {\"size\": 2}, \"graph\": {\"replays\": [{\"kv_cache\": {\"page_size\": 3}}]}}",
                 "graph.replays[0].kv_cache.page_size: must be 1, 16 or 64, got 3");
    expect_error("[]", "the list holds no scenarios");
    expect_error("7", "expected a scenario object, got a number");
}

static void test_missing_file(void)
{
    vb_scenario_list l = {0};
    capture_begin();
    int n = vb_scenario_load_file("/nonexistent/dir/none.json", &l);
    char *msgs = capture_end();
    CHECK(n == 1 && l.count == 0);
    CHECK_MSG(strstr(msgs, "none.json: cannot open: No such file or directory") != NULL, "%s", msgs);
    free(msgs);
}

int main(void)
{
    test_defaults();
    test_prefix_forms();
    test_sweep();
    test_replays();
    test_errors();
    test_missing_file();
    TEST_MAIN_END();
}
