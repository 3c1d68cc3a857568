/* SPDX-License-Identifier: MIT */
/* wl_sort.c: the algorithms. sort: n random 64-bit keys into ascending
 * order, one timed call a run (a call takes most of a second). scan: an
 * inclusive scan with + of n 64-bit values, timed over repeated calls on one
 * pool (a call takes some milliseconds, mostly memory traffic).
 */
#include "driver.h"

void wl_sort(const run_ctx *c) {
    if (!c->sys->sort)
        return;
    size_t n = c->sz->sort_n;
    uint64_t *a = xmalloc(n * sizeof *a);
    uint64_t seed = 0x5eed0000u + (uint64_t)c->run;
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    /* A warm-up sort of a sixteenth: threads started, pages touched. */
    for (size_t i = 0; i < n; i++)
        a[i] = bench_mix64(~seed + i);
    c->sys->sort(pool, a, n / 16);
    uint64_t sum = 0, xor = 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = bench_mix64(seed + i);
        sum += a[i];
        xor ^= a[i];
    }
    uint64_t t0 = bench_now_ns();
    c->sys->sort(pool, a, n);
    double wall = 1e-9 * (double)(bench_now_ns() - t0);
    c->sys->destroy(pool);
    for (size_t i = 0; i < n; i++) {
        check(c, i == 0 || a[i - 1] <= a[i], "the keys are not in order");
        sum -= a[i];
        xor ^= a[i];
    }
    check(c, sum == 0 && xor == 0, "the sorted keys are not the keys given");
    free(a);
    emit_begin(c);
    bench_json_num("n", (double)n);
    bench_json_num("wall_s", wall);
    bench_json_end();
}

void wl_scan(const run_ctx *c) {
    if (!c->sys->scan)
        return;
    size_t n = c->sz->scan_n;
    int reps = c->sz->scan_reps;
    uint64_t *in = xmalloc(n * sizeof *in), *out = xmalloc(n * sizeof *out);
    for (size_t i = 0; i < n; i++)
        in[i] = bench_mix64(i + (uint64_t)c->run);
    memset(out, 0, n * sizeof *out);
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    c->sys->scan(pool, in, out, n); /* warm-up */
    uint64_t t0 = bench_now_ns();
    for (int r = 0; r < reps; r++)
        c->sys->scan(pool, in, out, n);
    double wall = 1e-9 * (double)(bench_now_ns() - t0) / reps;
    c->sys->destroy(pool);
    for (size_t i = 0; i < n; i++)
        check(c, out[i] == (i ? out[i - 1] : 0) + in[i], "a prefix sum is wrong");
    free(in);
    free(out);
    emit_begin(c);
    bench_json_num("n", (double)n);
    bench_json_num("wall_s", wall);
    bench_json_end();
}
