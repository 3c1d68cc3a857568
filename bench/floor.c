/* floor.c: the floors under two of issue 2's targets, measured the way the
 * driver measures the targets themselves (bench/driver.c), with no scheduler:
 *
 *  - sporadic: the submitter's loop (sleep until the next 500 us deadline,
 *    then one 20 us job) with the job run inline, so the CPU per wall second
 *    is the harness's own cost plus the useful load; without the job, the
 *    harness alone. No scheduler can report less than the first.
 *  - fib(35) through weft_join's shape with a join that schedules nothing:
 *    frames on the stack, both halves called through function pointers from a
 *    join the compiler cannot inline (a library call). T1/Ts of this is what
 *    a scheduler with a free join would measure against bench's serial fib.
 *
 * Prints one JSON object per line. Not part of run.sh's tables (it is not a
 * peer); `build/bench/bench/floor_bench` runs it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define US 1000u

#define PERIOD_NS (500 * US)
#define JOB_NS    (20 * US)
#define JOBS      2000

static double sporadic_floor(uint64_t job_ns) {
    bench_span span = bench_span_start();
    for (unsigned i = 0; i < JOBS; i++) {
        bench_sleep_until_ns(span.wall_ns + (uint64_t)(i + 1) * PERIOD_NS);
        bench_spin_ns(job_ns);
    }
    double wall, cpu;
    bench_span_stop(&span, &wall, &cpu);
    return cpu / wall;
}

typedef void fn_t(void *);
typedef struct frame {
    int n;
    long r;
} frame;

/* The join a free scheduler would have: call both halves. */
__attribute__((noinline)) static void free_join(fn_t *a, void *a_arg, fn_t *b, void *b_arg) {
    a(a_arg);
    b(b_arg);
}

static void fib_job(void *arg) {
    frame *f = arg;
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    frame a = {f->n - 1, 0}, b = {f->n - 2, 0};
    free_join(fib_job, &a, fib_job, &b);
    f->r = a.r + b.r;
}

static long fib_rec(int n) {
    return n < 2 ? n : fib_rec(n - 1) + fib_rec(n - 2);
}

/* Median of five timings of fn(35). */
static double time_fib(long (*fn)(int)) {
    double t[5];
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = bench_now_ns();
        if (fn(35) != 9227465) {
            fprintf(stderr, "floor: wrong fib value\n");
            exit(1);
        }
        t[i] = 1e-9 * (double)(bench_now_ns() - t0);
    }
    bench_sort_doubles(t, 5);
    return t[2];
}

static long fib_free(int n) {
    frame f = {n, 0};
    fib_job(&f);
    return f.r;
}

static long fib_serial(int n) {
    return fib_rec(n);
}

int main(void) {
    printf("{\"floor\":\"sporadic\",\"period_us\":500,\"job_us\":20,"
           "\"cpu_per_wall_inline\":%.4f,\"cpu_per_wall_no_job\":%.4f}\n",
           sporadic_floor(JOB_NS), sporadic_floor(0));
    double ts = time_fib(fib_serial), tf = time_fib(fib_free);
    printf("{\"floor\":\"fib35\",\"serial_s\":%.4f,\"free_join_s\":%.4f,\"t1_over_ts\":%.2f}\n", ts,
           tf, tf / ts);
    return 0;
}
