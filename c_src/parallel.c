// parallel.c - jobs split into parts (parallel.h): the parts, and the linear kernels' jobs.
#include "parallel.h"
#include "internal.h"  // attn_linear_fast_cols, attn_linear_t_cols
#include "tensor.h"    // ATTN_F32, attn_linear_scratch_floats

#ifdef ATTN_THREADS
// web/model/threads.js: runs every part, part 0 in this thread, and returns when all are done
__attribute__((import_module("env"), import_name("attn_parallel")))
void attn_parallel(attn_part_fn fn, void *job, int parts);
#endif

static int threads = 1;

int attn_set_threads(int parts) {
    threads = parts < 1 ? 1 : parts > ATTN_MAX_THREADS ? ATTN_MAX_THREADS : parts;
    return threads;
}

int attn_threads(void) { return threads; }

void attn_run_parts(attn_part_fn fn, void *job) {
#ifdef ATTN_THREADS
    if (threads > 1) {
        attn_parallel(fn, job, threads);
        return;
    }
#endif
    for (int part = 0; part < threads; part++) fn(job, part, threads);
}

void attn_run_part(attn_part_fn fn, void *job, int part, int parts) { fn(job, part, parts); }

void attn_part_range(int *i0, int *i1, int n, int part, int parts) {
    *i0 = (int)((long)n * part / parts);
    *i1 = (int)((long)n * (part + 1) / parts);
}

int attn_first_failure(const int *status, int parts) {
    for (int part = 0; part < parts; part++)
        if (status[part] != 0) return status[part];
    return 0;
}

void attn_part_columns(int *c0, int *c1, int p, int part, int parts) {
    const long units = (p + 7) / 8;
    *c0 = (int)(8 * (units * part / parts));
    *c1 = part == parts - 1 ? p : (int)(8 * (units * (part + 1) / parts));
    if (*c0 > p) *c0 = p;
    if (*c1 > p) *c1 = p;
}

// ----------------------------------------------------------------------------
// the linear kernels' jobs: one per call, on the calling thread's stack

typedef struct {
    float *out;
    const float *a, *b;
    const void *w;
    float *scratch;
    int dtype, n, k, p;
} linear_job;

static void linear_t_part(void *job, int part, int parts) {
    const linear_job *j = job;
    int c0, c1;
    attn_part_columns(&c0, &c1, j->p, part, parts);
    if (c0 >= c1) return;
    float *scratch = j->scratch ? j->scratch + (size_t)part * attn_linear_scratch_floats(j->k) : NULL;
    attn_linear_t_cols(j->out, j->a, j->w, j->dtype, j->b, j->n, j->k, j->p, scratch, c0, c1);
}

static void linear_packed_part(void *job, int part, int parts) {
    const linear_job *j = job;
    int c0, c1;
    attn_part_columns(&c0, &c1, j->p, part, parts);
    if (c0 < c1) attn_linear_fast_cols(j->out, j->a, j->w, j->b, j->n, j->k, j->p, c0, c1);
}

void attn_linear_t_par(float *out, const float *a, const void *w, int dtype, const float *b,
                       int n, int k, int p, float *scratch) {
    linear_job job = {out, a, b, w, scratch, dtype, n, k, p};
    attn_run_parts(linear_t_part, &job);
}

void attn_linear_par(float *out, const float *a, const float *packed, const float *b, int n, int k, int p) {
    linear_job job = {out, a, b, packed, NULL, ATTN_F32, n, k, p};
    attn_run_parts(linear_packed_part, &job);
}
