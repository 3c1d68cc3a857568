/* SPDX-License-Identifier: MIT */
/* Priorities: high-priority jobs run before queued normal ones, priority is
 * inherited by forked work, explicit priorities, and exactly-once under an
 * oversubscribed mixed load. */
#include <errno.h>
#include <stdatomic.h>

#include "check.h"
#include "pools.h"
#include "core/current.h"
#include "weft.h"

static _Atomic int gate;
static _Atomic int order[64];
static _Atomic int next_slot;

static void blocker(void *arg) {
    (void)arg;
    while (!atomic_load(&gate))
        check_sleep_us(100);
}

static void record(void *arg) {
    atomic_store(&order[atomic_fetch_add(&next_slot, 1)], (int)(intptr_t)arg);
}

TEST(high_runs_before_queued_normal_jobs) {
    weft_pool *pool = make_pool(1); /* one worker: the order is exact */
    atomic_store(&gate, 0);
    atomic_store(&next_slot, 0);
    CHECK_EQ(weft_spawn(pool, blocker, NULL), 0);
    check_sleep_us(2000); /* the worker is inside blocker */
    for (intptr_t i = 1; i <= 10; i++)
        CHECK_EQ(weft_spawn(pool, record, (void *)i), 0);
    CHECK_EQ(weft_spawn_priority(pool, record, (void *)100, WEFT_PRIORITY_HIGH), 0);
    atomic_store(&gate, 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&next_slot), 11);
    CHECK_EQ(atomic_load(&order[0]), 100); /* the high job first */
    for (int i = 1; i <= 10; i++)
        CHECK_EQ(atomic_load(&order[i]), i); /* then the normal ones, FIFO */
}

static _Atomic int wrong_priority;

static void expect_high(void *arg) {
    (void)arg;
    weft__worker *w = weft__current_worker();
    if (!w || w->h.prio != WEFT_PRIORITY_HIGH)
        atomic_fetch_add(&wrong_priority, 1);
}

static void expect_high_range(size_t b, size_t e, void *arg) {
    (void)b, (void)e;
    expect_high(arg);
}

static void spawn_inherited(weft_scope *s, void *arg) {
    (void)arg;
    for (int i = 0; i < 50; i++)
        CHECK_EQ(weft_scope_spawn(s, expect_high, NULL), 0);
}

static void high_tree(void *arg) {
    weft_pool *pool = arg;
    expect_high(NULL);
    weft_join(expect_high, NULL, expect_high, NULL);
    weft_for(pool, 0, 10000, 10, expect_high_range, NULL);
    weft_scope_run(pool, spawn_inherited, NULL);
}

TEST(forked_work_inherits_the_priority) {
    weft_pool *pool = make_pool(3);
    atomic_store(&wrong_priority, 0);
    for (int i = 0; i < scaled(50); i++)
        weft_run_priority(pool, high_tree, pool, WEFT_PRIORITY_HIGH);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* (spawns inside finished before) */
    CHECK_EQ(atomic_load(&wrong_priority), 0);
}

static void expect_normal(void *arg) {
    (void)arg;
    weft__worker *w = weft__current_worker();
    if (!w || w->h.prio != WEFT_PRIORITY_NORMAL)
        atomic_fetch_add(&wrong_priority, 1);
}

static void explicit_in_scope(weft_scope *s, void *arg) {
    (void)arg;
    CHECK_EQ(weft_scope_spawn_priority(s, expect_high, NULL, WEFT_PRIORITY_HIGH), 0);
    CHECK_EQ(weft_scope_spawn_priority(s, expect_normal, NULL, WEFT_PRIORITY_NORMAL), 0);
    CHECK_EQ(weft_scope_spawn_priority(s, expect_normal, NULL, (weft_priority)5), EINVAL);
}

TEST(explicit_priorities_and_bad_input) {
    weft_pool *pool = make_pool(2);
    atomic_store(&wrong_priority, 0);
    weft_scope_run(pool, explicit_in_scope, NULL);
    weft_run(pool, expect_normal, NULL);
    CHECK_EQ(weft_spawn_priority(pool, expect_high, NULL, WEFT_PRIORITY_HIGH), 0);
    CHECK_EQ(weft_spawn_priority(pool, expect_high, NULL, (weft_priority)7), EINVAL);
    CHECK_EQ(weft_spawn_priority(pool, NULL, NULL, WEFT_PRIORITY_HIGH), EINVAL);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&wrong_priority), 0);
}

static _Atomic long ran;

static void count(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

static void mixed(weft_scope *s, void *arg) {
    (void)arg;
    for (int i = 0; i < scaled(20000); i++)
        CHECK_EQ(weft_scope_spawn_priority(s, count, NULL, (weft_priority)(i % 3 == 0)), 0);
}

TEST(mixed_priorities_on_an_oversubscribed_pool) {
    for (int w = 0; w < 2; w++) {
        weft_pool *pool;
        CHECK_EQ(
            weft_pool_create(&pool, &(weft_config){.threads = 32,
                                                   .wake = w ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED}),
            0);
        atomic_store(&ran, 0);
        weft_scope_run(pool, mixed, NULL);
        CHECK_EQ(atomic_load(&ran), scaled(20000));
        for (int i = 0; i < 500; i++)
            CHECK_EQ(weft_spawn_priority(pool, count, NULL, (weft_priority)(i & 1)), 0);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        CHECK_EQ(atomic_load(&ran), scaled(20000) + 500);
    }
}

/* A job that sits on a busy worker's deque must be stolen, whatever its
 * priority: the worker here waits for it in a leaf that neither pushes nor
 * pops. Fails without sharing a deque's only job (the job stays private when
 * the thief went idle after the push) and without noting high work
 * (weft__pool_note_high: thieves skip the high deques until then). The wait is
 * bounded: a miss fails, it does not hang. */
static _Atomic int stolen;

static void mark_stolen(void *arg) {
    (void)arg;
    atomic_store(&stolen, 1);
}

static void wait_until_stolen(void *arg) {
    (void)arg;
    for (int i = 0; i < 100000 && !atomic_load(&stolen); i++)
        check_sleep_us(100);
    CHECK(atomic_load(&stolen)); /* set by another worker while this one waited */
}

static void spawn_high_then_wait(weft_scope *s, void *arg) {
    CHECK_EQ(weft_scope_spawn_priority(s, mark_stolen, NULL, WEFT_PRIORITY_HIGH), 0);
    wait_until_stolen(arg);
}

static void explicit_high(void *pool) {
    weft_scope_run(pool, spawn_high_then_wait, NULL);
}

static void fork_then_wait(void *arg) {
    weft_join(wait_until_stolen, arg, mark_stolen, arg); /* at the running priority */
}

TEST(a_busy_workers_only_job_is_stolen) {
    /* Fresh pools, so no high work is noted yet; repeated, since the
     * thief's timing decides whether the push saw it idle. The busy thread
     * is a worker (the caller only waits) or the outside caller itself, in
     * its caller slot. */
    for (int round = 0; round < 20; round++) {
        /* A high spawn from a normal job, a fork in a high job, a plain fork. */
        weft_fn *paths[] = {explicit_high, fork_then_wait, fork_then_wait};
        for (int i = 0; i < 3; i++) {
            weft_pool *pool = round % 2 ? make_pool(2) : make_waiting_pool(2);
            atomic_store(&stolen, 0);
            weft_run_priority(pool, paths[i], pool, (weft_priority)(i == 1));
            CHECK_EQ(weft_pool_destroy(pool), 0);
        }
    }
}

/* ---- A high-priority job against a pool full of normal work ------------
 * The promise (weft.h, Priorities): a high-priority job waits for at most
 * one running job, and a piece of a loop or a reduction (a call of its
 * function), a scope's spawn and a graph's node each count as one. A pool
 * of 2 workers is filled with 400 normal pieces of 200 us, of one kind
 * each case; once 20 calls have started, a high-priority job is posted from
 * outside and notes how many calls the thread that runs it had started
 * since the post. Counted in calls, not time: that thread may finish the
 * call it runs and begin at most one more before it looks. A stolen half
 * of a loop used to run as one job: the probe started hundreds of pieces
 * later. */

#define FLOOD_PIECES   400
#define FLOOD_PIECE_US 200
#define PROBE_AFTER    20

enum flood_kind { FLOOD_FOR, FLOOD_FOR_ADAPTIVE, FLOOD_REDUCE, FLOOD_SCOPE, FLOOD_GRAPH };

static _Atomic long pieces_started;
static _Atomic long started_by[2]; /* calls started, by worker */
static long started_at_post[2];
static _Atomic long pieces_done;
static _Atomic long probe_saw;
static _Atomic int flood_done;
static weft_event *all_pieces_done; /* NULL: the probe does not wait */

/* n pieces in one call of the user's function (a loop's leaf step may
 * hold several: it counts as one, since weft looks between steps). */
static void flood_pieces(long n) {
    atomic_fetch_add(&pieces_started, 1);
    atomic_fetch_add(&started_by[weft_thread_index()], 1);
    double until = check_now() + (double)n * FLOOD_PIECE_US * 1e-6;
    while (check_now() < until) {
    }
    if (atomic_fetch_add(&pieces_done, n) + n == FLOOD_PIECES && all_pieces_done)
        weft_event_signal(all_pieces_done);
}

static void flood_range(size_t b, size_t e, void *arg) {
    (void)arg;
    flood_pieces((long)(e - b));
}

static void flood_one(void *arg) {
    (void)arg;
    flood_pieces(1);
}

static void flood_init(void *acc, void *arg) {
    (void)arg;
    *(long *)acc = 0;
}

static void flood_fold(size_t b, size_t e, void *acc, void *arg) {
    flood_range(b, e, arg);
    *(long *)acc += (long)(e - b);
}

static void flood_combine(void *acc, const void *rhs, void *arg) {
    (void)arg;
    *(long *)acc += *(const long *)rhs;
}

static void flood_spawns(weft_scope *s, void *arg) {
    (void)arg;
    for (int i = 0; i < FLOOD_PIECES; i++)
        CHECK_EQ(weft_scope_spawn(s, flood_one, NULL), 0);
}

/* The normal work, run as a detached normal job. */
static void flood(void *arg) {
    switch ((enum flood_kind)(intptr_t)arg) {
    case FLOOD_FOR:
        weft_for(NULL, 0, FLOOD_PIECES, 1, flood_range, NULL);
        break;
    case FLOOD_FOR_ADAPTIVE:
        weft_for(NULL, 0, FLOOD_PIECES, 0, flood_range, NULL);
        break;
    case FLOOD_REDUCE: {
        weft_reducer r = {sizeof(long), flood_init, flood_fold, flood_combine, NULL};
        long sum = 0;
        CHECK_EQ(weft_reduce(NULL, 0, FLOOD_PIECES, 1, &r, &sum), 0);
        CHECK_EQ(sum, FLOOD_PIECES);
        break;
    }
    case FLOOD_SCOPE:
        weft_scope_run(NULL, flood_spawns, NULL);
        break;
    case FLOOD_GRAPH: {
        weft_graph *g;
        CHECK_EQ(weft_graph_create(&g), 0);
        for (int i = 0; i < FLOOD_PIECES; i++) {
            weft_node *n;
            CHECK_EQ(weft_graph_add(g, flood_one, NULL, &n), 0);
        }
        CHECK_EQ(weft_graph_run(g, NULL), 0);
        weft_graph_destroy(g);
        break;
    }
    }
    atomic_store(&flood_done, 1);
}

static void probe(void *arg) {
    (void)arg;
    /* What the thread that runs the probe started since the post: it took
     * the probe at its first look after the post, between two calls. Other
     * threads' calls do not count: one preempted after taking the probe
     * would make them many. */
    int me = weft_thread_index();
    atomic_store(&probe_saw, atomic_load(&started_by[me]) - started_at_post[me]);
    if (all_pieces_done)
        weft_event_wait(all_pieces_done);
}

/* With wait: the probe waits for every piece to have run. */
static void high_job_against(enum flood_kind kind, bool wait) {
    weft_pool *pool = make_waiting_pool(2);
    if (wait)
        CHECK_EQ(weft_event_create(&all_pieces_done, pool, 1), 0);
    atomic_store(&pieces_started, 0);
    atomic_store(&started_by[0], 0);
    atomic_store(&started_by[1], 0);
    atomic_store(&pieces_done, 0);
    atomic_store(&probe_saw, -1);
    atomic_store(&flood_done, 0);
    CHECK_EQ(weft_spawn(pool, flood, (void *)(intptr_t)kind), 0);
    while (atomic_load(&pieces_started) < PROBE_AFTER)
        check_sleep_us(100);
    for (int t = 0; t < 2; t++)
        started_at_post[t] = atomic_load(&started_by[t]);
    CHECK_EQ(weft_spawn_priority(pool, probe, NULL, WEFT_PRIORITY_HIGH), 0);
    while (!atomic_load(&flood_done))
        check_sleep_us(1000);
    if (wait) {
        CHECK(weft_event_is_set(all_pieces_done));
        weft_event_destroy(all_pieces_done);
        all_pieces_done = NULL;
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
    long saw = atomic_load(&probe_saw);
    CHECK(saw >= 0);
    if (getenv("WEFT_TEST_VERBOSE") || saw > 2)
        fprintf(stderr, "kind %d: the high job started %ld pieces after it was posted\n", kind,
                saw);
    CHECK(saw <= 2); /* a call begun around the post, and one more */
}

TEST(a_high_job_waits_for_one_piece_of_a_loop) {
    high_job_against(FLOOD_FOR, false);
    high_job_against(FLOOD_FOR_ADAPTIVE, false);
}

/* The high job may start between two pieces, nested on a worker inside
 * the loop; if it then waits for every piece to have run, its wait runs
 * the pieces its thread holds (the interrupted one included), instead of
 * waiting for them for ever. */
TEST(a_high_job_that_waits_for_the_loops_pieces_finishes) {
    for (int kind = FLOOD_FOR; kind <= FLOOD_REDUCE; kind++)
        high_job_against((enum flood_kind)kind, true);
}

TEST(a_high_job_waits_for_one_piece_of_a_reduction) {
    high_job_against(FLOOD_REDUCE, false);
}

TEST(a_high_job_waits_for_one_spawn_of_a_scope) {
    high_job_against(FLOOD_SCOPE, false);
}

TEST(a_high_job_waits_for_one_node_of_a_graph) {
    high_job_against(FLOOD_GRAPH, false);
}
