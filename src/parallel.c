#define _POSIX_C_SOURCE 200809L
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct pool_job {
    int64_t n;
    _Atomic int64_t next;
    void (*fn)(int64_t, int, void *);
    void *ctx;
} pool_job;

typedef struct worker_arg {
    pool_job *job;
    int id;
} worker_arg;

static void *worker_main(void *p)
{
    worker_arg *w = p;
    for (;;) {
        int64_t i = atomic_fetch_add(&w->job->next, 1);
        if (i >= w->job->n)
            return NULL;
        w->job->fn(i, w->id, w->job->ctx);
    }
}

int vb_parallel_workers(int threads)
{
    if (threads > 0)
        return threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void vb_parallel_for(int64_t n, int threads, void (*fn)(int64_t, int, void *), void *ctx)
{
    int nw = vb_parallel_workers(threads);
    if (nw > n)
        nw = n > 0 ? (int)n : 1;
    pool_job job = {n, 0, fn, ctx};
    pthread_t *tid = malloc(sizeof *tid * (size_t)nw);
    worker_arg *args = malloc(sizeof *args * (size_t)nw);
    int started = 0;
    for (int i = 1; tid && args && i < nw; i++) {
        args[i] = (worker_arg){&job, i};
        if (pthread_create(&tid[i], NULL, worker_main, &args[i]) != 0)
            break;
        started = i;
    }
    worker_arg self = {&job, 0};
    worker_main(&self); /* the caller works too; it also finishes alone if no thread started */
    for (int i = 1; i <= started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    free(args);
}
