/* cpu_splitk: the seed's split-K design run on the CPU in fp32 (64 splits, online softmax,
 * a combine step, bf16 output). It is not a reference: it is a kernel-shaped output that
 * lets every check run without a GPU, and it can carry planted bugs so the tests can show
 * that each check fails when it should. */
#ifndef VB_CPU_MODEL_H
#define VB_CPU_MODEL_H

#include "verify_attn.h"

#define VB_CPU_MODEL_NAME "cpu_splitk"

typedef enum vb_cpu_bug {
    VB_BUG_NONE,
    VB_BUG_MASK_OFF_BY_ONE, /* tree columns read one column to the left */
    VB_BUG_WRONG_SLOT,      /* draft keys gathered from the next draft token's slot */
    VB_BUG_WRONG_SCALE,     /* 1/sqrt(d_qk) instead of sm_scale */
    VB_BUG_UNWRITTEN_ROW,   /* row (token 1, head 0) never stored */
    VB_BUG_STRAY_WRITE      /* also writes the row after the launch's last */
} vb_cpu_bug;

/* Computes p->o (and p->lse if not NULL) from host buffers: 0, or -1 (nothing written) when
 * the workers' split accumulators do not fit in host memory. */
int vb_cpu_model_run(const vb_verify_params *p, vb_cpu_bug bug, int threads);

#endif
