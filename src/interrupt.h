/* SIGINT and SIGTERM during a run. The first one asks the run to stop at its next safe point
 * (before a scenario, a stage or a graph variant), so that what ran is still checked, reported
 * and written; a second one ends the process as the signal normally does. A signal ignored
 * when the run starts (SIGINT in a shell's background job) stays ignored. */
#ifndef VB_INTERRUPT_H
#define VB_INTERRUPT_H

#include <stddef.h>

void vb_interrupt_install(void);
/* The signal caught since vb_interrupt_install, or 0. */
int vb_interrupt_signal(void);
/* "SIGINT", "SIGTERM", or "signal N". */
const char *vb_interrupt_name(int sig, char *buf, size_t n);

#endif
