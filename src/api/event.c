/* SPDX-License-Identifier: MIT */
/* Events (a context-based job system's): a dependency counter with a participating wait and
 * follow-up jobs.
 *
 * An event starts with n dependencies; weft_event_signal meets one. When the
 * last is met the event is set, once: every registered waiter's latch is set
 * (each waiter owns its latch, so this wakes exactly the threads waiting,
 * through the latch protocol's owner wake-up, not a broadcast) and every
 * follow-up job is submitted to the event's pool.
 *
 * A waiter on a worker keeps running jobs of its pool until its latch is set
 * and only sleeps when there is nothing to run; an outside waiter blocks.
 * Follow-ups are heap jobs counted in the pool's pending work (pending.h):
 * parked while the event is unset, so that weft_pool_destroy answers EBUSY
 * instead of waiting for a signal that may never come, and runnable from the
 * moment it is set, so that destroy waits for them.
 *
 * The lock orders registration against setting: a waiter or follow-up added
 * under the lock either sees `set` and acts at once, or is on a list the
 * setter takes under the same lock.
 *
 * Lifetime: a thread that saw the event set may destroy it at once, while
 * the last signaller is still finishing (unlocking, queueing follow-ups). So
 * the event is reference counted: one reference for its owner, dropped by
 * weft_event_destroy, and one per signaller while it is inside
 * weft_event_signal; the last one frees it. "Set" (`fired`) is published
 * under the lock once the setter has taken the lists, so a destroy after it
 * never discards a follow-up of a set event. Waiters' nodes live on their own
 * stacks, which stay until their latches are set.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "core/current.h"
#include "core/submit.h"
#include "api/spawn.h"
#include "core/latch_owner.h"
#include "os/error.h"

typedef struct waiter {
    weft__latch latch;
    struct waiter *next;
} waiter;

struct weft_event {
    weft_pool *pool;          /* I */
    _Atomic unsigned pending; /* A: dependencies not yet met */
    _Atomic bool fired;       /* A: set; the lists are taken */
    _Atomic unsigned refs;    /* A: the owner's, plus one per signaller inside */
    pthread_mutex_t lock;
    bool set;                  /* L */
    waiter *waiters;           /* L */
    weft__heap_job *followups; /* L: linked through job.next */
};

int weft_event_create(weft_event **event, weft_pool *pool, unsigned dependencies) {
    if (!event)
        return weft__error_set(EINVAL, "event is NULL");
    int err = weft__pool_lookup(pool, &pool);
    if (err)
        return err;
    weft_event *e = malloc(sizeof *e);
    if (!e)
        return weft__error_set(ENOMEM, "out of memory for the event (%zu bytes)", sizeof *e);
    e->pool = pool;
    atomic_init(&e->pending, dependencies);
    atomic_init(&e->fired, dependencies == 0);
    atomic_init(&e->refs, 1);
    pthread_mutex_init(&e->lock, NULL);
    e->set = dependencies == 0;
    e->waiters = NULL;
    e->followups = NULL;
    *event = e;
    return 0;
}

/* Queue a follow-up at the priority of the thread that queues it; a full
 * deque falls back to the injector. In a fork child, a follow-up the parent
 * registered on an event of its pool runs here: that pool has no workers. */
static void queue_followup(weft_pool *pool, weft__heap_job *h) {
    if (weft__pool_is_stale(pool)) {
        weft__job_execute(&h->job);
        return;
    }
    weft__worker *w = weft__worker_of(pool);
    weft_priority prio = w ? w->h.prio : WEFT_PRIORITY_NORMAL;
    if (weft__pool_submit_detached(pool, &h->job, prio) != 0)
        weft__pool_inject(pool, &h->job, prio);
}

static void fire(weft_event *e) {
    pthread_mutex_lock(&e->lock);
    weft_pool *pool = e->pool;
    waiter *w = e->waiters;
    weft__heap_job *f = e->followups;
    e->waiters = NULL;
    e->followups = NULL;
    e->set = true;
    uint32_t n = 0;
    for (weft__heap_job *h = f; h; h = (weft__heap_job *)h->job.next)
        n++;
    /* Runnable before the event reads as set: whoever sees it set and then
     * destroys the pool waits for these instead of finding them parked. */
    if (n)
        weft__pending_ready(&pool->pending, n);
    weft__debug_yield();
    /* Release: pairs with weft_event_is_set's acquire; the signallers' writes
     * (acquired by our CAS) come before it. */
    atomic_store_explicit(&e->fired, true, memory_order_release);
    pthread_mutex_unlock(&e->lock);
    weft__debug_yield();
    while (f) {
        weft__heap_job *next = (weft__heap_job *)f->job.next;
        queue_followup(pool, f);
        weft__debug_yield();
        f = next;
    }
    while (w) {
        waiter *next = w->next; /* read before the set: w may be gone after */
        weft__latch_set(&w->latch);
        w = next;
    }
}

static void unref(weft_event *e) {
    weft__debug_yield();
    /* Acq_rel: every user's accesses happen-before the free. */
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_destroy(&e->lock);
        free(e);
    }
}

void weft_event_signal(weft_event *event) {
    assert(event && "weft_event_signal: event is NULL"); /* release builds: a no-op (weft.h) */
    if (!event)
        return;
    /* Relaxed: the caller's own reference (the event is not destroyed while
     * it may still be signalled) keeps the count above zero. */
    atomic_fetch_add_explicit(&event->refs, 1, memory_order_relaxed);
    unsigned n = atomic_load_explicit(&event->pending, memory_order_relaxed);
    do {
        assert(n > 0 && "weft_event_signal: more signals than dependencies");
        if (n == 0)
            break; /* release builds ignore the extra signal (documented) */
        weft__debug_yield();
        /* Acq_rel: each signaller's writes happen-before the last signal,
         * which publishes them through the waiters' latches. */
    } while (!atomic_compare_exchange_weak_explicit(&event->pending, &n, n - 1,
                                                    memory_order_acq_rel, memory_order_relaxed));
    weft__debug_yield();
    if (n == 1)
        fire(event);
    unref(event);
}

bool weft_event_is_set(const weft_event *event) {
    assert(event && "weft_event_is_set: event is NULL"); /* release builds: false (weft.h) */
    if (!event)
        return false;
    /* Acquire: pairs with fire's release; what signallers wrote is visible,
     * and the setter no longer touches the event. */
    return atomic_load_explicit(&((weft_event *)event)->fired, memory_order_acquire);
}

void weft_event_wait(weft_event *event) {
    assert(event && "weft_event_wait: event is NULL"); /* release builds: returns (weft.h) */
    if (!event)
        return;
    if (weft_event_is_set(event))
        return;
    waiter me;
    weft__latch_init(&me.latch); /* a worker participates, an outside thread blocks */
    pthread_mutex_lock(&event->lock);
    bool set = event->set;
    if (!set) {
        me.next = event->waiters;
        event->waiters = &me;
    }
    pthread_mutex_unlock(&event->lock);
    if (!set)
        weft__latch_wait(&me.latch);
}

int weft_event_then(weft_event *event, weft_fn *fn, void *arg) {
    if (!event || !fn)
        return weft__error_set(EINVAL, "%s is NULL", event ? "fn" : "event");
    if (weft__pool_is_stale(event->pool))
        return weft__pool_stale_error();
    weft__heap_job *h = weft__heap_job_alloc();
    if (!h)
        return weft__error_set(ENOMEM, "out of memory for the follow-up job");
    weft_pool *pool = event->pool;
    weft__heap_job_init(h, NULL, &pool->pending, fn, arg);
    pthread_mutex_lock(&event->lock);
    bool set = event->set;
    bool queued = set ? weft__pending_hold(&pool->pending) : weft__pending_park(&pool->pending);
    if (queued && !set) {
        h->job.next = (weft__job *)event->followups; /* job is the first member */
        event->followups = h;
    }
    pthread_mutex_unlock(&event->lock);
    if (!queued) {
        weft__heap_job_free(h);
        return weft__pool_closed_error();
    }
    if (set)
        queue_followup(pool, h);
    return 0;
}

void weft_event_destroy(weft_event *event) {
    if (!event)
        return;
    /* Follow-ups of an event never set are discarded, and no longer make
     * weft_pool_destroy answer EBUSY. Under the lock: a last signaller may be
     * taking the list right now. */
    pthread_mutex_lock(&event->lock);
    weft__heap_job *f = event->followups;
    event->followups = NULL;
    assert(!event->waiters && "weft_event_destroy with threads waiting");
    pthread_mutex_unlock(&event->lock);
    uint32_t n = 0;
    while (f) {
        weft__heap_job *next = (weft__heap_job *)f->job.next;
        weft__heap_job_free(f);
        n++;
        f = next;
    }
    if (n)
        weft__pending_unpark(&event->pool->pending, n);
    unref(event); /* freed now, or by the signaller still finishing */
}
