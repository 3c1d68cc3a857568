/* SPDX-License-Identifier: MIT */
/* A frame's render passes as a weft_graph: built once, run every frame.
 *
 *   animate --+--> shadows ---+
 *             +--> gbuffer ---+--> lighting --+
 *             +--> particles -----------------+--> post --+
 *   ui -------------------------------------------------+--> present
 *
 * Passes without a path between them (shadows, gbuffer, particles and ui)
 * run in parallel, and each pass is itself a weft_for over its pixels, so
 * idle workers help with whichever passes are ready. The graph owns one job
 * per node: running it every frame allocates nothing. Each frame's checksum
 * is compared with the same passes run serially in dependency order.
 *
 *   example_render_graph [frames]     (default: 60)
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <weft.h>

#define OBJECTS 4096        /* animated transforms */
#define PIXELS  (256 * 256) /* every render target */
#define GRAIN   1024        /* pixels per piece: a few microseconds of work */

typedef struct scene {
    weft_pool *pool;
    uint32_t frame;
    uint32_t transforms[OBJECTS];
    uint32_t shadows[PIXELS], gbuffer[PIXELS], particles[PIXELS];
    uint32_t lighting[PIXELS], post[PIXELS], ui[PIXELS];
    _Atomic uint64_t checksum; /* of the presented frame */
} scene;

static uint32_t mix(uint32_t x) { /* stands in for real shading work */
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

/* The passes, each over [begin, end) of its output. */
static void animate(size_t b, size_t e, void *arg) {
    scene *s = arg;
    for (size_t i = b; i < e; i++)
        s->transforms[i] = mix(s->frame * OBJECTS + (uint32_t)i);
}
static void shadows(size_t b, size_t e, void *arg) {
    scene *s = arg;
    for (size_t p = b; p < e; p++)
        s->shadows[p] = mix(s->transforms[p % OBJECTS] ^ (uint32_t)p);
}
static void gbuffer(size_t b, size_t e, void *arg) {
    scene *s = arg;
    for (size_t p = b; p < e; p++)
        s->gbuffer[p] = mix(s->transforms[p * 7 % OBJECTS] + (uint32_t)p);
}
static void particles(size_t b, size_t e, void *arg) {
    scene *s = arg;
    for (size_t p = b; p < e; p++)
        s->particles[p] = mix(s->transforms[p % OBJECTS] + s->frame);
}
static void lighting(size_t b, size_t e, void *arg) {
    scene *s = arg;
    for (size_t p = b; p < e; p++)
        s->lighting[p] = (s->gbuffer[p] >> 3) + (s->shadows[p] >> 5);
}
static void post(size_t b, size_t e, void *arg) {
    scene *s = arg;
    for (size_t p = b; p < e; p++)
        s->post[p] = s->lighting[p] ^ (s->particles[p] >> 7);
}
static void ui(size_t b, size_t e, void *arg) {
    scene *s = arg;
    for (size_t p = b; p < e; p++)
        s->ui[p] = p % 97 == 0 ? s->frame : 0;
}
static void present(size_t b, size_t e, void *arg) {
    scene *s = arg;
    uint64_t sum = 0;
    for (size_t p = b; p < e; p++)
        sum += s->post[p] + s->ui[p];
    atomic_fetch_add_explicit(&s->checksum, sum, memory_order_relaxed);
}

typedef struct pass {
    weft_range_fn *body;
    size_t size;
    scene *scene;
} pass;

/* A graph node: one pass, itself parallel. */
static void run_pass(void *arg) {
    pass *p = arg;
    weft_for(p->scene->pool, 0, p->size, GRAIN, p->body, p->scene);
}

enum { ANIMATE, SHADOWS, GBUFFER, PARTICLES, LIGHTING, POST, UI, PRESENT, PASSES };

/* Which pass waits for which: {before, after}. */
static const int edges[][2] = {
    {ANIMATE, SHADOWS},  {ANIMATE, GBUFFER},  {ANIMATE, PARTICLES},
    {SHADOWS, LIGHTING}, {GBUFFER, LIGHTING}, {LIGHTING, POST},
    {PARTICLES, POST},   {POST, PRESENT},     {UI, PRESENT},
};

int main(int argc, char **argv) {
    unsigned frames = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 60;
    scene *s = calloc(1, sizeof *s);
    weft_graph *graph;
    if (!s || weft_graph_create(&graph) != 0)
        return 1;
    s->pool = weft_pool_default();
    pass passes[PASSES] = {
        [ANIMATE] = {animate, OBJECTS, s},
        [SHADOWS] = {shadows, PIXELS, s},
        [GBUFFER] = {gbuffer, PIXELS, s},
        [PARTICLES] = {particles, PIXELS, s},
        [LIGHTING] = {lighting, PIXELS, s},
        [POST] = {post, PIXELS, s},
        [UI] = {ui, PIXELS, s},
        [PRESENT] = {present, PIXELS, s},
    };

    /* Build the graph once. */
    weft_node *nodes[PASSES];
    for (int i = 0; i < PASSES; i++)
        if (weft_graph_add(graph, run_pass, &passes[i], &nodes[i]) != 0)
            return 1;
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        if (weft_graph_edge(graph, nodes[edges[i][0]], nodes[edges[i][1]]) != 0)
            return 1;

    int wrong = 0;
    for (s->frame = 0; s->frame < frames; s->frame++) {
        /* Every frame: the whole graph in the pool; returns when present ran. */
        atomic_store(&s->checksum, 0);
        int err = weft_graph_run(graph, s->pool);
        uint64_t parallel = atomic_load(&s->checksum);

        /* The reference: the same passes, one after the other, in an order
         * that respects every edge (the enum's). */
        atomic_store(&s->checksum, 0);
        for (int i = 0; i < PASSES; i++)
            passes[i].body(0, passes[i].size, s);
        uint64_t serial = atomic_load(&s->checksum);
        if (err || parallel != serial) {
            fprintf(stderr, "frame %u: graph %llu (error %d), serial %llu\n", s->frame,
                    (unsigned long long)parallel, err, (unsigned long long)serial);
            wrong++;
        }
    }
    printf("rendered %u frames of %d passes on %u workers: %s\n", frames, PASSES,
           weft_pool_threads(s->pool), wrong ? "MISMATCH" : "every frame as the serial passes");
    weft_graph_destroy(graph);
    free(s);
    return wrong ? 1 : 0;
}
