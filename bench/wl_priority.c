/* SPDX-License-Identifier: MIT */
/* wl_priority.c: the priority workloads, the start latency of high-priority
 * jobs submitted while the pool is flooded with normal work: 200 detached
 * jobs of 1 ms (priority), or one detached job that runs a parallel loop of
 * 400 pieces of 1 ms (priority_loop; systems with priorities only), where a
 * worker that stole half the loop runs it all inside that one job unless
 * the library looks between pieces.
 */
#include "driver.h"

#include <semaphore.h>
#include <stdatomic.h>

#define FLOOD_JOBS   200
#define FLOOD_PIECES 400
#define FLOOD_JOB_NS (1 * MS)
#define PROBES       20
/* Not a multiple of the flood jobs' length: probes must not phase-lock with
 * job boundaries (each would then see the same wait). */
#define PROBE_PERIOD_NS (5370 * US)

typedef struct probe {
    uint64_t submit_ns;
    _Atomic uint64_t start_ns;
} probe;

typedef struct flood {
    const run_ctx *c;
    bench_pool *pool;
    probe probes[PROBES];
    int loop;              /* the flood is one job running a loop */
    unsigned jobs;         /* the flood's detached jobs */
    _Atomic unsigned done; /* flood jobs and probes finished */
    sem_t all_done;
} flood;

static void flood_finish(flood *f) {
    if (atomic_fetch_add_explicit(&f->done, 1, memory_order_acq_rel) + 1 == f->jobs + PROBES)
        sem_post(&f->all_done);
}

static flood *the_flood; /* one per process run */

static void flood_job(void *arg) {
    (void)arg;
    bench_spin_ns(FLOOD_JOB_NS);
    flood_finish(the_flood);
}

static void flood_piece(size_t i, void *arg) {
    (void)i;
    (void)arg;
    bench_spin_ns(FLOOD_JOB_NS);
}

/* The loop flood: one normal job, inside the pool, runs all the pieces. */
static void flood_loop_job(void *arg) {
    flood *f = arg;
    f->c->sys->pieces(f->pool, FLOOD_PIECES, flood_piece, NULL);
    flood_finish(f);
}

static void probe_job(void *arg) {
    probe *p = arg;
    atomic_store_explicit(&p->start_ns, bench_now_ns(), memory_order_relaxed);
    flood_finish(the_flood);
}

/* The outside thread: 200 ms of normal work at once, then a probe job every
 * 5 ms, at high priority where the system has priorities. */
static void flood_submitter(void *arg) {
    flood *f = arg;
    const bench_system *s = f->c->sys;
    if (f->loop)
        s->submit(f->pool, flood_loop_job, f);
    else
        for (unsigned i = 0; i < FLOOD_JOBS; i++)
            s->submit(f->pool, flood_job, NULL);
    uint64_t t0 = bench_now_ns();
    for (unsigned i = 0; i < PROBES; i++) {
        bench_sleep_until_ns(t0 + (uint64_t)(i + 1) * PROBE_PERIOD_NS);
        f->probes[i].submit_ns = bench_now_ns();
        (s->submit_high ? s->submit_high : s->submit)(f->pool, probe_job, &f->probes[i]);
    }
    while (sem_wait(&f->all_done) != 0) {
    }
}

static void run_flood(const run_ctx *c, int loop) {
    flood *f = xmalloc(sizeof *f);
    memset(f, 0, sizeof *f);
    f->c = c;
    f->loop = loop;
    f->jobs = loop ? 1 : FLOOD_JOBS;
    f->pool = c->sys->create(c->sys, c->threads, BENCH_POOL_SUBMIT);
    atomic_init(&f->done, 0);
    if (sem_init(&f->all_done, 0, 0) != 0)
        bench_die("sem_init", strerror(errno));
    the_flood = f;
    if (c->sys->outside)
        c->sys->outside(f->pool, flood_submitter, f);
    else
        flood_submitter(f);
    c->sys->destroy(f->pool);
    double lat[PROBES];
    for (unsigned i = 0; i < PROBES; i++)
        lat[i] = 1e-3 * (double)(atomic_load(&f->probes[i].start_ns) - f->probes[i].submit_ns);
    bench_sort_doubles(lat, PROBES);
    emit_begin(c);
    bench_json_num("priorities", c->sys->submit_high != NULL);
    bench_json_num("flood_ms",
                   (double)(loop ? FLOOD_PIECES : FLOOD_JOBS) * FLOOD_JOB_NS / MS / c->threads);
    bench_json_num("p50_us", bench_percentile(lat, PROBES, 50));
    bench_json_num("max_us", lat[PROBES - 1]);
    bench_json_end();
    sem_destroy(&f->all_done);
    free(f);
}

void wl_priority(const run_ctx *c) {
    if (c->sys->submit)
        run_flood(c, 0);
}

void wl_priority_loop(const run_ctx *c) {
    if (c->sys->submit && c->sys->submit_high && c->sys->pieces)
        run_flood(c, 1);
}
