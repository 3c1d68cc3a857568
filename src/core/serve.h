/* SPDX-License-Identifier: MIT */
/* Which pools are doing work that a job of another pool waits for, so that
 * weft_pool_destroy can refuse to wait for its own caller. See serve.c. */
#ifndef WEFT_SERVE_H
#define WEFT_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#include "os/atomics.h"

typedef struct weft__served weft__served;

/* One waiting caller: a thread of the pool whose side is `from` (a worker or
 * a context) that waits for work it handed to another pool. Lives in the
 * caller's frame. */
typedef struct weft__guest {
    weft__served *from;
    struct weft__guest *next; /* the serving pool's list (serve_lock) */
} weft__guest;

/* A pool's side of the relation (in the pool): the callers of other pools
 * waiting on it. A pool is named by its side. */
struct weft__served {
    weft__guest *guests; /* serve_lock */
};

static inline void weft__served_init(weft__served *s) {
    s->guests = NULL;
}

/* The caller, a thread of g->from's pool, is about to wait for work of the
 * pool whose side is s; until weft__serve_end, that pool serves g->from's.
 * The caller keeps the serving pool's memory alive meanwhile (pool.h,
 * weft__pool_serve_begin). */
WEFT__HIDDEN void weft__serve_begin(weft__served *s, weft__guest *g);
WEFT__HIDDEN void weft__serve_end(weft__served *s, weft__guest *g);

/* Does the pool of s serve the pool of target, directly or through pools
 * that serve pools that serve it? Then a job of the first waiting for the
 * second could wait for itself. */
WEFT__HIDDEN bool weft__serve_reaches(weft__served *s, weft__served *target);

/* fork(): hold the lock across it (pool.c's atfork handlers), so that the
 * child does not inherit it held by a thread that does not exist there. */
WEFT__HIDDEN void weft__serve_fork_prepare(void);
WEFT__HIDDEN void weft__serve_fork_release(void);

#endif
