/* SPDX-License-Identifier: MIT */
/* Many callers, many pools: outside threads sharing a pool, the default
 * pool created once, a thousand pools, and pools calling into each other;
 * outside callers that take part in their own work (caller slots, callers.c):
 * where their work runs, who may run it, and what happens when the slots run
 * out or the pool's callers only wait. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "asleep.h"
#include "check.h"
#include "core/current.h" /* the pending word and the slots, for a closed pool */
#include "pools.h"
#include "jobs.h"
#include "visits.h"
#include "weft.h"

static void on_worker(void *arg) {
    *(int *)arg = weft_thread_index();
}

typedef struct caller {
    weft_pool *pool;
    long ok;
} caller;

static void *outside_caller(void *arg) {
    caller *c = arg;
    for (int i = 0; i < scaled(200); i++) {
        int idx = -2;
        weft_run(c->pool, on_worker, &idx);
        CHECK(idx >= 0);
        size_t n = 1000 + (size_t)i;
        visits v = {.total = n};
        v.hits = calloc(n, 1);
        weft_for(c->pool, 0, n, (size_t)i % 3, visit, &v);
        for (size_t k = 0; k < n; k++)
            CHECK_EQ(v.hits[k], 1);
        free((void *)v.hits);
        c->ok++;
    }
    return NULL;
}

/* Eight outside threads on a pool of three: with eight caller slots each
 * takes part in its own work; with two, the others are injected and wait;
 * with none, all wait. Every index is visited once either way. */
TEST(many_outside_threads_share_a_pool) {
    enum { CALLERS = 8 };
    const weft_config configs[] = {
        {.threads = 3}, {.threads = 3, .callers = 2}, {.threads = 3, .callers_wait = true}};
    for (int k = 0; k < 3; k++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &configs[k]), 0);
        pthread_t t[CALLERS];
        caller c[CALLERS];
        for (int i = 0; i < CALLERS; i++) {
            c[i] = (caller){pool, 0};
            pthread_create(&t[i], NULL, outside_caller, &c[i]);
        }
        for (int i = 0; i < CALLERS; i++) {
            pthread_join(t[i], NULL);
            CHECK_EQ(c[i].ok, scaled(200));
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

static void *get_default(void *arg) {
    *(weft_pool **)arg = weft_pool_default();
    return NULL;
}

TEST(default_pool_is_created_once) {
    enum { N = 8 };
    pthread_t t[N];
    weft_pool *got[N];
    for (int i = 0; i < N; i++)
        pthread_create(&t[i], NULL, get_default, &got[i]);
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        CHECK(got[i] != NULL && got[i] == got[0]);
    }
    CHECK_EQ(weft_pool_threads(NULL), weft_pool_threads(got[0]));
}

TEST(create_and_destroy_a_thousand_pools) {
    for (int i = 0; i < scaled(1000); i++) {
        weft_pool *pool = make_pool(1 + i % 3);
        if (i % 2) {
            fib f = {10, 0};
            weft_run(pool, fib_job, &f);
            CHECK_EQ(f.r, 55);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* Pools calling into each other: a worker of A runs work in B, which runs
 * work in A, ... Each waiting worker keeps serving its own pool. */
typedef struct ping {
    weft_pool *here, *there;
    int depth;
    long sum;
} ping;

static void ping_job(void *arg) {
    ping *p = arg;
    if (p->depth == 0) {
        fib f = {12, 0};
        fib_job(&f);
        p->sum = f.r;
        return;
    }
    ping x = {p->there, p->here, p->depth - 1, 0}, y = x;
    weft_run(p->there, ping_job, &x); /* cross-pool: participates in `here` */
    weft_join(ping_job, &y, nothing, NULL);
    p->sum = x.sum + y.sum;
}

TEST(two_pools_call_into_each_other) {
    weft_pool *a = make_pool(2), *b = make_pool(1);
    for (int i = 0; i < scaled(50); i++) {
        ping p = {a, b, 6, 0};
        weft_run(a, ping_job, &p);
        CHECK_EQ(p.sum, 144 << 6);
    }
    CHECK_EQ(weft_pool_destroy(a), 0);
    CHECK_EQ(weft_pool_destroy(b), 0);
}

/* ---- Caller slots ------------------------------------------------------- */

typedef struct where {
    weft_pool *pool;
    pthread_t caller;
    int index;
    bool on_caller;
    int acquire;
    int destroy;
} where;

static void where_am_i(void *arg) {
    where *w = arg;
    w->on_caller = pthread_equal(pthread_self(), w->caller);
    w->index = weft_thread_index();
    weft_context *c;
    w->acquire = weft_context_acquire(NULL, &c);
    w->destroy = weft_pool_destroy(w->pool);
    CHECK_EQ(weft_pool_threads(NULL), weft_pool_threads(w->pool)); /* NULL: this pool */
}

/* An outside caller runs its function itself, in the first caller slot after
 * the workers and contexts, as a member of the pool; then it is an outside
 * thread again. */
TEST(an_outside_caller_runs_its_own_call) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2, .contexts = 1, .callers = 3}), 0);
    CHECK_EQ(weft_pool_slots(pool), 2 + 1 + 3 + WEFT_SPARES_DEFAULT);
    where w = {.pool = pool, .caller = pthread_self(), .index = -2};
    weft_run(pool, where_am_i, &w);
    CHECK(w.on_caller);
    CHECK_EQ(w.index, 3);
    CHECK_EQ(w.acquire, EINVAL);  /* it holds a slot, as a context */
    CHECK_EQ(w.destroy, EDEADLK); /* a job of the pool runs on it */
    CHECK_EQ(weft_thread_index(), -1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A pool that destroy has closed (its pending word's runnable count at 0,
 * made so here by hand, as drain leaves it) gives no caller slot: the call
 * runs on the calling thread, and the slot it tried is free again, so the
 * pool reopened by hand lends it to the next caller. Reaching this path
 * without the white box needs a call that races destroy, which weft.h
 * forbids; the branch keeps such a call from holding a slot for ever. */
static void index_here(void *arg) {
    *(int *)arg = weft_thread_index();
}

TEST(a_closed_pool_gives_no_caller_slot) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .callers = 1}), 0);
    weft__worker *slot = &pool->workers[pool->threads + pool->contexts];
    uint64_t open = atomic_exchange(&pool->pending.word, 0); /* closed */
    int index = -2;
    weft_run(pool, index_here, &index);
    CHECK_EQ(index, -1); /* ran here, outside every slot */
    CHECK(!atomic_load(&slot->taken));
    atomic_store(&pool->pending.word, open); /* reopened */
    weft_run(pool, index_here, &index);
    CHECK_EQ(index, 1); /* in the slot, given back */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* callers_wait: the caller blocks and a worker runs everything, as before
 * caller slots; a pool with no slot left falls back to the same. */
TEST(callers_wait_keeps_the_work_on_workers) {
    weft_pool *pool = make_waiting_pool(2);
    CHECK_EQ(weft_pool_slots(pool), 2 + WEFT_SPARES_DEFAULT);
    where w = {.pool = pool, .caller = pthread_self(), .index = -2};
    weft_run(pool, where_am_i, &w);
    CHECK(!w.on_caller);
    CHECK(w.index == 0 || w.index == 1);
    CHECK_EQ(w.destroy, EDEADLK);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

typedef struct slot_holder {
    weft_pool *pool;
    _Atomic int holding, release;
    where second;
} slot_holder;

static void hold_the_slot(void *arg) {
    slot_holder *h = arg;
    atomic_store(&h->holding, 1);
    double deadline = check_now() + 60;
    while (!atomic_load(&h->release)) {
        CHECK(check_now() < deadline);
        check_sleep_us(100);
    }
}

static void *wait_then_call(void *arg) {
    slot_holder *h = arg;
    double deadline = check_now() + 60;
    while (!atomic_load(&h->holding)) {
        CHECK(check_now() < deadline);
        check_sleep_us(100);
    }
    h->second.caller = pthread_self();
    weft_run(h->pool, where_am_i, &h->second);
    atomic_store(&h->release, 1);
    return NULL;
}

/* One caller slot, two callers at once: the second is injected and waits,
 * and a worker runs its call. */
TEST(a_caller_with_no_slot_left_waits) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2, .callers = 1}), 0);
    slot_holder h = {.pool = pool, .second = {.pool = pool, .index = -2}};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, wait_then_call, &h), 0);
    weft_run(pool, hold_the_slot, &h); /* released once the second call ran */
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(!h.second.on_caller);
    CHECK(h.second.index == 0 || h.second.index == 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* Idle workers take part in an outside caller's loop: its first piece waits
 * until a piece has run on another thread, which only a worker that took
 * part of the loop from the caller's slot can do. */
typedef struct helped_loop {
    pthread_t caller;
    _Atomic int helped;
    _Atomic long visited, on_caller;
} helped_loop;

static void wait_for_help(size_t begin, size_t end, void *arg) {
    helped_loop *h = arg;
    if (!pthread_equal(pthread_self(), h->caller)) {
        atomic_store(&h->helped, 1);
    } else if (atomic_fetch_add(&h->on_caller, 1), begin == 0) {
        double deadline = check_now() + 60;
        while (!atomic_load(&h->helped)) {
            CHECK(check_now() < deadline); /* nobody took the caller's jobs */
            sched_yield();
        }
    }
    atomic_fetch_add(&h->visited, (long)(end - begin));
}

TEST(workers_take_part_in_a_callers_loop) {
    weft_pool *pool = make_pool(3);
    for (int round = 0; round < scaled(20); round++) {
        if (round % 2) /* from sleep, as well as from a search */
            check_sleep_us(20000);
        helped_loop h = {.caller = pthread_self()};
        weft_for(pool, 0, 64, 1, wait_for_help, &h);
        CHECK_EQ(atomic_load(&h.visited), 64);
        CHECK(atomic_load(&h.on_caller) > 0); /* the caller took part */
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A caller runs jobs of its own call only: never another caller's, never a
 * detached job from the injector (seed 003's rule), so a job runs on its own
 * submitter or on a worker. */
typedef struct own_loop {
    weft_pool *pool;
    pthread_t caller;
    _Atomic long foreign, own;
} own_loop;

static _Atomic long detached_on_callers;

static void detached_where(void *arg) {
    if (weft_thread_index() >= (int)weft_pool_threads(arg))
        atomic_fetch_add(&detached_on_callers, 1);
}

static void only_mine(size_t begin, size_t end, void *arg) {
    own_loop *o = arg;
    int index = weft_thread_index();
    bool on_a_caller = index >= (int)weft_pool_threads(o->pool);
    if (on_a_caller && !pthread_equal(pthread_self(), o->caller))
        atomic_fetch_add(&o->foreign, 1);
    if (pthread_equal(pthread_self(), o->caller))
        atomic_fetch_add(&o->own, 1);
    if (begin == 0) /* detached, from inside the call: to the injector, for workers */
        CHECK_EQ(weft_spawn(o->pool, detached_where, o->pool), 0);
    for (size_t i = begin; i < end; i++)
        sched_yield(); /* pieces long enough for the others to queue theirs */
}

static void *own_caller(void *arg) {
    own_loop *o = arg;
    o->caller = pthread_self();
    for (int i = 0; i < scaled(100); i++)
        weft_for(o->pool, 0, 64, 1, only_mine, o);
    return NULL;
}

TEST(a_caller_runs_only_its_own_jobs) {
    enum { CALLERS = 3 };
    weft_pool *pool = make_pool(2);
    atomic_store(&detached_on_callers, 0);
    own_loop o[CALLERS];
    pthread_t t[CALLERS];
    for (int i = 0; i < CALLERS; i++) {
        o[i] = (own_loop){.pool = pool};
        CHECK_EQ(pthread_create(&t[i], NULL, own_caller, &o[i]), 0);
    }
    for (int i = 0; i < CALLERS; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
        CHECK_EQ(atomic_load(&o[i].foreign), 0);
        CHECK(atomic_load(&o[i].own) > 0); /* each caller took part in its loops */
    }
    CHECK_EQ(weft_pool_destroy(pool), 0); /* runs the detached jobs */
    CHECK_EQ(atomic_load(&detached_on_callers), 0);
}

/* A caller takes back part of its call from a worker that stole it and fell
 * behind (context.c, take-back). A pool of one worker: the caller's first
 * piece waits until the worker has stolen a part of the loop (normally the
 * other half), and the worker's first piece until the caller, done with
 * what it could take, sleeps on the worker's part. From then on the
 * worker's pieces wait (with a deadline) until the caller has run more of
 * the worker's part (anything it runs after it slept): the worker's next
 * step must share what the caller asked for and wake it, and the caller
 * take it. A caller that only waits, or only takes what was shared before
 * it slept, leaves the rest of the part on the worker. */
typedef struct behind {
    weft_pool *pool;
    pthread_t caller;
    unsigned slot; /* the caller's: its sleep slot */
    size_t n;
    _Atomic bool worker_started, caller_slept;
    double deadline; /* for the take-back: set with caller_slept */
    _Atomic size_t taken_late, visited;
} behind;

static bool caller_asleep(const behind *b) {
    return atomic_load(&b->pool->sleep.slots[b->slot].word) == WEFT__SLOT_ASLEEP;
}

static void fall_behind(size_t begin, size_t end, void *arg) {
    behind *b = arg;
    double deadline = check_now() + 10;
    if (pthread_equal(pthread_self(), b->caller)) {
        while (begin == 0 && !atomic_load(&b->worker_started))
            CHECK(check_now() < deadline);
        if (atomic_load(&b->caller_slept)) /* its own part done: taken back */
            atomic_fetch_add(&b->taken_late, end - begin);
    } else if (!atomic_exchange(&b->worker_started, true)) {
        while (!caller_asleep(b)) {
            CHECK(check_now() < deadline);
            sched_yield();
        }
        b->deadline = check_now() + 5;
        atomic_store(&b->caller_slept, true);
    } else {
        while (atomic_load(&b->taken_late) == 0 && check_now() < b->deadline)
            sched_yield();
    }
    atomic_fetch_add(&b->visited, end - begin);
}

static void check_taken_back(behind *b) {
    CHECK_EQ(atomic_load(&b->visited), b->n);
    CHECK(atomic_load(&b->taken_late) > 0);
}

TEST(a_caller_takes_back_from_a_worker_that_fell_behind) {
    weft_pool *pool = make_pool(1);
    behind b = {
        .pool = pool, .caller = pthread_self(), .slot = pool->threads + pool->contexts, .n = 1024};
    weft_for(pool, 0, b.n, 0, fall_behind, &b);
    check_taken_back(&b);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* The same from a context (context.c): its take-back is a caller's. */
TEST(a_context_takes_back_from_a_worker_that_fell_behind) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .contexts = 1}), 0);
    weft_context *ctx;
    CHECK_EQ(weft_context_acquire(pool, &ctx), 0);
    behind b = {.pool = pool, .caller = pthread_self(), .slot = pool->threads, .n = 1024};
    weft_for(pool, 0, b.n, 0, fall_behind, &b);
    check_taken_back(&b);
    weft_context_release(ctx);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A caller with nothing to run polls for a wake-up's latency before it
 * sleeps (context.c, poll_ns): its wait ends its own call. A pool of one
 * worker, and a wake-up made to take a second (a test hook); the caller
 * forks a job that the worker steals, and the caller's half waits until it
 * has started. The job waits until the caller's take-back has asked it to
 * share (the request bit, raised right before the poll past the first),
 * then watches the caller's slot for 50 ms: a caller that polled only for
 * what a block costs sleeps within microseconds. */
typedef struct long_half {
    weft_pool *pool;
    unsigned slot; /* the caller's: its sleep slot */
    _Atomic bool started, slept;
} long_half;

static void wait_for_the_long_half(void *arg) {
    long_half *h = arg;
    double deadline = check_now() + 10;
    while (!atomic_load(&h->started))
        CHECK(check_now() < deadline);
}

static void watch_the_caller(void *arg) {
    long_half *h = arg;
    atomic_store(&h->started, true);
    double deadline = check_now() + 10;
    while (!(atomic_load(&h->pool->workers[0].h.claim) & WEFT__CLAIM_REQUEST))
        CHECK(check_now() < deadline);
    double end = check_now() + 0.05;
    while (check_now() < end)
        if (atomic_load(&h->pool->sleep.slots[h->slot].word) == WEFT__SLOT_ASLEEP)
            atomic_store(&h->slept, true);
}

static void fork_the_long_half(void *arg) {
    weft_join(wait_for_the_long_half, arg, watch_the_caller, arg);
}

TEST(a_caller_polls_for_a_wake_up_before_it_sleeps) {
    weft_pool *pool = make_pool(1);
    long_half h = {.pool = pool, .slot = pool->threads + pool->contexts};
    atomic_store(&weft__leave_debug_wake_latency_ns, (uint64_t)1000000000);
    weft_run(pool, fork_the_long_half, &h);
    atomic_store(&weft__leave_debug_wake_latency_ns, 0);
    CHECK(!atomic_load(&h.slept));
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* The same for a call at high priority: what its jobs fork goes on the high
 * deques, the worker's too, where the take-back looks first. */
static void loop_behind(void *arg) {
    behind *b = arg;
    weft_for(b->pool, 0, b->n, 0, fall_behind, b);
}

TEST(a_caller_takes_back_high_priority_work) {
    weft_pool *pool = make_pool(1);
    behind b = {
        .pool = pool, .caller = pthread_self(), .slot = pool->threads + pool->contexts, .n = 1024};
    CHECK_EQ(weft_run_priority(pool, loop_behind, &b, WEFT_PRIORITY_HIGH), 0);
    check_taken_back(&b);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* What a caller takes back is its own call's; the worker may show it other
 * work while it runs the caller's, which the caller must leave to the
 * workers. The worker's first piece of the loop sets up such work (if
 * anything) and waits until the caller, done with its own part, has taken
 * back what it could and slept (the work public, or shared by the worker's
 * next step with what answers the caller's request, which wakes the
 * caller); its later pieces wait until the caller has run that work or
 * queued it for the workers. */
typedef struct not_ours {
    weft_pool *pool;
    pthread_t caller;
    void (*first_piece)(struct not_ours *n); /* the worker's set-up (NULL: none) */
    weft_event *release;                     /* for an outer job's wait */
    _Atomic bool worker_started, ran, outer_done;
    _Atomic int ran_on_caller;
    _Atomic size_t visited;
} not_ours;

static void not_ours_job(void *arg) {
    not_ours *n = arg;
    atomic_fetch_add(&n->ran_on_caller, pthread_equal(pthread_self(), n->caller));
    atomic_store(&n->ran, true);
}

static void offer_not_ours(size_t begin, size_t end, void *arg) {
    not_ours *n = arg;
    behind slot = {.pool = n->pool, .slot = n->pool->threads + n->pool->contexts};
    double deadline = check_now() + 10;
    if (pthread_equal(pthread_self(), n->caller)) {
        while (begin == 0 && !atomic_load(&n->worker_started))
            CHECK(check_now() < deadline);
    } else if (!atomic_exchange(&n->worker_started, true)) {
        if (n->first_piece)
            n->first_piece(n);
        while (!caller_asleep(&slot)) {
            CHECK(check_now() < deadline);
            sched_yield();
        }
    } else { /* until the caller ran the work, or queued it for the workers */
        while (!atomic_load(&n->ran) &&
               weft__injector_is_empty(&n->pool->injectors[WEFT_PRIORITY_NORMAL])) {
            CHECK(check_now() < deadline);
            sched_yield();
        }
    }
    atomic_fetch_add(&n->visited, end - begin);
}

static void check_left_to_the_workers(not_ours *n) {
    CHECK_EQ(atomic_load(&n->visited), 1024);
    CHECK(atomic_load(&n->ran));
    CHECK_EQ(atomic_load(&n->ran_on_caller), 0);
}

/* A detached job the worker spawned inside the caller's loop belongs to no
 * call (weft_spawn). */
static void spawn_inside(not_ours *n) {
    CHECK_EQ(weft_spawn(n->pool, not_ours_job, n), 0);
}

TEST(a_caller_leaves_a_detached_job_to_the_workers) {
    weft_pool *pool = make_pool(1);
    not_ours n = {.pool = pool, .caller = pthread_self(), .first_piece = spawn_inside};
    weft_for(pool, 0, 1024, 0, offer_not_ours, &n);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* runs what is still queued */
    check_left_to_the_workers(&n);
}

/* Nor an outer job's frame: a detached job on the worker forks twice (the
 * first frame is shared at once, the second stays private) and waits for an
 * event in the second's A; that wait runs the first frame's B, then steals
 * part of the caller's loop, and the worker's oldest private frame, which
 * answers the caller's request, is the outer job's. */
static void outer_wait(void *arg) {
    weft_event_wait(((not_ours *)arg)->release);
}

static void outer_a(void *arg) {
    weft_join(outer_wait, arg, not_ours_job, arg); /* not_ours_job: the private frame */
}

static void outer(void *arg) {
    not_ours *n = arg;
    weft_join(outer_a, arg, nothing, NULL); /* nothing: shared at once */
    atomic_store(&n->outer_done, true);
}

TEST(a_caller_leaves_an_outer_jobs_frame_to_the_workers) {
    weft_pool *pool = make_pool(1);
    not_ours n = {.pool = pool, .caller = pthread_self()};
    CHECK_EQ(weft_event_create(&n.release, pool, 1), 0);
    CHECK_EQ(weft_spawn(pool, outer, &n), 0);
    wait_all_blocked(pool); /* in outer_wait's wait, nothing left to run */
    weft_for(pool, 0, 1024, 0, offer_not_ours, &n);
    weft_event_signal(n.release);
    double deadline = check_now() + 10;
    while (!atomic_load(&n.outer_done))
        CHECK(check_now() < deadline);
    check_left_to_the_workers(&n);
    weft_event_destroy(n.release);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A job injected from another pool's caller slot waits on a latch of that
 * pool: the worker running it must not take it for one of its own pool's
 * contexts when it shares work (the nudge would wake a slot of its pool by
 * the other pool's index: here past the end of its slots, which ASan
 * reports). The outer call sleeps on that latch before the job forks. */
typedef struct two_pools {
    weft_pool *outer, *inner;
} two_pools;

static void fork_once_the_caller_sleeps(void *arg) {
    two_pools *t = arg;
    unsigned slot = t->outer->threads + t->outer->contexts; /* the outer call's */
    double deadline = check_now() + 10;
    while (atomic_load(&t->outer->sleep.slots[slot].word) != WEFT__SLOT_ASLEEP) {
        CHECK(check_now() < deadline);
        sched_yield();
    }
    weft_join(nothing, NULL, nothing, NULL); /* shares B: nothing else is public */
}

static void call_the_inner_pool(void *arg) {
    two_pools *t = arg;
    weft_run(t->inner, fork_once_the_caller_sleeps, t);
}

TEST(a_job_from_another_pools_caller_wakes_no_slot_here) {
    two_pools t = {make_pool(1), make_waiting_pool(1)}; /* inner: one slot, its worker */
    weft_run(t.outer, call_the_inner_pool, &t);
    CHECK_EQ(weft_pool_destroy(t.inner), 0);
    CHECK_EQ(weft_pool_destroy(t.outer), 0);
}

/* The pool may be destroyed as soon as the work of a call is done, while the
 * caller is still returning from it (weft.h: weft_pool_destroy); the caller
 * must not touch the pool after that (callers.c, "Lifetime"). TSan reports a
 * caller that does as a race with the destroy's free (3 runs in 3 without
 * the caller's reference). */
typedef struct ending_call {
    weft_pool *pool;
    pthread_t caller;
    bool on_caller;
    _Atomic int done;
} ending_call;

static void end_the_work(void *arg) {
    ending_call *e = arg;
    e->on_caller = pthread_equal(pthread_self(), e->caller);
    atomic_store(&e->done, 1);
}

static void *destroy_when_done(void *arg) {
    ending_call *e = arg;
    double deadline = check_now() + 60;
    while (!atomic_load(&e->done)) {
        CHECK(check_now() < deadline);
        sched_yield();
    }
    CHECK_EQ(weft_pool_destroy(e->pool), 0);
    return NULL;
}

TEST(a_pool_destroyed_while_its_caller_returns) {
    for (int i = 0; i < scaled(200); i++) {
        ending_call e = {.pool = make_pool(1), .caller = pthread_self()};
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, destroy_when_done, &e), 0);
        weft_run(e.pool, end_the_work, &e);
        CHECK_EQ(pthread_join(t, NULL), 0);
        CHECK(e.on_caller); /* the call ran in a caller slot */
    }
}

static void note_start(unsigned worker, void *user) {
    (void)worker;
    (void)user;
}

/* Caller slots are counted in weft_pool_slots and configurable; too many is
 * EINVAL (unless callers only wait); an on_start means none by default. */
TEST(caller_slot_configuration) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .callers = WEFT_THREADS_MAX}),
             EINVAL);
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .callers = WEFT_THREADS_MAX + 1}),
             EINVAL);
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1}), 0);
    CHECK_EQ(weft_pool_slots(pool), 1 + WEFT_CALLERS_DEFAULT + WEFT_SPARES_DEFAULT);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(
        weft_pool_create(&pool, &(weft_config){.threads = 1, .callers = 5, .callers_wait = true}),
        0);
    CHECK_EQ(weft_pool_slots(pool), 1 + WEFT_SPARES_DEFAULT); /* callers_wait: callers is ignored */
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1,
                                                    .callers = WEFT_THREADS_MAX + 1,
                                                    .callers_wait = true}),
             0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    /* An on_start: no caller slots unless asked for, so jobs run where it ran. */
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .on_start = note_start}), 0);
    CHECK_EQ(weft_pool_slots(pool), 1);
    where w = {.pool = pool, .caller = pthread_self(), .index = -2};
    weft_run(pool, where_am_i, &w);
    CHECK(!w.on_caller);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(
        weft_pool_create(&pool, &(weft_config){.threads = 1, .on_start = note_start, .callers = 2}),
        0);
    CHECK_EQ(weft_pool_slots(pool), 3);
    w = (where){.pool = pool, .caller = pthread_self(), .index = -2};
    weft_run(pool, where_am_i, &w);
    CHECK(w.on_caller);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* By default a pool takes only the caller slots that WEFT_THREADS_MAX leaves
 * room for after its workers and contexts: none at the limit, where an
 * outside call falls back to waiting. */
TEST(default_caller_slots_fit_under_the_limit) {
    weft_pool *pool;
    CHECK_EQ(
        weft_pool_create(&pool, &(weft_config){.threads = 1, .contexts = WEFT_THREADS_MAX - 4}), 0);
    CHECK_EQ(weft_pool_slots(pool), WEFT_THREADS_MAX); /* 3 caller slots */
    where w = {.pool = pool, .caller = pthread_self(), .index = -2};
    weft_run(pool, where_am_i, &w);
    CHECK(w.on_caller);
    CHECK_EQ(w.index, (int)WEFT_THREADS_MAX - 3); /* the first after the contexts */
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(
        weft_pool_create(&pool, &(weft_config){.threads = 1, .contexts = WEFT_THREADS_MAX - 1}), 0);
    CHECK_EQ(weft_pool_slots(pool), WEFT_THREADS_MAX); /* no room: none */
    w = (where){.pool = pool, .caller = pthread_self(), .index = -2};
    weft_run(pool, where_am_i, &w);
    CHECK(!w.on_caller);
    CHECK_EQ(w.index, 0); /* the worker */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A wake-all pool's outside callers wait, as legacy Rayon's, unless callers
 * asks for slots. */
TEST(wake_all_callers_wait_unless_asked) {
    for (unsigned callers = 0; callers < 2; callers++) {
        weft_pool *pool;
        CHECK_EQ(
            weft_pool_create(
                &pool, &(weft_config){.threads = 1, .wake = WEFT_WAKE_ALL, .callers = callers}),
            0);
        CHECK_EQ(weft_pool_slots(pool), 1 + callers + WEFT_SPARES_DEFAULT);
        where w = {.pool = pool, .caller = pthread_self(), .index = -2};
        weft_run(pool, where_am_i, &w);
        CHECK_EQ(w.on_caller, callers == 1);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* The default pool's first use from two jobs of one call in a caller slot:
 * the first creates it holding default_lock, and its wait for the new
 * workers runs no job of its own (the second would take the lock again on
 * the same thread). */
static _Atomic int defaults_got;

static void spawn_default_users(weft_scope *scope, void *arg) {
    (void)arg;
    for (int i = 0; i < 4; i++)
        CHECK_EQ(weft_scope_spawn(scope, use_the_default_pool, &defaults_got), 0);
}

static void default_pool_first_used_in(weft_pool *pool) {
    atomic_store(&defaults_got, 0); /* both tests run in one process too */
    weft_scope_run(pool, spawn_default_users, NULL);
    CHECK_EQ(atomic_load(&defaults_got), 4);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(default_pool_first_used_in_a_caller_slot) {
    default_pool_first_used_in(make_pool(1));
}

TEST(default_pool_first_used_on_a_worker) {
    default_pool_first_used_in(make_waiting_pool(1));
}
