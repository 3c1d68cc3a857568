/* Chase-Lev work-stealing deque. See deque.c for the protocol. */
#ifndef WEFT_DEQUE_H
#define WEFT_DEQUE_H

#include <assert.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <errno.h>

#include "atomics.h"
#include "job.h"

typedef struct weft__deque_buf {
    int64_t mask;                    /* capacity - 1; capacity a power of two */
    struct weft__deque_buf *retired; /* O: older buffers, freed with the deque */
    _Atomic(weft__job *) slot[];     /* A: relaxed; published by bottom/top */
} weft__deque_buf;

typedef struct weft__deque {
    /* Written by thieves (and by the owner taking the last job). */
    alignas(WEFT_CACHELINE) _Atomic int64_t top; /* A */
    /* Written by the owner only. */
    alignas(WEFT_CACHELINE) _Atomic int64_t bottom; /* A */
    _Atomic(weft__deque_buf *) buf;                 /* A: owner stores, thieves load */
    char pad[WEFT_CACHELINE - sizeof(int64_t) - sizeof(void *)];
} weft__deque;

static_assert(offsetof(weft__deque, bottom) - offsetof(weft__deque, top) >= WEFT_CACHELINE,
              "top and bottom share a prefetch pair");

typedef enum { WEFT_STEAL_EMPTY, WEFT_STEAL_RETRY, WEFT_STEAL_OK } weft__steal_result;

WEFT_HIDDEN int weft__deque_init(weft__deque *d, size_t capacity);
WEFT_HIDDEN void weft__deque_destroy(weft__deque *d);
/* Any thread. The oldest job in *job on WEFT_STEAL_OK. */
WEFT_HIDDEN weft__steal_result weft__deque_steal(weft__deque *d, weft__job **job);

/* Owner only, cold: copy the live window [t, b) into a buffer twice as
 * large and publish it. NULL when out of memory (the deque is unchanged). */
WEFT_HIDDEN WEFT_COLD weft__deque_buf *weft__deque_grow(weft__deque *d, weft__deque_buf *old,
                                                        int64_t t, int64_t b);

/* The owner's fast paths (memory orders: deque.c's header). */

/* Owner only. 0, or ENOMEM when the deque is full and cannot grow. */
static inline int weft__deque_push(weft__deque *d, weft__job *job) {
    /* Relaxed: bottom is ours. */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    /* Acquire: pairs with a thief's CAS on top, so the slot it read is free
     * before we may overwrite it. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    weft__deque_buf *buf = atomic_load_explicit(&d->buf, memory_order_relaxed);
    if (WEFT_UNLIKELY(b - t > buf->mask)) {
        buf = weft__deque_grow(d, buf, t, b);
        if (!buf)
            return ENOMEM;
    }
    atomic_store_explicit(&buf->slot[b & buf->mask], job, memory_order_relaxed);
#ifdef WEFT_TSAN
    /* Release store in place of the fence below, which TSan cannot see. */
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
#else
    /* Release fence: pairs with the thief's acquire load of bottom, so a thief
     * that sees the new bottom sees the slot and the job's contents. */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
#endif
    return 0;
}

/* Owner only. The newest job, or NULL. */
static inline weft__job *weft__deque_pop(weft__deque *d) {
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
    weft__deque_buf *buf = atomic_load_explicit(&d->buf, memory_order_relaxed);
    atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
    /* Seq-cst fence: either a thief's fence comes first and we see its top
     * increment, or ours does and the thief sees our decremented bottom; so
     * owner and thief never both take the last job. */
    weft__fence_seq_cst();
    int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    if (t > b) { /* empty: restore */
        atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
        return NULL;
    }
    weft__job *job = atomic_load_explicit(&buf->slot[b & buf->mask], memory_order_relaxed);
    if (t == b) {
        /* Last job: race the thieves for it. Seq-cst CAS as in Lê et al. */
        if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                     memory_order_relaxed))
            job = NULL;
        atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
    }
    return job;
}

/* Any thread; a hint only (the answer may be stale by the time it is used). */
static inline bool weft__deque_maybe_empty(weft__deque *d) {
    /* Relaxed: a hint; a thief confirms with weft__deque_steal. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    return b <= t;
}

#endif
