/* Draft trees: presets (chain, EAGLE, DDTree), explicit parents lists, and the tree part
 * of the verify mask. Node 0 is the root (the last accepted token); parent[i] < i. */
#ifndef VB_TREE_H
#define VB_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

/* A chain of n nodes, as DFlash drafts a block. */
int vb_tree_chain(int nodes, vb_tree *t);
/* EAGLE-2 style: a beam of topk nodes expanded topk ways per level for depth levels,
 * then the nodes-1 best candidates by cumulative draft probability. 0 on success;
 * else 1 with the reason in why. */
int vb_tree_eagle(int topk, int depth, int nodes, uint64_t seed, vb_tree *t, char *why, size_t n);
/* DDTree style: best-first over per-depth top-4 marginals under a node budget. */
int vb_tree_ddtree(int nodes, uint64_t seed, vb_tree *t);
/* Validates and copies an explicit parents list. On error returns 1, sets *bad_index to
 * the offending entry and writes the reason (cycle, second root, parent not before child). */
int vb_tree_from_parents(const int *parents, int nodes, vb_tree *t, int *bad_index, char *why,
                         size_t n);

/* 1 when node a is i or an ancestor of i. */
int vb_tree_sees(const vb_tree *t, int i, int a);
int vb_tree_depth(const vb_tree *t, int i);
int vb_tree_copy(vb_tree *dst, const vb_tree *src);
void vb_tree_free(vb_tree *t);

#endif
