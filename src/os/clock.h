/* SPDX-License-Identifier: MIT */
/* The clocks weft reads: the monotonic clock of every timestamp and
 * deadline, and a thread's CPU time. */
#ifndef WEFT_OS_CLOCK_H
#define WEFT_OS_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "os/atomics.h"

/* CLOCK_MONOTONIC in ns: the clock of every timestamp and deadline. */
static inline uint64_t weft__now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* CPU time the calling thread has used, in ns; 0 where the OS keeps no
 * per-thread CPU clock. A system call on Linux, not a vDSO read, so callers
 * sample it. */
static inline uint64_t weft__os_thread_cpu_ns(void) {
#ifdef CLOCK_THREAD_CPUTIME_ID
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0)
        return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
    return 0;
}

#endif
