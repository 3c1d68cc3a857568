/* SPDX-License-Identifier: MIT */
/* The CPU budget (weft_set_concurrency, budget.c): how many workers of all
 * pools run at once, and that nothing waits for a slot forever: a raised
 * budget, a blocked wait, a pool's destruction, an exempt pool and a fork
 * child each get their work done while every slot is held. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "asleep.h"
#include "idle/budget.h"
#include "check.h"
#include "child.h"
#include "jobs.h"
#include "os/cpus.h"
#include "pools.h"
#include "weft.h"

CHILDREN_START_THREADS(); /* a fork child here starts a pool */

/* ---- At most `budget` jobs of any pool at once ---------------------------- */

static _Atomic int running, most;

/* Counts the jobs running on workers (an outside caller that runs a piece
 * itself does not count against the budget) and the most seen at once. */
static void enter(void) {
    int now = atomic_fetch_add(&running, 1) + 1, seen = atomic_load(&most);
    while (now > seen && !atomic_compare_exchange_weak(&most, &seen, now)) {
    }
}

/* Does this job run on a worker thread, which holds a slot of the budget?
 * Not on a driver, which takes part in its own loop (a caller slot). */
static bool on_a_worker(void) {
    int index = weft_thread_index();
    return index >= 0 && index < (int)weft_pool_threads(NULL);
}

static void count_piece(size_t begin, size_t end, void *arg) {
    bool worker = on_a_worker();
    if (worker)
        enter();
    _Atomic long *sum = arg;
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add_explicit(sum, (long)i, memory_order_relaxed);
    if (worker)
        atomic_fetch_sub(&running, 1);
}

/* jobs.h's fib_job, counted while it runs on a worker but not while it
 * joins: a join's wait may hand the slot on. */
static void counted_fib(void *arg) {
    fib *f = arg;
    bool worker = on_a_worker();
    if (worker)
        enter();
    if (f->n < 2) {
        f->r = f->n;
    } else {
        fib a = {f->n - 1, 0}, b = {f->n - 2, 0};
        if (worker)
            atomic_fetch_sub(&running, 1);
        weft_join(counted_fib, &a, counted_fib, &b);
        if (worker)
            enter();
        f->r = a.r + b.r;
    }
    if (worker)
        atomic_fetch_sub(&running, 1);
}

#define DRIVERS 3
#define LOOP_N  20000

static void *drive(void *arg) {
    weft_pool *pool = arg;
    for (long round = 0; round < scaled(40); round++) {
        _Atomic long sum = 0;
        weft_for(pool, 0, LOOP_N, 16, count_piece, &sum);
        CHECK_EQ(atomic_load(&sum), (long)LOOP_N * (LOOP_N - 1) / 2);
        fib f = {16, 0};
        weft_run(pool, counted_fib, &f);
        CHECK_EQ(f.r, 987);
    }
    return NULL;
}

/* Three pools of four, each driven by its own thread: with a budget of one,
 * one job of theirs runs at a time, and all their work gets done. */
TEST(a_budget_of_one_runs_one_job_at_a_time) {
    CHECK_EQ(weft_set_concurrency(1), 0);
    CHECK_EQ(weft_concurrency(), 1);
    weft_pool *pools[DRIVERS];
    pthread_t t[DRIVERS];
    for (int i = 0; i < DRIVERS; i++) {
        /* Callers that only wait: every job runs on a worker, so some job
         * runs (the count is of workers' jobs; a caller that takes part may
         * do a whole call itself while the workers queue for the slot). */
        pools[i] = make_waiting_pool(4);
        CHECK_EQ(pthread_create(&t[i], NULL, drive, pools[i]), 0);
    }
    for (int i = 0; i < DRIVERS; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
        CHECK_EQ(weft_pool_destroy(pools[i]), 0);
    }
    CHECK_EQ(atomic_load(&most), 1);
}

/* The default budget binds once two pools draw from it. */
TEST(the_default_budget_binds_between_pools) {
    unsigned n = weft_concurrency() + 2;
    weft_pool *pools[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pools[i] = make_pool(n);
    for (int i = 0; i < 2; i++) /* the first pool's workers took slots unbound */
        wait_all_in_a_sleep(pools[i]);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, drive, pools[i]), 0);
    for (int i = 0; i < 2; i++) /* both pools stay: with one left, the cap would not bind */
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_pool_destroy(pools[i]), 0);
    CHECK(atomic_load(&most) <= (int)weft_concurrency());
}

/* ...and not on a pool alone: its owner may want more workers running than
 * there are CPUs (here, jobs that wait for each other). */
static _Atomic unsigned arrived;

static void meet(void *arg) {
    unsigned n = *(unsigned *)arg;
    atomic_fetch_add(&arrived, 1);
    while (atomic_load(&arrived) < n)
        check_sleep_us(100);
}

TEST(a_pool_alone_runs_all_its_workers) {
    unsigned n = weft_concurrency() + 2;
    weft_pool *pool = make_pool(n);
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(weft_spawn(pool, meet, &n), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* returns once every job met the others */
    CHECK_EQ(atomic_load(&arrived), n);
}

/* ---- Nothing waits for a slot forever ------------------------------------- */

static _Atomic bool holding, release;

/* Holds a slot, as a job blocked outside weft would, until released. */
static void hold(void *arg) {
    (void)arg;
    atomic_store(&holding, true);
    while (!atomic_load(&release))
        check_sleep_us(100);
}

static void do_release(void *arg) {
    (void)arg;
    atomic_store(&release, true);
}

/* A budget of one, its slot held by a job of a pool of two; returns the pool. */
static weft_pool *hold_the_only_slot(void) {
    CHECK_EQ(weft_set_concurrency(1), 0);
    weft_pool *holder = make_pool(2);
    CHECK_EQ(weft_spawn(holder, hold, NULL), 0);
    while (!atomic_load(&holding))
        check_sleep_us(100);
    return holder;
}

/* A raised budget wakes the workers waiting for a slot. */
TEST(raising_the_budget_wakes_waiting_workers) {
    weft_pool *holder = hold_the_only_slot();
    weft_pool *other = make_pool(2);
    CHECK_EQ(weft_spawn(other, do_release, NULL), 0);
    check_sleep_us(20000);
    CHECK(!atomic_load(&release)); /* no slot for other's workers */
    CHECK_EQ(weft_set_concurrency(2), 0);
    CHECK_EQ(weft_pool_destroy(other), 0); /* waits for do_release */
    CHECK(atomic_load(&release));
    CHECK_EQ(weft_pool_destroy(holder), 0);
}

/* A job that waits for another pool's work gives its slot to that pool. */
static void run_in_other(void *arg) {
    weft_run(arg, do_release, NULL);
}

TEST(a_blocked_wait_hands_its_slot_on) {
    CHECK_EQ(weft_set_concurrency(1), 0);
    weft_pool *a = make_pool(2), *b = make_pool(2);
    for (int i = 0; i < (int)scaled(100); i++) {
        atomic_store(&release, false);
        weft_run(a, run_in_other, b);
        CHECK(atomic_load(&release));
    }
    CHECK_EQ(weft_pool_destroy(a), 0);
    CHECK_EQ(weft_pool_destroy(b), 0);
}

/* Destroying a pool whose workers wait for a slot does not wait for one. */
TEST(destroy_does_not_wait_for_a_slot) {
    weft_pool *holder = hold_the_only_slot();
    for (int i = 0; i < 3; i++) {
        weft_pool *other = make_pool(4);
        check_sleep_us(1000); /* its workers wait for the slot by now, or soon */
        CHECK_EQ(weft_pool_destroy(other), 0);
    }
    atomic_store(&release, true);
    CHECK_EQ(weft_pool_destroy(holder), 0);
}

/* A pool made outside the budget runs while every slot is held. */
TEST(an_exempt_pool_runs_beside_a_full_budget) {
    weft_pool *holder = hold_the_only_slot();
    weft_pool *exempt;
    CHECK_EQ(weft_pool_create(&exempt, &(weft_config){.threads = 2, .outside_budget = true}), 0);
    weft_run(exempt, do_release, NULL);
    CHECK(atomic_load(&release));
    CHECK_EQ(weft_pool_destroy(exempt), 0);
    CHECK_EQ(weft_pool_destroy(holder), 0);
}

/* A child forked while the parent's workers hold every slot starts with all
 * of them free (their holders did not survive the fork). */
static void child_runs_a_pool(void) {
    CHECK_EQ(weft_concurrency(), 1); /* the parent's budget */
    weft_pool *pool = make_pool(2);
    atomic_store(&release, false);
    weft_run(pool, do_release, NULL);
    CHECK(atomic_load(&release));
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(a_fork_child_starts_with_every_slot_free) {
    weft_pool *holder = hold_the_only_slot();
    char err[256];
    int status = child_run(child_runs_a_pool, err, sizeof err);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    atomic_store(&release, true);
    CHECK_EQ(weft_pool_destroy(holder), 0);
}

/* A job that forks while a worker of its pool holds default_lock (it
 * creates the default pool, slowly) and waits, urgently, for the only slot,
 * which the forking job holds: fork_prepare waits for that lock, so the
 * forking job gives its slot back meanwhile (budget_lock), or the two wait
 * for each other. */
static _Atomic bool creator_ready, creator_go, forked;

static void create_the_default_pool(void *arg) {
    (void)arg;
    atomic_store(&creator_ready, true);
    while (!atomic_load(&creator_go))
        check_sleep_us(100);
    check_sleep_us(2000); /* the main thread is creating it: we wait for the lock */
    CHECK(weft_pool_default() != NULL);
}

static void fork_when_a_creator_waits(void *arg) {
    (void)arg;
    double deadline = check_now() + 10;
    while (weft__budget_waiting(true) == 0 && check_now() < deadline)
        check_sleep_us(100); /* until the creator queues for our slot */
    /* Whichever thread creates the default pool, the creator queues for our
     * slot while it holds default_lock: else the case is not the one tested. */
    CHECK(weft__budget_waiting(true) > 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0)
        _exit(0);
    int status;
    CHECK_EQ(waitpid(child, &status, 0), child);
    atomic_store(&forked, true);
}

TEST(fork_gives_the_slot_back_while_the_default_pool_starts) {
    setenv("WEFT_NUM_THREADS", "300", 1); /* a default pool slow to start */
    CHECK_EQ(weft_set_concurrency(1), 0);
    weft_pool *pool = make_pool(2);
    CHECK_EQ(weft_spawn(pool, create_the_default_pool, NULL), 0);
    while (!atomic_load(&creator_ready))
        check_sleep_us(100);
    CHECK_EQ(weft_spawn(pool, fork_when_a_creator_waits, NULL), 0);
    check_sleep_us(1000);
    atomic_store(&creator_go, true);
    CHECK(weft_pool_default() != NULL);
    while (!atomic_load(&forked))
        check_sleep_us(1000);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A job that destroys another pool blocks until its workers have exited,
 * and their on_exit may wait for work of the job's own pool: it gives its
 * slot back while it waits. */
static weft_pool *exit_into;
static _Atomic int exit_calls;

static void count_exit_call(void *arg) {
    (void)arg;
    atomic_fetch_add(&exit_calls, 1);
}

static void call_back_on_exit(unsigned worker, void *user) {
    (void)worker;
    (void)user;
    weft_run(exit_into, count_exit_call, NULL); /* weft.h: allowed in on_exit */
}

static void destroy_pool(void *arg) {
    CHECK_EQ(weft_pool_destroy(arg), 0);
}

TEST(destroying_a_pool_from_a_job_gives_the_slot_back) {
    CHECK_EQ(weft_set_concurrency(1), 0);
    exit_into = make_waiting_pool(2); /* the destroy runs on its worker */
    weft_pool *other;
    CHECK_EQ(weft_pool_create(&other, &(weft_config){.threads = 2, .on_exit = call_back_on_exit}),
             0);
    weft_run(exit_into, destroy_pool, other);
    CHECK_EQ(atomic_load(&exit_calls), 2);
    CHECK_EQ(weft_pool_destroy(exit_into), 0);
}

/* ---- Sharing the budget -------------------------------------------------- */

/* A pool that always has a job to run: each job of the stream queues the
 * next on its worker's deque before it ends, until stream_stop. */
static _Atomic bool stream_stop;

typedef struct stream_of {
    weft_pool *pool;
    _Atomic int streamed; /* jobs run so far */
} stream_of;

static void stream(void *arg) {
    stream_of *st = arg;
    atomic_fetch_add(&st->streamed, 1);
    if (!atomic_load(&stream_stop))
        CHECK_EQ(weft_spawn(st->pool, stream, st), 0); /* the next, queued before we end */
    check_sleep_us(50);
}

/* Start a stream on a new pool of `threads` workers. */
static void stream_start(stream_of *st, unsigned threads) {
    st->pool = make_pool(threads);
    CHECK_EQ(weft_spawn(st->pool, stream, st), 0);
}

/* Until every stream of st[0..n) ran `jobs` jobs (a deadline: a stream that
 * never gets a slot fails here). */
static void streams_ran(stream_of *st, int n, int jobs) {
    double deadline = check_now() + 20;
    for (int i = 0; i < n; i++)
        while (atomic_load(&st[i].streamed) < jobs) {
            CHECK(check_now() < deadline);
            check_sleep_us(100);
        }
}

/* A busy pool hands its slot over between jobs once it held it for a slice:
 * the other pool's work gets done. */
TEST(a_busy_pool_shares_the_budget) {
    CHECK_EQ(weft_set_concurrency(1), 0);
    static stream_of busy;
    stream_start(&busy, 2);
    weft_pool *other = make_pool(2);
    streams_ran(&busy, 1, 10); /* the stream holds the slot */
    for (int i = 0; i < 5; i++) {
        atomic_store(&release, false);
        weft_run(other, do_release, NULL);
        CHECK(atomic_load(&release));
    }
    atomic_store(&stream_stop, true);
    CHECK_EQ(weft_pool_destroy(busy.pool), 0);
    CHECK_EQ(weft_pool_destroy(other), 0);
}

/* Two pools that never run out of jobs hand the one slot to each other, and a
 * third pool's worker, queued behind them, still gets it: a holder that hands
 * its slot over queues at the end, behind whoever waited before it. (Queued
 * at the front, the two holders would pass the slot back and forth for as
 * long as their streams last, and the third pool's job would never run.) */
TEST(a_pool_queued_behind_two_busy_pools_gets_the_slot) {
    CHECK_EQ(weft_set_concurrency(1), 0);
    static stream_of pair[2];
    weft_pool *third = make_pool(1);
    for (int i = 0; i < 2; i++)
        stream_start(&pair[i], 1);
    streams_ran(pair, 2, 10); /* the slot went from one pool to the other */
    CHECK_EQ(weft_spawn(third, do_release, NULL), 0);
    double deadline = check_now() + 20; /* a few slices; 20 s: a starved queue */
    while (!atomic_load(&release) && check_now() < deadline)
        check_sleep_us(1000);
    bool ran = atomic_load(&release);
    atomic_store(&stream_stop, true); /* before the check: the pools must go */
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_pool_destroy(pair[i].pool), 0);
    CHECK_EQ(weft_pool_destroy(third), 0);
    CHECK(ran);
}

/* A worker whose join is done holds its continuation, which no other thread
 * can run: between two jobs of the join's wait it keeps its slot, even
 * after a slice, while another pool's worker queues. Two slots: W (pool
 * `mine`) forks, W2 steals the second half and queues a long job, which W
 * takes in its wait; x (pool B) and y (pool C) queue for a slot meanwhile.
 * W2's slot goes to x once its half is done; y may start only after W's
 * continuation, unless W handed its slot to y and queued behind it. */
static _Atomic bool half_stolen, half_may_end, long_job_running, x_started, y_started, continued,
    y_saw_continued;

/* Runs on W in its join's wait: until x holds W2's slot (so W2's half, and
 * with it the join, is done) and longer than the budget's slice. */
static void long_job(void *arg) {
    (void)arg;
    double slice_over = check_now() + 1.2e-9 * (double)WEFT__BUDGET_SLICE_NS;
    atomic_store(&long_job_running, true);
    while (!atomic_load(&x_started) || check_now() < slice_over)
        check_sleep_us(100);
}

static void stolen_half(void *arg) {
    CHECK_EQ(weft_spawn(arg, long_job, NULL), 0); /* on W2's deque: W's wait takes it */
    atomic_store(&half_stolen, true);
    while (!atomic_load(&half_may_end))
        check_sleep_us(100);
}

static void first_half(void *arg) {
    (void)arg;
    while (!atomic_load(&half_stolen))
        check_sleep_us(100);
}

static void fork_and_continue(void *arg) {
    weft_join(first_half, NULL, stolen_half, arg);
    atomic_store(&continued, true);
}

/* Holds its slot until W chose between its continuation and y. */
static void x_job(void *arg) {
    (void)arg;
    atomic_store(&x_started, true);
    while (!atomic_load(&continued) && !atomic_load(&y_started))
        check_sleep_us(100);
}

static void y_job(void *arg) {
    (void)arg;
    atomic_store(&y_saw_continued, atomic_load(&continued));
    atomic_store(&y_started, true);
}

static void queued_for_a_slot(unsigned n) {
    double deadline = check_now() + 20;
    while (weft__budget_waiting(false) < n) {
        CHECK(check_now() < deadline);
        check_sleep_us(100);
    }
}

TEST(a_worker_whose_join_is_done_keeps_its_slot) {
    CHECK_EQ(weft_set_concurrency(2), 0);
    weft_pool *mine = make_pool(2), *b = make_pool(1), *c = make_pool(1);
    /* Every slot given back: no worker still starting may queue ahead of x. */
    wait_all_in_a_sleep(mine);
    wait_all_in_a_sleep(b);
    wait_all_in_a_sleep(c);
    CHECK_EQ(weft_spawn(mine, fork_and_continue, mine), 0);
    while (!atomic_load(&long_job_running)) /* W and W2 hold both slots */
        check_sleep_us(100);
    CHECK_EQ(weft_spawn(b, x_job, NULL), 0);
    queued_for_a_slot(1);
    CHECK_EQ(weft_spawn(c, y_job, NULL), 0);
    queued_for_a_slot(2);
    atomic_store(&half_may_end, true);
    double deadline = check_now() + 20;
    while (!atomic_load(&y_started) || !atomic_load(&continued)) {
        CHECK(check_now() < deadline);
        check_sleep_us(100);
    }
    CHECK(atomic_load(&y_saw_continued));
    CHECK_EQ(weft_pool_destroy(mine), 0);
    CHECK_EQ(weft_pool_destroy(b), 0);
    CHECK_EQ(weft_pool_destroy(c), 0);
}

/* A budget lowered under pools whose workers never run out of work binds
 * all the same: none of them sleeps, so only a holder over the cap that
 * gives its slot back to the count, instead of handing it on between jobs
 * (budget.c, hand_over), brings the slots held down to the cap. */
static _Atomic bool chains_stop;
static _Atomic int chained, chain_running, chain_most;

static void chain(void *arg) {
    weft_pool *pool = arg;
    int now = atomic_fetch_add(&chain_running, 1) + 1, seen = atomic_load(&chain_most);
    while (now > seen && !atomic_compare_exchange_weak(&chain_most, &seen, now)) {
    }
    atomic_fetch_add(&chained, 1);
    if (!atomic_load(&chains_stop)) /* the next, on this worker's deque */
        CHECK_EQ(weft_spawn(pool, chain, pool), 0);
    check_sleep_us(50);
    atomic_fetch_sub(&chain_running, 1);
}

TEST(a_lowered_budget_binds_pools_that_never_sleep) {
    CHECK_EQ(weft_set_concurrency(2), 0);
    weft_pool *pools[2] = {make_pool(2), make_pool(2)};
    for (int p = 0; p < 2; p++)
        for (int c = 0; c < 2; c++) /* a chain for each worker */
            CHECK_EQ(weft_spawn(pools[p], chain, pools[p]), 0);
    while (atomic_load(&chained) < 100)
        check_sleep_us(100);
    CHECK_EQ(weft_set_concurrency(1), 0);
    double deadline = check_now() + 60;
    while (weft__budget_held() > 1) {
        CHECK(check_now() < deadline);
        check_sleep_us(1000);
    }
    atomic_store(&chain_most, 0); /* from here on, one at a time */
    int from = atomic_load(&chained);
    while (atomic_load(&chained) < from + scaled(400)) {
        CHECK(check_now() < deadline);
        check_sleep_us(1000);
    }
    CHECK_EQ(atomic_load(&chain_most), 1);
    atomic_store(&chains_stop, true);
    for (int p = 0; p < 2; p++)
        CHECK_EQ(weft_pool_destroy(pools[p]), 0);
}

/* A worker woken for high-priority work gets the next slot before the
 * workers that queued earlier for normal work. */
static _Atomic int order_n;
static char order[2];

static void record(void *arg) {
    order[atomic_fetch_add(&order_n, 1)] = *(const char *)arg;
}

TEST(high_priority_work_gets_the_next_slot) {
    CHECK_EQ(weft_set_concurrency(1), 0);
    weft_pool *high = make_pool(1);
    wait_all_in_a_sleep(high); /* asleep, its slot given back */
    weft_pool *holder = hold_the_only_slot();
    unsigned normal_waiting = weft__budget_waiting(false);
    weft_pool *normal = make_pool(1); /* its worker queues as it starts */
    /* At least one more: the holder's idle worker may queue too, at any
     * time, and a wait for exactly one more then never ends (a hang in
     * make test's TSan-POSIX stage). */
    double deadline = check_now() + 60;
    while (weft__budget_waiting(false) < normal_waiting + 1) {
        CHECK(check_now() < deadline);
        check_sleep_us(100);
    }
    CHECK_EQ(weft_spawn(normal, record, "n"), 0);
    CHECK_EQ(weft_spawn_priority(high, record, "h", WEFT_PRIORITY_HIGH), 0);
    while (weft__budget_waiting(true) != 1) { /* its worker woke, and queued first */
        CHECK(check_now() < deadline);
        check_sleep_us(100);
    }
    atomic_store(&release, true);
    CHECK_EQ(weft_pool_destroy(high), 0);
    CHECK_EQ(weft_pool_destroy(normal), 0);
    CHECK_EQ(atomic_load(&order_n), 2);
    CHECK_EQ(order[0], 'h');
    CHECK_EQ(order[1], 'n');
    CHECK_EQ(weft_pool_destroy(holder), 0);
}

/* A job that waits in weft while it holds an internal lock (the first call
 * of weft_pool_default, which starts the pool under a lock) and a job that
 * blocks on that lock meanwhile, holding the only slot, do not wait for each
 * other. */
static _Atomic int defaults_got;

TEST(an_internal_lock_does_not_hold_the_budget) {
    setenv("WEFT_NUM_THREADS", "8", 1); /* a default pool slow to start: a wide window */
    CHECK_EQ(weft_set_concurrency(1), 0);
    weft_pool *a = make_pool(1), *c = make_pool(1);
    CHECK_EQ(weft_spawn(a, use_the_default_pool, &defaults_got), 0);
    CHECK_EQ(weft_spawn(c, use_the_default_pool, &defaults_got), 0);
    CHECK_EQ(weft_pool_destroy(a), 0);
    CHECK_EQ(weft_pool_destroy(c), 0);
    CHECK_EQ(atomic_load(&defaults_got), 2);
}

/* ---- The setting ---------------------------------------------------------- */

TEST(the_budget_defaults_to_the_cpus_and_has_a_limit) {
    unsigned cpus = weft__cpus_available();
    CHECK_EQ(weft_concurrency(), cpus < WEFT_CONCURRENCY_MAX ? cpus : WEFT_CONCURRENCY_MAX);
    CHECK_EQ(weft_set_concurrency(WEFT_CONCURRENCY_MAX + 1), EINVAL);
    CHECK_EQ(weft_concurrency(), cpus); /* unchanged */
    CHECK_EQ(weft_set_concurrency(WEFT_CONCURRENCY_MAX), 0);
    CHECK_EQ(weft_concurrency(), WEFT_CONCURRENCY_MAX);
    CHECK_EQ(weft_set_concurrency(0), 0);
    CHECK_EQ(weft_concurrency(), cpus);
}

/* A budget lowered under the running workers holds once they have slept:
 * the pool's work still gets done. */
TEST(a_lowered_budget_still_runs_everything) {
    weft_pool *pool = make_pool(4);
    _Atomic long sum = 0;
    CHECK_EQ(weft_set_concurrency(WEFT_CONCURRENCY_MAX), 0);
    weft_for(pool, 0, LOOP_N, 16, count_piece, &sum);
    CHECK_EQ(weft_set_concurrency(1), 0);
    atomic_store(&sum, 0);
    weft_for(pool, 0, LOOP_N, 16, count_piece, &sum);
    CHECK_EQ(atomic_load(&sum), (long)LOOP_N * (LOOP_N - 1) / 2);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
