/* The GPU watchdog's mechanism, with sleeps standing in for waits on the GPU (no GPU needed):
 * a wait past the timeout calls the handler once and ends the process with its code; waits
 * within it, and time outside any wait, never do. Each case runs in a child process, since
 * the watchdog ends the process it watches. */
#include "vbtest.h"

#include <sys/wait.h>
#include <time.h>

#include "watchdog.h"

static int handler_calls;

static int report_hang(void *ctx, double waited_s)
{
    handler_calls++;
    const char *marker = ctx;
    FILE *f = fopen(marker, "w");
    if (f) {
        fprintf(f, "%.2f\n", waited_s);
        fclose(f);
    }
    return 42;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Runs body in a child watched with timeout_s; returns its exit status (-1: killed or odd). */
static int child_status(double timeout_s, const char *marker, void (*body)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (vb_watchdog_start(timeout_s, report_hang, (void *)marker))
            _exit(3);
        body();
        vb_watchdog_stop();
        _exit(handler_calls ? 5 : 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static void hang(void) /* a wait that outlasts the timeout by far */
{
    vb_watchdog_enter();
    sleep_s(20);
    vb_watchdog_leave();
}

static void short_waits(void) /* many waits, each under the timeout, with idle time between */
{
    for (int i = 0; i < 6; i++) {
        vb_watchdog_enter();
        sleep_s(0.1);
        vb_watchdog_leave();
        sleep_s(0.3); /* long, but outside any wait */
    }
}

int main(void)
{
    char marker[64];
    snprintf(marker, sizeof marker, "/tmp/vb_watchdog_%ld", (long)getpid());
    remove(marker);

    const time_t t0 = time(NULL);
    CHECK_MSG(child_status(0.4, marker, hang) == 42, "the hang must end the process with the handler's code");
    CHECK_MSG(time(NULL) - t0 < 10, "the hang must be reported soon after the timeout, not after the wait");
    FILE *f = fopen(marker, "r");
    double waited = 0;
    CHECK(f && fscanf(f, "%lf", &waited) == 1 && waited >= 0.4 && waited < 5);
    if (f)
        fclose(f);
    remove(marker);

    CHECK_MSG(child_status(0.4, marker, short_waits) == 0, "waits within the timeout are never reported");
    CHECK(access(marker, F_OK) != 0);

    CHECK(vb_watchdog_start(0, report_hang, marker) == -1); /* a timeout of 0 watches nothing */
    TEST_MAIN_END();
}
