/* SPDX-License-Identifier: MIT */
/* driver.c: command line, sizes and the table of workloads, shared by every
 * benchmark program (see bench.h). The workloads themselves, with their
 * measurement and checks, are in wl_*.c (see driver.h). One invocation runs
 * one workload of one system for one run index, at each of the workload's
 * pool sizes, and prints one JSON line per measurement.
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

/* Full sizes are the benchmark; smoke sizes only keep every program and code
 * path exercised. */
static const sizes full_sizes = {30,   35,       10000000, 100,  12,       10000000, 2048, 2000,
                                 0.25, 10000,    0.2,      1000, 300,      1.0,      20,   65536,
                                 20,   1L << 23, 24,       10,   10000000, 20000000, 10,   10};
static const sizes smoke_sizes = {20,   22,       200000, 2,  8,      200000, 2048, 100,
                                  0.03, 1000,     0.0,    50, 20,     0.1,    2,    4096,
                                  2,    1L << 12, 12,     5,  100000, 100000, 2,    1};

void bench_die(const char *what, const char *detail) {
    fprintf(stderr, "FAIL %s: %s\n", what, detail);
    exit(1);
}

/* ---- command line ------------------------------------------------------ */

typedef struct workload {
    const char *name;
    void (*run)(const run_ctx *c);
    unsigned threads[3]; /* pool sizes, 0-terminated */
    int hidden;          /* not listed by --list: run by name (bench/policy.sh) */
} workload;

static const workload workloads[] = {
    {"fib30", wl_fib30, {1, 2, 0}, 0},
    {"fib35", wl_fib35, {1, 2, 0}, 0},
    {"loop", wl_loop, {1, 2, 0}, 0},
    {"nqueens12", wl_nqueens, {1, 2, 0}, 0},
    {"msort", wl_msort, {1, 2, 0}, 0},
    {"sporadic", wl_sporadic, {2, 8, 0}, 0},
    {"sweep", wl_sweep, {8, 0, 0}, 0},
    {"roundtrip", wl_roundtrip, {8, 0, 0}, 0},
    {"burst", wl_burst, {2, 8, 0}, 0},
    {"control", wl_control, {8, 0, 0}, 0},
    {"priority", wl_priority, {2, 0, 0}, 0},
    {"graph", wl_graph, {1, 2, 0}, 0},
    {"idle", wl_idle, {8, 0, 0}, 0},
    {"burst5ms", wl_burst5ms, {2, 8, 0}, 1},
    {"pools", wl_pools, {8, 0, 0}, 0},
    {"uneven", wl_uneven, {2, 8, 0}, 0},
    {"priority_loop", wl_priority_loop, {2, 0, 0}, 0},
    {"pi", wl_pi, {1, 2, 0}, 0},
    {"knapsack", wl_knapsack, {1, 2, 0}, 0},
    {"uts", wl_uts, {1, 2, 0}, 0},
    {"sort", wl_sort, {1, 2, 0}, 0},
    {"scan", wl_scan, {1, 2, 0}, 0},
    {"blocking", wl_blocking, {2, 0, 0}, 0},
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
