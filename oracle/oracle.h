/* The oracle: verify attention computed straight from the spec's formula, naive on
 * purpose. It reads the same parameter struct and the same packed index buffers the
 * kernels read (host copies), applies the mask exactly as written, and accumulates in
 * double. It shares no code with any kernel. */
#ifndef VB_ORACLE_H
#define VB_ORACLE_H

#include <stdint.h>

#include "verify_attn.h"

/* The most heads the oracle takes (its per-head accumulators live on the stack); scenarios are
 * held to it. */
#define VB_ORACLE_MAX_HEADS 128

typedef struct vb_oracle_out {
    int64_t tokens;  /* rows computed: qo_indptr[batch] */
    int heads, d_v;
    double *o;       /* [tokens, heads, d_v] */
    double *absw;    /* [tokens, heads, d_v]: sum_j p_j |v_j[d]|, the scale of the rounding error */
    double *lse;     /* [tokens, heads]: natural log; -inf where no key is visible */
    double *pmax;    /* [tokens, heads]: the largest softmax weight of the row */
} vb_oracle_out;

/* p holds host pointers. threads = 0 uses every CPU. Returns 0, or -1 out of memory. */
int vb_oracle_run(const vb_verify_params *p, int threads, vb_oracle_out *out);
void vb_oracle_free(vb_oracle_out *out);

#endif
