/* SPDX-License-Identifier: MIT */
/* The public API: every documented behaviour and errno, correctness of join,
 * scope, spawn and for (each job and index exactly once), deep recursion,
 * many outside callers, pools calling into each other, and out-of-memory. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "child.h"
#include "jobs.h"
#include "failmalloc.h"
#include "os.h"
#include "weft.h"

static weft_pool *make_pool(unsigned threads) {
    weft_config c = {.threads = threads};
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &c), 0);
    return pool;
}

TEST(version_matches_header) {
    char buf[32];
    snprintf(buf, sizeof buf, "%d.%d.%d", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR,
             WEFT_VERSION_PATCH);
    CHECK(strcmp(weft_version(), buf) == 0);
}

static void nothing(void *arg) {
    (void)arg;
}

TEST(bad_input_gets_einval) {
    weft_pool *pool = NULL;
    CHECK_EQ(weft_pool_create(NULL, NULL), EINVAL);
    weft_config c = {.threads = WEFT_THREADS_MAX + 1};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    c = (weft_config){.stack_size = 4096};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    c = (weft_config){.leave = (weft_leave)7};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    c = (weft_config){.wake = (weft_wake)9};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    c = (weft_config){.threads = WEFT_THREADS_MAX, .contexts = 1};
    CHECK_EQ(weft_pool_create(&pool, &c), EINVAL);
    CHECK(pool == NULL); /* untouched on error */
    CHECK_EQ(weft_pool_destroy(NULL), EINVAL);
    CHECK_EQ(weft_pool_destroy(weft_pool_default()), EINVAL);
    CHECK_EQ(weft_spawn(NULL, NULL, NULL), EINVAL);
    CHECK_EQ(weft_scope_spawn(NULL, nothing, NULL), EINVAL);
}

/* A stack no thread can have (4 EiB: more than the address space, so the
 * mapping fails whatever the overcommit policy): EAGAIN, *pool untouched, and
 * what the pool had set up is freed (the ASan build checks for leaks). The
 * next pool works. */
TEST(thread_creation_failure_is_eagain) {
    weft_pool *pool = NULL;
    weft_config c = {.threads = 3, .stack_size = (size_t)1 << 62};
    CHECK_EQ(weft_pool_create(&pool, &c), EAGAIN);
    CHECK(pool == NULL);
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 3}), 0);
    fib f = {15, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, 610);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(thread_count_from_config_env_and_cpus) {
    weft_pool *pool = make_pool(3);
    CHECK_EQ(weft_pool_threads(pool), 3);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    setenv("WEFT_NUM_THREADS", "5", 1);
    CHECK_EQ(weft_pool_create(&pool, NULL), 0);
    CHECK_EQ(weft_pool_threads(pool), 5);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    const char *bad[] = {"abc", "0", "5x", "99999"};
    for (int i = 0; i < 4; i++) {
        setenv("WEFT_NUM_THREADS", bad[i], 1);
        CHECK_EQ(weft_pool_create(&pool, NULL), 0);
        cpu_set_t set;
        CHECK_EQ(sched_getaffinity(0, sizeof set, &set), 0);
        CHECK_EQ(weft_pool_threads(pool), CPU_COUNT(&set));
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
    unsetenv("WEFT_NUM_THREADS");
}

/* A bad WEFT_NUM_THREADS says so, once per process and value, on one line of
 * stderr naming the value it ignored and the count it uses instead. */
static const char *num_threads_value;

static void create_two_pools(void) {
    setenv("WEFT_NUM_THREADS", num_threads_value, 1);
    unsigned cpus = weft__os_cpu_count();
    for (int i = 0; i < 2; i++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, NULL), 0);
        CHECK_EQ(weft_pool_threads(pool), cpus < WEFT_THREADS_MAX ? cpus : WEFT_THREADS_MAX);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

TEST(bad_num_threads_is_reported_once) {
    const char *bad[] = {"abc", "-1", "0", "5000", "5x", "99999999999999999999999"};
    unsigned cpus = weft__os_cpu_count();
    for (int i = 0; i < 6; i++) {
        char err[1024], want[256];
        num_threads_value = bad[i];
        CHECK(child_exited_ok(child_run(create_two_pools, err, sizeof err)));
        snprintf(want, sizeof want,
                 "weft: ignoring WEFT_NUM_THREADS=\"%s\": not a number from 1 to %u; using %u\n",
                 bad[i], WEFT_THREADS_MAX, cpus < WEFT_THREADS_MAX ? cpus : WEFT_THREADS_MAX);
        CHECK(strcmp(err, want) == 0); /* one line for two pools */
    }
    char err[1024];
    num_threads_value = ""; /* set but empty: as unset, silently */
    CHECK(child_exited_ok(child_run(create_two_pools, err, sizeof err)));
    CHECK_EQ(strlen(err), 0);
}

enum { HOOK_THREADS = 4 };
static _Atomic int started[HOOK_THREADS], exited[HOOK_THREADS];
static _Atomic int names_ok, names_seen;

static void on_start(unsigned worker, void *user) {
    CHECK(user == &started);
    CHECK_EQ(weft_thread_index(), worker);
    atomic_fetch_add(&started[worker], 1);
}

static void on_exit_hook(unsigned worker, void *user) {
    CHECK(user == &started);
    atomic_fetch_add(&exited[worker], 1);
}

static void check_name(void *arg) {
    (void)arg;
    char name[16], want[16];
    pthread_getname_np(pthread_self(), name, sizeof name);
    snprintf(want, sizeof want, "tst-%d", weft_thread_index());
    atomic_fetch_add(&names_seen, 1);
    if (strcmp(name, want) == 0)
        atomic_fetch_add(&names_ok, 1);
}

TEST(hooks_names_and_indices) {
    CHECK_EQ(weft_thread_index(), -1);
    weft_config c = {.threads = HOOK_THREADS,
                     .name = "tst",
                     .on_start = on_start,
                     .on_exit = on_exit_hook,
                     .user = &started};
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &c), 0);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(weft_spawn(pool, check_name, NULL), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    for (int i = 0; i < HOOK_THREADS; i++) {
        CHECK_EQ(started[i], 1);
        CHECK_EQ(exited[i], 1);
    }
    CHECK_EQ(names_seen, 100);
    CHECK_EQ(names_ok, weft__os_names_threads() ? 100 : 0); /* the POSIX seam names none */
}

static void destroy_self(void *arg) {
    CHECK_EQ(weft_pool_destroy((weft_pool *)arg), EDEADLK);
}

TEST(destroy_from_own_job_is_edeadlk) {
    weft_pool *pool = make_pool(2);
    weft_run(pool, destroy_self, pool);
    CHECK_EQ(weft_spawn(pool, destroy_self, pool), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* the pool still worked */
}

/* ---- join ---------------------------------------------------------------- */

typedef struct deep {
    long depth;
    long leaves;
} deep;

static void leaf(void *arg) {
    ((deep *)arg)->leaves = 1;
}

static void nest(void *arg) {
    deep *d = arg;
    if (d->depth == 0) {
        d->leaves = 1;
        return;
    }
    deep a = {d->depth - 1, 0}, b = {0, 0};
    weft_join(nest, &a, leaf, &b);
    d->leaves = a.leaves + b.leaves;
}

TEST(join_nests_ten_thousand_deep) {
    deep d = {10000, 0};
    weft_join(nest, &d, nothing, NULL); /* from outside: the default pool */
    CHECK_EQ(d.leaves, 10001);
    weft_pool *pool = make_pool(2);
    deep e = {10000, 0};
    weft_run(pool, nest, &e);
    CHECK_EQ(e.leaves, 10001);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(join_computes_fib) {
    weft_pool *pool = make_pool(4);
    fib f = {scaled(1) == 1 ? 27 : 22, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, f.n == 27 ? 196418 : 17711);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void on_worker(void *arg) {
    *(int *)arg = weft_thread_index();
}

/* NULL means the calling thread's own pool on a worker, the default elsewhere. */
static void null_is_here(void *arg) {
    weft_pool *pool = arg;
    CHECK_EQ(weft_pool_threads(NULL), weft_pool_threads(pool));
    int idx = -2;
    weft_run(NULL, on_worker, &idx); /* inline, on this very worker */
    CHECK_EQ(idx, weft_thread_index());
    weft_stats before, after;
    weft_pool_stats(NULL, &before);
    weft_pool_stats(pool, &after);
    CHECK(before.jobs <= after.jobs); /* the same pool's counters */
}

TEST(null_means_the_current_pool) {
    weft_pool *pool = make_pool(3);
    weft_run(pool, null_is_here, pool);
    CHECK_EQ(weft_pool_threads(NULL), weft_pool_threads(weft_pool_default()));
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(run_places_work_in_the_pool) {
    int idx = -2;
    weft_join(on_worker, &idx, nothing, NULL);
    CHECK(idx >= 0);
    weft_pool *pool = make_pool(2);
    idx = -2;
    weft_run(pool, on_worker, &idx);
    CHECK(idx == 0 || idx == 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- scope and spawn ------------------------------------------------------ */

static _Atomic long counted;

static void count_one(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
}

static void million(weft_scope *s, void *arg) {
    long n = *(long *)arg;
    for (long i = 0; i < n; i++)
        CHECK_EQ(weft_scope_spawn(s, count_one, NULL), 0);
}

TEST(scope_runs_a_million_spawns) {
    weft_pool *pool = make_pool(2);
    atomic_store(&counted, 0);
    long n = scaled(1000000);
    weft_scope_run(pool, million, &n);
    CHECK_EQ(atomic_load(&counted), n); /* all finished before it returned */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

typedef struct tree {
    weft_scope *scope;
    int depth;
} tree;

static void tree_node(void *arg);

static void tree_spawn_children(weft_scope *s, int depth) {
    for (int i = 0; i < 3; i++) {
        tree *t = malloc(sizeof *t);
        CHECK(t != NULL);
        *t = (tree){s, depth - 1};
        CHECK_EQ(weft_scope_spawn(s, tree_node, t), 0);
    }
}

static void tree_node(void *arg) {
    tree t = *(tree *)arg;
    free(arg);
    atomic_fetch_add(&counted, 1);
    if (t.depth > 0)
        tree_spawn_children(t.scope, t.depth);
}

static void inner_scope(weft_scope *s, void *arg) {
    (void)arg;
    tree_spawn_children(s, 5);
}

static void outer_scope(weft_scope *s, void *arg) {
    weft_pool *pool = arg;
    tree_spawn_children(s, 5);
    long before = atomic_load(&counted);
    weft_scope_run(pool, inner_scope, NULL); /* nested: returns when its own tree is done */
    CHECK(atomic_load(&counted) >= before + 363);
}

TEST(scopes_nest_and_spawn_from_jobs) {
    weft_pool *pool = make_pool(3);
    atomic_store(&counted, 0);
    weft_scope_run(pool, outer_scope, pool);
    CHECK_EQ(atomic_load(&counted), 2 * 363); /* 3 + 9 + 27 + 81 + 243 per tree */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(spawn_from_outside_finishes_before_destroy) {
    weft_pool *pool = make_pool(2);
    atomic_store(&counted, 0);
    for (int i = 0; i < 1000; i++)
        CHECK_EQ(weft_spawn(pool, count_one, NULL), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&counted), 1000);
}

/* ---- for ------------------------------------------------------------------ */

typedef struct visits {
    _Atomic unsigned char *hits;
    size_t base;
    size_t grain;
    size_t total;
    _Atomic long pieces;
    _Atomic long short_pieces;
} visits;

static void visit(size_t begin, size_t end, void *arg) {
    visits *v = arg;
    CHECK(begin < end);
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add_explicit(&v->hits[i - v->base], 1, memory_order_relaxed);
    atomic_fetch_add(&v->pieces, 1);
    if (v->grain && end - begin < v->grain && v->total >= v->grain)
        atomic_fetch_add(&v->short_pieces, 1);
}

static void check_for(weft_pool *pool, size_t begin, size_t end, size_t grain) {
    size_t n = end - begin;
    visits v = {.base = begin, .grain = grain, .total = n};
    v.hits = calloc(n ? n : 1, 1);
    weft_for(pool, begin, end, grain, visit, &v);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(v.hits[i], 1);
    CHECK_EQ(v.short_pieces, 0);
    free((void *)v.hits);
}

TEST(for_visits_each_index_once) {
    weft_pool *pool = make_pool(3);
    size_t grains[] = {0, 1, 7, 1000};
    for (int g = 0; g < 4; g++) {
        check_for(pool, 0, 1, grains[g]);
        check_for(pool, 5, 5 + 999, grains[g]);
        check_for(pool, 1000, 1000 + (size_t)scaled(300000), grains[g]);
    }
    visits v = {0};
    weft_for(pool, 10, 10, 0, visit, &v); /* empty: body never called */
    weft_for(pool, 10, 3, 0, visit, &v);
    CHECK_EQ(v.pieces, 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* grain > 0 gives the same pieces on every run and thread count. */
static void record_piece(size_t begin, size_t end, void *arg) {
    _Atomic size_t *ends = arg;
    atomic_store(&ends[begin], end);
}

TEST(for_with_grain_splits_the_same_way) {
    enum { N = 10007, GRAIN = 37 };
    static _Atomic size_t first[N], again[N];
    weft_pool *p1 = make_pool(1), *p4 = make_pool(4);
    weft_for(p1, 0, N, GRAIN, record_piece, first);
    weft_for(p4, 0, N, GRAIN, record_piece, again);
    size_t pieces = 0;
    for (size_t i = 0; i < N; i++) {
        CHECK_EQ(first[i], again[i]);
        if (first[i]) {
            CHECK(first[i] - i >= GRAIN && first[i] - i < 2 * GRAIN);
            pieces++;
        }
    }
    CHECK(pieces > 100);
    CHECK_EQ(weft_pool_destroy(p1), 0);
    CHECK_EQ(weft_pool_destroy(p4), 0);
}

/* ---- many callers, many pools ----------------------------------------------- */

typedef struct caller {
    weft_pool *pool;
    long ok;
} caller;

static void *outside_caller(void *arg) {
    caller *c = arg;
    for (int i = 0; i < scaled(200); i++) {
        int idx = -2;
        weft_run(c->pool, on_worker, &idx);
        CHECK(idx >= 0);
        size_t n = 1000 + (size_t)i;
        visits v = {.total = n};
        v.hits = calloc(n, 1);
        weft_for(c->pool, 0, n, (size_t)i % 3, visit, &v);
        for (size_t k = 0; k < n; k++)
            CHECK_EQ(v.hits[k], 1);
        free((void *)v.hits);
        c->ok++;
    }
    return NULL;
}

TEST(many_outside_threads_share_a_pool) {
    enum { CALLERS = 8 };
    weft_pool *pool = make_pool(3);
    pthread_t t[CALLERS];
    caller c[CALLERS];
    for (int i = 0; i < CALLERS; i++) {
        c[i] = (caller){pool, 0};
        pthread_create(&t[i], NULL, outside_caller, &c[i]);
    }
    for (int i = 0; i < CALLERS; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(c[i].ok, scaled(200));
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void *get_default(void *arg) {
    *(weft_pool **)arg = weft_pool_default();
    return NULL;
}

TEST(default_pool_is_created_once) {
    enum { N = 8 };
    pthread_t t[N];
    weft_pool *got[N];
    for (int i = 0; i < N; i++)
        pthread_create(&t[i], NULL, get_default, &got[i]);
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        CHECK(got[i] != NULL && got[i] == got[0]);
    }
    CHECK_EQ(weft_pool_threads(NULL), weft_pool_threads(got[0]));
}

TEST(create_and_destroy_a_thousand_pools) {
    for (int i = 0; i < scaled(1000); i++) {
        weft_pool *pool = make_pool(1 + i % 3);
        if (i % 2) {
            fib f = {10, 0};
            weft_run(pool, fib_job, &f);
            CHECK_EQ(f.r, 55);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* Pools calling into each other: a worker of A runs work in B, which runs
 * work in A, ... Each waiting worker keeps serving its own pool. */
typedef struct ping {
    weft_pool *here, *there;
    int depth;
    long sum;
} ping;

static void ping_job(void *arg) {
    ping *p = arg;
    if (p->depth == 0) {
        fib f = {12, 0};
        fib_job(&f);
        p->sum = f.r;
        return;
    }
    ping x = {p->there, p->here, p->depth - 1, 0}, y = x;
    weft_run(p->there, ping_job, &x); /* cross-pool: participates in `here` */
    weft_join(ping_job, &y, nothing, NULL);
    p->sum = x.sum + y.sum;
}

TEST(two_pools_call_into_each_other) {
    weft_pool *a = make_pool(2), *b = make_pool(1);
    for (int i = 0; i < scaled(50); i++) {
        ping p = {a, b, 6, 0};
        weft_run(a, ping_job, &p);
        CHECK_EQ(p.sum, 144 << 6);
    }
    CHECK_EQ(weft_pool_destroy(a), 0);
    CHECK_EQ(weft_pool_destroy(b), 0);
}

/* ---- out of memory ----------------------------------------------------------- */

TEST(create_reports_enomem_without_leaks) {
    int successes = 0;
    for (long k = 0; k < 40 && successes == 0; k++) {
        weft_pool *pool = NULL;
        failmalloc_arm(k);
        int err = weft_pool_create(&pool, &(weft_config){.threads = 3});
        failmalloc_disarm();
        if (err == 0) {
            successes++;
            CHECK_EQ(weft_pool_destroy(pool), 0);
        } else {
            CHECK_EQ(err, ENOMEM);
            CHECK(pool == NULL);
        }
    }
    CHECK_EQ(successes, 1); /* and ASan's leak check sees nothing left behind */
}

TEST(spawn_reports_enomem) {
    weft_pool *pool = make_pool(2);
    failmalloc_arm(0);
    int err = weft_spawn(pool, count_one, NULL);
    failmalloc_disarm();
    CHECK_EQ(err, ENOMEM);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* the failed job is not waited for */
}

static void starve_scope(weft_scope *s, void *arg) {
    long *errors = arg;
    failmalloc_arm(0); /* this worker can no longer allocate */
    for (int i = 0; i < 300; i++) {
        int err = weft_scope_spawn(s, count_one, NULL);
        CHECK(err == 0 || err == ENOMEM); /* recycled jobs still succeed */
        *errors += err == ENOMEM;
    }
    failmalloc_disarm();
}

TEST(scope_spawn_reports_enomem) {
    weft_pool *pool = make_pool(1);
    atomic_store(&counted, 0);
    long errors = 0;
    weft_scope_run(pool, starve_scope, &errors);
    CHECK(errors > 0);
    CHECK_EQ(atomic_load(&counted), 300 - errors); /* the rest all ran */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void starved_join(void *arg) {
    deep *d = arg;
    failmalloc_arm(0); /* the deque cannot grow past its first buffer */
    nest(d);
    failmalloc_disarm();
}

TEST(join_runs_inline_when_the_deque_cannot_grow) {
    weft_pool *pool = make_pool(1);
    deep d = {2000, 0};
    weft_run(pool, starved_join, &d);
    CHECK_EQ(d.leaves, 2001);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
