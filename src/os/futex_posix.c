/* SPDX-License-Identifier: MIT */
/* Portable POSIX fallback for futex.h: waiting on a word with a small
 * table of mutex/condition-variable pairs hashed by the word's address (a
 * futex emulation, as parking lots do). A wake-up broadcasts on the bucket's
 * condition variable; waiters recheck their own word.
 *
 * Only POSIX.1-2008 interfaces (the seam's other files add
 * sysconf(_SC_NPROCESSORS_ONLN), which Linux, macOS and the BSDs have):
 * `make test` builds the library with
 * _POSIX_C_SOURCE=200809L and nothing more (WEFT_POSIX_STRICT), so that a
 * Linux-only call fails to compile there rather than on someone's Mac.
 *
 * Timed waits and the clock. Deadlines are CLOCK_MONOTONIC (weft__now_ns).
 * Where the condition variables can wait on that clock
 * (pthread_condattr_setclock, POSIX's Clock Selection option) they do. Where
 * they cannot (macOS has no pthread_condattr_setclock), they wait on their
 * default CLOCK_REALTIME, with the deadline converted at each wait: a step
 * of the wall clock then ends a wait early, which looks spurious to the
 * caller (the monotonic deadline is rechecked), or late, which delays only
 * a self-wake-up (sleep.c's prediction): a wake-up still ends the wait.
 *
 * Which: the option's own macro, _POSIX_CLOCK_SELECTION from <unistd.h>
 * (-1: absent, as on macOS; 0: ask at run time; >0: present), not a CMake
 * symbol check, so that a project that compiles src/ with its own build
 * system gets it right too; and the call's result at run time, for systems
 * that declare it and refuse the clock. -DWEFT_NO_CONDATTR_SETCLOCK forces
 * the fallback, which `make test` builds and runs on Linux. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os/futex.h"

#define BUCKETS 64 /* power of two; collisions only cost spurious wake-ups */

#if defined(_POSIX_CLOCK_SELECTION) && _POSIX_CLOCK_SELECTION >= 0 &&                              \
    !defined(WEFT_NO_CONDATTR_SETCLOCK)
#define HAVE_CONDATTR_SETCLOCK 1
#else
#define HAVE_CONDATTR_SETCLOCK 0
#endif

static struct bucket {
    pthread_mutex_t lock;
    pthread_cond_t cond;
} buckets[BUCKETS];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;
/* The clock the condition variables' timed waits read. Written once in
 * buckets_init; pthread_once orders it before every reader. */
static clockid_t cond_clock = CLOCK_REALTIME;

/* Make attr's condition variables wait on CLOCK_MONOTONIC if the system can;
 * returns the clock they will wait on. */
static clockid_t monotonic_if_possible(pthread_condattr_t *attr) {
#if HAVE_CONDATTR_SETCLOCK
    if (pthread_condattr_setclock(attr, CLOCK_MONOTONIC) == 0)
        return CLOCK_MONOTONIC;
#else
    (void)attr;
#endif
    return CLOCK_REALTIME;
}

static void buckets_init(void) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    cond_clock = monotonic_if_possible(&attr);
    for (int i = 0; i < BUCKETS; i++) {
        pthread_mutex_init(&buckets[i].lock, NULL);
        pthread_cond_init(&buckets[i].cond, &attr);
    }
    pthread_condattr_destroy(&attr);
}

static uint64_t clock_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* deadline_ns, a CLOCK_MONOTONIC time, on cond_clock. */
static struct timespec cond_deadline(uint64_t deadline_ns) {
    if (cond_clock != CLOCK_MONOTONIC) {
        uint64_t now = clock_ns(CLOCK_MONOTONIC);
        uint64_t left = deadline_ns > now ? deadline_ns - now : 0;
        deadline_ns = clock_ns(cond_clock) + left;
    }
    return (struct timespec){.tv_sec = (time_t)(deadline_ns / 1000000000u),
                             .tv_nsec = (long)(deadline_ns % 1000000000u)};
}

static struct bucket *bucket_of(_Atomic uint32_t *word) {
    pthread_once(&buckets_once, buckets_init);
    uintptr_t h = (uintptr_t)word;
    h ^= h >> 7;
    return &buckets[(h >> 2) & (BUCKETS - 1)];
}

void weft__os_wait(_Atomic uint32_t *word, uint32_t expected) {
    struct bucket *b = bucket_of(word);
    pthread_mutex_lock(&b->lock);
    /* Relaxed is enough: the bucket lock orders this load against the
     * waker's store, which it makes before taking the same lock. */
    if (atomic_load_explicit(word, memory_order_relaxed) == expected)
        pthread_cond_wait(&b->cond, &b->lock);
    pthread_mutex_unlock(&b->lock);
}

bool weft__os_wait_until(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns) {
    struct bucket *b = bucket_of(word); /* first: it sets cond_clock */
    struct timespec at = cond_deadline(deadline_ns);
    int r = 0;
    pthread_mutex_lock(&b->lock);
    /* Relaxed: ordered by the bucket lock, as in weft__os_wait. */
    if (atomic_load_explicit(word, memory_order_relaxed) == expected)
        r = pthread_cond_timedwait(&b->cond, &b->lock, &at);
    pthread_mutex_unlock(&b->lock);
    if (r != ETIMEDOUT)
        return true;
    /* On the wall clock, a step forward ends the wait before the deadline:
     * report that as spurious, so that the caller waits again. */
    return cond_clock != CLOCK_MONOTONIC && clock_ns(CLOCK_MONOTONIC) < deadline_ns;
}

/* fork(): in the child, a bucket's lock may be held by a thread that did not
 * survive, and its condition variable may count such threads as waiters (a
 * broadcast could then wait for them to leave). Nothing else lives in a
 * bucket and the child has a single thread, so it initialises every bucket
 * afresh. (Holding all the locks across the fork instead would leave the
 * conditions' waiters, and takes more locks at once than ThreadSanitizer's
 * deadlock detector tracks.) */
void weft__os_fork_child(void) {
    buckets_init(); /* harmless if the parent never used the buckets */
}

static void wake(_Atomic uint32_t *word) {
    struct bucket *b = bucket_of(word);
    pthread_mutex_lock(&b->lock);
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
}

void weft__os_wake_one(_Atomic uint32_t *word) {
    wake(word);
}

void weft__os_wake_all(_Atomic uint32_t *word) {
    wake(word);
}
