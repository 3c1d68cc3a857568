/* SPDX-License-Identifier: MIT */
/* The pool's list of broadcasts in flight (broadcast_list.h; broadcast.c has
 * the whole story). No allocation: each descriptor lives in its caller's
 * frame, on this list under a lock, numbered by a pool-wide sequence; a
 * worker remembers the number of the last one it ran. */
#include "core/broadcast_list.h"
#include "core/latch_owner.h"

void weft__broadcasts_init(weft__broadcasts *b) {
    atomic_init(&b->seq, 0);
    pthread_mutex_init(&b->lock, NULL);
    b->head = b->tail = NULL;
}

void weft__broadcasts_destroy(weft__broadcasts *b) {
    pthread_mutex_destroy(&b->lock);
}

/* The oldest broadcast newer than seen, or NULL. */
static weft__broadcast *next_after(weft__broadcasts *b, uint64_t seen) {
    pthread_mutex_lock(&b->lock);
    weft__broadcast *d = b->head;
    while (d && d->seq <= seen)
        d = d->next;
    pthread_mutex_unlock(&b->lock);
    return d; /* alive: its latch waits for our count */
}

void weft__broadcast_run_pending(weft__broadcasts *b, unsigned index, uint64_t *seen) {
    weft__broadcast *d;
    while ((d = next_after(b, *seen)) != NULL) {
        *seen = d->seq;
        d->fn(index, d->arg);
        weft__count_latch_decrement(&d->done); /* d may be gone after this */
    }
}

void weft__broadcast_post(weft__broadcasts *b, weft__broadcast *d) {
    pthread_mutex_lock(&b->lock);
    /* Relaxed: only written under this lock. */
    d->seq = atomic_load_explicit(&b->seq, memory_order_relaxed) + 1;
    d->next = NULL;
    if (b->tail)
        b->tail->next = d;
    else
        b->head = d;
    b->tail = d;
    /* Relaxed: workers read the list under the lock; the caller's PushFence
     * publishes the number to sleepers' final checks. */
    atomic_store_explicit(&b->seq, d->seq, memory_order_relaxed);
    pthread_mutex_unlock(&b->lock);
}

void weft__broadcast_unlink(weft__broadcasts *b, weft__broadcast *d) {
    pthread_mutex_lock(&b->lock);
    weft__broadcast **p = &b->head, *prev = NULL;
    while (*p != d)
        prev = *p, p = &(*p)->next;
    *p = d->next;
    if (b->tail == d)
        b->tail = prev;
    pthread_mutex_unlock(&b->lock);
}
