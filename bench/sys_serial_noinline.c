/* SPDX-License-Identifier: MIT */
/* sys_serial_noinline.c: a second sequential reference for fib, of the
 * parallel programs' shape: one call per node, each node calling itself
 * twice. sys_serial.c's fib_rec is the plain recursion as the compiler
 * likes it: gcc inlines it into itself a few levels deep and turns the second
 * call into a loop, so it makes a fraction of the calls. No parallel fib can
 * be compiled that way (the join stands between the calls), so T/Ts against
 * it mixes the scheduler's cost with the compiler's. Against this one, the
 * difference is the cost of the forks alone: (T - Ts) / forks.
 *
 * Only fib: the other workloads' serial shapes are sys_serial.c's, and the
 * driver prints nothing for the NULL entries. Its own program
 * (serial_noinline_bench), so that serial_bench stays the same code. */
#include "bench.h"

/* No pool state; create() returns this token. */
static char no_pool;

static bench_pool *create(const bench_system *sys, unsigned threads, unsigned flags) {
    (void)sys;
    (void)threads;
    (void)flags;
    return (bench_pool *)&no_pool;
}

static void destroy(bench_pool *pool) {
    (void)pool;
}

/* noinline: no copy of the recursion inlined into itself (unrolled levels
 * would make fewer calls than nodes). That alone is not enough: both gcc
 * (tail recursion with an accumulator) and clang (TailCallElim) would still
 * turn the second call, whose result is only added to the first's, into a
 * loop. The empty asm makes y opaque between that call and the addition, so
 * the call's result no longer flows straight into the return value, which both
 * transformations need; it emits no instruction. */
__attribute__((noinline)) static long fib_rec(int n) {
    if (n < 2)
        return n;
    long x = fib_rec(n - 1);
    long y = fib_rec(n - 2);
    __asm__("" : "+r"(y));
    return x + y;
}

static long fib(bench_pool *pool, int n) {
    (void)pool;
    return fib_rec(n);
}

static const bench_system serial_noinline = {
    .name = "serial-noinline", .create = create, .destroy = destroy, .fib = fib};

const bench_system *bench_system_get(unsigned i) {
    return i == 0 ? &serial_noinline : NULL;
}
