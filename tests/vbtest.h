/* A minimal test framework: CHECK records a failure and goes on; main returns the count.
 * Messages written to stderr by the code under test can be captured and searched. */
#ifndef VB_TEST_H
#define VB_TEST_H

#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int vbt_failures, vbt_checks;

#define CHECK(cond)                                                                             \
    do {                                                                                        \
        vbt_checks++;                                                                           \
        if (!(cond)) {                                                                          \
            vbt_failures++;                                                                     \
            fprintf(stdout, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);           \
        }                                                                                       \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                    \
    do {                                                                                        \
        vbt_checks++;                                                                           \
        if (!(cond)) {                                                                          \
            vbt_failures++;                                                                     \
            fprintf(stdout, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stdout, __VA_ARGS__);                                                       \
            fputc('\n', stdout);                                                                \
        }                                                                                       \
    } while (0)

#define TEST_MAIN_END()                                                                         \
    do {                                                                                        \
        printf("%d checks, %d failed\n", vbt_checks, vbt_failures);                             \
        return vbt_failures ? 1 : 0;                                                            \
    } while (0)

/* stderr capture: everything written between begin and end lands in the returned buffer. */
static int vbt_saved_fd = -1;
static FILE *vbt_tmp;

static inline void capture_begin(void)
{
    fflush(stderr);
    vbt_tmp = tmpfile();
    vbt_saved_fd = dup(fileno(stderr));
    dup2(fileno(vbt_tmp), fileno(stderr));
}

/* Returns a malloc'd copy of what was captured (the caller frees). */
static inline char *capture_end(void)
{
    fflush(stderr);
    dup2(vbt_saved_fd, fileno(stderr));
    close(vbt_saved_fd);
    long n = ftell(vbt_tmp);
    char *buf = malloc((size_t)n + 1);
    rewind(vbt_tmp);
    size_t got = fread(buf, 1, (size_t)n, vbt_tmp);
    buf[got] = 0;
    fclose(vbt_tmp);
    return buf;
}

#endif
