/* The operating-system seam: the only platform-specific code in weft lives in
 * os_linux.c (futex) or os_posix.c (condition variables). */
#ifndef WEFT_OS_H
#define WEFT_OS_H

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "atomics.h"

/* Block while *word == expected. Returns on a wake-up, when *word differs
 * (checked atomically with going to sleep), or spuriously: callers loop and
 * recheck in user space. */
WEFT_HIDDEN void weft__os_wait(_Atomic uint32_t *word, uint32_t expected);

/* Wake one / every thread blocked in weft__os_wait on word. Safe to call after
 * the memory of word was freed or reused: waiters always recheck. */
WEFT_HIDDEN void weft__os_wake_one(_Atomic uint32_t *word);
WEFT_HIDDEN void weft__os_wake_all(_Atomic uint32_t *word);

/* Number of CPUs this process may run on (at least 1). */
WEFT_HIDDEN unsigned weft__os_cpu_count(void);

/* Name the calling thread (truncated to the OS limit); best effort. */
WEFT_HIDDEN void weft__os_set_thread_name(const char *name);

/* Give the CPU to another runnable thread, if any (POSIX). Between search
 * rounds, so that oversubscribed pools let the thread with work run. */
static inline void weft__os_yield(void) {
    sched_yield();
}

#endif
