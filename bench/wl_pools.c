/* SPDX-License-Identifier: MIT */
/* wl_pools.c: the pools workload, several pools in one process.
 * POOLS_DRIVERS plain threads each run rounds of
 * fib(POOLS_FIB_N) and a loop over POOLS_LOOP_N indices, from outside, in
 * one of three layouts:
 *   four:   each driver on a pool of its own of the run's size (a program
 *           with its own pools and a library with another: each pool may
 *           think it owns every CPU; oneTBB's arenas share one market of
 *           workers, OpenMP's and Rayon's teams do not);
 *   shared: the drivers share one pool;
 *   alone:  one driver on one pool (what a single pool costs).
 * One JSON line per layout: wall seconds from the drivers' common start to
 * the last one's end, process CPU seconds, and the process's involuntary and
 * voluntary context switches (getrusage) over the same span. The layouts
 * rotate their order from run to run.
 */
#include "driver.h"

#include <pthread.h>
#include <sys/resource.h>

/* Parameters fixed by the workload definition (docs/performance.md). */
#define POOLS_DRIVERS 4
#define POOLS_FIB_N   27
#define POOLS_LOOP_N  1000000

typedef struct pools_driver {
    const run_ctx *c;
    bench_pool *pool;
    int *data;
    pthread_barrier_t *start;
} pools_driver;

static void *pools_drive(void *arg) {
    pools_driver *d = arg;
    pthread_barrier_wait(d->start);
    for (int r = 0; r < d->c->sz->pools_rounds; r++) {
        check(d->c, d->c->sys->fib(d->pool, POOLS_FIB_N) == fib_value(POOLS_FIB_N),
              "wrong fib value");
        d->c->sys->loop(d->pool, d->data, POOLS_LOOP_N);
    }
    return NULL;
}

static void context_switches(long *involuntary, long *voluntary) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *involuntary = ru.ru_nivcsw;
    *voluntary = ru.ru_nvcsw;
}

static void pools_layout(const run_ctx *c, const char *layout) {
    int drivers = strcmp(layout, "alone") == 0 ? 1 : POOLS_DRIVERS;
    bool own = strcmp(layout, "four") == 0;
    bench_pool *pools[POOLS_DRIVERS] = {0};
    pools_driver d[POOLS_DRIVERS];
    pthread_t t[POOLS_DRIVERS];
    pthread_barrier_t start;
    if (pthread_barrier_init(&start, NULL, (unsigned)drivers + 1) != 0)
        bench_die("pools", "pthread_barrier_init");
    for (int i = 0; i < drivers; i++) {
        pools[i] = own || i == 0 ? c->sys->create(c->sys, c->threads, 0) : pools[0];
        d[i] = (pools_driver){.c = c, .pool = pools[i], .start = &start};
        d[i].data = calloc(POOLS_LOOP_N, sizeof *d[i].data);
        if (!d[i].data)
            bench_die("calloc", strerror(ENOMEM));
        /* Warm each pool up once: its threads exist and have run. */
        check(c, c->sys->fib(d[i].pool, 15) == fib_value(15), "wrong fib value");
        if (pthread_create(&t[i], NULL, pools_drive, &d[i]) != 0)
            bench_die("pools", "pthread_create");
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
            c->sys->destroy(pools[i]);
    }
    pthread_barrier_destroy(&start);
    emit_begin(c);
    printf(",\"layout\":\"%s\",\"drivers\":%d,\"rounds\":%d", layout, drivers, c->sz->pools_rounds);
    bench_json_num("wall_s", wall);
    bench_json_num("cpu_s", cpu);
    bench_json_num("nivcsw", (double)(inv1 - inv0));
    bench_json_num("nvcsw", (double)(vol1 - vol0));
    bench_json_end();
}

void wl_pools(const run_ctx *c) {
    if (!c->sys->fib || !c->sys->loop || c->sys->one_caller)
        return;
    const char *layouts[] = {"four", "shared", "alone"};
    const char *only = getenv("BENCH_POOLS_LAYOUT"); /* one layout, for a profiler */
    for (int k = 0; k < 3; k++) {
        const char *layout = layouts[(k + c->run) % 3];
        if (!only || strcmp(only, layout) == 0)
            pools_layout(c, layout);
    }
}
