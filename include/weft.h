/* SPDX-License-Identifier: MIT */
/* weft: a work-stealing task scheduler for C11 that sleeps well.
 *
 * One header, the whole public API. Every function documents which threads
 * may call it, whether it blocks or keeps running jobs while it waits, its
 * memory effect and its return values.
 *
 * Vocabulary:
 *  - a *pool* owns worker threads, each with its own deque of jobs;
 *  - a *worker* is one of those threads; any other thread is *outside*;
 *  - a call that *participates* keeps executing other jobs of the pool on the
 *    calling worker while it waits, so it never blocks a worker thread;
 *  - a call that *blocks* suspends the calling thread (on a futex) until done.
 *
 * A NULL pool argument means the calling thread's own pool (on a worker, on a
 * thread holding a context, or inside a call that holds a caller slot, see
 * weft_run), and the default pool on any other thread,
 * so library code can say "here" without knowing where it runs.
 *
 * Functions that can fail return 0 or a positive errno value; none of them
 * sets the global errno, and none aborts the process on a recoverable error.
 * weft_error_message() then says why, in words.
 *
 * Misuse that can be detected cheaply is answered, never a crash: a function
 * that returns int reports a NULL it cannot use, or an enum argument that is
 * not one of its enumerators, as EINVAL and does nothing; a function that
 * returns void does nothing in release builds (NDEBUG defined when weft was
 * built) and fails an assertion naming the function in debug builds. Each
 * function lists what it checks. Calling weft_pool_destroy twice on the same
 * pool is undefined, as is any use of a pool, event, graph or context after
 * it was destroyed or released (a dangling pointer cannot be detected
 * cheaply); every other misuse answers as documented.
 * Jobs must not unwind through weft (no longjmp out of a job, no C++
 * exception escaping a callback, no pthread_exit or thread cancellation
 * inside a job: jobs may run on the caller's own thread, see weft_run).
 *
 * fork(), as libgomp handles it. A child process starts without a default
 * pool: the first weft_pool_default (or NULL pool argument) there creates a
 * fresh one. A pool created before the fork (a *parent's pool*, including a
 * pointer to the parent's default pool kept from before) has no workers in
 * the child, and the child never runs a job queued in it nor waits for it:
 *  - calls that return an errno return ECHILD and do nothing: weft_spawn,
 *    weft_spawn_priority, weft_reduce, weft_graph_run, weft_event_create,
 *    weft_event_then (on an event of such a pool), weft_context_acquire,
 *    weft_trace_start, weft_trace_stop;
 *  - weft_run, weft_run_priority, weft_for and weft_scope_run run the work
 *    on the calling thread (scope spawns too), as when no default pool can
 *    be created, so they still return with the work done;
 *  - weft_broadcast, weft_phase_begin and weft_phase_end do nothing;
 *    weft_pool_threads and weft_pool_slots return 0, weft_pool_stats zeros;
 *  - a follow-up the parent registered on an event of such a pool runs on
 *    the thread whose signal sets the event;
 *  - weft_pool_destroy frees it at once and returns 0 (its queued jobs never
 *    run); the parent's default pool stays allocated, unused.
 * A child forked inside a job is an outside thread (weft_thread_index()
 * returns -1; NULL means its fresh default pool); it must not return from
 * that job, whose caller is the worker loop, or the weft_run, of a pool that
 * has no workers there: it exits or execs. A context the forking thread held stays with the
 * parent. weft installs pthread_atfork handlers for this when the first pool
 * is created; like libgomp it relies on the C library to make malloc and
 * pthread_create work in the child of a multi-threaded process (glibc does;
 * POSIX promises only async-signal-safe functions there).
 */
#ifndef WEFT_H
#define WEFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/version.h"

#if defined(_WIN32) && defined(WEFT_SHARED_BUILD)
#define WEFT_API __declspec(dllexport)
#elif defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version as "MAJOR.MINOR.PATCH"; compare it with the
 * WEFT_VERSION_* macros to detect a header/library mismatch.
 * Any thread. Never fails. */
WEFT_API const char *weft_version(void);

/* Why the last weft call that returned an errno value on this thread
 * failed, in words: "config.threads 100000 is above WEFT_THREADS_MAX 4096",
 * "the graph has a cycle through node 3". Every errno value that a function
 * of this header (or weft.hpp, through it) returns comes with a message,
 * set by the failing call on the thread it returns to, just before it
 * returns:
 *  EINVAL     the argument or config field by name, and for a number its
 *             value and the limit it broke;
 *  ENOMEM     what could not be allocated;
 *  EAGAIN     the worker thread that could not be created and the system's
 *             reason, or that the default pool could not be created and why;
 *  EBUSY      what holds the object: an acquired context, an unset event's
 *             follow-ups, every context slot taken, a run of the graph, a
 *             trace started or still being written;
 *  EDEADLK    how the caller would wait for itself;
 *  ELOOP      a node on the cycle, by its index (nodes are numbered from 0
 *             in the order weft_graph_add added them);
 *  ECANCELED  what was cancelled;
 *  ESHUTDOWN  that weft_pool_destroy has closed the pool;
 *  ECHILD     that the pool is a parent's pool in a fork child;
 *  the errno of a file (weft_trace_start, weft_trace_stop): the path or the
 *             step, and the system's words for the error.
 * weft_pool_default sets it too when it returns NULL, and so may a call
 * that returns no error because it runs the work on the calling thread
 * instead (weft_run, weft_for, ...: no default pool could be created, or
 * the pool is a parent's pool in a fork child).
 * A call that succeeds does not clear it (that would cost every call a
 * store), and may leave a message of a failure it got around: read it
 * right after the failing call, before the next weft call.
 * Never NULL: "" on a thread where no call has failed yet. The string
 * belongs to the calling thread, which alone sees it; it stays valid until
 * that thread exits, and its contents until the thread's next failing call
 * (copy it to keep it longer). At most 511 bytes: a longer message, one
 * quoting a long path, is cut. Any thread; never blocks, never fails. */
WEFT_API const char *weft_error_message(void);

/* A job: a function and the argument it is called with. */
typedef void weft_fn(void *arg);

typedef struct weft_pool weft_pool;

/* What an idle worker does when it finds no work.
 *  WEFT_LEAVE_AUTOMATIC: adaptive, with nothing to tune: an idle worker
 *    searches for at most about what a sleep and its wake-up would cost (it
 *    measures that), and not at all when its past searches cost more than
 *    they saved, so an idle pool burns no CPU once its work has stopped; a pool
 *    whose work returns regularly (parallel loops between serial code) keeps
 *    or brings back enough workers for it just before it returns, and one
 *    whose busy periods engage more workers than there are CPUs keeps its
 *    idle workers searching through them, as a sleep there saves no CPU.
 *    docs/sleep.md has the rules.
 *  WEFT_LEAVE_FAST: sleep after the first fruitless search; lowest CPU cost,
 *    a futex wake-up on the next job.
 * Parallel phases (weft_phase_begin) override both while they last. */
typedef enum { WEFT_LEAVE_AUTOMATIC = 0, WEFT_LEAVE_FAST } weft_leave;

/* The sleep protocol.
 *  WEFT_WAKE_TARGETED: a new job wakes one sleeper, and only when too few
 *    workers are searching; a finished job wakes only the thread waiting for
 *    it (docs/sleep.md).
 *  WEFT_WAKE_ALL: the legacy protocol: any new job or finished job wakes
 *    every sleeping worker. Kept so both can be measured side by side; its
 *    outside callers block by default, as legacy Rayon's (weft_config.callers). */
typedef enum { WEFT_WAKE_TARGETED = 0, WEFT_WAKE_ALL } weft_wake;

/* Parallel phases (oneTBB's parallel phase, in C): hints that parallel work
 * will keep coming for a while, so idle workers should stay available.
 *
 * weft_phase_begin: a warm-up: every sleeping worker of pool (NULL: the
 * current pool) is woken now, so the next parallel region starts without
 * wake-up latency. While at least one phase is active, idle workers keep
 * searching for work (backing off from pauses to yields) instead of sleeping,
 * for at most 10 ms with no work at all, after which they sleep anyway (a
 * forgotten end does not burn cores). Phases nest and may be begun and ended
 * concurrently from any threads: the pool counts them.
 *
 * weft_phase_end: ends one phase. When the last one ends, idle workers return
 * to the pool's leave policy, or, with fast_leave, sleep at once until new work
 * is submitted to the pool (a one-time fast leave: hand the cores to another
 * runtime right away). An end without a matching begin is ignored (it asserts
 * in debug builds). weft_pool_destroy ends every phase of its pool.
 *
 * Any thread, including the pool's own jobs. Never block; begin may wake
 * threads. Neither has a memory effect on user data. */
WEFT_API void weft_phase_begin(weft_pool *pool);
WEFT_API void weft_phase_end(weft_pool *pool, bool fast_leave);

/* The largest number of workers a pool may have. */
#define WEFT_THREADS_MAX 4096u

/* The default worker stack: 16 MiB of address space (only touched pages
 * cost memory). A worker that waits for a stolen job runs other jobs on top of
 * its stack, so nesting depth adds up. Measured with a one-line recursive
 * join (tests/test_join.c's nest): 16 MiB holds 80,000 nested weft_join frames
 * built with gcc 12 -O2 (90,000 overflow) and 30,000 under AddressSanitizer
 * (40,000 overflow). Deeper recursion needs a larger stack_size. */
#define WEFT_STACK_SIZE_DEFAULT ((size_t)16 << 20)

/* The default number of caller slots (weft_config.callers): enough for the
 * few threads of a program that call into one pool at once (a main loop, a
 * render thread, a request thread or two). A slot costs memory (two deques
 * and a sleep slot) and no time until a thread first takes it: workers look
 * for jobs only on the slots taken so far (and on those for good). */
#define WEFT_CALLERS_DEFAULT 8u

/* Spare threads a pool may add while its jobs block (weft_config.spares). */
#define WEFT_SPARES_DEFAULT 64u
#define WEFT_SPARES_NONE    0xffffffffu

/* Pool configuration. A zero-initialised struct means all defaults. */
typedef struct weft_config {
    unsigned threads;  /* 0: $WEFT_NUM_THREADS if it is a number from 1 to
                          WEFT_THREADS_MAX, else the CPUs this process may use:
                          the CPUs it may run on (sched_getaffinity), capped
                          on Linux by its cgroup v2 CPU quota (the least
                          cpu.max of its cgroup and its ancestors, rounded
                          up: 1.5 CPUs gives 2); any other non-empty value of
                          the variable is ignored with one line on stderr
                          (once per value) */
    unsigned contexts; /* context slots for non-worker threads
                          (weft_context_acquire); threads + contexts +
                          callers (below) must not exceed WEFT_THREADS_MAX */
    size_t stack_size; /* 0: WEFT_STACK_SIZE_DEFAULT; else at least 64 KiB */
    const char *name;  /* thread-name prefix, threads are "<name>-<index>"
                          (truncated to the OS limit); NULL: "weft" */
    weft_leave leave;  /* what idle workers do when they find no work */
    weft_wake wake;    /* sleep protocol */
    /* Run first on each worker, once every worker thread exists; the pool
       may be used from it (weft_pool_create waits for every on_start). A
       pool with on_start and callers 0 has no caller slots: its jobs may
       rely on what on_start set up on their thread (see callers). It runs
       after the worker's scheduling policy is chosen (weft_pool_create), so
       it may set another (pthread_setschedparam). */
    void (*on_start)(unsigned worker, void *user);
    /* Run last on each worker, while weft_pool_destroy stops it: the pool
       takes no new detached work then (weft_spawn, follow-ups and
       weft_broadcast answer ESHUTDOWN), but weft_run, weft_join and loops on
       the calling worker still run. */
    void (*on_exit)(unsigned worker, void *user);
    void *user; /* passed to on_start/on_exit */
    /* true: the pool's workers do not draw from the process's CPU budget
       (weft_set_concurrency below): for pools whose jobs block outside weft
       (on I/O, a lock, another thread), which would hold a slot of the budget
       while they wait. Such a pool's workers run beside the budget's. */
    bool outside_budget;
    /* Caller slots: how many outside threads at once run their own call into
       the pool on their thread (see weft_run). 0: WEFT_CALLERS_DEFAULT, or as
       many of them as WEFT_THREADS_MAX leaves room for; but none if on_start
       is set, whose work a job on a caller's thread would miss, or if wake
       is WEFT_WAKE_ALL, whose outside callers block as legacy Rayon's do
       (set callers to have either with slots). threads + contexts + callers
       must not exceed WEFT_THREADS_MAX. */
    unsigned callers;
    /* true: outside callers only wait, and every job runs on a thread of the
       pool (its workers'; contexts' and their own jobs excepted): for
       programs whose jobs need a pool thread. callers is then ignored. */
    bool callers_wait;
    /* Spare threads: the most threads the pool adds while its jobs block
       (weft_blocking_begin, weft_task_block, a job that waits for its
       events): one per job blocked, started on the first need and parked,
       costing no CPU, once no job needs it; each runs the pool's work like
       a worker meanwhile, at slot index threads + contexts + callers + i.
       0: WEFT_SPARES_DEFAULT, or as many of them as WEFT_THREADS_MAX leaves
       room for; but none if on_start is set (a spare runs on_start and
       on_exit with its index only if spares are set explicitly);
       WEFT_SPARES_NONE: none, a blocking job's thread is lost to the pool
       while it waits. threads + contexts + callers + spares must not
       exceed WEFT_THREADS_MAX. */
    unsigned spares;
} weft_config;

/* Create a pool and start its workers.
 * config may be NULL (all defaults); it is not referenced after the call
 * (name is copied).
 * Workers' scheduling: each inherits the creating thread's policy, and on
 * Linux a worker of a WEFT_WAKE_TARGETED pool that inherits the default one
 * (SCHED_OTHER) switches to SCHED_BATCH, with the same nice value, before
 * its on_start: a worker woken for work takes an idle CPU at once, but does
 * not preempt the thread running on a busy one on waking (it runs when that
 * thread's time slice ends), so posting work does not hand the poster's CPU
 * to a sleeper. Every other inherited policy stays as it is, SCHED_BATCH
 * from a creator that is itself a worker included. Threads and processes a
 * job creates inherit the worker's policy.
 * Any thread. Blocks while threads are created and until every worker's
 * on_start has returned.
 * Returns 0 and sets *pool, or:
 *  EINVAL  pool is NULL; threads, contexts or callers, or threads + contexts
 *          + callers, above WEFT_THREADS_MAX; stack_size nonzero and below 64 KiB; leave or
 *          wake not one of the enumerators;
 *  ENOMEM  out of memory;
 *  EAGAIN  the system could not create a thread.
 * On error nothing is left behind and *pool is unchanged; no on_start or
 * on_exit has run. */
WEFT_API int weft_pool_create(weft_pool **pool, const weft_config *config);

/* weft_pool_create for a config of config_size bytes. ABI growth: new fields
 * are only ever added at the end of weft_config, and the weft_pool_create macro
 * below passes the size of the weft_config the caller was compiled with, so a
 * program built against an older header never has the library read past its
 * struct: fields beyond config_size take their defaults. A config larger than
 * this library's (a program built against a newer header) is accepted if the
 * fields this library does not know are zero (their defaults), else EINVAL.
 * Otherwise as weft_pool_create; config_size is ignored when config is NULL. */
WEFT_API int weft_pool_create_sized(weft_pool **pool, const weft_config *config,
                                    size_t config_size);
/* Variadic, so that a compound literal's commas (&(weft_config){.threads = 2,
 * .leave = ...}) stay one argument. */
#define weft_pool_create(pool, ...)                                                                \
    weft_pool_create_sized((pool), (__VA_ARGS__), sizeof(weft_config))

/* Finish every job queued or spawned in the pool (including jobs those jobs
 * spawn, and follow-ups of events already set), wait for every call into the
 * pool that other threads started before (weft_run and what goes through it,
 * weft_broadcast, weft_trace_stop) to return, stop the workers, join them and
 * free the pool.
 * Any thread except the pool's own workers. Other threads must not start a
 * submission to the pool, or a weft_pool_stats of it, concurrently with or
 * after this call (a call is
 * started once it is under way: a thread that signals "about to call" and
 * then calls races destroy), and a call destroy waits for must not wait for
 * destroy; jobs running inside the pool
 * may still spawn: that work is finished too. Once the pool's work has
 * drained, the pool is closed: a submission after that point (from on_exit)
 * answers ESHUTDOWN, and a weft_run runs its function on the calling thread.
 * Blocks.
 * Memory: everything the pool's jobs wrote is visible when it returns.
 * In a fork child, a parent's pool is freed without running its jobs or
 * waiting for anything (see fork() above), and the call returns 0.
 * Calling it again on a pool it destroyed is undefined.
 * Returns 0, or (nothing destroyed, the pool works on):
 *  EINVAL   pool is NULL or the default pool (which lives until exit; in a
 *           fork child, also the parent's default pool);
 *  EDEADLK  called from a job running in this pool, or from a thread of a
 *           pool that is doing work a job of this pool waits for (weft_run,
 *           weft_broadcast and what goes through them, across any number of
 *           pools): destroy would wait for its own caller;
 *  EBUSY    a context of the pool is still acquired, or an event of the pool
 *           that is not set holds follow-ups (weft_event_then): set or
 *           destroy the event first. */
WEFT_API int weft_pool_destroy(weft_pool *pool);

/* The process-wide default pool: created with default settings on first use
 * (thread-safe), lives until the process exits. A fork child gets a fresh one
 * on its first use (see fork() above). Any thread. Returns NULL only if it
 * could not be created (out of memory or threads); later calls try again.
 * Its workers run weft's code until exit, so on Linux its creation marks the
 * shared object holding that code (libweft.so, or a plugin with libweft.a
 * inside) as one no dlclose unmaps (docs/guide.md, "Plugins"). */
WEFT_API weft_pool *weft_pool_default(void);

/* Number of workers in pool (NULL: the current pool). Any thread. */
WEFT_API unsigned weft_pool_threads(const weft_pool *pool);

/* The largest CPU budget. */
#define WEFT_CONCURRENCY_MAX 4096u

/* The CPU budget: one limit, for the whole process, on the workers of all
 * pools that run jobs or search for them at once, so that a program's pools,
 * and those its libraries create, do not together oversubscribe the machine
 * (oneTBB's global_control::max_allowed_parallelism).
 *
 * The default budget, the CPUs this process may use (as threads = 0 counts
 * them, without $WEFT_NUM_THREADS), binds while two or more pools draw from
 * it: a pool alone runs as many workers as it was given. A budget set with
 * weft_set_concurrency binds always, one pool or many.
 *
 * A worker runs or searches only while it holds one of max_running slots. It
 * gives its slot back whenever it sleeps, including when a wait of its job
 * (weft_join, weft_run, a scope, a loop, an event wait, ...) has nothing left
 * to run and sleeps, and waits for a slot when it wakes: so a pool whose work
 * is waiting on another pool's hands its slots to that pool. Waiting workers
 * get freed slots in the order they asked, except that a worker whose job's
 * wait is over, or whose pool has high-priority work queued, goes first. A
 * worker that has held its slot for 50 ms hands it, between two jobs, to a
 * waiting worker of another pool (or one that goes first) and waits for the
 * next behind the others, so a pool with a stream of jobs does not starve
 * the others; not when the wait it ran those jobs in is over, since what
 * it goes back to is its own job's continuation. Threads outside the pools,
 * including contexts and callers that take part in their own call
 * (weft_run), hold no slot: a weft_run from outside does not count. Pools
 * created with outside_budget draw no slots.
 *
 * A job that blocks outside weft (reads a socket, takes a mutex, spins on a
 * flag another job sets) keeps its slot while it waits, and a job that runs
 * for long keeps it until it returns: with max_running such jobs running,
 * the budgeted workers of every pool wait too. Run such jobs in a pool with
 * outside_budget, or raise the budget.
 *
 * weft_set_concurrency sets the budget to max_running slots; 0 restores the
 * default. A raised budget takes effect at once; a lowered one, or the
 * default one when a second pool starts, as the workers holding slots sleep
 * or hand them over (none is stopped). Any thread, any time, also before any
 * pool exists. Returns 0, or EINVAL if max_running is above
 * WEFT_CONCURRENCY_MAX (the budget is unchanged).
 * weft_concurrency returns the budget. Any thread. */
WEFT_API int weft_set_concurrency(unsigned max_running);
WEFT_API unsigned weft_concurrency(void);

/* What a pool did since it was created. jobs and steals count every thread
 * that runs the pool's jobs: its workers, and the threads outside it that
 * take part in their own work (contexts, and callers in caller slots: see
 * weft_run), so that a frame loop's main thread has its share counted, and
 * the counts do not depend on whether a caller took part or waited. The
 * other fields describe the workers alone: what the pool's own threads cost
 * (a context or caller is the program's thread, busy with its own call).
 * What counts as one job: the function of a weft_run that enters the pool
 * from outside (run in a caller slot or injected; not a weft_run on a
 * thread of the pool, worker or context, whose function runs as part of the
 * running code), each weft_join's second half (whether it ran inline or was
 * stolen; so a loop of n pieces with grain g > 0 counts n - 1, plus its
 * root from outside), each typed task's forked call, and each job queued
 * in the pool (detached, a scope's, an event's follow-up, a graph's node
 * that was queued rather than run next on its predecessor's thread). */
typedef struct weft_stats {
    uint64_t jobs;           /* jobs executed, by workers, contexts and callers; a
                                join's b (or typed fork) that its own thread ran
                                after a, never shared, is a call, not a job */
    uint64_t steals;         /* jobs taken from another thread's deque (a context's
                                or caller's take-back of its own job included) */
    uint64_t injected;       /* jobs workers took from the injector (outside
                                submissions that did not run in a caller slot) */
    uint64_t sleeps;         /* times a worker fell asleep */
    uint64_t wakeups;        /* times a worker was woken */
    uint64_t futile_wakeups; /* woken, then fell asleep again without running a job */
    double busy_seconds;     /* workers running jobs (their lifetime minus the two
                                below); contexts and callers not included */
    double search_seconds;   /* workers looking for work after a fruitless search */
    double sleep_seconds;    /* workers blocked */
    uint64_t early_wakeups;  /* of wakeups: a worker woke itself just before the
                                pool's work was due to return (WEFT_LEAVE_AUTOMATIC,
                                regular gaps between parallel work) */
    uint64_t forced_steals;  /* of steals: jobs a worker pushed and then, running
                                one job for long, left unshared while others
                                idled; an idle worker took them (costs a
                                process-wide barrier each) */
    uint64_t caller_jobs;    /* of jobs: run by contexts and callers on their own
                                threads */
} weft_stats;

/* Fill *stats for pool (NULL: the current pool; all zero if none can be
 * created). Any thread, at any time until weft_pool_destroy(pool) is
 * called, and during that call from the pool's own jobs and on_exit hooks
 * (destroy waits for them); a call from another thread must not overlap
 * the destroy, which frees the pool (as a submission must not). Never
 * blocks. The counters are per worker and read without stopping the workers:
 * the snapshot is approximate while the pool runs, exact once it is idle.
 * Cost to the workers: a plain add (no locked instruction) per job and event,
 * a clock read per change between running, searching and sleeping; not
 * measurable on fib with a join at every node (docs/performance.md).
 * A NULL stats does nothing (asserts in debug builds). */
WEFT_API void weft_pool_stats(const weft_pool *pool, weft_stats *stats);

/* weft_pool_stats for a weft_stats of stats_size bytes: writes exactly that
 * many (fields this library does not know, in a larger struct, read 0). The
 * weft_pool_stats macro passes sizeof(weft_stats) as the caller's header has
 * it, so weft_stats may grow at its end without breaking older programs. */
WEFT_API void weft_pool_stats_sized(const weft_pool *pool, weft_stats *stats, size_t stats_size);
#define weft_pool_stats(pool, ...) weft_pool_stats_sized((pool), (__VA_ARGS__), sizeof(weft_stats))

/* Timeline tracing. weft_trace_start makes pool (NULL: the current pool)
 * record, per worker, when it runs jobs, searches and sleeps, and who woke
 * whom; weft_trace_stop writes it to path as Chrome trace-event JSON (open it
 * in Perfetto or chrome://tracing; weft-trace2svg draws an SVG): one
 * track per worker ("worker i") with non-overlapping "running", "searching"
 * and "sleeping" slices (the state is the slice's category, "cat"; a running
 * slice's name is its job's name, weft_trace_name, or "running"), wake-ups as
 * flow arrows; a track per context ("context i") and caller slot ("caller
 * i") that took part while tracing, with its running slices (its own call's
 * code and the jobs it ran) and "waiting" ones (nothing of its own left to
 * run: what it waits for runs on workers); and a track "outside" for the
 * wake-ups by other threads (short "submit" slices). With WEFT_TRACE=path in the
 * environment every pool traces from creation to destruction (the default
 * pool until exit; later pools write path.1, path.2, ...; a fork child's
 * pools write path.PID, path.PID.1, ..., PID being the child's); a file that
 * cannot be created is reported by one line on stderr (once per value of
 * WEFT_TRACE) naming the variable and the error, and the pool runs untraced.
 * Recording costs workers one flag load per state change when off, and
 * one when a stolen or queued job starts. While on, a context or caller
 * records its events under a lock of the pool's tracing (uncontended but
 * by the stop and by other such threads). Spare threads (weft_config.spares)
 * record nothing. Any thread; stop waits until every worker has handed its
 * events over (between two jobs, a blocked one's once it runs on), so call
 * it outside the pool's jobs.
 * weft_trace_start creates (or truncates) the file at once and keeps it open
 * until stop writes it. It returns 0, or:
 *  EINVAL  path is NULL;
 *  EBUSY   the pool is already tracing, or a stop of its trace is still
 *          writing the file (path is not touched either way);
 *  ENOMEM  out of memory;
 *  EAGAIN  pool is NULL and no default pool could be created;
 *  ECHILD  pool is a parent's pool in a fork child;
 *  or the errno of creating the file (ENOENT, ENOTDIR, EACCES, EISDIR,
 *  EROFS, ENAMETOOLONG, EMFILE, ...): nothing is created and the pool does
 *  not trace.
 * weft_trace_stop returns 0, EINVAL (not tracing: also while another stop,
 * which turned it off, still writes the file), EAGAIN (no default pool),
 * ECHILD (a parent's pool in a fork child), or the errno of writing the file
 * (EIO when the stream does not tell which); tracing stops either way. */
WEFT_API int weft_trace_start(weft_pool *pool, const char *path);
WEFT_API int weft_trace_stop(weft_pool *pool);

/* Name work for the trace: set the name in force on the calling thread to
 * name (NULL: none) and return the one it replaces, for the caller to set
 * back when its named work is done:
 *
 *     const char *outer = weft_trace_name("physics");
 *     weft_for(NULL, 0, n, 0, step, world);    // its slices say "physics"
 *     weft_trace_name(outer);
 *
 * (weft.hpp's weft::trace_name does both, as a scope guard). The calls the
 * thread makes under a name give their work that name, on every thread
 * that runs it: weft_run and everything run through it (weft_for, weft_for_2d,
 * weft_reduce, weft_sort, weft_scope_run, weft_graph_run, weft_run_cancellable,
 * a weft_join or typed task from outside a pool), and the jobs it queues
 * (weft_spawn, weft_scope_spawn, weft_event_then: named when queued). What
 * named work forks or starts inside carries the name in turn, unless it
 * names its own: nested names replace outer ones, never add to them. A
 * weft_join or typed fork on a thread of a pool is part of the job that
 * forks it and carries that job's name: set a name before a call, not
 * before a join. Running slices of named work are named for it in the
 * trace (the name is the slice's name; its state, "running", its category);
 * work named by no one carries none ("running").
 *
 * The string is not copied: the trace keeps the pointer and reads it when
 * the trace is written, so it must stay valid and unchanged until every
 * trace that may have recorded it is written (weft_trace_stop, or the
 * pool's destroy, has returned): a string literal, or another string of
 * static storage duration. Names are compared by pointer: two equal
 * strings at different addresses are two names.
 *
 * Any thread, any time, with or without a pool and whether or not a pool
 * traces. Costs nothing while no name is set but a thread-local load in
 * weft_run and a word stored in each queued job; the fork's fast path
 * (weft_join, typed tasks) is unchanged. A job that sets a name sets the
 * outer one back before it returns, or later jobs of its thread start
 * their calls under it. Never fails. */
WEFT_API const char *weft_trace_name(const char *name);

/* The calling thread's index in its pool: 0..threads-1 on a worker,
 * threads + i on a thread holding context i, threads + contexts + i on an
 * outside thread inside a call that took caller slot i (weft_run),
 * threads + contexts + callers + i on spare thread i (weft_config.spares),
 * -1 on any other thread. Below weft_pool_slots(). Any thread. */
WEFT_API int weft_thread_index(void);

/* Run fn(arg) inside pool (NULL: the current pool) and return when it has
 * finished, at normal priority from outside, at the caller's priority from a
 * worker.
 *  - outside any pool (a thread that is no worker and holds no context):
 *    fn runs on the calling thread, which for the length of the call is a
 *    member of the pool in a caller slot, like a context (see
 *    weft_context_acquire): what fn forks (joins, loops, scopes, graphs) is
 *    pushed on the slot's queues, idle workers take from them, and while it
 *    waits the caller runs its own jobs and takes back what a worker
 *    running one of them shares of it (what that job forks), never another
 *    call's jobs or injected ones. So jobs of fn's tree may run on the
 *    caller, where the
 *    pool's on_start has not run, weft_thread_index() returns threads +
 *    contexts + i, and no slot of the CPU budget is held. When every caller
 *    slot is taken, or the pool has none (callers_wait, or an on_start and
 *    no callers: see weft_config), the job is injected and the caller
 *    blocks until a worker has run it. Inside the
 *    call the thread counts as holding a context (weft_context_acquire
 *    answers EINVAL, weft_pool_destroy of the pool EDEADLK);
 *  - on a worker of pool: fn runs at once on this thread;
 *  - on a worker of another pool: the job is injected into pool and the
 *    caller participates in its own pool until fn has finished.
 * Any thread. Memory: everything before the call is visible to fn, and
 * everything fn wrote is visible after the call returns.
 * If the default pool cannot be created, or pool is a parent's pool in a fork
 * child, or weft_pool_destroy has closed pool (a call from a job that on_exit
 * waits for, see on_exit), fn runs on the calling thread.
 * A NULL fn does nothing (asserts in debug builds). */
WEFT_API void weft_run(weft_pool *pool, weft_fn *fn, void *arg);

/* Run a(a_arg) and b(b_arg), potentially in parallel, and return when both
 * have finished. On a worker: b waits in the caller's frame, where an idle
 * worker can take it (docs/sleep.md, "Join frames"), a runs at once on this
 * thread, then b runs here too unless it was taken, in which case the caller
 * participates until it has finished. Allocates nothing. Outside any pool: runs
 * on the default pool as weft_run does (the caller takes part).
 * Any thread. Memory: as weft_run, for both functions.
 * If a or b is NULL neither runs (asserts in debug builds).
 * A wait inside a (weft_event_wait, a scope's or loop's end, weft_run into
 * another pool) that finds nothing else of its thread's own to run runs b
 * itself, if nobody took it: a wait never depends on another thread for
 * work its own thread forked, so a may wait for what b does, whatever the
 * other workers run. Hence b must not wait for what a does after such a
 * wait: on one thread that is a cycle (as in oneTBB and Rayon, whose waits
 * also run their own queued work).
 * In C11 with gcc or clang, weft_join is an inline function (weft/join.h)
 * whose fast path runs in the caller with direct calls to a and b; define
 * WEFT_NO_INLINE_JOIN before including weft.h, or write (weft_join)(...), to
 * call this function instead. Both run one protocol and may be mixed. */
WEFT_API void weft_join(weft_fn *a, void *a_arg, weft_fn *b, void *b_arg);

/* Typed tasks, for C11 and C++ with gcc or clang (weft/join.h): joins
 * whose arguments and result stay in registers on the fast path, and whose
 * worker is passed from call to call instead of read from thread-local
 * storage, as Lace's tasks do. At file (or namespace) scope,
 *
 *     WEFT_TASK(R, name, A, a) { body }      defines R name(A a)
 *     WEFT_VOID_TASK(name, A, a) { body }    defines void name(A a)
 *     WEFT_TASK(R, name, A1, a1, A2, a2)     R name(A1 a1, A2 a2): one to
 *                                            six arguments, in pairs
 *
 * (WEFT_TASK_DECL(R, name, A1, ...) and WEFT_VOID_TASK_DECL(name, A1, ...),
 * with the types alone, declare one for use before its definition, which is
 * then WEFT_TASK_DEF(R, name, A1, a1, ...) or WEFT_VOID_TASK_DEF(name, A1,
 * a1, ...)). Each argument is a parameter of its own, in a register where
 * the ABI has one (a struct of more than 16 bytes would go through memory
 * at every call). name is a static function callable from anywhere: on a worker or
 * context of a pool it runs on the calling thread in that pool; elsewhere
 * it runs on the default pool, as weft_run does (the caller takes part),
 * or on the calling thread if no pool can run it. Inside a task's body,
 * and only there:
 *
 *     WEFT_JOIN(a, f, (x...), b, g, (y...));
 *                                 a = f(x...) here while g(y...) is offered
 *                                 to idle workers, then b = g(y...): called
 *                                 here unless a worker took it, in which
 *                                 case the caller participates until that
 *                                 worker is done; the y... are evaluated
 *                                 first. WEFT_JOIN_VOID(f, (x...), g, (y...))
 *                                 for two void tasks.
 *
 * is weft_join of the two calls, and the join to pick: its frame ends before
 * g's inline call, so with gcc a recursion through g compiles to a loop, as
 * Lace's does (docs/performance.md, "Typed tasks"). Where forks must stay
 * open across more code, or a result is void on one side only:
 *
 *     WEFT_FORK(other, t, x...);  declares t and offers other(x...) to idle
 *                                 workers, as weft_join offers its b;
 *     WEFT_CALL(other, x...)      other(x...), here, passing the worker on;
 *     WEFT_SYNC(other, t)         other(x)'s result: called here unless a
 *                                 worker took it, in which case the caller
 *                                 participates until that worker is done.
 *
 * So  WEFT_FORK(fib, t, n - 1); long k = WEFT_CALL(fib, n - 2);
 *     return WEFT_SYNC(fib, t) + k;
 * is weft_join of the two calls. Several forks may be open at once; each is
 * synced exactly once, in the reverse order of the forks, before the body
 * that forked it returns (t is the body's stack frame, linked from the
 * worker until its sync: returning or jumping out before it is undefined
 * behaviour). The x... are copied (moved, in C++) into t at the fork and read by whoever runs it;
 * the result is returned by value. Everything weft_join says of b holds for
 * the forked call (and WEFT_JOIN's g): its group, priority and cancellation are the forking
 * job's, a wait between fork and sync runs it itself if nobody took it (so
 * the forked call must not wait for what the forker does after such a
 * wait), and memory is as weft_join's. Allocates nothing.
 *
 * In C++ the task's entry and body are noexcept: an exception that would
 * leave a body calls std::terminate (its frames are linked from the worker,
 * and a thief runs it from C). Catch inside the body, or use weft::join,
 * which carries exceptions; built with -fno-exceptions, nothing enforces
 * this, so keep exceptions from other code out of the body. Each argument
 * and the result may be of any type that is default-constructible and
 * movable (a std::unique_ptr too; not a reference: pass a pointer): they
 * are moved into the frame and out of it, by a thief too. A task's types
 * are private to its file, as its functions are. */

/* Queue fn(arg) to run in pool (NULL: the current pool) without waiting for
 * it. On a worker of pool the job goes to that worker's deque, elsewhere to
 * the pool's injector. weft_pool_destroy finishes it before returning.
 * Any thread (see weft_pool_destroy for the shutdown rule). Never blocks.
 * Memory: everything before the call is visible to fn.
 * Returns 0 (the job will run), or:
 *  EINVAL    fn is NULL;
 *  ENOMEM    out of memory (the job is not queued);
 *  EAGAIN    the default pool could not be created;
 *  ESHUTDOWN weft_pool_destroy has closed the pool (from on_exit);
 *  ECHILD    pool is a parent's pool in a fork child (see fork() above). */
WEFT_API int weft_spawn(weft_pool *pool, weft_fn *fn, void *arg);

/* Priorities (a context-based job system's). Every worker (and the injector) keeps a high and a
 * normal queue; a worker looking for work takes high-priority jobs first,
 * from its own queue, by stealing, and from the injector, before any normal
 * one. Priority is inherited: the jobs a job forks (join halves, loop pieces,
 * scope spawns without a priority, graph nodes, event follow-ups queued from
 * it) get its priority, so weft_run_priority gives a whole loop or graph a
 * priority. Running jobs are never preempted: a high-priority job waits at
 * most for one running job to finish on some worker, where each piece of a
 * normal weft_for or weft_reduce (a call of its function) counts as a job:
 * a worker running such a loop looks between its pieces and runs waiting
 * high-priority jobs there, nested on its stack, with the loop's rest
 * offered to other threads meanwhile. So a high-priority job must not wait
 * for a normal loop's call to return (it may run inside that loop); waiting
 * for what the loop's pieces do (an event they signal) is fine: the wait
 * runs the pieces its thread holds. */
typedef enum { WEFT_PRIORITY_NORMAL = 0, WEFT_PRIORITY_HIGH } weft_priority;

/* weft_spawn at a priority. Returns as weft_spawn, and EINVAL for a priority
 * that is not one of the enumerators. */
WEFT_API int weft_spawn_priority(weft_pool *pool, weft_fn *fn, void *arg, weft_priority priority);

/* weft_run at a priority: fn, and everything it forks, runs at `priority`
 * (on a worker of pool, fn runs at once, its forks at that priority).
 * Threads, waiting and memory: as weft_run.
 * Returns 0 once fn has finished, or:
 *  EINVAL  fn is NULL, or priority is not one of the enumerators: nothing
 *          runs, and a worker's own priority is unchanged.
 * Callers written when it returned void still compile. */
WEFT_API int weft_run_priority(weft_pool *pool, weft_fn *fn, void *arg, weft_priority priority);

typedef struct weft_scope weft_scope;

/* Run body(scope, arg) inside pool (NULL: the current pool) and return when
 * body and every job spawned in the scope (transitively) have finished.
 * Scopes nest. Where it runs and how the caller waits: as weft_run.
 * Any thread. Memory: everything the body and its jobs wrote is visible after
 * the call returns. A NULL body does nothing (asserts in debug builds). */
WEFT_API void weft_scope_run(weft_pool *pool, void (*body)(weft_scope *scope, void *arg),
                             void *arg);

/* Queue fn(arg) as part of scope. May be called by the body and by jobs of
 * the scope, from any thread, while the scope is running. Never blocks.
 * Memory: everything before the call is visible to fn.
 * Returns 0, or:
 *  EINVAL     scope or fn is NULL;
 *  ECANCELED  the scope (or a group around it) was cancelled: nothing is
 *             queued, and arg is still the caller's;
 *  ENOMEM     out of memory (the job is not queued; the scope still ends).
 * A job queued before the scope was cancelled and not started by then never
 * runs (see cancellation below): if fn owns arg, spawn it with
 * weft_scope_spawn_release. */
WEFT_API int weft_scope_spawn(weft_scope *scope, weft_fn *fn, void *arg);

/* weft_scope_spawn at a priority (weft_scope_spawn uses the priority of the
 * job that calls it). EINVAL also for an unknown priority. */
WEFT_API int weft_scope_spawn_priority(weft_scope *scope, weft_fn *fn, void *arg,
                                       weft_priority priority);

/* weft_scope_spawn for a job that owns arg: if the scope is cancelled before
 * fn starts, release(arg) is called instead (on a thread of the pool, before
 * the scope ends), so exactly one of fn(arg) and release(arg) runs for every
 * job queued. release may be NULL (then it is weft_scope_spawn). Returns as
 * weft_scope_spawn; on an error neither function is called. */
WEFT_API int weft_scope_spawn_release(weft_scope *scope, weft_fn *fn, weft_fn *release, void *arg);

/* weft_scope_spawn_release at a priority. EINVAL also for an unknown
 * priority. */
WEFT_API int weft_scope_spawn_release_priority(weft_scope *scope, weft_fn *fn, weft_fn *release,
                                               void *arg, weft_priority priority);

/* ---- Cancellation ------------------------------------------------------------
 * A scope, a weft_for, a weft_reduce and a run of a graph are each a group of
 * jobs that can be cancelled as a whole; a group started by a job of another
 * group nests in it (also across pools). Cancelling a group:
 *  - skips every job of it that has not started: scope jobs, loop pieces
 *    (which neither split nor call the body; a piece already running calls
 *    it for no further step, a 2-D loop for no further block), graph
 *    nodes. They never run;
 *    their memory is released (weft_scope_spawn_release's release runs);
 *  - lets jobs that are running finish; they may poll weft_cancelled() and
 *    stop early. weft_join's two halves always both run: they are the running
 *    job's own code;
 *  - cancels every group nested in it, including those started later;
 *  - is final: a group is never un-cancelled (a graph's next run is a new
 *    group).
 * The group's waiter returns as usual once nothing of it runs:
 * weft_scope_run and weft_for return; weft_reduce returns ECANCELED and leaves
 * the result untouched; weft_graph_run returns ECANCELED.
 * Detached jobs (weft_spawn, weft_event_then) and broadcasts belong to no
 * group. Cancelling is not a synchronisation: what a job wrote before it
 * cancelled is visible to the group's waiter, as every job's writes are, but
 * not to other jobs through the cancel. Cancelling costs an atomic store;
 * groups that nobody cancels cost a load where a job or piece starts, and
 * every weft_join records its group in the half it offers (a load and a
 * store). */

/* Cancel scope. Any thread (a job of the scope, its body, a thread outside the
 * pool), while the scope runs; more than once is harmless. A NULL scope does
 * nothing (asserts in debug builds). */
WEFT_API void weft_scope_cancel(weft_scope *scope);

/* From a job: cancel the innermost scope, loop, reduction or graph run the
 * running job belongs to (a scope's body belongs to its scope, a loop body to
 * its loop). Outside every group (a detached job, a thread outside the pools)
 * it does nothing. */
WEFT_API void weft_cancel(void);

/* From a job: has the innermost group it belongs to, or a group around it,
 * been cancelled? false outside every group. A relaxed load per group level:
 * cheap enough to poll in a loop body. */
WEFT_API bool weft_cancelled(void);

/* A cancel source: a handle the caller owns, which outlives the work, for
 * cancelling it from any thread at any time (a watchdog that cancels a slow
 * request, a shutdown that cancels every request at once): oneTBB's
 * task_group_context, C++'s std::stop_source. Work runs under it through
 * weft_run_cancellable, as a group nested in the caller's: cancelling the
 * source cancels that group, and so every scope, loop, reduction and graph
 * run the work starts, whenever they start. Any number of runs, on any
 * pools and threads, may share a source. */
typedef struct weft_cancel_source weft_cancel_source;

/* Create a source, not cancelled. Any thread. 0, EINVAL (source NULL) or
 * ENOMEM. */
WEFT_API int weft_cancel_source_create(weft_cancel_source **source);

/* Free it: only once no thread may use it any more (every run under it has
 * returned and every canceller is done). NULL does nothing. */
WEFT_API void weft_cancel_source_destroy(weft_cancel_source *source);

/* Cancel every run under source: running, later ones (which then skip fn
 * and return ECANCELED) and what they started. Any thread, at any time
 * between create and destroy, concurrently with anything but destroy; more
 * than once is harmless. Final until weft_cancel_source_reset. An atomic
 * store; not a synchronisation (as weft_scope_cancel). NULL does nothing. */
WEFT_API void weft_cancel_source_cancel(weft_cancel_source *source);

/* Has source been cancelled (and not reset since)? Any thread. false for
 * NULL. */
WEFT_API bool weft_cancel_source_cancelled(const weft_cancel_source *source);

/* Make source usable for new runs: not cancelled. Only while no run is
 * under it and no other thread may cancel it (a cancel racing the reset
 * may land before or after it). NULL does nothing. */
WEFT_API void weft_cancel_source_reset(weft_cancel_source *source);

/* weft_run(pool, fn, arg) under source: fn runs in a new group, nested in
 * the caller's group and under source, unless source (or a group around
 * the caller) is already cancelled, when fn does not run at all. Threads,
 * waiting and memory as weft_run. Returns once fn has returned (or was
 * skipped):
 *  0          nothing cancelled the run;
 *  ECANCELED  source, a weft_cancel of fn's own, or a group around the
 *             caller cancelled the run before it returned (a cancel too late
 *             to skip anything counts too, as in weft_reduce): fn may not
 *             have run, or not to its end;
 *  EINVAL     source or fn is NULL: nothing runs;
 *  ECHILD     pool is a parent's pool in a fork child: nothing runs.
 * Where no pool can run it, fn runs on the calling thread, and only a
 * cancel before it starts reaches it. */
WEFT_API int weft_run_cancellable(weft_pool *pool, weft_cancel_source *source, weft_fn *fn,
                                  void *arg);

/* Run fn(index, arg) exactly once on every worker of pool (NULL: the current
 * pool), index being the worker's weft_thread_index(), and return when all
 * have run. Workers run it between jobs (a worker busy with a long job runs
 * it when that job ends or waits; one whose job is blocked, when the job
 * runs on); sleeping workers are woken; spare threads run none. Allocates
 * nothing. Any thread; from a worker of pool the caller participates (and
 * runs its own share), elsewhere it blocks. Memory: as
 * weft_run, for every run of fn.
 * Returns 0 (fn ran on every worker), or, with nothing run:
 *  EINVAL    fn is NULL;
 *  EAGAIN    the default pool could not be created;
 *  ESHUTDOWN weft_pool_destroy is stopping the pool's workers (on_exit);
 *  ECHILD    pool is a parent's pool in a fork child. */
WEFT_API int weft_broadcast(weft_pool *pool, void (*fn)(unsigned index, void *arg), void *arg);

/* ---- Contexts: threads outside the pool that take part in their own work -- */

typedef struct weft_context weft_context;

/* Make the calling thread a participant of pool (NULL: the current pool)
 * until weft_context_release: weft_join, weft_for, weft_scope_run,
 * weft_event_wait and weft_graph_run called by it push their jobs on the
 * context's queues and run them on this thread while it waits; idle workers
 * may take them, and while it waits the context takes back what a worker
 * running one of them shares of it (what that job forks), but it never runs
 * another thread's workload. So a job of its workload runs on this thread or
 * on a worker, never on another context or caller, and when every worker is
 * busy the context runs its whole workload itself without blocking (it
 * blocks only when all that is left of it runs on workers and they share
 * none of it). weft_thread_index() returns
 * threads + i. Detached jobs it spawns go to the pool's injector.
 * Any thread that is not a worker and holds no context.
 * Returns 0 and sets *context, or EINVAL (context NULL, or the caller is a
 * worker or holds a context), EBUSY (all config.contexts slots are taken),
 * EAGAIN (no default pool), ECHILD (a parent's pool in a fork child). */
WEFT_API int weft_context_acquire(weft_pool *pool, weft_context **context);

/* Run what is still queued on the context, then give it back. The thread that
 * acquired it only; it is a plain outside thread again afterwards. A NULL
 * context, or one the calling thread does not hold, is left alone (asserts in
 * debug builds). */
WEFT_API void weft_context_release(weft_context *context);

/* threads + contexts + callers + spares (weft_config): the size of an array indexed
 * by weft_thread_index() for per-thread data, which two threads never use at
 * once. NULL: the current pool. */
WEFT_API unsigned weft_pool_slots(const weft_pool *pool);

/* A loop body: handle indices [begin, end). */
typedef void weft_range_fn(size_t begin, size_t end, void *arg);

/* Call body on disjoint pieces covering [begin, end) exactly once, in
 * parallel, and return when all have finished (nothing is called if
 * begin >= end).
 *  grain 0: adaptive: a few pieces per thread that takes part (the
 *    workers, and the caller when it takes part), split further where a
 *    piece was stolen; a piece runs in steps of at most an eighth of it
 *    and a 128th of the range (body is called once a step), and when a
 *    thread out of work asks the thread running the piece for more, the
 *    piece's rest splits for threads out of work to take, so uneven
 *    indices and a thread that falls behind balance out
 *    (load balancing without per-index overhead; near the loop's end a step
 *    may be a few indices: give a grain if each call of body costs much);
 *    a call of body on 4096 indices or more ends on a multiple of 64 (or
 *    at end), so on an array that starts a cache line (64 bytes) the call
 *    after it starts one too;
 *  grain g > 0: halves are split until a piece is shorter than 2*g, so no
 *    piece is shorter than g (unless the whole range is) and the pieces are
 *    the same on every run.
 * Where it runs and how the caller waits: as weft_run (on a worker of pool,
 * the caller participates). Any thread. Memory: as weft_run.
 * A NULL body does nothing, even for a non-empty range (asserts in debug
 * builds). */
WEFT_API void weft_for(weft_pool *pool, size_t begin, size_t end, size_t grain, weft_range_fn *body,
                       void *arg);

/* A 2-D loop body: handle the block of rows [r0, r1) and columns [c0, c1). */
typedef void weft_block_fn(size_t r0, size_t r1, size_t c0, size_t c1, void *arg);

/* Call body on disjoint blocks that tile the rectangle of rows [r_begin,
 * r_end) and columns [c_begin, c_end) exactly once, in parallel, and return
 * when all have finished (nothing is called if either range is empty).
 *  r_grain, c_grain: a block's rows and columns: g > 0 cuts that dimension
 *    into blocks of g (the last may be shorter), the same on every run; 0
 *    leaves it to weft: about 16 blocks a thread, square where both are 0
 *    and the rectangle allows (an image row of 4 pixels is cut across it).
 * Blocks are handed out in Z order (quadrants of quadrants), so a thread's
 * consecutive blocks are neighbours both ways and a stolen half of the
 * loop is a half of the rectangle, as oneTBB's blocked_range2d splits. The
 * loop is a weft_for over the blocks: the same adaptive splitting,
 * cancellation group (weft_cancel in body skips the blocks not started),
 * priority (a high-priority job waits for one block), threads, waiting and
 * memory. A NULL body does nothing, even for a non-empty rectangle
 * (asserts in debug builds). */
WEFT_API void weft_for_2d(weft_pool *pool, size_t r_begin, size_t r_end, size_t c_begin,
                          size_t c_end, size_t r_grain, size_t c_grain, weft_block_fn *body,
                          void *arg);

/* A parallel reduction over [begin, end): each leaf piece gets an
 * accumulator set to the identity by init and folds its indices into it with
 * fold, in one call or (grain 0) several, for consecutive ranges in index
 * order; pieces are then combined with combine(acc, rhs), acc holding the
 * lower indices, so combine must be associative but need not be commutative.
 * size is the accumulator's size in bytes (accumulators up to 256 bytes live
 * on the stack; larger ones are allocated). arg is passed to every callback.
 * Callbacks run concurrently on different accumulators. */
typedef struct weft_reducer {
    size_t size;                        /* bytes of one accumulator */
    void (*init)(void *acc, void *arg); /* identity */
    void (*fold)(size_t begin, size_t end, void *acc, void *arg);
    void (*combine)(void *acc, const void *rhs, void *arg); /* acc = acc (+) rhs */
    void *arg;
} weft_reducer;

/* Reduce [begin, end) with reducer inside pool (NULL: the current pool) and
 * copy the result (size bytes) to result. grain as weft_for: with grain > 0
 * the pieces, and so the order and grouping of every combine, depend only on
 * begin, end and grain: a floating-point reduction gives the same bits on every
 * run and every thread count. An empty range gives init's identity (in a
 * cancelled group: ECANCELED, below, as a non-empty one). Where it
 * runs and how the caller waits: as weft_for. Any thread.
 * Returns 0, or:
 *  EINVAL  reducer, result or a callback is NULL, or size is 0;
 *  ENOMEM     an accumulator could not be allocated (result is untouched);
 *  ECANCELED  the reduction, or a group around it, was cancelled before it
 *             returned (result is untouched; see cancellation above);
 *  ECHILD     pool is a parent's pool in a fork child (result is untouched). */
WEFT_API int weft_reduce(weft_pool *pool, size_t begin, size_t end, size_t grain,
                         const weft_reducer *reducer, void *result);

/* ---- Sorting ---------------------------------------------------------------- */

/* Sort the array base[0, n) of elements of `size` bytes into the order cmp
 * gives, as qsort does, in parallel inside pool (NULL: the current pool):
 * cmp(a, b) returns a negative number, 0 or a positive number as the element
 * at a orders before, with, or after the one at b, a total order as qsort
 * requires. A parallel quicksort: pieces above a few thousand elements are
 * partitioned around a pivot and their two sides forked (weft_join); the
 * partitions compare a block of elements at a time and branch on no
 * compare's outcome; keys equal to an earlier pivot are set aside in one
 * pass (an all-equal array: about 2n compares); a badly split piece is heap
 * sorted, so n log n compares at worst, also for sorted and reverse-sorted
 * arrays. With a cmp that is no total order the array ends in some order,
 * and nothing outside it is read or written. Not stable (equal elements may
 * change order, as with qsort). In place:
 * allocates nothing, any size. cmp is called concurrently from several
 * threads, on elements of the array; it must not modify them. Where it
 * runs and how the caller waits: as weft_run (on a worker of pool, the
 * caller participates); an array of a few thousand elements or fewer is
 * sorted on the calling thread. Any thread. Memory: as weft_run: the sorted
 * array is visible to the caller once the call returns.
 * The sort belongs to the caller's cancellation group (weft_join's halves
 * do): if that group, or one around it, is cancelled (weft_cancel from cmp,
 * weft_scope_cancel, a cancel source), the pieces not started are skipped.
 * Returns 0, or:
 *  EINVAL     base is NULL with n > 0, size is 0, cmp is NULL, or n * size
 *             overflows: nothing is touched;
 *  ECANCELED  the caller's group was cancelled before the call returned: the
 *             array holds its elements in some order, not necessarily
 *             sorted. */
WEFT_API int weft_sort(weft_pool *pool, void *base, size_t n, size_t size,
                       int (*cmp)(const void *a, const void *b));

/* weft_sort with a comparison function that takes a context: cmp(a, b, arg)
 * (the argument order of glibc's qsort_r and C11's qsort_s), for an order
 * that depends on other data (indices sorted by the keys they point at)
 * without a global. Everything else as weft_sort. */
WEFT_API int weft_sort_r(weft_pool *pool, void *base, size_t n, size_t size,
                         int (*cmp)(const void *a, const void *b, void *arg), void *arg);

/* ---- Events: a dependency counter with a participating wait --------------- */

typedef struct weft_event weft_event;

/* Create an event of pool (NULL: the current pool) that is set once
 * `dependencies` signals have arrived (0: set at once). Any thread.
 * Returns 0 and sets *event, or EINVAL (event NULL), EAGAIN (no default
 * pool), ECHILD (a parent's pool in a fork child), ENOMEM. */
WEFT_API int weft_event_create(weft_event **event, weft_pool *pool, unsigned dependencies);

/* Meet one dependency; the last one sets the event: its waiters return and
 * its follow-ups are queued. Any thread, concurrently with everything but
 * weft_event_destroy. Never blocks. Memory: everything a signaller wrote
 * before signalling is visible to waiters after they return and to the
 * follow-ups. Signalling more often than the event has dependencies is an
 * error: debug builds assert, release builds ignore the extra signals. So is
 * a NULL event (does nothing; asserts in debug builds). */
WEFT_API void weft_event_signal(weft_event *event);

/* Has the last dependency been met? Any thread; never blocks. True means the
 * signallers' writes are visible to the caller. A NULL event is never set
 * (false; asserts in debug builds). */
WEFT_API bool weft_event_is_set(const weft_event *event);

/* Return once the event is set. On a worker the caller keeps running jobs of
 * its pool, its own first (the b of a weft_join it waits inside included),
 * and sleeps only when there is nothing to run; it is then woken by the last
 * signal itself (not by every event). On a thread holding a context or
 * inside a call that holds a caller slot (weft_run), it runs its own jobs
 * (those b included) first. Elsewhere it blocks. Any
 * thread, any number of threads at once. Memory: as weft_event_signal.
 * A NULL event returns at once (asserts in debug builds). */
WEFT_API void weft_event_wait(weft_event *event);

/* Run fn(arg) in the event's pool once the event is set (queued at once if it
 * already is). Follow-ups are detached jobs of the pool: weft_pool_destroy
 * waits for them; while one is queued on an event that is not set, destroy
 * answers EBUSY. Any thread. Returns 0 (it will run once the event is set, or
 * is discarded with an event destroyed unset), EINVAL (event or fn NULL),
 * ENOMEM (nothing queued), ESHUTDOWN (weft_pool_destroy has closed the
 * pool), ECHILD (the event's pool is a parent's pool in a fork child;
 * follow-ups registered in the parent run on the setting signaller). */
WEFT_API int weft_event_then(weft_event *event, weft_fn *fn, void *arg);

/* Free the event. No thread may wait on it or use it concurrently or after.
 * Follow-ups of an event that was never set are discarded (never run).
 * NULL does nothing, as free(NULL) does (not an error). */
WEFT_API void weft_event_destroy(weft_event *event);

/* ---- Jobs that wait: blocking regions, suspended jobs, external events ----
 * A job that blocks outside weft (a read, a lock, MPI_Recv, a GPU stream's
 * sync) keeps its thread, and weft's participating waits cannot run other
 * jobs on it meanwhile. These calls say so, and the pool runs its other
 * work on a spare thread (weft_config.spares) for as long as the job
 * blocks: one spare per job blocked, started the first time it is needed,
 * parked again (no CPU) once the job runs on. A budgeted pool's job gives
 * its CPU slot (weft_set_concurrency) back while it blocks and takes one
 * again, before other waiters, when it runs on; the spare takes the slot
 * meanwhile. With every spare in use (or WEFT_SPARES_NONE) a blocking job
 * still works; the pool only runs its other work on fewer threads.
 *
 * "A job" here is whatever runs as one: a function given to weft_run, a
 * spawned or scoped job, a graph node, the second half of a weft_join that
 * another thread took; a weft_join's halves run by the thread that forked
 * them belong to the job that forked them. */

/* The calling job is about to block outside weft: let the pool run its other
 * work on a spare thread meanwhile, and make its jobs that nobody has taken
 * yet (the second halves of its joins) available to the spare. Regions nest
 * (only the outermost counts). Calls into weft inside the region work but,
 * in a budgeted pool, without a CPU slot. Returns 0, or EINVAL: the calling
 * thread runs no job of a pool (an outside thread, a thread holding a
 * context outside a job, a worker's on_start). */
WEFT_API int weft_blocking_begin(void);

/* The end of the calling job's blocking region (weft_blocking_begin
 * returned 0): the job runs on, and the spare goes back once it ends the job
 * it runs. Does nothing on a thread not inside a region. */
WEFT_API void weft_blocking_end(void);

/* A running job, for another thread to resume it or complete its events.
 * Valid from weft_task_self until the job has completed: returned and, with
 * events, seen its count fall to zero. */
typedef struct weft_task weft_task;

/* The job the calling thread runs (the innermost one, where a participating
 * wait runs jobs inside another), or NULL outside a job. */
WEFT_API weft_task *weft_task_self(void);

/* Suspend the calling job until weft_task_unblock(weft_task_self()): its
 * thread sleeps inside a blocking region (a spare runs the pool's work), and
 * no other job runs on it meanwhile. An unblock that came first is not lost:
 * the job has one permit, set by an unblock and spent by a block, so a block
 * after an unblock returns at once (two unblocks before a block still give
 * one permit). Returns 0, or EINVAL outside a job. */
WEFT_API int weft_task_block(void);

/* Resume task, blocked in weft_task_block, or give it the permit for its next
 * block. Any thread. Returns 0, or EINVAL (task NULL). */
WEFT_API int weft_task_unblock(weft_task *task);

/* task's completion (what waits for it: its join, scope, weft_run, graph,
 * pool's drain) also waits for n more events, each completed by
 * weft_task_events_decrease: for work the job starts and something outside
 * weft finishes (an MPI request, a GPU callback, an event loop). When the
 * job returns with events outstanding, its thread waits for them in a
 * blocking region. Any thread, while the job runs or has events
 * outstanding. Returns 0, or EINVAL (task NULL), EOVERFLOW (more than
 * UINT32_MAX events outstanding). n 0 does nothing. */
WEFT_API int weft_task_events_increase(weft_task *task, unsigned n);

/* n of task's events completed: the last one, once the job has returned,
 * completes the job. Any thread. Returns 0, or EINVAL (task NULL, or n above
 * the events outstanding: nothing is changed). */
WEFT_API int weft_task_events_decrease(weft_task *task, unsigned n);

/* ---- Task graphs: built once, run many times ------------------------------- */

typedef struct weft_graph weft_graph;
typedef struct weft_node weft_node;

/* Create an empty graph. Any thread. 0, EINVAL (graph NULL) or ENOMEM. */
WEFT_API int weft_graph_create(weft_graph **graph);

/* Add a node that runs fn(arg); *node identifies it for weft_graph_edge and
 * stays valid until the graph is destroyed. Not concurrently with another
 * call on the same graph. 0, EINVAL (a NULL argument), EBUSY (the graph is
 * running), ENOMEM. */
WEFT_API int weft_graph_add(weft_graph *graph, weft_fn *fn, void *arg, weft_node **node);

/* Make `after` run only once `before` has finished, in every run. Both must
 * be nodes of graph. Not concurrently with another call on the same graph.
 * 0, EINVAL (a NULL argument, or a node of another graph), EBUSY (running),
 * ENOMEM. */
WEFT_API int weft_graph_edge(weft_graph *graph, weft_node *before, weft_node *after);

/* Run every node once in pool (NULL: the current pool), each after all its
 * predecessors, independent nodes in parallel, and return when all have
 * finished. A run allocates nothing (the first after a change allocates for
 * the cycle check). Where it runs and how the caller waits: as weft_run (a
 * worker participates). Any thread; one run of a graph at a time. Memory:
 * everything a node wrote is visible to its successors and, after the call,
 * to the caller. Returns 0, or EINVAL (graph NULL), ELOOP (the graph has a
 * cycle: nothing ran), EBUSY (the graph is already running), ENOMEM, ECHILD
 * (pool is a parent's pool in a fork child: nothing ran), ECANCELED (a node
 * called weft_cancel, or a group around the run was cancelled: the nodes not
 * started by then did not run; the next run starts afresh; a graph of no
 * nodes run in a cancelled group answers it too). */
WEFT_API int weft_graph_run(weft_graph *graph, weft_pool *pool);

/* Free the graph and its nodes. Not while it runs. NULL does nothing, as
 * free(NULL) does (not an error). */
WEFT_API void weft_graph_destroy(weft_graph *graph);

#ifdef __cplusplus
}
#endif

#include "weft/join.h" /* weft_join's fast path, inline in C */

#endif /* WEFT_H */
