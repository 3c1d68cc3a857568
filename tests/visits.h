/* SPDX-License-Identifier: MIT */
/* weft_for's checking body, shared by the tests that run weft_for: counts
 * the visits of each index and the pieces shorter than the grain. */
#ifndef WEFT_TEST_VISITS_H
#define WEFT_TEST_VISITS_H

#include <stdatomic.h>
#include <stddef.h>

#include "check.h"

typedef struct visits {
    _Atomic unsigned char *hits;
    size_t base;
    size_t grain;
    size_t total;
    _Atomic long pieces;
    _Atomic long short_pieces;
} visits;

static void visit(size_t begin, size_t end, void *arg) {
    visits *v = arg;
    CHECK(begin < end);
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add_explicit(&v->hits[i - v->base], 1, memory_order_relaxed);
    atomic_fetch_add(&v->pieces, 1);
    if (v->grain && end - begin < v->grain && v->total >= v->grain)
        atomic_fetch_add(&v->short_pieces, 1);
}

#endif
