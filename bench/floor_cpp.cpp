/* SPDX-License-Identifier: MIT */
/* floor_cpp.cpp: the floor under C++'s fork row (weft::join of two lambdas,
 * bench/sys_weft_cpp.cpp), measured as floor.c measures C's: fib(35) with
 * joins that schedule nothing, written the way a C++ user writes the row,
 *
 *     auto [x, y] = join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
 *
 * and again with the lambdas capturing n by value ([n]). The joins:
 *
 *  - free:      a function of its own (not inlined) that calls f, then g:
 *               what the shape costs before any join publishes anything;
 *  - published: the same, publishing g where a thief could find it (a frame
 *               with g's trampoline and address, linked from a thread-local
 *               head, unlinked after f, then one word a thief would have
 *               written read back), as little as any join does that can
 *               lose g to another thread;
 *  - published inline, unguarded: the same join inlined into the user's
 *               function, so the compiler can split fib's leaf test into
 *               its callers; but nothing unlinks the frame if f throws;
 *  - published inline, guarded: the same with a guard that unlinks it
 *               (a destructor: the landing pad every exception-safe join
 *               needs while g is published).
 *
 * None of them can be stolen from: a real join costs more. Then weft::join
 * itself, in the same program, on the fork rows' pool at one thread (one
 * worker, the caller waiting). Prints one JSON object per line;
 * `build/bench/bench/floor_cpp_bench` runs it. */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <type_traits>
#include <utility>

#include <weft.hpp>

namespace {

double now_s() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/* A published g: its trampoline and address, and the older frame. */
struct frame {
    void (*fn)(void *);
    void *arg;
    frame *prev;
};

/* The thread's newest frame, and a word thieves would write, a line apart. */
struct head {
    frame *top;
    alignas(128) std::uintptr_t claim;
};

head the_head;
__thread head *tls_head __attribute__((tls_model("initial-exec")));

/* What a join would do if a thief had written the word: here, nobody does. */
__attribute__((noinline, noreturn)) void taken() {
    std::fprintf(stderr, "floor_cpp: a frame was taken\n");
    std::abort();
}

template <class G> void trampoline(void *g) {
    (*static_cast<G *>(g))();
}

/* g published for the length of f, then unlinked; true if still ours. */
struct publish {
    head *w;
    frame fr;
    template <class G>
    explicit publish(G &g) noexcept : w(tls_head), fr{&trampoline<G>, &g, nullptr} {
        fr.prev = w->top;
        /* Release: a thief reading top sees the frame's words. */
        __atomic_store_n(&w->top, &fr, __ATOMIC_RELEASE);
    }
    void unlink() noexcept {
        __atomic_store_n(&w->top, fr.prev, __ATOMIC_RELEASE);
        /* The unlink, then the claim word: against a thief's barrier. */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__builtin_expect(__atomic_load_n(&w->claim, __ATOMIC_RELAXED) != 0, 0))
            taken();
    }
};

struct free_join {
    template <class F, class G> __attribute__((noinline)) static auto join(F &&f, G &&g) {
        auto a = f();
        auto b = g();
        return std::pair(a, b);
    }
};

/* f, then g, with g published while f runs; nothing unlinks it if f
 * throws (published_inline_guarded adds that). */
template <class F, class G> __attribute__((always_inline)) inline auto published(F &f, G &g) {
    publish p(g);
    auto a = f();
    p.unlink();
    auto b = g();
    return std::pair(a, b);
}

struct published_join {
    template <class F, class G> __attribute__((noinline)) static auto join(F &&f, G &&g) {
        return published(f, g);
    }
};

struct published_inline_unguarded {
    template <class F, class G>
    __attribute__((always_inline)) static inline auto join(F &&f, G &&g) {
        return published(f, g);
    }
};

struct published_inline_guarded {
    template <class F, class G>
    __attribute__((always_inline)) static inline auto join(F &&f, G &&g) {
        publish p(g);
        struct guard {
            publish *p;
            bool armed;
            ~guard() {
                if (__builtin_expect(armed, 0))
                    p->unlink();
            }
        } unwind{&p, true};
        auto a = f();
        unwind.armed = false;
        p.unlink();
        auto b = g();
        return std::pair(a, b);
    }
};

struct weft_joins {
    template <class F, class G> static auto join(F &&f, G &&g) {
        return weft::join(std::forward<F>(f), std::forward<G>(g));
    }
};

template <class J> long fib_ref(int n) {
    if (n < 2)
        return n;
    auto [x, y] = J::join([&] { return fib_ref<J>(n - 1); }, [&] { return fib_ref<J>(n - 2); });
    return x + y;
}

template <class J> long fib_value(int n) {
    if (n < 2)
        return n;
    auto [x, y] = J::join([n] { return fib_value<J>(n - 1); }, [n] { return fib_value<J>(n - 2); });
    return x + y;
}

/* Median of five timings of fib(35). */
double time_fib(long (*fib)(int)) {
    double t[5];
    for (double &ti : t) {
        double t0 = now_s();
        if (fib(35) != 9227465) {
            std::fprintf(stderr, "floor_cpp: wrong fib value\n");
            std::exit(1);
        }
        ti = now_s() - t0;
    }
    for (int i = 1; i < 5; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--)
            std::swap(t[j], t[j - 1]);
    return t[2];
}

/* The pool weft's rows run on (weft::join outside every pool would run
 * each join through the default pool). */
weft::pool *on_pool;

template <long (*fib)(int)> long on_weft(int n) {
    return weft::run(*on_pool, [n] { return fib(n); });
}

template <class J> void row(const char *join) {
    double by_ref, by_value;
    if constexpr (std::is_same_v<J, weft_joins>) {
        by_ref = time_fib(&on_weft<&fib_ref<J>>);
        by_value = time_fib(&on_weft<&fib_value<J>>);
    } else {
        by_ref = time_fib(&fib_ref<J>);
        by_value = time_fib(&fib_value<J>);
    }
    std::printf("{\"floor\":\"fib35_lambda_join\",\"join\":\"%s\",\"capture_ref_s\":%.4f,"
                "\"capture_value_s\":%.4f}\n",
                join, by_ref, by_value);
}

} // namespace

int main() {
    tls_head = &the_head;
    row<free_join>("free");
    row<published_join>("published");
    row<published_inline_unguarded>("published_inline_unguarded");
    row<published_inline_guarded>("published_inline_guarded");
    weft::pool pool(weft::config().threads(1).callers_wait(true));
    on_pool = &pool;
    row<weft_joins>("weft");
    return 0;
}
