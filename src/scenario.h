/* Scenarios: what one verify step looks like (model shape, batch, draft tree, KV layout,
 * index widths), how it is captured and replayed in a CUDA graph, and how it is timed.
 *
 * A scenario file is parsed and validated into fully resolved values: prefix lengths
 * become one number per request and tree presets become a parents array, so everything
 * downstream works on plain data. */
#ifndef VB_SCENARIO_H
#define VB_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "verify_attn.h"

#define VB_MAX_CONTEXT 262144 /* positions in Kimi K2.5/K2.6 configs; P + T may not exceed it */
#define VB_MAX_BATCH 1024
#define VB_MAX_NODES 256
#define VB_MAX_REPLAYS 64
#define VB_NAME_MAX 160

typedef enum vb_layout { VB_LAYOUT_CONTIGUOUS, VB_LAYOUT_SHUFFLED, VB_LAYOUT_FRAGMENTED } vb_layout;

/* A draft tree: node 0 is the root, parent[i] < i for every other node. */
typedef struct vb_tree {
    int nodes;
    int *parent;      /* [nodes], parent[0] = -1 */
    char label[48];   /* "chain16", "eagle8", "ddtree9", "explicit5" */
} vb_tree;

/* What may change between two replays of one captured graph. */
typedef struct vb_variant {
    char name[VB_NAME_MAX];
    int batch;                /* live requests */
    int64_t *prefix_len;      /* [batch] */
    char prefix_label[48];    /* "200000", "list", "rand[1,4096]" */
    vb_tree tree;
    double accept_prob;       /* chance that a node has a child the target accepts */
    int page_size;
    vb_layout layout;
    double free_fraction;     /* fragmented layout: share of pages left free */
    double kv_amplitude;      /* KV values lie in (-kv_amplitude, kv_amplitude) */
    uint64_t seed;
} vb_variant;

typedef struct vb_index_dtypes {
    vb_index_width kv_indptr, kv_indices, qo_indptr, out_cache_loc, mask_indptr;
    int mask_is_bool;         /* bool (1) or uint8 (0): one byte either way */
} vb_index_dtypes;

typedef struct vb_timing_spec {
    int warmup;
    int iterations;           /* most samples */
    int min_samples;          /* fewest samples before the noise target may stop a run */
    double noise;             /* stop once (p90 - p10) / 2 / median is at or under this */
    double max_time_ms;       /* stop sampling past this much kernel time (at least 3 samples) */
    int cold_l2;              /* also time with the L2 flushed before every sample */
} vb_timing_spec;

typedef struct vb_scenario {
    char name[VB_NAME_MAX];
    char file[256];
    int heads, latent_dim, rope_dim;
    double sm_scale;
    vb_variant base;
    vb_index_dtypes dtypes;
    double prefix_hidden;     /* mask.prefix_hidden: share of prefix columns hidden per mask row
                               * (0: SGLang's layout, every prefix column visible) */
    int graph_enabled;
    int bucket;               /* captured batch size, >= every variant's batch */
    int n_replays;
    vb_variant *replays;      /* [n_replays], replayed after the base */
    vb_timing_spec timing;
} vb_scenario;

typedef struct vb_scenario_list {
    vb_scenario *items;
    int count, cap;
} vb_scenario_list;

static inline int vb_scenario_d_qk(const vb_scenario *s) { return s->latent_dim + s->rope_dim; }
static inline int vb_scenario_d_v(const vb_scenario *s) { return s->latent_dim; }
/* Draft tokens per request in the captured graph: the largest tree of any variant. */
int vb_scenario_max_draft(const vb_scenario *s);

/* Parse one file into the list. Every problem is printed to stderr as one line
 * "FILE: json.path: reason"; returns the number of problems (0 = all scenarios added).
 * Each scenario of a list and each combination of a sweep stands alone: the bad ones are
 * left out, the good ones added. */
int vb_scenario_load_file(const char *path, vb_scenario_list *out);
/* The same from text already in memory (file is used in messages only). */
int vb_scenario_load_text(const char *file, const char *text, vb_scenario_list *out);

void vb_scenario_list_free(vb_scenario_list *list);
void vb_scenario_free(vb_scenario *s);
void vb_variant_free(vb_variant *v);
int vb_variant_copy(vb_variant *dst, const vb_variant *src);

const char *vb_layout_name(vb_layout l);
const char *vb_index_width_name(vb_index_width w);

#endif
