#define _POSIX_C_SOURCE 200809L
#include "watchdog.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* When the run's thread entered its wait (monotonic ns), 0 when it is not waiting, or TAKEN
 * once the watchdog has claimed the wait: a compare-and-swap decides between the wait ending
 * and the watchdog firing, so the handler never runs beside a thread that goes on. */
#define TAKEN INT64_C(-1)
static _Atomic int64_t wait_since;
static atomic_int stop_flag;
static pthread_t thread;
static int running;
static double timeout;
static vb_hang_handler handler;
static void *handler_ctx;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *watch(void *arg)
{
    (void)arg;
    const struct timespec tick = {0, 50 * 1000 * 1000};
    while (!atomic_load(&stop_flag)) {
        nanosleep(&tick, NULL);
        int64_t since = atomic_load(&wait_since);
        const double waited = since > 0 ? (double)(now_ns() - since) / 1e9 : 0;
        if (since > 0 && waited > timeout && atomic_compare_exchange_strong(&wait_since, &since, TAKEN)) {
            const int code = handler(handler_ctx, waited);
            fflush(stdout);
            fflush(stderr);
            _exit(code); /* not exit(): the CUDA runtime's teardown would wait for the hung kernel */
        }
    }
    return NULL;
}

int vb_watchdog_start(double timeout_s, vb_hang_handler h, void *ctx)
{
    if (running || timeout_s <= 0 || !h)
        return -1;
    timeout = timeout_s, handler = h, handler_ctx = ctx;
    atomic_store(&stop_flag, 0);
    atomic_store(&wait_since, 0);
    running = pthread_create(&thread, NULL, watch, NULL) == 0;
    return running ? 0 : -1;
}

void vb_watchdog_stop(void)
{
    if (!running)
        return;
    atomic_store(&stop_flag, 1);
    pthread_join(thread, NULL);
    running = 0;
}

void vb_watchdog_enter(void) { atomic_store(&wait_since, now_ns()); }

void vb_watchdog_leave(void)
{
    if (atomic_exchange(&wait_since, 0) != TAKEN)
        return;
    for (;;) /* the watchdog is writing the reports and ends the process */
        pause();
}
