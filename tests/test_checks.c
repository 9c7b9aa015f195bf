/* The checks can fail: planted bugs in the CPU model of the split-K kernel (a mask off by
 * one, a wrong slot, a wrong scale, an unwritten row, a stray write), NaN, a wrong lse, an
 * unwritten padding row and a flipped token must each be caught, and the clean model
 * must pass. */
#include "vbtest.h"

#include <math.h>

#include "checks.h"
#include "cpu_model.h"
#include "inputs.h"
#include "oracle.h"
#include "scenario.h"
#include "vb_bf16.h"
#include "verdict.h"

typedef struct fixture {
    vb_scenario_list l;
    vb_instance in;
    vb_oracle_out ref;
    vb_verdict_ref vref;
    int64_t cap;
    uint16_t *o;
    float *lse;
} fixture;

static int setup(fixture *f)
{
    memset(f, 0, sizeof *f);
    char why[200];
    capture_begin();
    int rc = vb_scenario_load_text("c.json",
                                   "{\"model\": {\"heads\": 4, \"latent_dim\": 128, \"rope_dim\": 32},"
                                   " \"batch\": {\"size\": 3, \"prefix_len\": [21, 40, 7]},"
                                   " \"tree\": {\"parents\": [-1, 0, 0, 1, 1, 3], \"accept_prob\": 0.9},"
                                   " \"kv_cache\": {\"page_size\": 16, \"layout\": \"shuffled\"}, \"graph\": {\"bucket\": 4}}",
                                   &f->l);
    free(capture_end());
    if (rc || vb_instance_build(&f->l.items[0], &f->l.items[0].base, 4, &f->in, why, sizeof why) ||
        vb_instance_fill_host(&f->in, why, sizeof why))
        return -1;
    vb_verify_params hp = vb_instance_params(&f->in);
    if (vb_oracle_run(&hp, 2, &f->ref) || vb_verdict_prepare(&f->in, &f->ref, 0.9, 11, 2, &f->vref))
        return -1;
    f->cap = f->in.tokens + f->in.draft;
    f->o = malloc(sizeof *f->o * (size_t)(f->cap * f->in.heads * f->in.d_v));
    f->lse = malloc(sizeof *f->lse * (size_t)(f->cap * f->in.heads));
    return 0;
}

static void teardown(fixture *f)
{
    free(f->o), free(f->lse);
    vb_verdict_free(&f->vref);
    vb_oracle_free(&f->ref);
    vb_instance_free(&f->in);
    vb_scenario_list_free(&f->l);
}

static vb_status recheck(fixture *f, int batch, vb_checks *c, char *msg, size_t n);

/* Runs the model over `batch` requests (live = eager, in.batch = graph with padding). */
static vb_status run(fixture *f, vb_cpu_bug bug, int batch, vb_checks *c, char *msg, size_t n)
{
    vb_poison_output(f->o, f->lse, f->cap, f->in.heads, f->in.d_v);
    vb_verify_params p = vb_instance_launch_params(&f->in, batch);
    p.o = f->o, p.lse = f->lse;
    CHECK(vb_cpu_model_run(&p, bug, 2) == 0);
    return recheck(f, batch, c, msg, n);
}

static vb_status recheck(fixture *f, int batch, vb_checks *c, char *msg, size_t n)
{
    vb_kernel_output out = {f->o, f->lse, (int64_t)batch * f->in.draft, f->cap};
    return vb_check_output(&f->in, &f->ref, &f->vref, &out, 2, c, msg, n);
}

static void expect_fail(fixture *f, vb_cpu_bug bug, const char *want, const char *name)
{
    vb_checks c;
    char msg[400];
    vb_status st = run(f, bug, f->in.live_batch, &c, msg, sizeof msg);
    CHECK_MSG(st == VB_FAIL, "planted bug '%s' was not caught", name);
    CHECK_MSG(strstr(msg, want) != NULL, "bug '%s': wanted '%s' in '%s'", name, want, msg);
}

static void test_planted_bugs(fixture *f)
{
    vb_checks c;
    char msg[400];
    CHECK_MSG(run(f, VB_BUG_NONE, f->in.live_batch, &c, msg, sizeof msg) == VB_PASS, "clean model failed: %s", msg);
    CHECK(c.max_err_ratio < 1 && c.paths_equal + c.paths_near_tie == c.requests && c.requests == 3);
    CHECK(c.unwritten == 0 && c.stray == 0 && c.lse_bad == 0 && c.elements == 3 * 6 * 4 * 128);
    expect_fail(f, VB_BUG_MASK_OFF_BY_ONE, "beyond tolerance", "mask off by one");
    expect_fail(f, VB_BUG_WRONG_SLOT, "beyond tolerance", "wrong slot");
    expect_fail(f, VB_BUG_WRONG_SCALE, "beyond tolerance", "wrong scale");
    expect_fail(f, VB_BUG_UNWRITTEN_ROW, "128 elements unwritten, 0 NaN/Inf; first at request 0 token 1 head 0 dim 0",
                "unwritten row");
    expect_fail(f, VB_BUG_STRAY_WRITE, "elements written past the launch's 18 rows", "stray write");
}

static void test_nan_lse_padding(fixture *f)
{
    vb_checks c;
    char msg[400];
    CHECK(run(f, VB_BUG_NONE, f->in.live_batch, &c, msg, sizeof msg) == VB_PASS);
    f->o[5] = VB_BF16_NAN;
    CHECK(recheck(f, f->in.live_batch, &c, msg, sizeof msg) == VB_FAIL && c.nonfinite == 1);
    CHECK_MSG(strstr(msg, "0 elements unwritten, 1 NaN/Inf") != NULL, "%s", msg);

    CHECK(run(f, VB_BUG_NONE, f->in.live_batch, &c, msg, sizeof msg) == VB_PASS);
    f->lse[7] += 0.01f;
    CHECK(recheck(f, f->in.live_batch, &c, msg, sizeof msg) == VB_FAIL && c.lse_bad == 1);
    CHECK_MSG(strstr(msg, "1 lse values off") != NULL, "%s", msg);

    /* Graph mode launches the padded bucket: padding rows must be written (and finite). */
    CHECK(run(f, VB_BUG_NONE, f->in.batch, &c, msg, sizeof msg) == VB_PASS);
    int64_t pad_elem = f->in.live_tokens * f->in.heads * f->in.d_v + 3;
    f->o[pad_elem] = VB_BF16_POISON;
    CHECK(recheck(f, f->in.batch, &c, msg, sizeof msg) == VB_FAIL);
    CHECK_MSG(strstr(msg, "(padding)") != NULL, "%s", msg);
}

static void test_token_exact(fixture *f)
{
    /* The walk on a hand-made case: root's token 7 matches node 2's draft; node 2 has no
     * child, so the bonus is its target token 1. */
    int parents[] = {-1, 0, 0, 1};
    vb_tree t = {4, parents, "hand"};
    int draft[] = {0, 5, 7, 9}, target[] = {7, 9, 1, 4}, path[4], bonus;
    CHECK(vb_tree_walk(&t, draft, target, path, &bonus) == 1 && path[0] == 2 && bonus == 1);
    int target2[] = {5, 9, 1, 4};
    CHECK(vb_tree_walk(&t, draft, target2, path, &bonus) == 2 && path[0] == 1 && path[1] == 3 && bonus == 4);

    /* A row carrying another row's activations picks another token: a clear mismatch. */
    vb_checks c;
    char msg[400];
    CHECK(run(f, VB_BUG_NONE, f->in.live_batch, &c, msg, sizeof msg) == VB_PASS);
    const int64_t row = (int64_t)f->in.heads * f->in.d_v;
    int64_t a = -1, b = -1;
    for (int64_t x = 0; x < f->in.live_tokens && a < 0; x++)
        for (int64_t y = 0; y < f->in.live_tokens && a < 0; y++)
            if (f->vref.top1[x] != f->vref.top1[y] && f->vref.margin[x] > f->vref.bound[x])
                a = x, b = y;
    CHECK(a >= 0);
    if (a < 0)
        return;
    memcpy(f->o + a * row, f->o + b * row, sizeof *f->o * (size_t)row);
    vb_verdict v = vb_verdict_judge(&f->vref, &f->in, f->o, 2);
    CHECK(v.mismatches >= 1 && v.worst_row >= 0);
}

int main(void)
{
    fixture f;
    CHECK(setup(&f) == 0);
    test_planted_bugs(&f);
    test_nan_lse_padding(&f);
    test_token_exact(&f);
    teardown(&f);
    TEST_MAIN_END();
}
