/* The verify-attention kernel interface: one parameter struct holding SGLang's native
 * buffers, and a registry of kernels behind a plain C ABI.
 *
 * Contract: shared spec "verify-attention" (README, section "The contract"). For request b:
 *   P = kv_indptr[b+1] - kv_indptr[b]      prefix length
 *   T = qo_indptr[b+1] - qo_indptr[b]      draft tokens
 *   slot(j) = kv_indices[kv_indptr[b] + j]           j <  P
 *           = out_cache_loc[qo_indptr[b] + j - P]    j >= P
 *   visible(i, j) = custom_mask[mask_indptr[b] + i*(P+T) + j] != 0
 *   o[qo_indptr[b]+i, h] = softmax_j(sm_scale * q[.,h]·kv[slot(j)]) · kv[slot(j), 0:d_v]
 * A row with no visible key gets o = 0 and lse = -inf.
 *
 * Capture safety: a launch reads everything per-batch from the buffers (never by value),
 * its grid depends only on the capture limits (batch, max_draft, heads), it uses only the
 * workspace it is given, and it neither synchronises nor allocates. */
#ifndef VB_VERIFY_ATTN_H
#define VB_VERIFY_ATTN_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Width in bytes of an index buffer's elements: SGLang uses both, per buffer and path. */
typedef enum vb_index_width { VB_I32 = 4, VB_I64 = 8 } vb_index_width;

typedef struct vb_verify_params {
    /* Shape. */
    int32_t batch;      /* requests in the launch: the raw batch eagerly, the bucket in a graph */
    int32_t heads;      /* H, query heads on this GPU */
    int32_t d_qk;       /* kv_lora_rank + qk_rope_head_dim (576) */
    int32_t d_v;        /* kv_lora_rank (512): V is the first d_v columns of the KV row */
    float sm_scale;

    /* Capture limits: the grid and the workspace depend on these alone. */
    int32_t max_draft;  /* most draft tokens of one request (T_max) */
    int32_t max_tokens; /* q/o rows the grid covers: batch * max_draft */

    /* 1 when every prefix column of every mask row is 1 (SGLang's layout: its Triton kernel
     * never reads them), so a kernel may skip those mask bytes; 0: apply them as written. */
    int32_t prefix_visible;

    /* SGLang's buffers, read in place. Strides are in elements. */
    const uint16_t *q;          /* bf16 [tokens, heads, d_qk] */
    int64_t stride_q_token, stride_q_head;
    const uint16_t *kv_buffer;  /* bf16 [num_slots, d_qk]; slot 0 is the padding slot */
    int64_t stride_kv_slot;
    const void *kv_indptr;      /* [batch+1] */
    const void *kv_indices;     /* [sum P] token-level slots of every prefix */
    const void *qo_indptr;      /* [batch+1] */
    const void *out_cache_loc;  /* [tokens] slot of each draft token's KV */
    const void *mask_indptr;    /* [batch+1] start of request b's mask block */
    const uint8_t *custom_mask; /* bool or uint8, 0 = hidden */
    vb_index_width kv_indptr_width, kv_indices_width, qo_indptr_width, out_cache_loc_width,
        mask_indptr_width;

    uint16_t *o;                /* bf16 [tokens, heads, d_v] */
    int64_t stride_o_token, stride_o_head;
    float *lse;                 /* optional fp32 [tokens, heads], natural log; NULL to skip */
} vb_verify_params;

typedef struct vb_kernel {
    const char *name;
    const char *description;
    int min_cc;         /* lowest compute capability, e.g. 80 for sm_80 */
    int writes_lse;
    /* Workspace for a launch with these capture limits (pointers may be NULL). */
    size_t (*workspace_bytes)(const vb_verify_params *limits);
    /* 0 when the shape is supported; else 1 with the reason in why. */
    int (*unsupported)(const vb_verify_params *p, char *why, size_t why_len);
    /* Enqueue on the stream; returns the launch's error (cudaGetLastError). */
    cudaError_t (*launch)(const vb_verify_params *p, void *workspace, cudaStream_t stream);
} vb_kernel;

/* The registry (registry.c): every kernel that runs by default. */
extern const vb_kernel *const vb_kernels[];
extern const size_t vb_kernel_count;

/* Kernels that exist to prove the harness's checks can fail; run only when named. */
extern const vb_kernel *const vb_test_kernels[];
extern const size_t vb_test_kernel_count;

#ifdef __cplusplus
}
#endif
#endif
