/* SPDX-License-Identifier: MIT */
/* A box blur with weft_for, checked against the same blur run serially.
 *
 * The blur is separable: a horizontal pass (each output row reads one input
 * row) then a vertical pass (each output row reads 2R+1 rows of the first
 * pass). Rows are independent within a pass, so each pass is one weft_for over
 * the rows; the two passes run one after the other because weft_for returns
 * only when every row is done. The image is generated in memory.
 *
 *   example_blur [width height]     (default: 1920 1080)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#define R 4 /* blur radius: each pixel averages a (2R+1) x (2R+1) box */

typedef struct image {
    int width, height;
    uint8_t *pixels; /* row-major, one byte per pixel */
} image;

typedef struct blur_pass {
    const image *src;
    image *dst;
} blur_pass;

static int clamp(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* Rows [begin, end) of the horizontal pass; edges repeat the border pixel. */
static void blur_rows_horizontal(size_t begin, size_t end, void *arg) {
    blur_pass *p = arg;
    int w = p->src->width;
    for (size_t y = begin; y < end; y++) {
        const uint8_t *in = p->src->pixels + y * (size_t)w;
        uint8_t *out = p->dst->pixels + y * (size_t)w;
        for (int x = 0; x < w; x++) {
            int sum = 0;
            for (int k = -R; k <= R; k++)
                sum += in[clamp(x + k, 0, w - 1)];
            out[x] = (uint8_t)(sum / (2 * R + 1));
        }
    }
}

/* Rows [begin, end) of the vertical pass. */
static void blur_rows_vertical(size_t begin, size_t end, void *arg) {
    blur_pass *p = arg;
    int w = p->src->width, h = p->src->height;
    for (size_t y = begin; y < end; y++) {
        uint8_t *out = p->dst->pixels + y * (size_t)w;
        for (int x = 0; x < w; x++) {
            int sum = 0;
            for (int k = -R; k <= R; k++)
                sum += p->src->pixels[(size_t)clamp((int)y + k, 0, h - 1) * (size_t)w + (size_t)x];
            out[x] = (uint8_t)(sum / (2 * R + 1));
        }
    }
}

static void blur_parallel(const image *in, image *tmp, image *out) {
    blur_pass horizontal = {in, tmp}, vertical = {tmp, out};
    /* grain 0: weft picks the pieces (a few per worker, more where one was
     * stolen). Rows cost the same, so that is all the balancing needed. */
    weft_for(NULL, 0, (size_t)in->height, 0, blur_rows_horizontal, &horizontal);
    /* grain 16: pieces of 16 to 31 rows, the same on every run. */
    weft_for(NULL, 0, (size_t)in->height, 16, blur_rows_vertical, &vertical);
}

static void blur_serial(const image *in, image *tmp, image *out) {
    blur_pass horizontal = {in, tmp}, vertical = {tmp, out};
    blur_rows_horizontal(0, (size_t)in->height, &horizontal);
    blur_rows_vertical(0, (size_t)in->height, &vertical);
}

static image image_new(int width, int height) {
    image im = {width, height, calloc((size_t)width * (size_t)height, 1)};
    return im;
}

int main(int argc, char **argv) {
    int w = argc > 2 ? atoi(argv[1]) : 1920, h = argc > 2 ? atoi(argv[2]) : 1080;
    if (w <= 0 || h <= 0) {
        fprintf(stderr, "usage: %s [width height]\n", argv[0]);
        return 2;
    }
    image in = image_new(w, h), tmp = image_new(w, h);
    image serial = image_new(w, h), parallel = image_new(w, h);
    if (!in.pixels || !tmp.pixels || !serial.pixels || !parallel.pixels) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    /* A test card: diagonal stripes with a checkerboard of noise on top. */
    uint32_t noise = 2463534242u;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            noise ^= noise << 13;
            noise ^= noise >> 17;
            noise ^= noise << 5;
            int stripe = ((x + y) / 32) % 2 ? 200 : 40;
            int check = ((x / 8 + y / 8) % 2) ? (int)(noise % 48) : 0;
            in.pixels[(size_t)y * (size_t)w + (size_t)x] = (uint8_t)(stripe + check);
        }
    }

    blur_serial(&in, &tmp, &serial);
    memset(tmp.pixels, 0, (size_t)w * (size_t)h);
    blur_parallel(&in, &tmp, &parallel);

    int ok = memcmp(serial.pixels, parallel.pixels, (size_t)w * (size_t)h) == 0;
    printf("blurred a %dx%d image (radius %d) on %u workers: %s\n", w, h, R,
           weft_pool_threads(NULL), ok ? "same as the serial blur" : "DIFFERENT from serial");
    free(in.pixels);
    free(tmp.pixels);
    free(serial.pixels);
    free(parallel.pixels);
    return ok ? 0 : 1;
}
