/* SPDX-License-Identifier: MIT */
/* Caller slots: an outside thread that calls into a pool takes part in its
 * own work for the length of the call.
 *
 * weft_run from a thread that is neither a worker nor a context (and so
 * weft_for, weft_reduce, weft_scope_run, weft_graph_run and weft_join, which
 * go through it) takes one of the pool's caller slots and runs its function
 * on the calling thread as that slot: a context (context.c) that lasts one
 * call. What the function forks is pushed on the slot's deques, workers
 * steal from them as from any context, and its waits run the slot's own jobs,
 * take back what the worker running the awaited job shares of it
 * (context.c), and then sleep on their latch; the slot never takes injected
 * work or another workload's jobs (seed 003's rule), so each caller works on
 * its own tree. OpenMP's and oneTBB's callers are likewise a thread of their own
 * work; blocking instead costs a wake-up of a worker to start the work and
 * one of the caller to end it, and on a machine with no spare CPU the
 * caller's CPU idles while the workers take turns on the others.
 *
 * When every slot is taken, or the pool was made with callers_wait, the
 * caller falls back to injecting the job and blocking (run.c).
 *
 * Slots are taken lowest first, and pool->callers_seen counts the prefix
 * ever taken: thieves sweep only those (weft__pool_victims), so a pool that
 * one thread calls into sweeps one slot more, not WEFT_CALLERS_DEFAULT. The
 * count only grows: a slot given back may hold jobs again at once, and a
 * sweep that skipped it could not tell. A thief that read the count before
 * a slot was counted misses no job for good. A searcher reads it again at
 * every sweep. One that gives up meets the slot's first share of jobs in the
 * sleep protocol: the share posts them (weft__sleep_new_jobs), which bumps
 * the jobs event counter or reads the sleepers, in seq-cst read-modify-
 * writes on the counters that follow the count's own seq-cst raise; so
 * either the poster sees the would-be sleeper and wakes it, or the
 * sleeper's counting CAS fails on the bumped counter, acquires it, and its
 * next search reads the raised count.
 *
 * A call in a slot is pending work of the pool (pending.h) from when it took
 * the slot until it gave it back: weft_pool_destroy, started by another
 * thread meanwhile, waits for it before it stops the workers, which the
 * call's jobs may still need (a job stolen from the slot may push more). A
 * pool that destroy has closed gives no slot (the call then runs on its
 * thread: run.c). And the caller holds a reference on the pool from before
 * it takes a slot until after it gave it back, so the destroy, once the call
 * has ended, does not free the slot under it.
 */
#include "core/callers.h"

#include "core/current.h"
#include "core/context.h"
#include "core/named.h"

/* Count slot i (0-based among the callers) as seen. */
static void note_seen(weft_pool *pool, uint32_t i) {
    /* Relaxed load: a stale value only sends us to the CAS. */
    uint32_t seen = atomic_load_explicit(&pool->callers_seen, memory_order_relaxed);
    /* Seq-cst: before the slot's first post of jobs in the counters' total
     * order (above); it pairs with weft__pool_victims' acquire. Once per
     * slot in the pool's life. */
    while (seen <= i &&
           !atomic_compare_exchange_weak_explicit(&pool->callers_seen, &seen, i + 1,
                                                  memory_order_seq_cst, memory_order_relaxed)) {
    }
}

weft__worker *weft__caller_take(weft_pool *pool) {
    unsigned first = pool->threads + pool->contexts;
    for (unsigned i = 0; i < pool->callers; i++) {
        weft__worker *slot = &pool->workers[first + i];
        /* Relaxed peek: keeps a taken slot's line shared while callers pass. */
        if (atomic_load_explicit(&slot->taken, memory_order_relaxed))
            continue;
        bool free_slot = false;
        /* Acquire: pairs with the previous holder's release in
         * weft__caller_give_back, whose use of the slot happens-before ours. */
        if (atomic_compare_exchange_strong_explicit(&slot->taken, &free_slot, true,
                                                    memory_order_acquire, memory_order_relaxed)) {
            if (!weft__pending_hold(&pool->pending)) { /* destroy closed the pool */
                /* Release: as weft__caller_give_back's (we used nothing). */
                atomic_store_explicit(&slot->taken, false, memory_order_release);
                return NULL;
            }
            weft__pool_ref(pool);
            note_seen(pool, i);
            slot->h.prio = WEFT_PRIORITY_NORMAL;
            slot->h.group = NULL;
            weft__set_current_worker(slot);
            weft__worker_trace(slot, WEFT__TRACE_RUN, weft__trace_name_tls); /* the call's */
            weft__sleep_call_begin(&pool->sleep); /* the pool's rhythm (rhythm.c) */
            return slot;
        }
    }
    return NULL;
}

void weft__caller_give_back(weft__worker *slot) {
    weft_pool *pool = slot->pool;
    /* Jobs the call queued without waiting for them (none through the
     * public entry points: detached work from a slot is injected) run now,
     * as a context's do at release. */
    weft__context_run_leftovers(slot);
    weft__worker_trace(slot, WEFT__TRACE_LEAVE, NULL);
    weft__sleep_call_end(&pool->sleep);
    weft__set_current_worker(NULL);
    weft__debug_yield(); /* the work is done: another thread may destroy the pool now */
    /* Release: pairs with the next taker's acquire. */
    atomic_store_explicit(&slot->taken, false, memory_order_release);
    weft__pending_release(&pool->pending); /* destroy may go on now */
    weft__pool_unref(pool);
}
