/* SPDX-License-Identifier: MIT */
/* tbb.cpp: the oneTBB peer. Forks are task_group run + wait (fib, msort,
 * jobs); n-queens is parallel_reduce over the candidates with a
 * simple_partitioner (one placement per leaf, split in halves, the same tree
 * as the other systems); loops are parallel_for (auto_partitioner for the
 * loop workload, simple_partitioner with grain 1 for pieces of one index);
 * sort and scan are tbb::parallel_sort and tbb::parallel_scan.
 * All of it runs in a task_arena of `threads` slots, entered from outside with
 * execute(); the caller takes one slot, so `threads` threads work, as with the
 * other systems.
 *  - sporadic: task_arena::enqueue from the outside thread, into an arena
 *    with no slot reserved for it, so `threads` workers serve the jobs.
 *  - roundtrip: task_arena::execute of an empty functor. execute() runs the
 *    functor on the calling thread once it has joined the arena; no worker
 *    wakes up. It is TBB's "run this in the pool and wait", but cheaper by
 *    construction than handing a job to a worker (weft_run, rayon install).
 * The global thread count is raised with global_control so that an arena of
 * 8 gets 8 threads on a 2-core machine, as the other systems' pools do.
 */
#include "bench.h"

#include <functional>
#include <new>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <memory>
#include <vector>

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_scan.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

namespace {

using indices = tbb::blocked_range<size_t>;

} // namespace

struct bench_pool {
    tbb::global_control workers;
    tbb::task_arena arena;
    /* High-priority jobs (the priority workload): an arena of priority high
     * beside the normal one, sharing the same workers. */
    tbb::task_arena high;

    bench_pool(unsigned threads, unsigned flags)
        : workers(tbb::global_control::max_allowed_parallelism, threads + 1),
          arena((int)threads, (flags & BENCH_POOL_SUBMIT) ? 0 : 1),
          high((int)threads, 0, tbb::task_arena::priority::high) {
        arena.initialize();
    }
};

namespace {

bench_pool *create(const bench_system *, unsigned threads, unsigned flags) {
    bench_pool *pool = new (std::nothrow) bench_pool(threads, flags);
    if (!pool)
        bench_die("tbb arena", "out of memory");
    return pool;
}

void destroy(bench_pool *pool) {
    delete pool;
}

long fib_rec(int n) {
    if (n < 2)
        return n;
    long x, y;
    tbb::task_group g;
    g.run([&x, n] { x = fib_rec(n - 1); });
    y = fib_rec(n - 2);
    g.wait();
    return x + y;
}

long fib(bench_pool *pool, int n) {
    long r = 0;
    pool->arena.execute([&r, n] { r = fib_rec(n); });
    return r;
}

void loop(bench_pool *pool, int *a, size_t n) {
    pool->arena.execute([a, n] {
        tbb::parallel_for(
            indices(0, n), [a](const indices &r) { bench_loop_kernel(a, r.begin(), r.end()); },
            tbb::auto_partitioner());
    });
}

void range(bench_pool *pool, size_t n, bench_range_fn *fn, void *arg) {
    pool->arena.execute([=] {
        tbb::parallel_for(
            indices(0, n), [=](const indices &r) { fn(r.begin(), r.end(), arg); },
            tbb::auto_partitioner());
    });
}

/* Solutions below board s: one placement per leaf of the reduction. */
long nq_board(const bench_nq *s) {
    return tbb::parallel_reduce(
        tbb::blocked_range<int>(0, s->ncand, 1), 0L,
        [s](const tbb::blocked_range<int> &r, long acc) {
            for (int i = r.begin(); i < r.end(); i++)
                acc += bench_nq_place(s, i, nq_board);
            return acc;
        },
        std::plus<long>(), tbb::simple_partitioner());
}

long nqueens(bench_pool *pool, int n) {
    bench_nq root;
    bench_nq_root(&root, n);
    long r = 0;
    if (root.ncand > 0)
        pool->arena.execute([&r, &root] { r = nq_board(&root); });
    return r;
}

void ms_rec(int *a, int *tmp, size_t n, size_t cutoff) {
    if (n <= cutoff) {
        bench_msort_leaf(a, tmp, n);
        return;
    }
    size_t h = n / 2;
    tbb::task_group g;
    g.run([=] { ms_rec(a, tmp, h, cutoff); });
    ms_rec(a + h, tmp + h, n - h, cutoff);
    g.wait();
    bench_merge(a, h, n, tmp);
}

void msort(bench_pool *pool, int *a, int *tmp, size_t n, size_t cutoff) {
    pool->arena.execute([=] { ms_rec(a, tmp, n, cutoff); });
}

void pieces(bench_pool *pool, size_t n, bench_piece_fn *fn, void *arg) {
    pool->arena.execute([=] {
        tbb::parallel_for(
            indices(0, n, 1),
            [=](const indices &r) {
                for (size_t i = r.begin(); i < r.end(); i++)
                    fn(i, arg);
            },
            tbb::simple_partitioner());
    });
}

void jobs(bench_pool *pool, size_t n, bench_piece_fn *fn, void *arg) {
    pool->arena.execute([=] {
        tbb::task_group g;
        for (size_t i = 0; i < n; i++)
            g.run([=] { fn(i, arg); });
        g.wait();
    });
}

void submit(bench_pool *pool, bench_job_fn *fn, void *arg) {
    pool->arena.enqueue([=] { fn(arg); });
}

void roundtrip(bench_pool *pool) {
    pool->arena.execute([] {});
}

void submit_high(bench_pool *pool, bench_job_fn *fn, void *arg) {
    pool->high.enqueue([fn, arg] { fn(arg); });
}

/* A flow graph of continue_nodes: each fires once all its predecessors have. */
void graph(bench_pool *pool, int shape, size_t n, bench_piece_fn *fn, void *arg, unsigned runs) {
    using node = tbb::flow::continue_node<tbb::flow::continue_msg>;
    pool->arena.execute([&] {
        tbb::flow::graph g;
        std::vector<std::unique_ptr<node>> nodes;
        for (size_t i = 0; i < n; i++)
            nodes.emplace_back(
                new node(g, [fn, arg, i](const tbb::flow::continue_msg &) { fn(i, arg); }));
        for (size_t i = 1; i < n; i++) {
            if (shape == BENCH_GRAPH_DEEP) {
                tbb::flow::make_edge(*nodes[i - 1], *nodes[i]);
            } else if (i + 1 < n) {
                tbb::flow::make_edge(*nodes[0], *nodes[i]);
                tbb::flow::make_edge(*nodes[i], *nodes[n - 1]);
            }
        }
        for (unsigned r = 0; r < runs; r++) {
            nodes[0]->try_put(tbb::flow::continue_msg());
            g.wait_for_all();
        }
    });
}

/* The algorithms: tbb::parallel_sort, and tbb::parallel_scan with its
 * functional form (a body that pre-scans or final-scans a range, and a
 * combine), the loop split on is_final so that the pre-scan writes nothing. */
void sort(bench_pool *pool, uint64_t *a, size_t n) {
    pool->arena.execute([=] { tbb::parallel_sort(a, a + n); });
}

void scan(bench_pool *pool, const uint64_t *in, uint64_t *out, size_t n) {
    pool->arena.execute([=] {
        tbb::parallel_scan(
            indices(0, n), uint64_t(0),
            [=](const indices &r, uint64_t sum, bool is_final) {
                if (is_final) {
                    for (size_t i = r.begin(); i < r.end(); i++)
                        out[i] = sum += in[i];
                } else {
                    for (size_t i = r.begin(); i < r.end(); i++)
                        sum += in[i];
                }
                return sum;
            },
            std::plus<uint64_t>());
    });
}

const bench_system tbb_system = {.name = "tbb",
                                 .variant = 0,
                                 .hidden = 0,
                                 .one_caller = 0,
                                 BENCH_SYSTEM_COMMON,
                                 .jobs = jobs,
                                 .outside = nullptr,
                                 .submit = submit,
                                 .roundtrip = roundtrip,
                                 .submit_high = submit_high,
                                 .graph = graph,
                                 .range = range,
                                 .pi = nullptr, /* Lace's suite: weft and Lace only */
                                 .knapsack = nullptr,
                                 .uts = nullptr,
                                 .sort = sort,
                                 .scan = scan,
                                 .blocking_begin = nullptr, /* a blocked job holds its worker */
                                 .blocking_end = nullptr};

} // namespace

const bench_system *bench_system_get(unsigned i) {
    return i == 0 ? &tbb_system : nullptr;
}
