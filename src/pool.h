/* SPDX-License-Identifier: MIT */
/* The pool and its workers: what every module below the public API shares. */
#ifndef WEFT_POOL_H
#define WEFT_POOL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "weft.h"

#include "atomics.h"
#include "broadcast_list.h"
#include "deque.h"
#include "group.h"
#include "injector.h"
#include "job.h"
#include "latch.h"
#include "pending.h"
#include "serve.h"
#include "sleep.h"
#include "stats.h"

/* Queues come in pairs indexed by priority: [WEFT_PRIORITY_NORMAL],
 * [WEFT_PRIORITY_HIGH]. */
#define WEFT__PRIORITIES 2

typedef struct weft__worker {
    /* What a fork and its pop touch (include/weft/join.h, ABI): the newest
     * join frame, the running job's group and priority, the count of B run
     * inline; then the claim word, written by thieves too, on its own line.
     * First, so that the thread-local head pointer is the worker's. */
    struct weft__worker_head h;
    weft__deque deques[WEFT__PRIORITIES]; /* each on its own cache lines */
    /* Set before the worker starts. */
    alignas(WEFT__CACHELINE) weft_pool *pool; /* I */
    unsigned index;                           /* I: slot; contexts, then callers, follow
                                                 the workers */
    bool is_context; /* I: a context (context.c) or a caller slot (callers.c): no thread of its own
                      */
    /* Owner only. */
    uint64_t rng;              /* O: victim selection */
    weft__heap_job *free_jobs; /* O: recycled heap jobs */
    uint64_t broadcast_seen;   /* O: last broadcast run (broadcast.c) */
    unsigned free_count;       /* O */
    bool force_steal;        /* O: the final check saw private jobs: the next sweep may take one */
    bool forced_raced;       /* O: the last forced sweep lost a race: it is not spent */
    uint64_t forced_in;      /* O: 1 + the sleeps count when a forced sweep was spent (0: none) */
    uint32_t forced_answers; /* O: the pool's answer count before that sweep (worker.c) */
    /* The thread and how it is claimed and stopped. */
    alignas(WEFT__CACHELINE) _Atomic bool taken; /* A: contexts and callers: a thread holds it */
    /* The job this worker runs innermost, for a context that waits for it
     * (context.c, the take-back): its latch (NULL: no context waits for it,
     * or the worker runs no job), and the stack address below which the
     * join frames it forks lie. The owner writes them around each job it
     * runs; contexts read them. */
    _Atomic(weft__latch *) serving;  /* A */
    _Atomic uintptr_t serving_below; /* A */
    pthread_t thread;
    weft__latch terminate;                      /* owned by this worker; set by weft_pool_destroy */
    alignas(WEFT__CACHELINE) weft__stats stats; /* written by this worker only */
} weft__worker;

_Static_assert(offsetof(weft__worker, h) == 0, "the head is the worker's start (join.h)");
_Static_assert(offsetof(struct weft__worker_head, prio) + sizeof(uint32_t) <= 64,
               "the fields a fork and its pop write share one 64-byte line");

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
    /* Start-up (weft_pool_create): the workers wait at a gate until every
     * thread exists, then run on_start; the creator waits for all of them. */
    _Atomic uint32_t start;          /* A: a WEFT__START_* value; futex word */
    weft__count_latch started;       /* a count per worker whose on_start has not returned */
    _Atomic uint32_t budget_waiters; /* A: its workers queued NORMAL for a slot (budget.c) */
    _Atomic uint32_t callers_seen;   /* A: caller slots ever taken, a prefix (callers.c) */
    /* Set before the pool is published. */
    alignas(WEFT__CACHELINE) weft__worker *workers; /* I: threads workers, then contexts,
                                                       then callers */
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

/* The worker running on this thread, or NULL outside every pool: the
 * thread-local head pointer of join.h (ABI), whose head is the worker's
 * first member. */
static inline weft__worker *weft__current_worker(void) {
    return (weft__worker *)weft__tls_worker;
}

/* Make w (NULL: none) the worker running on this thread. */
static inline void weft__set_current_worker(weft__worker *w) {
    weft__tls_worker = w ? &w->h : NULL;
}

/* The current worker if it belongs to pool, else NULL. */
static inline weft__worker *weft__worker_of(weft_pool *pool) {
    weft__worker *w = weft__current_worker();
    return w && w->pool == pool ? w : NULL;
}

/* Every slot of the pool: workers, contexts, callers. */
static inline unsigned weft__pool_slots_all(const weft_pool *pool) {
    return pool->threads + pool->contexts + pool->callers;
}

/* The slots that may hold jobs: every worker and context, and the caller
 * slots taken so far (callers.c), so that a pool whose callers only wait, or
 * that one caller uses, does not sweep slots nobody ever holds. */
static inline unsigned weft__pool_victims(weft_pool *pool) {
    /* Acquire: pairs with weft__caller_take's raise; a thief that counts a
     * slot sees it set up. A sweep that misses a slot taken just now is the
     * same as one that ran before: the slot's first post of jobs meets the
     * sleep protocol's counters like any other (callers.c). */
    return pool->threads + pool->contexts +
           atomic_load_explicit(&pool->callers_seen, memory_order_acquire);
}

/* Is w a caller slot (callers.c), held by an outside thread for one call? */
static inline bool weft__is_caller(const weft__worker *w) {
    return w->index >= w->pool->threads + w->pool->contexts;
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

/* weft__pool_lookup for entry points that cannot report an error: NULL for
 * either, and they fall back to running the work on the calling thread. */
static inline weft_pool *weft__pool_resolve(weft_pool *pool) {
    weft_pool *p;
    return weft__pool_lookup(pool, &p) == 0 ? p : NULL;
}

WEFT__HIDDEN void weft__pool_ref(weft_pool *pool);
WEFT__HIDDEN void weft__pool_unref(weft_pool *pool);

/* On the calling worker: fn(arg) in group, then set done, last (a stack
 * job's or a join frame's B run by whoever took it). */
WEFT__HIDDEN void weft__worker_run_and_set(weft_fn *fn, void *arg, weft__group *group,
                                           weft__latch *done);

/* Run jobs of w's pool until latch is set (participating wait). */
WEFT__HIDDEN void weft__worker_wait_until_cold(weft__worker *w, weft__latch *latch);

/* High-priority work queued in pool: injected, or public on a deque?
 * Hints (worker.c). */
WEFT__HIDDEN bool weft__pool_high_queued(weft_pool *pool);
/* Does high-priority work wait while w runs normal work that could give
 * way to it? And once it does, run one job of it here, at high priority,
 * if no other thread took it first (worker.c, "Normal work gives way"). */
WEFT__HIDDEN bool weft__worker_high_waits(weft__worker *w);
WEFT__HIDDEN void weft__worker_give_way(weft__worker *w);

/* weft__worker_high_waits for w (NULL: not a worker), with the common
 * answer inline: a pool that never saw high work has none waiting. */
static inline bool weft__worker_should_give_way(weft__worker *w) {
    /* Relaxed: see weft__pool_note_high_seen. */
    return w && WEFT__UNLIKELY(atomic_load_explicit(&w->pool->high_seen, memory_order_relaxed)) &&
           weft__worker_high_waits(w);
}

/* The same for a context: its own jobs only, then sleep on the latch. */
WEFT__HIDDEN void weft__context_wait_until(weft__worker *ctx, weft__latch *latch);

/* w shared jobs: wake the context asleep on the job w runs, if one is, to
 * take them back (context.c). */
WEFT__HIDDEN void weft__context_nudge(weft__worker *w);

/* Run what is still queued on a context or caller slot that its holder gives
 * back (jobs nobody waited for). */
WEFT__HIDDEN void weft__context_run_leftovers(weft__worker *ctx);

static inline void weft__worker_wait_until(weft__worker *w, weft__latch *latch) {
    if (weft__latch_probe(latch))
        return;
    if (WEFT__UNLIKELY(w->is_context))
        weft__context_wait_until(w, latch);
    else
        weft__worker_wait_until_cold(w, latch);
}

/* Share w's private jobs and tell the sleep module (cold path of push). */
WEFT__HIDDEN WEFT__COLD void weft__worker_offer(weft__worker *w, weft__deque *d);

/* The push that began an episode of d's private part (deque.c): fence, then
 * share if someone could take the job now. */
WEFT__HIDDEN WEFT__COLD void weft__worker_push_first(weft__worker *w, weft__deque *d);

/* Remember that high-priority work was submitted (high_seen). Relaxed, as
 * high_pushed: a stale false delays a high job by a piece of normal work,
 * never loses it; the load first keeps the line shared. */
static inline void weft__pool_note_high_seen(weft_pool *pool) {
    if (!atomic_load_explicit(&pool->high_seen, memory_order_relaxed))
        atomic_store_explicit(&pool->high_seen, true, memory_order_relaxed);
}

/* Remember that a deque may from now on hold a high-priority job. */
static inline void weft__pool_note_high(weft_pool *pool) {
    /* Relaxed: a stale false costs parallelism, never a job. The pusher sees
     * its own store, so it runs the job itself if nobody steals it; a worker
     * woken for the job synchronises with its waker (the slot lock, the JEC
     * CAS) and so sees the flag. The load first keeps the line shared once
     * the flag is set. */
    if (!atomic_load_explicit(&pool->high_pushed, memory_order_relaxed))
        atomic_store_explicit(&pool->high_pushed, true, memory_order_relaxed);
    weft__pool_note_high_seen(pool);
}

/* w runs at priority prio from now on: what it forks is pushed there. Every
 * raise of a worker's priority goes through here (restoring an outer one needs
 * no note: it was noted when set), and weft__pool_submit_prio notes explicit
 * high submissions, so no high job reaches a deque unnoted while
 * weft__worker_push_prio stays free of the check. */
static inline void weft__worker_set_prio(weft__worker *w, weft_priority prio) {
    if (WEFT__UNLIKELY(prio == WEFT_PRIORITY_HIGH))
        weft__pool_note_high(w->pool);
    w->h.prio = prio;
}

/* What a worker serves (its `serving` fields), saved around a nested job. */
typedef struct weft__serving {
    weft__latch *latch;
    uintptr_t below;
} weft__serving;

/* Is l's owner a context or caller slot of pool? Not a worker, nor a thread
 * outside every pool, nor anything of another pool (a job injected from
 * another pool's thread waits on a latch of that pool, whose index means
 * nothing here). */
static inline bool weft__latch_owned_by_context(const weft__latch *l, const weft_pool *pool) {
    return l->pool == pool && l->owner >= pool->threads;
}

/* w runs a job with latch (NULL: none) whose frames lie below `below`, until
 * weft__worker_serve_end; returns what it served before. Release: a context
 * that reads the latch (acquire) reads this job's `below` or a later one, a
 * deeper job's, which only refuses more (context.c, ours). */
static inline weft__serving weft__worker_serve(weft__worker *w, weft__latch *latch,
                                               uintptr_t below) {
    weft__serving outer = {atomic_load_explicit(&w->serving, memory_order_relaxed),
                           atomic_load_explicit(&w->serving_below, memory_order_relaxed)};
    atomic_store_explicit(&w->serving_below, below, memory_order_relaxed);
    atomic_store_explicit(&w->serving, latch, memory_order_release);
    return outer;
}

/* Back to the outer job. Release: as weft__worker_serve's, for its `below`. */
static inline void weft__worker_serve_end(weft__worker *w, weft__serving outer) {
    atomic_store_explicit(&w->serving_below, outer.below, memory_order_relaxed);
    atomic_store_explicit(&w->serving, outer.latch, memory_order_release);
}

/* Call fn(arg) on w at priority prio (what it forks inherits it), then give
 * w back the priority it had. */
static inline void weft__worker_call_at(weft__worker *w, weft_priority prio, void (*fn)(void *arg),
                                        void *arg) {
    weft_priority outer = w->h.prio;
    weft__worker_set_prio(w, prio);
    fn(arg);
    w->h.prio = outer; /* no note: it was noted when set */
}

/* w (NULL: not a worker) enters group for the work it is about to do; returns
 * the group to give back to weft__worker_leave when that work is done. */
static inline weft__group *weft__worker_enter(weft__worker *w, weft__group *group) {
    if (!w)
        return NULL;
    weft__group *outer = w->h.group;
    w->h.group = group;
    return outer;
}

static inline void weft__worker_leave(weft__worker *w, weft__group *outer) {
    if (w)
        w->h.group = outer;
}

/* w (NULL: not a worker) starts group g, nested in the group w is in now,
 * and enters it; returns that outer group for weft__worker_leave. */
static inline weft__group *weft__worker_enter_new(weft__worker *w, weft__group *g) {
    weft__group *outer = weft__worker_enter(w, g);
    weft__group_init(g, outer);
    return outer;
}

/* The group a job queued by the calling thread belongs to: the group of the
 * work that thread runs now (NULL outside every pool). */
static inline weft__group *weft__current_group(void) {
    weft__worker *w = weft__current_worker();
    return w ? w->h.group : NULL;
}

/* Could someone take d's jobs now: an idle worker, or a thief that asked? */
static inline bool weft__worker_wanted(weft__worker *w, weft__deque *d) {
    /* Relaxed movesplit: a request, answered at the latest by the next push or pop. */
    return weft__sleep_wants_work(&w->pool->sleep) ||
           atomic_load_explicit(&d->movesplit, memory_order_relaxed);
}

/* Push a job on w's deque. It stays private (no synchronisation) unless some
 * worker could take it now: an idle or sleeping worker, or a thief that asked
 * this deque for work; then w shares its private jobs and wakes a sleeper if
 * needed. 0 or ENOMEM.
 * The first private job of an episode takes the cold path: a fence orders it
 * against workers going to sleep (deque.c, "the episode"), and it is shared if
 * nothing is public, so that a thief needs no barrier to take the only job of
 * a deque; that costs a public pop once per emptied deque (the right spine of
 * a stolen tree), not per job. */
static inline int weft__worker_push_prio(weft__worker *w, weft__job *job, weft_priority prio) {
    weft__deque *d = &w->deques[prio];
    int err = weft__deque_push(d, job);
    if (WEFT__UNLIKELY(err != 0))
        return err;
    if (WEFT__UNLIKELY(weft__deque_first_private(d)))
        weft__worker_push_first(w, d);
    else if (WEFT__UNLIKELY(weft__worker_wanted(w, d)))
        weft__worker_offer(w, d);
    return 0;
}

/* Push at the priority of the job running now (forked jobs inherit it). */
static inline int weft__worker_push(weft__worker *w, weft__job *job) {
    return weft__worker_push_prio(w, job, w->h.prio);
}

/* Pop w's newest job of priority prio; announce jobs the pop shared on a
 * thief's request. */
static inline weft__job *weft__worker_pop_prio(weft__worker *w, weft_priority prio) {
    weft__deque *d = &w->deques[prio];
    weft__job *job = weft__deque_pop(d);
    if (WEFT__UNLIKELY(d->unannounced != 0)) {
        unsigned n = d->unannounced;
        d->unannounced = 0;
        weft__sleep_new_jobs(&w->pool->sleep, n, false);
    }
    return job;
}

/* Pop at the priority of the job running now (where its joins pushed). */
static inline weft__job *weft__worker_pop(weft__worker *w) {
    return weft__worker_pop_prio(w, w->h.prio);
}

/* Queue a job in the pool's injector of priority prio (any thread) and wake
 * a worker. */
WEFT__HIDDEN void weft__pool_inject(weft_pool *pool, weft__job *job, weft_priority prio);

/* What the sleep protocols need from pool: its final check (the injectors
 * and broadcasts a worker must not sleep on), its trace hook (idle_env.c). */
WEFT__HIDDEN weft__idle_env weft__worker_idle_env(weft_pool *pool);

/* How many requests the owners of the pool's deques and frames have answered
 * so far (idle_env.c): a sum that wraps, whose changes end a spent forced
 * sweep (worker.c). */
WEFT__HIDDEN uint32_t weft__pool_answers(weft_pool *pool);

/* The start gate (weft_pool.start). */
enum { WEFT__START_GATED = 0, WEFT__START_GO, WEFT__START_ABORT };

/* Create every worker thread, then let them run on_start and wait until all
 * have; on failure the threads created so far exit without running a hook
 * (worker.c). */
WEFT__HIDDEN int weft__workers_start(weft_pool *pool);
/* Set the terminate latches of the first `started` workers and join them. */
WEFT__HIDDEN void weft__workers_stop(weft_pool *pool, unsigned started);
/* Free a worker's (or context's) recycled heap jobs. */
WEFT__HIDDEN void weft__worker_free_jobs(weft__worker *w);

/* Queue a job at priority prio: on the caller's deque if it is a worker of
 * pool, else inject. 0 or ENOMEM (a full deque that cannot grow). */
WEFT__HIDDEN int weft__pool_submit_prio(weft_pool *pool, weft__job *job, weft_priority prio);

/* The same at the caller's current priority (normal outside the pool); a
 * full deque falls back to the injector, so it cannot fail. */
WEFT__HIDDEN void weft__pool_submit(weft_pool *pool, weft__job *job);

/* Where a detached job goes (weft_spawn, event follow-ups): like
 * weft__pool_submit_prio, except that a context injects it, since a context
 * runs its own queue only while it waits. */
WEFT__HIDDEN int weft__pool_submit_detached(weft_pool *pool, weft__job *job, weft_priority prio);

/* Heap jobs from the calling worker's free list, or malloc. NULL: ENOMEM. */
WEFT__HIDDEN weft__heap_job *weft__heap_job_alloc(void);
WEFT__HIDDEN void weft__heap_job_free(weft__heap_job *job);

/* Make h run fn(arg), already counted in counter (a scope's) or pending (the
 * pool's) until it has run; the caller then queues it. */
WEFT__HIDDEN void weft__heap_job_init(weft__heap_job *h, weft__count_latch *counter,
                                      weft__pending *pending, weft_fn *fn, void *arg);

/* Queue a heap job like job (its fn, arg, counter, group and release; the
 * counter held by the caller), counted in the counter until it has run or
 * been skipped. 0, or ENOMEM (nothing queued, counter unchanged). */
WEFT__HIDDEN int weft__spawn_counted(weft_pool *pool, const weft__heap_job *job,
                                     weft_priority prio);

/* Queue fn(arg) as a detached job of the pool, counted in its pending work.
 * 0, ENOMEM, or ESHUTDOWN (weft_pool_destroy closed the pool; nothing queued). */
WEFT__HIDDEN int weft__spawn_detached(weft_pool *pool, weft_fn *fn, void *arg, weft_priority prio);

/* A thread of another pool (caller) waits for work of pool: pool serves the
 * caller's pool until weft__pool_serve_end (serve.c), and its memory stays
 * (a reference: the work may end, and pool be destroyed, before the end). */
static inline void weft__pool_serve_begin(weft_pool *pool, weft__worker *caller, weft__guest *g) {
    g->from = &caller->pool->served;
    weft__pool_ref(pool);
    weft__serve_begin(&pool->served, g);
}

static inline void weft__pool_serve_end(weft_pool *pool, weft__guest *g) {
    weft__serve_end(&pool->served, g);
    weft__pool_unref(pool);
}

#endif
