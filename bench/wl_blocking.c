/* SPDX-License-Identifier: MIT */
/* wl_blocking.c: the blocking workload. A pool of 2 runs batches of jobs of
 * which every other one blocks for 1 ms outside the scheduler (a read of an
 * empty pipe, given up after 1 ms: poll) and the others compute for 250 us.
 * A system with blocking regions (bench_system.blocking_begin) runs the
 * computing jobs on other threads meanwhile; any other loses a worker for
 * each blocked job. Reports the wall time of a batch and its jobs a second.
 */
#include "driver.h"

#include <poll.h>
#include <stdatomic.h>
#include <unistd.h>

#define BLOCKING_JOBS       64
#define BLOCKING_BLOCK_MS   1
#define BLOCKING_COMPUTE_NS (250 * US)

typedef struct blocking_run {
    const run_ctx *c;
    int fd[2];          /* nothing is ever written: each read waits out its timeout */
    atomic_ulong count; /* jobs run, checked afterwards */
} blocking_run;

static void blocking_job(size_t i, void *arg) {
    blocking_run *b = arg;
    const bench_system *sys = b->c->sys;
    if (i % 2) {
        if (sys->blocking_begin)
            sys->blocking_begin();
        struct pollfd p = {.fd = b->fd[0], .events = POLLIN};
        if (poll(&p, 1, BLOCKING_BLOCK_MS) != 0)
            bench_die("blocking", "the empty pipe became readable");
        if (sys->blocking_end)
            sys->blocking_end();
    } else {
        bench_spin_ns(BLOCKING_COMPUTE_NS);
    }
    atomic_fetch_add_explicit(&b->count, 1, memory_order_relaxed);
}

void wl_blocking(const run_ctx *c) {
    if (!c->sys->jobs)
        return;
    blocking_run b = {.c = c};
    if (pipe(b.fd) != 0)
        bench_die("blocking", "pipe");
    atomic_init(&b.count, 0);
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    c->sys->jobs(pool, BLOCKING_JOBS, blocking_job, &b); /* warm-up: threads started */
    int reps = c->sz->blocking_reps;
    uint64_t t0 = bench_now_ns();
    for (int r = 0; r < reps; r++)
        c->sys->jobs(pool, BLOCKING_JOBS, blocking_job, &b);
    double wall = 1e-9 * (double)(bench_now_ns() - t0) / reps;
    c->sys->destroy(pool);
    close(b.fd[0]);
    close(b.fd[1]);
    check(c, atomic_load(&b.count) == (unsigned long)BLOCKING_JOBS * (unsigned long)(reps + 1),
          "a job was lost or run twice");
    emit_begin(c);
    bench_json_num("jobs", BLOCKING_JOBS);
    bench_json_num("wall_s", wall);
    bench_json_num("jobs_per_s", BLOCKING_JOBS / wall);
    bench_json_end();
}
