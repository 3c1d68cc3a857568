/* SPDX-License-Identifier: MIT */
/* fork() (issue 18, defect 5): a child starts with a fresh default pool, never
 * runs a job queued in the parent, and gets ECHILD (or the work done on the
 * calling thread) from a pool its parent created, instead of hanging.
 *
 * Each case forks; the child arms alarm(CHILD_SECONDS), so a child that hangs
 * dies of SIGALRM and the parent reports it, and a failed CHECK in the child
 * aborts it. Children that leave threads mid-allocation behind them exit
 * with _exit: a block a vanished thread held only in its registers is
 * unreachable in the child by nature, and the leak checker would say so. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asleep.h"
#include "child.h"
#include "check.h"
#include "pools.h"
#include "jobs.h"
#include "core/current.h"
#include "weft.h"

/* A child that starts threads (its fresh default pool) is what these tests
 * are about. */
CHILDREN_START_THREADS();

enum { CHILD_SECONDS = 20 };

/* Wait for the child and fail unless it exited with status 0. */
static void wait_child(pid_t pid) {
    CHECK(pid > 0);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fprintf(stderr, "child killed by signal %d%s\n", WTERMSIG(status),
                WTERMSIG(status) == SIGALRM ? " (SIGALRM: it hung)" : "");
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
}

static _Atomic long child_ran;

static void count_child_job(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&child_ran, 1, memory_order_relaxed);
}

static void on_a_worker(void *arg) {
    *(int *)arg = weft_thread_index();
}

/* What every child checks: its default pool is not old (the parent's, if any), runs
 * weft_run and weft_join on its own workers, and runs spawned jobs. */
static void check_fresh_default_pool(weft_pool *old) {
    int index = -1;
    weft_run(NULL, on_a_worker, &index);
    CHECK(index >= 0);
    fib f = {15, 0};
    weft_run(NULL, fib_job, &f);
    CHECK_EQ(f.r, 610);
    CHECK(weft_pool_default() != old);
    long before = atomic_load(&child_ran);
    for (int i = 0; i < 10; i++)
        CHECK_EQ(weft_spawn(NULL, count_child_job, NULL), 0);
    while (atomic_load(&child_ran) != before + 10)
        check_sleep_us(100); /* the alarm ends a child whose jobs never run */
    if (old) { /* a pointer to the parent's default pool: a parent's pool like any other */
        CHECK_EQ(weft_spawn(old, count_child_job, NULL), ECHILD);
        CHECK_EQ(weft_pool_destroy(old), EINVAL);
    }
}

TEST(idle_default_pool) {
    weft_run(NULL, nothing, NULL); /* the default pool exists, and is idle */
    weft_pool *old = weft_pool_default();
    pid_t pid = fork();
    if (pid == 0) {
        alarm(CHILD_SECONDS);
        check_fresh_default_pool(old);
        exit(0); /* exit, not _exit: the leak checker runs in the child too */
    }
    wait_child(pid);
    fib f = {15, 0};
    weft_run(NULL, fib_job, &f); /* the parent's pool is unharmed */
    CHECK_EQ(f.r, 610);
}

/* ---- A busy default pool ------------------------------------------------- */

static _Atomic bool stop_spawning;
static _Atomic long parent_ran;

/* gcc 12's AddressSanitizer runtime takes no lock of its allocator around
 * fork() (glibc's malloc does, and LLVM's runtime since release 17): a child
 * forked while another thread is inside malloc may block for ever in its
 * first malloc (seen in CI: the child of busy_default_pool hung in
 * SizeClassAllocator64::GetFromAllocator under weft_spawn). Under ASan the
 * spawner therefore parks outside weft_spawn while fork() runs; the other
 * builds fork in the middle of its spawning, weft's locks and all. */
#if defined(__SANITIZE_ADDRESS__)
enum { PARK_FOR_FORK = 1 };
#else
enum { PARK_FOR_FORK = 0 };
#endif

static _Atomic bool fork_pending, spawner_parked;

static void count_parent_job(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&parent_ran, 1, memory_order_relaxed);
}

static void *spawn_loop(void *arg) {
    (void)arg;
    while (!atomic_load(&stop_spawning)) {
        if (atomic_load(&fork_pending)) {
            atomic_store(&spawner_parked, true);
            while (atomic_load(&fork_pending))
                sched_yield();
            atomic_store(&spawner_parked, false);
        }
        CHECK_EQ(weft_spawn(NULL, count_parent_job, NULL), 0);
    }
    return NULL;
}

TEST(busy_default_pool) {
    weft_pool *old = weft_pool_default();
    pthread_t spawner;
    CHECK_EQ(pthread_create(&spawner, NULL, spawn_loop, NULL), 0);
    while (atomic_load(&parent_ran) < 1000)
        check_sleep_us(100);
    if (PARK_FOR_FORK) {
        atomic_store(&fork_pending, true);
        while (!atomic_load(&spawner_parked))
            sched_yield();
    }
    pid_t pid = fork(); /* while the spawner holds locks, workers run and sleep */
    atomic_store(&fork_pending, false);
    if (pid == 0) {
        alarm(CHILD_SECONDS);
        long before = atomic_load(&parent_ran);
        check_fresh_default_pool(old);
        CHECK_EQ(atomic_load(&parent_ran), before); /* no job of the parent ran here */
        _exit(0);
    }
    atomic_store(&stop_spawning, true);
    CHECK_EQ(pthread_join(spawner, NULL), 0);
    wait_child(pid);
    fib f = {15, 0};
    weft_run(NULL, fib_job, &f);
    CHECK_EQ(f.r, 610);
}

/* ---- fork() inside a job ------------------------------------------------- */

enum { QUEUED = 200 };

static _Atomic bool gate, fork_done;
static pid_t forked;

/* Holds its worker until the gate opens, so that the others stay queued. */
static void gated_parent_job(void *arg) {
    (void)arg;
    while (!atomic_load(&gate))
        check_sleep_us(100);
    atomic_fetch_add_explicit(&parent_ran, 1, memory_order_relaxed);
}

static void child_of_a_job(weft_pool *old) {
    alarm(CHILD_SECONDS);
    /* The parent's jobs would all run if this child took them: open. */
    atomic_store(&gate, true);
    long before = atomic_load(&parent_ran);
    CHECK_EQ(weft_thread_index(), -1); /* an outside thread here */
    /* From a worker of another pool, weft_run participates in the caller's
     * own pool while it waits: the child must not be one of old's workers. */
    weft_pool *other;
    CHECK_EQ(weft_pool_create(&other, &(weft_config){.threads = 2}), 0);
    fib f = {15, 0};
    weft_run(other, fib_job, &f);
    CHECK_EQ(f.r, 610);
    CHECK_EQ(atomic_load(&parent_ran), before);
    CHECK_EQ(weft_pool_destroy(other), 0);
    check_fresh_default_pool(old);
    CHECK_EQ(atomic_load(&parent_ran), before);
    _exit(0); /* never return into the worker loop of a pool without threads */
}

static void fork_from_job(void *arg) {
    weft_pool *old = arg;
    for (int i = 0; i < QUEUED; i++)
        CHECK_EQ(weft_spawn(NULL, gated_parent_job, NULL), 0);
    pid_t pid = fork();
    if (pid == 0)
        child_of_a_job(old);
    forked = pid;
    atomic_store(&fork_done, true); /* publishes forked */
}

/* A job that forks on a worker (a detached job: what it spawns sits on that
 * worker's deque), and on an outside caller (in its caller slot: what it
 * spawns goes to the injector). */
TEST(fork_inside_job) {
    weft_pool *old = weft_pool_default();
    for (int on_worker = 1; on_worker >= 0; on_worker--) {
        long before = atomic_load(&parent_ran);
        atomic_store(&gate, false);
        atomic_store(&fork_done, false);
        if (on_worker) {
            CHECK_EQ(weft_spawn(NULL, fork_from_job, old), 0);
            while (!atomic_load(&fork_done))
                check_sleep_us(100);
        } else {
            weft_run(NULL, fork_from_job, old);
        }
        atomic_store(&gate, true);
        wait_child(forked);
        while (atomic_load(&parent_ran) != before + QUEUED) /* the parent runs every one */
            check_sleep_us(100);
    }
}

/* ---- A pool the parent created ------------------------------------------- */

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static int hold_state; /* 0, 1: the injector lock is held, 2: release it */

/* Holds the pool's injector lock across the fork: the child must not need it. */
static void *hold_injector(void *arg) {
    weft_pool *pool = arg;
    pthread_mutex_lock(&pool->injectors[WEFT_PRIORITY_NORMAL].lock);
    pthread_mutex_lock(&hold_lock);
    hold_state = 1;
    pthread_cond_broadcast(&hold_cond);
    while (hold_state != 2)
        pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
    pthread_mutex_unlock(&pool->injectors[WEFT_PRIORITY_NORMAL].lock);
    return NULL;
}

static void note_thread(void *arg) {
    *(int *)arg = weft_thread_index();
}

static void mark_range(size_t b, size_t e, void *arg) {
    for (size_t i = b; i < e; i++)
        ((char *)arg)[i]++;
}

static void scope_body(weft_scope *scope, void *arg) {
    CHECK_EQ(weft_scope_spawn(scope, count_child_job, arg), 0);
}

static void count_broadcast(unsigned index, void *arg) {
    (void)index;
    (void)arg;
    atomic_fetch_add_explicit(&child_ran, 1, memory_order_relaxed);
}

static void check_parent_pool(weft_pool *pool) {
    CHECK_EQ(weft_spawn(pool, count_child_job, NULL), ECHILD);
    CHECK_EQ(weft_spawn_priority(pool, count_child_job, NULL, WEFT_PRIORITY_HIGH), ECHILD);
    int index = 7;
    weft_run(pool, note_thread, &index); /* runs on the calling thread */
    CHECK_EQ(index, -1);
    char marks[100] = {0};
    weft_for(pool, 0, sizeof marks, 0, mark_range, marks);
    for (size_t i = 0; i < sizeof marks; i++)
        CHECK_EQ(marks[i], 1);
    long before = atomic_load(&child_ran);
    weft_scope_run(pool, scope_body, NULL);
    CHECK_EQ(atomic_load(&child_ran), before + 1);
    CHECK_EQ(weft_broadcast(pool, count_broadcast, NULL), ECHILD); /* no workers: nothing runs */
    CHECK_EQ(atomic_load(&child_ran), before + 1);
    uint64_t sum = 1;
    CHECK_EQ(weft_reduce(pool, 0, 10, 0, &sum_of_indices, &sum), ECHILD);
    CHECK_EQ(sum, 1);
    weft_graph *g;
    weft_node *n;
    CHECK_EQ(weft_graph_create(&g), 0);
    CHECK_EQ(weft_graph_add(g, count_child_job, NULL, &n), 0);
    CHECK_EQ(weft_graph_run(g, pool), ECHILD);
    weft_graph_destroy(g);
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, pool, 1), ECHILD);
    weft_context *c;
    CHECK_EQ(weft_context_acquire(pool, &c), ECHILD);
    CHECK_EQ(weft_trace_start(pool, "/dev/null"), ECHILD);
    CHECK_EQ(weft_trace_stop(pool), ECHILD);
    weft_phase_begin(pool);
    weft_phase_end(pool, true);
    CHECK_EQ(weft_pool_threads(pool), 0);
    CHECK_EQ(weft_pool_slots(pool), 0);
    weft_stats st;
    weft_pool_stats(pool, &st);
    CHECK_EQ(st.jobs, 0);
}

static _Atomic long followups_ran;

static void count_followup(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&followups_ran, 1, memory_order_relaxed);
}

static weft_pool *parent_pool;
static weft_context *parent_ctx;
static weft_event *parent_event;

/* weft_pool_destroy in the child must free the parent's pool. The leak
 * checker cannot tell: what the parent's vanished threads left in memory
 * (their stacks, their thread-local pointers) still points at it. So the
 * test watches free itself (linked with -Wl,--wrap=free): the pool, its
 * workers and its sleep slots must each be freed once. */
enum { WATCHED = 3 };
static _Atomic(void *) watched[WATCHED];
static _Atomic int watched_freed;

void __real_free(void *p);
void __wrap_free(void *p);
void __wrap_free(void *p) {
    for (int i = 0; p && i < WATCHED; i++)
        if (atomic_load_explicit(&watched[i], memory_order_relaxed) == p)
            atomic_fetch_add_explicit(&watched_freed, 1, memory_order_relaxed);
    __real_free(p);
}

/* In the child of parent_pool_in_child. */
__attribute__((noinline)) static void use_parent_pool(void) {
    alarm(CHILD_SECONDS);
    CHECK_EQ(weft_thread_index(), -1); /* the forking thread is an outside thread here */
    check_parent_pool(parent_pool);
    CHECK_EQ(weft_event_then(parent_event, count_followup, NULL), ECHILD);
    weft_event_signal(parent_event); /* its follow-up runs here, on the signalling thread */
    CHECK_EQ(atomic_load(&followups_ran), 1);
    weft_event_destroy(parent_event);
    atomic_store(&watched[0], parent_pool);
    atomic_store(&watched[1], parent_pool->workers);
    atomic_store(&watched[2], parent_pool->sleep.slots);
    CHECK_EQ(weft_pool_destroy(parent_pool), 0); /* without hanging */
    CHECK_EQ(atomic_load(&watched_freed), WATCHED);
    check_fresh_default_pool(NULL);
}

TEST(parent_pool_in_child) {
    CHECK_EQ(weft_pool_create(&parent_pool, &(weft_config){.threads = 2, .contexts = 1}), 0);
    atomic_store(&parent_ran, 0);
    for (int i = 0; i < 100; i++) /* fills the workers' caches of heap jobs */
        CHECK_EQ(weft_spawn(parent_pool, count_parent_job, NULL), 0);
    /* Every record back in a cache before the fork: one still queued would be
     * lost with the parent's workers (a known leak of a fork child, which
     * LeakSanitizer reports at the child's exit). */
    while (atomic_load(&parent_ran) < 100)
        sched_yield();
    fib f = {15, 0};
    weft_run(parent_pool, fib_job, &f);
    /* An event of the pool, with a follow-up registered in the parent. */
    CHECK_EQ(weft_event_create(&parent_event, parent_pool, 1), 0);
    CHECK_EQ(weft_event_then(parent_event, count_followup, NULL), 0);
    CHECK_EQ(weft_context_acquire(parent_pool, &parent_ctx), 0); /* held across the fork */
    pthread_t holder;
    CHECK_EQ(pthread_create(&holder, NULL, hold_injector, parent_pool), 0);
    pthread_mutex_lock(&hold_lock);
    while (hold_state != 1)
        pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
    pid_t pid = fork();
    if (pid == 0) {
        use_parent_pool();
        exit(0); /* exit, not _exit: the leak checker runs */
    }
    pthread_mutex_lock(&hold_lock);
    hold_state = 2;
    pthread_cond_broadcast(&hold_cond);
    pthread_mutex_unlock(&hold_lock);
    CHECK_EQ(pthread_join(holder, NULL), 0);
    wait_child(pid);
    weft_context_release(parent_ctx);
    weft_event_signal(parent_event);
    weft_event_destroy(parent_event);
    CHECK_EQ(weft_pool_destroy(parent_pool), 0); /* runs the follow-up */
    CHECK_EQ(atomic_load(&followups_ran), 1);
}

/* ---- WEFT_TRACE in a child ----------------------------------------------- */

static bool file_exists(const char *path) {
    return access(path, F_OK) == 0;
}

/* In a process whose default pool traces (WEFT_TRACE): a child that never
 * uses weft exits without touching the parent's pool (its inherited exit
 * handler stops only a default pool of its own, and makes none), and a child
 * that does use it writes its trace to a file of its own. */
static void record_on_every_worker(unsigned index, void *arg) {
    (void)index;
    (void)arg;
}

static void trace_children(const char *path) {
    setenv("WEFT_TRACE", path, 1);
    weft_run(NULL, nothing, NULL); /* a traced default pool; stopped at exit */
    /* Each worker's first trace event allocates its buffer; the caller ran
     * its job itself, so a worker may still be recording its first search
     * when fork() runs. gcc 12's ASan (PARK_FOR_FORK above) would hand the
     * child its allocator locked: a broadcast waits until every worker has
     * recorded events, and the fork waits until each sits in its futex wait,
     * where it allocates nothing (a worker on its way there records its
     * sleep and may grow its buffer: seen in CI, the child hung in its
     * exit's leak check). Nothing wakes them until the children exit. */
    if (PARK_FOR_FORK) {
        CHECK_EQ(weft_broadcast(NULL, record_on_every_worker, NULL), 0);
        wait_all_blocked(weft_pool_default());
        wait_others_blocked();
    }
    char name[256];
    pid_t quiet = fork();
    if (quiet == 0) {
        alarm(CHILD_SECONDS);
        exit(0); /* runs the inherited exit handler */
    }
    wait_child(quiet);
    snprintf(name, sizeof name, "%s.%ld", path, (long)quiet);
    CHECK(!file_exists(name));
    pid_t busy = fork();
    if (busy == 0) {
        alarm(CHILD_SECONDS);
        check_fresh_default_pool(NULL);
        exit(0);
    }
    wait_child(busy);
    snprintf(name, sizeof name, "%s.%ld", path, (long)busy);
    FILE *f = fopen(name, "r");
    CHECK(f != NULL);
    CHECK_EQ(fgetc(f), '{');
    fclose(f);
    unlink(name);
}

TEST(trace_in_child) {
    char path[] = "/tmp/weft_fork_traceXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    /* In a child of its own, so that its default pool is created with
     * WEFT_TRACE set whatever this process did before. */
    pid_t pid = fork();
    if (pid == 0) {
        alarm(2 * CHILD_SECONDS);
        trace_children(path);
        exit(0);
    }
    wait_child(pid);
    unlink(path);
    char name[256]; /* the traced process's own file, if it was a fork child */
    snprintf(name, sizeof name, "%s.%ld", path, (long)pid);
    unlink(name);
}
