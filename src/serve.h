/* SPDX-License-Identifier: MIT */
/* Which pools are doing work that a job of another pool waits for, so that
 * weft_pool_destroy can refuse to wait for its own caller. See serve.c. */
#ifndef WEFT_SERVE_H
#define WEFT_SERVE_H

#include <stdbool.h>

#include "atomics.h"

typedef struct weft_pool weft_pool;

/* One waiting caller: a thread of pool `from` (a worker or a context) that
 * waits for work it handed to another pool. Lives in the caller's frame. */
typedef struct weft__guest {
    weft_pool *from;
    struct weft__guest *next; /* the serving pool's list (serve_lock) */
} weft__guest;

/* The caller, a thread of g->from, is about to wait for work of pool; until
 * weft__serve_end, pool serves g->from, and its memory stays (a reference). */
WEFT__HIDDEN void weft__serve_begin(weft_pool *pool, weft__guest *g);
WEFT__HIDDEN void weft__serve_end(weft_pool *pool, weft__guest *g);

/* Does pool serve target, directly or through pools that serve pools that
 * serve it? Then a job of pool waiting for target could wait for itself. */
WEFT__HIDDEN bool weft__serve_reaches(weft_pool *pool, weft_pool *target);

/* fork(): hold the lock across it (pool.c's atfork handlers), so that the
 * child does not inherit it held by a thread that does not exist there. */
WEFT__HIDDEN void weft__serve_fork_prepare(void);
WEFT__HIDDEN void weft__serve_fork_release(void);

#endif
