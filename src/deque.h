/* Chase-Lev work-stealing deque. See deque.c for the protocol. */
#ifndef WEFT_DEQUE_H
#define WEFT_DEQUE_H

#include <assert.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* Owner only. 0, or ENOMEM when the deque is full and cannot grow. */
WEFT_HIDDEN int weft__deque_push(weft__deque *d, weft__job *job);
/* Owner only. The newest job, or NULL. */
WEFT_HIDDEN weft__job *weft__deque_pop(weft__deque *d);
/* Any thread. The oldest job in *job on WEFT_STEAL_OK. */
WEFT_HIDDEN weft__steal_result weft__deque_steal(weft__deque *d, weft__job **job);

/* Any thread; a hint only (the answer may be stale by the time it is used). */
static inline bool weft__deque_maybe_empty(weft__deque *d) {
    /* Relaxed: a hint; a thief confirms with weft__deque_steal. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    return b <= t;
}

#endif
