/* SPDX-License-Identifier: MIT */
/* Make the next allocations of the calling thread fail, to test that weft
 * answers ENOMEM instead of crashing. Test binaries that include this link
 * with -Wl,--wrap=malloc,--wrap=aligned_alloc, which routes weft's own calls
 * here (libc's internal allocations are untouched). */
#ifndef WEFT_FAILMALLOC_H
#define WEFT_FAILMALLOC_H

#include <stddef.h>

/* >0: that many allocations succeed, then every one fails; <0: never fail. */
static _Thread_local long failmalloc_after = -1;
static _Thread_local long failmalloc_failed;

void *__real_malloc(size_t size);
void *__real_aligned_alloc(size_t align, size_t size);

static int failmalloc_should_fail(void) {
    if (failmalloc_after < 0)
        return 0;
    if (failmalloc_after > 0) {
        failmalloc_after--;
        return 0;
    }
    failmalloc_failed++;
    return 1;
}

void *__wrap_malloc(size_t size) {
    return failmalloc_should_fail() ? NULL : __real_malloc(size);
}

void *__wrap_aligned_alloc(size_t align, size_t size) {
    return failmalloc_should_fail() ? NULL : __real_aligned_alloc(align, size);
}

static inline void failmalloc_arm(long after) {
    failmalloc_after = after;
    failmalloc_failed = 0;
}

static inline void failmalloc_disarm(void) {
    failmalloc_after = -1;
}

#endif
