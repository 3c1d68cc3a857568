/* SPDX-License-Identifier: MIT */
/* wl_burst.c: the burst, burst5ms, control and idle workloads, short
 * parallel work between serial gaps. They share the spinning pieces and jobs
 * (spin_work) and the bursts that warm a pool up.
 */
#include "driver.h"

#include <sched.h> /* sched_getcpu (Linux) */
#include <stdatomic.h>

/* Parameters fixed by the workload definitions (docs/performance.md). */
#define BURST_PIECES      64
#define BURST_PIECE_NS    (5 * US)
#define BURST_GAP_NS      (200 * US)
#define CONTROL_JOBS      16
#define CONTROL_JOB_NS    (2 * US)
#define CONTROL_SERIAL_NS (200 * US)
#define CONTROL_IDLE_NS   (3 * MS)

typedef struct spin_work {
    uint64_t ns;         /* each piece or job spins this long */
    atomic_ulong count;  /* pieces or jobs run, checked afterwards */
    atomic_ulong end_ns; /* latest finish time (control) */
    atomic_ulong cpus;   /* CPUs the current burst's pieces ran on, a bit each */
} spin_work;

/* This thread's CPU as a bit of spin_work.cpus (0 where unknown). */
static unsigned long cpu_bit(void) {
#ifdef __linux__
    int cpu = sched_getcpu();
    return cpu >= 0 && cpu < (int)(8 * sizeof(unsigned long)) ? 1ul << cpu : 0;
#else
    return 0;
#endif
}

static void spin_piece(size_t i, void *arg) {
    spin_work *w = arg;
    (void)i;
    bench_spin_ns(w->ns);
    uint64_t now = bench_now_ns();
    unsigned long seen = atomic_load_explicit(&w->end_ns, memory_order_relaxed);
    while (seen < now && !atomic_compare_exchange_weak_explicit(
                             &w->end_ns, &seen, now, memory_order_relaxed, memory_order_relaxed)) {
    }
    atomic_fetch_add_explicit(&w->count, 1, memory_order_relaxed);
    atomic_fetch_or_explicit(&w->cpus, cpu_bit(), memory_order_relaxed);
}

static void spin_work_init(spin_work *w, uint64_t ns) {
    w->ns = ns;
    atomic_init(&w->count, 0);
    atomic_init(&w->end_ns, 0);
    atomic_init(&w->cpus, 0);
}

/* n bursts of 64 spinning pieces, each followed by a serial busy gap.
 * Returns how many bursts ran all their pieces on one CPU (of a machine with
 * more): a pool whose workers slept may get them all woken onto one. */
static unsigned bursts(const run_ctx *c, bench_pool *pool, unsigned n, spin_work *w, uint64_t gap) {
    unsigned one_cpu = 0;
    for (unsigned i = 0; i < n; i++) {
        atomic_store_explicit(&w->cpus, 0, memory_order_relaxed);
        c->sys->pieces(pool, BURST_PIECES, spin_piece, w);
        /* Relaxed: pieces() returned, so every piece's write happened before. */
        unsigned long cpus = atomic_load_explicit(&w->cpus, memory_order_relaxed);
        one_cpu += cpus && (cpus & (cpus - 1)) == 0;
        bench_spin_ns(gap);
    }
    return one_cpu;
}

/* A pool of the run's size, warmed up with `warm` bursts of w's pieces. */
static bench_pool *warm_pool(const run_ctx *c, spin_work *w, unsigned warm, uint64_t gap_ns) {
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    spin_work_init(w, BURST_PIECE_NS);
    bursts(c, pool, warm, w, gap_ns);
    return pool;
}

static void burst_with_gap(const run_ctx *c, uint64_t gap_ns, unsigned iters) {
    if (!c->sys->pieces)
        return;
    spin_work w;
    bench_pool *pool = warm_pool(c, &w, 5, gap_ns);
    bench_span span = bench_span_start();
    unsigned one_cpu = bursts(c, pool, iters, &w, gap_ns);
    double wall, cpu;
    bench_span_stop(&span, &wall, &cpu);
    c->sys->destroy(pool);
    unsigned long expect = (unsigned long)BURST_PIECES * (iters + 5);
    check(c, atomic_load(&w.count) == expect, "a piece did not run exactly once");
    emit_begin(c);
    bench_json_num("bursts", iters);
    bench_json_num("gap_us", (double)gap_ns / US);
    bench_json_num("one_cpu_share", (double)one_cpu / iters);
    bench_json_num("wall_s", wall);
    bench_json_num("cpu_s", cpu);
    bench_json_end();
}

void wl_burst(const run_ctx *c) {
    burst_with_gap(c, BURST_GAP_NS, c->sz->burst_iters);
}

/* The same with 5 ms gaps (the leave-policy table): long enough for idle
 * workers to sleep; 200 bursts keep the run near one second. */
void wl_burst5ms(const run_ctx *c) {
    burst_with_gap(c, 5 * MS, c->sz->burst_iters / 5 ? c->sz->burst_iters / 5 : 1);
}

/* Returns the burst latency in microseconds. */
static double control_tick(const run_ctx *c, bench_pool *pool, spin_work *w) {
    unsigned long before = atomic_load(&w->count);
    uint64_t t0 = bench_now_ns();
    c->sys->jobs(pool, CONTROL_JOBS, spin_piece, w);
    double lat = 1e-3 * (double)(atomic_load(&w->end_ns) - t0);
    check(c, atomic_load(&w->count) - before == CONTROL_JOBS, "a job did not run exactly once");
    bench_spin_ns(CONTROL_SERIAL_NS);
    bench_sleep_ns(CONTROL_IDLE_NS);
    return lat;
}

void wl_control(const run_ctx *c) {
    if (!c->sys->jobs)
        return;
    unsigned n = c->sz->control_iters;
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    spin_work w;
    spin_work_init(&w, CONTROL_JOB_NS);
    control_tick(c, pool, &w);
    double *lat = xmalloc(n * sizeof *lat);
    bench_span span = bench_span_start();
    for (unsigned i = 0; i < n; i++)
        lat[i] = control_tick(c, pool, &w);
    double wall, cpu;
    bench_span_stop(&span, &wall, &cpu);
    c->sys->destroy(pool);
    bench_sort_doubles(lat, n);
    emit_begin(c);
    bench_json_num("ticks", n);
    bench_json_num("wall_s", wall);
    bench_json_num("cpu_s", cpu);
    bench_json_num("p50_us", bench_percentile(lat, n, 50));
    bench_json_num("p99_us", bench_percentile(lat, n, 99));
    bench_json_end();
    free(lat);
}

void wl_idle(const run_ctx *c) {
    /* A system without detached jobs (serial) has no pool to sit idle. */
    if (!c->sys->pieces || !c->sys->submit)
        return;
    spin_work w;
    bench_pool *pool = warm_pool(c, &w, 20, BURST_GAP_NS);
    bench_span span = bench_span_start();
    bench_sleep_ns((uint64_t)(c->sz->idle_s * 1e9));
    double wall, cpu;
    bench_span_stop(&span, &wall, &cpu);
    c->sys->destroy(pool);
    emit_begin(c);
    bench_json_num("wall_s", wall);
    bench_json_num("cpu_s", cpu);
    bench_json_num("cpu_per_wall", cpu / wall);
    bench_json_end();
}
