/* Checks of one kernel output against the oracle, in layers: stray writes past the
 * launch's rows, unwritten elements (the poison survived), NaN/Inf, numeric error within
 * the bf16-derived tolerance, lse, then the token-exact verdict. */
#ifndef VB_CHECKS_H
#define VB_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "inputs.h"
#include "oracle.h"
#include "result.h"
#include "verdict.h"

/* Float poison for lse, from the same all-ones bytes as VB_BF16_POISON. */
#define VB_F32_POISON 0xFFFFFFFFu

typedef struct vb_kernel_output {
    const uint16_t *o;       /* bf16 [capacity_tokens, heads, d_v] */
    const float *lse;        /* [capacity_tokens, heads], or NULL when not written */
    int64_t launch_tokens;   /* rows the launch covers (live + padding); all must be written */
    int64_t capacity_tokens; /* rows allocated; rows past the launch's must keep the poison */
} vb_kernel_output;

/* Fills c; returns VB_PASS or VB_FAIL, with the first failure described in msg. */
vb_status vb_check_output(const vb_instance *in, const vb_oracle_out *ref, const vb_verdict_ref *vref,
                          const vb_kernel_output *out, int threads, vb_checks *c, char *msg, size_t n);

/* Poison an output buffer pair on the host (the GPU path poisons on the device). */
void vb_poison_output(uint16_t *o, float *lse, int64_t tokens, int heads, int d_v);

#endif
