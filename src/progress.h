/* Progress on stderr for long runs: "[3/12] name: stage". Quiet when stderr is not a
 * terminal or with --quiet; notices (which GPU stages were skipped, and why) always print. */
#ifndef VB_PROGRESS_H
#define VB_PROGRESS_H

void vb_progress_init(int quiet);
void vb_progress(int index, int total, const char *name, const char *stage);
void vb_progress_done(void);
/* One line on stderr, above any progress line. */
void vb_notice(const char *fmt, ...);

#endif
