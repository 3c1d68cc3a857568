/* SPDX-License-Identifier: MIT */
/* ABI growth: weft_config and weft_stats may only grow at their end, and the
 * library reads and writes exactly the size the caller was compiled with
 * (weft_pool_create_sized, weft_pool_stats_sized). A program built against an
 * older, smaller struct, or a newer, larger one, gets what weft.h promises.
 * The structs live in buffers of exactly the caller's size followed by a
 * canary, so a read or write past them shows (ASan reports it outright). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jobs.h"
#include "weft.h"

enum { CANARY = 64 };

/* size bytes copied from src, then CANARY bytes of 0xab. */
static unsigned char *boxed(const void *src, size_t size) {
    unsigned char *b = malloc(size + CANARY);
    CHECK(b != NULL);
    memcpy(b, src, size);
    memset(b + size, 0xab, CANARY);
    return b;
}

static void check_canary(const unsigned char *b, size_t size) {
    for (size_t i = 0; i < CANARY; i++)
        CHECK_EQ(b[size + i], 0xab);
}

static _Atomic int started;

static void count_start(unsigned worker, void *user) {
    (void)worker;
    (void)user;
    started++;
}

/* An older program's config ends before on_start: on_start is not read,
 * however the bytes after the struct look. */
TEST(older_config_is_read_to_its_end) {
    weft_config full = {.threads = 2, .on_start = count_start};
    size_t old_size = offsetof(weft_config, on_start);
    unsigned char *b = boxed(&full, old_size);
    memset(b + old_size, 0xff, CANARY); /* garbage where a newer field would be */
    weft_pool *pool;
    CHECK_EQ(weft_pool_create_sized(&pool, (weft_config *)b, old_size), 0);
    CHECK_EQ(weft_pool_threads(pool), 2);
    CHECK_EQ(started, 0); /* on_start took its default */
    fib f = {15, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, 610);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    free(b);
}

/* A newer program's config has fields this library does not know: zero
 * means their default, anything else is refused. */
typedef struct newer_config {
    weft_config known;
    uint64_t future;
} newer_config;

TEST(newer_config_with_unknown_fields) {
    newer_config c = {.known = {.threads = 1}, .future = 0};
    weft_pool *pool = NULL;
    CHECK_EQ(weft_pool_create_sized(&pool, &c.known, sizeof c), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    c.future = 1;
    pool = NULL;
    CHECK_EQ(weft_pool_create_sized(&pool, &c.known, sizeof c), EINVAL);
    CHECK(pool == NULL);
}

/* The plain symbol, as a program that bypasses the header's macro calls it. */
TEST(unsized_symbols) {
    weft_pool *pool;
    weft_config c = {.threads = 1, .callers_wait = true}; /* the jobs run on the worker */
    CHECK_EQ((weft_pool_create)(&pool, &c), 0);
    weft_run(pool, fib_job, &(fib){10, 0});
    weft_stats st;
    (weft_pool_stats)(pool, &st);
    CHECK(st.jobs > 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* weft_stats grew once (early_wakeups): a program built before that has a
 * smaller struct, and nothing may be written past it. */
TEST(older_stats_are_written_to_their_end) {
    weft_pool *pool;
    /* The caller only waits: the jobs run on workers, counted. */
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2, .callers_wait = true}), 0);
    fib f = {18, 0};
    weft_run(pool, fib_job, &f);
    size_t old_size = offsetof(weft_stats, early_wakeups);
    weft_stats zero = {0};
    unsigned char *b = boxed(&zero, old_size);
    weft_pool_stats_sized(pool, (weft_stats *)b, old_size);
    check_canary(b, old_size);
    weft_stats seen;
    memcpy(&seen, b, old_size);
    CHECK(seen.jobs > 0);
    free(b);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A newer program's larger struct: the fields we do not know read 0. */
typedef struct newer_stats {
    weft_stats known;
    uint64_t future[4];
} newer_stats;

TEST(newer_stats_read_zero_beyond_ours) {
    newer_stats s;
    memset(&s, 0xff, sizeof s);
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1}), 0);
    weft_pool_stats_sized(pool, &s.known, sizeof s);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(s.future[i], 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
