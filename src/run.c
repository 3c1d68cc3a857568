/* weft_run: run a function inside a pool and wait for it (Rayon's install).
 *
 * Outside any pool the job is injected and the caller blocks on a latch it
 * owns; on a worker of another pool the caller owns the latch as a worker and
 * keeps running its own pool's jobs while it waits; on a worker of the pool
 * itself the function just runs. The job lives in the caller's frame, which
 * outlives it because the caller waits for the latch the job sets last.
 */
#include "pool.h"

typedef struct run_job {
    weft__job job;
    weft_fn *fn;
    void *arg;
    weft__latch done;
} run_job;

static void run_job_execute(weft__job *job) {
    run_job *r = (run_job *)job;
    r->fn(r->arg);
    weft__latch_set(&r->done); /* r may be gone after this */
}

void weft_run(weft_pool *pool, weft_fn *fn, void *arg) {
    pool = weft__pool_resolve(pool);
    if (!pool || weft__worker_of(pool)) {
        fn(arg);
        return;
    }
    run_job r = {.job.execute = run_job_execute, .fn = fn, .arg = arg};
    weft__latch_init(&r.done);
    weft__pool_inject(pool, &r.job);
    weft__latch_wait(&r.done);
}
