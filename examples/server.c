/* SPDX-License-Identifier: MIT */
/* A server-like loop of sporadic jobs, and what the idle pool costs.
 *
 * The main thread plays a network loop: requests arrive one at a time with
 * gaps of up to 2 ms, and each is handed to the pool with weft_spawn (the
 * loop never waits for a request). A request is a small parallel job: a
 * weft_for over its data. Between requests the pool is idle, and that is what
 * this example measures with weft_pool_stats: how long the workers spent
 * searching for work that was not there (CPU burnt while idle) against how
 * long they slept (free), for each leave policy and wake protocol.
 *
 *   example_server [requests]     (default: 100 per configuration)
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <weft.h>

#define REQUEST_SIZE  (1u << 15) /* indices per request */
#define REQUEST_GRAIN 2048u      /* a few pieces per worker per request */

typedef struct request {
    weft_pool *pool;
    uint64_t id;
    _Atomic uint64_t sum;      /* the response */
    _Atomic unsigned *pending; /* requests not yet answered */
} request;

static uint64_t mix(uint64_t x) { /* splitmix64's finaliser: some work per index */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void sum_range(size_t begin, size_t end, void *arg) {
    request *r = arg;
    uint64_t s = 0;
    for (size_t i = begin; i < end; i++)
        s += mix(r->id * REQUEST_SIZE + i);
    atomic_fetch_add_explicit(&r->sum, s, memory_order_relaxed);
}

/* A detached job: handle one request on whichever worker picked it up. */
static void handle(void *arg) {
    request *r = arg;
    /* r->pool is this job's own pool, which NULL would mean too; naming it is clearer. */
    weft_for(r->pool, 0, REQUEST_SIZE, REQUEST_GRAIN, sum_range, r);
    /* Release: the response is complete before the loop sees it answered. */
    atomic_fetch_sub_explicit(r->pending, 1, memory_order_release);
}

static void sleep_us(long us) {
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0) {
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Serve n requests on a fresh pool; print one line; 0 if every answer was right. */
static int serve(const char *label, weft_config config, unsigned n) {
    weft_pool *pool;
    int err = weft_pool_create(&pool, &config);
    if (err) {
        fprintf(stderr, "weft_pool_create: error %d\n", err);
        return 1;
    }
    request *requests = calloc(n, sizeof *requests);
    _Atomic unsigned pending = n;
    if (!requests)
        return 1;
    weft_stats before, after;
    weft_pool_stats(pool, &before);
    double t0 = now();
    uint64_t rng = 0x2545f4914f6cdd1dull;
    for (unsigned i = 0; i < n; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        sleep_us((long)(rng >> 33) % 2000); /* wait for the next request */
        requests[i].pool = pool;
        requests[i].id = i;
        requests[i].pending = &pending;
        if (weft_spawn(pool, handle, &requests[i]) != 0)
            handle(&requests[i]); /* could not queue it: serve it here */
    }
    /* Drain: a server would go on; we wait for the last responses. */
    while (atomic_load_explicit(&pending, memory_order_acquire) != 0)
        sleep_us(100);
    double wall = now() - t0;
    weft_pool_stats(pool, &after);

    int wrong = 0;
    for (unsigned i = 0; i < n; i++) {
        request expected = {.id = i};
        sum_range(0, REQUEST_SIZE, &expected);
        wrong += atomic_load(&requests[i].sum) != atomic_load(&expected.sum);
    }
    double busy = after.busy_seconds - before.busy_seconds;
    double search = after.search_seconds - before.search_seconds;
    double asleep = after.sleep_seconds - before.sleep_seconds;
    double total = busy + search + asleep;
    printf("%-20s %6.3f %8llu %8llu %7llu %8.1f %8.1f %8.1f %7.1f%%\n", label, wall,
           (unsigned long long)(after.jobs - before.jobs),
           (unsigned long long)(after.wakeups - before.wakeups),
           (unsigned long long)(after.futile_wakeups - before.futile_wakeups), busy * 1e3,
           search * 1e3, asleep * 1e3, total > 0 ? 100 * search / total : 0.0);
    free(requests);
    weft_pool_destroy(pool);
    return wrong != 0;
}

int main(int argc, char **argv) {
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100;
    printf("%u requests per line, gaps of 0-2 ms; times in ms summed over the workers\n", n);
    printf("%-20s %6s %8s %8s %7s %8s %8s %8s %8s\n", "protocol, leave", "wall s", "jobs",
           "wakeups", "futile", "busy", "search", "asleep", "idle CPU");
    int failed = 0;
    failed += serve("targeted, automatic", (weft_config){.wake = WEFT_WAKE_TARGETED}, n);
    failed += serve("targeted, fast",
                    (weft_config){.wake = WEFT_WAKE_TARGETED, .leave = WEFT_LEAVE_FAST}, n);
    failed += serve("all, automatic", (weft_config){.wake = WEFT_WAKE_ALL}, n);
    failed += serve("all, fast", (weft_config){.wake = WEFT_WAKE_ALL, .leave = WEFT_LEAVE_FAST}, n);
    printf(
        "idle CPU: the share of the workers' time spent searching for work that was not there\n");
    return failed ? 1 : 0;
}
