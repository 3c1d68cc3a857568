/* SPDX-License-Identifier: MIT */
/* driver.c: command line, workloads, measurement and checks, shared by every
 * benchmark program (see bench.h). One invocation runs one workload of one
 * system for one run index, at each of the workload's pool sizes, and prints
 * one JSON line per measurement.
 *
 *   PROG --system NAME --workload NAME [--run R] [--smoke] [--threads T]
 *   PROG --list            print the workload names, one a line
 *   PROG --systems         print the system names, one a line
 *
 * Exit status: 0 (also when the system has no such workload: nothing is
 * printed), 1 when a result is wrong or a call failed ("FAIL ..." on stderr),
 * 2 on a usage error.
 */
#include "driver.h"

#include <sched.h> /* sched_getcpu (Linux) */
#include <semaphore.h>
#include <stdatomic.h>

/* Full sizes are the benchmark; smoke sizes only keep every program and code
 * path exercised. */
static const sizes full_sizes = {30,   35,   10000000, 100, 12,   10000000, 2048,
                                 2000, 0.25, 10000,    0.2, 1000, 300,      1.0};
static const sizes smoke_sizes = {20,  22,   200000, 2,   8,  200000, 2048,
                                  100, 0.03, 1000,   0.0, 50, 20,     0.1};

/* Parameters fixed by the workload definitions (docs/performance.md). */
#define SPORADIC_PERIOD_NS (500 * US)
#define SPORADIC_JOB_NS    (20 * US)
#define BURST_PIECES       64
#define BURST_PIECE_NS     (5 * US)
#define BURST_GAP_NS       (200 * US)
#define CONTROL_JOBS       16
#define CONTROL_JOB_NS     (2 * US)
#define CONTROL_SERIAL_NS  (200 * US)
#define CONTROL_IDLE_NS    (3 * MS)
#define ROUNDTRIP_SAMPLES  200000u /* latencies kept for the percentiles */

void bench_die(const char *what, const char *detail) {
    fprintf(stderr, "FAIL %s: %s\n", what, detail);
    exit(1);
}

/* ---- loop ------------------------------------------------------------- */

static void wl_loop(const run_ctx *c) {
    if (!c->sys->loop)
        return;
    size_t n = c->sz->loop_n;
    int *a = xmalloc(n * sizeof *a);
    memset(a, 0, n * sizeof *a);
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    c->sys->loop(pool, a, n); /* warm-up: threads started, pages touched */
    uint64_t t0 = bench_now_ns();
    for (int r = 0; r < c->sz->loop_reps; r++)
        c->sys->loop(pool, a, n);
    double wall = 1e-9 * (double)(bench_now_ns() - t0) / c->sz->loop_reps;
    c->sys->destroy(pool);
    for (size_t i = 0; i < n; i++)
        check(c, a[i] == c->sz->loop_reps + 1, "an index was not visited exactly once per call");
    free(a);
    emit_begin(c);
    bench_json_num("n", (double)n);
    bench_json_num("wall_s", wall);
    bench_json_end();
}

/* ---- sporadic: detached jobs from an outside thread -------------------- */

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

static void wl_sporadic(const run_ctx *c) {
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
static void wl_sweep(const run_ctx *c) {
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

/* ---- priority: a high-priority job while the pool is flooded ---------- */

#define FLOOD_JOBS   200
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
    _Atomic unsigned done; /* flood jobs and probes finished */
    sem_t all_done;
} flood;

static void flood_finish(flood *f) {
    if (atomic_fetch_add_explicit(&f->done, 1, memory_order_acq_rel) + 1 == FLOOD_JOBS + PROBES)
        sem_post(&f->all_done);
}

static flood *the_flood; /* one per process run */

static void flood_job(void *arg) {
    (void)arg;
    bench_spin_ns(FLOOD_JOB_NS);
    flood_finish(the_flood);
}

static void probe_job(void *arg) {
    probe *p = arg;
    atomic_store_explicit(&p->start_ns, bench_now_ns(), memory_order_relaxed);
    flood_finish(the_flood);
}

/* The outside thread: 200 ms of normal jobs at once, then a probe job every
 * 5 ms, at high priority where the system has priorities. */
static void flood_submitter(void *arg) {
    flood *f = arg;
    const bench_system *s = f->c->sys;
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

static void wl_priority(const run_ctx *c) {
    if (!c->sys->submit)
        return;
    flood *f = xmalloc(sizeof *f);
    memset(f, 0, sizeof *f);
    f->c = c;
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
    bench_json_num("flood_ms", (double)FLOOD_JOBS * FLOOD_JOB_NS / MS / c->threads);
    bench_json_num("p50_us", bench_percentile(lat, PROBES, 50));
    bench_json_num("max_us", lat[PROBES - 1]);
    bench_json_end();
    sem_destroy(&f->all_done);
    free(f);
}

/* ---- graphs: wide and deep, built once, run many times ------------------ */

#define GRAPH_NODES 256
#define GRAPH_RUNS  50

typedef struct graph_work {
    uint64_t ns;
    _Atomic unsigned long count;
} graph_work;

static void graph_node(size_t i, void *arg) {
    (void)i;
    graph_work *w = arg;
    bench_spin_ns(w->ns);
    atomic_fetch_add_explicit(&w->count, 1, memory_order_relaxed);
}

static void graph_shape(const run_ctx *c, bench_pool *pool, int shape, uint64_t node_ns,
                        const char *key) {
    graph_work w = {node_ns, 0};
    c->sys->graph(pool, shape, GRAPH_NODES, graph_node, &w, 2); /* warm-up */
    bench_span span = bench_span_start();
    c->sys->graph(pool, shape, GRAPH_NODES, graph_node, &w, GRAPH_RUNS);
    double wall, cpu;
    bench_span_stop(&span, &wall, &cpu);
    check(c, atomic_load(&w.count) == (unsigned long)GRAPH_NODES * (GRAPH_RUNS + 2),
          "a graph node did not run exactly once per run");
    bench_json_num(key, 1e6 * wall / GRAPH_RUNS);
}

static void wl_graph(const run_ctx *c) {
    if (!c->sys->graph)
        return;
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    emit_begin(c);
    bench_json_num("nodes", GRAPH_NODES);
    graph_shape(c, pool, BENCH_GRAPH_WIDE, 20 * US, "wide_us_per_run"); /* 20 us nodes */
    graph_shape(c, pool, BENCH_GRAPH_DEEP, 2 * US, "deep_us_per_run");  /* 2 us nodes */
    bench_json_end();
    c->sys->destroy(pool);
}

/* ---- roundtrip: an empty job in the pool, from outside, waited for ---- */

static void wl_roundtrip(const run_ctx *c) {
    if (!c->sys->roundtrip)
        return;
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    for (int i = 0; i < 100; i++)
        c->sys->roundtrip(pool);
    double *us = xmalloc(ROUNDTRIP_SAMPLES * sizeof *us);
    uint64_t min_ns = (uint64_t)(c->sz->roundtrip_min_s * 1e9);
    unsigned long calls = 0;
    bench_span span = bench_span_start();
    uint64_t t = span.wall_ns;
    /* Enough calls for the median, and long enough for the CPU figure: a
     * system whose round trip is very cheap keeps going unsampled. */
    while (calls < c->sz->roundtrip_calls || t - span.wall_ns < min_ns) {
        c->sys->roundtrip(pool);
        uint64_t t1 = bench_now_ns();
        if (calls < ROUNDTRIP_SAMPLES)
            us[calls] = 1e-3 * (double)(t1 - t);
        calls++;
        t = t1;
    }
    double wall, cpu;
    bench_span_stop(&span, &wall, &cpu);
    c->sys->destroy(pool);
    size_t samples = calls < ROUNDTRIP_SAMPLES ? calls : ROUNDTRIP_SAMPLES;
    bench_sort_doubles(us, samples);
    emit_begin(c);
    bench_json_num("calls", (double)calls);
    bench_json_num("us_median", bench_percentile(us, samples, 50));
    bench_json_num("us_p99", bench_percentile(us, samples, 99));
    bench_json_num("wall_s", wall);
    bench_json_num("cpu_s", cpu);
    bench_json_num("cpu_per_wall", cpu / wall);
    bench_json_end();
    free(us);
}

/* ---- burst, control, idle: short parallel work between serial gaps ---- */

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

static void burst_with_gap(const run_ctx *c, uint64_t gap_ns, unsigned iters) {
    if (!c->sys->pieces)
        return;
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    spin_work w;
    spin_work_init(&w, BURST_PIECE_NS);
    bursts(c, pool, 5, &w, gap_ns);
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

static void wl_burst(const run_ctx *c) {
    burst_with_gap(c, BURST_GAP_NS, c->sz->burst_iters);
}

/* The same with 5 ms gaps (the leave-policy table): long enough for idle
 * workers to sleep; 200 bursts keep the run near one second. */
static void wl_burst5ms(const run_ctx *c) {
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

static void wl_control(const run_ctx *c) {
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

static void wl_idle(const run_ctx *c) {
    /* A system without detached jobs (serial) has no pool to sit idle. */
    if (!c->sys->pieces || !c->sys->submit)
        return;
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    spin_work w;
    spin_work_init(&w, BURST_PIECE_NS);
    bursts(c, pool, 20, &w, BURST_GAP_NS);
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

/* ---- command line ------------------------------------------------------ */

typedef struct workload {
    const char *name;
    void (*run)(const run_ctx *c);
    unsigned threads[3]; /* pool sizes, 0-terminated */
    int hidden;          /* not listed by --list: run by name (bench/policy.sh) */
} workload;

static const workload workloads[] = {
    {"fib30", wl_fib30, {1, 2, 0}, 0},       {"fib35", wl_fib35, {1, 2, 0}, 0},
    {"loop", wl_loop, {1, 2, 0}, 0},         {"nqueens12", wl_nqueens, {1, 2, 0}, 0},
    {"msort", wl_msort, {1, 2, 0}, 0},       {"sporadic", wl_sporadic, {2, 8, 0}, 0},
    {"sweep", wl_sweep, {8, 0, 0}, 0},       {"roundtrip", wl_roundtrip, {8, 0, 0}, 0},
    {"burst", wl_burst, {2, 8, 0}, 0},       {"control", wl_control, {8, 0, 0}, 0},
    {"priority", wl_priority, {2, 0, 0}, 0}, {"graph", wl_graph, {1, 2, 0}, 0},
    {"idle", wl_idle, {8, 0, 0}, 0},         {"burst5ms", wl_burst5ms, {2, 8, 0}, 1},
};
#define NWORKLOADS (sizeof workloads / sizeof workloads[0])

static int usage(const char *prog) {
    fprintf(stderr,
            "usage: %s --system NAME --workload NAME [--run R] [--smoke] [--threads T]\n"
            "       %s --list | --systems\n",
            prog, prog);
    return 2;
}

static const bench_system *find_system(const char *name) {
    const bench_system *s;
    for (unsigned i = 0; (s = bench_system_get(i)) != NULL; i++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

static const workload *find_workload(const char *name) {
    for (size_t i = 0; i < NWORKLOADS; i++)
        if (strcmp(workloads[i].name, name) == 0)
            return &workloads[i];
    return NULL;
}

static void list(bool systems) {
    const bench_system *s;
    if (systems) {
        for (unsigned i = 0; (s = bench_system_get(i)) != NULL; i++)
            if (!s->hidden)
                puts(s->name);
    } else {
        for (size_t i = 0; i < NWORKLOADS; i++)
            if (!workloads[i].hidden)
                puts(workloads[i].name);
    }
}

int bench_main(int argc, char **argv) {
    const char *sys_name = NULL, *wl_name = NULL;
    run_ctx c = {NULL, &full_sizes, NULL, 0, 0};
    unsigned only_threads = 0;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (strcmp(argv[i], "--list") == 0 || strcmp(argv[i], "--systems") == 0) {
            list(strcmp(argv[i], "--systems") == 0);
            return 0;
        } else if (strcmp(argv[i], "--smoke") == 0) {
            c.sz = &smoke_sizes;
        } else if (strcmp(argv[i], "--system") == 0 && more) {
            sys_name = argv[++i];
        } else if (strcmp(argv[i], "--workload") == 0 && more) {
            wl_name = argv[++i];
        } else if (strcmp(argv[i], "--run") == 0 && more) {
            c.run = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--threads") == 0 && more) {
            only_threads = (unsigned)atoi(argv[++i]);
        } else {
            return usage(argv[0]);
        }
    }
    const workload *wl = wl_name ? find_workload(wl_name) : NULL;
    c.sys = sys_name ? find_system(sys_name) : NULL;
    if (!wl || !c.sys)
        return usage(argv[0]);
    c.workload = wl->name;
    for (const unsigned *t = wl->threads; *t; t++) {
        c.threads = only_threads ? only_threads : *t;
        wl->run(&c);
        if (only_threads)
            break;
    }
    return 0;
}

#ifndef BENCH_NO_MAIN
int main(int argc, char **argv) {
    return bench_main(argc, argv);
}
#endif
