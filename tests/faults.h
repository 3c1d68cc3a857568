/* SPDX-License-Identifier: MIT */
/* Fault injection for test_faults.c and tests/cpp/test_cpp_faults.cpp: the
 * k-th call to malloc, calloc, realloc, aligned_alloc or pthread_create made
 * (on any thread) while armed fails once. The binaries link with -Wl,--wrap
 * for those five functions, so weft's own calls (and the test's) come here;
 * the C library's internal ones do not. C++ tests route operator new here too
 * (faults_should_fail). Defined in tests/faults.c. */
#ifndef WEFT_FAULTS_H
#define WEFT_FAULTS_H

#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The k-th call from now fails (k = 0: the next one); one failure only. */
void faults_arm(long k);

/* Disarm; did the k-th call happen (and fail)? */
bool faults_disarm(void);

/* For other allocators of the test (C++'s operator new): count this call and
 * say whether it must fail. */
bool faults_should_fail(void);

#ifdef __cplusplus
}
#endif

#endif
