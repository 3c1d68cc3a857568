/* SPDX-License-Identifier: MIT */
/* weft_for_2d: a 2-D loop as a weft_for over its blocks.
 *
 * The rectangle is cut into blocks (the grains, or about BLOCKS_PER_THREAD
 * blocks a thread, as square as the range allows), and the blocks are
 * numbered in Z order: the code of block (i, j) interleaves the bits of i
 * and j, so a range of codes is a union of quadrants, sub-quadrants and so
 * on. weft_for splits the codes as it splits any range, so a stolen half of
 * the loop is a half of the rectangle and a thread's consecutive blocks are
 * neighbours in both dimensions (what recursive bisection of the rectangle
 * gives, as oneTBB's blocked_range2d does), and everything weft_for does
 * comes with it: adaptive splitting and hand-on of a leaf's rest, its
 * cancellation group, giving way to high-priority work between pieces.
 *
 * Where one dimension has more blocks than the other, only the shorter's
 * bits are interleaved; the longer's remaining bits are the code's top
 * bits (a row of squares). The codes run to the next powers of two of
 * each dimension's block count, less than four times the blocks; a code
 * outside the rectangle is skipped for the cost of a comparison.
 */
#include <assert.h>

#include "core/current.h"

/* Blocks a thread, where the grains leave the choice to weft: enough for the
 * adaptive splitter to balance uneven blocks, few enough that a block's
 * call costs nothing beside its cells. */
#define BLOCKS_PER_THREAD 16

typedef struct grid {
    size_t r_begin, r_end, c_begin, c_end;
    size_t rb, cb;           /* a block's rows and columns */
    size_t nr, nc;           /* blocks down and across */
    unsigned bits_r, bits_c; /* bits of a block's row and column index */
    weft_block_fn *body;
    void *arg;
} grid;

static size_t div_up(size_t n, size_t d) {
    return n / d + (n % d != 0);
}

/* Bits to number n things: the least b with 2^b >= n. */
static unsigned bits_for(size_t n) {
    unsigned b = 0;
    while (b < sizeof(size_t) * 8 && ((size_t)1 << b) < n)
        b++;
    return b;
}

/* The even bits of x, packed: the inverse of spreading a value's bits to
 * every other position. */
static size_t even_bits(size_t x) {
    size_t r = 0;
    for (unsigned k = 0; x; k++, x >>= 2)
        r |= (x & 1) << k;
    return r;
}

static void blocks(size_t lo, size_t hi, void *arg) {
    const grid *g = arg;
    unsigned m = g->bits_r < g->bits_c ? g->bits_r : g->bits_c;
    const weft__group *group = weft__current_group(); /* the loop's */
    for (size_t code = lo; code < hi; code++) {
        /* A step of weft_for may hold many blocks: a cancel skips those
         * not started, as it skips a 1-D loop's pieces and steps. */
        if (WEFT__UNLIKELY(weft__group_cancelled(group)))
            return;
        size_t low = m ? code & (((size_t)1 << (2 * m)) - 1) : 0, high = code >> (2 * m);
        size_t i = even_bits(low >> 1), j = even_bits(low);
        if (g->bits_r > g->bits_c)
            i |= high << m;
        else
            j |= high << m;
        if (i >= g->nr || j >= g->nc)
            continue; /* past the rectangle: the codes run to powers of two */
        size_t r0 = g->r_begin + i * g->rb, c0 = g->c_begin + j * g->cb;
        size_t r1 = g->r_end - r0 > g->rb ? r0 + g->rb : g->r_end;
        size_t c1 = g->c_end - c0 > g->cb ? c0 + g->cb : g->c_end;
        g->body(r0, r1, c0, c1, g->arg);
    }
}

/* floor(sqrt(a)), at least 1, without libm (Newton's iteration). */
static size_t side_of(double a) {
    if (a <= 1)
        return 1;
    double s = a;
    for (int k = 0; k < 200 && s * s > a * (1 + 1e-9); k++)
        s = 0.5 * (s + a / s);
    return (size_t)s;
}

/* The block sides for grains 0 (weft's choice) or g: about
 * BLOCKS_PER_THREAD blocks a thread, square where both are weft's and the
 * rectangle is wide enough both ways. */
static void choose_blocks(grid *g, size_t rows, size_t cols, size_t r_grain, size_t c_grain,
                          unsigned threads) {
    size_t want = (size_t)BLOCKS_PER_THREAD * (threads ? threads : 1);
    g->rb = r_grain;
    g->cb = c_grain;
    if (!r_grain && !c_grain) {
        size_t side = side_of((double)rows * (double)cols / (double)want);
        if (rows <= side) { /* a strip: cut it across */
            g->rb = rows;
            g->cb = div_up(cols, want);
        } else if (cols <= side) {
            g->cb = cols;
            g->rb = div_up(rows, want);
        } else {
            g->rb = g->cb = side;
        }
    } else if (!r_grain) {
        g->rb = div_up(rows, div_up(want, div_up(cols, c_grain)));
    } else if (!c_grain) {
        g->cb = div_up(cols, div_up(want, div_up(rows, r_grain)));
    }
    g->rb = g->rb < rows ? g->rb : rows;
    g->cb = g->cb < cols ? g->cb : cols;
    /* The codes must fit a size_t: coarsen where a grain was too fine. */
    for (;;) {
        g->nr = div_up(rows, g->rb);
        g->nc = div_up(cols, g->cb);
        g->bits_r = bits_for(g->nr);
        g->bits_c = bits_for(g->nc);
        if (g->bits_r + g->bits_c < sizeof(size_t) * 8)
            return;
        if (g->nr > g->nc)
            g->rb = rows - g->rb > g->rb ? 2 * g->rb : rows;
        else
            g->cb = cols - g->cb > g->cb ? 2 * g->cb : cols;
    }
}

void weft_for_2d(weft_pool *pool, size_t r_begin, size_t r_end, size_t c_begin, size_t c_end,
                 size_t r_grain, size_t c_grain, weft_block_fn *body, void *arg) {
    if (!body) {
        assert(!"weft_for_2d: body is NULL"); /* release builds: a no-op (weft.h) */
        return;
    }
    if (r_begin >= r_end || c_begin >= c_end)
        return;
    weft_pool *p = weft__pool_resolve(pool);
    grid g = {.r_begin = r_begin,
              .r_end = r_end,
              .c_begin = c_begin,
              .c_end = c_end,
              .body = body,
              .arg = arg};
    choose_blocks(&g, r_end - r_begin, c_end - c_begin, r_grain, c_grain, p ? p->threads : 1);
    size_t codes = (size_t)1 << (g.bits_r + g.bits_c);
    weft_for(pool, 0, codes, 0, blocks, &g);
}
