#include "tree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prng.h"

enum { DDTREE_BRANCH = 4 };

static int tree_alloc(vb_tree *t, int nodes)
{
    t->nodes = nodes;
    t->parent = malloc(sizeof *t->parent * (size_t)nodes);
    return t->parent ? 0 : -1;
}

int vb_tree_chain(int nodes, vb_tree *t)
{
    if (tree_alloc(t, nodes))
        return -1;
    for (int i = 0; i < nodes; i++)
        t->parent[i] = i - 1;
    snprintf(t->label, sizeof t->label, "chain%d", nodes);
    return 0;
}

/* A candidate node while a tree is being grown: its parent among the candidates, its depth
 * and its cumulative log-probability under the synthetic drafter. */
typedef struct candidate {
    int parent;
    int depth;
    double score;
} candidate;

/* Probabilities of a node's top-k children: sorted, summing to less than one. */
static void draw_child_probs(vb_prng *rng, int k, double *p)
{
    double sum = 0;
    for (int i = 0; i < k; i++) {
        p[i] = 0.05 + vb_prng_unit(rng);
        sum += p[i];
    }
    double mass = 0.6 + 0.35 * vb_prng_unit(rng); /* what the top-k leave of the vocabulary */
    for (int i = 0; i < k; i++)
        p[i] *= mass / sum;
    for (int i = 1; i < k; i++) /* insertion sort, descending */
        for (int j = i; j > 0 && p[j] > p[j - 1]; j--) {
            double x = p[j];
            p[j] = p[j - 1];
            p[j - 1] = x;
        }
}

static int cmp_score_desc(const void *a, const void *b, const candidate *c)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (c[x].score != c[y].score)
        return c[x].score > c[y].score ? -1 : 1;
    return x - y;
}

static const candidate *sort_ctx;
static int cmp_by_score(const void *a, const void *b) { return cmp_score_desc(a, b, sort_ctx); }
static int cmp_by_depth_score(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (sort_ctx[x].depth != sort_ctx[y].depth)
        return sort_ctx[x].depth - sort_ctx[y].depth;
    return cmp_score_desc(a, b, sort_ctx);
}

/* Turn the chosen candidates (ancestor-closed, root included) into a tree whose nodes are
 * ordered by depth then score, so every parent comes before its children. */
static int tree_from_candidates(const candidate *c, int *chosen, int nodes, vb_tree *t, int ncand)
{
    sort_ctx = c;
    qsort(chosen, (size_t)nodes, sizeof *chosen, cmp_by_depth_score);
    int *index_of = malloc(sizeof *index_of * (size_t)ncand);
    if (!index_of || tree_alloc(t, nodes)) {
        free(index_of);
        return -1;
    }
    for (int i = 0; i < nodes; i++)
        index_of[chosen[i]] = i;
    for (int i = 0; i < nodes; i++) {
        int p = c[chosen[i]].parent;
        t->parent[i] = p < 0 ? -1 : index_of[p];
    }
    free(index_of);
    return 0;
}

int vb_tree_eagle(int topk, int depth, int nodes, uint64_t seed, vb_tree *t, char *why, size_t n)
{
    long pool = 1 + topk + (long)(depth - 1) * topk * topk;
    if (nodes > pool) {
        snprintf(why, n, "%d nodes exceed the %ld candidates that topk %d and depth %d produce",
                 nodes, pool, topk, depth);
        return 1;
    }
    candidate *c = calloc((size_t)pool, sizeof *c);
    int *beam = malloc(sizeof *beam * (size_t)(topk * topk + 1));
    int *order = malloc(sizeof *order * (size_t)pool);
    double *p = malloc(sizeof *p * (size_t)topk);
    if (!c || !beam || !order || !p)
        goto fail;
    vb_prng rng = vb_prng_make(seed, 0xEA61E);
    int ncand = 1, nbeam = 1;
    c[0] = (candidate){-1, 0, 0.0};
    beam[0] = 0;
    for (int level = 1; level <= depth; level++) {
        int first = ncand;
        for (int b = 0; b < nbeam; b++) {
            draw_child_probs(&rng, topk, p);
            for (int k = 0; k < topk; k++)
                c[ncand++] = (candidate){beam[b], level, c[beam[b]].score + log(p[k])};
        }
        /* The next beam: the topk best of this level. */
        int nlevel = ncand - first;
        for (int i = 0; i < nlevel; i++)
            beam[i] = first + i;
        sort_ctx = c;
        qsort(beam, (size_t)nlevel, sizeof *beam, cmp_by_score);
        nbeam = nlevel < topk ? nlevel : topk;
    }
    /* Scores fall strictly along every path, so the best nodes-1 are ancestor-closed. */
    for (int i = 0; i < ncand - 1; i++)
        order[i] = i + 1;
    sort_ctx = c;
    qsort(order, (size_t)(ncand - 1), sizeof *order, cmp_by_score);
    memmove(order + 1, order, sizeof *order * (size_t)(nodes - 1));
    order[0] = 0;
    int rc = tree_from_candidates(c, order, nodes, t, ncand);
    snprintf(t->label, sizeof t->label, "eagle%d", nodes);
    free(c), free(beam), free(order), free(p);
    return rc;
fail:
    free(c), free(beam), free(order), free(p);
    return -1;
}

int vb_tree_ddtree(int nodes, uint64_t seed, vb_tree *t)
{
    /* Per-depth marginals, as a block drafter proposes them; a depth-d node's children are
     * the top DDTREE_BRANCH tokens at position d+1. Best-first over cumulative probability. */
    size_t cap = (size_t)nodes * (DDTREE_BRANCH + 1) + 1;
    candidate *c = calloc(cap, sizeof *c);
    int *open = malloc(sizeof *open * cap), *chosen = malloc(sizeof *chosen * (size_t)nodes);
    double (*marg)[DDTREE_BRANCH] = malloc(sizeof *marg * (size_t)(nodes + 1));
    if (!c || !open || !chosen || !marg) {
        free(c), free(open), free(chosen), free(marg);
        return -1;
    }
    vb_prng rng = vb_prng_make(seed, 0xDD7EE);
    for (int d = 0; d <= nodes; d++)
        draw_child_probs(&rng, DDTREE_BRANCH, marg[d]);
    int ncand = 1, nopen = 1, nchosen = 0;
    c[0] = (candidate){-1, 0, 0.0};
    open[0] = 0;
    while (nchosen < nodes) {
        int best = 0; /* linear scan: budgets are small */
        for (int i = 1; i < nopen; i++)
            if (c[open[i]].score > c[open[best]].score)
                best = i;
        int node = open[best];
        open[best] = open[--nopen];
        chosen[nchosen++] = node;
        for (int k = 0; k < DDTREE_BRANCH; k++) {
            c[ncand] = (candidate){node, c[node].depth + 1, c[node].score + log(marg[c[node].depth][k])};
            open[nopen++] = ncand++;
        }
    }
    int rc = tree_from_candidates(c, chosen, nodes, t, ncand);
    snprintf(t->label, sizeof t->label, "ddtree%d", nodes);
    free(c), free(open), free(chosen), free(marg);
    return rc;
}

int vb_tree_from_parents(const int *parents, int nodes, vb_tree *t, int *bad_index, char *why,
                         size_t n)
{
    *bad_index = -1;
    if (parents[0] != -1) {
        *bad_index = 0;
        snprintf(why, n, "node 0 is the root and must have parent -1 (got %d)", parents[0]);
        return 1;
    }
    for (int i = 1; i < nodes; i++) {
        *bad_index = i;
        if (parents[i] == -1) {
            snprintf(why, n, "a second root: only node 0 may have parent -1");
            return 1;
        }
        if (parents[i] < -1 || parents[i] >= nodes) {
            snprintf(why, n, "parent %d is not a node of this %d-node tree", parents[i], nodes);
            return 1;
        }
    }
    /* A cycle is the clearer diagnosis, so look for one before checking the order. */
    for (int i = 1; i < nodes; i++) {
        int x = i, steps = 0;
        while (x > 0 && steps <= nodes)
            x = parents[x], steps++;
        if (steps > nodes) {
            *bad_index = i;
            snprintf(why, n, "a cycle: following parents from node %d never reaches the root", i);
            return 1;
        }
    }
    for (int i = 1; i < nodes; i++)
        if (parents[i] >= i) {
            *bad_index = i;
            snprintf(why, n, "parent %d is not before its child %d (parents must come first)",
                     parents[i], i);
            return 1;
        }
    *bad_index = -1;
    if (tree_alloc(t, nodes))
        return -1;
    memcpy(t->parent, parents, sizeof *parents * (size_t)nodes);
    snprintf(t->label, sizeof t->label, "explicit%d", nodes);
    return 0;
}

int vb_tree_sees(const vb_tree *t, int i, int a)
{
    for (int x = i; x >= 0; x = t->parent[x])
        if (x == a)
            return 1;
    return 0;
}

int vb_tree_depth(const vb_tree *t, int i)
{
    int d = 0;
    for (int x = i; x > 0; x = t->parent[x])
        d++;
    return d;
}

int vb_tree_copy(vb_tree *dst, const vb_tree *src)
{
    *dst = *src;
    if (tree_alloc(dst, src->nodes))
        return -1;
    memcpy(dst->parent, src->parent, sizeof *dst->parent * (size_t)src->nodes);
    return 0;
}

void vb_tree_free(vb_tree *t)
{
    if (!t)
        return;
    free(t->parent);
    t->parent = NULL;
    t->nodes = 0;
}
