/* SPDX-License-Identifier: MIT */
/* The environment: WEFT_NUM_THREADS here, WEFT_TRACE in trace.c.
 *
 * A value weft cannot use is not silently replaced: it gets one line on
 * stderr saying what was ignored and what is used instead, as libomp does
 * for its OMP_ variables. Pools are created many times in one process (and
 * read the environment each time), so a warning is printed once per variable
 * and value: again only when the variable changes to another bad value.
 * Values are compared on their first VALUE_MAX - 1 bytes.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/env.h"

#include "weft.h"

#define VALUE_MAX 256 /* bytes of a value remembered for the once-only check */

/* The last value warned about, per variable; under lock. */
static struct {
    const char *name;
    char value[VALUE_MAX];
} warned[] = {{"WEFT_NUM_THREADS", ""}, {"WEFT_TRACE", ""}};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void weft__env_fork_prepare(void) {
    pthread_mutex_lock(&lock);
}

void weft__env_fork_release(void) {
    pthread_mutex_unlock(&lock);
}

/* True the first time name has this value (and records it). */
static bool first_time(const char *name, const char *value) {
    bool first = true;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < sizeof warned / sizeof warned[0]; i++) {
        if (strcmp(warned[i].name, name) != 0)
            continue;
        first = strncmp(warned[i].value, value, VALUE_MAX - 1) != 0;
        snprintf(warned[i].value, VALUE_MAX, "%s", value);
    }
    pthread_mutex_unlock(&lock);
    return first;
}

void weft__env_warn(const char *name, const char *value, const char *why, ...) {
    if (!first_time(name, value))
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "weft: ignoring %s=\"%s\": ", name, value);
    va_list ap;
    va_start(ap, why);
    if (n >= 0 && (size_t)n < sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n, why, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line); /* one call: one line, even among threads */
}

unsigned weft__env_threads(unsigned fallback) {
    const char *env = getenv("WEFT_NUM_THREADS");
    if (!env || !*env)
        return fallback;
    char *end;
    unsigned long n = strtoul(env, &end, 10);
    /* "-1" wraps to ULONG_MAX, an overflow saturates there: out of range. */
    if (*end == '\0' && n >= 1 && n <= WEFT_THREADS_MAX)
        return (unsigned)n;
    weft__env_warn("WEFT_NUM_THREADS", env, "not a number from 1 to %u; using %u", WEFT_THREADS_MAX,
                   fallback);
    return fallback;
}

/* WEFT_TRACE numbering: pools traced so far by this process. */
static _Atomic unsigned traced_pools;
/* 0, or in a fork child its pid: its files are path.PID, path.PID.N. Written
 * by the atfork child handler, before the child has a second thread. */
static long fork_child_pid;

void weft__env_fork_child(void) {
    /* Relaxed: the child has a single thread now (pool.c). */
    atomic_store_explicit(&traced_pools, 0, memory_order_relaxed);
    fork_child_pid = (long)getpid();
    weft__env_fork_release();
}

/* WEFT_TRACE: trace every pool; the first writes path, later ones path.N. */
void weft__env_trace(weft_pool *pool) {
    const char *path = getenv("WEFT_TRACE");
    if (!path || !*path)
        return;
    unsigned n = atomic_fetch_add_explicit(&traced_pools, 1, memory_order_relaxed);
    char base[4096], buf[4096 + 32];
    if (fork_child_pid)
        snprintf(base, sizeof base, "%s.%ld", path, fork_child_pid);
    else
        snprintf(base, sizeof base, "%s", path);
    if (n == 0)
        snprintf(buf, sizeof buf, "%s", base);
    else
        snprintf(buf, sizeof buf, "%s.%u", base, n);
    /* Best effort: tracing is a debugging aid, the pool works without it. */
    int err = weft_trace_start(pool, buf);
    if (err) {
        char why[128];
        if (strerror_r(err, why, sizeof why) != 0)
            snprintf(why, sizeof why, "error %d", err);
        weft__env_warn("WEFT_TRACE", path, "cannot create %s: %s", buf, why);
    }
}
