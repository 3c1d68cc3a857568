/* SPDX-License-Identifier: MIT */
/* The pool: what its workers, contexts and callers share (its queues, its
 * sleep state, its slots), how an entry point finds the pool it works on,
 * and how long the pool's memory lives. The worker is worker.h's. */
#ifndef WEFT_POOL_H
#define WEFT_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "weft.h"

#include "core/broadcast_list.h"
#include "core/injector.h"
#include "core/pending.h"
#include "core/serve.h"
#include "core/spare.h"
#include "idle/latch.h"
#include "idle/sleep.h"
#include "obs/stats.h"
#include "os/atomics.h"

typedef struct weft__worker weft__worker;

/* Queues come in pairs indexed by priority: [WEFT_PRIORITY_NORMAL],
 * [WEFT_PRIORITY_HIGH]. */
#define WEFT__PRIORITIES 2

struct weft_pool {
    weft__sleep sleep;
    weft__phase phase; /* parallel phases (phase.c), read by idle workers (leave.h) */
    weft__injector injectors[WEFT__PRIORITIES];
    weft__broadcasts broadcasts;
    weft__trace_state trace;
    /* Sticky: set before the first high-priority job can reach a deque (see
     * weft__worker_set_prio). Until then finding work skips the high deques
     * (only the high injector can hold a job), so a pool that never sees
     * high-priority work does not sweep them. */
    _Atomic bool high_pushed;
    /* Sticky: some high-priority job was ever submitted, to a deque or to
     * the injector; until then normal work never looks whether to give way
     * to high work (worker.c). */
    _Atomic bool high_seen;
    /* Detached jobs and parked follow-ups (pending.h). */
    alignas(WEFT__CACHELINE) weft__pending pending;
    _Atomic uint32_t refs; /* A: the pool is freed when it drops to 0 */
    weft__served served;   /* callers of other pools waiting on us (serve.c) */
    weft__spares spares;   /* threads that run its work while its jobs block (spare.c) */
    /* Start-up (weft_pool_create): the workers wait at a gate until every
     * thread exists, then run on_start; the creator waits for all of them. */
    _Atomic uint32_t start;          /* A: a WEFT__START_* value; futex word */
    weft__count_latch started;       /* a count per worker whose on_start has not returned */
    _Atomic uint32_t budget_waiters; /* A: its workers queued NORMAL for a slot (budget.c) */
    _Atomic uint32_t callers_seen;   /* A: caller slots ever taken, a prefix (callers.c) */
    /* Set before the pool is published. */
    alignas(WEFT__CACHELINE) weft__worker *workers; /* I: threads workers, then contexts,
                                                       then callers, then spares */
    unsigned threads;                               /* I */
    unsigned contexts;                              /* I */
    unsigned callers;                               /* I: caller slots (0: callers wait) */
    bool is_default;                                /* set under default_lock before the
                                                       default pool is published; read
                                                       only by weft_pool_destroy */
    unsigned fork_generation;                       /* I: weft__fork_generation at creation */
    weft_pool *abandoned;                           /* a fork child's list of its parents'
                                                       default pools (pool.c) */
    weft__idle_env idle_env;                        /* I: what the sleep protocols need */
    char name[16];                                  /* I: thread-name prefix */
    void (*on_start)(unsigned worker, void *user);  /* I */
    void (*on_exit)(unsigned worker, void *user);   /* I */
    void *user;                                     /* I */
    size_t stack_size;                              /* I */
    bool budgeted; /* I: its workers draw from the CPU budget (budget.c) */
    unsigned cpus; /* I: the CPUs this process may use, read at creation */
};

/* Every slot of the pool: workers, contexts, callers, spares. */
static inline unsigned weft__pool_slots_all(const weft_pool *pool) {
    return pool->threads + pool->contexts + pool->callers + pool->spares.max;
}

/* The slots that may hold jobs: every worker and context, the caller slots
 * taken so far (callers.c) and the spares started so far (spare.c), so that
 * a pool whose callers only wait, or that one caller uses, or whose jobs
 * never block, does not sweep slots nobody ever holds. Victim k (0 <= k < n)
 * is slot weft__victim_slot(k): the first `base` are slots 0..base-1, the
 * rest the spares'. */
typedef struct weft__victims {
    unsigned n, base, skip;
} weft__victims;

static inline weft__victims weft__pool_victims(weft_pool *pool) {
    /* Acquire, both: pair with weft__caller_take's raise and spare.c's; a
     * thief that counts a slot sees it set up. A sweep that misses a slot
     * taken just now is the same as one that ran before: the slot's first
     * post of jobs meets the sleep protocol's counters like any other
     * (callers.c). */
    unsigned base = pool->threads + pool->contexts +
                    atomic_load_explicit(&pool->callers_seen, memory_order_acquire);
    unsigned spares = atomic_load_explicit(&pool->spares.seen, memory_order_acquire);
    return (weft__victims){.n = base + spares, .base = base, .skip = pool->spares.first - base};
}

static inline unsigned weft__victim_slot(const weft__victims *v, unsigned k) {
    return k < v->base ? k : k + v->skip;
}

/* How many fork() children deep this process is, counting forks made after
 * the first pool was created: bumped by pool.c's atfork child handler. */
WEFT__HIDDEN extern _Atomic unsigned weft__fork_generation;

/* Was pool created by an ancestor of this process, before a fork()? Its
 * workers do not exist here and its locks may be held by threads that did
 * not survive the fork, so nothing may touch more than its I fields. Entry
 * points from outside threads ask this; a worker never needs to, since it
 * only exists in the process that created its pool. */
static inline bool weft__pool_is_stale(const weft_pool *pool) {
    /* Relaxed: the counter changes only in the atfork child handler, while
     * the child has a single thread; every thread it creates later
     * synchronises with that through pthread_create. */
    return WEFT__UNLIKELY(pool->fork_generation !=
                          atomic_load_explicit(&weft__fork_generation, memory_order_relaxed));
}

/* The pool an entry point works on: pool itself, or for NULL the calling
 * thread's own pool (worker or context), else the default pool. Returns 0
 * and sets *out, or EAGAIN (the default pool cannot be created) or ECHILD
 * (pool belongs to the parent of this fork child). */
WEFT__HIDDEN int weft__pool_lookup(weft_pool *pool, weft_pool **out);

/* ECHILD, with its message (os/error.h): the answer of an entry point given
 * a stale pool. */
WEFT__HIDDEN int weft__pool_stale_error(void);

/* ESHUTDOWN, with its message: the answer of a submission to a pool that
 * weft_pool_destroy has closed (pending.h). */
WEFT__HIDDEN int weft__pool_closed_error(void);

/* weft__pool_lookup for entry points that cannot report an error: NULL for
 * either, and they fall back to running the work on the calling thread
 * (leaving lookup's message set, as weft.h allows). */
static inline weft_pool *weft__pool_resolve(weft_pool *pool) {
    weft_pool *p = NULL; /* set on success; NULL keeps gcc -O3 from warning */
    return weft__pool_lookup(pool, &p) == 0 ? p : NULL;
}

WEFT__HIDDEN void weft__pool_ref(weft_pool *pool);
WEFT__HIDDEN void weft__pool_unref(weft_pool *pool);

/* Is l's owner a context or caller slot of pool? Not a worker, nor a thread
 * outside every pool, nor anything of another pool (a job injected from
 * another pool's thread waits on a latch of that pool, whose index means
 * nothing here). */
static inline bool weft__latch_owned_by_context(const weft__latch *l, const weft_pool *pool) {
    return l->pool == pool && l->owner >= pool->threads && l->owner < pool->spares.first;
}

/* The start gate (weft_pool.start). */
enum { WEFT__START_GATED = 0, WEFT__START_GO, WEFT__START_ABORT };

/* A thread of pool caller waits for work of pool: pool serves caller until weft__pool_serve_end
 * (serve.c), and its memory stays (a reference: the work may end, and pool be destroyed, before the
 * end). */
static inline void weft__pool_serve_begin(weft_pool *pool, weft_pool *caller, weft__guest *g) {
    g->from = &caller->served;
    weft__pool_ref(pool);
    weft__serve_begin(&pool->served, g);
}

static inline void weft__pool_serve_end(weft_pool *pool, weft__guest *g) {
    weft__serve_end(&pool->served, g);
    weft__pool_unref(pool);
}

#endif
