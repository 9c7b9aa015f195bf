/* A minimal parallel-for over independent work items, on POSIX threads. */
#ifndef VB_PARALLEL_H
#define VB_PARALLEL_H

#include <stdint.h>

/* Calls fn(item, worker, ctx) for every item in [0, n), spread over `threads` workers
 * (0 = one per online CPU). Items are taken in order from a shared counter. */
void vb_parallel_for(int64_t n, int threads, void (*fn)(int64_t item, int worker, void *ctx), void *ctx);
/* The worker count vb_parallel_for uses for `threads`. */
int vb_parallel_workers(int threads);

#endif
