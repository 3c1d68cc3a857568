/* SPDX-License-Identifier: MIT */
/* What the OS lets weft set on the calling thread: its timer slack, its
 * scheduling policy, its name; and a yield. thread_linux.c and
 * thread_posix.c (where each is a documented no-op). */
#ifndef WEFT_OS_THREAD_H
#define WEFT_OS_THREAD_H

#include <sched.h>
#include <stdbool.h>

#include "os/atomics.h"

/* The calling thread's timers fire when asked rather than up to 50 us later
 * (Linux's default slack), so a timed wait ends close to its deadline. Best
 * effort; a no-op where the OS has no such setting. */
WEFT__HIDDEN void weft__os_precise_timers(void);

/* Run the calling worker thread as batch work where the OS has a policy for
 * it (Linux: SCHED_BATCH), and only if it runs under the default policy (a
 * real-time, idle or batch policy inherited from the pool's creator stays).
 * A batch thread that wakes does not preempt the thread running on its CPU:
 * it takes an idle CPU at once, a busy one when the running thread's time
 * slice ends (docs/sleep.md, "What a wake-up asks of the OS", says why).
 * Its CPU share (nice) is unchanged. Best effort; nothing where the OS has
 * no such policy. */
WEFT__HIDDEN void weft__os_batch_policy(void);
/* Whether weft__os_batch_policy changes anything here (for the tests). */
WEFT__HIDDEN bool weft__os_has_batch_policy(void);

/* Name the calling thread (truncated to the OS limit); best effort. */
WEFT__HIDDEN void weft__os_set_thread_name(const char *name);
/* Whether weft__os_set_thread_name names threads here (for the tests). */
WEFT__HIDDEN bool weft__os_names_threads(void);

/* Give the CPU to another runnable thread, if any (POSIX). Between search
 * rounds, so that oversubscribed pools let the thread with work run. */
static inline void weft__os_yield(void) {
    sched_yield();
}

#endif
