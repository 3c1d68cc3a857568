/* SPDX-License-Identifier: MIT */
/* libweft-alpi (alpi/): every ALPI call through the shared library, as
 * TAMPI calls it: versions, information and features; a task's handle, its
 * block and unblock (from another thread, and an unblock before the block);
 * the timed wait; events that hold a join's and a spawned task's completion;
 * spawn; the CPU calls; attributes; and ALPI's code for each bad input.
 *
 * Like tests/test_blocking.c, the cases that need the pool to run other
 * work while a task waits use pools of one worker whose job waits, so that
 * without a spare thread they hang and the ctest timeout fails them. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pools.h"
#include "weft.h"
#include "weft/alpi.h"

static void count(void *arg) {
    atomic_fetch_add((_Atomic int *)arg, 1);
}

/* ---- Versions, information, features, error strings --------------------- */

TEST(versions) {
    int major = -1, minor = -1;
    CHECK_EQ(alpi_version_get(&major, &minor), ALPI_SUCCESS);
    CHECK_EQ(major, ALPI_VERSION_MAJOR);
    CHECK_EQ(minor, ALPI_VERSION_MINOR);
    CHECK_EQ(alpi_version_check(1, 0), ALPI_SUCCESS); /* TAMPI asks for 1.0 */
    CHECK_EQ(alpi_version_check(1, 2), ALPI_SUCCESS);
    CHECK_EQ(alpi_version_check(1, 3), ALPI_ERR_VERSION);
    CHECK_EQ(alpi_version_check(2, 0), ALPI_ERR_VERSION);
    CHECK_EQ(alpi_version_check(0, 9), ALPI_ERR_VERSION);
    CHECK_EQ(alpi_version_check(1, -1), ALPI_ERR_VERSION);
    CHECK_EQ(alpi_version_get(NULL, &minor), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_version_get(&major, NULL), ALPI_ERR_PARAMETER);
}

TEST(information) {
    char buf[64];
    int length = -1;
    CHECK_EQ(alpi_info_get(ALPI_INFO_RUNTIME_NAME, buf, sizeof buf, &length), ALPI_SUCCESS);
    CHECK(strcmp(buf, "weft") == 0);
    CHECK_EQ(length, 4);
    CHECK_EQ(alpi_info_get(ALPI_INFO_RUNTIME_VENDOR, buf, sizeof buf, NULL), ALPI_SUCCESS);
    CHECK(strlen(buf) > 0);
    CHECK_EQ(alpi_info_get(ALPI_INFO_VERSION, buf, sizeof buf, &length), ALPI_SUCCESS);
    CHECK(strcmp(buf, weft_version()) == 0);
    CHECK_EQ(length, (long long)strlen(weft_version()));
    /* Cut to the buffer, NUL included. */
    CHECK_EQ(alpi_info_get(ALPI_INFO_RUNTIME_NAME, buf, 3, &length), ALPI_SUCCESS);
    CHECK(strcmp(buf, "we") == 0);
    CHECK_EQ(length, 2);
    CHECK_EQ(alpi_info_get(ALPI_INFO_RUNTIME_NAME, buf, 1, &length), ALPI_SUCCESS);
    CHECK_EQ(buf[0], '\0');
    CHECK_EQ(length, 0);
    CHECK_EQ(alpi_info_get(ALPI_INFO_RUNTIME_NAME, NULL, 8, &length), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_info_get(ALPI_INFO_RUNTIME_NAME, buf, 0, &length), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_info_get((alpi_info_t)99, buf, sizeof buf, &length), ALPI_ERR_PARAMETER);
}

TEST(features) {
    CHECK_EQ(alpi_feature_check(0), ALPI_SUCCESS);
    CHECK_EQ(
        alpi_feature_check(ALPI_FEATURE_BLOCKING | ALPI_FEATURE_EVENTS | ALPI_FEATURE_RESOURCES),
        ALPI_SUCCESS);
    CHECK_EQ(alpi_feature_check(ALPI_FEATURE_SUSPEND), ALPI_ERR_FEATURE_UNKNOWN);
    CHECK_EQ(alpi_feature_check(ALPI_FEATURE_BLOCKING | ALPI_FEATURE_SUSPEND),
             ALPI_ERR_FEATURE_UNKNOWN);
    CHECK_EQ(alpi_feature_check(1 << 20), ALPI_ERR_FEATURE_UNKNOWN);
    /* Suspension is the feature not provided: both calls say so. */
    CHECK_EQ(alpi_task_suspend_mode_set(NULL, ALPI_SUSPEND_SUBMIT, 0), ALPI_ERR_FEATURE_UNKNOWN);
    CHECK_EQ(alpi_task_suspend(NULL), ALPI_ERR_FEATURE_UNKNOWN);
}

TEST(error_strings) {
    for (int e = ALPI_SUCCESS; e <= ALPI_ERR_MAX; e++) {
        const char *s = alpi_error_string((alpi_error_t)e);
        CHECK(s != NULL && s[0] != '\0');
        for (int f = ALPI_SUCCESS; f < e; f++)
            CHECK(strcmp(s, alpi_error_string((alpi_error_t)f)) != 0);
    }
    CHECK(alpi_error_string((alpi_error_t)-1) != NULL);
}

/* ---- Task handles, block and unblock --------------------------------------- */

typedef struct blocker {
    _Atomic int resumed; /* first: {0} initialises it, and the rest with it */
    _Atomic(struct alpi_task *) task;
} blocker;

static void block_once(void *arg) {
    blocker *b = arg;
    struct alpi_task *t = NULL;
    CHECK_EQ(alpi_task_self(&t), ALPI_SUCCESS);
    CHECK(t != NULL);
    CHECK(t == (struct alpi_task *)weft_task_self());
    atomic_store(&b->task, t);
    CHECK_EQ(alpi_task_block(t), ALPI_SUCCESS);
    atomic_fetch_add(&b->resumed, 1);
}

/* The pool's only worker runs a task that blocks; other jobs run meanwhile,
 * and the test's thread unblocks it. */
TEST(block_and_unblock_from_another_thread) {
    weft_pool *pool = make_waiting_pool(1);
    blocker b = {0};
    CHECK_EQ(weft_spawn(pool, block_once, &b), 0);
    while (!atomic_load(&b.task))
        usleep(100);
    _Atomic int ran = 0;
    for (int i = 0; i < 20; i++)
        CHECK_EQ(weft_spawn(pool, count, &ran), 0);
    while (atomic_load(&ran) < 20)
        usleep(100);
    CHECK_EQ(atomic_load(&b.resumed), 0);
    CHECK_EQ(alpi_task_unblock(atomic_load(&b.task)), ALPI_SUCCESS);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&b.resumed), 1);
}

static void unblock_then_block(void *arg) {
    struct alpi_task *t = NULL;
    CHECK_EQ(alpi_task_self(&t), ALPI_SUCCESS);
    CHECK_EQ(alpi_task_unblock(t), ALPI_SUCCESS);
    CHECK_EQ(alpi_task_block(t), ALPI_SUCCESS); /* the permit: returns at once */
    atomic_fetch_add((_Atomic int *)arg, 1);
}

TEST(an_unblock_before_the_block_is_kept) {
    weft_pool *pool = make_waiting_pool(1);
    _Atomic int done = 0;
    weft_run(pool, unblock_then_block, &done);
    CHECK_EQ(atomic_load(&done), 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A handle that is no task's: an address no task record can have. */
static int not_a_task;
#define NOT_A_TASK ((struct alpi_task *)&not_a_task)

static void block_with_bad_handles(void *arg) {
    (void)arg;
    CHECK_EQ(alpi_task_block(NULL), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_task_block(NOT_A_TASK), ALPI_ERR_PARAMETER); /* not the calling task */
}

TEST(block_and_unblock_refuse_bad_input) {
    struct alpi_task *t = NOT_A_TASK;
    CHECK_EQ(alpi_task_self(NULL), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_task_self(&t), ALPI_SUCCESS);
    CHECK(t == NULL); /* outside a task */
    CHECK_EQ(alpi_task_block(NOT_A_TASK), ALPI_ERR_OUTSIDE_TASK);
    CHECK_EQ(alpi_task_block(NULL), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_task_unblock(NULL), ALPI_ERR_PARAMETER);
    weft_pool *pool = make_waiting_pool(1);
    weft_run(pool, block_with_bad_handles, NULL);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- The timed wait --------------------------------------------------------- */

typedef struct waiter {
    _Atomic int other_ran;
    uint64_t actual;
} waiter;

/* Waits in short sleeps until the pool's other job has run, which on a pool
 * of one only a spare can do while this task holds the worker. */
static void wait_for_the_other(void *arg) {
    waiter *w = arg;
    int policy, after;
    struct sched_param param;
    CHECK_EQ(pthread_getschedparam(pthread_self(), &policy, &param), 0);
    while (!atomic_load(&w->other_ran)) {
        CHECK_EQ(alpi_task_waitfor_ns(1000000, &w->actual), ALPI_SUCCESS);
        CHECK(w->actual >= 1000000);
        /* The wait runs as an ordinary thread, and the worker's own policy
         * (SCHED_BATCH on Linux) is back after it. */
        CHECK_EQ(pthread_getschedparam(pthread_self(), &after, &param), 0);
        CHECK_EQ(after, policy);
    }
    CHECK_EQ(alpi_task_waitfor_ns(0, &w->actual), ALPI_SUCCESS);
    CHECK_EQ(alpi_task_waitfor_ns(1000, NULL), ALPI_SUCCESS);
}

static void mark_other(void *arg) {
    atomic_store(&((waiter *)arg)->other_ran, 1);
}

TEST(waitfor_lets_the_pool_run_other_work) {
    weft_pool *pool = make_waiting_pool(1);
    waiter w = {0};
    CHECK_EQ(weft_spawn(pool, wait_for_the_other, &w), 0);
    CHECK_EQ(weft_spawn(pool, mark_other, &w), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&w.other_ran), 1);
    /* Outside a task the thread sleeps as well, and that is no error (TAMPI's
     * MPI_Finalize waits so on the main thread). */
    uint64_t actual = 0;
    CHECK_EQ(alpi_task_waitfor_ns(100000, &actual), ALPI_SUCCESS);
    CHECK(actual >= 100000);
}

/* ---- Events ------------------------------------------------------------------- */

typedef struct evented {
    _Atomic int body_returned; /* first: {0} initialises it, and the rest with it */
    _Atomic(struct alpi_task *) task;
    _Atomic int decreased; /* set just before the last decrease */
    _Atomic int completed;
} evented;

/* Complete the task's two events once its body has returned: the waiter on
 * it (a join, a spawn's callback) cannot have seen it complete before. */
static void *complete_later(void *arg) {
    evented *e = arg;
    struct alpi_task *t;
    while (!(t = atomic_load(&e->task)) || !atomic_load(&e->body_returned))
        usleep(100);
    CHECK_EQ(atomic_load(&e->completed), 0);
    CHECK_EQ(alpi_task_events_decrease(t, 3), ALPI_ERR_PARAMETER); /* more than outstanding */
    CHECK_EQ(alpi_task_events_decrease(t, 1), ALPI_SUCCESS);
    CHECK_EQ(alpi_task_events_decrease(t, 0), ALPI_SUCCESS);
    CHECK_EQ(atomic_load(&e->completed), 0);
    atomic_store(&e->decreased, 1);
    CHECK_EQ(alpi_task_events_decrease(t, 1), ALPI_SUCCESS);
    return NULL;
}

static void with_events(void *arg) {
    evented *e = arg;
    struct alpi_task *t = NULL;
    uint64_t has = 7;
    CHECK_EQ(alpi_task_self(&t), ALPI_SUCCESS);
    CHECK_EQ(alpi_task_events_test(t, &has), ALPI_SUCCESS);
    CHECK_EQ(has, 0);
    CHECK_EQ(alpi_task_events_increase(t, 0), ALPI_SUCCESS);
    CHECK_EQ(alpi_task_events_increase(t, 2), ALPI_SUCCESS);
    CHECK_EQ(alpi_task_events_test(t, &has), ALPI_SUCCESS);
    CHECK_EQ(has, 1);
    CHECK_EQ(alpi_task_events_increase(t, (uint64_t)UINT32_MAX + 1), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_task_events_increase(NULL, 1), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_task_events_test(NULL, &has), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_task_events_test(t, NULL), ALPI_ERR_PARAMETER);
    atomic_store(&e->task, t);
    atomic_store(&e->body_returned, 1);
}

/* The task with events is a join's second half: the job it belongs to (the
 * stolen half's own, or the forker's when the forker runs it) completes, and
 * weft_run returns, only after the last event. */
static void join_with_events(void *arg) {
    weft_join(nothing, NULL, with_events, arg);
}

TEST(events_hold_a_join) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
    for (int i = 0; i < 20; i++) {
        evented e = {0};
        pthread_t th;
        CHECK_EQ(pthread_create(&th, NULL, complete_later, &e), 0);
        weft_run(pool, join_with_events, &e);
        atomic_store(&e.completed, 1);
        CHECK_EQ(atomic_load(&e.decreased), 1);
        pthread_join(th, NULL);
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(events_refuse_bad_input) {
    uint64_t has;
    struct alpi_task *t = NOT_A_TASK;
    CHECK_EQ(alpi_task_events_increase(t, 1), ALPI_ERR_OUTSIDE_TASK);
    CHECK_EQ(alpi_task_events_test(t, &has), ALPI_ERR_OUTSIDE_TASK);
    CHECK_EQ(alpi_task_events_decrease(NULL, 1), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_task_events_decrease(t, 1), ALPI_ERR_PARAMETER); /* no events outstanding */
}

/* ---- Spawn ----------------------------------------------------------------------- */

static void spawned_body(void *arg) {
    evented *e = arg;
    CHECK(weft_task_self() != NULL);
    with_events(e);
}

static void spawned_completed(void *arg) {
    evented *e = arg;
    CHECK_EQ(atomic_load(&e->decreased), 1); /* not before the last event */
    atomic_store(&e->completed, 1);
}

/* A spawned task runs in the default pool (the test's thread is outside every
 * pool); its callback comes after its body and its last event. */
TEST(spawn_calls_back_once_the_task_has_completed) {
    evented e = {0};
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, complete_later, &e), 0);
    CHECK_EQ(alpi_task_spawn(spawned_body, &e, spawned_completed, &e, "test", NULL), ALPI_SUCCESS);
    pthread_join(th, NULL);
    while (!atomic_load(&e.completed))
        usleep(100);
    CHECK_EQ(alpi_task_spawn(NULL, &e, spawned_completed, &e, NULL, NULL), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_task_spawn(spawned_body, &e, NULL, &e, NULL, NULL), ALPI_ERR_PARAMETER);
}

/* ---- CPUs and attributes ----------------------------------------------------------- */

typedef struct cpu_ids {
    uint64_t count, logical, system;
} cpu_ids;

static void read_cpu_ids(void *arg) {
    cpu_ids *c = arg;
    CHECK_EQ(alpi_cpu_count(&c->count), ALPI_SUCCESS);
    CHECK_EQ(alpi_cpu_logical_id(&c->logical), ALPI_SUCCESS);
    CHECK_EQ(c->logical, (uint64_t)weft_thread_index());
    CHECK_EQ(alpi_cpu_system_id(&c->system), ALPI_SUCCESS);
    CHECK_EQ(alpi_cpu_logical_id(NULL), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_cpu_system_id(NULL), ALPI_ERR_PARAMETER);
}

TEST(cpus) {
    uint64_t count = 0, id = 12345;
    CHECK_EQ(alpi_cpu_count(&count), ALPI_SUCCESS);
    CHECK_EQ(count, weft_pool_slots(NULL)); /* the default pool, from outside */
    CHECK_EQ(alpi_cpu_count(NULL), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_cpu_logical_id(&id), ALPI_ERR_OUTSIDE_TASK);
    CHECK_EQ(alpi_cpu_system_id(&id), ALPI_ERR_OUTSIDE_TASK);
    CHECK_EQ(id, 12345); /* nothing written */
    /* In a task: the logical id is its thread's slot, below the count. */
    for (int i = 0; i < 50; i++) {
        cpu_ids c = {0};
        weft_run(NULL, read_cpu_ids, &c);
        CHECK_EQ(c.count, count);
        CHECK(c.logical < c.count);
        /* The CPU it ran on (Linux), or its slot: below either bound. */
        CHECK(c.system < (uint64_t)sysconf(_SC_NPROCESSORS_CONF) || c.system < c.count);
    }
}

TEST(attributes) {
    struct alpi_attr *attr = NULL;
    uint64_t size = 0;
    CHECK_EQ(alpi_attr_create(&attr), ALPI_SUCCESS);
    CHECK(attr != NULL);
    CHECK_EQ(alpi_attr_init(attr), ALPI_SUCCESS);
    CHECK_EQ(alpi_attr_size(&size), ALPI_SUCCESS);
    CHECK(size > 0);
    /* A caller-allocated one, of the size given, initialised in place. */
    _Alignas(16) unsigned char own[64];
    CHECK(size <= sizeof own);
    CHECK_EQ(alpi_attr_init((struct alpi_attr *)own), ALPI_SUCCESS);
    _Atomic int ran = 0;
    CHECK_EQ(alpi_task_spawn(count, &ran, count, &ran, NULL, attr), ALPI_SUCCESS);
    while (atomic_load(&ran) < 2)
        usleep(100);
    CHECK_EQ(alpi_attr_destroy(attr), ALPI_SUCCESS);
    CHECK_EQ(alpi_attr_create(NULL), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_attr_destroy(NULL), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_attr_init(NULL), ALPI_ERR_PARAMETER);
    CHECK_EQ(alpi_attr_size(NULL), ALPI_ERR_PARAMETER);
}
