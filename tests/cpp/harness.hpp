/* SPDX-License-Identifier: MIT */
/* A minimal test harness for the C++ tests, the C harness's twin
 * (tests/check.h): each TEST(name) registers a case; `prog name` runs one
 * (ctest registers one test per case, each with a timeout), `prog` runs all. */
#ifndef WEFT_TEST_HARNESS_HPP
#define WEFT_TEST_HARNESS_HPP

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);          \
            std::abort();                                                                          \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long check_a_ = static_cast<long long>(a), check_b_ = static_cast<long long>(b);      \
        if (check_a_ != check_b_) {                                                                \
            std::fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: %lld != %lld\n", __FILE__,       \
                         __LINE__, #a, #b, check_a_, check_b_);                                    \
            std::abort();                                                                          \
        }                                                                                          \
    } while (0)

namespace harness {

struct test_case {
    const char *name;
    void (*fn)();
};

inline test_case cases[64];
inline int count;

inline bool add(const char *name, void (*fn)()) {
    CHECK(count < 64);
    cases[count++] = {name, fn};
    return true;
}

} // namespace harness

#define TEST(name)                                                                                 \
    static void test_##name();                                                                     \
    [[maybe_unused]] static const bool registered_##name = harness::add(#name, test_##name);       \
    static void test_##name()

int main(int argc, char **argv) {
    int ran = 0;
    for (int i = 0; i < harness::count; i++) {
        if (argc > 1 && std::strcmp(argv[1], harness::cases[i].name) != 0)
            continue;
        auto t0 = std::chrono::steady_clock::now();
        harness::cases[i].fn();
        std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
        std::fprintf(stderr, "ok %s (%.2fs)\n", harness::cases[i].name, dt.count());
        ran++;
    }
    if (ran == 0) {
        std::fprintf(stderr, "no test named %s\n", argc > 1 ? argv[1] : "(any)");
        return 1;
    }
    return 0;
}

#endif
