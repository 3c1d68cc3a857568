/* SPDX-License-Identifier: MIT */
/* A minimal test harness. Each TEST(name) in a file is registered at start-up;
 * `prog name` runs one case (ctest registers one test per case, each with a
 * timeout, so a deadlock fails instead of hanging), `prog` runs them all. */
#ifndef WEFT_CHECK_H
#define WEFT_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                            \
        if (check_a_ != check_b_) {                                                                \
            fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: %lld != %lld\n", __FILE__, __LINE__,  \
                    #a, #b, check_a_, check_b_);                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

typedef struct check_case {
    const char *name;
    void (*fn)(void);
} check_case;

static check_case check_cases[128];
static int check_count;

static inline void check_register(const char *name, void (*fn)(void)) {
    check_cases[check_count++] = (check_case){name, fn};
}

#define TEST(name)                                                                                 \
    static void test_##name(void);                                                                 \
    __attribute__((constructor)) static void register_##name(void) {                               \
        check_register(#name, test_##name);                                                        \
    }                                                                                              \
    static void test_##name(void)

/* Iteration counts shrink under the sanitizers, which run 5-20x slower, and in
 * the random-yield build, where a quarter of the protocol steps yield or spin
 * (make test-yield runs each case once per seed instead). */
static inline long scaled(long n) {
#if defined(WEFT__TSAN)
    return n / 8 > 0 ? n / 8 : 1;
#elif defined(__SANITIZE_ADDRESS__) || defined(WEFT_DEBUG_YIELD)
    return n / 4 > 0 ? n / 4 : 1;
#else
    return n;
#endif
}

static inline double check_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline void check_sleep_us(long us) {
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0) {
    }
}

int main(int argc, char **argv) {
    int ran = 0;
    for (int i = 0; i < check_count; i++) {
        if (argc > 1 && strcmp(argv[1], check_cases[i].name) != 0)
            continue;
        double t0 = check_now();
        check_cases[i].fn();
        fprintf(stderr, "ok %s (%.2fs)\n", check_cases[i].name, check_now() - t0);
        ran++;
    }
    if (ran == 0) {
        fprintf(stderr, "no test named %s\n", argc > 1 ? argv[1] : "(any)");
        return 1;
    }
    return 0;
}

#endif
