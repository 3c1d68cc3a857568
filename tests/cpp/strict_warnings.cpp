/* SPDX-License-Identifier: MIT */
/* weft.hpp, and the typed tasks of weft.h, in a program built with the
 * warnings strict C++ code bases turn on (old-style casts, 0 as a null
 * pointer): the headers must not add any. Compiled only (tests/cpp). */
#include <weft.hpp>

WEFT_TASK(long, fib, int, n) {
    if (n < 2)
        return n;
    long a, b;
    WEFT_JOIN(a, fib, (n - 2), b, fib, (n - 1));
    return a + b;
}

WEFT_VOID_TASK_DECL(count_down, int);

WEFT_VOID_TASK_DEF(count_down, int, n) {
    if (n < 1)
        return;
    WEFT_FORK(count_down, t, n - 1);
    WEFT_CALL(count_down, n - 1);
    WEFT_SYNC(count_down, t);
}

int main() {
    count_down(3);
    return weft::join([] { return 1; }, [] { return fib(10); }).second == 55 ? 0 : 1;
}
