/* SPDX-License-Identifier: MIT */
/* Pools: their life (create, threads, hooks, destroy), every argument check
 * of the public API, and creation under failing allocations. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "pools.h"
#include "child.h"
#include "failmalloc.h"
#include "jobs.h"
#include "os/thread.h"
#include "os/process.h"
#include "weft.h"

TEST(version_matches_header) {
    char buf[32];
    snprintf(buf, sizeof buf, "%d.%d.%d", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR,
             WEFT_VERSION_PATCH);
    CHECK(strcmp(weft_version(), buf) == 0);
}

TEST(bad_input_gets_einval) {
    weft_pool *pool = NULL;
    CHECK_EQ(weft_pool_create(NULL, NULL), EINVAL);
    weft_config c = {.threads = WEFT_THREADS_MAX + 1};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    c = (weft_config){.stack_size = 4096};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    c = (weft_config){.leave = (weft_leave)7};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    c = (weft_config){.wake = (weft_wake)9};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    c = (weft_config){.threads = WEFT_THREADS_MAX, .contexts = 1};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    CHECK(pool == NULL); /* untouched on error */
    CHECK_EQ(weft_pool_destroy(NULL), EINVAL);
    CHECK_EQ(weft_pool_destroy(weft_pool_default()), EINVAL);
    CHECK_EQ(weft_spawn(NULL, NULL, NULL), EINVAL);
    CHECK_EQ(weft_scope_spawn(NULL, nothing, NULL), EINVAL);
}

/* A stack no thread can have (4 EiB: more than the address space, so the
 * mapping fails whatever the overcommit policy): EAGAIN, *pool untouched, and
 * what the pool had set up is freed (the ASan build checks for leaks). The
 * next pool works. */
TEST(thread_creation_failure_is_eagain) {
    weft_pool *pool = NULL;
    weft_config c = {.threads = 3, .stack_size = (size_t)1 << 62};
    CHECK_EQ(weft_pool_create(&pool, &c), EAGAIN);
    CHECK(pool == NULL);
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 3}), 0);
    fib f = {15, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, 610);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(thread_count_from_config_env_and_cpus) {
    weft_pool *pool = make_pool(3);
    CHECK_EQ(weft_pool_threads(pool), 3);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    setenv("WEFT_NUM_THREADS", "5", 1);
    CHECK_EQ(weft_pool_create(&pool, NULL), 0);
    CHECK_EQ(weft_pool_threads(pool), 5);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    const char *bad[] = {"abc", "0", "5x", "99999"};
    for (int i = 0; i < 4; i++) {
        setenv("WEFT_NUM_THREADS", bad[i], 1);
        CHECK_EQ(weft_pool_create(&pool, NULL), 0);
        cpu_set_t set;
        CHECK_EQ(sched_getaffinity(0, sizeof set, &set), 0);
        CHECK_EQ(weft_pool_threads(pool), CPU_COUNT(&set));
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
    unsetenv("WEFT_NUM_THREADS");
}

/* A bad WEFT_NUM_THREADS says so, once per process and value, on one line of
 * stderr naming the value it ignored and the count it uses instead. */
static const char *num_threads_value;

static void create_two_pools(void) {
    setenv("WEFT_NUM_THREADS", num_threads_value, 1);
    unsigned cpus = weft__os_cpu_count();
    for (int i = 0; i < 2; i++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, NULL), 0);
        CHECK_EQ(weft_pool_threads(pool), cpus < WEFT_THREADS_MAX ? cpus : WEFT_THREADS_MAX);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

TEST(bad_num_threads_is_reported_once) {
    const char *bad[] = {"abc", "-1", "0", "5000", "5x", "99999999999999999999999"};
    unsigned cpus = weft__os_cpu_count();
    for (int i = 0; i < 6; i++) {
        char err[1024], want[256];
        num_threads_value = bad[i];
        CHECK(child_exited_ok(child_run(create_two_pools, err, sizeof err)));
        snprintf(want, sizeof want,
                 "weft: ignoring WEFT_NUM_THREADS=\"%s\": not a number from 1 to %u; using %u\n",
                 bad[i], WEFT_THREADS_MAX, cpus < WEFT_THREADS_MAX ? cpus : WEFT_THREADS_MAX);
        CHECK(strcmp(err, want) == 0); /* one line for two pools */
    }
    char err[1024];
    num_threads_value = ""; /* set but empty: as unset, silently */
    CHECK(child_exited_ok(child_run(create_two_pools, err, sizeof err)));
    CHECK_EQ(strlen(err), 0);
}

enum { HOOK_THREADS = 4 };
static _Atomic int started[HOOK_THREADS], exited[HOOK_THREADS];
static _Atomic int names_ok, names_seen;

static void on_start(unsigned worker, void *user) {
    CHECK(user == &started);
    CHECK_EQ(weft_thread_index(), worker);
    atomic_fetch_add(&started[worker], 1);
}

static void on_exit_hook(unsigned worker, void *user) {
    CHECK(user == &started);
    atomic_fetch_add(&exited[worker], 1);
}

static void check_name(void *arg) {
    (void)arg;
    char name[16], want[16];
    pthread_getname_np(pthread_self(), name, sizeof name);
    snprintf(want, sizeof want, "tst-%d", weft_thread_index());
    atomic_fetch_add(&names_seen, 1);
    if (strcmp(name, want) == 0)
        atomic_fetch_add(&names_ok, 1);
}

TEST(hooks_names_and_indices) {
    CHECK_EQ(weft_thread_index(), -1);
    weft_config c = {.threads = HOOK_THREADS,
                     .name = "tst",
                     .on_start = on_start,
                     .on_exit = on_exit_hook,
                     .user = &started};
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &c), 0);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(weft_spawn(pool, check_name, NULL), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    for (int i = 0; i < HOOK_THREADS; i++) {
        CHECK_EQ(started[i], 1);
        CHECK_EQ(exited[i], 1);
    }
    CHECK_EQ(names_seen, 100);
    CHECK_EQ(names_ok, weft__os_names_threads() ? 100 : 0); /* the POSIX seam names none */
}

/* ---- the workers' scheduling policy ------------------------------------- */

#ifdef SCHED_BATCH
#define POLICY_THREADS 3

static void record_policy(unsigned index, void *arg) {
    atomic_int *seen = arg;
    atomic_store(&seen[index], sched_getscheduler(0));
}

static void choose_other(unsigned worker, void *user) {
    (void)worker;
    (void)user;
    CHECK_EQ(sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){.sched_priority = 0}), 0);
}

/* How many of pool's workers run under policy. */
static int workers_under(weft_pool *pool, int policy) {
    atomic_int seen[POLICY_THREADS];
    for (int i = 0; i < POLICY_THREADS; i++)
        atomic_init(&seen[i], -1);
    CHECK_EQ(weft_broadcast(pool, record_policy, seen), 0);
    int n = 0;
    for (int i = 0; i < POLICY_THREADS; i++)
        n += atomic_load(&seen[i]) == policy;
    return n;
}

/* Can the calling thread take policy? (A sandbox may refuse.) Tried on a
 * thread of its own, which ends with it. */
static void *try_policy(void *arg) {
    return (void *)(intptr_t)(sched_setscheduler(0, *(int *)arg,
                                                 &(struct sched_param){.sched_priority = 0}) == 0);
}

static bool policy_allowed(int policy) {
    pthread_t t;
    void *ok;
    CHECK_EQ(pthread_create(&t, NULL, try_policy, &policy), 0);
    CHECK_EQ(pthread_join(t, &ok), 0);
    return ok != NULL;
}

/* A pool made by a thread that chose SCHED_IDLE for itself (its workers
 * inherit the policy). */
static void *create_idle_pool(void *arg) {
    CHECK_EQ(sched_setscheduler(0, SCHED_IDLE, &(struct sched_param){.sched_priority = 0}), 0);
    weft_config c = {.threads = POLICY_THREADS};
    CHECK_EQ(weft_pool_create((weft_pool **)arg, &c), 0);
    return NULL;
}

/* Worker 0 of a pool creates a wake-all pool. */
static void create_wake_all_pool(unsigned index, void *arg) {
    weft_config c = {.threads = POLICY_THREADS, .wake = WEFT_WAKE_ALL};
    if (index == 0)
        CHECK_EQ(weft_pool_create((weft_pool **)arg, &c), 0);
}

TEST(workers_run_as_batch_work_unless_the_program_chose_a_policy) {
    int inherited = sched_getscheduler(0);
    weft_config c = {.threads = POLICY_THREADS};
    weft_pool *pool, *inner;
    CHECK_EQ(weft_pool_create(&pool, &c), 0);
    if (inherited != SCHED_OTHER) { /* the test runs under a policy of its own: it stays */
        CHECK_EQ(workers_under(pool, inherited), POLICY_THREADS);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        return;
    }
    bool batch = weft__os_has_batch_policy() && policy_allowed(SCHED_BATCH); /* POSIX seam: none */
    CHECK_EQ(workers_under(pool, batch ? SCHED_BATCH : SCHED_OTHER), POLICY_THREADS);
    /* A wake-all pool keeps what its creator has: the default from this
     * thread, the batch policy from a worker. */
    CHECK_EQ(weft_broadcast(pool, create_wake_all_pool, &inner), 0);
    CHECK_EQ(workers_under(inner, batch ? SCHED_BATCH : SCHED_OTHER), POLICY_THREADS);
    CHECK_EQ(weft_pool_destroy(inner), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    c.wake = WEFT_WAKE_ALL;
    CHECK_EQ(weft_pool_create(&pool, &c), 0);
    CHECK_EQ(workers_under(pool, SCHED_OTHER), POLICY_THREADS);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    c.wake = WEFT_WAKE_TARGETED;
    /* on_start runs after weft's choice: the program's wins. */
    c.on_start = choose_other;
    CHECK_EQ(weft_pool_create(&pool, &c), 0);
    CHECK_EQ(workers_under(pool, SCHED_OTHER), POLICY_THREADS);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    /* A policy other than the default, inherited from the creator, stays. */
    if (!policy_allowed(SCHED_IDLE))
        return;
    pthread_t creator;
    CHECK_EQ(pthread_create(&creator, NULL, create_idle_pool, &pool), 0);
    CHECK_EQ(pthread_join(creator, NULL), 0);
    CHECK_EQ(workers_under(pool, SCHED_IDLE), POLICY_THREADS);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
#endif

static void destroy_self(void *arg) {
    CHECK_EQ(weft_pool_destroy((weft_pool *)arg), EDEADLK);
}

TEST(destroy_from_own_job_is_edeadlk) {
    weft_pool *pool = make_pool(2);
    weft_run(pool, destroy_self, pool);
    CHECK_EQ(weft_spawn(pool, destroy_self, pool), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* the pool still worked */
}

/* ---- out of memory ----------------------------------------------------------- */

TEST(create_reports_enomem_without_leaks) {
    int successes = 0;
    for (long k = 0; k < 1000 && successes == 0; k++) {
        weft_pool *pool = NULL;
        failmalloc_arm(k);
        int err = weft_pool_create(&pool, &(weft_config){.threads = 3});
        failmalloc_disarm();
        if (err == 0) {
            successes++;
            CHECK_EQ(weft_pool_destroy(pool), 0);
        } else {
            CHECK_EQ(err, ENOMEM);
            CHECK(pool == NULL);
        }
    }
    CHECK_EQ(successes, 1); /* and ASan's leak check sees nothing left behind */
}
