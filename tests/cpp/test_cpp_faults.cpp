/* SPDX-License-Identifier: MIT */
// The C++ front end under allocation failure, as tests/test_faults.c does for
// the C API: for k = 0, 1, 2, ... the k-th allocation (operator new, and the
// library's malloc family through tests/faults.h) or thread creation fails
// once while one call runs, until the call completes without a k-th one. Each
// run either succeeds or throws std::bad_alloc or std::system_error with a
// documented errno; every job whose submission returned runs exactly once; the
// pool keeps working; LeakSanitizer (the ASan stage) sees no leak.
#include <weft.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <new>
#include <string>
#include <system_error>

#include "../faults.h"
#include "harness.hpp"

// Every allocation of this program goes through the injector, except under
// ThreadSanitizer, whose runtime defines operator new and delete itself (the
// library's own allocations are still failed there).
#if defined(__SANITIZE_THREAD__)
#define REPLACE_NEW 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define REPLACE_NEW 0
#endif
#endif
#ifndef REPLACE_NEW
#define REPLACE_NEW 1
#endif

#if REPLACE_NEW
void *operator new(std::size_t size) {
    if (faults_should_fail())
        throw std::bad_alloc();
    if (void *p = std::malloc(size ? size : 1))
        return p;
    throw std::bad_alloc();
}

void operator delete(void *p) noexcept {
    std::free(p);
}

void operator delete(void *p, std::size_t) noexcept {
    std::free(p);
}
#endif

namespace {

std::atomic<long> ran{0};

// One call under a fault: 0, or the errno its exception carries.
template <class F> int attempt(F &&f) {
    try {
        f();
        return 0;
    } catch (const std::bad_alloc &) {
        return ENOMEM;
    } catch (const std::system_error &e) {
        return e.code().value();
    }
}

// Run f for k = 0, 1, ... until a run sees no fault; each run succeeds or
// fails with ENOMEM or EAGAIN. Returns the number of runs with a fault.
template <class F> long sweep(F &&f) {
    for (long k = 0;; k++) {
        faults_arm(k);
        int err = attempt(f);
        bool fired = faults_disarm();
        CHECK(err == 0 || err == ENOMEM || err == EAGAIN);
        if (!fired) {
            CHECK_EQ(err, 0);
            std::fprintf(stderr, "%ld runs with a fault\n", k);
            return k;
        }
    }
}

void check_pool_works(weft::pool &p) {
    long sum = weft::reduce(
        p, 0L, 1000L, 0L,
        [](long b, long e) {
            long acc = 0;
            for (long i = b; i < e; i++)
                acc += i;
            return acc;
        },
        [](long a, long b) { return a + b; });
    CHECK_EQ(sum, 499500);
}

} // namespace

TEST(pool) {
    long faults = sweep([] {
        weft::pool p(weft::config().threads(2).name("faults").on_start([](unsigned) {}));
        check_pool_works(p);
    });
    CHECK(faults > 2);
}

TEST(spawn) {
    weft::pool p(weft::config().threads(2));
    long ok = 0;
    std::array<char, 256> big{}; // too large for the argument word: boxed
    sweep([&] {
        weft::spawn(p, [] { ran++; });
        ok++;
        weft::spawn(p, [big] { ran += big[0] + 1; });
        ok++;
    });
    p.destroy(); // waits for every job
    CHECK_EQ(ran.load(), ok);
}

TEST(scope) {
    weft::pool p(weft::config().threads(2));
    sweep([&] {
        long ok = 0;
        ran = 0;
        try {
            weft::scope s(p, [&](weft::scope &sc) {
                for (int i = 0; i < 4; i++) {
                    sc.spawn([] { ran++; });
                    ok++;
                }
            });
        } catch (...) {
            CHECK_EQ(ran.load(), ok); // what was queued ran before the throw
            throw;
        }
        CHECK_EQ(ran.load(), ok);
    });
    check_pool_works(p);
}

TEST(event) {
    weft::pool p(weft::config().threads(2));
    sweep([&] {
        long ok = 0;
        ran = 0;
        {
            weft::event e(p, 1);
            try {
                for (int i = 0; i < 3; i++) {
                    e.then([s = std::string(100, 'x')] { ran += s.size() == 100; });
                    ok++;
                }
            } catch (...) {
                e.signal();
                e.wait();
                while (ran.load() < ok)
                    ;
                throw;
            }
            e.signal();
            e.wait();
        }
        while (ran.load() < ok) // follow-ups are detached
            ;
        CHECK_EQ(ran.load(), ok);
    });
    check_pool_works(p);
}

TEST(graph) {
    weft::pool p(weft::config().threads(2));
    CHECK(sweep([&] {
              weft::graph g;
              weft::graph::node prev = nullptr;
              for (int i = 0; i < 5; i++) {
                  auto n = g.add([s = std::string(64, 'y')] { ran += s.size() == 64; });
                  if (prev)
                      g.edge(prev, n);
                  prev = n;
              }
              ran = 0;
              g.run(p);
              CHECK_EQ(ran.load(), 5);
          }) > 0);
    check_pool_works(p);
}

TEST(context) {
    weft::pool p(weft::config().threads(2).contexts(1));
    sweep([&] {
        weft::context c(p);
        long r = weft::reduce(
            0L, 100L, 0L, [](long b, long e) { return e - b; },
            [](long a, long b) { return a + b; });
        CHECK_EQ(r, 100);
    });
    check_pool_works(p);
}
