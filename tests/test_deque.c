/* SPDX-License-Identifier: MIT */
/* Chase-Lev deque: sequential semantics, growth, out-of-memory, and a
 * concurrent torture where every pushed item must be taken exactly once. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "deque.h"
#include "failmalloc.h"

typedef struct item {
    weft__job job;
    _Atomic int taken;
} item;

/* A deque of the given capacity holding it[0..n) in push order. */
static void fill(weft__deque *d, size_t capacity, item *it, int n) {
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
    CHECK(weft__deque_has_private(&d));
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_EMPTY); /* private: invisible */
    CHECK_EQ(atomic_load(&d.movesplit), 1);                 /* ...so the thief asks */
    /* The owner's next pop honours the request: all but its own job go public. */
    CHECK(weft__deque_pop(&d) == &it[2].job);
    CHECK_EQ(atomic_load(&d.movesplit), 0);
    CHECK(!weft__deque_has_private(&d));
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_OK);
    CHECK(j == &it[0].job);
    CHECK_EQ(weft__deque_steal(&d, &j), WEFT__STEAL_OK);
    CHECK(j == &it[1].job);
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
    d.bottom = d.split = d.top_seen = start;
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
    _Atomic long taken;
    _Atomic int done;
} torture;

static void take(torture *t, weft__job *j) {
    item *it = (item *)j;
    CHECK_EQ(atomic_fetch_add(&it->taken, 1), 0);
    atomic_fetch_add_explicit(&t->taken, 1, memory_order_relaxed);
}

static void *thief(void *arg) {
    torture *t = arg;
    for (;;) {
        weft__job *j;
        weft__steal_result r = weft__deque_steal(&t->d, &j);
        if (r == WEFT__STEAL_OK)
            take(t, j);
        else if (r == WEFT__STEAL_EMPTY && atomic_load(&t->done))
            return NULL;
    }
}

TEST(concurrent_steal_takes_each_item_once) {
    torture t = {.n = TORTURE_ITEMS};
    t.items = calloc((size_t)t.n, sizeof(item));
    CHECK_EQ(weft__deque_init(&t.d, 16), 0); /* small: growth races with steals */
    pthread_t th[THIEVES];
    for (int i = 0; i < THIEVES; i++)
        pthread_create(&th[i], NULL, thief, &t);
    unsigned rng = 12345;
    for (long i = 0; i < t.n; i++) {
        CHECK_EQ(weft__deque_push(&t.d, &t.items[i].job), 0);
        rng = rng * 1103515245u + 12345u;
        if ((rng >> 20) % 4 == 0)
            weft__deque_share(&t.d);
        for (unsigned k = (rng >> 16) % 3; k > 0; k--) { /* pop 0-2 back */
            weft__job *j = weft__deque_pop(&t.d);
            if (j)
                take(&t, j);
        }
    }
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
