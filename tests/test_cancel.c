/* SPDX-License-Identifier: MIT */
/* Cancellation: each group kind (scope, loop, reduction, graph run), jobs
 * skipped but released, running jobs that poll, nesting, a stolen join half,
 * cancels from outside the pool, and cancels racing completion on an
 * oversubscribed pool (every queued job runs or is released exactly once). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "jobs.h"
#include "pools.h"
#include "weft.h"

static _Atomic long ran, released;

static void reset(void) {
    atomic_store(&ran, 0);
    atomic_store(&released, 0);
}

static void count_run(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

static void count_release(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&released, 1, memory_order_relaxed);
}

/* ---- scopes ---------------------------------------------------------------- */

static void cancel_then_spawn(weft_scope *s, void *arg) {
    (void)arg;
    CHECK(!weft_cancelled());
    CHECK_EQ(weft_scope_spawn(s, count_run, NULL), 0);
    weft_scope_cancel(s);
    weft_scope_cancel(s);    /* twice is harmless */
    CHECK(weft_cancelled()); /* the body belongs to its scope */
    CHECK_EQ(weft_scope_spawn(s, count_run, NULL), ECANCELED);
    CHECK_EQ(weft_scope_spawn_priority(s, count_run, NULL, WEFT_PRIORITY_HIGH), ECANCELED);
    CHECK_EQ(weft_scope_spawn_release(s, count_run, count_release, NULL), ECANCELED);
    CHECK_EQ(weft_scope_spawn(s, NULL, NULL), EINVAL); /* misuse still comes first */
}

TEST(spawns_into_a_cancelled_scope_are_refused) {
    weft_pool *pool = make_waiting_pool(1);
    reset();
    weft_scope_run(pool, cancel_then_spawn, NULL);
    /* The job queued before the cancel had not started (one worker, busy
     * with the body): skipped. A refused spawn calls neither function. */
    CHECK_EQ(atomic_load(&ran), 0);
    CHECK_EQ(atomic_load(&released), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void queue_then_cancel(weft_scope *s, void *arg) {
    long n = *(long *)arg;
    for (long i = 0; i < n; i++) {
        CHECK_EQ(weft_scope_spawn_release(s, count_run, count_release, NULL), 0);
        CHECK_EQ(weft_scope_spawn_release_priority(s, count_run, count_release, NULL,
                                                   WEFT_PRIORITY_HIGH),
                 0);
        CHECK_EQ(weft_scope_spawn(s, count_run, NULL), 0);
    }
    weft_cancel(); /* from the body: its scope */
}

TEST(queued_scope_jobs_are_skipped_and_released) {
    /* One worker runs the body, so nothing it queues starts before the
     * cancel. The heap jobs go back to the free list or to malloc (ASan's
     * leak check); the release calls give back what the jobs owned. */
    weft_pool *pool = make_waiting_pool(1);
    reset();
    long n = scaled(10000);
    weft_scope_run(pool, queue_then_cancel, &n);
    CHECK_EQ(atomic_load(&ran), 0);
    CHECK_EQ(atomic_load(&released), 2 * n);
    reset(); /* the next scope is a new group: its spawns are taken at first */
    weft_scope_run(pool, cancel_then_spawn, NULL);
    CHECK_EQ(atomic_load(&ran), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* Jobs that run until their group is cancelled; `started` lets the canceller
 * wait until they are running. */
static _Atomic int started;
static _Atomic(weft_scope *) published;

static void until_cancelled(void *arg) {
    (void)arg;
    atomic_fetch_add(&started, 1);
    while (!weft_cancelled())
        sched_yield();
    atomic_fetch_add(&ran, 1);
}

static void two_pollers(weft_scope *s, void *arg) {
    (void)arg;
    CHECK_EQ(weft_scope_spawn(s, until_cancelled, NULL), 0);
    CHECK_EQ(weft_scope_spawn(s, until_cancelled, NULL), 0);
    atomic_store(&published, s);
}

static void *run_pollers(void *arg) {
    weft_scope_run(arg, two_pollers, NULL);
    return NULL;
}

TEST(running_jobs_see_a_cancel_from_outside_the_pool) {
    weft_pool *pool = make_pool(2);
    reset();
    atomic_store(&started, 0);
    atomic_store(&published, NULL);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, run_pollers, pool), 0);
    while (atomic_load(&started) < 2) /* both running: they finish only when cancelled */
        sched_yield();
    CHECK(!weft_cancelled()); /* outside every group */
    weft_cancel();            /* a no-op here */
    weft_scope_cancel(atomic_load(&published));
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(atomic_load(&ran), 2);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- a stolen join half -------------------------------------------------------- */

static _Atomic bool b_started;

static void a_cancels_once_b_runs(void *arg) {
    (void)arg;
    while (!atomic_load(&b_started)) /* so b can only run on another worker */
        sched_yield();
    weft_cancel();
}

static void b_polls(void *arg) {
    (void)arg;
    atomic_store(&b_started, true);
    while (!weft_cancelled()) /* b was stolen: it runs in the scope all the same */
        sched_yield();
    atomic_fetch_add(&ran, 1);
}

static void join_in_scope(void *arg) {
    (void)arg;
    weft_join(a_cancels_once_b_runs, NULL, b_polls, NULL);
}

static void spawn_join(weft_scope *s, void *arg) {
    (void)arg;
    CHECK_EQ(weft_scope_spawn(s, join_in_scope, NULL), 0);
}

TEST(a_stolen_join_half_belongs_to_its_group) {
    weft_pool *pool = make_pool(2);
    reset();
    atomic_store(&b_started, false);
    weft_scope_run(pool, spawn_join, NULL);
    CHECK_EQ(atomic_load(&ran), 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- loops and reductions ---------------------------------------------------- */

typedef struct loop_probe {
    size_t cancel_at; /* SIZE_MAX: never */
    _Atomic long calls;
    _Atomic long indices;
    _Atomic bool seen_after;     /* weft_cancelled() was true after the cancel */
    _Atomic unsigned char *hits; /* NULL, or a count per index */
} loop_probe;

static void probe_body(size_t begin, size_t end, void *arg) {
    loop_probe *p = arg;
    atomic_fetch_add(&p->calls, 1);
    atomic_fetch_add(&p->indices, (long)(end - begin));
    for (size_t i = begin; p->hits && i < end; i++)
        CHECK_EQ(atomic_fetch_add(&p->hits[i], 1), 0); /* never twice */
    if (p->cancel_at >= begin && p->cancel_at < end) {
        weft_cancel();
        atomic_store(&p->seen_after, weft_cancelled());
    }
}

TEST(a_cancelled_loop_starts_no_more_pieces) {
    /* One worker and grain 1: the pieces run left to right, one index each,
     * so the piece that cancels is the last to run. */
    weft_pool *pool = make_waiting_pool(1);
    loop_probe p = {.cancel_at = 0};
    weft_for(pool, 0, 1000, 1, probe_body, &p);
    CHECK_EQ(atomic_load(&p.calls), 1);
    CHECK(atomic_load(&p.seen_after));
    p = (loop_probe){.cancel_at = 499};
    weft_for(pool, 0, 1000, 1, probe_body, &p);
    CHECK_EQ(atomic_load(&p.calls), 500);
    p = (loop_probe){.cancel_at = SIZE_MAX}; /* a new loop is a new group */
    weft_for(pool, 0, 1000, 1, probe_body, &p);
    CHECK_EQ(atomic_load(&p.indices), 1000);
    CHECK_EQ(weft_pool_destroy(pool), 0);

    /* With thieves, how many pieces start before they see the cancel is a
     * race; the loop still ends, with no index visited twice. */
    static _Atomic unsigned char hits[100000];
    pool = make_pool(4);
    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < 100000; i++)
            atomic_store_explicit(&hits[i], 0, memory_order_relaxed);
        p = (loop_probe){.cancel_at = (size_t)round * 4999, .hits = hits};
        weft_for(pool, 0, 100000, (size_t)round % 2, probe_body, &p);
        CHECK(atomic_load(&p.seen_after));
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

typedef struct sum_probe {
    uint64_t cancel_at;
} sum_probe;

/* The sum of the indices (jobs.h), cancelled at p->cancel_at. */
static void cancelling_fold(size_t begin, size_t end, void *acc, void *arg) {
    const sum_probe *p = arg;
    for (size_t i = begin; i < end; i++) {
        if (i == p->cancel_at)
            weft_cancel();
        *(uint64_t *)acc += i;
    }
}

TEST(a_cancelled_reduce_returns_ecanceled_and_leaves_the_result) {
    sum_probe probe = {.cancel_at = 500};
    weft_reducer r = {sizeof(uint64_t), sum_init, cancelling_fold, sum_combine, &probe};
    unsigned sizes[] = {1, 3};
    for (int k = 0; k < 2; k++) {
        weft_pool *pool = make_pool(sizes[k]);
        for (size_t grain = 0; grain < 1000; grain += 999) {
            uint64_t result = 12345;
            probe.cancel_at = 500;
            CHECK_EQ(weft_reduce(pool, 0, 100000, grain, &r, &result), ECANCELED);
            CHECK_EQ(result, 12345);
            probe.cancel_at = 99999; /* the last index: nothing left to skip */
            CHECK_EQ(weft_reduce(pool, 0, 100000, grain, &r, &result), ECANCELED);
            CHECK_EQ(result, 12345);
            probe.cancel_at = UINT64_MAX;
            CHECK_EQ(weft_reduce(pool, 0, 100000, grain, &r, &result), 0);
            CHECK_EQ(result, (uint64_t)100000 * 99999 / 2);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* An empty reduction or graph run inside a cancelled scope answers as a
 * cancelled one does (weft.h): ECANCELED, the result untouched; outside
 * every group the empty ones succeed. */
static void empty_work_in_cancelled_scope(weft_scope *s, void *arg) {
    (void)arg;
    weft_reducer r = {sizeof(uint64_t), sum_init, sum_fold, sum_combine, NULL};
    uint64_t result = 12345;
    CHECK_EQ(weft_reduce(NULL, 5, 5, 0, &r, &result), 0); /* not cancelled yet */
    CHECK_EQ(result, 0);
    weft_scope_cancel(s);
    result = 12345;
    CHECK_EQ(weft_reduce(NULL, 5, 5, 0, &r, &result), ECANCELED);
    CHECK_EQ(result, 12345);
    weft_graph *g;
    CHECK_EQ(weft_graph_create(&g), 0);
    CHECK_EQ(weft_graph_run(g, NULL), ECANCELED);
    weft_graph_destroy(g);
}

TEST(cancelled_empty_work_answers_ecanceled) {
    weft_pool *pool = make_pool(2);
    weft_scope_run(pool, empty_work_in_cancelled_scope, NULL);
    weft_reducer r = {sizeof(uint64_t), sum_init, sum_fold, sum_combine, NULL};
    uint64_t result = 12345;
    CHECK_EQ(weft_reduce(pool, 7, 3, 0, &r, &result), 0); /* outside every group */
    CHECK_EQ(result, 0);
    weft_graph *g;
    CHECK_EQ(weft_graph_create(&g), 0);
    CHECK_EQ(weft_graph_run(g, pool), 0);
    weft_graph_destroy(g);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- graphs -------------------------------------------------------------------- */

typedef struct node_probe {
    bool cancel;
    _Atomic int runs;
} node_probe;

static void graph_node(void *arg) {
    node_probe *p = arg;
    atomic_fetch_add(&p->runs, 1);
    if (p->cancel)
        weft_cancel();
}

TEST(a_cancelled_graph_run_skips_the_rest_and_the_next_run_is_fresh) {
    weft_pool *pool = make_pool(2);
    weft_graph *g;
    CHECK_EQ(weft_graph_create(&g), 0);
    node_probe p[4] = {{.cancel = true}};
    weft_node *n[4];
    for (int i = 0; i < 4; i++)
        CHECK_EQ(weft_graph_add(g, graph_node, &p[i], &n[i]), 0);
    for (int i = 0; i < 3; i++) /* a chain: 0, 1, 2, 3 */
        CHECK_EQ(weft_graph_edge(g, n[i], n[i + 1]), 0);
    CHECK_EQ(weft_graph_run(g, pool), ECANCELED);
    CHECK_EQ(atomic_load(&p[0].runs), 1);
    for (int i = 1; i < 4; i++)
        CHECK_EQ(atomic_load(&p[i].runs), 0);
    p[0].cancel = false;
    CHECK_EQ(weft_graph_run(g, pool), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(atomic_load(&p[i].runs), i == 0 ? 2 : 1);
    p[3].cancel = true; /* the last node: nothing to skip, the run still reports it */
    CHECK_EQ(weft_graph_run(g, NULL), ECANCELED);
    weft_graph_destroy(g);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- nesting ---------------------------------------------------------------------- */

static void inner_spawn_refused(weft_scope *s, void *arg) {
    (void)arg;
    CHECK(weft_cancelled()); /* born cancelled: the scope around it is */
    CHECK_EQ(weft_scope_spawn(s, count_run, NULL), ECANCELED);
}

typedef struct nest {
    weft_pool *pool;
    weft_scope *outer;
    loop_probe loop;
} nest;

static void cancel_outer_from_loop(size_t begin, size_t end, void *arg) {
    nest *t = arg;
    (void)end;
    atomic_fetch_add(&t->loop.calls, 1);
    if (begin == 0)
        weft_scope_cancel(t->outer);
    CHECK(weft_cancelled()); /* the loop nests in the cancelled scope */
}

static void nesting_body(weft_scope *s, void *arg) {
    nest *t = arg;
    t->outer = s;
    /* A loop cancelled alone leaves the scope around it running. */
    loop_probe own = {.cancel_at = 0};
    weft_for(t->pool, 0, 100, 1, probe_body, &own);
    CHECK_EQ(atomic_load(&own.calls), 1);
    CHECK(!weft_cancelled());
    CHECK_EQ(weft_scope_spawn(s, count_run, NULL), 0);
    /* A cancel of the scope reaches the loop inside it. */
    weft_for(t->pool, 0, 100, 1, cancel_outer_from_loop, t);
    CHECK_EQ(atomic_load(&t->loop.calls), 1);
    CHECK(weft_cancelled());
    weft_scope_run(t->pool, inner_spawn_refused, NULL);
    uint64_t result = 7;
    sum_probe never = {.cancel_at = UINT64_MAX};
    weft_reducer r = {sizeof(uint64_t), sum_init, cancelling_fold, sum_combine, &never};
    CHECK_EQ(weft_reduce(t->pool, 0, 10, 0, &r, &result), ECANCELED);
    CHECK_EQ(result, 7);
}

TEST(a_cancel_reaches_the_groups_nested_in_it_and_no_further_out) {
    weft_pool *pool = make_waiting_pool(1);
    reset();
    nest t = {.pool = pool};
    weft_scope_run(pool, nesting_body, &t);
    CHECK_EQ(atomic_load(&ran), 0); /* queued before the cancel, skipped by it */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A detached job spawned from a cancelled scope belongs to no group. */
static _Atomic int detached_saw;

static void detached_probe(void *arg) {
    (void)arg;
    atomic_store(&detached_saw, weft_cancelled() ? 2 : 1);
    weft_cancel(); /* a no-op: nothing to cancel */
}

static void spawn_detached(weft_scope *s, void *arg) {
    weft_scope_cancel(s);
    CHECK_EQ(weft_spawn(arg, detached_probe, NULL), 0);
}

TEST(detached_jobs_belong_to_no_group) {
    weft_pool *pool = make_pool(2);
    atomic_store(&detached_saw, 0);
    weft_scope_run(pool, spawn_detached, pool);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* runs the detached job first */
    CHECK_EQ(atomic_load(&detached_saw), 1);
}

/* ---- cancels racing completion ----------------------------------------------------- */

typedef struct race {
    weft_scope *scope;
    _Atomic long queued; /* spawns that returned 0 */
    _Atomic long refused;
    uint64_t seed;
    uint64_t odds; /* a job cancels the scope with probability 1/odds */
} race;

static uint64_t next_random(uint64_t *x) { /* xorshift64 */
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void race_job(void *arg);

static void race_spawn(race *r) {
    int err = weft_scope_spawn_release(r->scope, race_job, count_release, r);
    if (err == 0)
        atomic_fetch_add(&r->queued, 1);
    else
        CHECK_EQ(err, ECANCELED);
}

static void race_job(void *arg) {
    race *r = arg;
    atomic_fetch_add(&ran, 1);
    uint64_t x = (uint64_t)(uintptr_t)&x ^ r->seed ^ (uint64_t)atomic_load(&ran);
    if (next_random(&x) % r->odds == 0)
        weft_cancel();
    if (atomic_load(&r->queued) < 2000)
        for (int i = 0; i < 2; i++)
            race_spawn(r);
}

static void race_body(weft_scope *s, void *arg) {
    race *r = arg;
    r->scope = s;
    for (int i = 0; i < 16; i++)
        race_spawn(r);
}

TEST(cancels_racing_completion_lose_no_job) {
    unsigned sizes[] = {2, 8, 64};
    for (int k = 0; k < 6; k++) { /* each size under both wake protocols */
        weft_pool *pool;
        weft_config c = {.threads = sizes[k % 3],
                         .wake = k < 3 ? WEFT_WAKE_TARGETED : WEFT_WAKE_ALL};
        CHECK_EQ(weft_pool_create(&pool, &c), 0);
        for (long round = 0; round < scaled(100); round++) {
            reset();
            /* Some rounds mostly end before anyone cancels, others early. */
            race r = {.seed = 0x9e3779b97f4a7c15ull * (uint64_t)(round + 1),
                      .odds = round % 2 ? 97 : 3001};
            weft_scope_run(pool, race_body, &r);
            /* Every job queued ran or was released, exactly once, and all of
             * that happened before the scope returned. */
            long done = atomic_load(&ran) + atomic_load(&released);
            CHECK_EQ(done, atomic_load(&r.queued));
            /* A reduction racing its own cancel: the exact sum, or nothing. */
            sum_probe probe = {.cancel_at = (uint64_t)(round * 7919) % 20000};
            weft_reducer red = {sizeof(uint64_t), sum_init, cancelling_fold, sum_combine, &probe};
            uint64_t result = 1;
            int err = weft_reduce(pool, 0, 10000, (size_t)round % 3, &red, &result);
            CHECK(err == ECANCELED ? result == 1
                                   : err == 0 && result == (uint64_t)10000 * 9999 / 2);
        }
        long after = atomic_load(&ran) + atomic_load(&released);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        CHECK_EQ(atomic_load(&ran) + atomic_load(&released), after); /* nothing ran late */
    }
}
