/* One variant's inputs with everything they are checked against: scenario -> inputs
 * (generated on the GPU when there is one) -> oracle -> token-verdict reference. */
#ifndef VB_PREPARE_H
#define VB_PREPARE_H

#include "gpu.h"
#include "inputs.h"
#include "oracle.h"
#include "scenario.h"
#include "verdict.h"

typedef struct vb_prepared {
    vb_instance in;
    vb_oracle_out ref;
    vb_verdict_ref vref;
    double oracle_s;    /* oracle and verdict wall time */
} vb_prepared;

/* bucket > v->batch pads the batch as SGLang pads a CUDA-graph bucket. gpu may be NULL
 * (host generation). 0 on success; -1 with why. */
int vb_prepare(const vb_scenario *s, const vb_variant *v, int bucket, vb_gpu *gpu, int verify_generator,
               int threads, vb_prepared *p, char *why, size_t why_len);
void vb_prepared_free(vb_prepared *p);

/* A key of everything that shapes the work of a launch over the live batch: batch, draft
 * tokens, heads, widths, page size, layout, every prefix length and the tree (hashed), and
 * the index dtypes. Baseline dumps are matched against it. */
void vb_shape_key(const vb_instance *in, const vb_scenario *s, char *out, size_t n);

#endif
