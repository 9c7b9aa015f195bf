/* Inputs: the generator is deterministic and seed-sensitive, the value mapping is exact,
 * and the paged layout keeps SGLang's invariants (slot 0 reserved, slots unique and
 * page-aligned, unused slots NaN, index widths hold the same values). */
#include "vbtest.h"

#include <math.h>

#include "inputs.h"
#include "prepare.h"
#include "scenario.h"
#include "vb_bf16.h"

static vb_scenario_list load(const char *text)
{
    vb_scenario_list l = {0};
    capture_begin();
    int rc = vb_scenario_load_text("i.json", text, &l);
    char *msgs = capture_end();
    CHECK_MSG(rc == 0, "%s", msgs);
    free(msgs);
    return l;
}

static int build(const vb_scenario *s, const vb_variant *v, int bucket, vb_instance *in)
{
    char why[300];
    int rc = vb_instance_build(s, v, bucket, in, why, sizeof why);
    if (rc == 0)
        rc = vb_instance_fill_host(in, why, sizeof why);
    CHECK_MSG(rc == 0, "%s", why);
    return rc;
}

/* Builds the two scenarios of a two-item list, the second in a graph bucket of bucket_b. */
static int build_two(const char *text, int bucket_b, vb_scenario_list *l, vb_instance *a, vb_instance *b)
{
    *l = load(text);
    return build(&l->items[0], &l->items[0].base, 0, a) || build(&l->items[1], &l->items[1].base, bucket_b, b);
}

static void test_value_mapping(void)
{
    CHECK(vb_synth_bf16(0u, 1.0f) == vb_bf16_from_float(-1.0f));
    CHECK(vb_synth_bf16(0x80000000u, 1.0f) == vb_bf16_from_float(0.0f));
    float top = vb_bf16_to_float(vb_synth_bf16(0xFFFFFFFFu, 2.0f));
    CHECK(top > 1.99f && top <= 2.0f);
    CHECK(vb_bf16_from_float(1.0f) == 0x3F80 && vb_bf16_to_float(0x3F80) == 1.0f);
    CHECK(vb_bf16_from_float(1.00390625f) == 0x3F80);  /* halfway rounds to even */
    CHECK(vb_bf16_from_float(1.01171875f) == 0x3F82);  /* halfway rounds to even, upwards */
    CHECK(!vb_bf16_is_finite(VB_BF16_NAN) && !vb_bf16_is_finite(VB_BF16_POISON) && vb_bf16_is_finite(0x3F80));
}

static void test_determinism(void)
{
    vb_scenario_list l = load("[{\"name\": \"a\", \"batch\": {\"size\": 2, \"prefix_len\": 100}, \"seed\": 5},"
                              " {\"name\": \"b\", \"batch\": {\"size\": 2, \"prefix_len\": 100}, \"seed\": 6}]");
    vb_instance a1, a2, b;
    if (build(&l.items[0], &l.items[0].base, 0, &a1) || build(&l.items[0], &l.items[0].base, 0, &a2) ||
        build(&l.items[1], &l.items[1].base, 0, &b))
        return;
    size_t qn = sizeof(uint16_t) * (size_t)(a1.tokens * a1.heads * a1.d_qk);
    size_t kvn = sizeof(uint16_t) * (size_t)(a1.num_slots * a1.d_qk);
    CHECK(!memcmp(a1.q, a2.q, qn) && !memcmp(a1.kv, a2.kv, kvn));
    CHECK(!memcmp(a1.kv_indices.data, a2.kv_indices.data, vb_ibuf_bytes(&a1.kv_indices)));
    CHECK(memcmp(a1.q, b.q, qn) != 0 && memcmp(a1.kv, b.kv, kvn) != 0);
    /* Values are spread, not constant: about half of q is negative. */
    int neg = 0;
    for (int64_t i = 0; i < a1.tokens * a1.heads * a1.d_qk; i++)
        neg += vb_bf16_to_float(a1.q[i]) < 0;
    CHECK(neg > a1.tokens * a1.heads * a1.d_qk * 2 / 5 && neg < a1.tokens * a1.heads * a1.d_qk * 3 / 5);
    vb_instance_free(&a1), vb_instance_free(&a2), vb_instance_free(&b);
    vb_scenario_list_free(&l);
}

static int slot_of(const vb_instance *in, int b, int64_t t)
{
    int64_t P = in->prefix_len[b];
    if (t < P)
        return (int)vb_ibuf_get(in->kv_indices.data, in->kv_indices.width,
                                vb_ibuf_get(in->kv_indptr.data, in->kv_indptr.width, b) + t);
    return (int)vb_ibuf_get(in->out_cache_loc.data, in->out_cache_loc.width, (int64_t)b * in->draft + t - P);
}

static void check_layout(const char *layout, int page)
{
    char text[400];
    snprintf(text, sizeof text,
             "{\"batch\": {\"size\": 5, \"prefix_len\": [1, 40, 0, 333, 17]}, \"tree\": {\"preset\": \"chain\", \"nodes\": 3},"
             " \"kv_cache\": {\"page_size\": %d, \"layout\": \"%s\"}, \"graph\": {\"bucket\": 7}}", page, layout);
    vb_scenario_list l = load(text);
    vb_instance in;
    if (l.count != 1 || build(&l.items[0], &l.items[0].base, 7, &in))
        return;
    uint8_t *seen = calloc((size_t)in.num_slots, 1);
    int dup = 0, zero = 0, misaligned = 0;
    for (int b = 0; b < in.live_batch; b++) {
        int64_t n = in.prefix_len[b] + in.draft;
        for (int64_t t = 0; t < n; t++) {
            int s = slot_of(&in, b, t);
            dup += seen[s]++ > 0;
            zero += s == 0;
            /* Within a page, consecutive tokens sit in consecutive slots. */
            if (t % page && s != slot_of(&in, b, t - 1) + 1)
                misaligned++;
        }
    }
    CHECK_MSG(!dup && !zero && !misaligned, "%s page %d: %d duplicate, %d at slot 0, %d misaligned", layout, page,
              dup, zero, misaligned);
    int nan_ok = 1;
    for (int64_t s = 1; s < in.num_slots; s++) {
        int finite = vb_bf16_is_finite(in.kv[s * in.d_qk]) && vb_bf16_is_finite(in.kv[s * in.d_qk + in.d_qk - 1]);
        nan_ok &= seen[s] ? finite : !finite;
    }
    CHECK_MSG(nan_ok && vb_bf16_is_finite(in.kv[0]), "%s: owned slots must be finite, the rest NaN", layout);
    for (int b = in.live_batch; b < in.batch; b++) /* padding: everything at slot 0 */
        for (int64_t t = 0; t < 1 + in.draft; t++)
            CHECK(slot_of(&in, b, t) == 0);
    free(seen);
    vb_instance_free(&in);
    vb_scenario_list_free(&l);
}

static void test_layouts(void)
{
    const char *layouts[] = {"contiguous", "shuffled", "fragmented"};
    const int pages[] = {1, 16, 64};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            check_layout(layouts[i], pages[j]);
}

static void test_widths_and_overflow(void)
{
    vb_scenario_list l = load("[{\"name\": \"w32\", \"batch\": {\"size\": 3, \"prefix_len\": [9, 1, 30]},"
                              " \"index_dtypes\": {\"kv_indptr\": \"int32\", \"kv_indices\": \"int32\", \"qo_indptr\": \"int32\","
                              " \"out_cache_loc\": \"int32\", \"mask_indptr\": \"int32\"}},"
                              " {\"name\": \"w64\", \"batch\": {\"size\": 3, \"prefix_len\": [9, 1, 30]},"
                              " \"index_dtypes\": {\"kv_indptr\": \"int64\"}},"
                              " {\"name\": \"huge\", \"batch\": {\"size\": 1024, \"prefix_len\": 262000},"
                              " \"index_dtypes\": {\"mask_indptr\": \"int32\"}}]");
    vb_instance a, b;
    char why[300];
    if (build(&l.items[0], &l.items[0].base, 0, &a) || build(&l.items[1], &l.items[1].base, 0, &b))
        return;
    CHECK(a.kv_indices.width == VB_I32 && b.kv_indices.width == VB_I64);
    int same = 1;
    for (int64_t i = 0; i < a.kv_indices.count; i++)
        same &= vb_ibuf_get(a.kv_indices.data, VB_I32, i) == vb_ibuf_get(b.kv_indices.data, VB_I64, i);
    for (int64_t i = 0; i <= a.batch; i++)
        same &= vb_ibuf_get(a.mask_indptr.data, VB_I32, i) == vb_ibuf_get(b.mask_indptr.data, VB_I64, i);
    CHECK(same);
    vb_instance c;
    CHECK(vb_instance_build(&l.items[2], &l.items[2].base, 0, &c, why, sizeof why) == -1);
    CHECK_MSG(strstr(why, "index_dtypes: an int32 buffer cannot hold") != NULL, "%s", why);
    vb_instance_free(&a), vb_instance_free(&b);
    vb_scenario_list_free(&l);
}

/* mask.prefix_hidden writes zeros into about that share of the prefix columns (and none into
 * padding requests' blocks or the tree part), and tells kernels the prefix is not all visible. */
static void test_hidden_prefix(void)
{
    vb_scenario_list l;
    vb_instance sg, h;
    if (build_two("[{\"name\": \"sg\", \"batch\": {\"size\": 2, \"prefix_len\": 500}},"
                  " {\"name\": \"h\", \"batch\": {\"size\": 2, \"prefix_len\": 500},"
                  "  \"mask\": {\"prefix_hidden\": 0.25}}]",
                  3, &l, &sg, &h))
        return;
    CHECK(vb_instance_params(&sg).prefix_visible == 1 && vb_instance_params(&h).prefix_visible == 0);
    int64_t hidden = 0, prefix_cols = 0, tree_same = 1;
    for (int b = 0; b < h.batch; b++) {
        const int64_t P = h.prefix_len[b], T = h.draft, off = vb_ibuf_get(h.mask_indptr.data, h.mask_indptr.width, b);
        for (int64_t i = 0; i < T; i++) {
            const uint8_t *row = h.custom_mask + off + i * (P + T);
            for (int64_t j = 0; j < P; j++) {
                if (b < h.live_batch)
                    prefix_cols++, hidden += row[j] == 0;
                else
                    CHECK(row[j] == 1); /* padding requests keep SGLang's all-visible block */
            }
            if (b < sg.batch)
                for (int64_t k = 0; k < T; k++)
                    tree_same &= row[P + k] == sg.custom_mask[off + i * (P + T) + P + k];
        }
    }
    CHECK_MSG(hidden > 0.2 * prefix_cols && hidden < 0.3 * prefix_cols, "%lld of %lld hidden", (long long)hidden,
              (long long)prefix_cols);
    CHECK(tree_same);
    vb_instance_free(&sg), vb_instance_free(&h);
    vb_scenario_list_free(&l);
}

/* kv_cache.amplitude scales the KV values (past fp16's range here) and scales q down by the
 * same factor, so that the scores keep their spread while the values grow. */
static void test_kv_amplitude(void)
{
    vb_scenario_list l;
    vb_instance one, big;
    if (build_two("[{\"name\": \"one\", \"batch\": {\"size\": 1, \"prefix_len\": 300}},"
                  " {\"name\": \"big\", \"batch\": {\"size\": 1, \"prefix_len\": 300},"
                  "  \"kv_cache\": {\"amplitude\": 1e6}}]",
                  0, &l, &one, &big))
        return;
    float kv1 = 0.f, kvb = 0.f, q1 = 0.f, qb = 0.f;
    for (int64_t i = 0; i < one.num_slots * one.d_qk; i++)
        if (vb_bf16_is_finite(one.kv[i]) && vb_bf16_is_finite(big.kv[i]))
            kv1 = fmaxf(kv1, fabsf(vb_bf16_to_float(one.kv[i]))), kvb = fmaxf(kvb, fabsf(vb_bf16_to_float(big.kv[i])));
    for (int64_t i = 0; i < one.tokens * one.heads * one.d_qk; i++)
        q1 = fmaxf(q1, fabsf(vb_bf16_to_float(one.q[i]))), qb = fmaxf(qb, fabsf(vb_bf16_to_float(big.q[i])));
    CHECK_MSG(kv1 > 0.99f && kv1 <= 1.0f, "largest |kv| %g at amplitude 1", kv1);
    CHECK_MSG(kvb > 65504.f && kvb <= 1e6f, "largest |kv| %g at amplitude 1e6", kvb);
    CHECK_MSG(qb > q1 * 0.9e-6f && qb < q1 * 1.1e-6f, "largest |q| %g at amplitude 1e6, %g at 1", qb, q1);
    vb_instance_free(&one), vb_instance_free(&big);
    vb_scenario_list_free(&l);
}

/* A graph bucket pads the batch, but the oracle (the costly part without a GPU) runs on the
 * live requests only: padding rows are never compared against it. */
static void test_oracle_skips_padding(void)
{
    vb_scenario_list l = load("{\"name\": \"p\", \"batch\": {\"size\": 1, \"prefix_len\": 16}, \"graph\": {\"bucket\": 64}}");
    vb_prepared p;
    char why[300];
    CHECK_MSG(vb_prepare(&l.items[0], &l.items[0].base, 64, NULL, 0, 1, &p, why, sizeof why) == 0, "%s", why);
    CHECK(p.in.batch == 64 && p.in.live_batch == 1 && p.ref.tokens == p.in.live_tokens);
    vb_prepared_free(&p);
    vb_scenario_list_free(&l);
}

int main(void)
{
    test_value_mapping();
    test_determinism();
    test_layouts();
    test_widths_and_overflow();
    test_hidden_prefix();
    test_kv_amplitude();
    test_oracle_skips_padding();
    TEST_MAIN_END();
}
