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
 * worker does); a context never steals other work and never takes injected
 * work, so a job of its workload runs on it or on a worker, and no other
 * context runs it (the property the design wants for thread-affine
 * resources). When every worker is busy nothing is shared and the context
 * runs its whole workload itself without blocking. With nothing of its own
 * left, a waiting context takes back what the worker running the awaited
 * job shares of it (the take-back, below), and otherwise polls its latch
 * (for what a block costs, then for a wake-up's latency: poll_ns), then
 * sleeps on it alone (owner_wait) until the latch's setter, or that worker
 * sharing more, wakes it. Caller slots (callers.c) are contexts that an
 * outside thread holds for the length of one call.
 *
 * weft_thread_index() on a context thread is its slot, threads + i, so arrays
 * of weft_pool_slots() entries give per-thread data that two threads never use
 * at once (caller slots follow the contexts). Detached work (weft_spawn) from a context goes to the
 * injector: a context is not obliged to come back for it.
 */
#include <assert.h>
#include <errno.h>

#include "core/frame.h"
#include "core/current.h"
#include "core/named.h"
#include "core/worker.h"
#include "core/priority.h"
#include "core/submit.h"

#include "os/error.h"
#include "os/futex.h"

struct weft_context {
    weft__worker worker; /* never instantiated: a context is its worker slot */
};

int weft_context_acquire(weft_pool *pool, weft_context **context) {
    weft__worker *self = weft__current_worker();
    if (!context)
        return weft__error_set(EINVAL, "context is NULL");
    if (self && !self->is_context)
        return weft__error_set(EINVAL, "the calling thread is worker %u of a pool", self->index);
    if (self && weft__is_caller(self))
        return weft__error_set(EINVAL, "the calling thread is inside a weft_run (caller slot %u)",
                               self->index - self->pool->threads - self->pool->contexts);
    if (self)
        return weft__error_set(EINVAL, "the calling thread already holds context %u",
                               self->index - self->pool->threads);
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
            weft__worker_trace(ctx, WEFT__TRACE_RUN, weft__trace_name_tls); /* its own code */
            *context = (weft_context *)ctx;
            return 0;
        }
    }
    return weft__error_set(EBUSY, "all %u context slots of the pool are taken (config.contexts)",
                           pool->contexts);
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
    weft__worker_trace(ctx, WEFT__TRACE_LEAVE, NULL);
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
    while ((job = own_work(ctx, &prio)) != NULL) {
        weft__stat_add(&ctx->stats.jobs, 1);
        weft__job_execute(job);
    }
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

/* ---- The take-back ------------------------------------------------------
 *
 * A context whose own jobs are done waits for the ones workers stole from
 * it. The worker running such a job may run it slowly (its CPU is shared,
 * or its part is the costly one) while the context idles: so the context
 * takes back what that worker shares of the job, as any thief takes a
 * shared job, and asks it to share more (the request bit, which a loop's
 * leaf and a join frame's fork or pop answer). Only work of the awaited job:
 * what the context runs stays its own workload (seed 003: a job runs on its
 * submitter's context or on a worker, never on another context).
 *
 * Which worker runs the awaited job: the one whose `serving` is the latch
 * the context waits for (weft__worker_serve). What it shares is the oldest
 * job on its deque; `ours` decides whether it belongs to the awaited job,
 * and what does not goes to the injector, for the workers, and ends the
 * take-back of this wait. A context asleep on the latch is woken when that
 * worker shares (weft__worker_offer, weft__sleep_nudge_context), since the
 * answer to its request may come long after its poll gave up.
 *
 * Not at once: the context first polls its latch for what a block costs, as
 * an outside waiter does, and takes back only from a worker that is still
 * busy then. What it takes makes the worker wait for it at its join; a
 * worker no further behind than that poll would reach the join first, and a
 * short job's wait would cost it a sleep and a wake-up that the take-back
 * did not save. */

/* The worker that runs latch's job innermost (NULL: none does). */
static weft__worker *thief_of(weft__worker *ctx, weft__latch *latch) {
    weft_pool *pool = ctx->pool;
    weft__victims vs = weft__pool_victims(pool); /* workers and spares run jobs */
    for (unsigned k = 0; k < vs.n; k++) {
        weft__worker *v = &pool->workers[weft__victim_slot(&vs, k)];
        /* Relaxed: a hint; `ours` reads it again after the steal. */
        if (!v->is_context && atomic_load_explicit(&v->serving, memory_order_relaxed) == latch)
            return v;
    }
    return NULL;
}

/* Is job, stolen from thief, part of latch's job? It is when it is a join
 * frame's B, the thief still runs latch's job innermost, and the frame lies
 * below where that job began on the thief's stack. The frame's function has
 * not returned (its B has not run), so the job that forked it still runs on
 * the thief. Not a deeper one: that would be innermost, or wait in a deeper
 * one still, and every job a worker takes from elsewhere names itself in
 * `serving` (worker.c). Not an outer one: its frames lie above that point
 * (a thread publishes its oldest private frame, which may be an outer
 * job's). A frame that is not on the thread's stack (a fiber's, a
 * sanitizer's fake stack) may be refused, which costs only the take-back. */
static bool ours(weft__worker *thief, weft__latch *latch, weft__job *job) {
    weft__frame *f = weft__frame_of_job(job);
    /* Acquire: pairs with weft__worker_serve's release, for `below`. The
     * steal's acq_rel CAS came first and read what the thief shared after
     * every `serving` it stored before, so this reads one stored since. */
    return f && atomic_load_explicit(&thief->serving, memory_order_acquire) == latch &&
           (uintptr_t)f < atomic_load_explicit(&thief->serving_below, memory_order_relaxed);
}

static bool shows_work(void *worker) {
    weft__worker *w = worker;
    return !weft__deque_public_empty(&w->deques[WEFT_PRIORITY_NORMAL]) ||
           !weft__deque_public_empty(&w->deques[WEFT_PRIORITY_HIGH]);
}

/* Take back the oldest job thief shows, if ours; else ask it to share. A
 * job not ours goes to the injector and sets *refused: the thief runs other
 * work now, and what it shows is not ours to take. */
static weft__job *take_back(weft__worker *ctx, weft__worker *thief, weft__latch *latch,
                            weft_priority *prio, bool *refused) {
    for (int p = WEFT_PRIORITY_HIGH; p >= WEFT_PRIORITY_NORMAL; p--) {
        weft__job *job;
        weft__steal_result r;
        while ((r = weft__deque_steal(&thief->deques[p], &job)) == WEFT__STEAL_RETRY) {
        }
        if (r == WEFT__STEAL_OK) {
            if (ours(thief, latch, job)) {
                weft__stat_add(&ctx->stats.steals, 1);
                *prio = (weft_priority)p;
                return job;
            }
            weft__pool_inject(ctx->pool, job, (weft_priority)p);
            *refused = true;
            return NULL;
        }
    }
    weft__frame_request(thief);
    return NULL;
}

void weft__context_nudge(weft__worker *w) {
    /* Relaxed: w's own field. */
    weft__latch *awaited = atomic_load_explicit(&w->serving, memory_order_relaxed);
    if (awaited)
        weft__sleep_nudge_context(&w->pool->sleep, awaited);
}

/* How long a context with nothing to run polls its latch before it looks
 * again, and at last sleeps. The first poll of a wait lasts what a block
 * costs (the take-back's "not at once", above). Past it, a wake-up's
 * latency: the wait is inside the context's own call, whose end a sleep
 * delays by a wake-up, as it does each answer to the take-back's request
 * (docs/sleep.md). The poll holds the context's own CPU, for at most a
 * wake-up (a 50th of a phase's bound, the hint's clamp). */
static uint64_t poll_ns(bool first) {
    uint64_t block = weft__leave_block_cpu_ns();
    if (first)
        return block;
    uint64_t wake = weft__leave_wake_latency_ns();
    return wake > block ? wake : block;
}

void weft__context_wait_until(weft__worker *ctx, weft__latch *latch) {
    bool polled = false, refused = false;
    while (!weft__latch_probe(latch)) {
        weft_priority prio;
        weft__job *job = own_work(ctx, &prio);
        if (!job && weft__frame_publish_own(ctx)) /* frame.c: our private frames' B */
            job = own_work(ctx, &prio);
        weft__worker *thief = NULL;
        if (!job && polled && !refused && (thief = thief_of(ctx, latch)) != NULL)
            job = take_back(ctx, thief, latch, &prio, &refused);
        if (job) {
            weft__stat_add(&ctx->stats.jobs, 1);
            weft__worker_call_at(ctx, prio, weft__job_call, job);
            continue;
        }
        weft__worker_trace(ctx, WEFT__TRACE_WAIT, NULL);
        /* Poll, until the thief (if any) shows work to take back. */
        if (weft__latch_poll_until(latch, thief ? shows_work : NULL, thief, poll_ns(!polled)))
            break;
        if (!polled) { /* the first poll takes nothing back (the take-back, above) */
            polled = true;
            continue;
        }
        if (!thief || !shows_work(thief)) /* what is left runs on workers */
            owner_wait(&ctx->pool->sleep, ctx->index, latch);
    }
    weft__worker_trace_run(ctx); /* back to the job it waited in */
}
