/* SPDX-License-Identifier: MIT */
/* A 2-D heat equation (Jacobi iterations) over MPI ranks, each rank's part
 * computed by weft jobs, the halo rows exchanged by blocking MPI calls made
 * inside jobs; checked against the same solver run serially on rank 0.
 *
 * The grid is rows x cols inner points inside a fixed border: the top row
 * held at 1, the rest at 0. Ranks take consecutive bands of rows, each with
 * one halo row above and below for its neighbours' edge rows. Each
 * iteration is one scope: a job per neighbour exchanges the band's edge row
 * for the neighbour's (MPI_Send and MPI_Recv), while the jobs of the
 * band's inner rows, which read no halo, compute beside them; once the
 * scope has returned, the two edge rows, which read the halos, are
 * computed too.
 *
 * Jobs that block in MPI say so, built as it is here: each exchange runs
 * inside weft_blocking_begin/end, so that the pool runs the other jobs on a
 * spare thread while the exchange waits (MPI_Init_thread with
 * MPI_THREAD_MULTIPLE: jobs of any thread call MPI). Built with
 * -DHEAT_TAMPI and linked with Task-Aware MPI and libweft-alpi
 * (docs/guide.md, "MPI from jobs"), the same calls are left bare: TAMPI, initialised
 * with MPI_TASK_MULTIPLE, suspends the job that calls a blocking MPI
 * function (through ALPI: weft_task_block) and resumes it when the
 * operation completes. Under TAMPI every blocking MPI call must come from a
 * job, so the rank's whole program runs as one (weft_run); the plain build
 * does the same, for one program shape.
 *
 * Each pair of neighbours exchanges in a fixed order, the lower rank sending
 * first, so that the blocking sends and receives match whatever order the
 * jobs run in, and without a spare thread too. Every point is computed
 * with the same expression in the same order as the serial solver, so the
 * result is bitwise the serial one; the program exits 1 if it is not.
 *
 *   mpirun -np 4 example_heat_mpi [rows cols iterations]   (default 256 256 100)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>
#ifdef HEAT_TAMPI
#include <TAMPI.h>
#include <weft/alpi.h>
#endif

/* Rows of a band per compute job: 16 x cols points (4096 at the default
 * width), many times the cost of spawning the job. */
#define BLOCK_ROWS 16

#define TAG_DOWN 1 /* an edge row sent to the rank below */
#define TAG_UP   2 /* an edge row sent to the rank above */

typedef struct heat {
    int rank, ranks;
    int rows, cols, iterations;
    int band;                    /* this rank's inner rows: [first_row(h, rank), + band) */
    double *old_grid, *new_grid; /* (band + 2) x (cols + 2), halo rows 0 and band + 1 */
    double seconds;              /* the iterations' time, the slowest rank's */
    int failed;
} heat;

#define AT(h, grid, i, j) ((grid)[(size_t)(i) * (size_t)((h)->cols + 2) + (size_t)(j)])

/* The first grid row of rank r's band (rank ranks: one past the last). */
static int first_row(const heat *h, int r) {
    return (int)((long)h->rows * r / h->ranks);
}

/* A rank that cannot do its share of an iteration leaves its neighbours
 * waiting for its halo: the whole run stops. */
static void give_up(const char *what) {
    fprintf(stderr, "heat_mpi: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A blocking MPI call inside a job. The plain build tells weft, so the pool
 * runs its other jobs meanwhile; under TAMPI the call itself suspends the
 * job, and a region around it would only call a spare for nothing. */
static void mpi_wait_begin(void) {
#ifndef HEAT_TAMPI
    if (weft_blocking_begin() != 0)
        give_up("weft_blocking_begin outside a job");
#endif
}

static void mpi_wait_end(void) {
#ifndef HEAT_TAMPI
    weft_blocking_end();
#endif
}

/* One Jacobi step for inner rows [i0, i1] (band numbering, 1..band). The
 * serial solver uses this same function on the whole grid as one band. */
static void step_rows(const heat *h, const double *in, double *out, int i0, int i1) {
    for (int i = i0; i <= i1; i++)
        for (int j = 1; j <= h->cols; j++)
            AT(h, out, i, j) = 0.25 * ((AT(h, in, i - 1, j) + AT(h, in, i + 1, j)) +
                                       (AT(h, in, i, j - 1) + AT(h, in, i, j + 1)));
}

typedef struct block {
    heat *h;
    int i0, i1;
} block;

static void step_block(void *arg) {
    block *b = arg;
    step_rows(b->h, b->h->old_grid, b->h->new_grid, b->i0, b->i1);
}

typedef struct exchange {
    heat *h;
    int neighbour;
} exchange;

/* Send this band's edge row next to neighbour and receive its edge row into
 * the halo. The lower rank of the pair sends first, the higher receives
 * first: blocking calls that match in any interleaving of the two jobs. */
static void exchange_halo(void *arg) {
    exchange *x = arg;
    heat *h = x->h;
    int below = x->neighbour > h->rank;
    int cols = h->cols + 2;
    const double *edge = &AT(h, h->old_grid, below ? h->band : 1, 0);
    double *halo = &AT(h, h->old_grid, below ? h->band + 1 : 0, 0);
    int send_tag = below ? TAG_DOWN : TAG_UP, recv_tag = below ? TAG_UP : TAG_DOWN;
    mpi_wait_begin();
    if (below) {
        MPI_Send(edge, cols, MPI_DOUBLE, x->neighbour, send_tag, MPI_COMM_WORLD);
        MPI_Recv(halo, cols, MPI_DOUBLE, x->neighbour, recv_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(halo, cols, MPI_DOUBLE, x->neighbour, recv_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(edge, cols, MPI_DOUBLE, x->neighbour, send_tag, MPI_COMM_WORLD);
    }
    mpi_wait_end();
}

typedef struct iteration {
    heat *h;
    exchange up, down;
    block *blocks;
    int nblocks;
} iteration;

/* The halos and the rows that do not read them, all at once. */
static void exchange_and_inner_rows(weft_scope *scope, void *arg) {
    iteration *it = arg;
    heat *h = it->h;
    if (h->rank > 0 && weft_scope_spawn(scope, exchange_halo, &it->up) != 0)
        give_up("weft_scope_spawn failed");
    if (h->rank < h->ranks - 1 && weft_scope_spawn(scope, exchange_halo, &it->down) != 0)
        give_up("weft_scope_spawn failed");
    for (int b = 0; b < it->nblocks; b++)
        if (weft_scope_spawn(scope, step_block, &it->blocks[b]) != 0)
            give_up("weft_scope_spawn failed");
}

/* Blocks of the inner rows 2..band-1, which read neither halo. */
static int make_blocks(heat *h, block **blocks) {
    int inner = h->band - 2, n = inner > 0 ? (inner + BLOCK_ROWS - 1) / BLOCK_ROWS : 0;
    *blocks = calloc(n > 0 ? (size_t)n : 1, sizeof **blocks);
    for (int b = 0; *blocks && b < n; b++) {
        int i0 = 2 + b * BLOCK_ROWS, i1 = i0 + BLOCK_ROWS - 1;
        (*blocks)[b] = (block){h, i0, i1 < h->band - 1 ? i1 : h->band - 1};
    }
    return n;
}

/* The fixed border: the top row of the grid at 1, everything else at 0. */
static void set_border(const heat *h, double *grid, int band, int top_is_border) {
    memset(grid, 0, (size_t)(band + 2) * (size_t)(h->cols + 2) * sizeof *grid);
    if (top_is_border)
        for (int j = 0; j < h->cols + 2; j++)
            AT(h, grid, 0, j) = 1.0;
}

static void solve_parallel(heat *h) {
    iteration it = {h, {h, h->rank - 1}, {h, h->rank + 1}, NULL, 0};
    it.nblocks = make_blocks(h, &it.blocks);
    if (!it.blocks)
        give_up("out of memory");
    for (int k = 0; k < h->iterations; k++) {
        weft_scope_run(NULL, exchange_and_inner_rows, &it);
        /* The edge rows read the halos the scope received: two rows, on
         * this thread, rather than a second scope for them. */
        step_rows(h, h->old_grid, h->new_grid, 1, 1);
        if (h->band > 1)
            step_rows(h, h->old_grid, h->new_grid, h->band, h->band);
        double *t = h->old_grid;
        h->old_grid = h->new_grid;
        h->new_grid = t;
    }
    free(it.blocks);
}

/* Rank 0: the whole grid, serially, with the same step function. */
static double *solve_serial(const heat *h) {
    size_t n = (size_t)(h->rows + 2) * (size_t)(h->cols + 2);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return NULL;
    }
    set_border(h, a, h->rows, 1);
    set_border(h, b, h->rows, 1);
    for (int k = 0; k < h->iterations; k++) {
        step_rows(h, a, b, 1, h->rows);
        double *t = a;
        a = b;
        b = t;
    }
    free(b);
    return a;
}

/* Gather every band's inner rows on rank 0 and compare them with the
 * serial solver's, bit for bit. */
static int check(heat *h) {
    int cols = h->cols + 2, ok = 1;
    double *all = NULL;
    int *counts = NULL, *displs = NULL;
    if (h->rank == 0) {
        all = malloc((size_t)h->rows * (size_t)cols * sizeof *all);
        counts = malloc((size_t)h->ranks * sizeof *counts);
        displs = malloc((size_t)h->ranks * sizeof *displs);
        if (!all || !counts || !displs)
            give_up("out of memory");
        for (int r = 0; r < h->ranks; r++) {
            counts[r] = (first_row(h, r + 1) - first_row(h, r)) * cols;
            displs[r] = first_row(h, r) * cols;
        }
    }
    mpi_wait_begin();
    MPI_Gatherv(&AT(h, h->old_grid, 1, 0), h->band * cols, MPI_DOUBLE, all, counts, displs,
                MPI_DOUBLE, 0, MPI_COMM_WORLD);
    mpi_wait_end();
    if (h->rank == 0) {
        double *serial = solve_serial(h), sum = 0;
        if (!serial)
            give_up("out of memory");
        ok = memcmp(all, serial + cols, (size_t)h->rows * (size_t)cols * sizeof *all) == 0;
        for (size_t i = 0; i < (size_t)h->rows * (size_t)cols; i++)
            sum += all[i];
        printf("heat_mpi%s: %d ranks x %u workers, %dx%d grid, %d iterations: %.3f s, "
               "sum %.17g, %s\n",
#ifdef HEAT_TAMPI
               " (TAMPI)",
#else
               "",
#endif
               h->ranks, weft_pool_threads(NULL), h->rows, h->cols, h->iterations, h->seconds, sum,
               ok ? "equal to the serial run" : "DIFFERENT from the serial run");
        free(serial);
    }
    free(all);
    free(counts);
    free(displs);
    mpi_wait_begin();
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    mpi_wait_end();
    return ok;
}

/* The rank's program, as one job (see the top). */
static void rank_main(void *arg) {
    heat *h = arg;
    size_t n = (size_t)(h->band + 2) * (size_t)(h->cols + 2);
    h->old_grid = malloc(n * sizeof *h->old_grid);
    h->new_grid = malloc(n * sizeof *h->new_grid);
    if (!h->old_grid || !h->new_grid)
        give_up("out of memory");
    set_border(h, h->old_grid, h->band, h->rank == 0);
    set_border(h, h->new_grid, h->band, h->rank == 0);

    mpi_wait_begin();
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_wait_end();
    double t0 = MPI_Wtime();
    solve_parallel(h);
    double local = MPI_Wtime() - t0;
    mpi_wait_begin();
    MPI_Allreduce(&local, &h->seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    mpi_wait_end();
    h->failed = !check(h);
    free(h->old_grid);
    free(h->new_grid);
}

int main(int argc, char **argv) {
#ifdef HEAT_TAMPI
    int wanted = MPI_TASK_MULTIPLE;
#else
    int wanted = MPI_THREAD_MULTIPLE;
#endif
    int provided;
    MPI_Init_thread(&argc, &argv, wanted, &provided);
    heat h = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &h.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &h.ranks);
    if (provided != wanted) {
        if (h.rank == 0)
            fprintf(stderr, "heat_mpi: the MPI library gives thread level %d, not %d\n", provided,
                    wanted);
        MPI_Finalize();
        return 1;
    }
    h.rows = argc > 3 ? atoi(argv[1]) : 256;
    h.cols = argc > 3 ? atoi(argv[2]) : 256;
    h.iterations = argc > 3 ? atoi(argv[3]) : 100;
    if (h.rows < h.ranks || h.cols < 1 || h.iterations < 0) {
        if (h.rank == 0)
            fprintf(stderr, "usage: mpirun -np N %s [rows cols iterations], rows >= N\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
#ifdef HEAT_TAMPI
    char runtime[32];
    if (h.rank == 0 && alpi_info_get(ALPI_INFO_RUNTIME_NAME, runtime, sizeof runtime, NULL) == 0)
        printf("heat_mpi (TAMPI): tasks of %s through ALPI\n", runtime);
#endif
    h.band = first_row(&h, h.rank + 1) - first_row(&h, h.rank);
    weft_run(NULL, rank_main, &h);
    MPI_Finalize();
    return h.failed ? 1 : 0;
}
