/* A kernel that never finishes (a deadlock in a warp-specialised pipeline, say) blocks the
 * host in its next wait for the GPU for ever, and with it every result of the run. The
 * watchdog thread turns that into a result: when one wait bracketed by vb_watchdog_enter and
 * vb_watchdog_leave lasts longer than the timeout, it calls the run's handler (which reports
 * what is under way as timed out and writes every report) and ends the process with the code
 * the handler returns. The waiting thread never continues past that wait. */
#ifndef VB_WATCHDOG_H
#define VB_WATCHDOG_H

/* Called on the watchdog's thread while the run's thread is held in its wait; returns the
 * process's exit code. */
typedef int (*vb_hang_handler)(void *ctx, double waited_s);

/* 0, or -1 when the thread cannot start (then waits are not watched). timeout_s > 0. */
int vb_watchdog_start(double timeout_s, vb_hang_handler handler, void *ctx);
/* Stops and joins the thread (no-op when none runs). */
void vb_watchdog_stop(void);
/* Bracket one host wait for the GPU. */
void vb_watchdog_enter(void);
void vb_watchdog_leave(void);

#endif
