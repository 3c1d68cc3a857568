/* Timeline tracing: a traced workload writes Chrome trace-event JSON that
 * parses, has a track per worker whose slices never overlap, and draws
 * wake-ups as paired flows (tools/check_trace.py checks it); the errors. */
#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"
#include "jobs.h"
#include "weft.h"

#ifndef WEFT_SOURCE_DIR
#error "the build passes the source directory, for tools/check_trace.py"
#endif

static void nothing(void *arg) {
    (void)arg;
}

static void check_file(const char *path, unsigned workers) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s/tools/check_trace.py %s %u", WEFT_SOURCE_DIR, path,
             workers);
    CHECK_EQ(system(cmd), 0);
}

TEST(trace_is_valid_json_without_overlaps) {
    char path[] = "/tmp/weft-trace-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
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
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
    CHECK_EQ(weft_trace_start(pool, path), 0);
    weft_run(pool, nothing, NULL);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* stops and writes it */
    check_file(path, 2);
    unlink(path);
}

TEST(bad_input) {
    CHECK_EQ(weft_trace_start(NULL, NULL), EINVAL);
    CHECK_EQ(weft_trace_stop(NULL), EINVAL); /* the default pool is not tracing */
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1}), 0);
    CHECK_EQ(weft_trace_start(pool, "/nonexistent-dir/trace.json"), 0);
    CHECK_EQ(weft_trace_stop(pool), ENOENT); /* the file cannot be created */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
