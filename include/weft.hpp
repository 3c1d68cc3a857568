/* SPDX-License-Identifier: MIT */
/* weft.hpp: a C++17 front end for weft, header-only, over the C API of weft.h.
 *
 * Lambdas instead of a function pointer plus void *:
 *
 *   weft::pool pool(weft::config().threads(4));
 *   auto [x, y] = weft::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
 *   weft::parallel_for(pool, 0, v.size(), [&](std::size_t i) { v[i] *= 2; });
 *   weft::scope(pool, [&](weft::scope &s) {
 *       for (auto &node : nodes)
 *           s.spawn([&s, &node] { visit(s, node); });
 *   });
 *
 * Every function has the thread contract, the waiting behaviour and the memory
 * effect of the C function it wraps (see weft.h); what C++ adds is written
 * here.
 *
 * Costs. A callable is called through one trampoline: a function template
 * instantiated for its type, handed to the C function with a pointer to the
 * callable. run, join and parallel_for keep the callable where the caller put
 * it (they return only when it has finished) and allocate nothing beyond what
 * the C call allocates, which is nothing. spawn and scope::spawn return before
 * the callable runs, so it must be stored until then: see scope::spawn.
 *
 * Errors. A C function's errno value becomes a std::system_error (generic
 * category) thrown by the C++ call, whose what() names the C function and
 * says why in words (weft_error_message: "weft_pool_create: config.threads
 * 100000 is above WEFT_THREADS_MAX 4096", after the category's words for the
 * errno). Exceptions never unwind through weft's C
 * frames: each trampoline catches what the callable throws, and the C++ call
 * rethrows it once the C call has returned, that is after all the work it
 * waits for has finished, so nothing still refers to the caller's frame.
 * Built without exceptions (-fno-exceptions), an error calls std::abort()
 * instead, as the standard library does.
 *
 * Fine-grained recursion. A join of two lambdas publishes the second by
 * address and is a function of its own: on a fork that costs a few
 * nanoseconds of work that is most of its cost (docs/performance.md, "C++
 * join"). Capture small arguments by value there ([n], not [&]), or write
 * the recursion as a typed task (weft.h, WEFT_TASK and WEFT_JOIN), which
 * C++ shares with C: the worker passed along and the arguments and result
 * in registers, at Lace's cost, with a noexcept body.
 *
 * Pools. Where a pool is taken, a weft::pool, a weft_pool * or nullptr may
 * be passed. nullptr, or no pool argument, means what NULL means in C: the
 * calling thread's own pool on a worker or on a thread holding a context,
 * and the default pool on any other thread.
 *
 * Ownership. A weft::pool and the weft::context, weft::event and weft::phase
 * objects made from it share the pool: the last of them to go destroys it, so
 * none of them can outlive it, in whatever order they are destroyed, and no
 * destructor terminates (see weft::pool). A weft_pool * or nullptr passed
 * instead is not owned: the C code that created it owns it, and the default
 * pool lives until the process exits.
 *
 * Also here: priorities (run and spawn with a weft_priority), contexts (an
 * RAII weft::context), events (weft::event), task graphs (weft::graph),
 * phases (weft::phase), and the algorithms oneTBB users reach for after
 * loops: a parallel sort (weft::sort) and prefix scans
 * (weft::inclusive_scan, weft::exclusive_scan).
 */
#ifndef WEFT_HPP
#define WEFT_HPP

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "weft.hpp needs C++17 or later"
#endif

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "weft.h"

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define WEFT_HPP_EXCEPTIONS 1
#else
#define WEFT_HPP_EXCEPTIONS 0
#endif

namespace weft {

class pool;

namespace detail {

/* An errno value, as an exception: what() says "call: why: " and then the
 * generic category's words for err. */
[[noreturn]] inline void throw_error(int err, const char *call, const char *why) {
#if WEFT_HPP_EXCEPTIONS
    throw std::system_error(err, std::generic_category(), std::string(call) + ": " + why);
#else
    std::fprintf(stderr, "weft: %s failed: %s (error %d)\n", call, why, err);
    std::abort();
#endif
}

/* An errno value a C call returned on this thread: the call said why. */
[[noreturn]] inline void throw_error(int err, const char *call) {
    throw_error(err, call, weft_error_message());
}

/* Where jobs that may run in parallel leave an exception: the first one is
 * kept. Written by jobs, read by the waiting caller after the C call
 * returned, which makes the jobs' writes visible to it. */
class first_error {
  public:
    void capture() noexcept {
#if WEFT_HPP_EXCEPTIONS
        /* Relaxed: the exchange only picks the one writer of error_; the C
         * call's return orders error_ before rethrow(). */
        if (!set_.exchange(true, std::memory_order_relaxed))
            error_ = std::current_exception();
#endif
    }
    bool failed() const noexcept {
        return set_.load(std::memory_order_relaxed);
    }
    /* Before jobs that report here start (graph runs reuse one). */
    void reset() noexcept {
        set_.store(false, std::memory_order_relaxed);
#if WEFT_HPP_EXCEPTIONS
        error_ = nullptr;
#endif
    }
    void rethrow() const {
#if WEFT_HPP_EXCEPTIONS
        if (error_)
            std::rethrow_exception(error_);
#endif
    }

  private:
    std::atomic<bool> set_{false};
    std::exception_ptr error_;
};

/* Call fn; an exception goes to errors instead of into weft's C frames.
 * With cancel, it also cancels the group fn's work belongs to (weft_cancel):
 * for the work of a loop, a reduction or a graph run, so that weft itself
 * skips what has not started (loop pieces stop splitting, graph nodes are
 * not run) and running pieces see weft::cancelled(). */
template <class Fn> void guarded(first_error &errors, Fn &&fn, bool cancel = false) noexcept {
#if WEFT_HPP_EXCEPTIONS
    try {
        std::invoke(std::forward<Fn>(fn));
    } catch (...) {
        errors.capture();
        if (cancel)
            weft_cancel();
    }
#else
    (void)errors;
    (void)cancel;
    std::invoke(std::forward<Fn>(fn));
#endif
}

template <class Fn> void guarded_cancel(first_error &errors, Fn &&fn) noexcept {
    guarded(errors, std::forward<Fn>(fn), true);
}

/* A callable's result, held until the caller takes it; void and references
 * too. */
template <class R> struct result {
    std::optional<R> value;
    template <class F> void run(F &&f) {
        value.emplace(std::invoke(std::forward<F>(f)));
    }
    R take() {
        return std::move(*value);
    }
};
template <class R> struct result<R &> {
    R *value = nullptr;
    template <class F> void run(F &&f) {
        value = &std::invoke(std::forward<F>(f));
    }
    R &take() {
        return *value;
    }
};
template <class R> struct result<R &&> {
    R *value = nullptr;
    template <class F> void run(F &&f) {
        R &&r = std::invoke(std::forward<F>(f));
        value = &r;
    }
    R &&take() {
        return std::move(*value);
    }
};
template <> struct result<void> {
    template <class F> void run(F &&f) {
        std::invoke(std::forward<F>(f));
    }
    void take() {}
};

/* A callable that lives in the caller's frame, its result and its exception:
 * run() and join(). F is a forwarding-reference type; it is invoked once. */
template <class F> struct call {
    using R = std::invoke_result_t<F>;
    std::remove_reference_t<F> *f;
    result<R> out;
    first_error errors;

    static void trampoline(void *self) noexcept {
        auto *c = static_cast<call *>(self);
        guarded(c->errors, [c] { c->out.run(std::forward<F>(*c->f)); });
    }
    /* After the C call: the exception, else the result. */
    decltype(auto) finish() {
        errors.rethrow();
        return out.take();
    }
};

/* join's two results: a pair, std::monostate standing in for void. */
template <class R> using or_monostate = std::conditional_t<std::is_void_v<R>, std::monostate, R>;
template <class R> or_monostate<R> take_or_monostate(result<R> &r) {
    if constexpr (std::is_void_v<R>)
        return std::monostate{};
    else
        return r.take();
}

/* Callables stored in the job's void * itself: trivially copyable, no larger
 * and no more aligned than a pointer (a captureless lambda, a lambda that
 * captures one pointer, std::ref(f), a function pointer). */
template <class D>
inline constexpr bool fits_in_arg = (std::is_trivially_copyable_v<D> &&
                                     std::is_trivially_destructible_v<D> &&
                                     sizeof(D) <= sizeof(void *) && alignof(D) <= alignof(void *));

template <class D> struct nothrow_call : std::bool_constant<std::is_nothrow_invocable_v<D &>> {};
template <class G>
struct nothrow_call<std::reference_wrapper<G>>
    : std::bool_constant<std::is_nothrow_invocable_v<G &>> {};

template <class D> void *pack(const D &d) noexcept {
    std::uintptr_t bits = 0;
    std::memcpy(&bits, &d, sizeof(D));
    /* weft only stores and passes the pointer; it is never dereferenced. */
    return reinterpret_cast<void *>(bits);
}

template <class D> struct unpacked {
    alignas(D) unsigned char bytes[sizeof(D)];
    explicit unpacked(void *arg) noexcept {
        std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(arg);
        std::memcpy(bytes, &bits, sizeof(D));
    }
    D &get() noexcept {
        return *std::launder(reinterpret_cast<D *>(bytes));
    }
};

/* Trampolines for callables stored in the argument. The callable is known not
 * to throw (or exceptions are off), so there is nothing to report. */
template <class D> void call_unpacked(void *arg) noexcept {
    unpacked<D> d(arg);
    std::invoke(std::move(d.get()));
}

/* A detached callable on the heap (weft::spawn). An exception escaping it
 * reaches this noexcept frame and calls std::terminate, as with std::thread:
 * there is nobody to give it to. */
template <class D> void call_boxed(void *arg) noexcept {
    std::unique_ptr<D> d(static_cast<D *>(arg));
    std::invoke(std::move(*d));
}

/* Queue a detached callable with submit(fn, arg), a C spawn function: in the
 * argument when it fits, else in one operator new block the job frees. */
template <class F, class Submit> void spawn_detached(F &&f, Submit submit, const char *call) {
    using D = std::decay_t<F>;
    static_assert(std::is_invocable_v<D>, "weft::spawn: f must be callable as f()");
    if constexpr (fits_in_arg<D>) {
        D d(std::forward<F>(f));
        int err = submit(&call_unpacked<D>, pack(d));
        if (err)
            throw_error(err, call);
    } else {
        std::unique_ptr<D> d(new D(std::forward<F>(f)));
        int err = submit(&call_boxed<D>, d.get());
        if (err)
            throw_error(err, call);
        d.release(); /* the job frees it */
    }
}

template <class I>
inline constexpr bool is_index = std::is_integral_v<I> && !std::is_same_v<I, bool>;

/* Hooks of a pool created from a weft::config; owned by the pool's state. */
struct hooks {
    std::function<void(unsigned)> on_start, on_exit;
    static void start(unsigned worker, void *self) noexcept {
        auto *h = static_cast<hooks *>(self);
        if (h->on_start)
            h->on_start(worker);
    }
    static void exit(unsigned worker, void *self) noexcept {
        auto *h = static_cast<hooks *>(self);
        if (h->on_exit)
            h->on_exit(worker);
    }
};

/* What the owners of a pool share: the weft::pool that created it, and each
 * weft::context, weft::event and weft::phase made from it. The last owner to
 * let go ends the pool (end_pool). A pool named by a weft_pool * or nullptr
 * has no state here: its C code, or the process, owns it. */
struct pool_state {
    std::atomic<std::size_t> owners{1}; /* A: see pool_share */
    weft_pool *handle = nullptr;        /* set once, before the state is shared */
    std::unique_ptr<hooks> user_hooks;  /* weft_config.user points here */
};

/* The pool outlives its last owner: something made through the C handle (a
 * context acquired, or an unset event holding follow-ups) still uses it, so
 * it must not be freed, and nothing tells us when that ends. Its hooks stay
 * with it (the workers still call them); the state goes. */
inline void keep_pool(pool_state *s) noexcept {
    (void)s->user_hooks.release();
    delete s;
}

/* A job of the default pool: destroy a pool whose last owner let go inside
 * one of its own jobs. weft_pool_destroy, there, finishes the pool's work
 * and joins its threads, so it returns only after that job has; the default
 * pool's worker participates in its own pool meanwhile. */
inline void end_pool_later(void *arg) noexcept {
    auto *s = static_cast<pool_state *>(arg);
    if (weft_pool_destroy(s->handle) == 0)
        delete s; /* the workers ran on_exit before weft_pool_destroy returned */
    else
        keep_pool(s);
}

/* The last owner let go: destroy the pool now, on this thread, if it can be.
 * The decision, by weft_pool_destroy's answer:
 *  0        destroyed (its work finished, its threads joined): free the hooks;
 *  EDEADLK  this thread runs one of the pool's jobs, which the destruction
 *           would wait for: hand it to the default pool (end_pool_later); if
 *           that cannot queue a job (no memory, no default pool), keep it;
 *  EBUSY    a context of the pool acquired through the C handle, or (with
 *           weft_event_then) an unset event of it, still uses it: keep it;
 *  EINVAL   the default pool, which is never destroyed: keep it (a
 *           pool_state never holds it: only weft_pool_create fills one).
 * Never throws nor terminates: it runs in destructors. */
inline void end_pool(pool_state *s) noexcept {
    int err = weft_pool_destroy(s->handle);
    if (err == 0) {
        delete s;
        return;
    }
    if (err == EDEADLK) {
        /* The default pool explicitly: NULL would mean this thread's pool. */
        weft_pool *elsewhere = weft_pool_default();
        if (elsewhere && weft_spawn(elsewhere, &end_pool_later, s) == 0)
            return;
    }
    keep_pool(s);
}

/* One owner's share of a pool_state (or of nothing). Move-only. */
class pool_share {
  public:
    pool_share() noexcept = default;
    /* A new state: its first share. */
    static pool_share adopt(pool_state *s) noexcept {
        pool_share share;
        share.s_ = s;
        return share;
    }
    /* Another share of the state an owner holds (nothing for nullptr). */
    explicit pool_share(pool_state *s) noexcept : s_(s) {
        /* Relaxed: the caller holds a share, so the count cannot reach zero
         * meanwhile; the decrements order the uses (as std::shared_ptr). */
        if (s_)
            s_->owners.fetch_add(1, std::memory_order_relaxed);
    }
    pool_share(pool_share &&other) noexcept : s_(std::exchange(other.s_, nullptr)) {}
    pool_share &operator=(pool_share &&other) noexcept {
        if (this != &other) {
            reset();
            s_ = std::exchange(other.s_, nullptr);
        }
        return *this;
    }
    pool_share(const pool_share &) = delete;
    pool_share &operator=(const pool_share &) = delete;
    ~pool_share() {
        reset();
    }

    /* Let go; the last share ends the pool (end_pool). */
    void reset() noexcept {
        pool_state *s = std::exchange(s_, nullptr);
        /* Acq_rel: each owner's uses of the pool happen-before the last
         * owner's weft_pool_destroy. */
        if (s && s->owners.fetch_sub(1, std::memory_order_acq_rel) == 1)
            end_pool(s);
    }
    /* Is this the only share? Acquire: pairs with the other owners' last
     * decrements, so their uses of the pool happened before. */
    bool sole() const noexcept {
        return s_ && s_->owners.load(std::memory_order_acquire) == 1;
    }
    /* Give up the share without ending the pool: the caller destroyed it. */
    pool_state *release() noexcept {
        return std::exchange(s_, nullptr);
    }
    pool_state *get() const noexcept {
        return s_;
    }

  private:
    pool_state *s_ = nullptr;
};

} // namespace detail

/* Settings for a weft::pool: weft_config with named setters. Defaults as a
 * zero-initialised weft_config. The hooks run on each worker (first and last
 * thing); an exception escaping them calls std::terminate. */
class config {
  public:
    config &threads(unsigned n) {
        c_.threads = n;
        return *this;
    }
    config &contexts(unsigned n) {
        c_.contexts = n;
        return *this;
    }
    config &stack_size(std::size_t bytes) {
        c_.stack_size = bytes;
        return *this;
    }
    config &name(std::string prefix) {
        name_ = std::move(prefix);
        has_name_ = true;
        return *this;
    }
    config &leave(weft_leave policy) {
        c_.leave = policy;
        return *this;
    }
    config &wake(weft_wake protocol) {
        c_.wake = protocol;
        return *this;
    }
    /* weft_config.outside_budget: the workers draw no slot of the CPU
     * budget (weft::set_concurrency), for jobs that block outside weft. */
    config &outside_budget(bool exempt = true) {
        c_.outside_budget = exempt;
        return *this;
    }
    /* weft_config.callers: how many outside threads at once run their own
     * call into the pool on their thread (weft::run, weft::for_each, ...). */
    config &callers(unsigned n) {
        c_.callers = n;
        return *this;
    }
    /* weft_config.callers_wait: outside callers only wait; every job runs on
     * a thread of the pool. */
    config &callers_wait(bool wait = true) {
        c_.callers_wait = wait;
        return *this;
    }
    /* weft_config.spares: the most threads the pool adds while its jobs
     * block (weft::blocking_region, weft::task::block); WEFT_SPARES_NONE for
     * none. */
    config &spares(unsigned n) {
        c_.spares = n;
        return *this;
    }
    /* weft_config.on_start: runs first on each worker, after the worker's
     * scheduling policy is chosen (weft_pool_create in weft.h), so it may
     * set another. */
    config &on_start(std::function<void(unsigned worker)> hook) {
        on_start_ = std::move(hook);
        return *this;
    }
    config &on_exit(std::function<void(unsigned worker)> hook) {
        on_exit_ = std::move(hook);
        return *this;
    }

  private:
    friend class pool;
    weft_config c_{};
    std::string name_;
    bool has_name_ = false;
    std::function<void(unsigned)> on_start_, on_exit_;
};

/* A pool created by the constructor and owned by this object, together with
 * every weft::context, weft::event and weft::phase made from it: each holds a
 * share of the pool, and the last of them to go destroys it (weft_pool_destroy:
 * its queued and spawned work finished, its threads joined). So a context may
 * outlive its weft::pool (declared in the other order, moved from, reset
 * first): the pool lives on until the context is released, then it is
 * destroyed on the thread that releases it.
 *
 * The last owner's destructor never throws nor terminates. Where
 * weft_pool_destroy cannot run:
 *  - the last owner goes inside one of the pool's own jobs (a job whose
 *    callable owns the pool, an event's follow-up dropping the last event):
 *    the destruction is a job of the default pool, which runs it once that job
 *    has returned; the pool's threads end shortly after the last owner, not
 *    before its destructor returns;
 *  - something made through the C handle, which holds no share (a context
 *    acquired with weft_context_acquire(pool.get(), ...), an unset
 *    weft_event_create event holding follow-ups), still uses the pool
 *    (EBUSY): the pool is kept, never destroyed nor freed, so that it stays
 *    valid for them; its threads sleep until the process exits. Use
 *    weft::context and weft::event, or release what the C handle made first.
 * destroy() reports both as exceptions instead.
 *
 * Move-only; a moved-from pool owns nothing and may only be destroyed or
 * assigned to. */
class pool {
  public:
    /* weft_pool_create; throws std::system_error with its errno value
     * (EINVAL, ENOMEM, EAGAIN). */
    pool() : pool(config()) {}
    explicit pool(const config &c) {
        weft_config raw = c.c_;
        if (c.has_name_)
            raw.name = c.name_.c_str(); /* copied by weft_pool_create */
        std::unique_ptr<detail::hooks> hooks;
        if (c.on_start_ || c.on_exit_) {
            hooks.reset(new detail::hooks{c.on_start_, c.on_exit_});
            /* Only with a hook to run: an on_start means no caller slots by
             * default (weft_config.callers). */
            raw.on_start = c.on_start_ ? detail::hooks::start : nullptr;
            raw.on_exit = c.on_exit_ ? detail::hooks::exit : nullptr;
            raw.user = hooks.get();
        }
        create(raw, std::move(hooks));
    }
    /* From a C configuration, hooks and all. */
    explicit pool(const weft_config &c) {
        create(c, nullptr);
    }

    pool(pool &&other) noexcept = default;
    /* Lets go of this object's pool first (see the destructor). */
    pool &operator=(pool &&other) noexcept = default;
    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;

    /* Let go of the pool: weft_pool_destroy if this is its last owner (see
     * above for what happens where that cannot run). */
    ~pool() = default;

    /* weft_pool_destroy now: finish the pool's work, join its threads;
     * afterwards the object owns nothing. Throws std::system_error, leaving
     * the pool and this object as they were: EBUSY if a context, event or
     * phase still holds a share of the pool, or if a context acquired through
     * the C handle is still held; EDEADLK from one of the pool's own jobs. */
    void destroy() {
        if (!share_.get())
            return;
        if (!share_.sole())
            detail::throw_error(EBUSY, "weft_pool_destroy",
                                "a weft::context, weft::event or weft::phase still holds a share "
                                "of the pool");
        int err = weft_pool_destroy(share_.get()->handle);
        if (err)
            detail::throw_error(err, "weft_pool_destroy");
        /* The workers ran on_exit before weft_pool_destroy returned. */
        delete share_.release();
    }

    /* The C handle, for the C API; nullptr once moved from or destroyed.
     * Valid while an owner of the pool lives; what it is used to make holds
     * no share (see above). */
    weft_pool *get() const noexcept {
        return share_.get() ? share_.get()->handle : nullptr;
    }
    unsigned threads() const noexcept {
        assert(get());
        return weft_pool_threads(get());
    }
    /* weft_pool_slots: threads + contexts + callers, for per-thread data
     * indexed by weft::thread_index(). */
    unsigned slots() const noexcept {
        assert(get());
        return weft_pool_slots(get());
    }
    /* weft_pool_stats. */
    weft_stats stats() const noexcept {
        assert(get());
        weft_stats s;
        weft_pool_stats(get(), &s);
        return s;
    }

  private:
    friend class pool_ref;

    void create(const weft_config &c, std::unique_ptr<detail::hooks> hooks) {
        /* The state first: once the pool exists, nothing may fail. */
        std::unique_ptr<detail::pool_state> s(new detail::pool_state);
        int err = weft_pool_create(&s->handle, &c);
        if (err)
            detail::throw_error(err, "weft_pool_create");
        s->user_hooks = std::move(hooks);
        share_ = detail::pool_share::adopt(s.release());
    }

    detail::pool_share share_;
};

/* Which pool a call uses: a weft::pool, a weft_pool *, or nullptr / nothing
 * for the calling thread's own pool (the default pool outside every pool). Does not own it: the
 * caller keeps an owner of the pool until the call returns (the callable of a spawned job does not
 * count: the job may run, and end the pool, before weft_spawn has returned). The objects that keep
 * a pool past the call (context, event, phase) take a share of a weft::pool's. */
class pool_ref {
  public:
    pool_ref() noexcept = default;
    pool_ref(const pool &p) noexcept : pool_(p.get()), state_(p.share_.get()) {
        assert(pool_ && "weft::pool used after it was moved from or destroyed");
    }
    /* Exactly a weft_pool * or nullptr: a template, so that a literal 0 (an
     * int) never converts to a pool, and parallel_for(0, n, grain, f) cannot
     * be read as parallel_for(pool, begin, end, f). */
    template <class P,
              std::enable_if_t<std::is_same_v<P, weft_pool *> || std::is_same_v<P, std::nullptr_t>,
                               int> = 0>
    pool_ref(P p) noexcept : pool_(p) {}
    weft_pool *get() const noexcept {
        return pool_;
    }

  private:
    friend class context;
    friend class event;
    friend class phase;
    /* A share of the pool, for an object that uses it after the call. */
    detail::pool_share share() const noexcept {
        return detail::pool_share(state_);
    }

    weft_pool *pool_ = nullptr;
    detail::pool_state *state_ = nullptr; /* a weft::pool's, else none */
};

/* The process-wide default pool (weft_pool_default); throws
 * std::system_error(EAGAIN) if it cannot be created. */
inline weft_pool *default_pool() {
    weft_pool *p = weft_pool_default();
    if (!p)
        detail::throw_error(EAGAIN, "weft_pool_default");
    return p;
}

/* weft_thread_index: 0..threads-1 on a worker, threads + i on a thread
 * holding context i, threads + contexts + i inside a call that holds caller
 * slot i (weft::run from outside), -1 elsewhere. */
inline int thread_index() noexcept {
    return weft_thread_index();
}

/* weft_set_concurrency: the process's CPU budget, max_running slots shared
 * by the workers of every pool; 0 restores the default (the CPUs this process
 * may use). Throws std::system_error(EINVAL) above WEFT_CONCURRENCY_MAX. */
inline void set_concurrency(unsigned max_running) {
    int err = weft_set_concurrency(max_running);
    if (err)
        detail::throw_error(err, "weft_set_concurrency");
}

/* weft_concurrency: the CPU budget. */
inline unsigned concurrency() noexcept {
    return weft_concurrency();
}

/* weft_cancel: from a job, cancel the innermost scope, loop, reduction or
 * graph run it belongs to (a no-op outside every group). See weft.h's
 * "Cancellation". */
inline void cancel() noexcept {
    weft_cancel();
}

/* weft_cancelled: has the group of the running job, or one around it, been
 * cancelled? false outside every group. */
inline bool cancelled() noexcept {
    return weft_cancelled();
}

/* weft_version: the library's "MAJOR.MINOR.PATCH". */
inline const char *version() noexcept {
    return weft_version();
}

/* weft_run: run f() inside the pool and wait; returns what f returns and
 * rethrows what it throws. The callable stays in the caller's frame. */
template <class F> decltype(auto) run(pool_ref p, F &&f) {
    detail::call<F &&> c{&f, {}, {}};
    weft_run(p.get(), &detail::call<F &&>::trampoline, &c);
    return c.finish();
}
template <class F> decltype(auto) run(F &&f) {
    return run(pool_ref(), std::forward<F>(f));
}
/* weft_run_priority: the same, f and everything it forks at `priority`
 * (std::system_error(EINVAL), f not called, for a value that is not a
 * weft_priority). */
template <class F> decltype(auto) run(pool_ref p, weft_priority priority, F &&f) {
    detail::call<F &&> c{&f, {}, {}};
    if (int err = weft_run_priority(p.get(), &detail::call<F &&>::trampoline, &c, priority))
        detail::throw_error(err, "weft_run_priority");
    return c.finish();
}

/* weft_cancel_source, owned: a handle for cancelling work from any thread
 * at any time (oneTBB's task_group_context, std::stop_source). Not
 * copyable or movable: runs and cancellers hold it by reference, and it
 * must outlive them. Work runs under it through weft::run(p, source, f). */
class cancel_source {
  public:
    cancel_source() {
        if (int err = weft_cancel_source_create(&source_))
            detail::throw_error(err, "weft_cancel_source_create");
    }
    ~cancel_source() {
        weft_cancel_source_destroy(source_);
    }
    cancel_source(const cancel_source &) = delete;
    cancel_source &operator=(const cancel_source &) = delete;

    /* weft_cancel_source_cancel: any thread, any time. */
    void cancel() noexcept {
        weft_cancel_source_cancel(source_);
    }
    bool cancelled() const noexcept {
        return weft_cancel_source_cancelled(source_);
    }
    /* weft_cancel_source_reset: only while nothing runs under it. */
    void reset() noexcept {
        weft_cancel_source_reset(source_);
    }
    weft_cancel_source *get() const noexcept {
        return source_;
    }

  private:
    weft_cancel_source *source_ = nullptr;
};

/* weft_run_cancellable: f() inside the pool, under source, and wait. Returns
 * true if nothing cancelled the run, false if source (or weft::cancel() in
 * f, or a group around the caller) did: f may then not have run, or not to
 * its end. Rethrows what f throws. f returns void: a cancelled run has no
 * result to give. */
template <class F> bool run(pool_ref p, cancel_source &source, F &&f) {
    static_assert(std::is_void_v<std::invoke_result_t<F>>,
                  "weft::run under a cancel_source: f must return void (a cancelled run has no "
                  "result); return results through a capture");
    detail::call<F &&> c{&f, {}, {}};
    int err = weft_run_cancellable(p.get(), source.get(), &detail::call<F &&>::trampoline, &c);
    if (err && err != ECANCELED)
        detail::throw_error(err, "weft_run_cancellable");
    c.errors.rethrow();
    return err == 0;
}
template <class F> bool run(cancel_source &source, F &&f) {
    return run(pool_ref(), source, std::forward<F>(f));
}

namespace detail {

#if defined(WEFT__JOIN_LAYOUT) && !defined(WEFT_NO_INLINE_JOIN)
/* The inline path runs weft/join.h's fork and pop (weft__join_fork,
 * weft__join_pop: nonzero while g is still private, for the caller to run;
 * else the cold path ran it, or waited until whoever took it had). The
 * library is entered only on their cold paths, as from C; src/core/frame.c
 * argues the orders. */

/* join's g on the inline path: the callable, and where its result or
 * exception goes when it runs as a job. The slot is raw: only the
 * trampoline constructs it, so a join whose g runs inline (nearly all)
 * writes nothing here but the callable's address; once the trampoline has
 * run, finish() or drop() destroys what it made. */
template <class G> struct join_half {
    using R = std::invoke_result_t<G>;
    explicit join_half(std::remove_reference_t<G> *callable) noexcept : g(callable) {}
    join_half(const join_half &) = delete;
    join_half &operator=(const join_half &) = delete;
    ~join_half() {}
    std::remove_reference_t<G> *g;
    union {
        result<R> out; /* g returned */
#if WEFT_HPP_EXCEPTIONS
        std::exception_ptr error; /* g threw */
#endif
    };
    bool threw; /* which one: written by the trampoline, read after it ran */

    /* g as a job: on a thief, in a wait of ours, or while f's exception
     * unwinds join. Nothing may leave it into weft's C frames. */
    static void trampoline(void *self) noexcept {
        auto *h = static_cast<join_half *>(self);
        ::new (static_cast<void *>(&h->out)) result<R>();
        h->threw = false;
#if WEFT_HPP_EXCEPTIONS
        try {
            h->out.run(std::forward<G>(*h->g));
        } catch (...) {
            h->out.~result<R>();
            ::new (static_cast<void *>(&h->error)) std::exception_ptr(std::current_exception());
            h->threw = true;
        }
#else
        h->out.run(std::forward<G>(*h->g));
#endif
    }
    /* After the trampoline ran: g's result, or its exception rethrown. */
    or_monostate<R> finish() {
#if WEFT_HPP_EXCEPTIONS
        if (__builtin_expect(threw, 0)) {
            std::exception_ptr e = std::move(error);
            error.~exception_ptr();
            std::rethrow_exception(std::move(e));
        }
#endif
        struct destroy {
            result<R> *r;
            ~destroy() {
                r->~result<R>();
            }
        } later{&out};
        return take_or_monostate<R>(out);
    }
    /* After the trampoline ran, while another exception wins: drop its work. */
    void drop() noexcept {
#if WEFT_HPP_EXCEPTIONS
        if (threw) {
            error.~exception_ptr();
            return;
        }
#endif
        out.~result<R>();
    }
};

/* If f throws, g's frame must not outlive join: it lies in join's frame,
 * linked from the worker. This guard's destructor pops it as join would,
 * running g here if nobody took it, or waiting for whoever did; what g
 * returned or threw then is dropped, since f's exception wins (join's
 * rule). A guard, not a try block: a landing pad for a cleanup costs the
 * path that does not throw nothing, where a catch around f and g cost
 * fib(35) 70% more. */
template <class H> struct join_unwind {
    weft__worker_head *w;
    weft__join_frame *fr, *prev;
    H *half;
    bool armed;
    ~join_unwind() {
        if (__builtin_expect(armed, 0)) {
            if (weft__join_pop(w, fr, prev))
                H::trampoline(half);
            half->drop();
        }
    }
};

/* f() and g() joined on worker w: g offered from our frame, f called here,
 * then g here too unless a thief took it; join's pair (or nothing, for two
 * void callables). After a pop that kept g, g runs as a plain call:
 * nothing is linked any more, so its exception leaves join directly. */
template <class F, class G> auto join_on(weft__worker_head *w, F &&f, G &&g) {
    using A = std::invoke_result_t<F>;
    using B = std::invoke_result_t<G>;
    join_half<G &&> b(&g);
    weft__join_frame fr;
    weft__join_frame *prev = weft__join_fork(w, &fr, &join_half<G &&>::trampoline, &b);
    join_unwind<join_half<G &&>> guard{w, &fr, prev, &b, true};
    result<A> a;
    a.run(std::forward<F>(f));
    guard.armed = false;
    if constexpr (std::is_void_v<A> && std::is_void_v<B>) {
        if (weft__join_pop(w, &fr, prev))
            std::invoke(std::forward<G>(g));
        else
            b.finish();
    } else {
        using P = std::pair<or_monostate<A>, or_monostate<B>>;
        if (weft__join_pop(w, &fr, prev)) {
            if constexpr (std::is_void_v<B>) {
                std::invoke(std::forward<G>(g));
                return P(take_or_monostate<A>(a), std::monostate{});
            } else {
                return P(take_or_monostate<A>(a), std::invoke(std::forward<G>(g)));
            }
        }
        return P(take_or_monostate<A>(a), b.finish());
    }
}
#define WEFT__HPP_INLINE_JOIN 1
#endif

} // namespace detail

/* join is a function of its own for each pair of callables, which are
 * inlined into it: a recursion through join then runs one level of the
 * user's function inside it, its leaves without a call. Left to itself, gcc
 * inlined the small join into the user's function instead and called that
 * function for every leaf: fib(35) at one thread 83 ms against 57. */
#ifdef __GNUC__
#define WEFT__HPP_JOIN_ATTR __attribute__((noinline))
#else
#define WEFT__HPP_JOIN_ATTR
#endif

/* weft_join: run f() and g(), potentially in parallel, and wait for both.
 * Returns void if both return void, else std::pair of their results (with
 * std::monostate for a void one): auto [a, b] = weft::join(f, g).
 * If either throws, the exception is rethrown once both have finished (f's if
 * both threw). Allocates nothing: both callables stay in the caller's frame.
 * A wait inside f with nothing else of its thread's own to run runs g itself
 * if nobody took it, so f may wait for what g does; g must not wait for what
 * f does after such a wait (weft.h, weft_join). */
template <class F, class G> WEFT__HPP_JOIN_ATTR auto join(F &&f, G &&g) {
    using A = std::invoke_result_t<F>;
    using B = std::invoke_result_t<G>;
#ifdef WEFT__HPP_INLINE_JOIN
    /* On a worker, the fast path inline; else the library's answer. */
    if (weft__worker_head *w = weft__tls_worker)
        return detail::join_on(w, std::forward<F>(f), std::forward<G>(g));
#endif
    detail::call<F &&> a{&f, {}, {}};
    detail::call<G &&> b{&g, {}, {}};
    weft_join(&detail::call<F &&>::trampoline, &a, &detail::call<G &&>::trampoline, &b);
    a.errors.rethrow();
    b.errors.rethrow();
    if constexpr (std::is_void_v<A> && std::is_void_v<B>)
        return;
    else
        return std::pair<detail::or_monostate<A>, detail::or_monostate<B>>(
            detail::take_or_monostate<A>(a.out), detail::take_or_monostate<B>(b.out));
}

/* Run every f() potentially in parallel (oneTBB's parallel_invoke, Rayon's
 * nested join) and return when all have finished; their results are
 * discarded. One callable runs inline; the rest are offered to thieves one
 * join at a time, so nothing is allocated. If some throw, the exception of
 * the first (in argument order) that threw is rethrown once all have
 * finished. */
template <class F> void invoke(F &&f) {
    std::forward<F>(f)();
}
template <class F, class G, class... Rest> void invoke(F &&f, G &&g, Rest &&...rest) {
    if constexpr (sizeof...(Rest) == 0) {
        join([&f]() -> void { std::forward<F>(f)(); }, [&g]() -> void { std::forward<G>(g)(); });
    } else {
        join([&f]() -> void { std::forward<F>(f)(); },
             [&]() { invoke(std::forward<G>(g), std::forward<Rest>(rest)...); });
    }
}

namespace detail {

/* base + offset, modulo 2^N: the index an offset of weft_for's range
 * stands for. */
template <class I> I offset_index(I base, std::size_t offset) noexcept {
    using U = std::make_unsigned_t<I>;
    return static_cast<I>(static_cast<U>(static_cast<U>(base) + static_cast<U>(offset)));
}

/* Where weft_for's range for [begin, begin + n) starts: at begin's residue
 * modulo 64, so that grain 0's calls end on multiples of 64 (weft_for) of
 * the indices themselves, as they do in C (two's complement keeps a
 * negative index's residue: 2^N is a multiple of 64). The range fits:
 * begin is at least k past the type's least value (a multiple of 64), and
 * end at most its greatest, so k + n < 2^N. */
template <class I> std::size_t range_start(I begin, std::size_t n) noexcept {
    std::size_t k = static_cast<std::size_t>(static_cast<std::make_unsigned_t<I>>(begin) % 64u);
    assert(n <= SIZE_MAX - k);
    (void)n;
    return k;
}

/* begin - k, modulo 2^N: the index weft_for's offset 0 stands for. */
template <class I> I range_base(I begin, std::size_t k) noexcept {
    using U = std::make_unsigned_t<I>;
    return static_cast<I>(static_cast<U>(static_cast<U>(begin) - static_cast<U>(k)));
}

/* parallel_for's state, in the caller's frame. f is called concurrently from
 * several threads, through a const reference: a mutable lambda, whose calls
 * would race on its captures, does not compile. */
template <class I, class F> struct loop {
    const F *f;
    I base; /* range_base */
    first_error errors;

    I index(std::size_t offset) const noexcept {
        return offset_index(base, offset);
    }
    static void trampoline(std::size_t b, std::size_t e, void *self) noexcept {
        auto *l = static_cast<loop *>(self);
        if (l->errors.failed()) /* an earlier piece threw: skip the rest */
            return;
        guarded_cancel(l->errors, [l, b, e] {
            if constexpr (std::is_invocable_v<const F &, I, I>) {
                (*l->f)(l->index(b), l->index(e));
            } else {
                for (std::size_t i = b; i < e; i++)
                    (*l->f)(l->index(i));
            }
        });
    }
};

template <class I, class F>
void parallel_for(weft_pool *p, I begin, I end, std::size_t grain, const F &f) {
    static_assert(std::is_invocable_v<const F &, I, I> || std::is_invocable_v<const F &, I>,
                  "weft::parallel_for: f must be callable as f(i) or f(begin, end), and const "
                  "(not a mutable lambda): pieces run concurrently");
    static_assert(sizeof(I) <= sizeof(std::size_t), "weft::parallel_for: index wider than size_t");
    if (!(begin < end))
        return;
    using U = std::make_unsigned_t<I>;
    std::size_t n = static_cast<U>(static_cast<U>(end) - static_cast<U>(begin));
    std::size_t k = range_start(begin, n);
    loop<I, F> l{&f, range_base(begin, k), {}};
    weft_for(p, k, k + n, grain, &loop<I, F>::trampoline, &l);
    l.errors.rethrow();
}

} // namespace detail

/* weft_for over the integers [begin, end) (any integer type; the two bounds
 * are converted to their common type I). f is called either
 *  - per piece, as f(I b, I e) for a sub-range [b, e), if it can be called
 *    with two indices: the loop over the piece is yours (vectorise it, keep
 *    per-piece state); or
 *  - per index, as f(I i), otherwise: weft loops over each piece for you.
 * Pieces: grain 0 (the default) is adaptive, grain g > 0 makes pieces of g to
 * 2g-1 indices (see weft_for; grain 0's calls end on multiples of 64 of the
 * indices themselves, as in C). f runs concurrently on several threads through
 * a const reference; it stays in the caller's frame (nothing is allocated).
 * If f throws, pieces that have not started are skipped and the first
 * exception is rethrown once every started piece has finished. */
template <class B, class E, class F,
          std::enable_if_t<detail::is_index<B> && detail::is_index<E>, int> = 0>
void parallel_for(pool_ref p, B begin, E end, std::size_t grain, const F &f) {
    using I = std::common_type_t<B, E>;
    detail::parallel_for<I, F>(p.get(), static_cast<I>(begin), static_cast<I>(end), grain, f);
}
template <class B, class E, class F,
          std::enable_if_t<detail::is_index<B> && detail::is_index<E>, int> = 0>
void parallel_for(pool_ref p, B begin, E end, const F &f) {
    parallel_for(p, begin, end, 0, f);
}
template <
    class B, class E, class G, class F,
    std::enable_if_t<detail::is_index<B> && detail::is_index<E> && detail::is_index<G>, int> = 0>
void parallel_for(B begin, E end, G grain, const F &f) {
    parallel_for(pool_ref(), begin, end, static_cast<std::size_t>(grain), f);
}
template <class B, class E, class F,
          std::enable_if_t<detail::is_index<B> && detail::is_index<E>, int> = 0>
void parallel_for(B begin, E end, const F &f) {
    parallel_for(pool_ref(), begin, end, 0, f);
}

namespace detail {

/* parallel_for_2d's state, in the caller's frame: f through a const
 * reference, the first exception, and the index type's base. */
template <class I, class F> struct loop2d {
    const F *f;
    I r_base, c_base;
    first_error errors;

    static void trampoline(std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1,
                           void *self) noexcept {
        auto *l = static_cast<loop2d *>(self);
        if (l->errors.failed()) /* an earlier block threw: skip the rest */
            return;
        guarded_cancel(l->errors, [l, r0, r1, c0, c1] {
            (*l->f)(offset_index(l->r_base, r0), offset_index(l->r_base, r1),
                    offset_index(l->c_base, c0), offset_index(l->c_base, c1));
        });
    }
};

} // namespace detail

/* weft_for_2d over the integers [r0, r1) x [c0, c1) (any integer type; the
 * four bounds are converted to their common type I): f(I rb, I re, I cb, I
 * ce) once per block of rows [rb, re) and columns [cb, ce), the blocks
 * tiling the rectangle exactly once, concurrently, through a const
 * reference. Grains as weft_for_2d (0: weft's choice). If f throws, blocks
 * that have not started are skipped and the first exception is rethrown
 * once every started block has finished. */
template <class R0, class R1, class C0, class C1, class F,
          std::enable_if_t<detail::is_index<R0> && detail::is_index<R1> && detail::is_index<C0> &&
                               detail::is_index<C1>,
                           int> = 0>
void parallel_for_2d(pool_ref p, R0 r0, R1 r1, C0 c0, C1 c1, std::size_t r_grain,
                     std::size_t c_grain, const F &f) {
    using I = std::common_type_t<R0, R1, C0, C1>;
    static_assert(std::is_invocable_v<const F &, I, I, I, I>,
                  "weft::parallel_for_2d: f must be callable as f(r0, r1, c0, c1), and const "
                  "(not a mutable lambda): blocks run concurrently");
    static_assert(sizeof(I) <= sizeof(std::size_t),
                  "weft::parallel_for_2d: index wider than size_t");
    I rb = static_cast<I>(r0), re = static_cast<I>(r1), cb = static_cast<I>(c0),
      ce = static_cast<I>(c1);
    if (!(rb < re) || !(cb < ce))
        return;
    using U = std::make_unsigned_t<I>;
    std::size_t nr = static_cast<U>(static_cast<U>(re) - static_cast<U>(rb));
    std::size_t nc = static_cast<U>(static_cast<U>(ce) - static_cast<U>(cb));
    std::size_t kr = detail::range_start(rb, nr), kc = detail::range_start(cb, nc);
    detail::loop2d<I, F> l{&f, detail::range_base(rb, kr), detail::range_base(cb, kc), {}};
    weft_for_2d(p.get(), kr, kr + nr, kc, kc + nc, r_grain, c_grain,
                &detail::loop2d<I, F>::trampoline, &l);
    l.errors.rethrow();
}
template <class R0, class R1, class C0, class C1, class F,
          std::enable_if_t<detail::is_index<R0> && detail::is_index<R1> && detail::is_index<C0> &&
                               detail::is_index<C1>,
                           int> = 0>
void parallel_for_2d(pool_ref p, R0 r0, R1 r1, C0 c0, C1 c1, const F &f) {
    parallel_for_2d(p, r0, r1, c0, c1, 0, 0, f);
}
template <class R0, class R1, class C0, class C1, class F,
          std::enable_if_t<detail::is_index<R0> && detail::is_index<R1> && detail::is_index<C0> &&
                               detail::is_index<C1>,
                           int> = 0>
void parallel_for_2d(R0 r0, R1 r1, C0 c0, C1 c1, const F &f) {
    parallel_for_2d(pool_ref(), r0, r1, c0, c1, 0, 0, f);
}

namespace detail {

template <class It, class = void> struct is_random_access : std::false_type {};
template <class It>
struct is_random_access<It, std::void_t<typename std::iterator_traits<It>::iterator_category>>
    : std::is_base_of<std::random_access_iterator_tag,
                      typename std::iterator_traits<It>::iterator_category> {};
template <class It> inline constexpr bool is_random_access_v = is_random_access<It>::value;
/* An iterator at all (it names a category), and one that can be walked
 * more than once (forward), whose elements stay where they are. */
template <class It, class = void> inline constexpr bool is_iterator_v = false;
template <class It>
inline constexpr bool
    is_iterator_v<It, std::void_t<typename std::iterator_traits<It>::iterator_category>> = true;
template <class It, class = void> inline constexpr bool is_forward_v = false;
template <class It>
inline constexpr bool
    is_forward_v<It, std::void_t<typename std::iterator_traits<It>::iterator_category>> =
        std::is_base_of_v<std::forward_iterator_tag,
                          typename std::iterator_traits<It>::iterator_category>;

template <class R, class = void> struct range_iterator {};
template <class R>
struct range_iterator<R, std::void_t<decltype(std::begin(std::declval<R &>()))>> {
    using type = decltype(std::begin(std::declval<R &>()));
};
template <class R, class = void> inline constexpr bool is_random_access_range = false;
template <class R>
inline constexpr bool is_random_access_range<R, std::void_t<typename range_iterator<R>::type>> =
    is_random_access_v<typename range_iterator<R>::type>;
template <class R, class = void> inline constexpr bool is_iterable_range = false;
template <class R>
inline constexpr bool is_iterable_range<R, std::void_t<typename range_iterator<R>::type>> =
    !is_random_access_v<typename range_iterator<R>::type>;

} // namespace detail

/* parallel_for over random-access iterators [first, last): f(*it) for every
 * element, exactly once, in parallel, as std::for_each with a parallel
 * execution policy. Pieces are adaptive (grain 0); f runs concurrently through
 * a const reference and may modify the element it is given; exceptions as
 * for the integer form. */
template <class It, class F, std::enable_if_t<detail::is_random_access_v<It>, int> = 0>
void parallel_for(pool_ref p, It first, It last, const F &f) {
    static_assert(std::is_invocable_v<const F &, decltype(*first)>,
                  "weft::parallel_for: f must be callable as f(*it), and const (not a mutable "
                  "lambda): elements are visited concurrently");
    if (!(first < last))
        return;
    auto n = static_cast<std::size_t>(last - first);
    using D = typename std::iterator_traits<It>::difference_type;
    parallel_for(p, std::size_t{0}, n, 0, [&first, &f](std::size_t b, std::size_t e) {
        It it = first + static_cast<D>(b);
        for (std::size_t i = b; i < e; i++, ++it)
            f(*it);
    });
}
template <class It, class F, std::enable_if_t<detail::is_random_access_v<It>, int> = 0>
void parallel_for(It first, It last, const F &f) {
    parallel_for(pool_ref(), first, last, f);
}

/* parallel_for over forward iterators that are not random access (a
 * std::list, std::set, std::map, std::unordered_map, std::forward_list):
 * f(*it) for every element, exactly once, in parallel, as oneTBB's
 * parallel_for_each. One walk of [first, last) first records an iterator
 * per element (allocated: n iterators), then the elements are visited as
 * a random-access range is. Input iterators (a stream) can be walked only
 * once, by one thread: they are rejected with one line saying so. */
template <class It, class F,
          std::enable_if_t<detail::is_iterator_v<It> && !detail::is_random_access_v<It>, int> = 0>
void parallel_for(pool_ref p, It first, It last, const F &f) {
    static_assert(detail::is_forward_v<It>,
                  "weft::parallel_for: input iterators can be walked only once, by one thread: "
                  "give forward iterators (a container's), or copy the elements into a "
                  "std::vector first");
    if constexpr (detail::is_forward_v<It>) {
        static_assert(std::is_invocable_v<const F &, decltype(*first)>,
                      "weft::parallel_for: f must be callable as f(*it), and const (not a "
                      "mutable lambda): elements are visited concurrently");
        std::vector<It> its;
        for (It it = first; it != last; ++it)
            its.push_back(it);
        parallel_for(p, its.begin(), its.end(), [&f](const It &it) { f(*it); });
    }
}
template <class It, class F,
          std::enable_if_t<detail::is_iterator_v<It> && !detail::is_random_access_v<It>, int> = 0>
void parallel_for(It first, It last, const F &f) {
    parallel_for(pool_ref(), first, last, f);
}

/* parallel_for over a container or range (a std::vector, std::array, a C
 * array, std::span; or, through the forward-iterator form above, a
 * std::list, std::set, std::map): f(element) for each. */
template <class R, class F, std::enable_if_t<detail::is_random_access_range<R>, int> = 0>
void parallel_for(pool_ref p, R &&range, const F &f) {
    parallel_for(p, std::begin(range), std::end(range), f);
}
template <class R, class F, std::enable_if_t<detail::is_random_access_range<R>, int> = 0>
void parallel_for(R &&range, const F &f) {
    parallel_for(pool_ref(), std::begin(range), std::end(range), f);
}
template <class R, class F, std::enable_if_t<detail::is_iterable_range<R>, int> = 0>
void parallel_for(pool_ref p, R &&range, const F &f) {
    parallel_for(p, std::begin(range), std::end(range), f);
}
template <class R, class F, std::enable_if_t<detail::is_iterable_range<R>, int> = 0>
void parallel_for(R &&range, const F &f) {
    parallel_for(pool_ref(), std::begin(range), std::end(range), f);
}

namespace detail {

/* reduce's state, in the caller's frame; the C reducer's callbacks. T is
 * trivially copyable: weft copies accumulators as bytes and never destroys
 * them. */
template <class I, class T, class F, class C> struct reduction {
    const T *identity;
    const F *f;
    const C *combine;
    I base; /* range_base */
    first_error errors;

    I index(std::size_t offset) const noexcept {
        return offset_index(base, offset);
    }
    static T &acc(void *p) noexcept {
        return *std::launder(static_cast<T *>(p));
    }
    static void init(void *p, void *self) noexcept {
        ::new (p) T(*static_cast<reduction *>(self)->identity);
    }
    static void fold(std::size_t b, std::size_t e, void *p, void *self) noexcept {
        auto *r = static_cast<reduction *>(self);
        if (r->errors.failed()) /* the result will not be used: skip the work */
            return;
        guarded_cancel(r->errors, [r, b, e, p] {
            T &a = acc(p);
            if constexpr (std::is_invocable_v<const F &, I, I>) {
                a = (*r->combine)(a, (*r->f)(r->index(b), r->index(e)));
            } else {
                for (std::size_t i = b; i < e; i++)
                    a = (*r->combine)(a, (*r->f)(r->index(i)));
            }
        });
    }
    static void combine_into(void *p, const void *rhs, void *self) noexcept {
        auto *r = static_cast<reduction *>(self);
        if (r->errors.failed())
            return;
        guarded_cancel(r->errors, [r, p, rhs] {
            T &a = acc(p);
            a = (*r->combine)(a, *std::launder(static_cast<const T *>(rhs)));
        });
    }
};

template <class I, class T, class F, class C>
T reduce(weft_pool *p, I begin, I end, std::size_t grain, const T &identity, const F &f,
         const C &combine) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                  "weft::reduce: the accumulator type must be trivially copyable (weft copies "
                  "accumulators as bytes)");
    static_assert(alignof(T) <= alignof(std::max_align_t),
                  "weft::reduce: the accumulator type is over-aligned");
    static_assert(std::is_invocable_v<const F &, I, I> || std::is_invocable_v<const F &, I>,
                  "weft::reduce: f must be callable as f(i) or f(begin, end), and const");
    static_assert(sizeof(I) <= sizeof(std::size_t), "weft::reduce: index wider than size_t");
    using U = std::make_unsigned_t<I>;
    std::size_t n =
        begin < end ? static_cast<U>(static_cast<U>(end) - static_cast<U>(begin)) : std::size_t{0};
    using R = reduction<I, T, F, C>;
    std::size_t k = range_start(begin, n);
    R r{&identity, &f, &combine, range_base(begin, k), {}};
    weft_reducer reducer{sizeof(T), &R::init, &R::fold, &R::combine_into, &r};
    T result = identity;
    int err = weft_reduce(p, k, k + n, grain, &reducer, &result);
    r.errors.rethrow();
    if (err)
        throw_error(err, "weft_reduce");
    return result;
}

/* broadcast's state, in the caller's frame. */
template <class F> struct broadcast_call {
    const F *f;
    first_error errors;
    static void trampoline(unsigned index, void *self) noexcept {
        auto *b = static_cast<broadcast_call *>(self);
        guarded(b->errors, [b, index] { (*b->f)(index); });
    }
};

} // namespace detail

/* weft_reduce over the integers [begin, end): combines, in index order,
 * identity with f's results, and returns the total:
 *
 *   double sum = weft::reduce(pool, 0, v.size(), 0.0,
 *                             [&](std::size_t i) { return v[i]; }, std::plus<>());
 *
 * f is called per index, f(I i), or per piece, f(I b, I e) returning the
 * piece's partial result, chosen as in parallel_for. combine(a, b) returns
 * the combination of a (lower indices) and b: associative, not necessarily
 * commutative. T must be trivially copyable (weft copies accumulators as
 * bytes). With grain > 0 the grouping of every combine depends only on
 * begin, end and grain, so a floating-point sum has the same bits on every
 * run and thread count. f and combine run concurrently, through const
 * references, and stay in the caller's frame. If one throws, the remaining
 * work is skipped and the first exception rethrown; std::system_error(ENOMEM)
 * if weft could not allocate an accumulator (only those above 256 bytes are
 * allocated), std::system_error(ECANCELED) if the reduction was cancelled
 * (weft::cancel() from f, or a group around it): there is no result. */
template <class B, class E, class T, class F, class C,
          std::enable_if_t<detail::is_index<B> && detail::is_index<E>, int> = 0>
T reduce(pool_ref p, B begin, E end, std::size_t grain, const T &identity, const F &f,
         const C &combine) {
    using I = std::common_type_t<B, E>;
    return detail::reduce<I, T, F, C>(p.get(), static_cast<I>(begin), static_cast<I>(end), grain,
                                      identity, f, combine);
}
template <class B, class E, class T, class F, class C,
          std::enable_if_t<detail::is_index<B> && detail::is_index<E>, int> = 0>
T reduce(pool_ref p, B begin, E end, const T &identity, const F &f, const C &combine) {
    return reduce(p, begin, end, 0, identity, f, combine);
}
template <
    class B, class E, class G, class T, class F, class C,
    std::enable_if_t<detail::is_index<B> && detail::is_index<E> && detail::is_index<G>, int> = 0>
T reduce(B begin, E end, G grain, const T &identity, const F &f, const C &combine) {
    return reduce(pool_ref(), begin, end, static_cast<std::size_t>(grain), identity, f, combine);
}
template <class B, class E, class T, class F, class C,
          std::enable_if_t<detail::is_index<B> && detail::is_index<E>, int> = 0>
T reduce(B begin, E end, const T &identity, const F &f, const C &combine) {
    return reduce(pool_ref(), begin, end, 0, identity, f, combine);
}

/* weft_broadcast: call f(index) once on every worker of the pool, index
 * being the worker's weft_thread_index(), and return when all have run.
 * f runs concurrently through a const reference, in the caller's frame; the
 * first exception is rethrown after every worker's call has finished. */
template <class F> void broadcast(pool_ref p, const F &f) {
    static_assert(std::is_invocable_v<const F &, unsigned>,
                  "weft::broadcast: f must be callable as f(unsigned index), and const");
    detail::broadcast_call<F> b{&f, {}};
    weft_broadcast(p.get(), &detail::broadcast_call<F>::trampoline, &b);
    b.errors.rethrow();
}

namespace detail {

/* ---- sort -------------------------------------------------------------------
 * A parallel quicksort, in place. A piece longer than sort_cutoff is
 * partitioned around a pivot on one thread and its two sides are sorted by a
 * weft::join, so every partition offers a side to idle workers; a shorter
 * piece is sorted on one thread by the same quicksort, and a piece of a few
 * elements by insertion. The decisions, and what each one buys:
 *  - Block partitioning (Edelkamp and Weiss's BlockQuicksort): a block of
 *    elements from each end is compared with the pivot first, the positions
 *    of those on the wrong side recorded without a branch, and then swapped
 *    in pairs. The compares' outcome decides no branch, so a random input
 *    costs no mispredicted branch per element: random 64-bit keys sort in
 *    0.37 of std::sort's time (docs/performance.md, "Where weft loses").
 *  - Keys equal to the pivot go right. A piece whose left neighbour (the
 *    pivot of an earlier partition, which orders no later than anything in
 *    the piece) is not before its own pivot holds that key at its start:
 *    it is partitioned into the keys equal to it, which are done, and the
 *    rest (pattern-defeating quicksort's rule). An all-equal range or one
 *    of few keys takes a few compares a key (about 2n in all).
 *  - The pivot is the median of three, or for a piece of 128 or more
 *    Tukey's ninther (the median of three medians of three, spread over the
 *    piece): sorted, reverse-sorted and organ-pipe ranges split near their
 *    middle.
 *  - A budget of 2 log2(n) levels of partitions, as introsort has: a piece
 *    that exhausts it (an input built against the pivot rule) is heap
 *    sorted, whose worst case is n log n, so the whole sort's is too.
 *  - Every step is a swap, except insertion's, which holds one element
 *    aside and puts it back if a compare throws: after a compare's
 *    exception the range holds every one of its elements. No scan runs past a bound, so a
 *    comparison that is no strict weak order leaves the range in some order
 *    (std::sort's may read outside it).
 *  - In place, no buffer: nothing is allocated, so nothing can fail for lack
 *    of memory, and an element needs only what std::sort needs of it (a
 *    move-only type sorts).
 *  - What it costs: the first partition reads the whole range on one thread,
 *    the next two halves on two, and so on, so the critical path holds about
 *    2n compares against n log2(n) of work; the speed-up flattens out near
 *    log2(n)/2 threads. A sample sort or a multiway merge sort splits the
 *    first pass too, at the price of a buffer of n elements. */

#ifdef __GNUC__
#define WEFT__HPP_ALWAYS_INLINE __attribute__((always_inline))
#else
#define WEFT__HPP_ALWAYS_INLINE
#endif

/* A piece this long or shorter is sorted on one thread: some 20 000
 * compares, tens of microseconds, against which a fork that is stolen (a
 * wake-up, a few cache misses: microseconds) is a few percent. */
inline constexpr std::ptrdiff_t sort_cutoff = 2048;
/* A piece this long or shorter is sorted by insertion. */
inline constexpr std::ptrdiff_t sort_insertion = 24;
/* Elements a block partition compares at a time from each end (its
 * positions are bytes). */
inline constexpr int sort_block = 64;

template <class It, class Comp> It median_of_3(It a, It b, It c, const Comp &comp) {
    if (comp(*a, *b)) {
        if (comp(*b, *c))
            return b;
        return comp(*a, *c) ? c : a;
    }
    if (comp(*a, *c))
        return a;
    return comp(*b, *c) ? c : b;
}

/* Move the pivot of [first, last) (n > sort_insertion) to *first. */
template <class It, class Comp> void sort_pivot_to_front(It first, It last, const Comp &comp) {
    auto n = last - first;
    It mid = first + n / 2, back = last - 1, m;
    if (n < 128) {
        m = median_of_3(first, mid, back, comp);
    } else {
        auto s = n / 8;
        m = median_of_3(median_of_3(first, first + s, first + 2 * s, comp),
                        median_of_3(mid - s, mid, mid + s, comp),
                        median_of_3(back - 2 * s, back - s, back, comp), comp);
    }
    std::iter_swap(first, m);
}

/* Insertion sort of [first, last). The element being inserted is held
 * aside while the ones before it move up; if a compare throws, the guard
 * puts it into the gap, so the range keeps all its elements. */
template <class It, class Comp> void sort_by_insertion(It first, It last, const Comp &comp) {
    using T = typename std::iterator_traits<It>::value_type;
    if (last - first < 2)
        return;
    for (It i = first + 1; i != last; ++i) {
        if (!comp(*i, *(i - 1)))
            continue;
        struct gap {
            T held;
            It at;
            ~gap() {
                *at = std::move(held);
            }
        } g{std::move(*i), i};
        do {
            *g.at = std::move(*(g.at - 1));
            --g.at;
        } while (g.at != first && comp(g.held, *(g.at - 1)));
    }
}

/* The positions among base[0, n) (n <= sort_block) whose element is on the
 * wrong side, into at[]; their count. wrong(i) is a bool: it adds to the
 * count instead of deciding a branch. */
template <class Wrong> int sort_wrong_positions(int n, unsigned char *at, const Wrong &wrong) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        at[k] = static_cast<unsigned char>(i);
        k += wrong(i) ? 1 : 0;
    }
    return k;
}

/* Partition [first, last) around *first: returns the pivot's place p, with
 * [first, p) ordering before the pivot and nothing in (p, last) before it.
 * Blocks from the left end record the elements not before the pivot, blocks
 * from the right end those before it; the two lists are swapped pairwise,
 * and a block whose list is spent is done. */
template <class It, class Comp> It sort_block_partition(It first, It last, const Comp &comp) {
    constexpr int B = sort_block;
    const auto &pivot = *first;
    It l = first + 1, r = last; /* [l, r): not yet placed; blocks at l and before r */
    unsigned char left_at[B], right_at[B];
    int left_n = 0, right_n = 0, left_from = 0, right_from = 0;
    auto scan_left = [&](int n) {
        left_from = 0;
        left_n = sort_wrong_positions(n, left_at, [&](int i) { return !comp(l[i], pivot); });
    };
    auto scan_right = [&](int n) {
        right_from = 0;
        right_n =
            sort_wrong_positions(n, right_at, [&](int i) { return comp(*(r - 1 - i), pivot); });
    };
    auto swap_pairs = [&] {
        int k = std::min(left_n, right_n);
        for (int i = 0; i < k; i++)
            std::iter_swap(l + left_at[left_from + i], r - 1 - right_at[right_from + i]);
        left_n -= k;
        right_n -= k;
        left_from += k;
        right_from += k;
    };
    /* A block of left_size at l and one of right_size before r, where an
     * end has none pending; the wrong elements swapped; spent blocks done.
     * Inlined into the loop by force: called, gcc 12 sorted 5% slower. */
    auto step = [&](int left_size, int right_size) WEFT__HPP_ALWAYS_INLINE {
        if (left_n == 0)
            scan_left(left_size);
        if (right_n == 0)
            scan_right(right_size);
        swap_pairs();
        if (left_n == 0)
            l += left_size;
        if (right_n == 0)
            r -= right_size;
    };
    while (r - l > 2 * B)
        step(B, B);
    /* At most 2B left, one end's block perhaps still with wrong elements:
     * the rest is one last block at each end that has none. */
    int rest = static_cast<int>(r - l) - (left_n ? B : 0) - (right_n ? B : 0);
    int left_size = B, right_size = B;
    if (left_n == 0 && right_n == 0) {
        left_size = rest / 2;
        right_size = rest - left_size;
    } else if (left_n == 0) {
        left_size = rest;
    } else {
        right_size = rest;
    }
    step(left_size, right_size);
    /* One end may still hold wrong elements, and [l, r) is its block: move
     * them to the block's far side, the last one first. */
    if (left_n) {
        while (left_n--)
            std::iter_swap(l + left_at[left_from + left_n], --r);
        l = r;
    } else {
        while (right_n--)
            std::iter_swap(r - 1 - right_at[right_from + right_n], l++);
    }
    std::iter_swap(first, l - 1);
    return l - 1;
}

/* Partition [first, last) around *first, whose key its left neighbour
 * holds too: returns the end of the keys equal to it, [first, end), which
 * are in place. */
template <class It, class Comp> It sort_equal_partition(It first, It last, const Comp &comp) {
    const auto &pivot = *first;
    It i = first + 1, j = last;
    for (;;) {
        while (i < j && !comp(pivot, *i))
            ++i;
        while (i < j && comp(pivot, *(j - 1)))
            --j;
        if (i >= j)
            return i;
        std::iter_swap(i, --j);
        ++i;
    }
}

/* Heap sort of [first, last) by swaps: a piece whose partitions went badly. */
template <class It, class Comp> void sort_by_heap(It first, It last, const Comp &comp) {
    auto n = last - first;
    auto sift = [&](decltype(n) root, decltype(n) end) {
        for (;;) {
            auto child = 2 * root + 1;
            if (child >= end)
                return;
            if (child + 1 < end && comp(first[child], first[child + 1]))
                ++child;
            if (!comp(first[root], first[child]))
                return;
            std::iter_swap(first + root, first + child);
            root = child;
        }
    };
    for (auto i = n / 2; i-- > 0;)
        sift(i, n);
    for (auto end = n; end-- > 1;) {
        std::iter_swap(first, first + end);
        sift(0, end);
    }
}

/* One partition of the piece [first, last), which has a left neighbour
 * (first[-1], ordering no later than the piece) unless leftmost: returns
 * the pivot's place p (the sides are [first, p) and (p, last)), or last
 * when the piece's pivot key filled its start and [*rest, last) is what is
 * left to sort. */
template <class It, class Comp>
It sort_partition(It first, It last, const Comp &comp, bool leftmost, It *rest) {
    sort_pivot_to_front(first, last, comp);
    if (!leftmost && !comp(*(first - 1), *first)) {
        *rest = sort_equal_partition(first, last, comp);
        return last;
    }
    It p = sort_block_partition(first, last, comp);
    *rest = p + 1;
    return p;
}

/* [first, last) on this thread: the smaller side of each partition by
 * recursion, the larger by the loop (stack depth log2 n). */
template <class It, class Comp>
void sort_serial(It first, It last, const Comp &comp, int budget, bool leftmost) {
    while (last - first > sort_insertion) {
        if (budget-- == 0) {
            sort_by_heap(first, last, comp);
            return;
        }
        It rest, p = sort_partition(first, last, comp, leftmost, &rest);
        if (p == last) { /* the front is done */
            first = rest;
            leftmost = false;
        } else if (p - first < last - rest) {
            sort_serial(first, p, comp, budget, leftmost);
            first = rest;
            leftmost = false;
        } else {
            sort_serial(rest, last, comp, budget, false);
            last = p;
        }
    }
    sort_by_insertion(first, last, comp);
}

template <class It, class Comp>
void sort_piece(It first, It last, const Comp &comp, int budget, bool leftmost) {
    if (last - first <= sort_cutoff || budget == 0) {
        sort_serial(first, last, comp, budget, leftmost);
        return;
    }
    It rest, p = sort_partition(first, last, comp, leftmost, &rest);
    if (p == last) {
        sort_piece(rest, last, comp, budget - 1, false);
        return;
    }
    weft::join([&] { sort_piece(first, p, comp, budget - 1, leftmost); },
               [&] { sort_piece(rest, last, comp, budget - 1, false); });
}

} // namespace detail

/* Sort [first, last) into the order comp gives (a strict weak order, as for
 * std::sort; std::less<> without comp), in parallel inside pool p: a
 * parallel quicksort (block partitions, whose sides are forked above a few
 * thousand elements; insertion below a few dozen; heap sort for a piece
 * whose partitions go badly, so n log n compares at worst, also for
 * sorted, reverse-sorted and all-equal ranges). Random-access iterators
 * only (one line says so otherwise). Not stable: equivalent elements may
 * change order, as with std::sort. In place: allocates nothing; the element
 * type needs what std::sort needs (move-only types sort). comp is called
 * concurrently from several threads, through a const reference (a mutable
 * lambda does not compile). Threads and waiting as weft::run: from a worker
 * of p the caller takes part. If comp throws, the pieces already forked
 * finish, the first exception is rethrown, and the range holds all its
 * elements, in some order; if a move throws, the element being moved may be
 * lost, or the program terminated (a move back during unwinding). With a comp that is no strict
 * weak order the range ends in some order, and nothing outside it is touched. */
template <class It, class Comp, std::enable_if_t<detail::is_iterator_v<It>, int> = 0>
void sort(pool_ref p, It first, It last, const Comp &comp) {
    static_assert(detail::is_random_access_v<It>,
                  "weft::sort: needs random-access iterators (a std::vector's, a std::deque's, "
                  "an array's); sort a std::list with its own sort()");
    if constexpr (detail::is_random_access_v<It>) {
        using R = typename std::iterator_traits<It>::reference;
        static_assert(std::is_invocable_r_v<bool, const Comp &, R, R>,
                      "weft::sort: comp must be callable as comp(a, b) -> bool, and const (not a "
                      "mutable lambda): pieces compare concurrently");
        auto n = last - first;
        int budget = 0;
        for (auto k = n; k > 1; k >>= 1)
            budget += 2;
        if (n <= detail::sort_cutoff) {
            detail::sort_serial(first, last, comp, budget, true);
            return;
        }
        weft::run(p, [&] { detail::sort_piece(first, last, comp, budget, true); });
    }
}
template <class It, std::enable_if_t<detail::is_iterator_v<It>, int> = 0>
void sort(pool_ref p, It first, It last) {
    weft::sort(p, first, last, std::less<>());
}
template <class It, class Comp, std::enable_if_t<detail::is_iterator_v<It>, int> = 0>
void sort(It first, It last, const Comp &comp) {
    weft::sort(pool_ref(), first, last, comp);
}
template <class It, std::enable_if_t<detail::is_iterator_v<It>, int> = 0>
void sort(It first, It last) {
    weft::sort(pool_ref(), first, last, std::less<>());
}

namespace detail {

/* ---- scans -------------------------------------------------------------------
 * A scan that costs one pass when nobody helps, and splits itself where
 * helpers arrive. The input is cut into blocks. The calling thread scans
 * blocks from the front, in order, carrying the running value from one to
 * the next: its output is final at once. Meanwhile helpers (a parallel_for
 * of one index per other thread of the pool, forked beside the caller's
 * loop) take blocks from the back and only reduce them, each to the
 * combination of its elements. Front and back claim blocks from one atomic
 * word, so every block goes to exactly one side. Then the running value at
 * the meeting point and the back blocks' sums give, serially, each back
 * block's starting value, and the back blocks are scanned in parallel (a
 * parallel_for over them).
 *
 * Where the two sides meet: never before the caller's share, the first
 * 1 / (h + 1) of the blocks with h helpers; beyond it, wherever their speeds
 * make them meet. The share is the split that makes both phases even when a
 * reduction costs what a scan costs (op dominates): the caller scans s of n
 * elements while h helpers reduce n - s, s = (n - s) / h; the back is then
 * scanned by h + 1 threads, in (2h + 1) / (h + 1)^2 of the serial time.
 * Without the bound, helpers would take most of a scan that memory
 * bandwidth limits, where a reduction costs about a third of a scan (it
 * reads each element; a scan also writes it, and a write costs a read of
 * the line and a write-back), and most of the input would be read twice;
 * with it, at most h / (h + 1) is. A helper that reaches the caller's share
 * stops: no side ever waits for the other. With no helper at all (every
 * worker busy, a pool of one thread) the caller claims every block and the
 * scan is std::inclusive_scan's single pass plus a relaxed compare-and-swap
 * per block.
 * op is applied in element order everywhere (a block's sum combines its own
 * elements left to right; starting values combine sums left to right), so
 * op must be associative, not commutative; where the two sides meet varies
 * from run to run, so does the grouping, and a floating-point scan's last
 * bits may too. */

/* Below this many elements the scan is serial: the whole of it takes about
 * as long as waking a worker to help. */
inline constexpr std::size_t scan_cutoff = std::size_t(1) << 15;
/* A block: long enough that its claim (one compare-and-swap on a line the
 * other side also writes) is noise, short enough that the side that claims
 * the last one keeps the other waiting for little. */
inline constexpr std::size_t scan_block_size = 4096;

template <class It, class Out, class T, class Op, bool Inclusive> class scan {
  public:
    scan(It first, Out d_first, std::size_t n, const Op &op)
        : first_(first), d_first_(d_first), n_(n), op_(&op) {
        /* At most 2^31 blocks, so that both ends fit one 64-bit word. */
        block_ = std::max(scan_block_size, n / (std::size_t(1) << 31) + 1);
        blocks_ = n / block_; /* the last block takes the remainder */
        sums_.resize(blocks_);
        claims_.store(std::uint64_t(blocks_) << 32, std::memory_order_relaxed);
    }

    void run(weft_pool *p, T init) {
        unsigned helpers = helper_count(p);
        front_share_ = blocks_ / (helpers + 1);
        std::size_t met = 0;
        if (helpers == 0) {
            met = front(init);
        } else {
            weft::join(
                [&] { met = front(init); },
                [&] { weft::parallel_for(p, 0u, helpers, 1u, [this](unsigned) { back(); }); });
        }
        /* Every block below met is scanned; every block from met on holds
         * its sum (the join made the helpers' writes visible). Turn the sums
         * into starting values, left to right. */
        T carry = std::move(init);
        for (std::size_t k = met; k < blocks_; k++) {
            std::optional<T> sum = std::move(sums_[k]);
            sums_[k].emplace(carry);
            if (k + 1 < blocks_)
                carry = (*op_)(carry, *sum);
        }
        if (met < blocks_)
            weft::parallel_for(p, met, blocks_,
                               [this](std::size_t k) { scan_block(k, *sums_[k]); });
    }

  private:
    static std::uint64_t pack(std::uint64_t lo, std::uint64_t hi) noexcept {
        return lo | hi << 32;
    }
    /* The threads that may help: the pool's workers but the caller, if it
     * is one of them. */
    static unsigned helper_count(weft_pool *p) noexcept {
        unsigned workers = weft_pool_threads(p);
        int me = weft_thread_index();
        bool worker = me >= 0 && static_cast<unsigned>(me) < workers;
        return worker ? workers - 1 : workers;
    }
    /* Claims: the low half of the word is the next block from the front,
     * the high half one past the next block from the back; lo == hi when
     * every block is claimed. Helpers claim none below front_share_.
     * Relaxed: the word only decides who owns a block (one modification
     * order, so no block has two owners); what the owners write reaches the
     * caller through the join's return. */
    bool claim(bool from_front, std::size_t &k) noexcept {
        std::uint64_t c = claims_.load(std::memory_order_relaxed);
        for (;;) {
            std::uint64_t lo = c & 0xffffffffu, hi = c >> 32;
            if (lo == hi || (!from_front && hi - 1 < front_share_))
                return false;
            std::uint64_t next = from_front ? pack(lo + 1, hi) : pack(lo, hi - 1);
            if (claims_.compare_exchange_weak(c, next, std::memory_order_relaxed)) {
                k = static_cast<std::size_t>(from_front ? lo : hi - 1);
                return true;
            }
        }
    }
    /* Claim what is left for nobody: the helpers stop. */
    void close() noexcept {
        std::uint64_t c = claims_.load(std::memory_order_relaxed);
        while ((c & 0xffffffffu) != c >> 32 &&
               !claims_.compare_exchange_weak(c, pack(c >> 32, c >> 32), std::memory_order_relaxed))
            ;
    }
    struct closer {
        scan *s;
        ~closer() {
            s->close();
        }
    };

    /* The caller's side: scan blocks from the front while any is left;
     * returns the first block it did not scan. If op throws, closer stops
     * the helpers. */
    std::size_t front(T &acc) {
        closer c{this};
        std::size_t k = 0, next = 0;
        while (claim(true, k)) {
            acc = scan_block(k, std::move(acc));
            next = k + 1;
        }
        return next;
    }
    /* A helper's side: reduce blocks from the back while any is left. */
    void back() {
        std::size_t k;
        while (claim(false, k))
            sums_[k].emplace(reduce_block(k));
    }

    std::size_t begin_of(std::size_t k) const noexcept {
        return k * block_;
    }
    std::size_t end_of(std::size_t k) const noexcept {
        return k + 1 == blocks_ ? n_ : (k + 1) * block_;
    }
    /* Scan block k, starting from acc; returns the running value after it.
     * Each element is read before its output is written, so that d_first
     * may be first (in place). */
    T scan_block(std::size_t k, T acc) const {
        using D = typename std::iterator_traits<It>::difference_type;
        std::size_t e = end_of(k);
        for (std::size_t i = begin_of(k); i < e; i++) {
            It in = first_ + static_cast<D>(i);
            Out out = d_first_ + static_cast<D>(i);
            if constexpr (Inclusive) {
                acc = (*op_)(acc, *in);
                *out = acc;
            } else {
                typename std::iterator_traits<It>::value_type x = *in;
                *out = acc;
                acc = (*op_)(acc, x);
            }
        }
        return acc;
    }
    /* The combination of block k's elements, left to right (a block has at
     * least two: blocks are scan_block_size long, the last longer). */
    T reduce_block(std::size_t k) const {
        using D = typename std::iterator_traits<It>::difference_type;
        std::size_t b = begin_of(k), e = end_of(k);
        It in = first_ + static_cast<D>(b);
        T sum = (*op_)(in[0], in[1]);
        for (std::size_t i = 2; i < e - b; i++)
            sum = (*op_)(sum, in[static_cast<D>(i)]);
        return sum;
    }

    It first_;
    Out d_first_;
    std::size_t n_;
    const Op *op_;
    std::size_t block_ = 0, blocks_ = 0;
    std::size_t front_share_ = 0; /* blocks below this are the caller's alone */
    std::atomic<std::uint64_t> claims_{0};
    std::vector<std::optional<T>> sums_; /* a back block's sum, then its start */
};

/* The checks both scans make, in one line; true when the scan can run. */
template <class It, class Out> constexpr bool scan_checks() {
    static_assert(is_random_access_v<It> && is_random_access_v<Out>,
                  "weft::inclusive_scan, weft::exclusive_scan: need random-access input and "
                  "output iterators (a std::vector's, an array's)");
    return is_random_access_v<It> && is_random_access_v<Out>;
}

/* Either scan from init (T: the running value's type): serial below
 * scan_cutoff, else the parallel one inside p. */
template <bool Inclusive, class It, class Out, class T, class Op>
Out scan_any(pool_ref p, It first, It last, Out d_first, const Op &op, T init) {
    if constexpr (scan_checks<It, Out>()) {
        auto n = static_cast<std::size_t>(last - first);
        if (n < scan_cutoff) {
            if constexpr (Inclusive)
                return std::inclusive_scan(first, last, d_first, op, std::move(init));
            else
                return std::exclusive_scan(first, last, d_first, std::move(init), op);
        }
        weft::run(p, [&] {
            scan<It, Out, T, Op, Inclusive> s(first, d_first, n, op);
            s.run(p.get(), std::move(init));
        });
        using D = typename std::iterator_traits<Out>::difference_type;
        return d_first + static_cast<D>(n);
    } else {
        return d_first;
    }
}

} // namespace detail

/* std::inclusive_scan in parallel inside pool p: d_first[i] = init op
 * first[0] op ... op first[i] (without init, first[0] op ... op first[i]),
 * op std::plus<>() unless given; returns d_first + (last - first). op must be
 * associative; it need not be commutative (elements are combined in their
 * order), and it is called concurrently through a const reference. The
 * running value has init's type, or the input's value type without init.
 * d_first may equal first (in place); otherwise the ranges must not overlap.
 * Random-access input and output iterators. Below some 30 000 elements, or
 * with no thread free to help, it is one serial pass; otherwise helpers
 * reduce blocks from the back while the caller scans from the front, and the
 * back part is scanned in parallel once they meet (with h helpers at most
 * h / (h + 1) of the input is read twice; the grouping of op varies between
 * runs, so a floating-point scan's last bits may). Allocates one value per 4096
 * elements. Threads and waiting as weft::run. If op throws, the work stops
 * early and the first exception is rethrown; the output is then partly
 * written. */
template <class It, class Out, class Op, class T,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out inclusive_scan(pool_ref p, It first, It last, Out d_first, const Op &op, T init) {
    return detail::scan_any<true>(p, first, last, d_first, op, std::move(init));
}
template <class It, class Out, class Op,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out inclusive_scan(pool_ref p, It first, It last, Out d_first, const Op &op) {
    if constexpr (detail::scan_checks<It, Out>()) {
        if (!(first < last))
            return d_first;
        /* The first element starts the running value; the rest is a scan
         * from it. */
        typename std::iterator_traits<It>::value_type init = *first;
        *d_first = init;
        return weft::inclusive_scan(p, first + 1, last, d_first + 1, op, std::move(init));
    } else {
        return d_first;
    }
}
template <class It, class Out,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out inclusive_scan(pool_ref p, It first, It last, Out d_first) {
    return weft::inclusive_scan(p, first, last, d_first, std::plus<>());
}
template <class It, class Out, class Op, class T,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out inclusive_scan(It first, It last, Out d_first, const Op &op, T init) {
    return weft::inclusive_scan(pool_ref(), first, last, d_first, op, std::move(init));
}
template <class It, class Out, class Op,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out inclusive_scan(It first, It last, Out d_first, const Op &op) {
    return weft::inclusive_scan(pool_ref(), first, last, d_first, op);
}
template <class It, class Out,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out inclusive_scan(It first, It last, Out d_first) {
    return weft::inclusive_scan(pool_ref(), first, last, d_first, std::plus<>());
}

/* std::exclusive_scan in parallel inside pool p: d_first[i] = init op
 * first[0] op ... op first[i - 1] (d_first[0] = init), op std::plus<>()
 * unless given; returns d_first + (last - first). The running value has
 * init's type. Everything else as weft::inclusive_scan (in place allowed:
 * each element is read before its output is written). */
template <class It, class Out, class T, class Op,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out exclusive_scan(pool_ref p, It first, It last, Out d_first, T init, const Op &op) {
    return detail::scan_any<false>(p, first, last, d_first, op, std::move(init));
}
template <class It, class Out, class T,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out exclusive_scan(pool_ref p, It first, It last, Out d_first, T init) {
    return weft::exclusive_scan(p, first, last, d_first, std::move(init), std::plus<>());
}
template <class It, class Out, class T, class Op,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out exclusive_scan(It first, It last, Out d_first, T init, const Op &op) {
    return weft::exclusive_scan(pool_ref(), first, last, d_first, std::move(init), op);
}
template <class It, class Out, class T,
          std::enable_if_t<detail::is_iterator_v<It> && detail::is_iterator_v<Out>, int> = 0>
Out exclusive_scan(It first, It last, Out d_first, T init) {
    return weft::exclusive_scan(pool_ref(), first, last, d_first, std::move(init), std::plus<>());
}

/* A parallel phase while the object lives (weft_phase_begin in the
 * constructor, weft_phase_end in the destructor or end()):
 *
 *   {
 *       weft::phase warm(pool); // wakes the workers now; they stay available
 *       for (auto &frame : frames)
 *           weft::parallel_for(pool, 0, frame.size(), [&](std::size_t i) { ... });
 *   } // the phase ends; idle workers return to the leave policy
 *
 * The pool is required (nullptr: the current pool, as in C), so that
 * `weft::phase(pool);` cannot silently declare a variable named pool. Give the
 * object a name: a temporary would end the phase at once. Move-only. An
 * active phase of a weft::pool holds a share of it (see weft::pool). */
class phase {
  public:
    /* fast_leave: what the destructor passes to weft_phase_end. */
    explicit phase(pool_ref p, bool fast_leave = false) noexcept
        : pool_(p.get()), share_(p.share()), fast_leave_(fast_leave), active_(true) {
        weft_phase_begin(pool_);
    }
    phase(phase &&other) noexcept
        : pool_(other.pool_), share_(std::move(other.share_)), fast_leave_(other.fast_leave_),
          active_(std::exchange(other.active_, false)) {}
    phase &operator=(phase &&) = delete;
    phase(const phase &) = delete;
    phase &operator=(const phase &) = delete;
    ~phase() {
        end(fast_leave_);
    }

    /* End the phase now (once; later calls and the destructor do nothing),
     * then let go of the pool. fast_leave: idle workers sleep at once until
     * new work arrives. */
    void end(bool fast_leave = false) noexcept {
        if (active_) {
            active_ = false;
            weft_phase_end(pool_, fast_leave);
            share_.reset();
        }
    }

  private:
    weft_pool *pool_;
    detail::pool_share share_;
    bool fast_leave_;
    bool active_;
};

/* weft_trace_name as a scope guard: the work the calling thread starts
 * while the object lives (runs, loops, scopes, spawns) carries name in the
 * trace, on every thread that runs it; the destructor sets back the name in
 * force before:
 *
 *   {
 *       weft::trace_name named("physics");
 *       weft::parallel_for(0, n, [&](std::size_t i) { step(i); });
 *   } // later work carries the outer name again
 *
 * name is not copied: a string literal, or a string that outlives every
 * trace that may record it (weft.h, weft_trace_name). Give the object a
 * name: a temporary would set the outer name back at once. It belongs to
 * the thread that made it, and is destroyed there: not movable. */
class trace_name {
  public:
    explicit trace_name(const char *name) noexcept : outer_(weft_trace_name(name)) {}
    trace_name(const trace_name &) = delete;
    trace_name &operator=(const trace_name &) = delete;
    ~trace_name() {
        weft_trace_name(outer_);
    }

  private:
    const char *outer_;
};

/* A blocking region (weft_blocking_begin/end) as a scope guard: the job
 * that makes one is about to block outside weft (a read, a lock, MPI), and
 * the pool runs its other work on a spare thread until the guard goes:
 *
 *   { weft::blocking_region blocking; n = read(fd, buf, size); }
 *
 * Throws std::system_error(EINVAL) outside a job. Belongs to the thread
 * that made it, and is destroyed there: not movable. */
class blocking_region {
  public:
    blocking_region() {
        int err = weft_blocking_begin();
        if (err)
            detail::throw_error(err, "weft_blocking_begin");
    }
    blocking_region(const blocking_region &) = delete;
    blocking_region &operator=(const blocking_region &) = delete;
    ~blocking_region() {
        weft_blocking_end();
    }
};

/* The running job, to suspend it until another thread resumes it, or to
 * hold its completion until events outside weft complete (weft.h, "Jobs
 * that wait"). A handle: copies name the same job, valid until it has
 * completed.
 *
 *   weft::task t = weft::task::self();
 *   start_io([t]() mutable { t.unblock(); });
 *   weft::task::block();
 */
class task {
  public:
    /* The calling thread's job; throws std::system_error(EINVAL) outside one. */
    static task self() {
        weft_task *t = weft_task_self();
        if (!t)
            detail::throw_error(EINVAL, "weft_task_self", "the calling thread runs no job");
        return task(t);
    }
    /* Suspend the calling job until an unblock (one that came first counts). */
    static void block() {
        int err = weft_task_block();
        if (err)
            detail::throw_error(err, "weft_task_block");
    }
    /* Resume the job, or give it the permit for its next block. Any thread. */
    void unblock() const noexcept {
        weft_task_unblock(t_);
    }
    /* Its completion waits for n more events; throws std::system_error
     * (EOVERFLOW) past UINT32_MAX outstanding. */
    void events_increase(unsigned n) const {
        int err = weft_task_events_increase(t_, n);
        if (err)
            detail::throw_error(err, "weft_task_events_increase");
    }
    /* n events completed; throws std::system_error(EINVAL) for more than are
     * outstanding. Any thread. */
    void events_decrease(unsigned n) const {
        int err = weft_task_events_decrease(t_, n);
        if (err)
            detail::throw_error(err, "weft_task_events_decrease");
    }
    weft_task *native() const noexcept {
        return t_;
    }

  private:
    explicit task(weft_task *t) noexcept : t_(t) {}
    weft_task *t_;
};

/* weft_scope_run with a lambda body:
 *
 *   weft::scope(pool, [&](weft::scope &s) { s.spawn([&] { ... }); });
 *
 * Constructing a scope runs body(*this) inside the pool and returns when the
 * body and every job spawned in the scope (transitively) have finished; the
 * scope object is the handle the body and its jobs spawn with. Use it as an
 * expression, as above. If the body or any job throws, the other jobs still
 * run to the end, and then the first exception is rethrown. */
class scope {
  public:
    template <class Body, std::enable_if_t<std::is_invocable_v<Body &, scope &>, int> = 0>
    scope(pool_ref p, Body &&body) {
        start<Body>(p, body);
    }
    template <class Body, std::enable_if_t<std::is_invocable_v<Body &, scope &>, int> = 0>
    explicit scope(Body &&body) {
        start<Body>(pool_ref(), body);
    }
    scope(const scope &) = delete;
    scope &operator=(const scope &) = delete;

    /* weft_scope_spawn: queue f() as a job of this scope. The body and the
     * scope's jobs may call it, from any thread, while the scope runs.
     *
     * f is moved (or copied) into storage that lives until the job has run:
     *  - if f is trivially copyable, pointer-sized, and cannot throw (a
     *    captureless noexcept lambda, [p]() noexcept {...}, std::ref(g) with
     *    a noexcept g), it is stored in the C job's void * argument: nothing
     *    is allocated beyond the C job, which comes from a free list;
     *  - otherwise it goes, with a pointer back to the scope for its
     *    exception, into one operator new block, freed by the job after f
     *    returned. To spawn a large callable without allocating, keep it in a
     *    frame that outlives the scope (the caller of weft::scope, not the
     *    body, whose frame ends before the jobs do) and spawn std::ref of it;
     *    its call must be noexcept.
     * Once the scope is cancelled (cancel() below), spawn queues nothing and
     * destroys f; a job queued before and not started by then never calls
     * f, but f is still destroyed.
     * Throws std::bad_alloc, or std::system_error(ENOMEM) from
     * weft_scope_spawn; either way nothing was queued. */
    template <class F> void spawn(F &&f) {
        submit(
            std::forward<F>(f),
            [this](weft_fn *fn, weft_fn *release, void *arg) {
                return weft_scope_spawn_release(scope_, fn, release, arg);
            },
            "weft_scope_spawn");
    }
    /* weft_scope_spawn_priority: the same at `priority` (spawn without one
     * uses the priority of the job that calls it). */
    template <class F> void spawn(weft_priority priority, F &&f) {
        submit(
            std::forward<F>(f),
            [this, priority](weft_fn *fn, weft_fn *release, void *arg) {
                return weft_scope_spawn_release_priority(scope_, fn, release, arg, priority);
            },
            "weft_scope_spawn_priority");
    }

    /* weft_scope_cancel: the scope's jobs that have not started never run
     * (their callables are destroyed), running ones may poll
     * weft::cancelled(), and groups nested in the scope are cancelled too.
     * Any thread, while the scope runs. */
    void cancel() noexcept {
        if (scope_)
            weft_scope_cancel(scope_);
    }

    /* The C handle, for weft_scope_spawn with a C function. */
    weft_scope *get() const noexcept {
        return scope_;
    }

  private:
    template <class F, class Submit> void submit(F &&f, Submit submit_c, const char *call) {
        using D = std::decay_t<F>;
        static_assert(std::is_invocable_v<D>, "weft::scope::spawn: f must be callable as f()");
        if constexpr (detail::fits_in_arg<D> &&
                      (detail::nothrow_call<D>::value || !WEFT_HPP_EXCEPTIONS)) {
            D d(std::forward<F>(f)); /* trivially destructible: nothing to release */
            int err = submit_c(&detail::call_unpacked<D>, nullptr, detail::pack(d));
            if (err && err != ECANCELED)
                detail::throw_error(err, call);
        } else {
            std::unique_ptr<job<D>> j(new job<D>{this, D(std::forward<F>(f))});
            int err = submit_c(&job<D>::trampoline, &job<D>::discard, j.get());
            if (err && err != ECANCELED) /* cancelled: j destroys the callable */
                detail::throw_error(err, call);
            if (!err)
                j.release(); /* the job frees it, run or skipped */
        }
    }

    template <class D> struct job {
        scope *owner;
        D fn;
        static void trampoline(void *arg) noexcept {
            std::unique_ptr<job> j(static_cast<job *>(arg));
            detail::guarded(j->owner->errors_, std::move(j->fn));
            /* j and the callable are destroyed here, before the scope can end. */
        }
        /* Skipped by a cancel: only destroyed, before the scope can end. */
        static void discard(void *arg) noexcept {
            delete static_cast<job *>(arg);
        }
    };

    template <class Body> struct start_args {
        scope *self;
        std::remove_reference_t<Body> *body;
        static void trampoline(weft_scope *s, void *arg) noexcept {
            auto *a = static_cast<start_args *>(arg);
            a->self->scope_ = s;
            detail::guarded(a->self->errors_, [a] { std::invoke(*a->body, *a->self); });
        }
    };
    template <class Body> void start(pool_ref p, std::remove_reference_t<Body> &body) {
        start_args<Body> a{this, &body};
        weft_scope_run(p.get(), &start_args<Body>::trampoline, &a);
        scope_ = nullptr;
        errors_.rethrow();
    }

    weft_scope *scope_ = nullptr;
    detail::first_error errors_;
};

/* weft_spawn: queue f() as a detached job of the pool (default: the calling
 * thread's own pool, else the default pool); the pool's destruction waits
 * for it. Storage as scope::spawn: in the
 * C job's argument when f is trivially copyable and pointer-sized, else one
 * operator new block freed after f returned. A detached job has nobody to
 * report to: an exception escaping f calls std::terminate (as std::thread).
 * Throws std::bad_alloc, or std::system_error with weft_spawn's errno value
 * (ENOMEM, EAGAIN, ESHUTDOWN from on_exit once destroy closed the pool);
 * either way nothing was queued. */
template <class F> void spawn(pool_ref p, F &&f) {
    detail::spawn_detached(
        std::forward<F>(f), [p](weft_fn *fn, void *arg) { return weft_spawn(p.get(), fn, arg); },
        "weft_spawn");
}
template <class F> void spawn(F &&f) {
    spawn(pool_ref(), std::forward<F>(f));
}
/* weft_spawn_priority: the same at `priority` (std::system_error(EINVAL)
 * for a value that is not a weft_priority). */
template <class F> void spawn(pool_ref p, weft_priority priority, F &&f) {
    detail::spawn_detached(
        std::forward<F>(f),
        [p, priority](weft_fn *fn, void *arg) {
            return weft_spawn_priority(p.get(), fn, arg, priority);
        },
        "weft_spawn_priority");
}

/* A context of the pool held by the calling thread while the object lives
 * (weft_context_acquire in the constructor, weft_context_release in the
 * destructor or release()): the thread's joins, loops, scopes, event waits and graph runs
 * then run their jobs on this thread while it waits, instead of blocking.
 * The pool needs config().contexts(n). Throws std::system_error: EINVAL (a
 * worker, or a thread that already holds a context), EBUSY (every context
 * is taken), EAGAIN (no default pool). Bound to its thread: neither copied
 * nor moved; release it on the thread that acquired it.
 *
 * A context of a weft::pool holds a share of it until released: the pool
 * lives at least as long, and if the context is its last owner, release()
 * (or the destructor) destroys it, on this thread (see weft::pool). */
class context {
  public:
    explicit context(pool_ref p) : share_(p.share()) {
        int err = weft_context_acquire(p.get(), &context_);
        if (err)
            detail::throw_error(err, "weft_context_acquire");
    }
    context(const context &) = delete;
    context &operator=(const context &) = delete;
    ~context() {
        release();
    }
    /* Run what is still queued on the context, then give it back (once),
     * then let go of the pool. */
    void release() noexcept {
        if (context_)
            weft_context_release(std::exchange(context_, nullptr));
        share_.reset();
    }
    weft_context *get() const noexcept {
        return context_;
    }

  private:
    detail::pool_share share_;
    weft_context *context_ = nullptr;
};

/* An event (weft_event_*): a dependency counter with a participating wait.
 *
 *   weft::event done(pool, 3);          // three dependencies
 *   done.then([&] { upload(frame); });  // follow-up, queued once set
 *   ... three jobs call done.signal() ...
 *   done.wait();                        // runs jobs until set
 *
 * Move-only; the destructor destroys the C event (no thread may still wait on
 * it; a signaller still finishing its signal() is fine). Follow-ups are
 * detached jobs (as weft::spawn: an exception escaping one terminates); those
 * of an event destroyed before it was set are discarded, never run.
 *
 * An event of a weft::pool holds a share of it: the pool lives at least as
 * long, and if the event is its last owner, the destructor destroys the C
 * event (discarding follow-ups if unset), then the pool, which waits for the
 * follow-ups already queued (see weft::pool). */
class event {
  public:
    event(pool_ref p, unsigned dependencies) : share_(p.share()) {
        int err = weft_event_create(&event_, p.get(), dependencies);
        if (err)
            detail::throw_error(err, "weft_event_create");
    }
    event(event &&other) noexcept
        : share_(std::move(other.share_)), event_(std::exchange(other.event_, nullptr)) {}
    event &operator=(event &&other) noexcept {
        if (this != &other) {
            reset();
            share_ = std::move(other.share_);
            event_ = std::exchange(other.event_, nullptr);
        }
        return *this;
    }
    event(const event &) = delete;
    event &operator=(const event &) = delete;
    ~event() {
        reset();
    }

    void signal() noexcept {
        weft_event_signal(event_);
    }
    bool is_set() const noexcept {
        return weft_event_is_set(event_);
    }
    void wait() const noexcept {
        weft_event_wait(event_);
    }
    template <class F> void then(F &&f) {
        detail::spawn_detached(
            std::forward<F>(f),
            [this](weft_fn *fn, void *arg) { return weft_event_then(event_, fn, arg); },
            "weft_event_then");
    }
    weft_event *get() const noexcept {
        return event_;
    }

  private:
    /* The C event before the pool: it may hold follow-ups counted in the
     * pool's pending work. */
    void reset() noexcept {
        weft_event_destroy(std::exchange(event_, nullptr));
        share_.reset();
    }

    detail::pool_share share_;
    weft_event *event_ = nullptr;
};

namespace detail {

/* What a graph's nodes share: the running run's first exception. */
struct graph_state {
    first_error errors;
    std::atomic<bool> running{false};
};

struct node_base {
    virtual ~node_base() = default;
};

/* A node's callable, owned by the graph; called once per run. */
template <class D> struct node_box : node_base {
    graph_state *state;
    D fn;
    node_box(graph_state *s, D &&f) : state(s), fn(std::move(f)) {}
    static void trampoline(void *self) noexcept {
        auto *n = static_cast<node_box *>(self);
        if (n->state->errors.failed()) /* a node threw: skip what has not started */
            return;
        guarded_cancel(n->state->errors, [n] { std::invoke(n->fn); });
    }
};

} // namespace detail

/* A task graph (weft_graph): nodes are callables, edges say which finish
 * before which; built once, run many times:
 *
 *   weft::graph frame;
 *   auto shadows = frame.add([&] { draw_shadows(scene); });
 *   auto opaque = frame.add([&] { draw_opaque(scene); });
 *   auto compose = frame.add([&] { composite(scene); });
 *   frame.edge(shadows, compose);
 *   frame.edge(opaque, compose);
 *   for (;;)
 *       frame.run(pool); // no allocation per run
 *
 * add() stores a copy of the callable (one allocation, at build time); each
 * run calls it once, never concurrently with itself, so it may be mutable.
 * Building (add, edge) and running follow weft.h's rules: no building during
 * a run, one run at a time. Move-only; a moved-from graph may only be
 * destroyed or assigned to. */
class graph {
  public:
    using node = weft_node *;

    /* weft_graph_create; std::system_error(ENOMEM). */
    graph() : state_(new detail::graph_state) {
        int err = weft_graph_create(&graph_);
        if (err)
            detail::throw_error(err, "weft_graph_create");
    }
    graph(graph &&other) noexcept
        : graph_(std::exchange(other.graph_, nullptr)), state_(std::move(other.state_)),
          nodes_(std::move(other.nodes_)) {}
    graph &operator=(graph &&other) noexcept {
        if (this != &other) {
            weft_graph_destroy(graph_);
            graph_ = std::exchange(other.graph_, nullptr);
            state_ = std::move(other.state_);
            nodes_ = std::move(other.nodes_);
        }
        return *this;
    }
    graph(const graph &) = delete;
    graph &operator=(const graph &) = delete;
    /* weft_graph_destroy, then the callables. Not during a run. */
    ~graph() {
        weft_graph_destroy(graph_);
    }

    /* weft_graph_add: a node that runs f(). Throws std::bad_alloc, or
     * std::system_error (EBUSY during a run, ENOMEM); nothing is added then. */
    template <class F> node add(F &&f) {
        using D = std::decay_t<F>;
        static_assert(std::is_invocable_v<D &>, "weft::graph::add: f must be callable as f()");
        auto box = std::make_unique<detail::node_box<D>>(state_.get(), D(std::forward<F>(f)));
        nodes_.reserve(nodes_.size() + 1); /* so that the push_back below cannot throw */
        weft_node *n;
        int err = weft_graph_add(graph_, &detail::node_box<D>::trampoline, box.get(), &n);
        if (err)
            detail::throw_error(err, "weft_graph_add");
        nodes_.push_back(std::move(box));
        return n;
    }

    /* weft_graph_edge: `after` runs only once `before` has finished. Throws
     * std::system_error (EINVAL, EBUSY, ENOMEM). */
    void edge(node before, node after) {
        int err = weft_graph_edge(graph_, before, after);
        if (err)
            detail::throw_error(err, "weft_graph_edge");
    }

    /* weft_graph_run: every node once, each after its predecessors, and
     * return when all have finished. If a node throws, nodes that have not
     * started are skipped and the first exception is rethrown after the run.
     * Returns true, or false when the run was cancelled (weft::cancel() from
     * a node, or a group around the run): nodes not started by then did not
     * run. Throws std::system_error: ELOOP (a cycle: nothing ran), EBUSY
     * (already running), ENOMEM. */
    bool run(pool_ref p = {}) {
        if (state_->running.exchange(true, std::memory_order_acquire))
            detail::throw_error(EBUSY, "weft_graph_run", "the graph is already running");
        state_->errors.reset();
        int err = weft_graph_run(graph_, p.get());
        state_->running.store(false, std::memory_order_release);
        state_->errors.rethrow();
        if (err && err != ECANCELED)
            detail::throw_error(err, "weft_graph_run");
        return err == 0;
    }

    weft_graph *get() const noexcept {
        return graph_;
    }

  private:
    weft_graph *graph_ = nullptr;
    std::unique_ptr<detail::graph_state> state_;
    std::vector<std::unique_ptr<detail::node_base>> nodes_;
};

} // namespace weft

#endif /* WEFT_HPP */
