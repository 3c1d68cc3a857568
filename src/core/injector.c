/* SPDX-License-Identifier: MIT */
/* The injector: jobs submitted from threads outside the pool (weft_run,
 * weft_spawn from outside), many producers and many consumers.
 *
 * A mutex-protected intrusive list: outside submission is rare next to deque
 * traffic and the lock is held for a few stores, so a lock-free queue would
 * buy little. Idle workers poll `length` without the lock and take the lock
 * only when it is nonzero, so searching workers do not contend on it.
 */
#include "core/injector.h"

void weft__injector_init(weft__injector *q) {
    pthread_mutex_init(&q->lock, NULL);
    q->head = q->tail = NULL;
    atomic_init(&q->length, 0);
}

void weft__injector_destroy(weft__injector *q) {
    pthread_mutex_destroy(&q->lock);
}

void weft__injector_push(weft__injector *q, weft__job *first, weft__job *last, uint64_t count) {
    last->next = NULL;
    weft__debug_yield();
    pthread_mutex_lock(&q->lock);
    if (q->tail)
        q->tail->next = first;
    else
        q->head = first;
    q->tail = last;
    /* Relaxed: written only under the lock we hold. */
    uint64_t n = atomic_load_explicit(&q->length, memory_order_relaxed);
    /* Relaxed: the caller's seq-cst fence that follows publishes it to the
     * sleep protocol; consumers take the lock. */
    atomic_store_explicit(&q->length, n + count, memory_order_relaxed);
    pthread_mutex_unlock(&q->lock);
    weft__debug_yield();
}

weft__job *weft__injector_pop(weft__injector *q) {
    if (weft__injector_is_empty(q))
        return NULL;
    weft__debug_yield();
    pthread_mutex_lock(&q->lock);
    weft__job *job = q->head;
    if (job) {
        q->head = job->next;
        if (!q->head)
            q->tail = NULL;
        /* Relaxed: under the lock; a stale read elsewhere is only a hint. */
        uint64_t n = atomic_load_explicit(&q->length, memory_order_relaxed);
        atomic_store_explicit(&q->length, n - 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&q->lock);
    return job;
}
