/* Portable POSIX fallback for the OS seam: waiting on a word with a small
 * table of mutex/condition-variable pairs hashed by the word's address (a
 * futex emulation, as parking lots do). A wake-up broadcasts on the bucket's
 * condition variable; waiters recheck their own word. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os.h"

#define BUCKETS 64 /* power of two; collisions only cost spurious wake-ups */

static struct bucket {
    pthread_mutex_t lock;
    pthread_cond_t cond;
} buckets[BUCKETS];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;

static void buckets_init(void) {
    for (int i = 0; i < BUCKETS; i++) {
        pthread_mutex_init(&buckets[i].lock, NULL);
        /* Monotonic, as weft__now_ns: timed waits take its deadlines. */
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&buckets[i].cond, &attr);
        pthread_condattr_destroy(&attr);
    }
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
    struct timespec at = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
                          .tv_nsec = (long)(deadline_ns % 1000000000u)};
    struct bucket *b = bucket_of(word);
    int r = 0;
    pthread_mutex_lock(&b->lock);
    /* Relaxed: ordered by the bucket lock, as in weft__os_wait. */
    if (atomic_load_explicit(word, memory_order_relaxed) == expected)
        r = pthread_cond_timedwait(&b->cond, &b->lock, &at);
    pthread_mutex_unlock(&b->lock);
    return r != ETIMEDOUT;
}

void weft__os_precise_timers(void) {}

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

unsigned weft__os_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void weft__os_set_thread_name(const char *name) {
    (void)name; /* no portable way; names are a debugging aid */
}

bool weft__os_names_threads(void) {
    return false;
}
