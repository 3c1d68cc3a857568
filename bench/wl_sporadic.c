/* SPDX-License-Identifier: MIT */
/* wl_sporadic.c: the sporadic and sweep workloads, detached jobs submitted
 * one at a time from an outside thread: the start latency of each job, and
 * the CPU the pool burns per wall second as the interval between jobs grows.
 */
#include "driver.h"

#include <semaphore.h>
#include <stdatomic.h>

/* Parameters fixed by the workload definition (docs/performance.md). */
#define SPORADIC_PERIOD_NS (500 * US)
#define SPORADIC_JOB_NS    (20 * US)

typedef struct sporadic_job {
    struct sporadic *sp;
    uint64_t submit_ns, start_ns;
} sporadic_job;

typedef struct sporadic {
    const run_ctx *c;
    bench_pool *pool;
    uint64_t period_ns;
    unsigned njobs;
    sporadic_job *jobs;
    atomic_uint done;
    sem_t all_done;
    double wall_s, cpu_s;
} sporadic;

static void sporadic_job_fn(void *arg) {
    sporadic_job *j = arg;
    j->start_ns = bench_now_ns();
    bench_spin_ns(SPORADIC_JOB_NS);
    sporadic *sp = j->sp;
    /* acq_rel: the last job's post publishes every job's start_ns. */
    if (atomic_fetch_add_explicit(&sp->done, 1, memory_order_acq_rel) + 1 == sp->njobs)
        sem_post(&sp->all_done);
}

static void sporadic_wait(sporadic *sp) {
    while (sem_wait(&sp->all_done) != 0) {
    }
}

/* The outside thread: one job every period, on absolute deadlines. */
static void sporadic_submitter(void *arg) {
    sporadic *sp = arg;
    const bench_system *sys = sp->c->sys;
    /* Warm-up: one job so the pool's threads exist, then let them settle. */
    sporadic_job warm = {sp, 0, 0};
    unsigned njobs = sp->njobs;
    sp->njobs = 1;
    sys->submit(sp->pool, sporadic_job_fn, &warm);
    sporadic_wait(sp);
    atomic_store_explicit(&sp->done, 0, memory_order_relaxed);
    sp->njobs = njobs;
    bench_sleep_ns(20 * MS);

    bench_span span = bench_span_start();
    for (unsigned i = 0; i < njobs; i++) {
        bench_sleep_until_ns(span.wall_ns + (uint64_t)(i + 1) * sp->period_ns);
        sp->jobs[i].sp = sp;
        sp->jobs[i].submit_ns = bench_now_ns();
        sys->submit(sp->pool, sporadic_job_fn, &sp->jobs[i]);
    }
    sporadic_wait(sp);
    bench_span_stop(&span, &sp->wall_s, &sp->cpu_s);
}

/* Run njobs sporadic jobs on pool; fills sp (caller frees sp->jobs). */
static void sporadic_measure(sporadic *sp, const run_ctx *c, bench_pool *pool, uint64_t period_ns,
                             unsigned njobs) {
    sp->c = c;
    sp->pool = pool;
    sp->period_ns = period_ns;
    sp->njobs = njobs;
    sp->jobs = xmalloc(njobs * sizeof *sp->jobs);
    atomic_init(&sp->done, 0);
    if (sem_init(&sp->all_done, 0, 0) != 0)
        bench_die("sem_init", strerror(errno));
    if (c->sys->outside)
        c->sys->outside(pool, sporadic_submitter, sp);
    else
        sporadic_submitter(sp);
    sem_destroy(&sp->all_done);
}

void wl_sporadic(const run_ctx *c) {
    if (!c->sys->submit)
        return;
    bench_pool *pool = c->sys->create(c->sys, c->threads, BENCH_POOL_SUBMIT);
    sporadic sp;
    sporadic_measure(&sp, c, pool, SPORADIC_PERIOD_NS, c->sz->sporadic_jobs);
    c->sys->destroy(pool);
    double *lat = xmalloc(sp.njobs * sizeof *lat);
    unsigned late = 0;
    for (unsigned i = 0; i < sp.njobs; i++) {
        lat[i] = 1e-3 * (double)(sp.jobs[i].start_ns - sp.jobs[i].submit_ns);
        late += sp.jobs[i].start_ns - sp.jobs[i].submit_ns > SPORADIC_PERIOD_NS;
    }
    bench_sort_doubles(lat, sp.njobs);
    emit_begin(c);
    bench_json_num("jobs", sp.njobs);
    bench_json_num("period_us", SPORADIC_PERIOD_NS / US);
    bench_json_num("wall_s", sp.wall_s);
    bench_json_num("cpu_s", sp.cpu_s);
    bench_json_num("cpu_per_wall", sp.cpu_s / sp.wall_s);
    bench_json_num("p50_us", bench_percentile(lat, sp.njobs, 50));
    bench_json_num("p99_us", bench_percentile(lat, sp.njobs, 99));
    bench_json_num("max_us", lat[sp.njobs - 1]);
    bench_json_num("late", late);
    bench_json_end();
    free(lat);
    free(sp.jobs);
}

/* CPU burned per wall second as the interval between sporadic jobs grows. */
void wl_sweep(const run_ctx *c) {
    static const unsigned intervals_us[] = {50, 100, 200, 500, 1000, 2000, 5000, 10000};
    if (!c->sys->submit)
        return;
    bench_pool *pool = c->sys->create(c->sys, c->threads, BENCH_POOL_SUBMIT);
    for (size_t k = 0; k < sizeof intervals_us / sizeof intervals_us[0]; k++) {
        uint64_t period = (uint64_t)intervals_us[k] * US;
        /* The same length at every interval: CPU time is read over it. */
        unsigned njobs = (unsigned)(c->sz->sweep_point_s * 1e9 / (double)period);
        if (njobs < 10)
            njobs = 10;
        sporadic sp;
        sporadic_measure(&sp, c, pool, period, njobs);
        free(sp.jobs);
        emit_begin(c);
        bench_json_num("interval_us", intervals_us[k]);
        bench_json_num("jobs", njobs);
        bench_json_num("wall_s", sp.wall_s);
        bench_json_num("cpu_s", sp.cpu_s);
        bench_json_num("cpu_per_wall", sp.cpu_s / sp.wall_s);
        bench_json_end();
    }
    c->sys->destroy(pool);
}
