#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int enabled, showing;

void vb_progress_init(int quiet) { enabled = !quiet && isatty(STDERR_FILENO); }

static void clear_line(void)
{
    if (showing)
        fputs("\r\033[K", stderr);
    showing = 0;
}

void vb_progress(int index, int total, const char *name, const char *stage)
{
    if (!enabled)
        return;
    clear_line();
    fprintf(stderr, "[%d/%d] %s: %s", index + 1, total, name, stage);
    fflush(stderr);
    showing = 1;
}

void vb_progress_done(void) { clear_line(); }

void vb_notice(const char *fmt, ...)
{
    clear_line();
    va_list ap;
    va_start(ap, fmt);
    fputs("verifybench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
