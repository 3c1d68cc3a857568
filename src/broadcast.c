/* SPDX-License-Identifier: MIT */
/* weft_broadcast: run a function exactly once on every worker of a pool.
 *
 * No allocation: the broadcast's descriptor lives in the caller's frame, on a
 * list the pool keeps under a lock, numbered by a pool-wide sequence. Every
 * worker remembers the number of the last broadcast it ran; before looking
 * for other work it compares that with the sequence (one load of a word that
 * only broadcasts write) and runs what it has not run, oldest first. Each run
 * drops one count of the descriptor's count latch, owned by the caller, who
 * waits for it (participating if it is a worker) and then unlinks the
 * descriptor.
 *
 * Sleepers: the caller publishes the new sequence, executes a seq-cst fence
 * (PushFence) and wakes every sleeping worker specifically; a worker going to
 * sleep checks the sequence after its SleepFence, next to the injector
 * (weft__pool_final_check). The argument of docs/sleep.md applies unchanged:
 * either the worker sees the broadcast, or the caller sees it asleep.
 */
#include "broadcast.h"

#include <errno.h>

#include "pool.h"

struct weft__broadcast {
    void (*fn)(unsigned index, void *arg);
    void *arg;
    uint64_t seq;           /* I: set under the lock before it is visible */
    weft__count_latch done; /* a count per worker */
    weft__broadcast *next;  /* L */
};

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

static void post(weft_pool *pool, weft__broadcast *d) {
    weft__broadcasts *b = &pool->broadcasts;
    pthread_mutex_lock(&b->lock);
    /* Relaxed: only written under this lock. */
    d->seq = atomic_load_explicit(&b->seq, memory_order_relaxed) + 1;
    d->next = NULL;
    if (b->tail)
        b->tail->next = d;
    else
        b->head = d;
    b->tail = d;
    /* Relaxed: workers read the list under the lock; the sleep protocol's
     * PushFence below publishes the number to sleepers' final checks. */
    atomic_store_explicit(&b->seq, d->seq, memory_order_relaxed);
    pthread_mutex_unlock(&b->lock);
    /* PushFence, as for an injected job (docs/sleep.md). */
    weft__fence_seq_cst();
    weft__sleep_wake_sleepers(&pool->sleep);
}

static void unlink_done(weft_pool *pool, weft__broadcast *d) {
    weft__broadcasts *b = &pool->broadcasts;
    pthread_mutex_lock(&b->lock);
    weft__broadcast **p = &b->head, *prev = NULL;
    while (*p != d)
        prev = *p, p = &(*p)->next;
    *p = d->next;
    if (b->tail == d)
        b->tail = prev;
    pthread_mutex_unlock(&b->lock);
}

void weft__broadcast_run(weft_pool *pool, void (*fn)(unsigned index, void *arg), void *arg) {
    weft__broadcast d = {.fn = fn, .arg = arg};
    weft__count_latch_init(&d.done, pool->threads); /* owned by the caller */
    weft__worker *caller = weft__current_worker();
    bool foreign = caller && caller->pool != pool;
    weft__guest guest = {.from = foreign ? caller->pool : NULL};
    if (foreign)
        weft__serve_begin(pool, &guest); /* pool now works for caller's pool */
    weft__pool_ref(pool); /* unlink_done runs after the last share: pool may be going */
    post(pool, &d);
    weft__latch_wait(&d.done.latch);
    unlink_done(pool, &d);
    if (foreign)
        weft__serve_end(pool, &guest);
    weft__pool_unref(pool);
}

int weft_broadcast(weft_pool *pool, void (*fn)(unsigned index, void *arg), void *arg) {
    if (!fn)
        return EINVAL;
    int err = weft__pool_lookup(pool, &pool);
    if (err)
        return err; /* EAGAIN, ECHILD */
    /* Its workers are stopping (on_exit): some would never run their share. */
    if (weft__pending_closed(&pool->pending))
        return ESHUTDOWN;
    weft__broadcast_run(pool, fn, arg);
    return 0;
}
