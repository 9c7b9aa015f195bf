#include "inputs.h"

#include <curand.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prng.h"
#include "tree.h"
#include "vb_bf16.h"

/* Standard deviation of the scaled scores for a request with n keys. Real attention is
 * peaked: a few keys carry much of the weight at any length. Scores of spread
 * 0.75·sqrt(2 ln n) keep the largest weight of a row roughly between 0.05 and 0.6 from
 * 20 to 200k keys: far from flat (1/n), far from one-hot. */
static double score_std(int64_t n)
{
    double s = 0.75 * sqrt(2.0 * log((double)(n > 2 ? n : 2)));
    return s > 1.0 ? s : 1.0;
}

enum { STREAM_Q = 0x71, STREAM_KV = 0x6B76 };

static int ibuf_alloc(vb_ibuf *b, int64_t count, vb_index_width w)
{
    b->count = count;
    b->width = w;
    b->data = malloc((size_t)(count ? count : 1) * (size_t)w);
    return b->data ? 0 : -1;
}

static int ibuf_set(vb_ibuf *b, int64_t i, int64_t value)
{
    if (b->width == VB_I64) {
        ((int64_t *)b->data)[i] = value;
        return 0;
    }
    if (value > INT32_MAX)
        return -1;
    ((int32_t *)b->data)[i] = (int32_t)value;
    return 0;
}

/* Pages a variant uses: Σ ceil((P+T)/page) for the live requests, plus the pages a
 * fragmented layout leaves free between them. */
static void count_pages(const vb_variant *v, int T, int64_t *used, int64_t *free_pages)
{
    *used = 0;
    for (int b = 0; b < v->batch; b++)
        *used += (v->prefix_len[b] + T + v->page_size - 1) / v->page_size;
    *free_pages = 0;
    if (v->layout == VB_LAYOUT_FRAGMENTED && v->free_fraction > 0)
        *free_pages = (int64_t)ceil((double)*used * v->free_fraction / (1.0 - v->free_fraction));
}

/* Page ids for every live request's P+T tokens, in order: page 0 stays reserved. */
static int64_t *assign_pages(const vb_variant *v, int T, int64_t *first_page, int64_t *total_pages)
{
    int64_t used, free_pages, at = 0;
    for (int b = 0; b < v->batch; b++) {
        first_page[b] = at;
        at += (v->prefix_len[b] + T + v->page_size - 1) / v->page_size;
    }
    count_pages(v, T, &used, &free_pages);
    *total_pages = 1 + used + free_pages;
    int64_t *order = malloc(sizeof *order * (size_t)(used + free_pages + 1));
    if (!order)
        return NULL;
    vb_prng rng = vb_prng_make(v->seed, 0x9A6E5);
    int64_t n = used + free_pages;
    for (int64_t i = 0; i < n; i++)
        order[i] = i + 1;
    if (v->layout == VB_LAYOUT_SHUFFLED) {
        for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
            int64_t j = vb_prng_range(&rng, 0, i), x = order[i];
            order[i] = order[j], order[j] = x;
        }
    } else if (v->layout == VB_LAYOUT_FRAGMENTED) {
        /* Drop free_pages random pages from the ascending list: requests keep runs of
         * consecutive pages with holes between them, as a long-running allocator leaves. */
        uint8_t *hole = calloc((size_t)n + 1, 1);
        if (!hole) {
            free(order);
            return NULL;
        }
        for (int64_t k = 0; k < free_pages;) {
            int64_t j = vb_prng_range(&rng, 0, n - 1);
            if (!hole[j])
                hole[j] = 1, k++;
        }
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++)
            if (!hole[i])
                order[m++] = i + 1;
        free(hole);
    }
    return order;
}

/* Whether every offset this instance stores fits the index widths the scenario asks for: an
 * int32 buffer cannot hold a slot, prefix or mask offset past INT32_MAX. */
static int check_sizes(const vb_scenario *s, const vb_instance_sizes *z, char *why, size_t why_len)
{
    const vb_index_dtypes *d = &s->dtypes;
    const int64_t lim = INT32_MAX;
    if (!((d->kv_indices == VB_I32 && z->num_slots > lim) || (d->out_cache_loc == VB_I32 && z->num_slots > lim) ||
          (d->kv_indptr == VB_I32 && z->sum_prefix > lim) || (d->mask_indptr == VB_I32 && z->mask_bytes > lim) ||
          (d->qo_indptr == VB_I32 && z->tokens > lim)))
        return 0;
    snprintf(why, why_len, "index_dtypes: an int32 buffer cannot hold this scenario's offsets "
             "(%lld slots, %lld prefix indices, %lld mask bytes): use int64",
             (long long)z->num_slots, (long long)z->sum_prefix, (long long)z->mask_bytes);
    return -1;
}

static int build_mask(vb_instance *in)
{
    int T = in->draft;
    int64_t off = 0;
    vb_prng rng = vb_prng_make(in->mask_seed, 0x3A5C);
    for (int b = 0; b < in->batch; b++) {
        int64_t P = in->prefix_len[b], cols = P + T;
        int padding = b >= in->live_batch;
        if (ibuf_set(&in->mask_indptr, b, off))
            return -1;
        for (int i = 0; i < T; i++) {
            uint8_t *row = in->custom_mask + off + (int64_t)i * cols;
            memset(row, 1, (size_t)P);
            for (int64_t j = 0; in->prefix_hidden > 0 && !padding && j < P; j++)
                row[j] = vb_prng_unit(&rng) >= in->prefix_hidden;
            for (int k = 0; k < T; k++)
                row[P + k] = padding || vb_tree_sees(&in->tree, i, k);
        }
        off += (int64_t)T * cols;
    }
    return ibuf_set(&in->mask_indptr, in->batch, off);
}

/* The instance's shape: sizes, heads, the draft tree's size and the seed of its mask. */
static void set_shape(const vb_scenario *s, const vb_variant *v, int B, vb_instance *in)
{
    const int T = v->tree.nodes;
    in->heads = s->heads;
    in->d_qk = vb_scenario_d_qk(s);
    in->d_v = vb_scenario_d_v(s);
    in->sm_scale = (float)s->sm_scale;
    in->batch = B;
    in->live_batch = v->batch;
    in->draft = T;
    in->page_size = v->page_size;
    in->prefix_hidden = s->prefix_hidden;
    in->mask_seed = v->seed;
    in->tokens = (int64_t)B * T;
    in->live_tokens = (int64_t)v->batch * T;
}

/* q, the KV cache, the mask and SGLang's index buffers in the scenario's widths: 0, or -1
 * when out of memory. */
static int alloc_buffers(const vb_scenario *s, const vb_instance_sizes *z, vb_instance *in)
{
    const int B = in->batch;
    in->custom_mask = malloc((size_t)z->mask_bytes);
    in->q = malloc(sizeof *in->q * (size_t)(in->tokens * in->heads * in->d_qk));
    in->kv = malloc(sizeof *in->kv * (size_t)(in->num_slots * in->d_qk));
    if (!in->custom_mask || !in->q || !in->kv || ibuf_alloc(&in->kv_indptr, B + 1, s->dtypes.kv_indptr) ||
        ibuf_alloc(&in->kv_indices, z->sum_prefix, s->dtypes.kv_indices) ||
        ibuf_alloc(&in->qo_indptr, B + 1, s->dtypes.qo_indptr) ||
        ibuf_alloc(&in->out_cache_loc, in->tokens, s->dtypes.out_cache_loc) ||
        ibuf_alloc(&in->mask_indptr, B + 1, s->dtypes.mask_indptr))
        return -1;
    return 0;
}

/* SGLang's indices: request b's key t lives in slot pages[first_page[b] + t / page] · page +
 * t % page; its P prefix keys go to kv_indices, its T draft tokens' to out_cache_loc. A graph
 * bucket's padding requests point every key at slot 0. Marks the slots a request owns in
 * OWNED; nonzero when an index overflowed its buffer's width. */
static int map_slots(vb_instance *in, const int64_t *pages, const int64_t *first_page, uint8_t *owned)
{
    const int T = in->draft, ps = in->page_size;
    int64_t kvo = 0;
    int overflow = 0;
    owned[0] = 1; /* the padding slot holds finite values */
    for (int b = 0; b < in->batch; b++) {
        const int64_t P = in->prefix_len[b];
        overflow |= ibuf_set(&in->kv_indptr, b, kvo) | ibuf_set(&in->qo_indptr, b, (int64_t)b * T);
        for (int64_t t = 0; t < P + T; t++) {
            int64_t slot = 0;
            if (b < in->live_batch) {
                slot = pages[first_page[b] + t / ps] * ps + t % ps;
                owned[slot] = 1;
            }
            if (t < P)
                overflow |= ibuf_set(&in->kv_indices, kvo + t, slot);
            else
                overflow |= ibuf_set(&in->out_cache_loc, (int64_t)b * T + (t - P), slot);
        }
        kvo += P;
    }
    return overflow | ibuf_set(&in->kv_indptr, in->batch, kvo) |
           ibuf_set(&in->qo_indptr, in->batch, (int64_t)in->batch * T);
}

/* The slots no request owns, which the inputs fill with NaN so that a stray read shows: 0, or
 * -1 when out of memory. */
static int list_unused_slots(vb_instance *in, const uint8_t *owned)
{
    for (int64_t i = 0; i < in->num_slots; i++)
        in->n_unused += !owned[i];
    in->unused_slots = malloc(sizeof *in->unused_slots * (size_t)(in->n_unused + 1));
    if (!in->unused_slots)
        return -1;
    for (int64_t i = 0, k = 0; i < in->num_slots; i++)
        if (!owned[i])
            in->unused_slots[k++] = i;
    return 0;
}

/* q's amplitude per token and the cuRAND streams of q and the KV cache: 0, or -1 when out of
 * memory. Scores are sm_scale * q·k with q ~ U(-a, a), k ~ U(-A, A) over d_qk terms (A the KV
 * amplitude): std = sm_scale * sqrt(d_qk) * a * A / 3, so a = 3 * std / (sm_scale * sqrt(d_qk)
 * * A): the amplitude scales the values, not the scores. */
static int set_value_streams(const vb_scenario *s, const vb_variant *v, vb_instance *in)
{
    const int T = in->draft;
    in->q_amplitude = malloc(sizeof *in->q_amplitude * (size_t)in->tokens);
    if (!in->q_amplitude)
        return -1;
    for (int64_t t = 0; t < in->tokens; t++) {
        int64_t keys = in->prefix_len[t / T] + T;
        in->q_amplitude[t] =
            (float)(3.0 * score_std(keys) / (s->sm_scale * sqrt((double)in->d_qk) * v->kv_amplitude));
    }
    in->kv_amplitude = (float)v->kv_amplitude;
    in->q_gen = (vb_gen_stream){vb_seed_mix(v->seed, STREAM_Q), in->tokens * in->heads * in->d_qk,
                                (int64_t)in->heads * in->d_qk, in->q_amplitude};
    in->kv_gen = (vb_gen_stream){vb_seed_mix(v->seed, STREAM_KV), in->num_slots * in->d_qk, in->num_slots * in->d_qk,
                                 &in->kv_amplitude};
    return 0;
}

int vb_instance_build(const vb_scenario *s, const vb_variant *v, int bucket, vb_instance *in,
                      char *why, size_t why_len)
{
    memset(in, 0, sizeof *in);
    vb_instance_sizes z;
    vb_instance_measure(v, bucket, &z);
    if (check_sizes(s, &z, why, why_len))
        return -1;
    const int B = bucket > v->batch ? bucket : v->batch;
    set_shape(s, v, B, in);
    in->mask_bytes = z.mask_bytes;
    in->prefix_len = malloc(sizeof *in->prefix_len * (size_t)B);
    int64_t *first_page = malloc(sizeof *first_page * (size_t)v->batch), *pages = NULL, total_pages = 0;
    uint8_t *owned = NULL;
    int rc = -1; /* out of memory until the end */
    if (!in->prefix_len || !first_page || vb_tree_copy(&in->tree, &v->tree))
        goto done;
    for (int b = 0; b < B; b++)
        in->prefix_len[b] = b < v->batch ? v->prefix_len[b] : 1;
    if (!(pages = assign_pages(v, in->draft, first_page, &total_pages)))
        goto done;
    in->num_slots = total_pages * v->page_size;
    if (!(owned = calloc((size_t)in->num_slots, 1)) || alloc_buffers(s, &z, in))
        goto done;
    if (map_slots(in, pages, first_page, owned) || build_mask(in)) { /* check_sizes() rules this out */
        snprintf(why, why_len, "internal: an index did not fit its buffer");
        rc = -2;
        goto done;
    }
    if (list_unused_slots(in, owned) == 0 && set_value_streams(s, v, in) == 0)
        rc = 0;
done:
    free(first_page), free(pages), free(owned);
    if (rc == -1)
        snprintf(why, why_len, "batch: too little host memory for the inputs");
    if (rc)
        vb_instance_free(in);
    return rc ? -1 : 0;
}

int vb_gen_host(const vb_gen_stream *g, uint16_t *out, char *why, size_t why_len)
{
    curandGenerator_t gen;
    int64_t chunk = vb_gen_chunk_words(g->count);
    uint32_t *bits = malloc(sizeof *bits * (size_t)chunk);
    curandStatus_t st = bits ? curandCreateGeneratorHost(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10)
                             : CURAND_STATUS_ALLOCATION_FAILED;
    if (st != CURAND_STATUS_SUCCESS) {
        snprintf(why, why_len, "cuRAND host generator: status %d", (int)st);
        free(bits);
        return -1;
    }
    st = curandSetPseudoRandomGeneratorSeed(gen, g->seed);
    for (int64_t done = 0; st == CURAND_STATUS_SUCCESS && done < g->count; done += chunk) {
        int64_t n = g->count - done < chunk ? g->count - done : chunk;
        st = curandGenerate(gen, bits, (size_t)vb_gen_round4(n));
        for (int64_t i = 0; i < n; i++)
            out[done + i] = vb_synth_bf16(bits[i], g->amplitude[(done + i) / g->row_len]);
    }
    curandDestroyGenerator(gen);
    free(bits);
    if (st != CURAND_STATUS_SUCCESS) {
        snprintf(why, why_len, "cuRAND host generation failed: status %d", (int)st);
        return -1;
    }
    return 0;
}

void vb_instance_poison_unused(vb_instance *in)
{
    for (int64_t k = 0; k < in->n_unused; k++) {
        uint16_t *row = in->kv + in->unused_slots[k] * in->d_qk;
        for (int d = 0; d < in->d_qk; d++)
            row[d] = VB_BF16_NAN;
    }
}

int vb_instance_fill_host(vb_instance *in, char *why, size_t why_len)
{
    if (vb_gen_host(&in->q_gen, in->q, why, why_len) || vb_gen_host(&in->kv_gen, in->kv, why, why_len))
        return -1;
    vb_instance_poison_unused(in);
    return 0;
}

int vb_instance_check(const vb_scenario *s, const vb_variant *v, int bucket, char *why, size_t why_len)
{
    vb_instance_sizes z;
    vb_instance_measure(v, bucket, &z);
    return check_sizes(s, &z, why, why_len);
}

void vb_instance_measure(const vb_variant *v, int bucket, vb_instance_sizes *out)
{
    int T = v->tree.nodes, B = bucket > v->batch ? bucket : v->batch;
    int64_t used, free_pages;
    count_pages(v, T, &used, &free_pages);
    out->tokens = (int64_t)B * T;
    out->num_slots = (1 + used + free_pages) * v->page_size;
    out->sum_prefix = out->mask_bytes = 0;
    for (int b = 0; b < B; b++) {
        int64_t P = b < v->batch ? v->prefix_len[b] : 1;
        out->sum_prefix += P;
        out->mask_bytes += (int64_t)T * (P + T);
    }
}

void vb_instance_traffic(const vb_instance *in, int batch, double *bytes, double *flops)
{
    double keys = 0, mask = 0, T = in->draft, H = in->heads;
    for (int b = 0; b < batch; b++) {
        keys += (double)in->prefix_len[b] + T;
        mask += T * ((double)in->prefix_len[b] + T);
    }
    double tokens = (double)batch * T;
    double index_bytes = (3.0 * (batch + 1) * 8) + (keys - tokens) * in->kv_indices.width +
                         tokens * in->out_cache_loc.width;
    *bytes = keys * in->d_qk * 2.0 + tokens * H * (in->d_qk * 2.0 + in->d_v * 2.0 + 4.0) + index_bytes + mask;
    *flops = 2.0 * T * H * keys * (in->d_qk + in->d_v);
}

vb_verify_params vb_instance_launch_params(const vb_instance *in, int batch)
{
    vb_verify_params p = vb_instance_params(in);
    p.batch = batch;
    p.max_tokens = (int32_t)((int64_t)batch * in->draft);
    return p;
}

vb_verify_params vb_instance_params(const vb_instance *in)
{
    vb_verify_params p;
    memset(&p, 0, sizeof p);
    p.batch = in->batch;
    p.heads = in->heads;
    p.d_qk = in->d_qk;
    p.d_v = in->d_v;
    p.sm_scale = in->sm_scale;
    p.max_draft = in->draft;
    p.max_tokens = (int32_t)in->tokens;
    p.prefix_visible = in->prefix_hidden == 0; /* build_mask() wrote SGLang's all-visible prefix columns */
    p.q = in->q;
    p.stride_q_head = in->d_qk;
    p.stride_q_token = (int64_t)in->heads * in->d_qk;
    p.kv_buffer = in->kv;
    p.stride_kv_slot = in->d_qk;
    p.kv_indptr = in->kv_indptr.data;
    p.kv_indices = in->kv_indices.data;
    p.qo_indptr = in->qo_indptr.data;
    p.out_cache_loc = in->out_cache_loc.data;
    p.mask_indptr = in->mask_indptr.data;
    p.custom_mask = in->custom_mask;
    p.kv_indptr_width = in->kv_indptr.width;
    p.kv_indices_width = in->kv_indices.width;
    p.qo_indptr_width = in->qo_indptr.width;
    p.out_cache_loc_width = in->out_cache_loc.width;
    p.mask_indptr_width = in->mask_indptr.width;
    p.stride_o_head = in->d_v;
    p.stride_o_token = (int64_t)in->heads * in->d_v;
    return p;
}

double vb_instance_estimate_bytes(const vb_scenario *s, const vb_variant *v, int bucket)
{
    int T = v->tree.nodes, B = bucket > v->batch ? bucket : v->batch;
    double tokens = 0, mask = 0;
    for (int b = 0; b < B; b++) {
        double P = b < v->batch ? (double)v->prefix_len[b] : 1.0;
        tokens += P + T + v->page_size;
        mask += (double)T * (P + T);
    }
    if (v->layout == VB_LAYOUT_FRAGMENTED)
        tokens /= 1.0 - v->free_fraction;
    double d = vb_scenario_d_qk(s), live_rows = (double)v->batch * T * s->heads;
    /* slots and indices, the mask, q for every request, and the oracle's doubles for the live
     * rows (o and absw per value dim, lse and pmax per row) */
    return tokens * (2.0 * d + 8.0 * 3 + 1) + mask + (double)B * T * s->heads * d * 2.0 +
           live_rows * (2.0 * vb_scenario_d_v(s) + 2.0) * 8.0;
}

void vb_instance_free(vb_instance *in)
{
    if (!in)
        return;
    free(in->prefix_len);
    free(in->kv_indptr.data), free(in->kv_indices.data), free(in->qo_indptr.data);
    free(in->out_cache_loc.data), free(in->mask_indptr.data);
    free(in->custom_mask), free(in->q), free(in->kv), free(in->unused_slots), free(in->q_amplitude);
    vb_tree_free(&in->tree);
    memset(in, 0, sizeof *in);
}
