/* SPDX-License-Identifier: MIT */
/* The pool's lifecycle (a worker's own life is worker.c's).
 *
 * weft_pool_create returns once every worker's on_start has returned, so
 * what on_start does with its pool (a broadcast needs every worker) finishes
 * before anyone can destroy the pool.
 *
 * weft_pool_destroy first drains the pool: it waits until every detached job
 * has finished and every call from another thread has returned, and closes
 * it to new ones (pending.h); then it sets each terminate latch and joins the
 * threads. What on_exit submits therefore fails with ESHUTDOWN instead of
 * being lost.
 *
 * The pool's memory is reference counted: a thread that queues work into the
 * pool from outside, or sets a latch of one of its workers, may still be
 * waking a worker after the work ran and destroy returned (latch.c,
 * "Lifetime"; weft__pool_inject). The last reference frees it.
 *
 * fork(): a child has one thread, the one that forked; every pool it
 * inherited has no workers there, and any lock of such a pool may be held
 * by a thread that did not survive. The atfork handlers (installed before
 * the first pool is created) therefore:
 *  1. prepare: take default_lock, so that no default pool is half created
 *     at the fork, and the other process-wide locks (serve.c's, env.c's), so
 *     that the child does not inherit them held by a thread that is gone;
 *  2. parent: release them;
 *  3. child: bump weft__fork_generation, which every pool recorded at
 *     creation, so that each entry point from an outside thread sees an
 *     inherited pool as stale (weft__pool_is_stale) and answers ECHILD, or
 *     runs the work on the calling thread, without touching the pool's locks;
 *     forget the default pool (weft_pool_default creates a fresh one on first
 *     use) but keep it reachable, on `abandoned`: its memory and the jobs
 *     queued in it stay as they were, never run; reset the forking thread's
 *     weft__tls_worker, so that a child forked inside a job is an outside
 *     thread; repair the OS seam (os/futex.h); release the locks.
 * weft_pool_destroy frees a stale pool's memory and nothing else: no latch,
 * no lock, no join.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/current.h"
#include "core/pool_config.h"
#include "core/worker.h"
#include "core/idle_env.h"
#include "core/latch_owner.h"

#include "idle/budget.h"
#include "os/cpus.h"
#include "os/env.h"
#include "os/error.h"
#include "os/futex.h"
#include "os/process.h"

_Thread_local struct weft__worker_head *weft__tls_worker;

/* Initial deque capacity: covers the depth of typical fork trees without a
 * grow; deques double on demand. */
#define DEQUE_CAPACITY 256

static _Atomic(weft_pool *) default_pool;
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static bool trace_at_exit; /* L (default_lock): stop_default_trace is registered */

_Atomic unsigned weft__fork_generation;
/* Fork child only: the default pools of its ancestors, linked through
 * `abandoned`. Never freed (their jobs' memory may be on stacks of threads
 * that no longer exist); kept reachable so that leak checkers see memory
 * deliberately kept, not lost. Written by the atfork child handler alone. */
static weft_pool *abandoned_defaults;

/* ---- Creating and freeing the pool -------------------------------------- */

static void *alloc_aligned(size_t size) {
    size = (size + WEFT__CACHELINE - 1) / WEFT__CACHELINE * WEFT__CACHELINE;
    void *p = aligned_alloc(WEFT__CACHELINE, size);
    if (p)
        memset(p, 0, size);
    return p;
}

/* What a stale pool's threads would have freed on their way out (worker_main)
 * or in weft_trace_stop: they did not survive the fork. */
static void free_stale_leftovers(weft_pool *pool) {
    for (unsigned i = 0; i < weft__pool_slots_all(pool); i++) {
        if (pool->workers[i].is_context)
            continue; /* pool_free's */
        weft__worker_free_jobs(&pool->workers[i]);
        weft__trace_buf_free(&pool->workers[i].stats.trace);
    }
    for (unsigned i = 0; pool->trace.collected && i < weft__pool_slots_all(pool); i++)
        weft__trace_buf_free(&pool->trace.collected[i]);
    free(pool->trace.collected);
    /* Nothing is written to it before stop: closing the child's copy of the
     * descriptor flushes nothing into the parent's file. */
    if (pool->trace.file)
        fclose(pool->trace.file);
}

/* Free the pool. stale: a parent's pool in a fork child, whose locks may be
 * held by threads that did not survive the fork: free their memory without
 * pthread_mutex_destroy (destroying a locked mutex is undefined). */
static void pool_free(weft_pool *pool, bool stale) {
    if (pool->workers) {
        if (stale)
            free_stale_leftovers(pool);
        for (unsigned i = 0; i < weft__pool_slots_all(pool); i++) {
            for (int p = 0; p < WEFT__PRIORITIES; p++)
                weft__deque_destroy(&pool->workers[i].deques[p]);
            if (pool->workers[i].is_context) { /* a context's or caller's: no thread to
                                                   free them */
                weft__worker_free_jobs(&pool->workers[i]);
                weft__trace_buf_free(&pool->workers[i].stats.trace); /* events after a stop */
            }
        }
        free(pool->workers);
    }
    if (!stale)
        weft__spares_destroy(&pool->spares);
    if (pool->sleep.slots && stale)
        weft__sleep_abandon(&pool->sleep);
    else if (pool->sleep.slots)
        weft__sleep_destroy(&pool->sleep);
    weft__trace_buf_free(&pool->trace.outside);
    if (!stale) {
        for (int p = 0; p < WEFT__PRIORITIES; p++)
            weft__injector_destroy(&pool->injectors[p]);
        pthread_mutex_destroy(&pool->trace.lock);
        pthread_mutex_destroy(&pool->trace.stop_lock);
        weft__broadcasts_destroy(&pool->broadcasts);
    }
    free(pool);
}

static int init_workers(weft_pool *pool) {
    unsigned slots = weft__pool_slots_all(pool);
    pool->workers = alloc_aligned((size_t)slots * sizeof(weft__worker));
    if (!pool->workers)
        return weft__error_set(ENOMEM, "out of memory for the pool's %u worker slots", slots);
    for (unsigned i = 0; i < slots; i++) {
        weft__worker *w = &pool->workers[i];
        for (int p = 0; p < WEFT__PRIORITIES; p++) {
            if (weft__deque_init(&w->deques[p], DEQUE_CAPACITY) !=
                0) /* pool_free: zeroed is empty */
                return weft__error_set(ENOMEM, "out of memory for the deques of worker slot %u", i);
        }
        w->pool = pool;
        w->index = i;
        w->is_context = i >= pool->threads && i < pool->spares.first;
        atomic_init(&w->taken, false);
        atomic_init(&w->h.frames, NULL);
        atomic_init(&w->h.unused, 0);
        atomic_init(&w->h.claim, 0);
        atomic_init(&w->serving, NULL);
        atomic_init(&w->serving_below, 0);
        w->rng = 0x9e3779b97f4a7c15ull * (i + 1);
        weft__latch_init_owned(&w->terminate, pool, i);
        atomic_init(&w->spare, WEFT__SPARE_PARKED);
    }
    return 0;
}

static int pool_init(weft_pool *pool, const weft_config *c) {
    /* Read once (cpus.c reads files): the pool's size and the leave
     * policy's CPU count come from the same figure. */
    unsigned cpus = weft__cpus_available();
    pool->cpus = cpus;
    pool->threads = weft__pool_config_threads(c->threads, cpus);
    pool->contexts = c->contexts;
    pool->callers = weft__pool_config_callers(c, pool->threads + pool->contexts);
    unsigned first_spare = pool->threads + pool->contexts + pool->callers;
    weft__spares_init(&pool->spares, first_spare, weft__pool_config_spares(c, first_spare),
                      c->spares != 0);
    if (weft__pool_slots_all(pool) > WEFT_THREADS_MAX)
        return weft__error_set(EINVAL,
                               "config threads %u + contexts %u + callers %u + spares %u is above "
                               "WEFT_THREADS_MAX %u",
                               pool->threads, pool->contexts, pool->callers, pool->spares.max,
                               WEFT_THREADS_MAX);
    snprintf(pool->name, sizeof pool->name, "%s", c->name ? c->name : "weft");
    pool->on_start = c->on_start;
    pool->on_exit = c->on_exit;
    pool->user = c->user;
    pool->budgeted = !c->outside_budget;
    pool->stack_size = c->stack_size ? c->stack_size : WEFT_STACK_SIZE_DEFAULT;
    /* Relaxed: see weft__pool_is_stale. */
    pool->fork_generation = atomic_load_explicit(&weft__fork_generation, memory_order_relaxed);
    atomic_init(&pool->refs, 1);
    atomic_init(&pool->start, WEFT__START_GATED);
    atomic_init(&pool->budget_waiters, 0);
    atomic_init(&pool->callers_seen, 0);
    weft__pending_init(&pool->pending);
    for (int p = 0; p < WEFT__PRIORITIES; p++)
        weft__injector_init(&pool->injectors[p]);
    weft__broadcasts_init(&pool->broadcasts);
    pthread_mutex_init(&pool->trace.lock, NULL);
    pthread_mutex_init(&pool->trace.stop_lock, NULL);
    weft__phase_init(&pool->phase);
    weft__served_init(&pool->served);
    pool->idle_env = weft__worker_idle_env(pool);
    int err = init_workers(pool);
    if (!err && weft__sleep_init(&pool->sleep, &pool->idle_env, pool->threads, pool->spares.first,
                                 weft__pool_slots_all(pool), cpus, c->wake == WEFT_WAKE_ALL,
                                 c->leave == WEFT_LEAVE_FAST) != 0) /* ENOMEM only */
        err = weft__error_set(ENOMEM, "out of memory for the sleep slots of %u workers",
                              weft__pool_slots_all(pool));
    return err;
}

/* ---- fork() --------------------------------------------------------------- */

/* The process-wide locks, in the order every other path takes them. */
static void fork_prepare(void) {
    /* No default pool is half created at the fork. A forking job gives its
     * budget slot back while it waits for the lock: the creator may be
     * waiting for a slot while it holds the lock (budget.h). */
    weft__budget_lock(&default_lock);
    weft__serve_fork_prepare();
    weft__env_fork_prepare();
    weft__budget_fork_prepare();
}

static void fork_parent(void) {
    weft__budget_fork_parent();
    weft__env_fork_release();
    weft__serve_fork_release();
    pthread_mutex_unlock(&default_lock);
}

/* The child's only thread, before fork() returns in it. */
static void fork_child(void) {
    weft__os_fork_child();
    weft__budget_fork_child(); /* releases its lock, taken by fork_prepare */
    /* Relaxed: the child has no other thread (weft__pool_is_stale). */
    atomic_fetch_add_explicit(&weft__fork_generation, 1, memory_order_relaxed);
    weft__set_current_worker(NULL); /* forked inside a job: an outside thread from now on */
    /* Relaxed: under default_lock, and alone. */
    weft_pool *old = atomic_load_explicit(&default_pool, memory_order_relaxed);
    if (old) {
        old->abandoned = abandoned_defaults;
        abandoned_defaults = old;
        atomic_store_explicit(&default_pool, NULL, memory_order_relaxed);
    }
    weft__env_fork_child(); /* releases its lock: all three taken by fork_prepare */
    weft__serve_fork_release();
    pthread_mutex_unlock(&default_lock);
}

static int fork_handlers_err;

static void install_fork_handlers(void) {
    fork_handlers_err = pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Before the first pool exists, once per process (pthread_once is fork-safe
 * in the C library: a child inherits it done, or not started). A pool
 * without the handlers would hang a fork child, so creation fails instead;
 * pthread_atfork fails only for lack of memory, and is not retried. */
static int need_fork_handlers(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_fork_handlers);
    if (fork_handlers_err)
        return weft__error_set(ENOMEM, "out of memory for the fork handlers (pthread_atfork)");
    return 0;
}

/* ---- The public lifecycle ----------------------------------------------- */

int weft_pool_create_sized(weft_pool **out, const weft_config *config, size_t config_size) {
    weft_config copy;
    const weft_config *c = &copy;
    if (!out)
        return weft__error_set(EINVAL, "pool is NULL");
    int err = weft__pool_config_import(&copy, config, config_size);
    if (!err)
        err = need_fork_handlers();
    if (err)
        return err;
    weft__fence_init(); /* before any deque is used (fence.h) */
    weft_pool *pool = alloc_aligned(sizeof *pool);
    if (!pool)
        return weft__error_set(ENOMEM, "out of memory for the pool (%zu bytes)", sizeof *pool);
    err = pool_init(pool, c);
    if (!err)
        err = weft__workers_start(pool);
    if (err) {
        pool_free(pool, false);
        return err;
    }
    weft__env_trace(pool);
    *out = pool;
    return 0;
}

/* The symbol behind the macro's name, for programs that call it without the
 * header's macro (through a pointer, from another language): the config is
 * as large as this header's. */
int(weft_pool_create)(weft_pool **out, const weft_config *config) {
    return weft_pool_create_sized(out, config, sizeof(weft_config));
}

void weft__pool_ref(weft_pool *pool) {
    /* Relaxed: the caller already holds a reference (or its owner does). */
    atomic_fetch_add_explicit(&pool->refs, 1, memory_order_relaxed);
}

void weft__pool_unref(weft_pool *pool) {
    weft__debug_yield();
    /* Acq_rel: every user's accesses happen-before the free. */
    if (atomic_fetch_sub_explicit(&pool->refs, 1, memory_order_acq_rel) == 1)
        pool_free(pool, false);
}

/* destroy's EBUSY for follow-ups parked on an unset event (pending.h). */
static int parked_followups(void) {
    return weft__error_set(EBUSY, "an event of the pool that is not set holds follow-ups "
                                  "(weft_event_then): set or destroy it first");
}

/* Wait until the pool's detached jobs have finished and close it to new ones
 * (pending.h). EBUSY, with the pool open again, if follow-ups of an unset event
 * are parked: they could be queued later, into a pool that would be gone. */
static int drain(weft_pool *pool) {
    weft__pending *p = &pool->pending;
    for (;;) {
        /* We hold a runnable count, so no one can set the latch before our own
         * release: it is ours to initialise. */
        weft__latch_init(&p->drained);
        weft__pending_release(p);
        weft__debug_yield();
        weft__latch_wait(&p->drained);
        weft__debug_yield();
        /* Relaxed: the latch's acquire already gave us the jobs' writes, and
         * the decision rests on the word's modification order alone. Reading
         * 0 is final: every increment needs runnable or parked above 0
         * (pending.h). */
        uint64_t word = atomic_load_explicit(&p->word, memory_order_relaxed);
        if (word == 0)
            return 0;
        /* Take the pool's count back (relaxed: only the count matters). A parked
         * follow-up answers EBUSY; a runnable one (its event was set after runnable
         * reached 0, or the latch was set by an older drain) is waited for. */
        while (word != 0 && !atomic_compare_exchange_weak_explicit(
                                &p->word, &word, word + WEFT__PENDING_RUNNABLE,
                                memory_order_relaxed, memory_order_relaxed)) {
        }
        if (word == 0)
            return 0;
        if (weft__pending_parked(word))
            return parked_followups();
    }
}

/* Would destroying pool wait for the caller? It does if the caller runs a
 * job of pool, or of a pool that does work a job of pool waits for (serve.c). */
static int check_not_inside(weft_pool *pool) {
    weft__worker *self = weft__current_worker();
    if (!self)
        return 0;
    if (self->pool == pool && self->is_context && !weft__is_caller(self))
        return weft__error_set(EBUSY, "the calling thread holds context %u of the pool",
                               self->index - pool->threads);
    if (self->pool == pool) /* a worker or caller runs its job */
        return weft__error_set(EDEADLK, "called from a job of the pool, which destroy would "
                                        "wait for");
    if (weft__serve_reaches(&self->pool->served, &pool->served))
        return weft__error_set(EDEADLK, "called from a thread of a pool doing work that a job "
                                        "of this pool waits for: destroy would wait for it");
    return 0;
}

int weft_pool_destroy(weft_pool *pool) {
    if (!pool)
        return weft__error_set(EINVAL, "pool is NULL");
    if (pool->is_default) /* the default pool, or one abandoned by a fork */
        return weft__error_set(EINVAL, "pool is the default pool, which lives until exit");
    if (weft__pool_is_stale(pool)) {
        pool_free(pool, true); /* its workers, its jobs' threads: all gone */
        return 0;
    }
    int err = check_not_inside(pool);
    if (err)
        return err;
    for (unsigned i = pool->threads; i < pool->threads + pool->contexts; i++)
        if (atomic_load_explicit(&pool->workers[i].taken, memory_order_acquire))
            return weft__error_set(EBUSY, "context %u of the pool is still acquired",
                                   i - pool->threads); /* acquire: pairs with release */
    /* Relaxed: a quick answer from the count alone; drain decides. */
    if (weft__pending_parked(atomic_load_explicit(&pool->pending.word, memory_order_relaxed)))
        return parked_followups();
    weft__phase_end_all(&pool->phase); /* as oneTBB: destroy ends phases */
    err = drain(pool);
    if (err)
        return err;
    /* Relaxed: the drain ordered every start and stop before us. */
    if (atomic_load_explicit(&pool->trace.on, memory_order_relaxed))
        pool->trace.stop_drained(pool); /* needs the workers: before they stop */
    weft__workers_stop(pool, pool->threads);
    weft__spares_stop(pool); /* after the workers: their jobs may block until the end */
    weft__pool_unref(pool);
    return 0;
}

/* Registered once per process image, so a fork child inherits it: there it
 * stops the child's own default pool, if it made one (NULL would create one). */
static void stop_default_trace(void) {
    weft_pool *pool = atomic_load_explicit(&default_pool, memory_order_acquire);
    if (pool)
        weft_trace_stop(pool);
}

weft_pool *weft_pool_default(void) {
    /* Acquire: pairs with the release store below; the pool is fully built. */
    weft_pool *pool = atomic_load_explicit(&default_pool, memory_order_acquire);
    if (pool)
        return pool;
    weft__budget_lock(&default_lock); /* held while the pool starts: budget.h */
    /* Relaxed: under default_lock, which every writer holds. */
    pool = atomic_load_explicit(&default_pool, memory_order_relaxed);
    if (!pool && weft_pool_create(&pool, NULL) == 0) {
        pool->is_default = true;
        atomic_store_explicit(&default_pool, pool, memory_order_release);
        /* Relaxed: set by weft_pool_create on this thread. */
        if (atomic_load_explicit(&pool->trace.on, memory_order_relaxed) && !trace_at_exit)
            trace_at_exit = atexit(stop_default_trace) == 0; /* WEFT_TRACE: lives to exit */
    }
    pthread_mutex_unlock(&default_lock);
    if (!pool) { /* this thread's weft_pool_create failed, and said why */
        weft__error_prefix(0, "the default pool could not be created: ");
        return NULL;
    }
    /* The pool's workers run our code until exit: no dlclose may unmap it
     * (os/process.h). After the unlock: the loader's lock is taken inside. Only
     * threads that found no pool at their first look get here, and the pin
     * is idempotent. */
    weft__os_keep_loaded();
    return pool;
}

int weft__pool_lookup(weft_pool *pool, weft_pool **out) {
    weft__worker *w = weft__current_worker(); /* a worker's or a context's own pool */
    if (!pool)
        pool = w ? w->pool : weft_pool_default();
    else if (!(w && w->pool == pool) && weft__pool_is_stale(pool))
        return weft__pool_stale_error(); /* a worker's own pool never is: skip the check */
    *out = pool;
    return pool ? 0 : EAGAIN; /* weft_pool_default said why */
}

int weft__pool_stale_error(void) {
    return weft__error_set(ECHILD, "the pool was created before this process forked: it has "
                                   "no workers in the child");
}

int weft__pool_closed_error(void) {
    return weft__error_set(ESHUTDOWN, "weft_pool_destroy has closed the pool (its workers are "
                                      "stopping: on_exit)");
}

unsigned weft_pool_threads(const weft_pool *pool) {
    const weft_pool *p = weft__pool_resolve((weft_pool *)pool);
    return p ? p->threads : 0;
}

int weft_thread_index(void) {
    weft__worker *w = weft__current_worker();
    return w ? (int)w->index : -1;
}

#define WEFT__STR2(x) #x
#define WEFT__STR(x)  WEFT__STR2(x)

const char *weft_version(void) {
    return WEFT__STR(WEFT_VERSION_MAJOR) "." WEFT__STR(WEFT_VERSION_MINOR) "." WEFT__STR(
        WEFT_VERSION_PATCH);
}
