/* SPDX-License-Identifier: MIT */
/* Composability (seed 004's case): a weft stage, a parallel loop, followed at
 * once by an OpenMP `parallel for` stage of the same size, repeated. How long
 * does the OpenMP stage take when
 *   none:       there is no weft pool (the first stage is an OpenMP loop too,
 *               so the data sits in the same caches as after a weft stage),
 *   default:    a weft pool sits idle with its default (automatic) leave policy,
 *   fast-leave: the weft stage runs in a parallel phase ended with fast leave,
 *   spin:       weft's idle workers never sleep (compose_spin_bench, built
 *               against the library's benchmark build that never sleeps),
 * median of the rounds? One JSON line per mode; the first three in one
 * process run. On 2 cores, every idle thread that keeps searching takes a core from
 * OpenMP's threads. */
#include "bench.h" /* first: it defines _GNU_SOURCE */

#include <math.h>
#include <omp.h>
#include <weft.h>

#define N      (1u << 20)
#define ROUNDS 200

static double a[N];

static void fail(const char *what) {
    fprintf(stderr, "FAIL compose: %s\n", what);
    exit(1);
}

static void stage_body(size_t begin, size_t end, void *arg) {
    (void)arg;
    for (size_t i = begin; i < end; i++)
        a[i] = a[i] * 1.0000001 + 1.0;
}

static double omp_stage(void) {
    uint64_t t0 = bench_now_ns();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++)
        a[i] = sqrt(a[i] * a[i] + 1.0);
    return 1e-3 * (double)(bench_now_ns() - t0);
}

static void run_mode(const char *mode, int run, unsigned threads) {
    weft_pool *pool = NULL;
    bool weft = strcmp(mode, "none") != 0, phase = strcmp(mode, "fast-leave") == 0;
    if (weft && weft_pool_create(&pool, &(weft_config){.threads = threads}) != 0)
        fail("weft_pool_create");
    double *us = malloc(ROUNDS * sizeof *us);
    if (!us)
        fail("out of memory");
    for (int r = 0; r < ROUNDS; r++) {
        if (phase)
            weft_phase_begin(pool);
        if (weft) {
            weft_for(pool, 0, N, 0, stage_body, NULL);
        } else { /* no weft at all: the program's first stage is OpenMP too */
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < N; i++)
                stage_body(i, i + 1, NULL);
        }
        if (phase)
            weft_phase_end(pool, true);
        us[r] = omp_stage();
    }
    if (pool)
        weft_pool_destroy(pool);
    bench_sort_doubles(us, ROUNDS);
    bench_json_begin("compose", mode, threads, run);
    bench_json_num("omp_stage_us_p50", bench_percentile(us, ROUNDS, 50));
    bench_json_num("omp_stage_us_p90", bench_percentile(us, ROUNDS, 90));
    bench_json_end();
    free(us);
}

int main(int argc, char **argv) {
    int run = argc > 1 ? atoi(argv[1]) : 0;
    unsigned threads = (unsigned)omp_get_max_threads();
    for (size_t i = 0; i < N; i++)
        a[i] = (double)(i % 100);
    omp_stage();       /* start OpenMP's threads */
#ifdef BENCH_WEFT_SPIN /* compose_spin_bench: the library built to never sleep */
    const char *modes[] = {"spin"};
#else
    const char *modes[] = {"none", "default", "fast-leave"};
#endif
    int n = (int)(sizeof modes / sizeof modes[0]);
    for (int k = 0; k < n; k++)
        run_mode(modes[(k + run) % n], run, threads); /* rotate the order per run */
    return 0;
}
