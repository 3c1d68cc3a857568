/* SPDX-License-Identifier: MIT */
/* Contexts (a context-based job system's): threads outside the pool that take part in their own
 * work.
 *
 * A pool made with config.contexts = n has n context slots after its worker
 * slots. A thread that acquires one becomes, for weft, a member of the pool
 * without being a worker: weft_join, weft_for, weft_scope_run, weft_event_wait
 * and weft_graph_run called on it push work on the context's deques and run
 * that work on this thread while waiting. Workers may steal from a context
 * (when they are idle the context shares its jobs with them, exactly as a
 * worker does); a context never steals and never takes injected work, so a
 * job is only ever run by its submitter or by a worker (the property the design
 * wants for thread-affine resources). When every worker is busy nothing is
 * shared and the context runs its whole workload itself without blocking.
 * With nothing of its own left, a waiting context polls its latch for as
 * long as blocking would cost (weft__latch_poll, as an outside waiter does),
 * then sleeps on it alone (owner_wait) and is woken by the
 * latch's setter. Caller slots (callers.c) are contexts that an outside
 * thread holds for the length of one call.
 *
 * weft_thread_index() on a context thread is its slot, threads + i, so arrays
 * of weft_pool_slots() entries give per-thread data that two threads never use
 * at once (caller slots follow the contexts). Detached work (weft_spawn) from a context goes to the
 * injector: a context is not obliged to come back for it.
 */
#include <assert.h>
#include <errno.h>

#include "pool.h"

#include "debug_yield.h"
#include "os.h"

struct weft_context {
    weft__worker worker; /* never instantiated: a context is its worker slot */
};

int weft_context_acquire(weft_pool *pool, weft_context **context) {
    if (!context || weft__current_worker())
        return EINVAL; /* a worker, or a thread that already holds a context */
    int err = weft__pool_lookup(pool, &pool);
    if (err)
        return err;
    for (unsigned i = pool->threads; i < pool->threads + pool->contexts; i++) {
        weft__worker *ctx = &pool->workers[i];
        bool free_slot = false;
        /* Acquire: pairs with the release of the previous holder, whose use
         * of the context's deques happens-before ours. */
        if (atomic_compare_exchange_strong_explicit(&ctx->taken, &free_slot, true,
                                                    memory_order_acquire, memory_order_relaxed)) {
            ctx->h.prio = WEFT_PRIORITY_NORMAL;
            weft__set_current_worker(ctx);
            *context = (weft_context *)ctx;
            return 0;
        }
    }
    return EBUSY;
}

void weft_context_release(weft_context *context) {
    weft__worker *ctx = (weft__worker *)context;
    /* Release builds: both are no-ops (weft.h); the context stays held. */
    assert(ctx && "weft_context_release: context is NULL");
    assert((!ctx || weft__current_worker() == ctx) &&
           "weft_context_release: the context is not the calling thread's");
    if (!ctx || weft__current_worker() != ctx)
        return;
    weft__context_run_leftovers(ctx);
    weft__set_current_worker(NULL);
    /* Release: pairs with the next acquire and with weft_pool_destroy. */
    atomic_store_explicit(&ctx->taken, false, memory_order_release);
}

/* Own jobs, high priority first; no stealing, no injector. */
static weft__job *own_work(weft__worker *ctx, weft_priority *prio) {
    for (int p = WEFT_PRIORITY_HIGH; p >= WEFT_PRIORITY_NORMAL; p--) {
        weft__job *job = weft__worker_pop_prio(ctx, (weft_priority)p);
        if (job) {
            *prio = (weft_priority)p;
            return job;
        }
    }
    return NULL;
}

void weft__context_run_leftovers(weft__worker *ctx) {
    weft_priority prio;
    weft__job *job;
    while ((job = own_work(ctx, &prio)) != NULL)
        weft__job_execute(job);
}

unsigned weft_pool_slots(const weft_pool *pool) {
    const weft_pool *p = weft__pool_resolve((weft_pool *)pool);
    return p ? weft__pool_slots_all(p) : 0;
}

/* A context with nothing of its own left to run waits for its latch on its
 * sleep slot: the latch protocol alone (the sleep RFC, Appendix A). It takes
 * no new jobs, so it is not counted and only the latch's set wakes it
 * (weft__sleep_set_latch). */
static void owner_wait(weft__sleep *s, unsigned index, weft__latch *latch) {
    if (!weft__latch_get_sleepy(latch))
        return;
    weft__debug_yield();
    weft__sleep_slot *slot = &s->slots[index];
    pthread_mutex_lock(&slot->lock);
    if (!weft__latch_fall_asleep(latch)) {
        pthread_mutex_unlock(&slot->lock);
        return;
    }
    /* Relaxed: under the lock; a setter that saw SLEEPING takes the lock. */
    atomic_store_explicit(&slot->word, WEFT__SLOT_ASLEEP, memory_order_relaxed);
    pthread_mutex_unlock(&slot->lock);
    weft__debug_yield();
    /* Acquire: pairs with the waker's release store of AWAKE. */
    while (atomic_load_explicit(&slot->word, memory_order_acquire) == WEFT__SLOT_ASLEEP)
        weft__os_wait(&slot->word, WEFT__SLOT_ASLEEP);
    weft__latch_wake_up(latch);
}

void weft__context_wait_until(weft__worker *ctx, weft__latch *latch) {
    while (!weft__latch_probe(latch)) {
        weft_priority prio;
        weft__job *job = own_work(ctx, &prio);
        if (job)
            weft__worker_call_at(ctx, prio, weft__job_call, job);
        else if (!weft__latch_poll(latch)) /* what is left runs on workers */
            owner_wait(&ctx->pool->sleep, ctx->index, latch);
    }
}
