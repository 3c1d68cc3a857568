/* SPDX-License-Identifier: MIT */
/* Asymmetric fences (fence.h). */
#include <pthread.h>

#include "os/fence.h"

#include "os/process.h"

static bool heavy_ok; /* I: set once by choose, before any pool exists */
static pthread_once_t chosen = PTHREAD_ONCE_INIT;

static void choose(void) {
#ifdef WEFT_FENCE_SYMMETRIC
    heavy_ok = true; /* a seq-cst fence on both sides */
#else
    heavy_ok = weft__os_barrier_init();
#endif
}

void weft__fence_init(void) {
    /* pthread_once orders the store before every later caller, and every
     * reader is a worker of a pool created after (or a test that called it). */
    pthread_once(&chosen, choose);
}

bool weft__fence_heavy_available(void) {
    return heavy_ok;
}

void weft__fence_heavy(void) {
    weft__fence_seq_cst(); /* the caller's own barrier, and all of it on POSIX */
#ifndef WEFT_FENCE_SYMMETRIC
    weft__os_barrier();
#endif
}
