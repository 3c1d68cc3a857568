/* SPDX-License-Identifier: MIT */
/* fib(n) as a typed task (weft.h, WEFT_TASK), for weft's C and C++ fork rows
 * ("weft-task" in sys_weft.c, "weft-cpp-task" in sys_weft_cpp.cpp): as
 * Lace's benchmark writes it, n - 1 offered to thieves and n - 2 called
 * first, so the loop gcc makes of the offered call runs through the larger
 * half. Include after weft.h. */
#ifndef BENCH_FIB_TASK_H
#define BENCH_FIB_TASK_H

WEFT_TASK(long, fib_task, int, n) {
    if (n < 2)
        return n;
    long a, b;
    WEFT_JOIN(a, fib_task, (n - 2), b, fib_task, (n - 1));
    return a + b;
}

#endif
