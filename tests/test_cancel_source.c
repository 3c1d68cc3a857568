/* SPDX-License-Identifier: MIT */
/* Cancel sources (weft_run_cancellable): a handle the caller owns, which a
 * thread outside the work cancels at any time. Its states (cancelled before
 * the run, reset), what a cancel reaches (every group the run starts, and
 * runs sharing the source; not the caller's other work), bad input, and a
 * watchdog that cancels at random moments, 10,000 rounds: every queued job
 * runs or is released exactly once, no loop index or graph node runs twice,
 * and a run that answers 0 ran everything. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "pools.h"
#include "weft.h"

static _Atomic int calls;

static void count_call(void *arg) {
    (void)arg;
    atomic_fetch_add(&calls, 1);
}

TEST(a_cancelled_source_skips_the_run_until_reset) {
    weft_pool *pool = make_pool(2);
    weft_cancel_source *src;
    CHECK_EQ(weft_cancel_source_create(&src), 0);
    CHECK(!weft_cancel_source_cancelled(src));
    atomic_store(&calls, 0);
    CHECK_EQ(weft_run_cancellable(pool, src, count_call, NULL), 0);
    CHECK_EQ(atomic_load(&calls), 1);
    weft_cancel_source_cancel(src);
    weft_cancel_source_cancel(src); /* twice: harmless */
    CHECK(weft_cancel_source_cancelled(src));
    CHECK_EQ(weft_run_cancellable(pool, src, count_call, NULL), ECANCELED);
    CHECK_EQ(weft_run_cancellable(NULL, src, count_call, NULL), ECANCELED); /* default pool */
    CHECK_EQ(atomic_load(&calls), 1);                                       /* skipped */
    weft_cancel_source_reset(src);
    CHECK(!weft_cancel_source_cancelled(src));
    CHECK_EQ(weft_run_cancellable(pool, src, count_call, NULL), 0);
    CHECK_EQ(atomic_load(&calls), 2);
    weft_cancel_source_destroy(src);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(bad_input) {
    weft_cancel_source *src;
    CHECK_EQ(weft_cancel_source_create(NULL), EINVAL);
    CHECK_EQ(weft_cancel_source_create(&src), 0);
    CHECK_EQ(weft_run_cancellable(NULL, NULL, count_call, NULL), EINVAL);
    CHECK_EQ(weft_run_cancellable(NULL, src, NULL, NULL), EINVAL);
    weft_cancel_source_cancel(NULL); /* NULL: nothing, as free(NULL) */
    weft_cancel_source_reset(NULL);
    CHECK(!weft_cancel_source_cancelled(NULL));
    weft_cancel_source_destroy(NULL);
    weft_cancel_source_destroy(src);
}

/* ---- What a cancel reaches ------------------------------------------------ */

typedef struct reach {
    weft_cancel_source *src;
    _Atomic int inner_ran;  /* scope jobs that ran after the cancel */
    _Atomic int saw_cancel; /* a running job saw weft_cancelled() */
    _Atomic int other_ran;  /* work of the caller's, outside the run */
    int reduce_err;
} reach;

static void late_job(void *arg) {
    reach *r = arg;
    atomic_fetch_add(&r->inner_ran, 1);
}

static void cancel_then_spawn(weft_scope *s, void *arg) {
    reach *r = arg;
    weft_cancel_source_cancel(r->src); /* as a watchdog would, from this thread */
    if (weft_cancelled())
        atomic_store(&r->saw_cancel, 1);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(weft_scope_spawn(s, late_job, r), ECANCELED); /* born cancelled */
}

static void sum_init(void *acc, void *arg) {
    (void)arg;
    *(long *)acc = 0;
}
static void sum_fold(size_t b, size_t e, void *acc, void *arg) {
    (void)arg;
    *(long *)acc += (long)(e - b);
}
static void sum_combine(void *acc, const void *rhs, void *arg) {
    (void)arg;
    *(long *)acc += *(const long *)rhs;
}

static void cancelled_run(void *arg) {
    reach *r = arg;
    weft_scope_run(NULL, cancel_then_spawn, r);
    /* A reduction started after the cancel: born cancelled. */
    weft_reducer red = {sizeof(long), sum_init, sum_fold, sum_combine, NULL};
    long sum = -1;
    r->reduce_err = weft_reduce(NULL, 0, 1000, 1, &red, &sum);
    CHECK_EQ(sum, -1);
}

static void other_work(void *arg) {
    reach *r = arg;
    atomic_fetch_add(&r->other_ran, 1);
}

/* The caller's own scope: one job runs the cancelled run, the other is
 * the caller's other work, which the source's cancel must not reach. */
static void beside(weft_scope *s, void *arg) {
    reach *r = arg;
    CHECK_EQ(weft_run_cancellable(NULL, r->src, cancelled_run, r), ECANCELED);
    CHECK(!weft_cancelled()); /* the caller's scope is not cancelled */
    CHECK_EQ(weft_scope_spawn(s, other_work, r), 0);
}

TEST(a_cancel_reaches_what_the_run_starts_and_nothing_else) {
    weft_pool *pool = make_pool(2);
    reach r = {0};
    CHECK_EQ(weft_cancel_source_create(&r.src), 0);
    weft_scope_run(pool, beside, &r);
    CHECK_EQ(atomic_load(&r.inner_ran), 0);
    CHECK_EQ(atomic_load(&r.saw_cancel), 1);
    CHECK_EQ(r.reduce_err, ECANCELED);
    CHECK_EQ(atomic_load(&r.other_ran), 1);
    weft_cancel_source_destroy(r.src);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* Runs on two outside threads share one source; one cancel stops both. */
static _Atomic int spinning;

static void spin_until_cancelled(void *arg) {
    (void)arg;
    atomic_fetch_add(&spinning, 1);
    while (!weft_cancelled())
        sched_yield();
}

typedef struct shared_run {
    weft_pool *pool;
    weft_cancel_source *src;
    int err;
} shared_run;

static void *run_on_a_thread(void *arg) {
    shared_run *s = arg;
    s->err = weft_run_cancellable(s->pool, s->src, spin_until_cancelled, NULL);
    return NULL;
}

TEST(one_cancel_stops_every_run_that_shares_the_source) {
    weft_pool *pool = make_pool(2);
    weft_cancel_source *src;
    CHECK_EQ(weft_cancel_source_create(&src), 0);
    atomic_store(&spinning, 0);
    shared_run runs[2] = {{pool, src, -1}, {pool, src, -1}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, run_on_a_thread, &runs[i]), 0);
    while (atomic_load(&spinning) < 2)
        sched_yield();
    weft_cancel_source_cancel(src);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
        CHECK_EQ(runs[i].err, ECANCELED);
    }
    weft_cancel_source_destroy(src);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- A watchdog at random moments ------------------------------------------ */

#define WATCH_ROUNDS  10000
#define WATCH_JOBS    16
#define WATCH_INDICES 64
#define WATCH_NODES   8

typedef struct watched {
    weft_graph *graph;
    _Atomic int job_offered[WATCH_JOBS], job_ran[WATCH_JOBS], job_released[WATCH_JOBS];
    _Atomic int index_ran[WATCH_INDICES];
    _Atomic int node_ran[WATCH_NODES];
    int graph_err, reduce_err;
    long sum;
} watched;

static watched the_work;

/* Which moments a round's cancel may come at, by round % 4 (the watchdog's
 * timing alone decides nothing a check depends on: on a loaded machine it
 * may never run while a request does):
 *  0, 3  any: after a random delay from the round's start, before the run,
 *        during it or after it;
 *  1     before the run: the run must skip its request;
 *  2     during the run: the request's first scope job waits until the
 *        cancel has come, so the run must answer ECANCELED. */
enum { WATCH_BEFORE = 1, WATCH_DURING = 2 };
static _Atomic long watch_go, watch_fired; /* the round the watchdog may fire in / fired in */

static void job_run(void *arg) {
    long round = atomic_load(&watch_go);
    if ((intptr_t)arg == 0 && round % 4 == WATCH_DURING)
        while (atomic_load(&watch_fired) != round)
            sched_yield();
    atomic_fetch_add(&the_work.job_ran[(intptr_t)arg], 1);
}
static void job_release(void *arg) {
    atomic_fetch_add(&the_work.job_released[(intptr_t)arg], 1);
}
static void node_run(void *arg) {
    atomic_fetch_add(&the_work.node_ran[(intptr_t)arg], 1);
}
static void index_range(size_t b, size_t e, void *arg) {
    (void)arg;
    for (size_t i = b; i < e; i++)
        atomic_fetch_add(&the_work.index_ran[i], 1);
}
static void spawn_jobs(weft_scope *s, void *arg) {
    (void)arg;
    for (intptr_t i = 0; i < WATCH_JOBS; i++) {
        atomic_store(&the_work.job_offered[i], 1);
        int err = weft_scope_spawn_release(s, job_run, job_release, (void *)i);
        CHECK(err == 0 || err == ECANCELED);
        if (err == ECANCELED)
            job_release((void *)i); /* refused: the caller still owns it */
    }
}

/* A request: a scope, a loop, a reduction and a graph run. */
static void request(void *arg) {
    watched *w = arg;
    weft_scope_run(NULL, spawn_jobs, NULL);
    weft_for(NULL, 0, WATCH_INDICES, 1, index_range, NULL);
    weft_reducer red = {sizeof(long), sum_init, sum_fold, sum_combine, NULL};
    w->reduce_err = weft_reduce(NULL, 0, 1000, 1, &red, &w->sum);
    w->graph_err = weft_graph_run(w->graph, NULL);
}

static weft_cancel_source *watch_src;
static double watch_span; /* s: 1.5 times an uncancelled request */

static uint64_t next_random(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void *watchdog(void *arg) {
    (void)arg;
    uint64_t rng = 0x9e3779b97f4a7c15u;
    for (long round = 1; round <= WATCH_ROUNDS; round++) {
        while (atomic_load(&watch_go) != round)
            sched_yield();
        /* Anywhere from before the run starts to after it ended. */
        double until = check_now() + watch_span * (double)(next_random(&rng) % 1024) / 1024;
        while (round % 4 != WATCH_BEFORE && check_now() < until) {
        }
        weft_cancel_source_cancel(watch_src);
        atomic_store(&watch_fired, round);
    }
    return NULL;
}

TEST(a_watchdog_cancelling_at_random_moments_loses_no_job) {
    weft_pool *pool = make_pool(2);
    CHECK_EQ(weft_cancel_source_create(&watch_src), 0);
    CHECK_EQ(weft_graph_create(&the_work.graph), 0);
    for (intptr_t i = 0; i < WATCH_NODES; i++) {
        weft_node *n;
        CHECK_EQ(weft_graph_add(the_work.graph, node_run, (void *)i, &n), 0);
    }
    /* How long a request takes here, uncancelled (the sanitizers differ). */
    double t0 = check_now();
    for (int i = 0; i < 20; i++)
        CHECK_EQ(weft_run_cancellable(pool, watch_src, request, &the_work), 0);
    watch_span = 1.5 * (check_now() - t0) / 20;
    atomic_store(&watch_go, 0);
    atomic_store(&watch_fired, 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, watchdog, NULL), 0);
    long cancelled = 0;
    for (long round = 1; round <= WATCH_ROUNDS; round++) {
        watched *w = &the_work;
        for (int i = 0; i < WATCH_JOBS; i++) {
            atomic_store(&w->job_offered[i], 0);
            atomic_store(&w->job_ran[i], 0);
            atomic_store(&w->job_released[i], 0);
        }
        for (int i = 0; i < WATCH_INDICES; i++)
            atomic_store(&w->index_ran[i], 0);
        for (int i = 0; i < WATCH_NODES; i++)
            atomic_store(&w->node_ran[i], 0);
        w->graph_err = w->reduce_err = -1;
        w->sum = -1;
        weft_cancel_source_reset(watch_src);
        atomic_store(&watch_go, round);
        if (round % 4 == WATCH_BEFORE)
            while (atomic_load(&watch_fired) != round)
                sched_yield();
        int err = weft_run_cancellable(pool, watch_src, request, w);
        CHECK(err == 0 || err == ECANCELED);
        if (round % 4 == WATCH_BEFORE || round % 4 == WATCH_DURING)
            CHECK_EQ(err, ECANCELED);
        if (round % 4 == WATCH_BEFORE) /* skipped: nothing offered */
            CHECK_EQ(atomic_load(&w->job_offered[0]), 0);
        while (atomic_load(&watch_fired) != round) /* its cancel is done */
            sched_yield();
        cancelled += err == ECANCELED;
        for (int i = 0; i < WATCH_JOBS; i++) { /* each offered job ran or was released, once */
            CHECK_EQ(atomic_load(&w->job_ran[i]) + atomic_load(&w->job_released[i]),
                     atomic_load(&w->job_offered[i]));
            if (err == 0)
                CHECK_EQ(atomic_load(&w->job_ran[i]), 1);
        }
        for (int i = 0; i < WATCH_INDICES; i++) /* never twice; all if not cancelled */
            CHECK_EQ(atomic_load(&w->index_ran[i]),
                     err == 0 ? 1 : atomic_load(&w->index_ran[i]) & 1);
        for (int i = 0; i < WATCH_NODES; i++)
            CHECK_EQ(atomic_load(&w->node_ran[i]), err == 0 ? 1 : atomic_load(&w->node_ran[i]) & 1);
        if (err == 0) {
            CHECK_EQ(w->reduce_err, 0);
            CHECK_EQ(w->sum, 1000);
            CHECK_EQ(w->graph_err, 0);
        } else {
            /* Skipped, cancelled (result untouched), or done before the cancel. */
            CHECK(w->reduce_err == -1 || (w->reduce_err == ECANCELED && w->sum == -1) ||
                  (w->reduce_err == 0 && w->sum == 1000));
            CHECK(w->graph_err == -1 || w->graph_err == ECANCELED || w->graph_err == 0);
        }
    }
    CHECK_EQ(pthread_join(t, NULL), 0);
    fprintf(stderr, "%ld of %d rounds cancelled\n", cancelled, WATCH_ROUNDS);
    weft_graph_destroy(the_work.graph);
    weft_cancel_source_destroy(watch_src);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
