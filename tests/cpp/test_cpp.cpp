/* SPDX-License-Identifier: MIT */
/* weft.hpp: every wrapper does what its C function does, results and
 * exceptions come back to the caller, pools are RAII and move-only, and run,
 * join, parallel_for and small noexcept spawns allocate nothing. Built with
 * g++ and clang++, and with -fno-exceptions (the exception cases drop out). */
#include <weft.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "harness.hpp"

/* Every operator new in the process is counted: weft's C code uses malloc,
 * so this sees exactly what weft.hpp (and the test) allocate. Not under
 * clang's TSan, whose runtime defines operator new and delete itself. */
static std::atomic<long> allocations{0};

#if defined(WEFT__TSAN)
#define COUNTS_ALLOCATIONS 0
#else
#define COUNTS_ALLOCATIONS 1
[[gnu::noinline]] void *operator new(std::size_t n) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void *p = std::malloc(n ? n : 1))
        return p;
#if WEFT_HPP_EXCEPTIONS
    throw std::bad_alloc();
#else
    std::abort();
#endif
}
/* noinline: inlined, gcc 12 sees a free of what operator new returned
 * (-Wmismatched-new-delete), not knowing that this operator new mallocs. */
[[gnu::noinline]] void operator delete(void *p) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete(void *p, std::size_t) noexcept {
    std::free(p);
}
#endif

static weft::config threads(unsigned n) {
    return weft::config().threads(n);
}

/* The name in force on this thread (weft_trace_name), left as it was. */
static const char *name_in_force() {
    const char *name = weft_trace_name(nullptr);
    weft_trace_name(name);
    return name;
}

/* weft::trace_name sets a name for as long as it lives, nested guards
 * included, and sets the outer one back; work started under it runs. */
TEST(trace_name_is_a_scope_guard) {
    CHECK(name_in_force() == nullptr);
    {
        weft::trace_name physics("physics");
        CHECK(std::strcmp(name_in_force(), "physics") == 0);
        {
            weft::trace_name collide("collide");
            CHECK(std::strcmp(name_in_force(), "collide") == 0);
            std::atomic<int> ran{0};
            weft::parallel_for(std::size_t{0}, std::size_t{100}, [&](std::size_t) { ran++; });
            CHECK(ran.load() == 100);
        }
        CHECK(std::strcmp(name_in_force(), "physics") == 0);
    }
    CHECK(name_in_force() == nullptr);
}

/* weft::task and weft::blocking_region: a pool of one worker whose only job
 * blocks runs the job that resumes it on a spare; events hold weft::run. */
TEST(a_task_blocks_and_a_region_scales_up) {
    weft::pool p(threads(1).callers_wait());
    int resumed = weft::run(p, [] {
        weft::task t = weft::task::self();
        std::atomic<int> ran{0};
        weft::spawn([t, &ran] {
            {
                weft::blocking_region blocking; /* waits for the job below to block */
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            ran.store(1);
            t.unblock();
        });
        weft::task::block();
        return ran.load();
    });
    CHECK_EQ(resumed, 1);
    std::atomic<int> completed{0};
    std::thread th;
    weft::run(p, [&] {
        weft::task t = weft::task::self();
        t.events_increase(1);
        th = std::thread([t, &completed] {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            completed.store(1);
            t.events_decrease(1);
        });
    });
    CHECK_EQ(completed.load(), 1);
    th.join();
#if WEFT_HPP_EXCEPTIONS
    bool threw = false;
    try {
        weft::blocking_region outside;
    } catch (const std::system_error &e) {
        threw = e.code().value() == EINVAL;
    }
    CHECK(threw);
#endif
}

TEST(version_and_thread_index) {
    CHECK(std::strcmp(weft::version(), weft_version()) == 0);
    CHECK_EQ(weft::thread_index(), -1);
    weft::pool p(threads(2));
    int inside = weft::run(p, [] { return weft::thread_index(); });
    CHECK_EQ(inside, 2); /* on this thread, in the first caller slot */
    weft::pool waits(threads(2).callers_wait());
    inside = weft::run(waits, [] { return weft::thread_index(); });
    CHECK(inside == 0 || inside == 1);
}

TEST(pool_is_raii_and_move_only) {
    static_assert(!std::is_copy_constructible_v<weft::pool>);
    static_assert(!std::is_copy_assignable_v<weft::pool>);
    static_assert(std::is_nothrow_move_constructible_v<weft::pool>);
    static_assert(std::is_nothrow_move_assignable_v<weft::pool>);
    std::atomic<int> started{0}, exited{0};
    {
        weft::pool a(threads(3)
                         .name("cpp")
                         .on_start([&](unsigned) { started.fetch_add(1); })
                         .on_exit([&](unsigned) { exited.fetch_add(1); }));
        CHECK_EQ(a.threads(), 3);
        weft_pool *raw = a.get();
        weft::pool b(std::move(a));
        CHECK(a.get() == nullptr);
        CHECK(b.get() == raw);
        weft::pool c(threads(1));
        c = std::move(b); /* destroys c's own pool, takes a's */
        CHECK(c.get() == raw);
        CHECK_EQ(c.threads(), 3);
        CHECK(weft::run(c, [] { return weft::thread_index(); }) >= 0);
    }
    CHECK_EQ(started.load(), 3);
    CHECK_EQ(exited.load(), 3);

    weft::pool d(threads(2));
    d.destroy();
    CHECK(d.get() == nullptr);
    d.destroy(); /* owns nothing: nothing to do */

    weft_config raw{};
    raw.threads = 2;
    weft::pool e(raw);
    CHECK_EQ(e.threads(), 2);
}

#if WEFT_HPP_EXCEPTIONS
TEST(errors_become_system_errors) {
    try {
        weft::pool p(weft::config().stack_size(4096));
        CHECK(false);
    } catch (const std::system_error &e) {
        CHECK(e.code() == std::errc::invalid_argument);
        CHECK(e.code().category() == std::generic_category());
        /* The C call's name and its reason in words (weft_error_message). */
        CHECK(std::strstr(e.what(), "weft_pool_create: config.stack_size 4096") != nullptr);
    }
    weft_config bad{};
    bad.threads = WEFT_THREADS_MAX + 1;
    try {
        weft::pool p(bad);
        CHECK(false);
    } catch (const std::system_error &e) {
        CHECK_EQ(e.code().value(), EINVAL);
        CHECK(std::strstr(e.what(), "config.threads 4097 is above WEFT_THREADS_MAX") != nullptr);
    }
    /* weft_pool_destroy from the pool's own job: EDEADLK, pool intact. */
    weft::pool p(threads(2));
    int code = 0;
    weft::run(p, [&] {
        try {
            p.destroy();
        } catch (const std::system_error &e) {
            code = e.code().value();
        }
    });
    CHECK_EQ(code, EDEADLK);
    CHECK(p.get() != nullptr);
    CHECK_EQ(weft::run(p, [] { return 5; }), 5);
}
#endif

TEST(run_returns_what_f_returns) {
    weft::pool p(threads(2));
    int x = 0;
    int &r = weft::run(p, [&]() -> int & { return x; });
    CHECK(&r == &x);
    std::string s = weft::run(p, [] { return std::string("hello from a worker"); });
    CHECK(s == "hello from a worker");
    std::unique_ptr<int> u = weft::run(p, [] { return std::make_unique<int>(7); });
    CHECK_EQ(*u, 7);
    bool ran = false;
    weft::run(p, [&] { ran = weft::thread_index() >= 0; });
    CHECK(ran);
    CHECK_EQ(weft::run([] { return 42; }), 42); /* the default pool */
    CHECK_EQ(weft::run(nullptr, [] { return 43; }), 43);
    CHECK_EQ(weft::run(p.get(), [] { return 44; }), 44);
}

static long fib(int n) {
    if (n < 12) {
        long a = 0, b = 1;
        for (int i = 0; i < n; i++)
            b = std::exchange(a, b) + b;
        return a;
    }
    auto [x, y] = weft::join([n] { return fib(n - 1); }, [n] { return fib(n - 2); });
    return x + y;
}

TEST(join_returns_both_results) {
    weft::pool p(threads(4));
    CHECK_EQ(weft::run(p, [] { return fib(27); }), 196418);
    CHECK_EQ(fib(20), 6765); /* outside any pool: on the default pool */

    auto [i, s] = weft::join([] { return 1; }, [] { return std::string("two"); });
    CHECK_EQ(i, 1);
    CHECK(s == "two");
    int a = 0, b = 0;
    weft::join([&] { a = 1; }, [&] { b = 2; });
    CHECK_EQ(a + b, 3);
    auto [v, n] = weft::join([&] { a = 10; }, [] { return 5; });
    static_assert(std::is_same_v<decltype(v), std::monostate>);
    CHECK_EQ(a + n, 15);
}

/* job(e) inside weft::run on pools of one to three threads, on a worker
 * and on a caller, while every other thread of the pool spins until job is
 * done: only the thread that runs job can run what job leaves to others.
 * Outside the CPU budget, whose slots the spinners hold. */
template <class Job> static void with_the_others_busy(Job job) {
    for (bool caller : {false, true})
        for (unsigned n = 1; n <= 3; n++) {
            weft::pool p(weft::config().threads(n).callers_wait(!caller).outside_budget());
            std::atomic<bool> stop{false};
            std::atomic<unsigned> started{0};
            unsigned busy = caller ? n : n - 1;
            for (unsigned i = 0; i < busy; i++)
                weft::spawn(p, [&] {
                    started.fetch_add(1);
                    while (!stop.load())
                        std::this_thread::yield();
                });
            while (started.load() < busy)
                std::this_thread::yield();
            weft::event e(p, 1);
            weft::run(p, [&] {
                job(e);
                stop.store(true);
            });
            CHECK(e.is_set());
        }
}

/* f waits for what g does, one join below the top of a job, while every
 * other worker spins: the waiting thread runs its own g (weft.h,
 * weft_join). Hangs without that (ctest's timeout); took the other
 * workers' whole jobs when they ended. */
TEST(join_f_waits_for_its_own_g) {
    with_the_others_busy([](weft::event &e) {
        weft::join([&] { weft::join([&] { e.wait(); }, [&] { e.signal(); }); }, [] {});
    });
}

#if WEFT_HPP_EXCEPTIONS
TEST(join_rethrows_after_both_finished) {
    weft::pool p(threads(2));
    weft::run(p, [] {
        std::atomic<bool> g_done{false};
        try {
            weft::join([]() -> int { throw std::runtime_error("f"); },
                       [&] {
                           std::this_thread::sleep_for(std::chrono::milliseconds(20));
                           g_done.store(true);
                           return 2;
                       });
            CHECK(false);
        } catch (const std::runtime_error &e) {
            CHECK(std::strcmp(e.what(), "f") == 0);
            CHECK(g_done.load()); /* g's frame use was over before the throw */
        }
        try { /* both throw: f's exception wins */
            weft::join([] { throw std::runtime_error("f"); }, [] { throw std::logic_error("g"); });
            CHECK(false);
        } catch (const std::runtime_error &e) {
            CHECK(std::strcmp(e.what(), "f") == 0);
        }
        try { /* g alone throws, run here after f */
            weft::join([] { return 1; }, []() -> int { throw std::logic_error("g"); });
            CHECK(false);
        } catch (const std::logic_error &e) {
            CHECK(std::strcmp(e.what(), "g") == 0);
        }
        /* g taken by the other worker: f waits until it has started there.
         * Then g throws there (rethrown here), or f throws here while g
         * still runs there (join waits for g before f's exception leaves). */
        for (int f_throws = 0; f_throws < 2; f_throws++) {
            std::atomic<int> g_state{0}; /* 1: started elsewhere, 2: done */
            int me = weft::thread_index();
            try {
                weft::join(
                    [&]() -> int {
                        /* A fork of our own answers the other worker's
                         * request: g goes public (no forced steal needed,
                         * which the POSIX seam has not). */
                        while (g_state.load() == 0) {
                            weft::join([] {}, [] {});
                            std::this_thread::yield();
                        }
                        if (f_throws)
                            throw std::runtime_error("f");
                        return 1;
                    },
                    [&]() -> int {
                        CHECK(weft::thread_index() != me);
                        g_state.store(1);
                        std::this_thread::sleep_for(std::chrono::milliseconds(5));
                        g_state.store(2);
                        if (!f_throws)
                            throw std::logic_error("g");
                        return 2;
                    });
                CHECK(false);
            } catch (const std::runtime_error &e) {
                CHECK(f_throws && std::strcmp(e.what(), "f") == 0);
                CHECK_EQ(g_state.load(), 2);
            } catch (const std::logic_error &e) {
                CHECK(!f_throws && std::strcmp(e.what(), "g") == 0);
            }
        }
    });
    try {
        weft::run(p, [] { throw std::out_of_range("from a worker"); });
        CHECK(false);
    } catch (const std::out_of_range &e) {
        CHECK(std::strcmp(e.what(), "from a worker") == 0);
    }
}
#endif

/* g's result, made on another worker, in join's raw slot: moved out when f
 * returns, destroyed when f throws (the sanitizer build's leak check sees a
 * string left behind). g is taken as in the test above. */
TEST(join_keeps_or_frees_the_result_of_a_stolen_g) {
    weft::pool p(threads(2));
    weft::run(p, [] {
        for (int f_throws = 0; f_throws < (WEFT_HPP_EXCEPTIONS ? 2 : 1); f_throws++) {
            std::atomic<bool> g_started{false};
            int me = weft::thread_index();
            auto f = [&]() -> int {
                while (!g_started.load()) {
                    weft::join([] {}, [] {});
                    std::this_thread::yield();
                }
#if WEFT_HPP_EXCEPTIONS
                if (f_throws)
                    throw std::runtime_error("f");
#endif
                return 1;
            };
            auto g = [&] {
                CHECK(weft::thread_index() != me);
                g_started.store(true);
                return std::string(100, 'g'); /* on the heap */
            };
#if WEFT_HPP_EXCEPTIONS
            try {
                auto [a, b] = weft::join(f, g);
                CHECK(!f_throws && a == 1 && b == std::string(100, 'g'));
            } catch (const std::runtime_error &) {
                CHECK(f_throws);
            }
#else
            auto [a, b] = weft::join(f, g);
            CHECK(a == 1 && b == std::string(100, 'g'));
#endif
        }
    });
}

TEST(parallel_for_calls_each_index_once) {
    weft::pool p(threads(4));
    std::vector<std::atomic<int>> hits(2000);
    weft::parallel_for(p, -500, 1500, [&](int i) { hits[static_cast<std::size_t>(i + 500)]++; });
    for (auto &h : hits)
        CHECK_EQ(h.load(), 1);
    std::vector<int> v(3000, 1);
    weft::parallel_for(p, 0, v.size(), 7, [&](std::size_t i) { v[i] += static_cast<int>(i); });
    for (std::size_t i = 0; i < v.size(); i++)
        CHECK_EQ(v[i], 1 + static_cast<long long>(i));
    weft::parallel_for(0, v.size(), [&](std::size_t i) { v[i] = 0; }); /* the default pool */
    CHECK(std::all_of(v.begin(), v.end(), [](int x) { return x == 0; }));

    std::atomic<int> calls{0};
    weft::parallel_for(p, 5, 5, [&](int) { calls++; });
    weft::parallel_for(p, 9, 3, [&](int) { calls++; });
    weft::parallel_for(p, std::int64_t{-3}, std::int64_t{-3}, [&](std::int64_t) { calls++; });
    CHECK_EQ(calls.load(), 0);
    weft::parallel_for(nullptr, std::int64_t{-3}, std::int64_t{5}, [&](std::int64_t) { calls++; });
    CHECK_EQ(calls.load(), 8);
}

/* Grain 0's calls on 4096 indices or more end on multiples of 64 of the
 * indices themselves, as in C (weft_for), not of their offsets from begin:
 * for parallel_for and reduce, from an unaligned and a negative begin. */
struct calls {
    std::mutex m;
    std::vector<std::pair<long, long>> seen;
    void add(long b, long e) {
        std::lock_guard<std::mutex> g(m);
        seen.emplace_back(b, e);
    }
    /* The calls cover [begin, end) once; returns how many are long enough,
     * each checked to end aligned. */
    int check(long begin, long end) {
        CHECK(!seen.empty());
        std::sort(seen.begin(), seen.end());
        CHECK_EQ(seen.front().first, begin);
        CHECK_EQ(seen.back().second, end);
        int checked = 0;
        for (std::size_t k = 0; k < seen.size(); k++) {
            if (k > 0)
                CHECK_EQ(seen[k].first, seen[k - 1].second);
            unsigned long len = static_cast<unsigned long>(seen[k].second) -
                                static_cast<unsigned long>(seen[k].first); /* no overflow */
            if (len >= 4096 && seen[k].second != end) {
                CHECK_EQ(((seen[k].second % 64) + 64) % 64, 0);
                checked++;
            }
        }
        seen.clear();
        return checked;
    }
};

TEST(grain_0_calls_end_on_aligned_indices) {
    weft::pool p(threads(2));
    calls c;
    const long n = 128 * 5001; /* steps of a 128th: an odd count */
    int checked = 0;           /* how many depends on the steals */
    for (long begin : {3L, -1000003L}) {
        weft::parallel_for(p, begin, begin + n, [&](long b, long e) { c.add(b, e); });
        checked += c.check(begin, begin + n);
        long total = weft::reduce(
            p, begin, begin + n, 0L,
            [&](long b, long e) {
                c.add(b, e);
                return e - b;
            },
            std::plus<>());
        CHECK_EQ(total, n);
        checked += c.check(begin, begin + n);
    }
    CHECK(checked > 0);
    /* The widest range from a begin off a multiple of 64: weft_for's range
     * then ends at SIZE_MAX (range_start's "the range fits"). Pieces only:
     * the body is called a few hundred times. */
    const long lo = std::numeric_limits<long>::min() + 5, hi = std::numeric_limits<long>::max();
    weft::parallel_for(p, lo, hi, [&](long b, long e) { c.add(b, e); });
    CHECK(c.check(lo, hi) > 0);
}

/* Iterators and containers, as std::for_each with a parallel policy. */
TEST(parallel_for_over_iterators_and_containers) {
    weft::pool p(threads(4));
    std::vector<int> v(5000);
    for (std::size_t i = 0; i < v.size(); i++)
        v[i] = static_cast<int>(i);
    weft::parallel_for(p, v.begin(), v.end(), [](int &x) { x *= 2; });
    for (std::size_t i = 0; i < v.size(); i++)
        CHECK_EQ(v[i], 2 * static_cast<long long>(i));
    weft::parallel_for(v, [](int &x) { x += 1; }); /* a container, the default pool */
    weft::parallel_for(p, v.begin() + 10, v.begin() + 10, [](int &) { CHECK(false); });
    std::vector<std::atomic<int>> hits(777);
    weft::parallel_for(p, hits, [](std::atomic<int> &h) { h++; });
    for (auto &h : hits)
        CHECK_EQ(h.load(), 1);
    int raw[64] = {0};
    weft::parallel_for(p, raw, [](int &x) { x = 7; });                       /* a C array */
    weft::parallel_for(std::begin(raw), std::end(raw), [](int &x) { x++; }); /* pointers */
    CHECK(std::all_of(std::begin(raw), std::end(raw), [](int x) { return x == 8; }));
    const std::vector<int> &cv = v;
    std::atomic<long> sum{0};
    weft::parallel_for(p, cv.cbegin(), cv.cend(), [&](int x) { sum += x; });
    long expect = 0;
    for (int x : v)
        expect += x;
    CHECK_EQ(sum.load(), expect);
}

/* weft::invoke runs every callable once, in parallel where it can. */
TEST(invoke_runs_each_once) {
    weft::pool p(threads(4));
    std::atomic<int> a{0}, b{0}, c{0}, d{0}, e{0};
    weft::run(p, [&] {
        weft::invoke([&] { a++; });
        weft::invoke([&] { a++; }, [&] { b++; });
        weft::invoke([&] { c++; }, [&] { d++; }, [&] { e++; }, [&] { e++; }, [&] { e++; });
    });
    CHECK_EQ(a.load(), 2);
    CHECK_EQ(b.load(), 1);
    CHECK_EQ(c.load(), 1);
    CHECK_EQ(d.load(), 1);
    CHECK_EQ(e.load(), 3);
    int x = 0, y = 0;
    weft::invoke([&] { x = 1; }, [&] { y = 2; }); /* from outside: the default pool */
    CHECK_EQ(x + y, 3);
}

#if WEFT_HPP_EXCEPTIONS
TEST(invoke_rethrows_the_first_exception) {
    weft::pool p(threads(2));
    std::atomic<int> ran{0};
    try {
        weft::invoke([&] { ran++; },
                     [&] {
                         ran++;
                         throw std::runtime_error("second");
                     },
                     [&] {
                         ran++;
                         throw std::logic_error("third");
                     });
        CHECK(false);
    } catch (const std::runtime_error &err) {
        CHECK(std::strcmp(err.what(), "second") == 0);
    }
    CHECK_EQ(ran.load(), 3); /* every one ran before the rethrow */
}
#endif

struct piece {
    long begin, end;
};

/* The pieces a per-range parallel_for was called with, sorted. */
template <class Run> static std::vector<piece> pieces(Run run) {
    std::mutex m;
    std::vector<piece> out;
    run([&](long b, long e) {
        std::lock_guard<std::mutex> lock(m);
        out.push_back({b, e});
    });
    std::sort(out.begin(), out.end(), [](piece x, piece y) { return x.begin < y.begin; });
    return out;
}

TEST(parallel_for_per_range_with_grain) {
    weft::pool p(threads(4));
    auto ps = pieces([&](auto f) { weft::parallel_for(p, 100L, 1100L, 10, f); });
    long next = 100;
    for (piece x : ps) {
        CHECK_EQ(x.begin, next);
        CHECK(x.end - x.begin >= 10 && x.end - x.begin < 20);
        next = x.end;
    }
    CHECK_EQ(next, 1100);
    /* A literal 0 first is a begin, not a null pool: grain 10 applies. */
    static_assert(!std::is_convertible_v<int, weft::pool_ref>);
    static_assert(std::is_convertible_v<std::nullptr_t, weft::pool_ref>);
    std::atomic<int> short_pieces{0}, covered{0};
    weft::parallel_for(0, 100, 10, [&](int b, int e) {
        short_pieces += e - b < 10;
        covered += e - b;
    });
    CHECK_EQ(short_pieces.load(), 0);
    CHECK_EQ(covered.load(), 100);
    /* Adaptive: still an exact cover. */
    ps = pieces([&](auto f) { weft::parallel_for(p, -50L, 50L, f); });
    next = -50;
    for (piece x : ps) {
        CHECK_EQ(x.begin, next);
        CHECK(x.end > x.begin);
        next = x.end;
    }
    CHECK_EQ(next, 50);
}

#if WEFT_HPP_EXCEPTIONS
/* Every other index waits until index 0 has thrown (with a deadline), so
 * the workers cannot run the whole loop while the caller, which runs index
 * 0, is off its CPU: what has not started by then is skipped. */
TEST(parallel_for_rethrows_and_skips_the_rest) {
    weft::pool p(threads(2));
    std::atomic<long> calls{0};
    std::atomic<bool> thrown{false};
    try {
        weft::parallel_for(p, 0, 100000, 1, [&](int i) {
            calls++;
            if (i == 0) {
                thrown = true;
                throw std::out_of_range("index 0");
            }
            auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!thrown && std::chrono::steady_clock::now() < deadline)
                std::this_thread::yield();
        });
        CHECK(false);
    } catch (const std::out_of_range &e) {
        CHECK(std::strcmp(e.what(), "index 0") == 0);
    }
    CHECK(calls.load() < 100000);
}
#endif

/* A tree of depth d with fan-out 3, spawned node by node into one scope. */
static void grow(weft::scope &s, std::atomic<long> &nodes, int depth) {
    nodes++;
    if (depth == 0)
        return;
    for (int i = 0; i < 3; i++)
        s.spawn([&s, &nodes, depth] { grow(s, nodes, depth - 1); });
}

TEST(scope_waits_for_every_job) {
    weft::pool p(threads(4));
    std::atomic<long> nodes{0};
    weft::scope(p, [&](weft::scope &s) { grow(s, nodes, 7); });
    CHECK_EQ(nodes.load(), (2187 * 3 - 1) / 2); /* 1 + 3 + ... + 3^7 */

    nodes = 0; /* the default pool, and spawns of every storage kind */
    auto big = std::make_shared<std::vector<long>>(100, 1);
    /* Outlives the scope (the body's own frame would not: it ends first). */
    auto task = [&nodes]() noexcept { nodes.fetch_add(10); };
    weft::scope([&](weft::scope &s) {
        s.spawn([n = &nodes]() noexcept { n->fetch_add(1); }); /* in the job's argument */
        s.spawn([&nodes, big] { nodes += big->at(99) + 1; });  /* on the heap */
        s.spawn(std::ref(task));                               /* by reference */
        weft_scope_spawn(
            s.get(), [](void *arg) { static_cast<std::atomic<long> *>(arg)->fetch_add(100); },
            &nodes);
    });
    CHECK_EQ(nodes.load(), 1 + 2 + 10 + 100);
    CHECK_EQ(big.use_count(), 1); /* the heap job's copy was destroyed */
}

#if WEFT_HPP_EXCEPTIONS
TEST(scope_rethrows_after_all_jobs) {
    weft::pool p(threads(4));
    std::atomic<int> ran{0};
    try {
        weft::scope(p, [&](weft::scope &s) {
            for (int i = 0; i < 50; i++)
                s.spawn([&ran, i] {
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
                    ran++;
                    if (i == 7)
                        throw std::logic_error("job 7");
                });
        });
        CHECK(false);
    } catch (const std::logic_error &e) {
        CHECK(std::strcmp(e.what(), "job 7") == 0);
        CHECK_EQ(ran.load(), 50);
    }
    ran = 0;
    try {
        weft::scope(p, [&](weft::scope &s) {
            for (int i = 0; i < 10; i++)
                s.spawn([&ran] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    ran++;
                });
            throw std::runtime_error("body");
        });
        CHECK(false);
    } catch (const std::runtime_error &e) {
        CHECK(std::strcmp(e.what(), "body") == 0);
        CHECK_EQ(ran.load(), 10);
    }
}
#endif

/* A cancel_source cancelled from another thread: the run's loop stops, run
 * answers false; before the run, f is skipped; reset, it runs again. */
TEST(a_cancel_source_cancels_from_another_thread) {
    weft::pool p(threads(2));
    weft::cancel_source source;
    CHECK(!source.cancelled());
    std::atomic<long> visited{0};
    std::thread watchdog([&] {
        while (visited.load() < 100)
            std::this_thread::yield();
        source.cancel();
    });
    bool finished = weft::run(p, source, [&] {
        weft::parallel_for(0, 1000000, [&](int) {
            visited.fetch_add(1);
            while (visited.load() >= 100 && !weft::cancelled())
                std::this_thread::yield(); /* until the watchdog fires */
        });
    });
    watchdog.join();
    CHECK(!finished);
    CHECK(source.cancelled());
    CHECK(visited.load() < 1000000);
    bool ran = false;
    CHECK(!weft::run(p, source, [&] { ran = true; })); /* cancelled: skipped */
    CHECK(!ran);
    source.reset();
    CHECK(weft::run(source, [&] { ran = true; })); /* the default pool */
    CHECK(ran);
#if WEFT_HPP_EXCEPTIONS
    bool threw = false;
    try {
        weft::run(p, source, [] { throw std::runtime_error("from f"); });
    } catch (const std::runtime_error &) {
        threw = true;
    }
    CHECK(threw);
#endif
}

/* parallel_for_2d: every cell once, over any integer type (negative bounds
 * too); an exception skips the blocks not started and is rethrown. */
/* parallel_for over containers whose iterators are not random access:
 * every element once, writable through a list's iterator. */
TEST(parallel_for_over_forward_iterators) {
    weft::pool p(threads(2));
    std::list<int> l;
    for (int i = 0; i < 1000; i++)
        l.push_back(i);
    weft::parallel_for(p, l.begin(), l.end(), [](int &x) { x *= 2; });
    int i = 0;
    for (int x : l)
        CHECK_EQ(x, 2 * i++);
    std::set<int> s(l.begin(), l.end());
    std::atomic<long> sum{0};
    weft::parallel_for(s, [&](int x) { sum.fetch_add(x); }); /* the default pool */
    CHECK_EQ(sum.load(), 999L * 1000);
    std::map<int, int> m{{1, 10}, {2, 20}, {3, 30}};
    std::atomic<int> values{0};
    weft::parallel_for(p, m,
                       [&](const std::pair<const int, int> &kv) { values.fetch_add(kv.second); });
    CHECK_EQ(values.load(), 60);
    std::list<int> empty;
    weft::parallel_for(p, empty, [](int) { CHECK(false); });
}

TEST(parallel_for_2d_tiles_once_and_rethrows) {
    weft::pool p(threads(2));
    std::vector<std::atomic<int>> hits(37 * 23);
    weft::parallel_for_2d(p, -5, 32, 100, 123, [&](int r0, int r1, int c0, int c1) {
        for (int r = r0; r < r1; r++)
            for (int c = c0; c < c1; c++)
                hits[static_cast<std::size_t>((r + 5) * 23 + (c - 100))].fetch_add(1);
    });
    for (auto &h : hits)
        CHECK_EQ(h.load(), 1);
    std::atomic<long> blocks{0};
    weft::parallel_for_2d(0u, 10u, 0u, 10u, [&](unsigned, unsigned, unsigned, unsigned) {
        blocks.fetch_add(1); /* the default pool, weft's blocks */
    });
    CHECK(blocks.load() >= 1);
#if WEFT_HPP_EXCEPTIONS
    std::atomic<long> ran{0};
    bool threw = false;
    try {
        weft::parallel_for_2d(p, 0, 16, 0, 16, 1, 1, [&](int, int, int, int) {
            ran.fetch_add(1);
            throw std::runtime_error("block");
        });
    } catch (const std::runtime_error &e) {
        threw = std::strcmp(e.what(), "block") == 0;
    }
    CHECK(threw);
    CHECK(ran.load() < 256); /* the rest skipped */
#endif
}

TEST(cancel_skips_jobs_and_destroys_their_callables) {
    /* The body keeps the only worker: nothing queued starts. */
    weft::pool p(threads(1).callers_wait());
    std::atomic<int> ran{0};
    auto owned = std::make_shared<int>(0);
    weft::scope(p, [&](weft::scope &s) {
        CHECK(!weft::cancelled());
        for (int i = 0; i < 100; i++) {
            s.spawn([&ran, owned] { ran++; });                   /* on the heap */
            s.spawn([r = &ran]() noexcept { r->fetch_add(1); }); /* in the argument */
        }
        s.cancel();
        CHECK(weft::cancelled());
        s.spawn([&ran, owned] { ran++; }); /* refused: destroyed, nothing thrown */
    });
    CHECK_EQ(ran.load(), 0);
    CHECK_EQ(owned.use_count(), 1); /* every skipped or refused callable was destroyed */

    /* A loop cancelled from its body, a graph run cancelled by a node. */
    std::atomic<int> pieces{0};
    weft::parallel_for(p, 0, 1000, 1, [&](int i) {
        pieces++;
        if (i == 9)
            weft::cancel();
    });
    CHECK_EQ(pieces.load(), 10);
    weft::graph g;
    bool stop = true, after_ran = false;
    auto first = g.add([&] {
        if (stop)
            weft::cancel();
    });
    auto after = g.add([&] { after_ran = true; });
    g.edge(first, after);
    CHECK(!g.run(p));
    CHECK(!after_ran);
    stop = false;
    CHECK(g.run(p));
    CHECK(after_ran);
    CHECK(!weft::cancelled()); /* outside every group */
    weft::cancel();            /* a no-op */
#if WEFT_HPP_EXCEPTIONS
    try {
        (void)weft::reduce(
            p, 0, 100, 0, 0L,
            [](int i) {
                if (i == 50)
                    weft::cancel();
                return long{i};
            },
            std::plus<>());
        CHECK(false);
    } catch (const std::system_error &e) {
        CHECK(e.code() == std::errc::operation_canceled);
    }
#endif
}

#if WEFT_HPP_EXCEPTIONS
/* An exception in a loop body cancels the loop: a piece running beside it
 * sees weft::cancelled() (it would spin forever otherwise). */
TEST(an_exception_cancels_its_loop) {
    weft::pool p(threads(2));
    std::atomic<bool> second_started{false};
    try {
        weft::parallel_for(p, 0, 2, 1, [&](int i) {
            if (i == 1) {
                second_started = true;
                while (!weft::cancelled())
                    std::this_thread::yield();
                return;
            }
            while (!second_started)
                std::this_thread::yield();
            throw std::runtime_error("piece 0");
        });
        CHECK(false);
    } catch (const std::runtime_error &e) {
        CHECK(std::strcmp(e.what(), "piece 0") == 0);
    }
}
#endif

/* ---- typed tasks (weft.h, WEFT_TASK) in C++ ------------------------------ */

WEFT_TASK(long, fib_task, int, n) {
    if (n < 2)
        return n;
    long a, b;
    WEFT_JOIN(a, fib_task, (n - 2), b, fib_task, (n - 1));
    return a + b;
}

/* Arguments and a result of class type: moved into the frame and out of
 * it, by a thief too. The binary labels of depth digits after prefix, in
 * order. */
WEFT_TASK(std::string, labels, std::string, prefix, unsigned, depth) {
    if (depth == 0)
        return prefix + ' ';
    std::string a, b;
    WEFT_JOIN(a, labels, (prefix + '0', depth - 1), b, labels, (prefix + '1', depth - 1));
    return a + b;
}

/* A move-only argument: the sum of the leaves' numbers, a node numbered v
 * having children 2v and 2v + 1 (those at depth d below 1 are 2^d to
 * 2^(d+1) - 1). */
WEFT_TASK(long, sum_owned, std::unique_ptr<long>, v, unsigned, depth) {
    if (depth == 0)
        return *v;
    long a, b;
    WEFT_JOIN(a, sum_owned, (std::make_unique<long>(*v * 2), depth - 1), b, sum_owned,
              (std::make_unique<long>(*v * 2 + 1), depth - 1));
    return a + b;
}

static std::string labels_serial(const std::string &prefix, unsigned depth) {
    return depth == 0
               ? prefix + ' '
               : labels_serial(prefix + '0', depth - 1) + labels_serial(prefix + '1', depth - 1);
}

/* A task named as typed_twin.cpp's, with other types: C++ would merge two
 * files' class types of one name, their destructors with them. The sum of
 * v, halved depth times. */
WEFT_TASK(long, work, std::vector<long>, v, unsigned, depth) {
    if (depth == 0 || v.size() < 2) {
        long sum = 0;
        for (long x : v)
            sum += x;
        return sum;
    }
    auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    long a, b;
    WEFT_JOIN(a, work, (std::vector<long>(v.begin(), mid), depth - 1), b, work,
              (std::vector<long>(mid, v.end()), depth - 1));
    return a + b;
}

std::string twin_work(unsigned depth); /* typed_twin.cpp */

TEST(typed_tasks_compute_in_pools_and_outside) {
    std::string expected = labels_serial("", 8);
    for (unsigned n = 1; n <= 4; n++) {
        weft::pool p(threads(n));
        CHECK_EQ(weft::run(p, [] { return fib_task(24); }), 46368);
        CHECK(weft::run(p, [] { return labels("", 8); }) == expected);
        CHECK_EQ(weft::run(p, [] { return sum_owned(std::make_unique<long>(1), 8); }),
                 (256 + 511) * 256 / 2);
        /* two files' tasks of one name; the other one's a three-part join */
        CHECK(weft::run(p, [] { return twin_work(8); }) == expected);
        std::vector<long> v(64);
        for (std::size_t i = 0; i < v.size(); i++)
            v[i] = static_cast<long>(i + 1);
        CHECK_EQ(weft::run(p, [&] { return work(v, 4); }), 64 * 65 / 2);
    }
    CHECK_EQ(fib_task(20), 6765); /* outside every pool: the default pool's */
    CHECK(labels("x", 3) == labels_serial("x", 3));
}

/* Every leaf once, while idle workers take frames by force: leaves spin,
 * so thieves find frames to take on 2 to 8 workers. */
static std::atomic<int> leaf_seen[512];

WEFT_VOID_TASK(visit_leaves, unsigned, lo, unsigned, hi) {
    if (hi - lo == 1) {
        leaf_seen[lo].fetch_add(1);
        auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
        while (std::chrono::steady_clock::now() < until) {
        }
        return;
    }
    unsigned mid = lo + (hi - lo) / 2;
    WEFT_JOIN_VOID(visit_leaves, (lo, mid), visit_leaves, (mid, hi));
}

TEST(typed_tasks_run_once_while_frames_are_taken) {
    for (unsigned n = 2; n <= 8; n *= 2) {
        weft::pool p(threads(n));
        for (auto &seen : leaf_seen)
            seen.store(0);
        weft::run(p, [] { visit_leaves(0, 512); });
        for (auto &seen : leaf_seen)
            CHECK_EQ(seen.load(), 1);
    }
}

/* The first call waits for the offered one to start on the other worker,
 * then cancels its group: the offered call belongs to it and sees that. */
static std::atomic<bool> offered_started{false};

WEFT_TASK(int, until_cancelled, int, x) {
    offered_started.store(true);
    while (!weft::cancelled())
        std::this_thread::yield();
    return x + 1;
}

WEFT_TASK(int, cancel_when_offered_runs, int, x) {
    while (!offered_started.load())
        std::this_thread::yield();
    weft::cancel();
    return x;
}

WEFT_TASK(int, join_then_cancel, int, x) {
    int a, b;
    WEFT_JOIN(a, cancel_when_offered_runs, (x), b, until_cancelled, (x));
    return a + b;
}

TEST(typed_join_belongs_to_the_joining_group) {
    offered_started.store(false);
    weft::pool p(threads(2));
    weft::cancel_source source;
    int sum = 0;
    CHECK(!weft::run(p, source, [&] { sum = join_then_cancel(41); }));
    CHECK_EQ(sum, 41 + 42);
}

/* A wait in the first call for what the offered one signals, while every
 * other thread spins: only the waiting thread can run the offered call. */
WEFT_TASK(int, wait_for, weft::event *, e) {
    e->wait();
    return 5;
}

WEFT_TASK(int, signal_to, weft::event *, e) {
    e->signal();
    return 7;
}

WEFT_TASK(int, wait_for_own_call, weft::event *, e) {
    int a, b;
    WEFT_JOIN(a, wait_for, (e), b, signal_to, (e));
    return a + b;
}

TEST(typed_join_wait_runs_its_own_call) {
    with_the_others_busy([](weft::event &e) { CHECK_EQ(wait_for_own_call(&e), 12); });
}

#if WEFT_HPP_EXCEPTIONS
/* A typed task's body is noexcept in C++: an exception that would leave it
 * ends the program through std::terminate (in a child process here). */
[[noreturn]] static void leaf_fails() {
    throw std::runtime_error("leaf");
}

WEFT_TASK(int, throws_at_the_leaves, int, n) {
    if (n == 1)
        leaf_fails();
    if (n < 2)
        return n;
    int a, b;
    WEFT_JOIN(a, throws_at_the_leaves, (n - 2), b, throws_at_the_leaves, (n - 1));
    return a + b;
}

static_assert(noexcept(throws_at_the_leaves(0)) &&noexcept(weft__task_run_throws_at_the_leaves(
                  nullptr)) &&noexcept(weft__task_body_throws_at_the_leaves(nullptr, nullptr, 0)),
              "a typed task's entry, thief's entry and body are noexcept");

TEST(an_exception_leaving_a_typed_task_terminates) {
    std::fflush(stderr);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        alarm(60);
        std::set_terminate([] { _exit(3); });
        /* The caller runs everything, nobody steals: a thief's stack, whose
         * end would terminate anyway, has no part in it. */
        try {
            weft::pool p(threads(1).callers_wait());
            weft::run(p, [] { return throws_at_the_leaves(10); });
        } catch (...) {
            _exit(4); /* it left the task, whose frames stayed linked */
        }
        _exit(0);
    }
    int status = 0;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 3);
}
#endif

/* The CPU budget: its setting, and a pool exempt from it that runs while a
 * budgeted job holds the only slot. */
TEST(cpu_budget_and_exempt_pools) {
    weft::set_concurrency(1);
    CHECK_EQ(weft::concurrency(), 1u);
#if WEFT_HPP_EXCEPTIONS
    try {
        weft::set_concurrency(WEFT_CONCURRENCY_MAX + 1);
        CHECK(false);
    } catch (const std::system_error &e) {
        CHECK_EQ(e.code().value(), EINVAL);
    }
    CHECK_EQ(weft::concurrency(), 1u);
#endif
    std::atomic<bool> holding{false}, go{false};
    weft::pool budgeted(threads(2)), exempt(threads(2).outside_budget());
    weft::spawn(budgeted, [&] {
        holding = true;
        while (!go.load())
            std::this_thread::sleep_for(std::chrono::microseconds(100));
    });
    while (!holding.load())
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    weft::run(exempt, [&] { go = true; });
    budgeted.destroy();
    weft::set_concurrency(0);
}

TEST(spawn_runs_detached_jobs_before_the_pool_goes) {
    std::atomic<long> sum{0};
    {
        weft::pool p(threads(3));
        for (long i = 1; i <= 100; i++)
            weft::spawn(p, [&sum, i] { sum += i; });
        std::string text(100, 'x');
        weft::spawn(p, [&sum, text] { sum += static_cast<long>(text.size()); });
        weft::spawn(p, [s = &sum] { s->fetch_add(1); });
        weft::run(p, [&] { weft::spawn(p, [&sum] { sum += 1000; }); }); /* from a worker */
    }
    CHECK_EQ(sum.load(), 5050 + 100 + 1 + 1000);

    std::atomic<bool> done{false};
    weft::spawn([&done] { done.store(true); }); /* the default pool */
    for (int i = 0; i < 5000 && !done.load(); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(done.load());
}

TEST(small_noexcept_work_allocates_nothing) {
    if (!COUNTS_ALLOCATIONS) {
        std::fprintf(stderr, "skipped: operator new is TSan's here, it cannot be counted\n");
        return;
    }
    weft::pool p(threads(2));
    std::atomic<long> count{0};
    auto task = [&count]() noexcept { count.fetch_add(1, std::memory_order_relaxed); };
    long before = allocations.load();
    weft::run(p, [&] {
        auto [a, b] = weft::join([] { return 1; }, [&] { return weft::run(p, [] { return 2; }); });
        count += a + b;
        weft::parallel_for(p, 0, 1000, [&](int) { task(); });
        weft::parallel_for(p, 0, 1000, 16, [&](int lo, int hi) { count += hi - lo; });
        weft::scope(p, [&](weft::scope &s) {
            for (int i = 0; i < 100; i++)
                s.spawn(std::ref(task));
            s.spawn([c = &count]() noexcept { c->fetch_add(1); });
            s.spawn([]() noexcept {});
        });
    });
    CHECK_EQ(allocations.load() - before, 0);
    CHECK_EQ(count.load(), 3 + 1000 + 1000 + 100 + 1);

    /* A callable that does not fit (or may throw): one block per spawn. */
    before = allocations.load();
    weft::scope(p, [&](weft::scope &s) {
        for (int i = 0; i < 10; i++)
            s.spawn([&count, i] { count += i; });
    });
    CHECK_EQ(allocations.load() - before, 10);
}

TEST(nests_with_the_c_api) {
    weft::pool p(threads(4).callers_wait()); /* every job on a worker: counted */
    std::atomic<long> total{0};
    weft::scope(p, [&](weft::scope &s) {
        for (int k = 0; k < 4; k++)
            s.spawn([&p, &total] {
                weft::parallel_for(p, 0, 100, [&](int i) {
                    auto [x, y] = weft::join([i] { return i; }, [i] { return i; });
                    total += x + y;
                });
            });
    });
    CHECK_EQ(total.load(), 4 * 2 * 4950);
    weft_stats st = p.stats();
    CHECK(st.jobs >= 4);
}

/* A segment of indices: combining two is only valid in index order, so a
 * combine out of order (or a commutative assumption) is caught. */
struct segment {
    long first, last, count; /* count 0: the identity */
};

static segment concat(const segment &a, const segment &b) {
    if (a.count == 0)
        return b;
    if (b.count == 0)
        return a;
    CHECK_EQ(a.last + 1, b.first);
    return {a.first, b.last, a.count + b.count};
}

TEST(reduce_combines_in_index_order) {
    weft::pool p(threads(4));
    long sum = weft::reduce(
        p, 1, 1001, 0L, [](int i) { return long{i}; }, std::plus<>());
    CHECK_EQ(sum, 500500);
    sum = weft::reduce(
        p, -100L, 100L, 7, 0L,
        [](long b, long e) {
            long s = 0;
            for (long i = b; i < e; i++)
                s += i;
            return s;
        },
        std::plus<>());
    CHECK_EQ(sum, -100);
    segment all = weft::reduce(
        p, std::size_t{0}, std::size_t{10000}, 3, segment{0, 0, 0},
        [](std::size_t i) {
            return segment{long(i), long(i), 1};
        },
        concat);
    CHECK_EQ(all.first, 0);
    CHECK_EQ(all.last, 9999);
    CHECK_EQ(all.count, 10000);
    /* Empty: the identity. The default pool, with and without a grain. */
    CHECK_EQ(weft::reduce(
                 5, 5, 42L, [](int) { return 1L; }, std::plus<>()),
             42);
    CHECK_EQ(weft::reduce(
                 0, 100, 8, 0L, [](int i) { return long{i}; }, std::plus<>()),
             4950);
}

TEST(reduce_with_a_grain_is_deterministic) {
    auto sum = [](unsigned n) {
        weft::pool p(threads(n));
        return weft::reduce(
            p, 0, 100000, 64, 0.0f, [](int i) { return 1.0f / static_cast<float>(i + 1); },
            std::plus<>());
    };
    float one = sum(1), two = sum(2), five = sum(5);
    CHECK(std::memcmp(&one, &two, sizeof one) == 0);
    CHECK(std::memcmp(&one, &five, sizeof one) == 0);
}

#if WEFT_HPP_EXCEPTIONS
TEST(reduce_and_broadcast_rethrow) {
    weft::pool p(threads(3));
    try {
        weft::reduce(
            p, 0, 1000, 10, 0,
            [](int i) -> int {
                if (i == 500)
                    throw std::range_error("500");
                return i;
            },
            std::plus<>());
        CHECK(false);
    } catch (const std::range_error &e) {
        CHECK(std::strcmp(e.what(), "500") == 0);
    }
    try {
        weft::broadcast(p, [](unsigned index) {
            if (index == 1)
                throw std::runtime_error("worker 1");
        });
        CHECK(false);
    } catch (const std::runtime_error &e) {
        CHECK(std::strcmp(e.what(), "worker 1") == 0);
    }
}
#endif

TEST(broadcast_runs_once_per_worker) {
    weft::pool p(threads(3));
    std::atomic<int> runs[3] = {};
    weft::broadcast(p, [&](unsigned index) {
        CHECK_EQ(weft::thread_index(), index);
        runs[index]++;
    });
    for (auto &r : runs)
        CHECK_EQ(r.load(), 1);
}

TEST(phase_begins_and_ends) {
    weft::pool p(threads(2));
    {
        weft::phase warm(p);
        CHECK_EQ(weft::run(p, [] { return 7; }), 7);
        weft::phase moved(std::move(warm)); /* one phase, ended once */
        moved.end(true);
        moved.end(); /* already ended: nothing */
    }
    weft::phase nested_outer(p), nested_inner(p, true);
    weft::parallel_for(p, 0, 100, [](int) {});
    weft::phase on_default(nullptr);
}

TEST(graph_runs_nodes_after_their_predecessors) {
    weft::pool p(threads(4));
    weft::graph g;
    std::atomic<int> step{0};
    int a_at = -1, b_at = -1, c_at = -1, d_at = -1, runs = 0;
    /* A diamond: a before b and c, both before d. */
    auto a = g.add([&] { a_at = step++; });
    auto b = g.add([&] { b_at = step++; });
    auto c = g.add([&] { c_at = step++; });
    auto d = g.add([&, count = 0]() mutable { /* one run at a time: mutable is fine */
                                              d_at = step++;
                                              runs = ++count;
    });
    g.edge(a, b);
    g.edge(a, c);
    g.edge(b, d);
    g.edge(c, d);
    for (int run = 0; run < 3; run++) {
        step = 0;
        g.run(p);
        CHECK_EQ(a_at, 0);
        CHECK(b_at > a_at && c_at > a_at);
        CHECK(d_at > b_at && d_at > c_at);
        CHECK_EQ(d_at, 3);
    }
    CHECK_EQ(runs, 3);
    weft::graph moved(std::move(g));
    moved.run(); /* the default pool */
    CHECK_EQ(runs, 4);
}

#if WEFT_HPP_EXCEPTIONS
TEST(graph_errors) {
    weft::pool p(threads(2));
    weft::graph g;
    bool after_ran = false;
    auto first = g.add([] { throw std::runtime_error("node"); });
    auto after = g.add([&] { after_ran = true; });
    g.edge(first, after);
    try {
        g.run(p);
        CHECK(false);
    } catch (const std::runtime_error &e) {
        CHECK(std::strcmp(e.what(), "node") == 0);
    }
    CHECK(!after_ran); /* skipped: its predecessor failed */

    weft::graph cycle;
    auto x = cycle.add([] {});
    auto y = cycle.add([] {});
    cycle.edge(x, y);
    cycle.edge(y, x);
    try {
        cycle.run(p);
        CHECK(false);
    } catch (const std::system_error &e) {
        CHECK(e.code() == std::errc::too_many_symbolic_link_levels); /* ELOOP */
        CHECK(std::strstr(e.what(), "cycle through node 0") != nullptr);
    }
}
#endif

TEST(context_runs_its_own_work) {
    weft::pool p(threads(2).contexts(1).callers(1));
    CHECK_EQ(p.slots(), 4 + WEFT_SPARES_DEFAULT);
    {
        weft::context ctx(p);
        CHECK(ctx.get() != nullptr);
        CHECK_EQ(weft::thread_index(), 2); /* threads + 0 */
        std::atomic<long> sum{0};
        weft::parallel_for(p, 0, 1000, [&](int i) { sum += i; });
        CHECK_EQ(sum.load(), 499500);
#if WEFT_HPP_EXCEPTIONS
        bool busy = false; /* the only context is taken */
        std::thread([&] {
            try {
                weft::context other(p);
            } catch (const std::system_error &e) {
                busy = e.code().value() == EBUSY;
            }
        }).join();
        CHECK(busy);
#endif
        ctx.release();
        CHECK_EQ(weft::thread_index(), -1);
    }
}

TEST(priorities) {
    weft::pool p(threads(2));
    CHECK_EQ(weft::run(p, WEFT_PRIORITY_HIGH, [] { return 3; }), 3);
    std::atomic<int> ran{0};
    weft::scope(p, [&](weft::scope &s) {
        s.spawn(WEFT_PRIORITY_HIGH, [&ran] { ran++; });
        s.spawn(WEFT_PRIORITY_NORMAL, [r = &ran]() noexcept { r->fetch_add(1); });
    });
    CHECK_EQ(ran.load(), 2);
    weft::spawn(p, WEFT_PRIORITY_HIGH, [&ran] { ran++; });
    p.destroy();
    CHECK_EQ(ran.load(), 3);
}

TEST(event_waits_for_every_signal_and_runs_follow_ups) {
    weft::pool pool(weft::config().threads(2));
    std::atomic<int> followed{0};
    for (int round = 0; round < 50; round++) {
        std::vector<std::size_t> slots(16, 0);
        weft::event done(pool, 16);
        done.then([&followed] { followed.fetch_add(1); });
        for (std::size_t i = 0; i < 16; i++)
            weft::spawn(pool, [&, i] {
                slots[i] = i + 1; /* published by the signal */
                done.signal();
            });
        done.wait();
        CHECK(done.is_set());
        for (std::size_t i = 0; i < 16; i++)
            CHECK_EQ(slots[i], i + 1);
    } /* each event is destroyed right after its wait */
    {
        weft::event moved = weft::event(pool, 0);
        CHECK(moved.is_set());
    } /* an event holds a share of its pool: destroy() would throw EBUSY */
    pool.destroy();
    CHECK_EQ(followed.load(), 50);
}

/* Watches a pool's end: its workers' exits (on_exit), and its hooks being
 * freed, which happens only after weft_pool_destroy has returned (the workers
 * are joined). */
struct teardown {
    std::atomic<int> exited{0};
    std::atomic<bool> hooks_freed{false};

    struct on_free {
        std::atomic<bool> *flag;
        explicit on_free(std::atomic<bool> *f) : flag(f) {}
        on_free(const on_free &) = delete;
        on_free &operator=(const on_free &) = delete;
        ~on_free() {
            flag->store(true, std::memory_order_release);
        }
    };
    weft::config config(unsigned n) {
        auto guard = std::make_shared<on_free>(&hooks_freed);
        return threads(n).on_exit([this, guard](unsigned) { exited.fetch_add(1); });
    }
    /* For a pool destroyed on another thread: no deadline, ctest's timeout
     * catches a destruction that never comes. */
    void wait_until_freed() const {
        while (!hooks_freed.load(std::memory_order_acquire))
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
};

TEST(context_keeps_its_pool_alive) {
    teardown t;
    auto owner = std::make_unique<weft::pool>(t.config(2).contexts(1));
    weft_pool *raw = owner->get();
    {
        weft::context ctx(*owner);
#if WEFT_HPP_EXCEPTIONS
        int code = 0; /* destroy() cannot destroy it now: it throws, and changes nothing */
        try {
            owner->destroy();
        } catch (const std::system_error &e) {
            code = e.code().value();
        }
        CHECK_EQ(code, EBUSY);
        CHECK(owner->get() == raw);
#endif
        owner.reset(); /* the pool's weft::pool goes first */
        CHECK_EQ(t.exited.load(), 0);
        std::atomic<long> sum{0};
        weft::parallel_for(raw, 0, 1000, [&](int i) { sum += i; });
        CHECK_EQ(sum.load(), 499500);
        CHECK_EQ(weft::thread_index(), 2);
    } /* the last owner: the pool is destroyed here */
    CHECK_EQ(t.exited.load(), 2);
    CHECK(t.hooks_freed.load(std::memory_order_acquire));

    /* Moved from: the pool it was moved to goes first; release() lets go. */
    teardown moved;
    {
        weft::pool p(moved.config(1).contexts(1));
        weft::context ctx(p);
        { weft::pool q(std::move(p)); }
        CHECK_EQ(moved.exited.load(), 0);
        ctx.release();
        CHECK_EQ(moved.exited.load(), 1);
        CHECK(moved.hooks_freed.load(std::memory_order_acquire));
    }

    /* Members in the wrong order: the pool, declared last, is destroyed first. */
    teardown members;
    {
        struct engine {
            std::optional<weft::context> main_thread;
            weft::pool workers;
        } e{std::nullopt, weft::pool(members.config(2).contexts(1))};
        e.main_thread.emplace(e.workers);
    }
    CHECK_EQ(members.exited.load(), 2);
    CHECK(members.hooks_freed.load(std::memory_order_acquire));
}

TEST(context_on_another_thread_outlives_the_pool) {
    teardown t;
    std::optional<weft::pool> p(std::in_place, t.config(2).contexts(1));
    weft_pool *raw = p->get();
    std::atomic<int> step{0};
    std::atomic<long> sum{0};
    std::thread user([&] {
        weft::context ctx(*p);
        step.store(1, std::memory_order_release);
        while (step.load(std::memory_order_acquire) != 2)
            std::this_thread::yield();
        weft::parallel_for(raw, 0, 100, [&](int i) { sum += i; });
    }); /* ctx is the last owner: the pool is destroyed on that thread */
    while (step.load(std::memory_order_acquire) != 1)
        std::this_thread::yield();
    p.reset();
    CHECK_EQ(t.exited.load(), 0);
    step.store(2, std::memory_order_release);
    user.join();
    CHECK_EQ(sum.load(), 4950);
    CHECK_EQ(t.exited.load(), 2);
    CHECK(t.hooks_freed.load(std::memory_order_acquire));
}

TEST(phase_keeps_its_pool_alive) {
    teardown t;
    auto owner = std::make_unique<weft::pool>(t.config(2));
    weft::phase warm(*owner);
    owner.reset();
    CHECK_EQ(t.exited.load(), 0);
    warm.end(); /* the last owner */
    CHECK_EQ(t.exited.load(), 2);
    CHECK(t.hooks_freed.load(std::memory_order_acquire));
}

TEST(event_keeps_its_pool_alive) {
    teardown t;
    std::atomic<int> followed{0};
    auto owner = std::make_unique<weft::pool>(t.config(2));
    {
        weft::event done(*owner, 1);
        owner.reset();
        CHECK_EQ(t.exited.load(), 0);
        done.then([&followed] { followed.fetch_add(1); });
        weft::event moved(std::move(done));
        moved.signal();
        moved.wait();
    } /* the last owner: the destruction waits for the follow-up */
    CHECK_EQ(followed.load(), 1);
    CHECK_EQ(t.exited.load(), 2);
    CHECK(t.hooks_freed.load(std::memory_order_acquire));

    /* Never set: its follow-up is discarded, and the pool still goes. */
    teardown unset;
    owner = std::make_unique<weft::pool>(unset.config(1));
    {
        weft::event never(*owner, 1);
        never.then([&followed] { followed.fetch_add(1); });
        owner.reset();
        CHECK_EQ(unset.exited.load(), 0);
    }
    CHECK_EQ(followed.load(), 1);
    CHECK_EQ(unset.exited.load(), 1);
    CHECK(unset.hooks_freed.load(std::memory_order_acquire));
}

TEST(pool_released_inside_its_own_job) {
    teardown t;
    auto shared = std::make_shared<weft::pool>(t.config(2));
    std::atomic<bool> others_gone{false};
    /* The job's callable holds the pool's last owner once the caller has let
     * go (after weft::spawn returned: a call needs an owner until it returns).
     * It is destroyed inside the job, where weft_pool_destroy cannot run
     * (EDEADLK): the destruction is handed over and happens once the job has
     * returned. */
    weft::spawn(*shared, [shared, &others_gone] {
        while (!others_gone.load(std::memory_order_acquire))
            std::this_thread::yield();
        CHECK_EQ(shared.use_count(), 1);
    });
    shared.reset();
    others_gone.store(true, std::memory_order_release);
    t.wait_until_freed();
    CHECK_EQ(t.exited.load(), 2);
}

TEST(pool_used_by_a_c_context_is_kept) {
    weft_pool *raw = nullptr;
    weft_context *ctx = nullptr;
    {
        weft::pool p(threads(2).contexts(1));
        raw = p.get();
        CHECK_EQ(weft_context_acquire(raw, &ctx), 0); /* through the C handle: no share */
    } /* EBUSY: the pool is kept, not destroyed under the context */
    std::atomic<long> sum{0};
    weft::parallel_for(raw, 0, 100, [&](int i) { sum += i; });
    CHECK_EQ(sum.load(), 4950);
    weft_context_release(ctx);
    CHECK_EQ(weft::run(raw, [] { return 6; }), 6);
}
