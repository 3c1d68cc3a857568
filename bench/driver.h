/* SPDX-License-Identifier: MIT */
/* driver.h: what driver.c (command line, sizes, workload table) shares with
 * the workload files. The driver is driver.c and every bench/wl_*.c, one file
 * a workload or a small family of them; every program links all of them (the
 * build files take wl_*.c by name pattern). A new workload: a wl_*.c, its
 * declaration below and its row in driver.c's table.
 */
#ifndef BENCH_DRIVER_H
#define BENCH_DRIVER_H

#include "bench.h"

#include <errno.h>
#include <stdbool.h>

/* Sizes of every workload (the full and smoke values: driver.c). */
typedef struct sizes {
    int fib30, fib35;         /* fib(n) */
    size_t loop_n;            /* loop iterations per call */
    int loop_reps;            /* timed calls per run (one call is a few ms) */
    int nqueens;              /* board size */
    size_t msort_n;           /* elements */
    size_t msort_cutoff;      /* serial below this many elements */
    unsigned sporadic_jobs;   /* jobs per sporadic run */
    double sweep_point_s;     /* target length of one sweep point */
    unsigned roundtrip_calls; /* at least this many calls... */
    double roundtrip_min_s;   /* ...and at least this long */
    unsigned burst_iters;     /* bursts per run */
    unsigned control_iters;   /* control ticks per run */
    double idle_s;            /* idle time measured */
    int pools_rounds;         /* rounds per driver of the pools workload */
    size_t uneven_n;          /* indices of the uneven loop */
    int uneven_reps;          /* timed calls per run */
    long pi_samples;          /* pi: samples, one leaf each */
    int knap_items;           /* knapsack: items */
    int uts_depth;            /* uts: levels of the tree */
    size_t sort_n;            /* sort: keys */
    size_t scan_n;            /* scan: elements */
    int scan_reps;            /* scan: timed calls per run */
    int blocking_reps;        /* blocking: timed batches of BLOCKING_JOBS jobs per run */
} sizes;

#define US 1000u
#define MS 1000000u

typedef struct run_ctx {
    const bench_system *sys;
    const sizes *sz;
    const char *workload;
    unsigned threads;
    int run;
} run_ctx;

static inline void check(const run_ctx *c, bool ok, const char *detail) {
    if (!ok) {
        char what[160];
        snprintf(what, sizeof what, "%s %s threads=%u", c->sys->name, c->workload, c->threads);
        bench_die(what, detail);
    }
}

static inline void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p)
        bench_die("malloc", strerror(ENOMEM));
    return p;
}

static inline void emit_begin(const run_ctx *c) {
    bench_json_begin(c->sys->name, c->workload, c->threads, c->run);
}

/* The workloads: each runs at one pool size (c->threads) and prints its JSON
 * lines, or nothing when the system lacks the shape it needs. */
void wl_fib30(const run_ctx *c);         /* wl_fork.c */
void wl_fib35(const run_ctx *c);         /* wl_fork.c */
void wl_nqueens(const run_ctx *c);       /* wl_fork.c */
void wl_msort(const run_ctx *c);         /* wl_fork.c */
void wl_loop(const run_ctx *c);          /* wl_loop.c */
void wl_uneven(const run_ctx *c);        /* wl_loop.c */
void wl_sporadic(const run_ctx *c);      /* wl_sporadic.c */
void wl_sweep(const run_ctx *c);         /* wl_sporadic.c */
void wl_priority(const run_ctx *c);      /* wl_priority.c */
void wl_priority_loop(const run_ctx *c); /* wl_priority.c */
void wl_graph(const run_ctx *c);         /* wl_graph.c */
void wl_roundtrip(const run_ctx *c);     /* wl_roundtrip.c */
void wl_burst(const run_ctx *c);         /* wl_burst.c */
void wl_burst5ms(const run_ctx *c);      /* wl_burst.c */
void wl_control(const run_ctx *c);       /* wl_burst.c */
void wl_idle(const run_ctx *c);          /* wl_burst.c */
void wl_pools(const run_ctx *c);         /* wl_pools.c */
void wl_pi(const run_ctx *c);            /* wl_lace.c */
void wl_knapsack(const run_ctx *c);      /* wl_lace.c */
void wl_uts(const run_ctx *c);           /* wl_lace.c */
void wl_sort(const run_ctx *c);          /* wl_sort.c */
void wl_scan(const run_ctx *c);          /* wl_sort.c */
void wl_blocking(const run_ctx *c);      /* wl_blocking.c */

/* fib(n), computed without recursion: the reference (wl_fork.c). */
long fib_value(int n);

#endif /* BENCH_DRIVER_H */
