/* The oracle against cases computed independently: hand-derived closed forms on tiny
 * buffers, the mask applied exactly as written, request boundaries, both index widths, and
 * a second implementation written differently on random paged instances. */
#include "vbtest.h"

#include <math.h>

#include "inputs.h"
#include "oracle.h"
#include "scenario.h"
#include "vb_bf16.h"

static uint16_t bf(float x) { return vb_bf16_from_float(x); }

/* One request: P = 2 prefix keys at slots 1 and 2, T = 1 draft key at slot 3, one head,
 * d_qk = d_v = 2, q = (1, 0), keys (1, 0), (0, 1), (0.5, 0.5), scale 1. */
typedef struct tiny {
    uint16_t q[2], kv[4 * 2], o[2];
    int64_t kv_indptr[2], kv_indices[2], qo_indptr[2], out_cache_loc[1], mask_indptr[2];
    int32_t kv_indptr32[2], kv_indices32[2], qo_indptr32[2], out_cache_loc32[1], mask_indptr32[2];
    uint8_t mask[3];
    float lse[1];
} tiny;

static vb_verify_params tiny_params(tiny *t, int wide)
{
    const float kv[8] = {9, 9, 1, 0, 0, 1, 0.5f, 0.5f}; /* slot 0 unused here */
    for (int i = 0; i < 8; i++)
        t->kv[i] = bf(kv[i]);
    t->q[0] = bf(1), t->q[1] = bf(0);
    int64_t a[] = {0, 2}, idx[] = {1, 2}, qo[] = {0, 1}, ocl[] = {3}, mi[] = {0, 3};
    memcpy(t->kv_indptr, a, sizeof a), memcpy(t->kv_indices, idx, sizeof idx), memcpy(t->qo_indptr, qo, sizeof qo);
    memcpy(t->out_cache_loc, ocl, sizeof ocl), memcpy(t->mask_indptr, mi, sizeof mi);
    for (int i = 0; i < 2; i++) {
        t->kv_indptr32[i] = (int32_t)a[i], t->kv_indices32[i] = (int32_t)idx[i];
        t->qo_indptr32[i] = (int32_t)qo[i], t->mask_indptr32[i] = (int32_t)mi[i];
    }
    t->out_cache_loc32[0] = 3;
    vb_verify_params p;
    memset(&p, 0, sizeof p);
    p.batch = 1, p.heads = 1, p.d_qk = 2, p.d_v = 2, p.sm_scale = 1.0f, p.max_draft = 1, p.max_tokens = 1;
    p.q = t->q, p.stride_q_token = 2, p.stride_q_head = 2;
    p.kv_buffer = t->kv, p.stride_kv_slot = 2;
    p.custom_mask = t->mask;
    p.o = t->o, p.stride_o_token = 2, p.stride_o_head = 2, p.lse = t->lse;
    vb_index_width w = wide ? VB_I64 : VB_I32;
    p.kv_indptr_width = p.kv_indices_width = p.qo_indptr_width = p.out_cache_loc_width = p.mask_indptr_width = w;
    p.kv_indptr = wide ? (void *)t->kv_indptr : (void *)t->kv_indptr32;
    p.kv_indices = wide ? (void *)t->kv_indices : (void *)t->kv_indices32;
    p.qo_indptr = wide ? (void *)t->qo_indptr : (void *)t->qo_indptr32;
    p.out_cache_loc = wide ? (void *)t->out_cache_loc : (void *)t->out_cache_loc32;
    p.mask_indptr = wide ? (void *)t->mask_indptr : (void *)t->mask_indptr32;
    return p;
}

static void test_closed_forms(void)
{
    for (int wide = 0; wide < 2; wide++) {
        tiny t;
        vb_verify_params p = tiny_params(&t, wide);
        vb_oracle_out r;
        /* All visible: weights e^1, e^0, e^0.5. */
        memset(t.mask, 1, 3);
        CHECK(vb_oracle_run(&p, 2, &r) == 0 && r.tokens == 1);
        double z = exp(1) + 1 + exp(0.5);
        double o0 = (exp(1) * 1 + 0 + exp(0.5) * 0.5) / z, o1 = (0 + 1 + exp(0.5) * 0.5) / z;
        CHECK(fabs(r.o[0] - o0) < 1e-12 && fabs(r.o[1] - o1) < 1e-12);
        CHECK(fabs(r.lse[0] - log(z)) < 1e-12);
        CHECK(fabs(r.pmax[0] - exp(1) / z) < 1e-12);
        CHECK(fabs(r.absw[0] - (exp(1) + exp(0.5) * 0.5) / z) < 1e-12); /* sum p|v| */
        vb_oracle_free(&r);
        /* The first prefix key hidden: the mask is applied to prefix columns too. */
        t.mask[0] = 0;
        CHECK(vb_oracle_run(&p, 1, &r) == 0);
        z = 1 + exp(0.5);
        CHECK(fabs(r.o[0] - exp(0.5) * 0.5 / z) < 1e-12 && fabs(r.o[1] - (1 + exp(0.5) * 0.5) / z) < 1e-12);
        vb_oracle_free(&r);
        /* Nothing visible: o = 0 and lse = -inf by the contract. */
        memset(t.mask, 0, 3);
        CHECK(vb_oracle_run(&p, 1, &r) == 0);
        CHECK(r.o[0] == 0 && r.o[1] == 0 && isinf(r.lse[0]) && r.lse[0] < 0);
        vb_oracle_free(&r);
    }
}

/* A second implementation, written differently: all scores of a row materialised, slots
 * looked up through a flat per-request key list. */
static double second_impl(const vb_instance *in, int64_t t, int h, int d)
{
    int b = (int)(t / in->draft), i = (int)(t % in->draft);
    int64_t P = in->prefix_len[b], n = P + in->draft, kv0 = 0;
    for (int x = 0; x < b; x++)
        kv0 += in->prefix_len[x];
    int64_t mask0 = 0;
    for (int x = 0; x < b; x++)
        mask0 += (int64_t)in->draft * (in->prefix_len[x] + in->draft);
    double *s = malloc(sizeof *s * (size_t)n), best = -INFINITY, z = 0, acc = 0;
    int64_t *slot = malloc(sizeof *slot * (size_t)n);
    for (int64_t j = 0; j < n; j++) {
        slot[j] = j < P ? vb_ibuf_get(in->kv_indices.data, in->kv_indices.width, kv0 + j)
                        : vb_ibuf_get(in->out_cache_loc.data, in->out_cache_loc.width, (int64_t)b * in->draft + j - P);
        double dot = 0;
        for (int k = 0; k < in->d_qk; k++)
            dot += (double)vb_bf16_to_float(in->q[(t * in->heads + h) * in->d_qk + k]) *
                   vb_bf16_to_float(in->kv[slot[j] * in->d_qk + k]);
        s[j] = in->custom_mask[mask0 + (int64_t)i * n + j] ? dot * in->sm_scale : -INFINITY;
        best = s[j] > best ? s[j] : best;
    }
    for (int64_t j = 0; j < n; j++)
        z += exp(s[j] - best);
    for (int64_t j = 0; j < n; j++)
        acc += exp(s[j] - best) / z * vb_bf16_to_float(in->kv[slot[j] * in->d_qk + d]);
    free(s), free(slot);
    return acc;
}

static void test_against_second_impl(void)
{
    vb_scenario_list l = {0};
    capture_begin();
    int rc = vb_scenario_load_text("o.json",
                                   "{\"model\": {\"heads\": 3, \"latent_dim\": 16, \"rope_dim\": 8},"
                                   " \"batch\": {\"size\": 4, \"prefix_len\": [0, 5, 130, 17]},"
                                   " \"tree\": {\"preset\": \"eagle\", \"topk\": 2, \"depth\": 3, \"nodes\": 6},"
                                   " \"kv_cache\": {\"page_size\": 16, \"layout\": \"fragmented\"},"
                                   " \"index_dtypes\": {\"kv_indices\": \"int32\", \"mask_indptr\": \"int32\"},"
                                   " \"graph\": {\"bucket\": 6}}",
                                   &l);
    free(capture_end());
    CHECK(rc == 0);
    vb_instance in;
    char why[200];
    if (rc || vb_instance_build(&l.items[0], &l.items[0].base, 6, &in, why, sizeof why) ||
        vb_instance_fill_host(&in, why, sizeof why))
        return;
    vb_verify_params p = vb_instance_params(&in);
    vb_oracle_out r;
    CHECK(vb_oracle_run(&p, 3, &r) == 0 && r.tokens == in.tokens);
    double worst = 0;
    for (int64_t t = 0; t < in.tokens; t++)
        for (int h = 0; h < in.heads; h++)
            for (int d = 0; d < in.d_v; d += 5) {
                double e = fabs(r.o[(t * in.heads + h) * in.d_v + d] - second_impl(&in, t, h, d));
                worst = e > worst ? e : worst;
            }
    CHECK_MSG(worst < 1e-12, "oracle and second implementation differ by %g", worst);
    /* A NaN in an unused slot never reaches a result: the oracle gathers only owned slots. */
    int finite = 1;
    for (int64_t e = 0; e < in.tokens * in.heads * in.d_v; e++)
        finite &= isfinite(r.o[e]);
    CHECK(finite && in.n_unused > 0);
    vb_oracle_free(&r);
    vb_instance_free(&in);
    vb_scenario_list_free(&l);
}

int main(void)
{
    test_closed_forms();
    test_against_second_impl();
    TEST_MAIN_END();
}
