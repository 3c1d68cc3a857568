/* SPDX-License-Identifier: MIT */
/* The split deque: sequential semantics, private jobs taken by force,
 * growth, out-of-memory, and concurrent tortures where every pushed item must
 * be taken exactly once. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "check.h"
#include "core/deque.h"
#include "failmalloc.h"

typedef struct item {
    weft__job job;
    _Atomic int taken;
} item;

/* A deque of the given capacity holding it[0..n) in push order; the fences
 * chosen as a pool would (forced steals need them). */
static void fill(weft__deque *d, size_t capacity, item *it, int n) {
    weft__fence_init();
    CHECK_EQ(weft__deque_init(d, capacity), 0);
    for (int i = 0; i < n; i++)
        CHECK_EQ(weft__deque_push(d, &it[i].job), 0);
}

/* The owner finds the deque empty; then free it. */
static void drained(weft__deque *d) {
    CHECK(weft__deque_pop(d) == NULL);
    weft__deque_destroy(d);
}

TEST(lifo_for_owner_fifo_for_thieves) {
    weft__deque d;
    item it[3];
    fill(&d, 4, it, 3);
    weft__job *j = NULL;
    weft__deque_share(&d);
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_OK);
    CHECK(j == &it[0].job);                   /* thieves take the oldest */
    CHECK(weft__deque_pop(&d) == &it[2].job); /* the owner the newest */
    CHECK(weft__deque_pop(&d) == &it[1].job);
    CHECK(weft__deque_pop(&d) == NULL);
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_EMPTY);
    CHECK(weft__deque_public_empty(&d));
    weft__deque_destroy(&d);
}

TEST(private_jobs_wait_until_shared) {
    weft__deque d;
    item it[3];
    fill(&d, 4, it, 3);
    weft__job *j = NULL;
    CHECK_EQ(weft__deque_private_count(&d), 3);
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_EMPTY); /* private: invisible */
    CHECK_EQ(atomic_load(&d.movesplit), 1);                 /* ...so the thief asks */
    /* The owner's next pop honours the request: all but its own job go public. */
    CHECK(weft__deque_pop(&d) == &it[2].job);
    CHECK_EQ(atomic_load(&d.movesplit), 0);
    CHECK_EQ(weft__deque_private_count(&d), 0);
    bool more;
    CHECK_EQ(weft__deque_steal_private(&d, &j, &more), WEFT__STEAL_RETRY); /* answered */
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_OK);
    CHECK(j == &it[0].job);
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_OK);
    CHECK(j == &it[1].job);
    drained(&d);
}

/* A thief whose request stays unanswered takes the oldest private job. */
TEST(forced_steal_takes_the_oldest_private_job) {
    weft__deque d;
    item it[3];
    fill(&d, 4, it, 3);
    weft__job *j = NULL;
    bool more = false;
    /* Without a standing request, nothing is forced: the owner answered it
     * or may be about to, so the thief looks for public jobs again. */
    CHECK_EQ(weft__deque_steal_private(&d, &j, &more), WEFT__STEAL_RETRY);
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_EMPTY); /* asks */
    CHECK_EQ(weft__deque_steal_private(&d, &j, &more), WEFT__STEAL_OK);
    CHECK(j == &it[0].job);
    CHECK(more);
    CHECK_EQ(weft__deque_steal_private(&d, &j, &more), WEFT__STEAL_OK);
    CHECK(j == &it[1].job);
    CHECK(more); /* it[2] */
    /* The owner's pop finds the last private job, then nothing. */
    CHECK(weft__deque_pop(&d) == &it[2].job);
    CHECK(weft__deque_pop(&d) == NULL);
    /* A push after the thieves' steals begins a new episode. */
    CHECK_EQ(weft__deque_push(&d, &it[0].job), 0);
    CHECK(weft__deque_first_private(&d));
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_EMPTY);
    CHECK_EQ(weft__deque_steal_private(&d, &j, &more), WEFT__STEAL_OK);
    CHECK(j == &it[0].job);
    CHECK(!more);
    CHECK(weft__deque_pop(&d) == NULL); /* the thief's, not the owner's */
    CHECK_EQ(weft__deque_private_count(&d), 0);
    drained(&d);
}

TEST(pop_takes_back_public_jobs) {
    weft__deque d;
    item it[5];
    fill(&d, 4, it, 5);
    weft__deque_share(&d);
    CHECK(weft__deque_public_empty(&d) == false);
    for (int i = 4; i >= 0; i--) /* each reclaim takes back the newer half */
        CHECK(weft__deque_pop(&d) == &it[i].job);
    CHECK(weft__deque_pop(&d) == NULL);
    weft__job *j;
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_EMPTY);
    weft__deque_destroy(&d);
}

TEST(grows_and_keeps_order) {
    weft__deque d;
    CHECK_EQ(weft__deque_init(&d, 1), 0);
    enum { N = 10000 };
    static item it[N];
    int stolen = 0;
    for (int i = 0; i < N; i++) {
        CHECK_EQ(weft__deque_push(&d, &it[i].job), 0);
        if (i % 3 == 0) { /* move top so the live window wraps around the buffer */
            weft__deque_share(&d);
            weft__job *j;
            CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_OK);
            CHECK(j == &it[stolen++].job);
        }
    }
    for (int i = N - 1; i >= stolen; i--)
        CHECK(weft__deque_pop(&d) == &it[i].job);
    drained(&d);
}

TEST(indices_wrap_around_32_bits) {
    weft__deque d;
    CHECK_EQ(weft__deque_init(&d, 16), 0);
    uint32_t start = 0xfffffff0u; /* as after 4 billion pushes */
    atomic_store(&d.ts, ((uint64_t)start << 32) | start);
    atomic_store(&d.bottom, start);
    d.top_seen = start;
    static item it[100];
    for (int i = 0; i < 100; i++)
        CHECK_EQ(weft__deque_push(&d, &it[i].job), 0); /* grows across the wrap */
    weft__deque_share(&d);
    weft__job *j;
    for (int i = 0; i < 50; i++) {
        CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_OK);
        CHECK(j == &it[i].job);
    }
    for (int i = 99; i >= 50; i--)
        CHECK(weft__deque_pop(&d) == &it[i].job);
    drained(&d);
}

TEST(push_reports_enomem_when_growth_fails) {
    weft__deque d;
    item it[17];
    fill(&d, 16, it, 16);
    failmalloc_arm(0);
    CHECK_EQ(weft__deque_push(&d, &it[16].job), ENOMEM);
    failmalloc_disarm();
    CHECK_EQ(failmalloc_failed, 1);
    /* Nothing queued was lost. */
    for (int i = 15; i >= 0; i--)
        CHECK(weft__deque_pop(&d) == &it[i].job);
    CHECK_EQ(weft__deque_push(&d, &it[16].job), 0);
    CHECK(weft__deque_pop(&d) == &it[16].job);
    weft__deque_destroy(&d);
}

/* Torture: the owner pushes items, sometimes shares them, and pops some back
 * (honouring thieves' requests on the way); thieves steal the rest. Every item
 * must be taken exactly once. */
enum { THIEVES = 3 };

/* The random-yield build yields at about one protocol step in ten, and each
 * yield gives a busy neighbour (ctest -j2) a whole time slice: a tenth of the
 * sanitizers' share keeps it within seconds there. */
#ifdef WEFT_DEBUG_YIELD
#define TORTURE_ITEMS 50000
#else
#define TORTURE_ITEMS scaled(2000000)
#endif

typedef struct torture {
    weft__deque d;
    item *items;
    long n;
    bool owner_shares; /* else only forced steals move items */
    _Atomic long taken, stolen;
    _Atomic int done;
} torture;

typedef struct thief_arg {
    torture *t;
    bool forces; /* takes private jobs too */
} thief_arg;

static void take(torture *t, weft__job *j) {
    item *it = (item *)j;
    CHECK_EQ(atomic_fetch_add(&it->taken, 1), 0);
    atomic_fetch_add_explicit(&t->taken, 1, memory_order_relaxed);
}

static void *thief(void *arg) {
    thief_arg *a = arg;
    torture *t = a->t;
    for (;;) {
        weft__job *j;
        bool more;
        weft__steal_result r = weft__deque_steal(&t->d, &j);
        if (r == WEFT__STEAL_EMPTY && a->forces)
            r = weft__deque_steal_private(&t->d, &j, &more);
        if (r == WEFT__STEAL_OK) {
            take(t, j);
            atomic_fetch_add_explicit(&t->stolen, 1, memory_order_relaxed);
        } else if (r == WEFT__STEAL_EMPTY && atomic_load(&t->done))
            return NULL;
    }
}

static void torture_run(bool owner_shares, long n) {
    weft__fence_init();
    torture t = {.n = n, .owner_shares = owner_shares};
    t.items = calloc((size_t)t.n, sizeof(item));
    CHECK_EQ(weft__deque_init(&t.d, 16), 0); /* small: growth races with steals */
    pthread_t th[THIEVES];
    thief_arg args[THIEVES];
    for (int i = 0; i < THIEVES; i++) {
        args[i] = (thief_arg){.t = &t, .forces = i == 0 || !owner_shares};
        pthread_create(&th[i], NULL, thief, &args[i]);
    }
    unsigned rng = 12345;
    for (long i = 0; i < t.n; i++) {
        CHECK_EQ(weft__deque_push(&t.d, &t.items[i].job), 0);
        rng = rng * 1103515245u + 12345u;
        if (owner_shares && (rng >> 20) % 4 == 0)
            weft__deque_share(&t.d);
        for (unsigned k = (rng >> 16) % 3; k > 0; k--) { /* pop 0-2 back */
            weft__job *j = weft__deque_pop(&t.d);
            if (j)
                take(&t, j);
        }
    }
    /* Like a job that pushed and now runs long: the thieves must get some. */
    while (atomic_load(&t.stolen) == 0)
        sched_yield();
    weft__job *j;
    while ((j = weft__deque_pop(&t.d)) != NULL)
        take(&t, j);
    atomic_store(&t.done, 1);
    for (int i = 0; i < THIEVES; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(atomic_load(&t.taken), t.n);
    for (long i = 0; i < t.n; i++)
        CHECK_EQ(atomic_load(&t.items[i].taken), 1);
    weft__deque_destroy(&t.d);
    free(t.items);
}

/* The owner shares now and then and pops some back; one thief also takes
 * private jobs. */
TEST(concurrent_steal_takes_each_item_once) {
    torture_run(true, TORTURE_ITEMS);
}

/* The owner never shares: every item that leaves it leaves by force, racing
 * the owner's plain pops for the last private job. Each forced steal costs
 * two process-wide barriers, hence fewer items. */
TEST(forced_steals_race_the_owner_for_each_item_once) {
    torture_run(false, TORTURE_ITEMS / 10);
}
