/* SPDX-License-Identifier: MIT */
/* Spare threads: the pool's work goes on while its jobs block.
 *
 * A job that blocks outside weft (weft_blocking_begin: a read, a lock,
 * MPI) keeps its thread, and a participating wait cannot run anything on a
 * thread that sleeps in the kernel. The legacy Rayon sleep names the gap: a
 * pool that can only scale down. Here the pool scales up instead, as Go's
 * scheduler hands a processor to another thread at a blocking system call
 * and Java's ForkJoinPool compensates a ManagedBlocker: each job that
 * blocks calls a spare thread, which runs the pool's work as a worker does
 * until the job runs on. Fibers would let the blocked job's own thread go on
 * with other work, but C gives no portable way to switch stacks; a thread is
 * what every platform has.
 *
 * Slots. The pool reserves `max` spare slots after its callers' (weft.h:
 * weft_config.spares), each a full worker slot: deques, join frames, a
 * sleep slot. A spare's thread is created the first time the slot is
 * needed, and then stays, parked on its `spare` word, for the next block
 * (a futex wake, not a thread), until it has been parked for
 * WEFT__SPARE_IDLE_NS: then it exits if it is the newest. `seen`, the
 * started prefix, is what thieves sweep (pool.h, weft__pool_victims), so a
 * pool whose jobs never block sweeps no spare slot; only the last slot's
 * thread exits (GONE), so the prefix stays one. A parked spare's deques are
 * empty (its wait ends between jobs, every job it forked joined), so a
 * thief that still counts a GONE slot finds nothing there. Its thread is
 * joined when the slot is used again, or by destroy.
 *
 * States, each spare's under the lock: PARKED (out of the pool's work and
 * out of the sleep counters), CALLED (a worker: it searches, runs jobs,
 * sleeps and is woken in the pool's sleep protocol, until its terminate
 * latch is set), RELEASED (the latch is set; it ends the job it runs, if
 * any, and parks), EXIT (destroy).
 *
 * Invariant: after every begin and end of a blocking region, active (the
 * CALLED spares) equals min(blocked, what the spares can give): a begin
 * calls one if active < blocked, an end releases one if active > blocked,
 * both under the lock. A begin that finds every started spare CALLED or
 * RELEASED and no slot left calls none; a RELEASED spare, before it parks,
 * takes that call itself (active < blocked again), so that no block stays
 * uncompensated while a spare finishes a job.
 *
 * Why a lock: a blocking region is entered before a block in the kernel
 * (a system call at least), so one lock per begin and end costs little
 * beside it, and it keeps the counts and the states one consistent set
 * that the invariant above is about.
 *
 * Liveness: a called spare is a worker in every respect the sleep protocol
 * knows (idle/sleep.h, weft__sleep_slot_searches): a job posted while it
 * sleeps wakes it as it would a worker, and its release is a latch set
 * through the protocol (weft__sleep_set_latch), which wakes it if it sleeps
 * on it. A released spare leaves its search through stop_looking, which
 * hands over to a sleeper what it leaves behind (sleep.c); a parked one is
 * counted nowhere, like a worker that runs a job, and no poster waits for
 * it. What a blocked job left to run (its private join frames and deque)
 * it shared when it entered its region (task.c), so the spare can take it.
 *
 * Budget: a called spare of a budgeted pool takes a CPU slot as a starting
 * worker does (its terminate latch ends a wait for one), the slot its
 * blocked job gave back; it gives it back when it parks.
 */
#include "core/spare.h"

#include <errno.h>
#include <stdio.h>

#include "core/current.h"
#include "core/pool.h"
#include "idle/budget.h"
#include "idle/sleep.h"
#include "os/clock.h"
#include "os/error.h"
#include "os/futex.h"
#include "os/thread.h"

uint64_t weft__spare_idle_ns = WEFT__SPARE_IDLE_NS;
_Atomic uint64_t weft__spare_park_waits;

void weft__spares_init(weft__spares *s, unsigned first, unsigned max, bool hooks) {
    pthread_mutex_init(&s->lock, NULL);
    s->first = first;
    s->max = max;
    s->hooks = hooks;
    atomic_init(&s->seen, 0);
    s->blocked = s->active = 0;
    s->closing = false;
}

void weft__spares_destroy(weft__spares *s) {
    pthread_mutex_destroy(&s->lock);
}

/* Under the lock: w's state becomes st, and its thread learns it. Release:
 * the thread's acquire load sees what came before (its latch made anew). */
static void set_state(weft__worker *w, uint32_t st) {
    atomic_store_explicit(&w->spare, st, memory_order_release);
    weft__os_wake_one(&w->spare);
}

static uint32_t state_of(weft__worker *w) {
    /* Acquire: pairs with set_state. */
    return atomic_load_explicit(&w->spare, memory_order_acquire);
}

/* Under the lock: w, not running the pool's work, is called to. Its latch
 * is made anew while nobody uses it: a parked spare's wait ended with it
 * set, and no setter keeps it (spares_release, stop: under this lock). */
static void call(weft__spares *s, weft__worker *w) {
    weft__latch_init_owned(&w->terminate, w->pool, w->index);
    s->active++;
    set_state(w, WEFT__SPARE_CALLED);
}

static void *spare_main(void *arg);

/* Under the lock: a spare for one more blocked job, if one is left. */
static void call_one(weft_pool *pool) {
    weft__spares *s = &pool->spares;
    /* Relaxed: written under this lock. */
    unsigned seen = atomic_load_explicit(&s->seen, memory_order_relaxed);
    for (unsigned i = 0; i < seen; i++) {
        weft__worker *w = &pool->workers[s->first + i];
        if (state_of(w) == WEFT__SPARE_PARKED) {
            call(s, w);
            return;
        }
    }
    if (seen == s->max)
        return; /* every spare runs: the pool goes on with fewer threads */
    weft__worker *w = &pool->workers[s->first + seen];
    if (w->spare_joinable) { /* GONE: its thread exits without taking the lock again */
        pthread_join(w->thread, NULL);
        w->spare_joinable = false;
    }
    call(s, w);
    pthread_attr_t attr;
    int err = pthread_attr_init(&attr);
    if (!err) {
        pthread_attr_setstacksize(&attr, pool->stack_size); /* checked at creation */
        w->stats.started_ns = weft__now_ns();
        err = pthread_create(&w->thread, &attr, spare_main, w);
        pthread_attr_destroy(&attr);
    }
    if (err) {       /* no thread now: the job blocks uncompensated, as with no spare left */
        s->active--; /* the slot stays past `seen`: the next call starts it anew */
        return;
    }
    w->spare_joinable = true;
    /* Release: pairs with weft__pool_victims' acquire; the slot was set up
     * when the pool was made, its thread runs from now. */
    atomic_store_explicit(&s->seen, seen + 1, memory_order_release);
}

/* Under the lock: one called spare goes back. The newest first: the older
 * ones stay the ones that run, and their slots the ones thieves find. */
static void release_one(weft_pool *pool) {
    weft__spares *s = &pool->spares;
    /* Relaxed: written under this lock. */
    for (unsigned i = atomic_load_explicit(&s->seen, memory_order_relaxed); i-- > 0;) {
        weft__worker *w = &pool->workers[s->first + i];
        if (state_of(w) == WEFT__SPARE_CALLED) {
            s->active--;
            /* Relaxed: the spare waits on the word only while it says
             * PARKED, and CALLED's set_state woke it from that; it reads
             * the state under this lock once its latch, set next, ends its
             * work (at once if it had not started). */
            atomic_store_explicit(&w->spare, WEFT__SPARE_RELEASED, memory_order_relaxed);
            weft__sleep_set_latch(&pool->sleep, &w->terminate); /* wakes it if it sleeps */
            return;
        }
    }
}

void weft__spares_block(weft_pool *pool) {
    weft__spares *s = &pool->spares;
    pthread_mutex_lock(&s->lock);
    s->blocked++;
    if (s->active < s->blocked && !s->closing)
        call_one(pool);
    pthread_mutex_unlock(&s->lock);
}

void weft__spares_unblock(weft_pool *pool) {
    weft__spares *s = &pool->spares;
    pthread_mutex_lock(&s->lock);
    s->blocked--;
    if (s->active > s->blocked)
        release_one(pool);
    pthread_mutex_unlock(&s->lock);
}

/* Under the lock, for w, parked since parked_at: has it been parked for
 * WEFT__SPARE_IDLE_NS, and is it the newest spare? Then it is GONE (a call
 * creates a thread for its slot again). */
static bool leaves(weft__spares *s, weft__worker *w, uint64_t parked_at) {
    /* Relaxed: written under this lock. */
    unsigned seen = atomic_load_explicit(&s->seen, memory_order_relaxed);
    if (w->index != s->first + seen - 1 || s->closing ||
        weft__now_ns() - parked_at < weft__spare_idle_ns)
        return false;
    /* Relaxed: its own word, read by others under this lock only. */
    atomic_store_explicit(&w->spare, WEFT__SPARE_GONE, memory_order_relaxed);
    /* Relaxed: a thief that still counts the slot finds its deques empty. */
    atomic_store_explicit(&s->seen, seen - 1, memory_order_relaxed);
    return true;
}

/* A spare's thread: park until called, run the pool's work until released,
 * park again; until destroy, or until it has been parked for long. */
static void *spare_main(void *arg) {
    weft__worker *w = arg;
    weft_pool *pool = w->pool;
    weft__spares *s = &pool->spares;
    weft__set_current_worker(w);
    char name[32];
    snprintf(name, sizeof name, "%s-%u", pool->name, w->index);
    weft__os_set_thread_name(name);
    weft__sleep_thread_start(&pool->sleep);
    if (s->hooks && pool->on_start)
        pool->on_start(w->index, pool->user);
    pthread_mutex_lock(&s->lock);
    for (uint64_t parked_at = 0;;) {
        uint32_t st;
        while ((st = state_of(w)) == WEFT__SPARE_PARKED) {
            if (leaves(s, w, parked_at)) {
                st = WEFT__SPARE_GONE;
                break;
            }
            /* Its idle period is over but it is not the newest (or the pool
             * closes): look again an idle period later, not at once, so
             * that an older spare waits its turn to leave without spinning
             * while a newer one runs. */
            uint64_t now = weft__now_ns(), due = parked_at + weft__spare_idle_ns;
            pthread_mutex_unlock(&s->lock);
            /* Relaxed: a count for the tests; nothing is ordered by it. */
            atomic_fetch_add_explicit(&weft__spare_park_waits, 1, memory_order_relaxed);
            weft__os_wait_until(&w->spare, WEFT__SPARE_PARKED,
                                due > now ? due : now + weft__spare_idle_ns);
            pthread_mutex_lock(&s->lock);
        }
        if (st == WEFT__SPARE_EXIT || st == WEFT__SPARE_GONE)
            break; /* destroy, or parked for long (leaves) */
        /* CALLED, or RELEASED before it ran at all: its wait ends at once */
        pthread_mutex_unlock(&s->lock);
        if (pool->budgeted)
            weft__budget_enter(&w->terminate, &pool->budget_waiters);
        weft__worker_wait_until(w, &w->terminate);
        weft__budget_exit();
        /* The sleep module's events of its sleeps (a spare records nothing
         * else: worker.c), which no trace stop collects (trace.c: a stop
         * takes a worker's buffer in a broadcast, and a spare runs none). */
        weft__trace_buf_free(&w->stats.trace);
        pthread_mutex_lock(&s->lock);
        if (state_of(w) == WEFT__SPARE_EXIT)
            break;
        if (s->active < s->blocked && !s->closing) {
            call(s, w); /* a begin found no spare while we finished: ours (the top) */
        } else {
            /* Relaxed: its own word; a caller changes it under this lock. */
            atomic_store_explicit(&w->spare, WEFT__SPARE_PARKED, memory_order_relaxed);
            parked_at = weft__now_ns();
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (s->hooks && pool->on_exit)
        pool->on_exit(w->index, pool->user);
    weft__worker_free_jobs(w);
    weft__trace_buf_free(&w->stats.trace); /* its last sleep's events */
    weft__set_current_worker(NULL);
    return NULL;
}

void weft__spares_stop(weft_pool *pool) {
    weft__spares *s = &pool->spares;
    pthread_mutex_lock(&s->lock);
    s->closing = true;
    /* Relaxed: written under this lock. */
    unsigned seen = atomic_load_explicit(&s->seen, memory_order_relaxed);
    for (unsigned i = 0; i < seen; i++) {
        weft__worker *w = &pool->workers[s->first + i];
        uint32_t st = state_of(w);
        set_state(w, WEFT__SPARE_EXIT);
        if (st == WEFT__SPARE_CALLED)
            weft__sleep_set_latch(&pool->sleep, &w->terminate);
    }
    pthread_mutex_unlock(&s->lock);
    /* As weft__workers_stop: a job of another pool that destroys this one
     * gives its budget slot back while it waits for the threads. */
    weft__budget_block();
    /* The live ones (told to exit above), then the GONE ones: no call comes
     * any more to join them or to create a thread. */
    for (unsigned i = 0; i < s->max; i++)
        if (pool->workers[s->first + i].spare_joinable)
            pthread_join(pool->workers[s->first + i].thread, NULL);
    weft__budget_resume();
}
