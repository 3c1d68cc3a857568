/* SPDX-License-Identifier: MIT */
/* Parallel Fibonacci with weft_join: the README's example. */
#include <stdio.h>
#include <weft.h>

typedef struct fib {
    int n;
    long result;
} fib;

static void fib_job(void *arg) {
    fib *f = arg;
    if (f->n < 20) { /* small problems: plain recursion is faster */
        long a = 0, b = 1;
        for (int i = 0; i < f->n; i++) {
            long t = a + b;
            a = b;
            b = t;
        }
        f->result = a;
        return;
    }
    fib x = {f->n - 1, 0}, y = {f->n - 2, 0};
    weft_join(fib_job, &x, fib_job, &y); /* x and y may run in parallel */
    f->result = x.result + y.result;
}

int main(void) {
    fib f = {40, 0};
    weft_run(NULL, fib_job, &f); /* in the default pool, this thread taking part */
    printf("fib(%d) = %ld\n", f.n, f.result);
    return f.result == 102334155 ? 0 : 1;
}
