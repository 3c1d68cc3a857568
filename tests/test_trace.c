/* SPDX-License-Identifier: MIT */
/* Timeline tracing: a traced workload writes Chrome trace-event JSON that
 * parses, has a track per worker whose slices never overlap, and draws
 * wake-ups as paired flows (tools/check_trace.py checks it); the errors. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/worker.h" /* the tracing state, for a late wake-up */
#include "pools.h"
#include "child.h"
#include "jobs.h"
#include "weft.h"

#ifndef WEFT_SOURCE_DIR
#error "the build passes the source directory, for tools/check_trace.py"
#endif

/* Create a file from a mkstemp template, for a trace to overwrite. */
static void make_temp(char *path) {
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
}

/* The exit status of a shell command. */
static int run_status(const char *cmd) {
    int st = system(cmd);
    CHECK(st != -1 && WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void check_file(const char *path, unsigned workers) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s/tools/check_trace.py %s %u", WEFT_SOURCE_DIR, path,
             workers);
    CHECK_EQ(run_status(cmd), 0);
    /* The drawing tool (weft-trace2svg): the default window, the whole run,
     * a window, and an empty one (a clear error, status 1). */
    static const char *windows[] = {"", "--all", "--from 100 --to 2000"};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "python3 %s/tools/trace2svg.py %s %s.svg %s 2>/dev/null",
                 WEFT_SOURCE_DIR, path, path, windows[i]);
        CHECK_EQ(run_status(cmd), 0);
    }
    snprintf(cmd, sizeof cmd, "python3 %s/tools/trace2svg.py %s %s.svg --from 5 --to 5 2>/dev/null",
             WEFT_SOURCE_DIR, path, path);
    CHECK_EQ(run_status(cmd), 1);
    snprintf(cmd, sizeof cmd, "%s.svg", path);
    unlink(cmd);
}

/* weft-trace2svg's command line: --help, and a usage error without
 * arguments or with a file that is not a trace. */
TEST(trace2svg_says_how_it_is_used) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s/tools/trace2svg.py --help >/dev/null", WEFT_SOURCE_DIR);
    CHECK_EQ(run_status(cmd), 0);
    snprintf(cmd, sizeof cmd, "python3 %s/tools/trace2svg.py 2>/dev/null", WEFT_SOURCE_DIR);
    CHECK_EQ(run_status(cmd), 2);
    snprintf(cmd, sizeof cmd, "python3 %s/tools/trace2svg.py %s/README.md /dev/null 2>/dev/null",
             WEFT_SOURCE_DIR, WEFT_SOURCE_DIR);
    CHECK_EQ(run_status(cmd), 1);
}

TEST(trace_is_valid_json_without_overlaps) {
    char path[] = "/tmp/weft-trace-XXXXXX";
    make_temp(path);
    for (int wake = 0; wake < 2; wake++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(
                     &pool, &(weft_config){.threads = 3,
                                           .wake = wake ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED}),
                 0);
        CHECK_EQ(weft_trace_start(pool, path), 0);
        CHECK_EQ(weft_trace_start(pool, path), EBUSY);
        for (int i = 0; i < 20; i++) { /* sporadic: sleeps and wake-ups */
            weft_run(pool, nothing, NULL);
            check_sleep_us(1000);
        }
        fib f = {18, 0};
        weft_run(pool, fib_job, &f); /* busy: running, stealing, nested waits */
        CHECK_EQ(f.r, 2584);
        CHECK_EQ(weft_trace_stop(pool), 0);
        CHECK_EQ(weft_trace_stop(pool), EINVAL);
        check_file(path, 3);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
    unlink(path);
}

TEST(destroy_writes_an_unfinished_trace) {
    char path[] = "/tmp/weft-trace-XXXXXX";
    make_temp(path);
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
    CHECK_EQ(weft_trace_start(pool, path), 0);
    weft_run(pool, nothing, NULL);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* stops and writes it */
    check_file(path, 2);
    unlink(path);
}

/* Jobs of one pool that stop (and restart) the traces of two other pools:
 * a stop holds its lock across its pool's broadcast, whose wait runs the
 * caller's other jobs; theirs find that stop under way on their thread, also
 * from inside a stop of the other pool (the two orders nest both ways). */
enum { TRACED = 2 };
static weft_pool *traced[TRACED];
static char traced_path[TRACED][32] = {"/tmp/weft-trace-XXXXXX", "/tmp/weft-trace-XXXXXX"};
static _Atomic int stops, restarts;

static void stop_and_restart(unsigned t) {
    int err = weft_trace_stop(traced[t]);
    CHECK(err == 0 || err == EINVAL);
    atomic_fetch_add(&stops, err == 0);
    err = weft_trace_start(traced[t], traced_path[t]);
    CHECK(err == 0 || err == EBUSY);
    atomic_fetch_add(&restarts, err == 0);
}

static void stop_traced(void *arg) {
    unsigned first = (unsigned)(uintptr_t)arg;
    for (unsigned t = 0; t < TRACED; t++)
        stop_and_restart((first + t) % TRACED);
}

static void stop_from_jobs(weft_scope *scope, void *arg) {
    (void)arg;
    for (uintptr_t i = 0; i < 6; i++)
        CHECK_EQ(weft_scope_spawn(scope, stop_traced, (void *)(i % TRACED)), 0);
}

TEST(jobs_of_another_pool_stop_a_trace) {
    for (unsigned t = 0; t < TRACED; t++) {
        make_temp(traced_path[t]);
        CHECK_EQ(weft_pool_create(&traced[t], &(weft_config){.threads = 2}), 0);
        CHECK_EQ(weft_trace_start(traced[t], traced_path[t]), 0);
    }
    for (int wait = 0; wait < 2; wait++) { /* in a caller slot, then on a worker */
        weft_pool *pool = wait ? make_waiting_pool(1) : make_pool(1);
        for (int round = 0; round < scaled(50); round++) {
            int before = atomic_load(&restarts);
            weft_scope_run(pool, stop_from_jobs, NULL);
            CHECK(atomic_load(&restarts) >= before + TRACED); /* both trace again */
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
    CHECK(atomic_load(&stops) >= 2 * TRACED * scaled(50));
    for (unsigned t = 0; t < TRACED; t++) {
        CHECK_EQ(weft_pool_destroy(traced[t]), 0); /* stops the last one */
        unlink(traced_path[t]);
    }
}

/* A stop from outside, under way when another thread destroys the pool:
 * destroy waits for it (the stop needs the workers, and writes what destroy
 * frees), and the file is complete. The stop is under way once it turned
 * tracing off (trace.c, stop); a thread that only announced its call could
 * enter weft_trace_stop after destroy freed the pool, which weft.h forbids. */
static _Atomic int late_stop_err;

static void *stop_once(void *arg) {
    atomic_store(&late_stop_err, weft_trace_stop(arg));
    return NULL;
}

TEST(stop_racing_destroy) {
    char path[] = "/tmp/weft-trace-XXXXXX";
    make_temp(path);
    for (int round = 0; round < scaled(20); round++) {
        weft_pool *pool = make_pool(2);
        CHECK_EQ(weft_trace_start(pool, path), 0);
        weft_run(pool, nothing, NULL);
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, stop_once, pool), 0);
        while (atomic_load(&pool->trace.on)) {
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
        pthread_join(t, NULL);
        CHECK_EQ(atomic_load(&late_stop_err), 0);
        check_file(path, 2);
    }
    unlink(path);
}

/* Start a trace of a pool of 2 into path and run one job in it. */
static weft_pool *traced_pool_of_two(const char *path) {
    weft_pool *pool = make_pool(2);
    CHECK_EQ(weft_trace_start(pool, path), 0);
    weft_run(pool, nothing, NULL);
    return pool;
}

/* Check path with tools/check_trace.py and its extra arguments. */
static void check_trace_with(const char *path, const char *args) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s/tools/check_trace.py %s 2 %s", WEFT_SOURCE_DIR, path,
             args);
    CHECK_EQ(run_status(cmd), 0);
}

/* Stop the trace, check its file (and what check_trace.py's args ask for,
 * if any) and destroy the pool. */
static void stop_check_destroy_with(weft_pool *pool, const char *path, const char *args) {
    CHECK_EQ(weft_trace_stop(pool), 0);
    check_file(path, 2);
    if (args)
        check_trace_with(path, args);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void stop_check_destroy(weft_pool *pool, const char *path) {
    stop_check_destroy_with(pool, path, NULL);
}

/* A thread outside the pool that read tracing on before a stop, and records
 * its wake-up after the stop wrote and freed the outside buffer: nothing is
 * recorded (no flow), so the next trace holds no event older than its start.
 * The call below is that late half of a wake-up. */
TEST(outside_wakeup_after_a_stop_is_dropped) {
    char path[] = "/tmp/weft-trace-XXXXXX";
    make_temp(path);
    weft_pool *pool = traced_pool_of_two(path);
    CHECK_EQ(weft_trace_stop(pool), 0);
    CHECK_EQ(weft__trace_wake(&pool->trace, NULL, NULL), 0);
    check_sleep_us(1000); /* the next trace starts later than that call */
    CHECK_EQ(weft_trace_start(pool, path), 0);
    weft_run(pool, nothing, NULL);
    stop_check_destroy(pool, path);
    unlink(path);
}

/* Outside wake-ups less than a microsecond apart (two back to back here, as
 * from several submitting threads at once): their "submit" slices on the
 * outside track must not overlap. */
TEST(outside_wakeups_close_together_do_not_overlap) {
    char path[] = "/tmp/weft-trace-XXXXXX";
    make_temp(path);
    weft_pool *pool = traced_pool_of_two(path);
    CHECK(weft__trace_wake(&pool->trace, NULL, NULL) != 0);
    CHECK(weft__trace_wake(&pool->trace, NULL, NULL) != 0);
    stop_check_destroy(pool, path);
    unlink(path);
}

TEST(bad_input) {
    CHECK_EQ(weft_trace_start(NULL, NULL), EINVAL);
    CHECK_EQ(weft_trace_stop(NULL), EINVAL); /* the default pool is not tracing */
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1}), 0);
    CHECK_EQ(weft_trace_start(pool, "/nonexistent-dir/trace.json"), ENOENT); /* at start */
    CHECK_EQ(weft_trace_stop(pool), EINVAL); /* so it is not tracing */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* The number of entries in directory dir, besides . and .. */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* weft_trace_start creates the file, or returns why it cannot, leaving
 * nothing behind; a start that fails with EBUSY does not touch its path. */
TEST(start_creates_the_file_or_says_why_not) {
    char dir[] = "/tmp/weft-trace-dir-XXXXXX", path[256], other[256], under_file[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t.json", dir);
    snprintf(other, sizeof other, "%s/other.json", dir);
    snprintf(under_file, sizeof under_file, "%s/t.json/x.json", dir);
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
    CHECK_EQ(weft_trace_start(pool, "/no/such/dir/t.json"), ENOENT);
    CHECK_EQ(weft_trace_start(pool, dir), EISDIR);
    CHECK_EQ(entries(dir), 0); /* nothing left behind */
    CHECK_EQ(weft_trace_stop(pool), EINVAL);

    CHECK_EQ(weft_trace_start(pool, path), 0);
    CHECK_EQ(access(path, F_OK), 0); /* created at start */
    CHECK_EQ(weft_trace_start(pool, other), EBUSY);
    CHECK(access(other, F_OK) != 0); /* not created */
    weft_pool *second;
    CHECK_EQ(weft_pool_create(&second, &(weft_config){.threads = 1}), 0);
    CHECK_EQ(weft_trace_start(second, under_file), ENOTDIR);
    CHECK_EQ(weft_pool_destroy(second), 0);
    weft_run(pool, nothing, NULL);
    CHECK_EQ(weft_trace_stop(pool), 0);
    check_file(path, 2);
    CHECK_EQ(entries(dir), 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    unlink(path);
    rmdir(dir);
}

/* WEFT_TRACE naming a file that cannot be created says so once on stderr,
 * however many pools are created; the pools work untraced. */
static void pools_with_a_bad_trace_path(void) {
    setenv("WEFT_TRACE", "/no/such/dir/t.json", 1);
    for (int i = 0; i < 3; i++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
        fib f = {12, 0};
        weft_run(pool, fib_job, &f);
        CHECK_EQ(f.r, 144);
        CHECK_EQ(weft_trace_stop(pool), EINVAL); /* not tracing */
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

TEST(bad_trace_env_is_reported_once) {
    char err[1024], want[256];
    CHECK(child_exited_ok(child_run(pools_with_a_bad_trace_path, err, sizeof err)));
    snprintf(want, sizeof want,
             "weft: ignoring WEFT_TRACE=\"/no/such/dir/t.json\": cannot create "
             "/no/such/dir/t.json: %s\n",
             strerror(ENOENT));
    CHECK(strcmp(err, want) == 0);
}

/* A loop's piece that lasts long enough for the workers to take some. */
static void busy_piece(size_t begin, size_t end, void *arg) {
    (void)begin, (void)end, (void)arg;
    check_sleep_us(100);
}

static void loop_of_busy_pieces(void) {
    weft_for(NULL, 0, 64, 1, busy_piece, NULL); /* the current pool: the caller's */
}

static void busy_loop(void *arg) {
    (void)arg;
    loop_of_busy_pieces();
}

/* The threads outside the pool that take part in their own work (a caller
 * in a caller slot, a thread holding a context) get a row each, named for
 * what they are, with the slices of the jobs they ran: a frame loop's main
 * thread does its share of the work, and the trace shows it. */
TEST(callers_and_contexts_have_rows) {
    char path[] = "/tmp/weft-trace-XXXXXX";
    make_temp(path);
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2, .contexts = 1}), 0);
    CHECK_EQ(weft_trace_start(pool, path), 0);
    weft_run(pool, busy_loop, NULL); /* in caller slot 0 */
    weft_context *ctx;
    CHECK_EQ(weft_context_acquire(pool, &ctx), 0);
    loop_of_busy_pieces();
    weft_context_release(ctx);
    stop_check_destroy_with(pool, path, "--row 'caller 0' --row 'context 0'");
    unlink(path);
}

static void busy_job(void *arg) {
    busy_piece(0, 1, arg);
}

/* A detached job that signals when it ran. */
static void set_done(void *arg) {
    atomic_store((_Atomic int *)arg, 1);
}

static void cancel_here(void *arg) {
    (void)arg;
    weft_cancel();
}

/* A run under a name gives its work a group that only names: weft_cancel
 * inside it cancels the scope around it, as without a name. */
static void body_cancels_through_a_name(weft_scope *scope, void *arg) {
    (void)scope;
    const char *outer = weft_trace_name("cancels");
    weft_run(NULL, cancel_here, NULL);
    CHECK(strcmp(weft_trace_name(outer), "cancels") == 0);
    *(bool *)arg = weft_cancelled();
}

/* weft_trace_name names the work the calling thread starts: a loop's
 * pieces (wherever they ran), a reduction, a detached job; nested names
 * replace outer ones and are set back; names are written as JSON strings. */
TEST(jobs_carry_their_names) {
    char path[] = "/tmp/weft-trace-XXXXXX";
    make_temp(path);
    weft_pool *pool = make_pool(2);
    CHECK_EQ(weft_trace_start(pool, path), 0);
    static const char loop_name[] = "frame \"loop\"";
    CHECK(weft_trace_name(loop_name) == NULL);
    weft_for(pool, 0, 64, 1, busy_piece, NULL);
    uint64_t sum = 0;
    CHECK(weft_trace_name("sum") == loop_name);
    CHECK_EQ(weft_reduce(pool, 0, 1000, 10, &sum_of_indices, &sum), 0);
    CHECK_EQ(sum, 999 * 1000 / 2);
    CHECK(weft_trace_name("spawned") != NULL);
    _Atomic int done = 0;
    CHECK_EQ(weft_spawn(pool, set_done, &done), 0); /* named when queued */
    CHECK(strcmp(weft_trace_name(NULL), "spawned") == 0);
    while (!atomic_load(&done))
        check_sleep_us(100);
    weft_graph *graph;
    weft_node *first, *second;
    CHECK_EQ(weft_graph_create(&graph), 0);
    CHECK_EQ(weft_graph_add(graph, busy_job, NULL, &first), 0);
    CHECK_EQ(weft_graph_add(graph, busy_job, NULL, &second), 0);
    CHECK_EQ(weft_graph_edge(graph, first, second), 0);
    CHECK(weft_trace_name("graph") == NULL);
    CHECK_EQ(weft_graph_run(graph, pool), 0);
    CHECK(strcmp(weft_trace_name(NULL), "graph") == 0);
    weft_graph_destroy(graph);
    bool cancelled = false;
    weft_scope_run(pool, body_cancels_through_a_name, &cancelled);
    CHECK(cancelled);
    stop_check_destroy_with(
        pool, path, "--row 'caller 0' --job 'frame \"loop\"' --job sum --job spawned --job graph");
    unlink(path);
}
