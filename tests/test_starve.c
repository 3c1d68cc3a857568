/* SPDX-License-Identifier: MIT */
/* No job left private while workers idle (issue: a job that a job pushes
 * must start on an idle worker even while the pushing job runs on without
 * calling weft).
 *
 * Two workers. A blocker keeps one busy while a pusher, on the other,
 * pushes JOBS jobs by one path (join's b, spawn, scope spawn, a loop's other
 * pieces, a high-priority spawn): at that moment no worker is idle, so no
 * wake-up is due. The blocker then returns and its worker goes idle, while
 * the pusher spins without calling weft until every pushed job has started.
 * Only the idle worker can start them, one after another (a deque that
 * keeps the newest jobs private until its owner's next push or pop shares
 * only the first). The deadline is a hang detector, not a
 * bound on latency: a job the idle worker cannot take starts only when the
 * pusher gives up. Then the same with the other worker asleep at the push
 * (the pusher woken by its own spawn from outside): only the push can wake
 * it (a push shares its jobs unasked when a worker sleeps and none
 * searches). Every path runs under both leave policies and both wake
 * protocols. */
#include <stdatomic.h>

#include "asleep.h"
#include "check.h"
#include "weft.h"

#define GIVE_UP_S 5.0
#define JOBS      4

typedef struct starve starve;
struct starve {
    void (*push)(starve *s); /* the path under test, on the pusher's worker */
    _Atomic int blocker_up, pushed, started, done, gave_up, first;
};

/* Spin, calling nothing of weft, until *count reaches n; false if we gave up. */
static bool spin_for(_Atomic int *count, int n) {
    double deadline = check_now() + GIVE_UP_S;
    while (atomic_load(count) < n)
        if (check_now() > deadline)
            return false;
    return true;
}

static void pushed_job(void *arg) {
    atomic_fetch_add(&((starve *)arg)->started, 1);
}

/* After the pushes: let the blocker go, then wait for the pushed jobs. */
static void pushed_then_spin(starve *s) {
    atomic_store(&s->pushed, 1);
    if (!spin_for(&s->started, JOBS))
        atomic_store(&s->gave_up, 1);
}

static void blocker(void *arg) {
    starve *s = arg;
    atomic_store(&s->blocker_up, 1);
    spin_for(&s->pushed, 1);
    atomic_fetch_add(&s->done, 1);
}

static void pusher(void *arg) {
    starve *s = arg;
    spin_for(&s->blocker_up, 1); /* both workers busy: nobody to wake at the push */
    s->push(s);
    atomic_fetch_add(&s->done, 1);
}

/* asleep: no blocker; the other worker sleeps when the pusher starts. */
static void run_path(void (*push)(starve *s)) {
    static const weft_leave leaves[] = {WEFT_LEAVE_AUTOMATIC, WEFT_LEAVE_FAST};
    static const weft_wake wakes[] = {WEFT_WAKE_TARGETED, WEFT_WAKE_ALL};
    for (int asleep = 0; asleep < 2; asleep++) {
        for (int l = 0; l < 2; l++) {
            for (int k = 0; k < 2; k++) {
                weft_pool *pool;
                weft_config c = {.threads = 2, .leave = leaves[l], .wake = wakes[k]};
                CHECK_EQ(weft_pool_create(&pool, &c), 0);
                starve s = {.push = push, .blocker_up = asleep};
                if (asleep)
                    wait_all_in_a_sleep(pool); /* the spawn below wakes one */
                else
                    CHECK_EQ(weft_spawn(pool, blocker, &s), 0);
                CHECK_EQ(weft_spawn(pool, pusher, &s), 0);
                double deadline = check_now() + 4 * GIVE_UP_S;
                while (atomic_load(&s.done) < 2 - asleep || atomic_load(&s.started) < JOBS) {
                    CHECK(check_now() < deadline);
                    check_sleep_us(1000);
                }
                if (atomic_load(&s.gave_up))
                    fprintf(stderr, "%s, leave %d, wake %d: pushed jobs waited for their pusher\n",
                            asleep ? "asleep" : "busy", l, k);
                CHECK(!atomic_load(&s.gave_up));
                CHECK_EQ(weft_pool_destroy(pool), 0);
            }
        }
    }
    /* The pusher outside the pool, in a caller slot (weft_run from this
     * thread; wake-all pools have no slots), both workers asleep: its pushes
     * must wake one as a worker's do. */
    for (int l = 0; l < 2; l++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2, .leave = leaves[l]}), 0);
        starve s = {.push = push, .blocker_up = 1};
        wait_all_in_a_sleep(pool);
        weft_run(pool, pusher, &s);
        if (atomic_load(&s.gave_up))
            fprintf(stderr, "outside, leave %d: pushed jobs waited for their pusher\n", l);
        CHECK(!atomic_load(&s.gave_up));
        CHECK_EQ(atomic_load(&s.started), JOBS);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* join: JOBS nested joins push their b's, the innermost a spins. */
static void nest(void *arg) {
    starve *s = arg;
    if (atomic_fetch_add(&s->first, 1) < JOBS)
        weft_join(nest, s, pushed_job, s);
    else
        pushed_then_spin(s);
}

static void push_join(starve *s) {
    nest(s);
}

TEST(join_b_starts_while_a_runs) {
    run_path(push_join);
}

static void push_spawn(starve *s) {
    for (int i = 0; i < JOBS; i++)
        CHECK_EQ(weft_spawn(NULL, pushed_job, s), 0);
    pushed_then_spin(s);
}

TEST(spawned_job_starts_while_its_spawner_runs) {
    run_path(push_spawn);
}

static void push_high(starve *s) {
    for (int i = 0; i < JOBS; i++)
        CHECK_EQ(weft_spawn_priority(NULL, pushed_job, s, WEFT_PRIORITY_HIGH), 0);
    pushed_then_spin(s);
}

TEST(high_priority_job_starts_while_its_spawner_runs) {
    run_path(push_high);
}

static void scope_body(weft_scope *scope, void *arg) {
    for (int i = 0; i < JOBS; i++)
        CHECK_EQ(weft_scope_spawn(scope, pushed_job, arg), 0);
    pushed_then_spin(arg);
}

static void push_scope(starve *s) {
    weft_scope_run(NULL, scope_body, s);
}

TEST(scope_job_starts_while_the_body_runs) {
    run_path(push_scope);
}

/* A loop of JOBS + 1 indices: whichever runs first spins until the others
 * began. */
static void loop_body(size_t begin, size_t end, void *arg) {
    starve *s = arg;
    for (size_t i = begin; i < end; i++) {
        if (atomic_fetch_add(&s->first, 1) == 0)
            pushed_then_spin(arg);
        else
            pushed_job(arg);
    }
}

static void push_loop(starve *s) {
    weft_for(NULL, 0, JOBS + 1, 1, loop_body, s);
}

TEST(loop_half_starts_while_the_other_runs) {
    run_path(push_loop);
}
