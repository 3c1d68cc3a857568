/* SPDX-License-Identifier: MIT */
/* std_algorithms.cpp: the serial references of the sort and scan workloads
 * (wl_sort.c), the standard library's own, for the serial system (a C
 * program: sys_serial.c). */
#include "bench.h"

#include <algorithm>
#include <numeric>

void bench_std_sort(uint64_t *a, size_t n) {
    std::sort(a, a + n);
}

void bench_std_scan(const uint64_t *in, uint64_t *out, size_t n) {
    std::inclusive_scan(in, in + n, out);
}
