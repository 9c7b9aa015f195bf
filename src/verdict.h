/* Token-exact verification, as a speculative-decoding verifier decides.
 *
 * Each draft row's output (all heads, H·d_v values) goes through a fixed synthetic LM head;
 * its argmax is the target's token at that node. Walking the tree from the root, a child is
 * accepted when its draft token equals the target's token at its parent; the walk ends at
 * the first node with no accepted child, whose target token is the bonus token.
 * Draft tokens are synthesised from the oracle's tokens so that accepted paths vary in
 * length (each node has a child carrying the right token with probability accept_prob). */
#ifndef VB_VERDICT_H
#define VB_VERDICT_H

#include <stdint.h>

#include "inputs.h"
#include "oracle.h"

#define VB_LM_VOCAB 256
#define VB_LM_SEED 0x5EEDC0DEull
/* A row is a near-tie when the oracle's top-2 gap is within this many standard deviations
 * of what errors inside the tolerance can move it (see bound below). */
#define VB_TIE_SIGMAS 4.0

typedef struct vb_verdict_ref {
    int width;          /* heads * d_v */
    int vocab;
    float *lm_head;     /* [vocab, width], fixed by VB_LM_SEED */
    int requests, draft;
    int *draft_token;   /* [requests * draft] */
    int *top1;          /* oracle's token per live row */
    double *margin;     /* oracle's top-1 minus top-2 logit per live row */
    double *bound;      /* per live row: VB_TIE_SIGMAS x the std of the gap under tolerated errors */
    int *path;          /* [requests * draft]: accepted nodes after the root */
    int *path_len;      /* [requests] */
    int *bonus;         /* [requests] */
} vb_verdict_ref;

typedef struct vb_verdict {
    int64_t rows;           /* live rows compared */
    int64_t mismatches;     /* argmax differs where the oracle's margin is clear */
    int64_t near_ties;      /* argmax differs where the margin is within the error bound */
    int requests;
    int paths_equal;        /* requests whose accepted path and bonus match the oracle's */
    int paths_near_tie;     /* differing only through a near-tie */
    int64_t worst_row;      /* first clear mismatch, -1 if none */
    double accepted_mean;   /* the kernel's mean accepted length */
} vb_verdict;

/* Builds the LM head, the oracle's tokens and the synthetic draft tokens for instance in
 * (live requests only) from the oracle output. seed varies the draft tokens. */
int vb_verdict_prepare(const vb_instance *in, const vb_oracle_out *ref, double accept_prob,
                       uint64_t seed, int threads, vb_verdict_ref *out);
/* Judges a kernel's bf16 output o ([tokens, heads, d_v] rows) against the reference. */
vb_verdict vb_verdict_judge(const vb_verdict_ref *ref, const vb_instance *in, const uint16_t *o,
                            int threads);
/* The greedy walk: fills path (accepted nodes after the root), returns its length. */
int vb_tree_walk(const vb_tree *t, const int *draft_token, const int *target_token, int *path,
                 int *bonus);
double vb_verdict_oracle_accept_mean(const vb_verdict_ref *ref);
void vb_verdict_free(vb_verdict_ref *ref);

#endif
