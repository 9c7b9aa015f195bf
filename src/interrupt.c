#define _POSIX_C_SOURCE 200809L
#include "interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
    static const char msg[] = "\nverifybench: interrupted: stopping after the current stage and writing the reports"
                              " (interrupt again to stop at once)\n";
    caught = sig;
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1); /* async-signal-safe, unlike stdio */
    (void)ignored;
}

void vb_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* The second signal takes the default action (the process ends); system calls under way
     * restart rather than fail with EINTR (a report being written when the first one comes). */
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        struct sigaction old;
        /* A signal the parent ignores stays ignored (a shell starts background jobs with SIGINT
         * ignored, so that Ctrl-C at the terminal does not reach them). */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

int vb_interrupt_signal(void) { return caught; }

const char *vb_interrupt_name(int sig, char *buf, size_t n)
{
    if (sig == SIGINT)
        snprintf(buf, n, "SIGINT");
    else if (sig == SIGTERM)
        snprintf(buf, n, "SIGTERM");
    else
        snprintf(buf, n, "signal %d", sig);
    return buf;
}
