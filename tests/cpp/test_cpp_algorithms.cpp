/* SPDX-License-Identifier: MIT */
/* weft::sort, weft::inclusive_scan, weft::exclusive_scan: the same results
 * as std::sort and std::inclusive_scan / std::exclusive_scan on random,
 * sorted, reverse-sorted, all-equal and duplicate-heavy inputs of sizes
 * around every cutoff; on pools of one worker and oversubscribed ones; with
 * move-only and non-default-constructible elements, a non-commutative scan
 * operation, scans in place, and exceptions from the comparator and the
 * operation. Built with g++ and clang++, and with -fno-exceptions (the
 * exception cases drop out). */
#include <weft.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness.hpp"

/* Sizes shrink under the sanitizers, which run 5-20x slower. */
static std::size_t scaled(std::size_t n) {
#if defined(WEFT__TSAN)
    return n / 8;
#elif defined(__SANITIZE_ADDRESS__)
    return n / 4;
#else
    return n;
#endif
}

static std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static std::vector<std::uint64_t> random_keys(std::size_t n, std::uint64_t range,
                                              std::uint64_t seed) {
    std::vector<std::uint64_t> v(n);
    for (std::size_t i = 0; i < n; i++)
        v[i] = mix(seed * 0x100000001b3ull + i) % range;
    return v;
}

/* The pools every case runs on: one worker; three; eight on however few
 * cores (oversubscribed: workers preempted in the middle of a partition or
 * a block). Then the default pool, through the overloads without a pool. */
static const unsigned pool_sizes[] = {1, 3, 8};

static weft::pool make_pool(unsigned threads) {
    return weft::pool(weft::config().threads(threads));
}

/* The sizes around the sort's and the scans' cutoffs, and a large one. */
static std::vector<std::size_t> sizes() {
    return {0,    1,     2,     3,     17,    2047,  2048,  2049,
            4097, 32767, 32768, 32769, 40961, 65537, 99991, scaled(1000003)};
}

/* ---- sort ----------------------------------------------------------------- */

static void check_sorts_like_std(weft::pool_ref p, std::vector<std::uint64_t> v) {
    std::vector<std::uint64_t> want = v;
    std::sort(want.begin(), want.end());
    weft::sort(p, v.begin(), v.end());
    CHECK(v == want);
}

TEST(sort_matches_std_sort_at_every_size) {
    for (unsigned t : pool_sizes) {
        weft::pool p = make_pool(t);
        for (std::size_t n : sizes()) {
            check_sorts_like_std(p, random_keys(n, UINT64_MAX, n));
            check_sorts_like_std(p, random_keys(n, 7, n)); /* mostly duplicates */
        }
    }
    std::vector<std::uint64_t> v = random_keys(scaled(300000), 1000, 1), want = v;
    std::sort(want.begin(), want.end());
    weft::sort(v.begin(), v.end()); /* the default pool */
    CHECK(v == want);
}

TEST(sort_handles_sorted_reverse_equal_and_organ_pipe_inputs) {
    std::size_t n = scaled(1 << 20);
    std::vector<std::vector<std::uint64_t>> inputs;
    std::vector<std::uint64_t> v(n);
    std::iota(v.begin(), v.end(), 0);
    inputs.push_back(v); /* sorted */
    std::reverse(v.begin(), v.end());
    inputs.push_back(v);                                 /* reverse-sorted */
    inputs.push_back(std::vector<std::uint64_t>(n, 42)); /* all equal */
    for (std::size_t i = 0; i < n; i++)
        v[i] = i < n / 2 ? i : n - i; /* organ pipe */
    inputs.push_back(v);
    for (std::size_t i = 0; i < n; i++)
        v[i] = i % 2; /* two keys */
    inputs.push_back(v);
    v = random_keys(n, UINT64_MAX, 3);
    std::sort(v.begin(), v.end());
    for (std::size_t i = 0; i < n; i += 1000)
        v[i] = mix(i); /* sorted, with a few strays */
    inputs.push_back(v);
    for (unsigned t : pool_sizes) {
        weft::pool p = make_pool(t);
        for (const auto &in : inputs)
            check_sorts_like_std(p, in);
    }
}

TEST(sort_takes_a_comparator) {
    weft::pool p = make_pool(3);
    std::vector<std::uint64_t> v = random_keys(scaled(200000), 1000, 5), want = v;
    weft::sort(p, v.begin(), v.end(), std::greater<>());
    std::sort(want.begin(), want.end(), std::greater<>());
    CHECK(v == want);

    /* Records ordered by key only: each key's payloads stay together, in
     * some order (not stable), and nothing is lost or doubled. */
    struct rec {
        std::uint32_t key, payload;
    };
    std::vector<rec> r(scaled(200000));
    for (std::size_t i = 0; i < r.size(); i++)
        r[i] = {static_cast<std::uint32_t>(mix(i) % 100), static_cast<std::uint32_t>(i)};
    auto by_key = [](const rec &a, const rec &b) { return a.key < b.key; };
    weft::sort(p, r.begin(), r.end(), by_key);
    CHECK(std::is_sorted(r.begin(), r.end(), by_key));
    std::vector<bool> seen(r.size());
    for (const rec &x : r) {
        CHECK(!seen[x.payload]);
        seen[x.payload] = true;
        CHECK_EQ(x.key, mix(x.payload) % 100);
    }

    /* A plain array, a std::deque, and the pool-less comparator form. */
    std::uint64_t a[5000];
    for (std::size_t i = 0; i < 5000; i++)
        a[i] = mix(i);
    weft::sort(a, a + 5000, std::less<>());
    CHECK(std::is_sorted(a, a + 5000));
    std::deque<int> d;
    for (int i = 0; i < 10000; i++)
        d.push_back((i * 7919) % 10007);
    weft::sort(p, d.begin(), d.end());
    CHECK(std::is_sorted(d.begin(), d.end()));
}

/* Move-only elements, and elements without a default constructor. */
TEST(sort_moves_elements_it_cannot_copy) {
    weft::pool p = make_pool(3);
    std::size_t n = scaled(100000);
    std::vector<std::unique_ptr<std::uint64_t>> v;
    for (std::size_t i = 0; i < n; i++)
        v.push_back(std::make_unique<std::uint64_t>(mix(i) % 5000));
    weft::sort(p, v.begin(), v.end(), [](const auto &a, const auto &b) { return *a < *b; });
    for (std::size_t i = 0; i < n; i++)
        CHECK(v[i] != nullptr);
    CHECK(std::is_sorted(v.begin(), v.end(), [](const auto &a, const auto &b) { return *a < *b; }));

    struct key {
        explicit key(std::uint64_t k) : value(k) {}
        std::uint64_t value;
        bool operator<(const key &o) const {
            return value < o.value;
        }
    };
    static_assert(!std::is_default_constructible_v<key>);
    std::vector<key> k;
    for (std::size_t i = 0; i < n; i++)
        k.emplace_back(mix(i));
    weft::sort(p, k.begin(), k.end());
    CHECK(std::is_sorted(k.begin(), k.end()));
}

/* Keys equal to a piece's left neighbour are set aside in one pass: an
 * all-equal range costs a few compares a key, not log2(n) of them, and a
 * range of two keys a few more. Counted, in pools and on one thread. */
TEST(sort_compares_equal_keys_a_bounded_number_of_times) {
    std::size_t n = scaled(1 << 18);
    for (unsigned t : pool_sizes) {
        weft::pool p = make_pool(t);
        for (std::uint64_t keys : {1u, 2u}) {
            std::vector<std::uint64_t> v = random_keys(n, keys, t);
            std::atomic<std::size_t> compares{0};
            weft::sort(p, v.begin(), v.end(), [&](std::uint64_t a, std::uint64_t b) {
                compares.fetch_add(1, std::memory_order_relaxed);
                return a < b;
            });
            CHECK(std::is_sorted(v.begin(), v.end()));
            CHECK(compares.load() <= (2 * keys + 1) * n);
        }
    }
}

/* A comparison that is no strict weak order (<=, or a coin toss) is the
 * caller's error, but the sort still stays inside the range (ASan would
 * see a read outside it) and keeps every element. */
TEST(sort_stays_in_the_range_under_a_broken_comparison) {
    std::size_t n = scaled(100000);
    for (unsigned t : pool_sizes) {
        weft::pool p = make_pool(t);
        for (std::size_t size : {std::size_t{100}, std::size_t{3000}, n}) {
            std::vector<std::uint64_t> v = random_keys(size, 50, size), want = v;
            weft::sort(p, v.begin(), v.end(),
                       [](std::uint64_t a, std::uint64_t b) { return a <= b; });
            std::atomic<std::uint64_t> toss{0};
            weft::sort(p, v.begin(), v.end(), [&](std::uint64_t, std::uint64_t) {
                return mix(toss.fetch_add(1, std::memory_order_relaxed)) & 1;
            });
            std::sort(v.begin(), v.end());
            std::sort(want.begin(), want.end());
            CHECK(v == want);
        }
    }
}

/* McIlroy's adversary ("A killer adversary for quicksort", 1999): every key
 * starts as gas, above every solid key; a compare of two gas keys freezes
 * one of them, the one likelier to be the pivot, to the next solid value.
 * A quicksort against it splits a few keys off each partition, so only
 * the budget's heap sort keeps the compares near n log n. It answers as
 * one strict weak order would (frozen keys keep their values, gas sorts
 * after them); the lock makes one history of concurrent pieces' compares.
 * Sorted by the values it gave, on one thread (a piece of the cutoff) and
 * in pools, in at most 5 n log2(n) compares: 2 log2(n) levels of
 * partitions of about n compares each, then a heap sort's 2 n log2(n).
 * Without the heap sort the count grows as n^2. */
TEST(sort_stays_n_log_n_against_a_killer_adversary) {
    for (unsigned t : pool_sizes) {
        weft::pool p = make_pool(t);
        for (std::size_t n : {std::size_t{2048}, scaled(1 << 15)}) {
            std::size_t log2n = 0;
            for (std::size_t m = n; m > 1; m >>= 1)
                log2n++;
            std::mutex lock;
            const std::size_t gas = n;
            std::vector<std::size_t> value(n, gas);
            std::size_t solid = 0, candidate = 0, compares = 0;
            std::vector<std::uint32_t> keys(n);
            std::iota(keys.begin(), keys.end(), 0u);
            weft::sort(p, keys.begin(), keys.end(), [&](std::uint32_t x, std::uint32_t y) {
                std::lock_guard<std::mutex> hold(lock);
                compares++;
                if (value[x] == gas && value[y] == gas)
                    value[x == candidate ? x : y] = solid++;
                if (value[x] == gas)
                    candidate = x;
                else if (value[y] == gas)
                    candidate = y;
                return value[x] < value[y];
            });
            for (std::size_t i = 1; i < n; i++)
                CHECK(value[keys[i - 1]] <= value[keys[i]]);
            CHECK(compares <= 5 * n * log2n);
        }
    }
}

/* Sorts inside jobs: each piece of a loop sorts its own vector, on the
 * worker that runs it (the caller takes part in its own sort). */
TEST(sort_nests_inside_jobs) {
    weft::pool p = make_pool(3);
    std::vector<std::vector<std::uint64_t>> vs(16);
    for (std::size_t i = 0; i < vs.size(); i++)
        vs[i] = random_keys(scaled(20000) + i, UINT64_MAX, i);
    weft::parallel_for(p, vs.begin(), vs.end(), [&](std::vector<std::uint64_t> &v) {
        weft::sort(v.begin(), v.end()); /* this worker's pool */
    });
    for (const auto &v : vs)
        CHECK(std::is_sorted(v.begin(), v.end()));
}

#if WEFT_HPP_EXCEPTIONS
/* A comparator that throws at its k-th compare, for k all through a sort of
 * a piece below the cutoff (partitions, then insertions), on one thread:
 * the range still holds each of its elements once. */
TEST(sort_keeps_every_element_when_the_comparator_throws) {
    std::size_t n = 2000;
    weft::pool p = make_pool(1);
    std::size_t total = 0;
    {
        std::vector<std::uint64_t> v = random_keys(n, UINT64_MAX, 11);
        weft::sort(p, v.begin(), v.end(), [&](std::uint64_t a, std::uint64_t b) {
            total++;
            return a < b;
        });
    }
    for (std::size_t k = 0; k < total; k += 1 + total / 400) {
        std::vector<std::unique_ptr<std::uint64_t>> v;
        std::vector<std::uint64_t> want = random_keys(n, UINT64_MAX, 11);
        for (std::uint64_t x : want)
            v.push_back(std::make_unique<std::uint64_t>(x));
        std::size_t calls = 0;
        bool threw = false;
        try {
            weft::sort(p, v.begin(), v.end(), [&](const auto &a, const auto &b) {
                if (calls++ == k)
                    throw std::runtime_error("comparator");
                return *a < *b;
            });
        } catch (const std::runtime_error &) {
            threw = true;
        }
        CHECK(threw);
        std::vector<std::uint64_t> got;
        for (const auto &x : v) {
            CHECK(x != nullptr);
            if (x)
                got.push_back(*x);
        }
        std::sort(got.begin(), got.end());
        std::sort(want.begin(), want.end());
        CHECK(got == want);
    }
}

/* A comparator that throws after some compares: the exception reaches the
 * caller once the forked pieces have finished; the pool is fine after. With
 * move-only elements, ASan's leak check sees that nothing leaks. */
TEST(sort_rethrows_what_the_comparator_throws) {
    weft::pool p = make_pool(3);
    std::size_t n = scaled(200000);
    for (long after : {10L, 5000L, 100000L}) { /* each below n log2(n) / 2 compares */
        std::vector<std::unique_ptr<std::uint64_t>> v;
        for (std::size_t i = 0; i < n; i++)
            v.push_back(std::make_unique<std::uint64_t>(mix(i)));
        std::atomic<long> calls{0};
        bool threw = false;
        try {
            weft::sort(p, v.begin(), v.end(), [&](const auto &a, const auto &b) {
                if (calls.fetch_add(1, std::memory_order_relaxed) == after)
                    throw std::runtime_error("comparator");
                return *a < *b;
            });
        } catch (const std::runtime_error &e) {
            threw = true;
            CHECK(std::string(e.what()) == "comparator");
        }
        CHECK(threw);
        CHECK_EQ(v.size(), n);
        for (std::size_t i = 0; i < n; i++)
            CHECK(v[i] != nullptr); /* no element lost, whichever step threw */
    }
    std::vector<std::uint64_t> v = random_keys(scaled(100000), UINT64_MAX, 9), want = v;
    weft::sort(p, v.begin(), v.end());
    std::sort(want.begin(), want.end());
    CHECK(v == want);
}
#endif

/* ---- scans ------------------------------------------------------------------ */

/* 2x2 matrices mod a prime under multiplication: associative, not
 * commutative, so any reordering of operands shows. */
struct mat {
    std::uint64_t a, b, c, d;
    bool operator==(const mat &o) const {
        return a == o.a && b == o.b && c == o.c && d == o.d;
    }
};
static constexpr std::uint64_t prime = 1000003;
static mat mat_mul(const mat &x, const mat &y) {
    return {(x.a * y.a + x.b * y.c) % prime, (x.a * y.b + x.b * y.d) % prime,
            (x.c * y.a + x.d * y.c) % prime, (x.c * y.b + x.d * y.d) % prime};
}
static std::vector<mat> random_mats(std::size_t n) {
    std::vector<mat> m(n);
    for (std::size_t i = 0; i < n; i++) {
        std::uint64_t h = mix(i);
        m[i] = {h % 7 + 1, (h >> 8) % 5, (h >> 16) % 3, (h >> 24) % 11 + 2};
    }
    return m;
}

TEST(inclusive_scan_matches_std_at_every_size) {
    for (unsigned t : pool_sizes) {
        weft::pool p = make_pool(t);
        for (std::size_t n : sizes()) {
            std::vector<std::uint64_t> in = random_keys(n, UINT64_MAX, n), out(n), want(n);
            std::inclusive_scan(in.begin(), in.end(), want.begin());
            CHECK(weft::inclusive_scan(p, in.begin(), in.end(), out.begin()) == out.end());
            CHECK(out == want);
            std::inclusive_scan(in.begin(), in.end(), want.begin(), std::plus<>(),
                                std::uint64_t(12345));
            CHECK(weft::inclusive_scan(p, in.begin(), in.end(), out.begin(), std::plus<>(),
                                       std::uint64_t(12345)) == out.end());
            CHECK(out == want);
        }
    }
    std::vector<std::uint64_t> in = random_keys(scaled(500000), 1000, 2), out(in.size()),
                               want(in.size());
    std::inclusive_scan(in.begin(), in.end(), want.begin());
    weft::inclusive_scan(in.begin(), in.end(), out.begin()); /* the default pool */
    CHECK(out == want);
}

TEST(exclusive_scan_matches_std_at_every_size) {
    for (unsigned t : pool_sizes) {
        weft::pool p = make_pool(t);
        for (std::size_t n : sizes()) {
            std::vector<std::uint64_t> in = random_keys(n, UINT64_MAX, n), out(n), want(n);
            std::exclusive_scan(in.begin(), in.end(), want.begin(), std::uint64_t(7));
            CHECK(weft::exclusive_scan(p, in.begin(), in.end(), out.begin(), std::uint64_t(7)) ==
                  out.end());
            CHECK(out == want);
        }
    }
}

TEST(scans_keep_the_order_of_a_non_commutative_op) {
    std::size_t n = scaled(300000) + 3;
    std::vector<mat> in = random_mats(n), out(n), want(n);
    const mat id{1, 0, 0, 1}, start{2, 1, 1, 1};
    for (unsigned t : pool_sizes) {
        weft::pool p = make_pool(t);
        std::inclusive_scan(in.begin(), in.end(), want.begin(), mat_mul);
        weft::inclusive_scan(p, in.begin(), in.end(), out.begin(), mat_mul);
        CHECK(out == want);
        std::inclusive_scan(in.begin(), in.end(), want.begin(), mat_mul, start);
        weft::inclusive_scan(p, in.begin(), in.end(), out.begin(), mat_mul, start);
        CHECK(out == want);
        std::exclusive_scan(in.begin(), in.end(), want.begin(), id, mat_mul);
        weft::exclusive_scan(p, in.begin(), in.end(), out.begin(), id, mat_mul);
        CHECK(out == want);
    }
    /* Strings: the last 12 characters of the concatenation, an associative
     * and non-commutative operation on a type that allocates. */
    auto tail = [](const std::string &a, const std::string &b) {
        std::string s = a + b;
        return s.size() > 12 ? s.substr(s.size() - 12) : s;
    };
    std::size_t m = scaled(100000) + 1;
    std::vector<std::string> s(m), sout(m), swant(m);
    for (std::size_t i = 0; i < m; i++)
        s[i] = std::string(1 + i % 3, static_cast<char>('a' + mix(i) % 26));
    weft::pool p = make_pool(3);
    std::inclusive_scan(s.begin(), s.end(), swant.begin(), tail);
    weft::inclusive_scan(p, s.begin(), s.end(), sout.begin(), tail);
    CHECK(sout == swant);
    std::exclusive_scan(s.begin(), s.end(), swant.begin(), std::string(">"), tail);
    weft::exclusive_scan(p, s.begin(), s.end(), sout.begin(), std::string(">"), tail);
    CHECK(sout == swant);
}

TEST(scans_run_in_place_and_across_types) {
    weft::pool p = make_pool(3);
    for (std::size_t n : sizes()) {
        std::vector<std::uint64_t> v = random_keys(n, 1000, n), want(n);
        std::inclusive_scan(v.begin(), v.end(), want.begin());
        CHECK(weft::inclusive_scan(p, v.begin(), v.end(), v.begin()) == v.end());
        CHECK(v == want);
        v = random_keys(n, 1000, n + 1);
        std::exclusive_scan(v.begin(), v.end(), want.begin(), std::uint64_t(3));
        CHECK(weft::exclusive_scan(p, v.begin(), v.end(), v.begin(), std::uint64_t(3)) == v.end());
        CHECK(v == want);
    }
    /* ints into a deque of long long with an init of that type: the running
     * value is init's type and does not overflow as an int would. */
    std::size_t n = scaled(200000);
    std::vector<int> in(n, 1 << 20);
    std::deque<long long> out(n);
    std::vector<long long> want(n);
    std::exclusive_scan(in.begin(), in.end(), want.begin(), 0LL);
    auto end = weft::exclusive_scan(p, in.begin(), in.end(), out.begin(), 0LL);
    CHECK(end == out.end());
    CHECK(std::equal(out.begin(), out.end(), want.begin()));
    CHECK_EQ(out.back(), static_cast<long long>(n - 1) << 20);
}

/* Elements without a default constructor, through the running value too. */
TEST(scans_need_no_default_constructor) {
    struct num {
        explicit num(std::uint64_t x) : v(x) {}
        std::uint64_t v;
    };
    static_assert(!std::is_default_constructible_v<num>);
    auto add = [](const num &a, const num &b) { return num(a.v + b.v); };
    std::size_t n = scaled(100000) + 5;
    std::vector<num> in, out;
    for (std::size_t i = 0; i < n; i++) {
        in.emplace_back(i);
        out.emplace_back(0);
    }
    weft::pool p = make_pool(3);
    weft::inclusive_scan(p, in.begin(), in.end(), out.begin(), add, num(1));
    for (std::size_t i = 0; i < n; i++)
        CHECK_EQ(out[i].v, 1 + i * (i + 1) / 2);
}

#if WEFT_HPP_EXCEPTIONS
/* An operation that throws at one element: the exception reaches the caller
 * (from the caller's front, a helper's reduction or a back block's scan, as
 * it happens), and the pool is fine after. */
TEST(scans_rethrow_what_the_operation_throws) {
    weft::pool p = make_pool(3);
    std::size_t n = scaled(400000);
    for (std::size_t bad : {std::size_t(5), n / 3, n / 2, n - 2}) {
        std::vector<std::uint64_t> in(n, 1), out(n);
        in[bad] = 0; /* the element that makes op throw */
        auto op = [](std::uint64_t a, std::uint64_t b) {
            if (b == 0)
                throw std::invalid_argument("zero");
            return a + b;
        };
        bool threw = false;
        try {
            weft::inclusive_scan(p, in.begin(), in.end(), out.begin(), op);
        } catch (const std::invalid_argument &) {
            threw = true;
        }
        CHECK(threw);
        threw = false;
        try {
            weft::exclusive_scan(p, in.begin(), in.end(), out.begin(), std::uint64_t(1), op);
        } catch (const std::invalid_argument &) {
            threw = true;
        }
        CHECK(threw);
    }
    std::vector<std::uint64_t> in(n, 1), out(n);
    weft::inclusive_scan(p, in.begin(), in.end(), out.begin());
    CHECK_EQ(out.back(), n);
}
#endif
