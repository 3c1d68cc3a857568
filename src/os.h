/* SPDX-License-Identifier: MIT */
/* The operating-system seam: the only platform-specific code in weft lives in
 * os_linux.c (futex) or os_posix.c (condition variables). */
#ifndef WEFT_OS_H
#define WEFT_OS_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "atomics.h"

/* CLOCK_MONOTONIC in ns: the clock of every timestamp and deadline. */
static inline uint64_t weft__now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Block while *word == expected. Returns on a wake-up, when *word differs
 * (checked atomically with going to sleep), or spuriously: callers loop and
 * recheck in user space. */
WEFT__HIDDEN void weft__os_wait(_Atomic uint32_t *word, uint32_t expected);

/* Like weft__os_wait, but also returns once CLOCK_MONOTONIC reaches
 * deadline_ns (as weft__now_ns reads it): false then, true otherwise (woken,
 * word changed, or spuriously). */
WEFT__HIDDEN bool weft__os_wait_until(_Atomic uint32_t *word, uint32_t expected,
                                      uint64_t deadline_ns);

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

/* Wake one / every thread blocked in weft__os_wait on word. Safe to call after
 * the memory of word was freed or reused: waiters always recheck. */
WEFT__HIDDEN void weft__os_wake_one(_Atomic uint32_t *word);
WEFT__HIDDEN void weft__os_wake_all(_Atomic uint32_t *word);

/* In a fork child, from pool.c's atfork handler while the child has a single
 * thread: make the seam's process-wide state usable again, whatever the
 * threads that did not survive the fork were doing with it. */
WEFT__HIDDEN void weft__os_fork_child(void);

/* A process-wide memory barrier (Linux membarrier, private expedited): when
 * weft__os_barrier returns, every thread of the process that was running
 * during the call has executed a full memory barrier, and every other one
 * has been switched out since, which orders it as fully. weft__os_barrier_init
 * registers the process once; false where the kernel refuses (then
 * weft__os_barrier must not be called). The Linux seam's only: the POSIX seam
 * builds with symmetric fences instead (fence.h). */
WEFT__HIDDEN bool weft__os_barrier_init(void);
WEFT__HIDDEN void weft__os_barrier(void);

/* Keep the shared object that holds weft's code (libweft.so, or a plugin
 * that linked libweft.a) mapped until the process exits, whoever dlcloses
 * it: the default pool's workers live until exit and run that code. Called
 * once the default pool exists, with no weft lock held (the loader's lock
 * is taken inside, and a constructor that runs under it may call weft).
 * Best effort: nothing in a program's own executable, or where the OS
 * cannot pin a loaded object (the POSIX seam: the guide's plugin rule). */
WEFT__HIDDEN void weft__os_keep_loaded(void);

/* Number of CPUs this process may run on (at least 1). */
WEFT__HIDDEN unsigned weft__os_cpu_count(void);

/* Name the calling thread (truncated to the OS limit); best effort. */
WEFT__HIDDEN void weft__os_set_thread_name(const char *name);
/* Whether weft__os_set_thread_name names threads here (for the tests). */
WEFT__HIDDEN bool weft__os_names_threads(void);

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

/* Give the CPU to another runnable thread, if any (POSIX). Between search
 * rounds, so that oversubscribed pools let the thread with work run. */
static inline void weft__os_yield(void) {
    sched_yield();
}

#endif
