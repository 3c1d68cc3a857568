/* SPDX-License-Identifier: MIT */
/* Jobs that wait (weft.h): a job that blocks in a blocking region, or is
 * suspended until another thread resumes it, leaves its pool's other work
 * to a spare thread; a job's events hold its completion. Each case makes the
 * pool's only free thread the blocked one, so that without a spare the
 * other work never runs and the case hangs (the ctest timeout fails it):
 * pools of one worker whose root runs on it, or whose worker is held by a
 * spinner while a caller or a context blocks. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "core/spare.h"
#include "pools.h"
#include "spinners.h"
#include "weft.h"

CHILDREN_START_THREADS(); /* fork_while_a_job_blocks's child starts a pool */

static const weft_wake wakes[] = {WEFT_WAKE_TARGETED, WEFT_WAKE_ALL};

static weft_pool *make(unsigned threads, weft_wake wake, unsigned spares) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = threads,
                                                    .wake = wake,
                                                    .callers_wait = true,
                                                    .spares = spares}),
             0);
    return pool;
}

static void wait_for(_Atomic int *n, int at_least) {
    while (atomic_load(n) < at_least)
        usleep(100);
}

static void count(void *arg) {
    atomic_fetch_add((_Atomic int *)arg, 1);
}

/* ---- Suspended jobs ------------------------------------------------------ */

/* A job that blocks, and how often it resumed (or, for the jobs that
 * unblock one, how often they did). */
typedef struct blocker {
    _Atomic(weft_task *) task;
    _Atomic int resumed;
} blocker;

static void block_once(void *arg) {
    blocker *b = arg;
    weft_task *t = weft_task_self();
    CHECK(t != NULL);
    atomic_store(&b->task, t);
    CHECK_EQ(weft_task_block(), 0);
    atomic_fetch_add(&b->resumed, 1);
}

/* Spawn fn(b) in pool and wait until the job has named its task (it blocks
 * next, or has). */
static void spawn_blocker(weft_pool *pool, weft_fn *fn, blocker *b) {
    CHECK_EQ(weft_spawn(pool, fn, b), 0);
    while (!atomic_load(&b->task))
        usleep(100);
}

/* pool's only worker runs a job that blocks; `others` other jobs run
 * meanwhile (on a spare), and the job resumes once unblocked from outside,
 * before the pool is destroyed. */
static void run_others_while_blocked(weft_pool *pool, int others) {
    blocker b = {.task = NULL};
    spawn_blocker(pool, block_once, &b);
    _Atomic int ran = 0;
    for (int i = 0; i < others; i++)
        CHECK_EQ(weft_spawn(pool, count, &ran), 0);
    wait_for(&ran, others);
    CHECK_EQ(atomic_load(&b.resumed), 0);
    CHECK_EQ(weft_task_unblock(atomic_load(&b.task)), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&b.resumed), 1);
}

TEST(a_pool_of_one_runs_others_while_its_job_is_blocked) {
    for (int k = 0; k < 2; k++)
        run_others_while_blocked(make(1, wakes[k], 0), 50);
}

static void unblock_then_block(void *arg) {
    blocker *b = arg;
    CHECK_EQ(weft_task_unblock(weft_task_self()), 0);
    CHECK_EQ(weft_task_unblock(weft_task_self()), 0); /* still one permit */
    CHECK_EQ(weft_task_block(), 0);                   /* spends it at once */
    atomic_fetch_add(&b->resumed, 1);
    atomic_store(&b->task, weft_task_self());
    CHECK_EQ(weft_task_block(), 0); /* no permit left: waits for the test */
    atomic_fetch_add(&b->resumed, 1);
}

TEST(an_unblock_before_the_block_is_not_lost) {
    weft_pool *pool = make(1, WEFT_WAKE_TARGETED, 0);
    blocker b = {.task = NULL};
    spawn_blocker(pool, unblock_then_block, &b);
    CHECK_EQ(atomic_load(&b.resumed), 1);
    CHECK_EQ(weft_task_unblock(atomic_load(&b.task)), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&b.resumed), 2);
}

/* Many jobs block and are unblocked by others, in every order, on pools
 * oversubscribed on this machine: each resumes exactly once. */
typedef struct pairs {
    _Atomic(weft_task *) tasks[64];
    _Atomic int resumed;
} pairs;

typedef struct pair_arg {
    pairs *p;
    int i;
} pair_arg;

static void pair_block(void *arg) {
    pair_arg *a = arg;
    atomic_store(&a->p->tasks[a->i], weft_task_self());
    CHECK_EQ(weft_task_block(), 0);
    atomic_fetch_add(&a->p->resumed, 1);
}

static void pair_unblock(void *arg) {
    pair_arg *a = arg;
    weft_task *t;
    CHECK_EQ(weft_blocking_begin(), 0); /* a job that waits for another */
    while (!(t = atomic_load(&a->p->tasks[a->i])))
        usleep(50);
    weft_blocking_end();
    CHECK_EQ(weft_task_unblock(t), 0);
}

TEST(every_blocked_job_resumes_exactly_once) {
    for (int k = 0; k < 2; k++)
        for (unsigned threads = 1; threads <= 64; threads *= 4) {
            weft_pool *pool = make(threads, wakes[k], 0);
            for (long round = 0; round < scaled(20); round++) {
                pairs p = {.resumed = 0};
                pair_arg args[64];
                for (int i = 0; i < 64; i++) {
                    args[i] = (pair_arg){&p, i};
                    /* Half the unblocks first: permits, half blocks first. */
                    if (i % 2)
                        CHECK_EQ(weft_spawn(pool, pair_unblock, &args[i]), 0);
                    CHECK_EQ(weft_spawn(pool, pair_block, &args[i]), 0);
                    if (!(i % 2))
                        CHECK_EQ(weft_spawn(pool, pair_unblock, &args[i]), 0);
                }
                wait_for(&p.resumed, 64);
                usleep(1000);
                CHECK_EQ(atomic_load(&p.resumed), 64);
            }
            CHECK_EQ(weft_pool_destroy(pool), 0);
        }
}

/* ---- Blocking regions ---------------------------------------------------- */

/* A job blocks (a pipe read) until the pool has run `others` more jobs. */
typedef struct piped {
    int fd[2];
    _Atomic int ran;
    int others;
} piped;

static void read_pipe(void *arg) {
    piped *p = arg;
    char c;
    CHECK_EQ(weft_blocking_begin(), 0);
    CHECK_EQ(weft_blocking_begin(), 0); /* regions nest */
    weft_blocking_end();
    CHECK_EQ(read(p->fd[0], &c, 1), 1);
    weft_blocking_end();
    atomic_fetch_add(&p->ran, 1);
}

static void write_pipe_when_done(void *arg) {
    piped *p = arg;
    atomic_fetch_add(&p->ran, 1);
    if (atomic_load(&p->ran) == p->others) /* the last of them */
        CHECK_EQ(write(p->fd[1], "xx", 2), 2);
}

/* Both workers of pool (of two) block in a read that only the pool's other
 * jobs end: spares run them; the pool is destroyed after. */
static void both_workers_block(weft_pool *pool) {
    piped p = {.others = 20};
    CHECK_EQ(pipe(p.fd), 0);
    CHECK_EQ(weft_spawn(pool, read_pipe, &p), 0);
    CHECK_EQ(weft_spawn(pool, read_pipe, &p), 0);
    usleep(1000); /* most often both block before the others come */
    for (int i = 0; i < p.others; i++)
        CHECK_EQ(weft_spawn(pool, write_pipe_when_done, &p), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&p.ran), p.others + 2);
    close(p.fd[0]);
    close(p.fd[1]);
}

TEST(blocking_regions_scale_the_pool_up) {
    for (int k = 0; k < 2; k++)
        both_workers_block(make(2, wakes[k], 0));
}

/* With one spare only, two blocked jobs still let the rest run on it. */
TEST(one_spare_serves_two_blocked_jobs) {
    weft_pool *pool = make(2, WEFT_WAKE_TARGETED, 1);
    CHECK_EQ(weft_pool_slots(pool), 3u);
    both_workers_block(pool);
}

static _Atomic int spare_starts, spare_exits;

static void spare_started(unsigned index, void *user) {
    if (index > 0) /* not the worker */
        atomic_fetch_add(&spare_starts, 1);
    (void)user;
}

static void spare_exited(unsigned index, void *user) {
    if (index > 0)
        atomic_fetch_add(&spare_exits, 1);
    (void)user;
}

/* A spare parked for long exits, and a later block starts one again; with
 * spares asked for explicitly, each runs on_start and on_exit. */
TEST(a_spare_parked_for_long_exits) {
    weft__spare_idle_ns = 20000000; /* 20 ms */
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1,
                                                    .callers_wait = true,
                                                    .spares = 2,
                                                    .on_start = spare_started,
                                                    .on_exit = spare_exited}),
             0);
    for (int round = 1; round <= 3; round++) {
        blocker b = {.task = NULL};
        spawn_blocker(pool, block_once, &b);
        while (atomic_load(&spare_starts) < round) /* the block called a new spare */
            usleep(100);
        CHECK_EQ(weft_task_unblock(atomic_load(&b.task)), 0);
        while (atomic_load(&b.resumed) < 1)
            usleep(100);
        CHECK_EQ(atomic_load(&spare_starts), round);
        while (atomic_load(&spare_exits) < round) /* the spare leaves */
            usleep(1000);
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&spare_exits), 3);
    weft__spare_idle_ns = WEFT__SPARE_IDLE_NS;
}

/* A region that ends before its spare's thread ran, then another at once:
 * the first spare is not parked yet, so the second region starts a
 * second; the first then parks below it while it runs. Inside the second
 * region, for well over an idle period, the parked older spare must wait
 * an idle period at a time, not spin (it is not the newest, so it cannot
 * leave). */
typedef struct older_parked {
    _Atomic int two_spares;
    uint64_t waits;
    double seconds;
} older_parked;

static void older_spare_parks(void *arg) {
    older_parked *o = arg;
    CHECK_EQ(weft_blocking_begin(), 0);
    weft_blocking_end();
    CHECK_EQ(weft_blocking_begin(), 0);
    double t0 = check_now();
    uint64_t w0 = atomic_load(&weft__spare_park_waits);
    check_sleep_us(200000);
    o->waits = atomic_load(&weft__spare_park_waits) - w0;
    o->seconds = check_now() - t0;
    atomic_store(&o->two_spares, atomic_load(&spare_starts) == 2);
    weft_blocking_end();
}

TEST(an_older_parked_spare_does_not_spin) {
    weft__spare_idle_ns = 10000000; /* 10 ms */
    int seen = 0;
    for (int round = 0; round < 50 && seen < 3; round++) {
        atomic_store(&spare_starts, 0);
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1,
                                                        .callers_wait = true,
                                                        .spares = 2,
                                                        .on_start = spare_started}),
                 0);
        older_parked o = {0};
        weft_run(pool, older_spare_parks, &o);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        if (!atomic_load(&o.two_spares))
            continue; /* the first spare parked before the second region */
        seen++;
        /* Each parked spare waits at most once an idle period (plus the
         * wake of a call): a spinning one waits thousands of times. */
        CHECK(o.waits <= (uint64_t)(o.seconds / 0.010) * 2 + 8);
    }
    CHECK(seen > 0);
    atomic_store(&spare_starts, 0);
    weft__spare_idle_ns = WEFT__SPARE_IDLE_NS;
}

static void quick_regions(void *arg) {
    (void)arg;
    for (int i = 0; i < 50; i++) {
        CHECK_EQ(weft_blocking_begin(), 0);
        weft_blocking_end(); /* often before the spare it called has run at all */
    }
}

/* A spare released before its thread first ran still parks, and serves a
 * later block: with two spares, after many regions too short for them, a
 * blocked job still has one (a spare that exited instead would leave its
 * slot dead, and this would hang). */
TEST(a_spare_released_before_it_ran_serves_later) {
    weft_pool *pool = make(1, WEFT_WAKE_TARGETED, 2);
    for (int i = 0; i < 20; i++)
        weft_run(pool, quick_regions, NULL);
    run_others_while_blocked(pool, 10);
}

static void index_of_spare(void *arg) {
    atomic_store((_Atomic int *)arg, weft_thread_index());
}

static void block_and_report(void *arg) {
    piped *p = arg;
    weft_spawn(NULL, index_of_spare, &p->ran); /* on our deque: the spare takes it */
    CHECK_EQ(weft_blocking_begin(), 0);
    while (atomic_load(&p->ran) < 0)
        usleep(100);
    weft_blocking_end();
}

/* The spare's slot comes after the callers' (weft_thread_index). */
TEST(a_spare_has_the_slot_after_the_callers) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .contexts = 2, .callers = 3}), 0);
    CHECK_EQ(weft_pool_slots(pool), 1u + 2 + 3 + WEFT_SPARES_DEFAULT);
    piped p = {.ran = -1};
    CHECK_EQ(weft_spawn(pool, block_and_report, &p), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&p.ran), 6);
}

TEST(outside_a_job_there_is_nothing_to_block) {
    CHECK_EQ(weft_blocking_begin(), EINVAL);
    weft_blocking_end(); /* nothing to end: does nothing */
    CHECK(weft_task_self() == NULL);
    CHECK_EQ(weft_task_block(), EINVAL);
    CHECK_EQ(weft_task_unblock(NULL), EINVAL);
    CHECK_EQ(weft_task_events_increase(NULL, 1), EINVAL);
    CHECK_EQ(weft_task_events_decrease(NULL, 1), EINVAL);
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .spares = WEFT_THREADS_MAX}),
             EINVAL);
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .spares = WEFT_SPARES_NONE}), 0);
    CHECK_EQ(weft_pool_slots(pool), 1u + WEFT_CALLERS_DEFAULT);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void *run_block_once(void *arg) {
    weft_run((weft_pool *)((void **)arg)[0], block_once, ((void **)arg)[1]);
    return NULL;
}

/* A trace stopped while a spare runs the pool's work (a caller's job
 * blocked, the worker free to run the stop's broadcast): the spare's buffer
 * is its own thread's alone (spares are not in the trace), so the stop races
 * with nothing (TSan). */
TEST(a_trace_stops_while_a_spare_runs) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .callers = 1}), 0);
    char path[] = "/tmp/weft_blocking_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(weft_trace_start(pool, path), 0);
    blocker b = {.task = NULL};
    void *args[2] = {pool, &b};
    pthread_t caller;
    CHECK_EQ(pthread_create(&caller, NULL, run_block_once, args), 0);
    while (!atomic_load(&b.task))
        usleep(100);
    _Atomic int ran = 0;
    for (int i = 0; i < 20; i++)
        CHECK_EQ(weft_spawn(pool, count, &ran), 0);
    wait_for(&ran, 10);
    CHECK_EQ(weft_trace_stop(pool), 0); /* the spare is still called */
    CHECK_EQ(weft_task_unblock(atomic_load(&b.task)), 0);
    pthread_join(caller, NULL);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&ran), 20);
    CHECK_EQ(atomic_load(&b.resumed), 1);
    unlink(path);
}

/* ---- Callers and contexts ------------------------------------------------ */

static void unblock_it(void *arg) {
    blocker *s = arg;
    weft_task *t;
    CHECK_EQ(weft_blocking_begin(), 0); /* a job that waits for another */
    while (!(t = atomic_load(&s->task)))
        usleep(100);
    weft_blocking_end();
    atomic_fetch_add(&s->resumed, 1);
    CHECK_EQ(weft_task_unblock(t), 0);
}

/* Forks a job that resumes it, then blocks: the forked job is private to
 * the blocked thread until its region shares it. */
static void fork_then_block(void *arg) {
    blocker *s = arg;
    atomic_store(&s->task, weft_task_self());
    CHECK_EQ(weft_spawn(NULL, unblock_it, s), 0);
    CHECK_EQ(weft_task_block(), 0);
    CHECK_EQ(atomic_load(&s->resumed), 1);
}

static void b_unblocks_a(void *arg) {
    unblock_it(arg);
}

static void a_blocks(void *arg) {
    blocker *s = arg;
    atomic_store(&s->task, weft_task_self());
    CHECK_EQ(weft_task_block(), 0);
}

static void join_block(void *arg) {
    blocker *s = arg;
    weft_join(a_blocks, s, b_unblocks_a, s);
    CHECK_EQ(atomic_load(&s->resumed), 1);
}

/* A caller's job (weft_run from outside, in a caller slot) whose pool's one
 * worker spins: what it leaves runnable runs on a spare. */
TEST(a_callers_blocked_job_is_served_by_a_spare) {
    for (int k = 0; k < 2; k++) {
        weft_pool *pool;
        CHECK_EQ(
            weft_pool_create(&pool, &(weft_config){.threads = 1, .callers = 1, .wake = wakes[k]}),
            0);
        spinners_start(pool, 1);
        blocker s = {.task = NULL};
        weft_run(pool, fork_then_block, &s);
        blocker j = {.task = NULL};
        weft_run(pool, join_block, &j); /* A blocks on what its own B does */
        spinners_stop_all();
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

TEST(a_contexts_blocked_job_is_served_by_a_spare) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .contexts = 1}), 0);
    spinners_start(pool, 1);
    weft_context *ctx;
    CHECK_EQ(weft_context_acquire(pool, &ctx), 0);
    CHECK_EQ(weft_blocking_begin(), EINVAL); /* the holder's own code is no job */
    blocker s = {.task = NULL};
    weft_run(pool, fork_then_block, &s);
    weft_context_release(ctx);
    spinners_stop_all();
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- The CPU budget ------------------------------------------------------ */

/* A budget of one slot: the blocked job gives it back, the spare takes it. */
TEST(a_blocked_job_gives_its_budget_slot_to_the_spare) {
    CHECK_EQ(weft_set_concurrency(1), 0);
    weft_pool *other = make(1, WEFT_WAKE_TARGETED, 0); /* two pools: the cap binds */
    run_others_while_blocked(make(1, WEFT_WAKE_TARGETED, 0), 20);
    CHECK_EQ(weft_pool_destroy(other), 0);
    CHECK_EQ(weft_set_concurrency(0), 0);
}

/* ---- Events --------------------------------------------------------------- */

typedef struct evented {
    _Atomic(weft_task *) task;
    _Atomic int returned;
    _Atomic int completed_after;
} evented;

static void *complete_later(void *arg) {
    evented *e = arg;
    weft_task *t;
    while (!(t = atomic_load(&e->task)))
        usleep(100);
    while (!atomic_load(&e->returned))
        usleep(100);
    usleep(2000); /* the run would have returned by now, were it not held */
    atomic_store(&e->completed_after, 1);
    CHECK_EQ(weft_task_events_decrease(t, 1), 0);
    CHECK_EQ(weft_task_events_decrease(t, 1), 0);
    return NULL;
}

static void with_events(void *arg) {
    evented *e = arg;
    weft_task *t = weft_task_self();
    CHECK_EQ(weft_task_events_increase(t, 2), 0);
    CHECK_EQ(weft_task_events_decrease(t, 3), EINVAL); /* more than outstanding */
    CHECK_EQ(weft_task_events_increase(t, UINT32_MAX), EOVERFLOW);
    CHECK_EQ(weft_task_events_increase(t, 0), 0);
    atomic_store(&e->task, t);
    atomic_store(&e->returned, 1);
}

/* weft_run returns only once the job's events are done, on a worker (a
 * waiting caller) and in a caller slot. */
TEST(events_hold_the_completion_of_a_job) {
    for (int callers_wait = 0; callers_wait < 2; callers_wait++) {
        weft_pool *pool;
        CHECK_EQ(
            weft_pool_create(&pool, &(weft_config){.threads = 1, .callers_wait = callers_wait}), 0);
        evented e = {.task = NULL};
        pthread_t th;
        CHECK_EQ(pthread_create(&th, NULL, complete_later, &e), 0);
        weft_run(pool, with_events, &e);
        CHECK_EQ(atomic_load(&e.completed_after), 1);
        pthread_join(th, NULL);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

static void join_with_events(void *arg) {
    weft_join(nothing, NULL, with_events, arg);
}

static void scope_with_events(weft_scope *scope, void *arg) {
    CHECK_EQ(weft_scope_spawn(scope, with_events, arg), 0);
}

/* A join's B and a scope's job: what waits for them waits for the events. */
TEST(events_hold_a_scope_and_a_join) {
    weft_pool *pool = make(2, WEFT_WAKE_TARGETED, 0);
    for (int kind = 0; kind < 2; kind++) {
        evented e = {.task = NULL};
        pthread_t th;
        CHECK_EQ(pthread_create(&th, NULL, complete_later, &e), 0);
        if (kind == 0)
            weft_run(pool, join_with_events, &e);
        else
            weft_scope_run(pool, scope_with_events, &e);
        CHECK_EQ(atomic_load(&e.completed_after), 1);
        pthread_join(th, NULL);
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- fork() --------------------------------------------------------------- */

static void fork_child_blocks(void) {
    /* The parent's pool, its spares and its blocked job do not exist here:
     * a pool of the child's own scales up as the parent's does. */
    run_others_while_blocked(make(1, WEFT_WAKE_TARGETED, 0), 10);
}

/* A process forks while a job of its pool is blocked and served by a spare:
 * the child's own pool blocks and scales up; the parent's job resumes. */
TEST(fork_while_a_job_blocks) {
    weft_pool *pool = make(1, WEFT_WAKE_TARGETED, 0);
    blocker b = {.task = NULL};
    spawn_blocker(pool, block_once, &b);
    wait_others_blocked(); /* ASan: no thread inside malloc at the fork (child.h) */
    char err[512];
    CHECK(child_exited_ok(child_run(fork_child_blocks, err, sizeof err)));
    CHECK_EQ(weft_task_unblock(atomic_load(&b.task)), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&b.resumed), 1);
}
