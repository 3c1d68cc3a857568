/* SPDX-License-Identifier: MIT */
/* The size of a directory tree, walked in parallel with a scope.
 *
 * Each directory is a job of one scope: it adds up the sizes of its files and
 * spawns one job per subdirectory into the same scope. weft_scope_run returns
 * when the whole tree is done, however deep it is, so nobody has to count the
 * outstanding directories. Symbolic links are counted, not followed.
 *
 *   example_dirsize [path]     (default: .)
 * prints "<bytes> bytes in <files> files and <dirs> directories".
 */
#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <weft.h>

typedef struct walk {
    weft_scope *scope;
    _Atomic uint64_t bytes, files, dirs, errors; /* totals, added once per directory */
} walk;

typedef struct dir_job {
    walk *walk;
    char path[]; /* owned by the job, freed when it ends */
} dir_job;

static void visit_dir(void *arg);

/* Queue a job for directory `path` in the walk's scope. */
static void spawn_dir(walk *w, const char *path) {
    size_t len = strlen(path) + 1;
    dir_job *job = malloc(sizeof *job + len);
    if (!job) {
        atomic_fetch_add(&w->errors, 1);
        return;
    }
    job->walk = w;
    memcpy(job->path, path, len);
    /* The job may run on any worker, now or later; the scope waits for it. */
    if (weft_scope_spawn(w->scope, visit_dir, job) != 0)
        visit_dir(job); /* out of memory for the job: walk it here instead */
}

static void visit_dir(void *arg) {
    dir_job *job = arg;
    walk *w = job->walk;
    uint64_t bytes = 0, files = 0;
    DIR *d = opendir(job->path);
    if (!d) {
        atomic_fetch_add(&w->errors, 1);
        free(job);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char child[4096];
        int n = snprintf(child, sizeof child, "%s/%s", job->path, e->d_name);
        struct stat st;
        if (n < 0 || (size_t)n >= sizeof child || lstat(child, &st) != 0) {
            atomic_fetch_add(&w->errors, 1);
        } else if (S_ISDIR(st.st_mode)) {
            spawn_dir(w, child);
        } else {
            bytes += (uint64_t)st.st_size;
            files++;
        }
    }
    closedir(d);
    /* One atomic add per directory, not per file. */
    atomic_fetch_add(&w->bytes, bytes);
    atomic_fetch_add(&w->files, files);
    atomic_fetch_add(&w->dirs, 1);
    free(job);
}

typedef struct walk_args {
    walk *walk;
    const char *root;
} walk_args;

/* The scope's body: remember the scope, start at the root. */
static void walk_body(weft_scope *scope, void *arg) {
    walk_args *a = arg;
    a->walk->scope = scope;
    spawn_dir(a->walk, a->root);
}

int main(int argc, char **argv) {
    walk w = {0};
    walk_args a = {&w, argc > 1 ? argv[1] : "."};
    weft_scope_run(NULL, walk_body, &a); /* returns when every directory is done */
    /* weft_scope_run made every job's additions visible to this thread. */
    printf("%llu bytes in %llu files and %llu directories\n",
           (unsigned long long)atomic_load(&w.bytes), (unsigned long long)atomic_load(&w.files),
           (unsigned long long)atomic_load(&w.dirs));
    if (atomic_load(&w.errors)) {
        fprintf(stderr, "%llu entries could not be read\n",
                (unsigned long long)atomic_load(&w.errors));
        return 1;
    }
    return 0;
}
