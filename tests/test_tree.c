/* Draft trees and the verify mask: presets are valid trees, deterministic per seed, and the
 * mask a built instance holds equals hand-written ones (prefix columns, tree part, padding). */
#include "vbtest.h"

#include "inputs.h"
#include "scenario.h"
#include "tree.h"

static int valid_tree(const vb_tree *t)
{
    if (t->parent[0] != -1)
        return 0;
    for (int i = 1; i < t->nodes; i++)
        if (t->parent[i] < 0 || t->parent[i] >= i)
            return 0;
    return 1;
}

static void test_presets(void)
{
    vb_tree a, b, c;
    char why[200];
    CHECK(vb_tree_chain(16, &a) == 0 && valid_tree(&a) && a.parent[15] == 14);
    vb_tree_free(&a);
    CHECK(vb_tree_eagle(8, 5, 64, 1, &a, why, sizeof why) == 0 && a.nodes == 64 && valid_tree(&a));
    CHECK(vb_tree_eagle(8, 5, 64, 1, &b, why, sizeof why) == 0);
    CHECK(vb_tree_eagle(8, 5, 64, 2, &c, why, sizeof why) == 0);
    CHECK(!memcmp(a.parent, b.parent, sizeof(int) * 64));  /* same seed, same tree */
    CHECK(memcmp(a.parent, c.parent, sizeof(int) * 64) != 0); /* another seed, another tree */
    int root_kids = 0;
    for (int i = 1; i < 64; i++)
        root_kids += a.parent[i] == 0;
    CHECK(root_kids >= 1 && root_kids <= 8); /* top-k bounds the branching */
    vb_tree_free(&a), vb_tree_free(&b), vb_tree_free(&c);
    CHECK(vb_tree_ddtree(9, 3, &a) == 0 && a.nodes == 9 && valid_tree(&a));
    CHECK(vb_tree_ddtree(200, 3, &b) == 0 && valid_tree(&b));
    vb_tree_free(&a), vb_tree_free(&b);
    CHECK(vb_tree_eagle(2, 2, 8, 1, &a, why, sizeof why) == 1 && strstr(why, "exceed"));
}

static void test_sees(void)
{
    int parents[] = {-1, 0, 0, 1, 3};
    vb_tree t;
    int bad;
    char why[200];
    CHECK(vb_tree_from_parents(parents, 5, &t, &bad, why, sizeof why) == 0);
    CHECK(vb_tree_sees(&t, 4, 4) && vb_tree_sees(&t, 4, 3) && vb_tree_sees(&t, 4, 1) && vb_tree_sees(&t, 4, 0));
    CHECK(!vb_tree_sees(&t, 4, 2) && !vb_tree_sees(&t, 1, 3) && !vb_tree_sees(&t, 2, 1));
    CHECK(vb_tree_depth(&t, 4) == 3 && vb_tree_depth(&t, 0) == 0);
    vb_tree_free(&t);
}

/* One request with P = 2 and the tree above: row i sees the prefix and its ancestors. */
static void test_mask_layout(void)
{
    vb_scenario_list l = {0};
    capture_begin();
    int rc = vb_scenario_load_text("m.json",
                                   "{\"model\": {\"heads\": 1, \"latent_dim\": 4, \"rope_dim\": 2},"
                                   " \"batch\": {\"size\": 2, \"prefix_len\": [2, 1]},"
                                   " \"tree\": {\"parents\": [-1, 0, 0, 1, 3]}, \"graph\": {\"bucket\": 3}}",
                                   &l);
    free(capture_end());
    CHECK(rc == 0 && l.count == 1);
    if (rc)
        return;
    vb_instance in;
    char why[200];
    CHECK(vb_instance_build(&l.items[0], &l.items[0].base, 3, &in, why, sizeof why) == 0);
    static const uint8_t want0[5][7] = {
        /*        P0 P1 n0 n1 n2 n3 n4 */
        /* n0 */ {1, 1, 1, 0, 0, 0, 0},
        /* n1 */ {1, 1, 1, 1, 0, 0, 0},
        /* n2 */ {1, 1, 1, 0, 1, 0, 0},
        /* n3 */ {1, 1, 1, 1, 0, 1, 0},
        /* n4 */ {1, 1, 1, 1, 0, 1, 1},
    };
    int64_t m0 = vb_ibuf_get(in.mask_indptr.data, in.mask_indptr.width, 0);
    int64_t m1 = vb_ibuf_get(in.mask_indptr.data, in.mask_indptr.width, 1);
    int64_t m2 = vb_ibuf_get(in.mask_indptr.data, in.mask_indptr.width, 2);
    int64_t m3 = vb_ibuf_get(in.mask_indptr.data, in.mask_indptr.width, 3);
    CHECK(m0 == 0 && m1 == 5 * 7 && m2 == m1 + 5 * 6 && m3 == m2 + 5 * 6);
    CHECK(!memcmp(in.custom_mask, want0, sizeof want0));
    /* Request 1 (P = 1): the same tree part, one prefix column. */
    for (int i = 0; i < 5; i++)
        CHECK(!memcmp(in.custom_mask + m1 + i * 6, &want0[i][1], 6));
    /* Request 2 is padding: P = 1 at slot 0, every draft slot 0, the whole block visible. */
    CHECK(in.live_batch == 2 && in.batch == 3 && in.prefix_len[2] == 1);
    for (int64_t e = m2; e < m3; e++)
        CHECK(in.custom_mask[e] == 1);
    CHECK(vb_ibuf_get(in.kv_indices.data, in.kv_indices.width, 3) == 0);
    for (int n = 0; n < 5; n++)
        CHECK(vb_ibuf_get(in.out_cache_loc.data, in.out_cache_loc.width, 10 + n) == 0);
    CHECK(vb_ibuf_get(in.qo_indptr.data, in.qo_indptr.width, 3) == 15);
    vb_instance_free(&in);
    vb_scenario_list_free(&l);
}

int main(void)
{
    test_presets();
    test_sees();
    test_mask_layout();
    TEST_MAIN_END();
}
