/* SPDX-License-Identifier: MIT */
/* sys_weft.c: weft through its public API only (include/weft.h), in four
 * configurations: wake protocol {targeted, all} x leave policy {automatic,
 * fast}, and hidden ones run by name (inside a phase; callers that wait).
 * Every fork is a weft_join (no serial cutoff beyond the workload's
 * own), and in "weft-task" a typed join (WEFT_TASK); loops are weft_for; detached jobs are
 * weft_spawn from the outside thread; a round trip is weft_run. */
#include "bench.h"

#include <stdatomic.h>
#include <weft.h>

/* bench_system.variant bits. PHASE: the whole run inside weft_phase_begin.
 * CALLERS_WAIT: the outside caller only waits (weft_config.callers_wait), as
 * every outside caller did before caller slots. */
enum { WAKE_ALL = 1, LEAVE_FAST = 2, PHASE = 4, CALLERS_WAIT = 8 };

/* `threads` threads run jobs (bench.h), as in the peers: OpenMP's and
 * oneTBB's calling thread is one of theirs. A weft caller takes part in its
 * own call (a caller slot), so the pool has one worker fewer, unless the
 * caller only waits (CALLERS_WAIT; WEFT_WAKE_ALL, whose pools have no caller
 * slots by default) or the workload's submitter does not call in
 * (BENCH_POOL_SUBMIT). A pool has at least one worker: at one thread, the
 * caller waits while it works. */
static bench_pool *create(const bench_system *sys, unsigned threads, unsigned flags) {
    bool takes_part = !(sys->variant & (CALLERS_WAIT | WAKE_ALL)) && !(flags & BENCH_POOL_SUBMIT);
    weft_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.threads = takes_part && threads > 1 ? threads - 1 : threads;
    cfg.name = "bench";
    cfg.wake = sys->variant & WAKE_ALL ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED;
    cfg.leave = sys->variant & LEAVE_FAST ? WEFT_LEAVE_FAST : WEFT_LEAVE_AUTOMATIC;
    cfg.callers_wait = (sys->variant & CALLERS_WAIT) || (takes_part && threads == 1);
    weft_pool *pool;
    int err = weft_pool_create(&pool, &cfg);
    if (err)
        bench_die("weft_pool_create", strerror(err));
    if (sys->variant & PHASE)
        weft_phase_begin(pool); /* weft_pool_destroy ends it */
    return (bench_pool *)pool;
}

static void destroy(bench_pool *pool) {
    int err = weft_pool_destroy((weft_pool *)pool);
    if (err)
        bench_die("weft_pool_destroy", strerror(err));
}

typedef struct fib_frame {
    int n;
    long r;
} fib_frame;

static void fib_job(void *arg) {
    fib_frame *f = arg;
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    fib_frame a = {f->n - 1, 0}, b = {f->n - 2, 0};
    weft_join(fib_job, &a, fib_job, &b);
    f->r = a.r + b.r;
}

static long fib(bench_pool *pool, int n) {
    fib_frame f = {n, 0};
    weft_run((weft_pool *)pool, fib_job, &f);
    return f.r;
}

static void loop_body(size_t begin, size_t end, void *arg) {
    bench_loop_kernel(arg, begin, end);
}

static void loop(bench_pool *pool, int *a, size_t n) {
    weft_for((weft_pool *)pool, 0, n, 0, loop_body, a);
}

static void range(bench_pool *pool, size_t n, bench_range_fn *fn, void *arg) {
    weft_for((weft_pool *)pool, 0, n, 0, fn, arg);
}

typedef struct nq_frame {
    const bench_nq *s;
    int lo, hi;
    long r;
} nq_frame;

static long nq_board(const bench_nq *s);

/* Solutions below candidates [lo, hi) of board s: halve, fork, sum. */
static void nq_job(void *arg) {
    nq_frame *f = arg;
    if (f->hi - f->lo == 1) {
        f->r = bench_nq_place(f->s, f->lo, nq_board);
        return;
    }
    int mid = f->lo + (f->hi - f->lo) / 2;
    nq_frame a = {f->s, f->lo, mid, 0}, b = {f->s, mid, f->hi, 0};
    weft_join(nq_job, &a, nq_job, &b);
    f->r = a.r + b.r;
}

/* A child board always has a candidate (bench_nq_leaf). */
static long nq_board(const bench_nq *s) {
    nq_frame f = {s, 0, s->ncand, 0};
    nq_job(&f);
    return f.r;
}

static long nqueens(bench_pool *pool, int n) {
    bench_nq root;
    bench_nq_root(&root, n);
    nq_frame f = {&root, 0, root.ncand, 0};
    if (root.ncand > 0)
        weft_run((weft_pool *)pool, nq_job, &f);
    return f.r;
}

typedef struct ms_frame {
    int *a, *tmp;
    size_t n, cutoff;
} ms_frame;

static void ms_job(void *arg) {
    ms_frame *f = arg;
    if (f->n <= f->cutoff) {
        bench_msort_leaf(f->a, f->tmp, f->n);
        return;
    }
    size_t h = f->n / 2;
    ms_frame x = {f->a, f->tmp, h, f->cutoff};
    ms_frame y = {f->a + h, f->tmp + h, f->n - h, f->cutoff};
    weft_join(ms_job, &x, ms_job, &y);
    bench_merge(f->a, h, f->n, f->tmp);
}

static void msort(bench_pool *pool, int *a, int *tmp, size_t n, size_t cutoff) {
    ms_frame f = {a, tmp, n, cutoff};
    weft_run((weft_pool *)pool, ms_job, &f);
}

typedef struct piece_call {
    bench_piece_fn *fn;
    void *arg;
} piece_call;

static void pieces_body(size_t begin, size_t end, void *arg) {
    piece_call *p = arg;
    for (size_t i = begin; i < end; i++)
        p->fn(i, p->arg);
}

static void pieces(bench_pool *pool, size_t n, bench_piece_fn *fn, void *arg) {
    piece_call p = {fn, arg};
    weft_for((weft_pool *)pool, 0, n, 1, pieces_body, &p);
}

#define JOBS_MAX 64

typedef struct job_batch {
    piece_call call;
    size_t n;
    struct job_slot {
        struct job_batch *batch;
        size_t i;
    } slot[JOBS_MAX];
} job_batch;

static void job_run(void *arg) {
    struct job_slot *s = arg;
    s->batch->call.fn(s->i, s->batch->call.arg);
}

static void jobs_body(weft_scope *scope, void *arg) {
    job_batch *b = arg;
    for (size_t i = 0; i < b->n; i++) {
        b->slot[i].batch = b;
        b->slot[i].i = i;
        int err = weft_scope_spawn(scope, job_run, &b->slot[i]);
        if (err)
            bench_die("weft_scope_spawn", strerror(err));
    }
}

static void jobs(bench_pool *pool, size_t n, bench_piece_fn *fn, void *arg) {
    job_batch b;
    if (n > JOBS_MAX)
        bench_die("weft jobs", "too many jobs in one batch");
    b.call.fn = fn;
    b.call.arg = arg;
    b.n = n;
    weft_scope_run((weft_pool *)pool, jobs_body, &b);
}

static void submit(bench_pool *pool, bench_job_fn *fn, void *arg) {
    int err = weft_spawn((weft_pool *)pool, fn, arg);
    if (err)
        bench_die("weft_spawn", strerror(err));
}

static void empty_job(void *arg) {
    (void)arg;
}

static void roundtrip(bench_pool *pool) {
    weft_run((weft_pool *)pool, empty_job, NULL);
}

static void submit_high(bench_pool *pool, bench_job_fn *fn, void *arg) {
    int err = weft_spawn_priority((weft_pool *)pool, fn, arg, WEFT_PRIORITY_HIGH);
    if (err)
        bench_die("weft_spawn_priority", strerror(err));
}

typedef struct graph_node_arg {
    bench_piece_fn *fn;
    void *arg;
    size_t i;
} graph_node_arg;

static void graph_node_run(void *arg) {
    graph_node_arg *a = arg;
    a->fn(a->i, a->arg);
}

static void graph(bench_pool *pool, int shape, size_t n, bench_piece_fn *fn, void *arg,
                  unsigned runs) {
    weft_graph *g;
    weft_node **nodes = calloc(n, sizeof *nodes);
    graph_node_arg *args = calloc(n, sizeof *args);
    if (!nodes || !args || weft_graph_create(&g) != 0)
        bench_die("weft graph", "out of memory");
    for (size_t i = 0; i < n; i++) {
        args[i] = (graph_node_arg){fn, arg, i};
        if (weft_graph_add(g, graph_node_run, &args[i], &nodes[i]) != 0)
            bench_die("weft_graph_add", "failed");
    }
    for (size_t i = 1; i < n; i++) {
        int err = shape == BENCH_GRAPH_DEEP ? weft_graph_edge(g, nodes[i - 1], nodes[i])
                  : i + 1 < n               ? weft_graph_edge(g, nodes[0], nodes[i]) |
                                    weft_graph_edge(g, nodes[i], nodes[n - 1])
                              : 0;
        if (err)
            bench_die("weft_graph_edge", strerror(err));
    }
    for (unsigned r = 0; r < runs; r++)
        if (weft_graph_run(g, (weft_pool *)pool) != 0)
            bench_die("weft_graph_run", "failed");
    weft_graph_destroy(g);
    free(nodes);
    free(args);
}

/* ---- Lace's suite with weft_join (bench.h) ---------------------------------
 * Each fork offers what Lace's version SPAWNs (B) and runs what it CALLs
 * (A); arguments and result in a frame on the stack. */

typedef struct pi_frame {
    uint64_t start;
    long cnt, r;
} pi_frame;

static void pi_job(void *arg) {
    pi_frame *f = arg;
    if (f->cnt == 1) {
        f->r = bench_pi_sample(f->start);
        return;
    }
    pi_frame first = {f->start, f->cnt / 2, 0};
    pi_frame second = {f->start + (uint64_t)(f->cnt / 2), (f->cnt + 1) / 2, 0};
    weft_join(pi_job, &second, pi_job, &first);
    f->r = first.r + second.r;
}

static long pi(bench_pool *pool, long samples) {
    pi_frame f = {0, samples, 0};
    weft_run((weft_pool *)pool, pi_job, &f);
    return f.r;
}

typedef struct knap_frame {
    const bench_item *e;
    int c, n, v;
    long r;
} knap_frame;

static void knap_job(void *arg) {
    knap_frame *f = arg;
    if (bench_knap_leaf(f->c, f->n, f->v, &f->r))
        return;
    knap_frame without = {f->e + 1, f->c, f->n - 1, f->v, 0};
    knap_frame with = {f->e + 1, f->c - f->e->weight, f->n - 1, f->v + f->e->value, 0};
    weft_join(knap_job, &with, knap_job, &without);
    f->r = with.r > without.r ? with.r : without.r;
}

static long knapsack(bench_pool *pool, const bench_knap *k) {
    knap_frame f = {k->items, k->capacity, k->n, 0, 0};
    weft_run((weft_pool *)pool, knap_job, &f);
    return f.r;
}

/* A node's children [lo, hi), halved down to one child. */
typedef struct uts_frame {
    uint64_t state;
    int level, depth, lo, hi;
    long r;
} uts_frame;

static long uts_node(uint64_t state, int level, int depth);

static void uts_job(void *arg) {
    uts_frame *f = arg;
    if (f->hi - f->lo == 1) {
        f->r = uts_node(bench_uts_child(f->state, f->lo), f->level + 1, f->depth);
        return;
    }
    int mid = f->lo + (f->hi - f->lo) / 2;
    uts_frame low = {f->state, f->level, f->depth, f->lo, mid, 0};
    uts_frame high = {f->state, f->level, f->depth, mid, f->hi, 0};
    weft_join(uts_job, &low, uts_job, &high);
    f->r = low.r + high.r;
}

static long uts_node(uint64_t state, int level, int depth) {
    int k = bench_uts_children(state, level, depth);
    if (!k)
        return 1;
    uts_frame kids = {state, level, depth, 0, k, 0};
    uts_job(&kids);
    return 1 + kids.r;
}

typedef struct uts_call {
    uint64_t root;
    int depth;
    long r;
} uts_call;

static void uts_root(void *arg) {
    uts_call *u = arg;
    u->r = uts_node(u->root, 0, u->depth);
}

static long uts(bench_pool *pool, uint64_t root, int depth) {
    uts_call u = {root, depth, 0};
    weft_run((weft_pool *)pool, uts_root, &u);
    return u.r;
}

/* ---- typed joins (WEFT_TASK) ---------------------------------------------
 * The fork-join workloads as a C user who wants Lace's speed writes them:
 * arguments and results by value, each fork a WEFT_JOIN whose second call
 * is offered to thieves and run inline if none took it (fib as Lace's
 * benchmark: offer n - 1, call n - 2). The system "weft-task" runs these
 * and no other workload (not in the policy programs, hence `unused` on its
 * entries). */

#include "fib_task.h"

typedef struct fib_task_call {
    int n;
    long r;
} fib_task_call;

static void fib_task_root(void *arg) {
    fib_task_call *f = arg;
    f->r = fib_task(f->n);
}

__attribute__((unused)) static long fib_typed(bench_pool *pool, int n) {
    fib_task_call f = {n, 0};
    weft_run((weft_pool *)pool, fib_task_root, &f);
    return f.r;
}

/* Candidates [lo, hi) of board s; a placed queen's child board is searched
 * by a call that passes the worker on (WEFT_CALL), as Lace's CALL. */
WEFT_TASK(long, nq_task, const bench_nq *, s, int, lo, int, hi) {
    if (hi - lo == 1) {
        bench_nq child;
        long k = bench_nq_leaf(s, lo, &child);
        return k >= 0 ? k : WEFT_CALL(nq_task, &child, 0, child.ncand);
    }
    int mid = lo + (hi - lo) / 2;
    long a, b;
    WEFT_JOIN(a, nq_task, (s, lo, mid), b, nq_task, (s, mid, hi));
    return a + b;
}

typedef struct nq_task_call {
    const bench_nq *s;
    long r;
} nq_task_call;

static void nq_task_root(void *arg) {
    nq_task_call *c = arg;
    c->r = nq_task(c->s, 0, c->s->ncand);
}

__attribute__((unused)) static long nqueens_typed(bench_pool *pool, int n) {
    bench_nq root;
    bench_nq_root(&root, n);
    nq_task_call c = {&root, 0};
    if (root.ncand > 0)
        weft_run((weft_pool *)pool, nq_task_root, &c);
    return c.r;
}

WEFT_VOID_TASK(ms_task, ms_frame, f) {
    if (f.n <= f.cutoff) {
        bench_msort_leaf(f.a, f.tmp, f.n);
        return;
    }
    size_t h = f.n / 2;
    WEFT_JOIN_VOID(ms_task, ((ms_frame){f.a, f.tmp, h, f.cutoff}), ms_task,
                   ((ms_frame){f.a + h, f.tmp + h, f.n - h, f.cutoff}));
    bench_merge(f.a, h, f.n, f.tmp);
}

static void ms_task_root(void *arg) {
    ms_task(*(ms_frame *)arg);
}

__attribute__((unused)) static void msort_typed(bench_pool *pool, int *a, int *tmp, size_t n,
                                                size_t cutoff) {
    ms_frame f = {a, tmp, n, cutoff};
    weft_run((weft_pool *)pool, ms_task_root, &f);
}

/* Lace's suite, typed. */
WEFT_TASK(long, pi_task, uint64_t, start, long, cnt) {
    if (cnt == 1)
        return bench_pi_sample(start);
    long a, b;
    WEFT_JOIN(a, pi_task, (start + (uint64_t)(cnt / 2), (cnt + 1) / 2), b, pi_task,
              (start, cnt / 2));
    return a + b;
}

WEFT_TASK(long, knap_task, const bench_item *, e, int, c, int, n, int, v) {
    long best;
    if (bench_knap_leaf(c, n, v, &best))
        return best;
    long with, without;
    WEFT_JOIN(with, knap_task, (e + 1, c - e->weight, n - 1, v + e->value), without, knap_task,
              (e + 1, c, n - 1, v));
    return with > without ? with : without;
}

/* The nodes under children [lo, hi) of a node of `state` at `level`. */
WEFT_TASK(long, uts_task, uint64_t, state, int, level, int, depth, int, lo, int, hi) {
    if (hi - lo == 1) {
        uint64_t child = bench_uts_child(state, lo);
        int k = bench_uts_children(child, level + 1, depth);
        return 1 + (k ? WEFT_CALL(uts_task, child, level + 1, depth, 0, k) : 0);
    }
    int mid = lo + (hi - lo) / 2;
    long a, b;
    WEFT_JOIN(a, uts_task, (state, level, depth, lo, mid), b, uts_task,
              (state, level, depth, mid, hi));
    return a + b;
}

typedef struct suite_call {
    int kind; /* 0 pi, 1 knapsack, 2 uts */
    const bench_knap *k;
    long n;
    uint64_t root;
    long r;
} suite_call;

static void suite_root(void *arg) {
    suite_call *s = arg;
    if (s->kind == 0) {
        s->r = pi_task(0, s->n);
    } else if (s->kind == 1) {
        s->r = knap_task(s->k->items, s->k->capacity, s->k->n, 0);
    } else {
        int k = bench_uts_children(s->root, 0, (int)s->n);
        s->r = 1 + (k ? uts_task(s->root, 0, (int)s->n, 0, k) : 0);
    }
}

__attribute__((unused)) static long pi_typed(bench_pool *pool, long samples) {
    suite_call s = {0, NULL, samples, 0, 0};
    weft_run((weft_pool *)pool, suite_root, &s);
    return s.r;
}

__attribute__((unused)) static long knapsack_typed(bench_pool *pool, const bench_knap *k) {
    suite_call s = {1, k, 0, 0, 0};
    weft_run((weft_pool *)pool, suite_root, &s);
    return s.r;
}

__attribute__((unused)) static long uts_typed(bench_pool *pool, uint64_t root, int depth) {
    suite_call s = {2, NULL, depth, root, 0};
    weft_run((weft_pool *)pool, suite_root, &s);
    return s.r;
}

/* The algorithms: weft_sort (C's; no scan in C). */
static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void sort(bench_pool *pool, uint64_t *a, size_t n) {
    int err = weft_sort((weft_pool *)pool, a, n, sizeof *a, cmp_u64);
    if (err)
        bench_die("weft_sort", strerror(err));
}

/* A blocking region (wl_blocking.c): the pool runs its other jobs meanwhile. */
static void blocking_begin(void) {
    if (weft_blocking_begin() != 0)
        bench_die("weft_blocking_begin", "not in a job");
}

#define WEFT_SYSTEM(NAME, VARIANT, HIDDEN)                                                         \
    {                                                                                              \
        .name = NAME, .variant = VARIANT, .hidden = HIDDEN, BENCH_SYSTEM_COMMON, .jobs = jobs,     \
        .submit = submit, .roundtrip = roundtrip, .submit_high = submit_high, .graph = graph,      \
        .range = range, .pi = pi, .knapsack = knapsack, .uts = uts, .sort = sort,                  \
        .blocking_begin = blocking_begin, .blocking_end = weft_blocking_end,                       \
    }

/* The library's benchmark builds (bench/CMakeLists.txt, src/idle/leave.h) are
 * programs of their own, for bench/policy.sh: BENCH_WEFT_SPIN, idle workers
 * never sleep (the third column of the leave-policy table); BENCH_WEFT_RAYONWAKE,
 * Rayon's wake rule instead of Go's (src/idle/sleep.c, new_jobs);
 * BENCH_WEFT_OFF, the name of a build with one rule of the idle policy off
 * (src/idle/leave.h, WEFT__RULE). */
static const bench_system systems[] = {
#if defined(BENCH_WEFT_SPIN)
    WEFT_SYSTEM("weft-spin", 0, 1),
    WEFT_SYSTEM("weft-spin-phase", PHASE, 1),
#elif defined(BENCH_WEFT_RAYONWAKE)
    WEFT_SYSTEM("weft-rayonwake", 0, 1),
#elif defined(BENCH_WEFT_OFF)
    WEFT_SYSTEM(BENCH_WEFT_OFF, 0, 1),
#else
    WEFT_SYSTEM("weft", 0, 0),
    WEFT_SYSTEM("weft-fast", LEAVE_FAST, 0),
    WEFT_SYSTEM("weft-wakeall", WAKE_ALL, 0),
    WEFT_SYSTEM("weft-wakeall-fast", WAKE_ALL | LEAVE_FAST, 0),
    {.name = "weft-task",
     .create = create,
     .destroy = destroy,
     .fib = fib_typed,
     .nqueens = nqueens_typed,
     .msort = msort_typed,
     .pi = pi_typed,
     .knapsack = knapsack_typed,
     .uts = uts_typed},
    /* bench/policy.sh: the leave-policy table */
    WEFT_SYSTEM("weft-phase", PHASE, 1),
    WEFT_SYSTEM("weft-fast-phase", LEAVE_FAST | PHASE, 1),
    /* what caller slots change: the caller blocks, as before them */
    WEFT_SYSTEM("weft-wait", CALLERS_WAIT, 1),
#endif
};

const bench_system *bench_system_get(unsigned i) {
    return i < sizeof systems / sizeof systems[0] ? &systems[i] : NULL;
}
