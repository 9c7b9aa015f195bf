/* One verify step's inputs, built on the host exactly as SGLang lays them out: the paged
 * KV pool, the index buffers packed at the scenario's widths, the tree mask, q and KV.
 *
 * Structure (slots, indices, mask) comes from the variant; values come from cuRAND Philox
 * seeded by the variant's seed, on the host here or on the GPU (gpu.c) with the same bits. */
#ifndef VB_INPUTS_H
#define VB_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"
#include "verify_attn.h"

/* An index buffer as a kernel reads it: count elements of width bytes each. */
typedef struct vb_ibuf {
    void *data;
    int64_t count;
    vb_index_width width;
} vb_ibuf;

static inline int64_t vb_ibuf_get(const void *data, vb_index_width w, int64_t i)
{
    return w == VB_I64 ? ((const int64_t *)data)[i] : ((const int32_t *)data)[i];
}

static inline size_t vb_ibuf_bytes(const vb_ibuf *b) { return (size_t)b->count * (size_t)b->width; }

/* Host and device generate each stream with the same sequence of cuRAND calls (chunks of
 * at most VB_GEN_CHUNK words, each a multiple of 4), so both see the same bits. */
#define VB_GEN_CHUNK ((int64_t)1 << 24)
static inline int64_t vb_gen_round4(int64_t n) { return (n + 3) & ~(int64_t)3; }
static inline int64_t vb_gen_chunk_words(int64_t count)
{
    return count < VB_GEN_CHUNK ? vb_gen_round4(count > 0 ? count : 1) : VB_GEN_CHUNK;
}

/* One stream of synthetic values: count bf16 numbers from a Philox generator. */
typedef struct vb_gen_stream {
    uint64_t seed;
    int64_t count;
    int64_t row_len;          /* values per row */
    const float *amplitude;   /* [count / row_len]: values of row r lie in (-amp[r], amp[r]) */
} vb_gen_stream;

typedef struct vb_instance {
    int heads, d_qk, d_v;
    float sm_scale;
    int batch;             /* requests in the launch (the bucket when padded) */
    int live_batch;        /* real requests; batch - live_batch are padding */
    int draft;             /* T: draft tokens per request */
    vb_tree tree;
    int64_t *prefix_len;   /* [batch]; padding requests have 1 */
    int64_t tokens;        /* batch * T */
    int64_t live_tokens;   /* live_batch * T */
    int64_t num_slots;
    int page_size;

    vb_ibuf kv_indptr, kv_indices, qo_indptr, out_cache_loc, mask_indptr;
    uint8_t *custom_mask;
    int64_t mask_bytes;
    double prefix_hidden;  /* share of prefix mask columns written 0 (0: SGLang's all-visible) */
    uint64_t mask_seed;

    uint16_t *q;           /* bf16 [tokens, heads, d_qk] */
    uint16_t *kv;          /* bf16 [num_slots, d_qk] */
    int64_t *unused_slots; /* slots no request owns: filled with NaN */
    int64_t n_unused;
    float *q_amplitude;    /* [tokens]: sets each request's score spread (inputs.c) */
    float kv_amplitude;
    vb_gen_stream q_gen, kv_gen;
} vb_instance;

/* Builds the structure for variant v of scenario s, padded to bucket requests when
 * bucket > v->batch (SGLang's padding: prefix 1 at slot 0, draft slots 0, all-visible
 * mask). Allocates q and kv but leaves them unfilled. 0 on success; on failure writes
 * why (e.g. an offset too large for an int32 buffer) and returns -1. */
int vb_instance_build(const vb_scenario *s, const vb_variant *v, int bucket, vb_instance *out,
                      char *why, size_t why_len);
/* Fills q and kv on the host with cuRAND's host generator, and NaN in unused slots. */
int vb_instance_fill_host(vb_instance *in, char *why, size_t why_len);
/* Generates one stream's bf16 values on the host. */
int vb_gen_host(const vb_gen_stream *g, uint16_t *out, char *why, size_t why_len);
void vb_instance_poison_unused(vb_instance *in);

/* A parameter struct pointing at the host buffers: what the oracle reads. */
vb_verify_params vb_instance_params(const vb_instance *in);
/* The same for a launch over the first `batch` requests only (eager runs the live batch
 * of a padded instance: every buffer's prefix is exactly the unpadded instance's). */
vb_verify_params vb_instance_launch_params(const vb_instance *in, int batch);

/* Minimal device traffic and flops of a launch over the first batch requests: each KV row
 * a request reads, q, o, lse, indices and mask moved once. */
void vb_instance_traffic(const vb_instance *in, int batch, double *bytes, double *flops);

/* Buffer sizes of a variant padded to bucket, without building it: the CUDA-graph stage
 * sizes its static buffers as the largest over all variants. */
typedef struct vb_instance_sizes {
    int64_t tokens, sum_prefix, num_slots, mask_bytes;
} vb_instance_sizes;
void vb_instance_measure(const vb_variant *v, int bucket, vb_instance_sizes *out);
/* 0 when the index buffers at the scenario's widths can hold variant v padded to bucket; else
 * -1 with why (an int32 buffer would overflow). The run and validate both ask. */
int vb_instance_check(const vb_scenario *s, const vb_variant *v, int bucket, char *why, size_t why_len);
/* Host bytes the instance needs (q, kv pool, indices, mask): checked before building. */
double vb_instance_estimate_bytes(const vb_scenario *s, const vb_variant *v, int bucket);
void vb_instance_free(vb_instance *in);

#endif
