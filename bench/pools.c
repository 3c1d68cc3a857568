/* SPDX-License-Identifier: MIT */
/* Several pools in one process (issue 21, part 3's workload): DRIVERS plain
 * threads each run ROUNDS of fib(FIB_N) through weft_join and a weft_for over
 * LOOP_N indices, from outside, in one of three layouts:
 *   four:   each driver on a pool of its own of POOL_THREADS workers (a
 *           program with its own pools and a library with another: every
 *           pool thinks it owns every CPU);
 *   shared: the drivers share one pool of POOL_THREADS;
 *   alone:  one driver on one pool (what a single pool costs).
 * One JSON line per layout: wall seconds from the drivers' common start to
 * the last one's end, process CPU seconds, and the process's involuntary and
 * voluntary context switches (getrusage) over the same span. The layouts
 * rotate their order from run to run. */
#include "bench.h" /* first: it defines _GNU_SOURCE */

#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#define DRIVERS      4
#define POOL_THREADS 8
#define ROUNDS       20
#define FIB_N        27
#define LOOP_N       1000000

static void fail(const char *what) {
    fprintf(stderr, "FAIL pools: %s\n", what);
    exit(1);
}

typedef struct fib_arg {
    int n;
    long r;
} fib_arg;

static void fib(void *arg) {
    fib_arg *f = arg;
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    fib_arg a = {f->n - 1, 0}, b = {f->n - 2, 0};
    weft_join(fib, &a, fib, &b);
    f->r = a.r + b.r;
}

static long fib_expected; /* fib(FIB_N), computed serially before any run */

static long fib_serial(int n) {
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

static void loop_body(size_t begin, size_t end, void *arg) {
    bench_loop_kernel((int *)arg, begin, end);
}

typedef struct driver {
    weft_pool *pool;
    int *data;
    int rounds;
    pthread_barrier_t *start;
} driver;

static void *drive(void *arg) {
    driver *d = arg;
    pthread_barrier_wait(d->start);
    for (int r = 0; r < d->rounds; r++) {
        fib_arg f = {FIB_N, 0};
        weft_run(d->pool, fib, &f);
        if (f.r != fib_expected)
            fail("fib");
        weft_for(d->pool, 0, LOOP_N, 0, loop_body, d->data);
    }
    return NULL;
}

static void context_switches(long *involuntary, long *voluntary) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *involuntary = ru.ru_nivcsw;
    *voluntary = ru.ru_nvcsw;
}

static weft_pool *make_pool(void) {
    weft_pool *p;
    if (weft_pool_create(&p, &(weft_config){.threads = POOL_THREADS}) != 0)
        fail("weft_pool_create");
    return p;
}

static void run_layout(const char *layout, int run, int rounds) {
    int drivers = strcmp(layout, "alone") == 0 ? 1 : DRIVERS;
    bool own = strcmp(layout, "four") == 0;
    weft_pool *pools[DRIVERS] = {0};
    driver d[DRIVERS];
    pthread_t t[DRIVERS];
    pthread_barrier_t start;
    if (pthread_barrier_init(&start, NULL, (unsigned)drivers + 1) != 0)
        fail("pthread_barrier_init");
    for (int i = 0; i < drivers; i++) {
        pools[i] = own || i == 0 ? make_pool() : pools[0];
        d[i] = (driver){.pool = pools[i], .rounds = rounds, .start = &start};
        d[i].data = calloc(LOOP_N, sizeof *d[i].data);
        if (!d[i].data)
            fail("calloc");
        /* Warm each pool up once: its threads exist and have run. */
        fib_arg f = {15, 0};
        weft_run(d[i].pool, fib, &f);
        if (pthread_create(&t[i], NULL, drive, &d[i]) != 0)
            fail("pthread_create");
    }
    long inv0, vol0, inv1, vol1;
    context_switches(&inv0, &vol0);
    bench_span span = bench_span_start();
    pthread_barrier_wait(&start);
    for (int i = 0; i < drivers; i++)
        pthread_join(t[i], NULL);
    double wall, cpu;
    bench_span_stop(&span, &wall, &cpu);
    context_switches(&inv1, &vol1);
    for (int i = 0; i < drivers; i++) {
        free(d[i].data);
        if (own || i == 0)
            weft_pool_destroy(pools[i]);
    }
    pthread_barrier_destroy(&start);
    bench_json_begin("weft", "pools", POOL_THREADS, run);
    printf(",\"layout\":\"%s\",\"drivers\":%d,\"rounds\":%d", layout, drivers, rounds);
    bench_json_num("wall_s", wall);
    bench_json_num("cpu_s", cpu);
    bench_json_num("nivcsw", (double)(inv1 - inv0));
    bench_json_num("nvcsw", (double)(vol1 - vol0));
    bench_json_end();
}

/* pools_bench [run] [--smoke] [--budget N] [--layout L]: N sets the CPU
 * budget (weft_set_concurrency) before any pool exists, else the default
 * one; L runs that layout alone (for a profiler), else all three. */
int main(int argc, char **argv) {
    int run = 0, rounds = ROUNDS;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0)
            rounds = 2;
        else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
            if (weft_set_concurrency((unsigned)atoi(argv[++i])) != 0)
                fail("weft_set_concurrency");
        } else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc)
            only = argv[++i];
        else
            run = atoi(argv[i]);
    }
    fib_expected = fib_serial(FIB_N);
    const char *layouts[] = {"four", "shared", "alone"};
    for (int k = 0; k < 3; k++)
        if (!only || strcmp(only, layouts[(k + run) % 3]) == 0)
            run_layout(layouts[(k + run) % 3], run, rounds);
    return 0;
}
