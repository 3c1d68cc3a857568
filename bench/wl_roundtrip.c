/* SPDX-License-Identifier: MIT */
/* wl_roundtrip.c: the roundtrip workload, an empty job run in the pool from
 * outside and waited for, over and over: its latency and CPU cost.
 */
#include "driver.h"

#define ROUNDTRIP_SAMPLES 200000u /* latencies kept for the percentiles */

void wl_roundtrip(const run_ctx *c) {
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
