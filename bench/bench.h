/* SPDX-License-Identifier: MIT */
/* bench.h: what every benchmark program shares.
 *
 * A benchmark program is the driver (driver.c: command line and sizes; wl_*.c:
 * the workloads, their measurement and JSON output) linked with one "system"
 * file that says how to run each workload's parallel shape on that scheduler
 * (bench_system below).
 * The driver is the same object code for every system, so every system is
 * timed, checked and reported by the same lines; the system files hold only
 * the scheduler calls.
 *
 * This header holds the helpers the driver and the system files share:
 * clocks, CPU time, busy-spin, percentiles, JSON output, and the small
 * sequential kernels (loop body, n-queens step) that must be the same code on
 * every system. It is valid C11 and C++ (the TBB program includes it).
 */
#ifndef BENCH_H
#define BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- clocks ------------------------------------------------------------ */

static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* User + system CPU time of the whole process (every thread), in seconds.
 * Only meaningful over regions of 100 ms or more: the kernel may account a
 * thread's time a tick (up to 4 ms) late. */
static inline double bench_cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Busy-wait for ns nanoseconds of wall time, reading CLOCK_MONOTONIC: the
 * "job of N microseconds" of every workload. */
static inline void bench_spin_ns(uint64_t ns) {
    uint64_t start = bench_now_ns();
    while (bench_now_ns() - start < ns) {
    }
}

/* Sleep until an absolute CLOCK_MONOTONIC time, resuming after signals. */
static inline void bench_sleep_until_ns(uint64_t deadline) {
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline / 1000000000u);
    ts.tv_nsec = (long)(deadline % 1000000000u);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

static inline void bench_sleep_ns(uint64_t ns) {
    bench_sleep_until_ns(bench_now_ns() + ns);
}

/* A region measured by wall clock and process CPU time. */
typedef struct bench_span {
    uint64_t wall_ns;
    double cpu_s;
} bench_span;

static inline bench_span bench_span_start(void) {
    bench_span s;
    s.cpu_s = bench_cpu_s();
    s.wall_ns = bench_now_ns();
    return s;
}

/* Turn a started span into the region's length: wall seconds and CPU seconds. */
static inline void bench_span_stop(bench_span *s, double *wall_s, double *cpu_s) {
    uint64_t end = bench_now_ns();
    *cpu_s = bench_cpu_s() - s->cpu_s;
    *wall_s = 1e-9 * (double)(end - s->wall_ns);
}

/* ---- percentiles ------------------------------------------------------- */

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline void bench_sort_doubles(double *v, size_t n) {
    qsort(v, n, sizeof *v, bench_cmp_double);
}

/* Nearest-rank percentile p (0..100] of n sorted values. */
static inline double bench_percentile(const double *sorted, size_t n, double p) {
    if (n == 0)
        return 0.0;
    size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

/* ---- JSON lines -------------------------------------------------------- */

/* One result line: bench_json_begin, any number of fields, bench_json_end. */
static inline void bench_json_begin(const char *system, const char *workload, unsigned threads,
                                    int run) {
    printf("{\"system\":\"%s\",\"workload\":\"%s\",\"threads\":%u,\"run\":%d", system, workload,
           threads, run);
}

static inline void bench_json_num(const char *key, double value) {
    printf(",\"%s\":%.9g", key, value);
}

static inline void bench_json_end(void) {
    printf("}\n");
    fflush(stdout);
}

/* ---- sequential kernels shared by every system ------------------------- */

/* The loop workload's body: trivial work per index. Vectorised on every
 * system (programs are built with -fopenmp-simd): gcc's -O2 cost model would
 * leave it scalar while clang and rustc vectorise it, and the loop workload
 * would then compare compilers instead of schedulers. */
static inline void bench_loop_kernel(int *a, size_t begin, size_t end) {
#pragma omp simd
    for (size_t i = begin; i < end; i++)
        a[i] += 1;
}

/* The uneven workload's body: index i of [0, n) runs a chain of 40 LCG
 * steps, sixteen times as many in the first eighth of the range, so that an
 * eighth of the indices holds 70% of the work (a culling pass whose near
 * objects cost most), and stores the chain's end where the compiler must
 * keep it. a[i] counts the visits. */
static inline void bench_uneven_kernel(uint32_t *x, int *a, size_t n, size_t begin, size_t end) {
    for (size_t i = begin; i < end; i++) {
        unsigned steps = i < n / 8 ? 16 * 40 : 40;
        uint32_t v = (uint32_t)i;
        for (unsigned k = 0; k < steps; k++)
            v = v * 1103515245u + 12345u;
        x[i] = v;
        a[i] += 1;
    }
}

/* N-queens as a search tree: a node is a board with `row` queens placed and
 * the list of columns where the next queen fits. Every system walks it the
 * same way: split the candidate list in halves (a fork) until one candidate
 * is left, place it (bench_nq_leaf) and recurse into the child board. */
#define BENCH_NQ_MAX 16

typedef struct bench_nq {
    int n, row, ncand;
    unsigned cols, d1, d2;
    unsigned cand[BENCH_NQ_MAX];
} bench_nq;

static inline void bench_nq_fill(bench_nq *s) {
    unsigned full = (1u << s->n) - 1;
    unsigned free_cols = full & ~(s->cols | s->d1 | s->d2);
    s->ncand = 0;
    while (free_cols) {
        unsigned bit = free_cols & (0u - free_cols);
        s->cand[s->ncand++] = bit;
        free_cols &= free_cols - 1;
    }
}

static inline void bench_nq_root(bench_nq *s, int n) {
    s->n = n;
    s->row = 0;
    s->cols = s->d1 = s->d2 = 0;
    bench_nq_fill(s);
}

/* Place candidate i of s. Returns the solutions this placement settles (1 if
 * it completes the board, 0 if the child board is a dead end), or -1 when the
 * child board, written to *child, must be searched. */
static inline long bench_nq_leaf(const bench_nq *s, int i, bench_nq *child) {
    unsigned bit = s->cand[i];
    if (s->row + 1 == s->n)
        return 1;
    child->n = s->n;
    child->row = s->row + 1;
    child->cols = s->cols | bit;
    child->d1 = ((s->d1 | bit) << 1) & ((1u << s->n) - 1);
    child->d2 = (s->d2 | bit) >> 1;
    bench_nq_fill(child);
    return child->ncand ? -1 : 0;
}

/* Solutions below candidate i of s: bench_nq_leaf, then search(child) when
 * the child board must be searched. */
static inline long bench_nq_place(const bench_nq *s, int i, long (*search)(const bench_nq *child)) {
    bench_nq child;
    long k = bench_nq_leaf(s, i, &child);
    return k >= 0 ? k : search(&child);
}

/* ---- Lace's suite: pi, knapsack, uts (wl_lace.c) ------------------------
 * Lace's own benchmarks beside fib and nqueens, each a tree of forks over a
 * kernel of a few instructions, from the serial algorithms: every system
 * forks where Lace's versions SPAWN and calls where they CALL. Inputs come
 * from a counter-based hash instead of a file or a per-thread generator, so
 * that every system computes the same result and the driver checks it. */

/* SplitMix64's finaliser: a good 64-bit mix of x. */
static inline uint64_t bench_mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Pi by Monte Carlo: sample i is a point of the unit square; 1 if it lies
 * in the quarter disc. A range [start, start + cnt) of samples splits in
 * halves down to one sample (Lace's pi: SPAWN the first half, CALL the
 * second). */
static inline long bench_pi_sample(uint64_t i) {
    uint64_t h = bench_mix64(i);
    double x = (double)(h >> 40) * (1.0 / 16777216), y = (double)(h & 0xffffff) * (1.0 / 16777216);
    return x * x + y * y < 1.0;
}

/* 0-1 knapsack by exhaustive branch and bound on capacity (Lace's knapsack,
 * without its racy best-so-far pruning, which it leaves commented out): a
 * node is the items from e on, the capacity c left, n items left, the value
 * v so far; it SPAWNs "without e" and CALLs "with e". */
#define BENCH_KNAP_MAX 64
typedef struct bench_item {
    int value, weight;
} bench_item;
typedef struct bench_knap {
    int n, capacity;
    bench_item items[BENCH_KNAP_MAX];
} bench_knap;

/* The best value of items e[0..n) into capacity c, v so far, where a child
 * node is searched by knap(e + 1, c', n - 1, v'): the kernel every system's
 * node runs before and after its fork. */
static inline bool bench_knap_leaf(int c, int n, int v, long *best) {
    if (c < 0) {
        *best = -1; /* infeasible: below every feasible value (values are >= 0) */
        return true;
    }
    if (n == 0 || c == 0) {
        *best = v;
        return true;
    }
    return false;
}

/* The knapsack's serial recursion (wl_lace.c): the serial system's run and
 * the driver's reference. */
long bench_knap_serial(const bench_item *e, int c, int n, int v);

/* Unbalanced tree search (UTS), a geometric tree of fixed shape (UTS's
 * T1 family): a node below depth `depth` has a number of children drawn
 * from a geometric distribution of mean BENCH_UTS_B, from its own 64-bit
 * state (UTS hashes with SHA-1; a 64-bit mix serves the same purpose
 * here). Every system splits a node's children in halves down to one
 * child, as nqueens splits its candidates. The count of nodes is checked. */
#define BENCH_UTS_B 4 /* mean children of an inner node */
static inline int bench_uts_children(uint64_t state, int level, int depth) {
    if (level >= depth)
        return 0;
    /* Trials that each stop with probability p = 1 / (B + 1): P(k) =
     * p (1 - p)^k, of mean (1 - p) / p = B (no libm, no table). */
    int k = 0;
    for (uint64_t h = bench_mix64(state); h % (BENCH_UTS_B + 1) != 0; h = bench_mix64(h))
        k++;
    return k;
}
static inline uint64_t bench_uts_child(uint64_t state, int i) {
    return bench_mix64(state ^ (0x5851f42d4c957f2dull * (uint64_t)(i + 1)));
}

/* Mergesort pieces (wl_fork.c): sort a[0..n) serially using tmp[0..n), and
 * merge the sorted runs a[0..mid) and a[mid..n) through tmp. */
void bench_msort_leaf(int *a, int *tmp, size_t n);
void bench_merge(int *a, size_t mid, size_t n, int *tmp);

/* The algorithms' serial references, std::sort and std::inclusive_scan
 * (std_algorithms.cpp, in the serial program where a C++ compiler is). */
void bench_std_sort(uint64_t *a, size_t n);
void bench_std_scan(const uint64_t *in, uint64_t *out, size_t n);

/* ---- the system interface ---------------------------------------------- */

typedef struct bench_pool bench_pool; /* whatever the system's pool is */
typedef void bench_job_fn(void *arg);
typedef void bench_piece_fn(size_t i, void *arg);
typedef void bench_range_fn(size_t begin, size_t end, void *arg);

/* create() flag: the pool will get detached jobs from an outside thread that
 * does not take part in the work (sporadic), so every one of the `threads`
 * must be a worker. Without it the calling thread may be one of them. */
#define BENCH_POOL_SUBMIT 1u

/* How one system runs each workload. A NULL entry means the system has no
 * such shape (the serial reference has no pool to submit to); the driver then
 * prints nothing for that workload. Every entry that takes a pool is called
 * from the thread that created it, outside the pool, except submit, which is
 * called from inside outside()'s callback. */
typedef struct bench_system {
    const char *name;
    int variant; /* system-specific: which configuration of the library */
    int hidden;  /* not listed by --systems: run by name (bench/policy.sh) */
    /* Its pools take work from one outside thread at a time: the workloads
     * that call in from several (pools) skip it. */
    int one_caller;
    bench_pool *(*create)(const struct bench_system *sys, unsigned threads, unsigned flags);
    void (*destroy)(bench_pool *pool);
    long (*fib)(bench_pool *pool, int n);             /* fork at every call */
    void (*loop)(bench_pool *pool, int *a, size_t n); /* default partitioner */
    long (*nqueens)(bench_pool *pool, int n);         /* fork at every placement */
    void (*msort)(bench_pool *pool, int *a, int *tmp, size_t n, size_t cutoff);
    /* A parallel loop of n pieces of one index each; waits for all. */
    void (*pieces)(bench_pool *pool, size_t n, bench_piece_fn *fn, void *arg);
    /* n separately spawned jobs (a scope / task group); waits for all. */
    void (*jobs)(bench_pool *pool, size_t n, bench_piece_fn *fn, void *arg);
    /* Run fn(arg) as the outside thread that submits detached jobs; NULL: the
     * calling thread is that thread, call fn directly. */
    void (*outside)(bench_pool *pool, bench_job_fn *fn, void *arg);
    void (*submit)(bench_pool *pool, bench_job_fn *fn, void *arg); /* detached job */
    void (*roundtrip)(bench_pool *pool); /* run an empty job in the pool, wait */
    /* A detached job at high priority (NULL: no priorities; the priority
     * workload then submits normally, for reference). */
    void (*submit_high)(bench_pool *pool, bench_job_fn *fn, void *arg);
    /* A task graph of n nodes running fn(i, arg), built once and run `runs`
     * times, each run waited for. shape BENCH_GRAPH_WIDE: node 0 before nodes
     * 1..n-2, all before node n-1; BENCH_GRAPH_DEEP: a chain 0 -> 1 -> ... */
    void (*graph)(bench_pool *pool, int shape, size_t n, bench_piece_fn *fn, void *arg,
                  unsigned runs);
    /* A parallel loop over [0, n) with the default partitioner, as loop,
     * calling fn on the subranges it makes; waits for all. */
    void (*range)(bench_pool *pool, size_t n, bench_range_fn *fn, void *arg);
    /* Lace's suite (above): samples inside the quarter disc of `samples`;
     * the best value of knapsack k; the nodes of a tree of `depth`
     * levels under root state `root`. */
    long (*pi)(bench_pool *pool, long samples);
    long (*knapsack)(bench_pool *pool, const bench_knap *k);
    long (*uts)(bench_pool *pool, uint64_t root, int depth);
    /* The algorithms (wl_sort.c): sort a[0, n) into ascending order; set
     * out[i] = in[0] + ... + in[i], modulo 2^64 (an inclusive scan). */
    void (*sort)(bench_pool *pool, uint64_t *a, size_t n);
    void (*scan)(bench_pool *pool, const uint64_t *in, uint64_t *out, size_t n);
    /* A job is about to block outside the scheduler, and runs on again
     * (wl_blocking.c); NULL: the system has no way to say so, and loses the
     * job's worker while it blocks. */
    void (*blocking_begin)(void);
    void (*blocking_end)(void);
} bench_system;

enum { BENCH_GRAPH_WIDE, BENCH_GRAPH_DEEP };

/* The members that every system file defines as static functions of these
 * names, for its bench_system initialiser. */
#define BENCH_SYSTEM_COMMON                                                                        \
    .create = create, .destroy = destroy, .fib = fib, .loop = loop, .nqueens = nqueens,            \
    .msort = msort, .pieces = pieces

/* Defined by each program's system file: the i-th system it provides, NULL
 * past the last. */
const bench_system *bench_system_get(unsigned i);

/* The driver's entry point; a program's main() is just this. */
int bench_main(int argc, char **argv);

/* Print "FAIL <what>" to stderr and exit(1): results are wrong or a call
 * failed, and no number from this run may be trusted. */
void bench_die(const char *what, const char *detail);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_H */
