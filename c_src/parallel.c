// parallel.c - jobs cut into chunks for the threads (parallel.h), and the linear kernels' jobs.
#include "parallel.h"
#include "internal.h"  // attn_linear_fast_cols, attn_linear_t_cols
#include "tensor.h"    // ATTN_F32, attn_linear_scratch_floats

#ifdef ATTN_THREADS
// web/model/threads/threads.js: runs fn(work, thread, threads) on every thread, thread 0 in this one, and
// returns when all are done
__attribute__((import_module("env"), import_name("attn_parallel")))
void attn_parallel(attn_part_fn fn, void *work, int threads);
#endif

// chunks per thread: enough that a thread held up for a while leaves its share to the others,
// few enough that each chunk is still a block of work for the kernels
enum { CHUNKS_PER_THREAD = 4 };

static int threads = 1;

int attn_set_threads(int n) {
    threads = n < 1 ? 1 : n > ATTN_MAX_THREADS ? ATTN_MAX_THREADS : n;
    return threads;
}

int attn_threads(void) { return threads; }

int attn_chunks(int n) {
    if (threads == 1 || n < 1) return 1;
    int chunks = threads * CHUNKS_PER_THREAD;
    if (chunks > n) chunks = n;
    return chunks > ATTN_MAX_CHUNKS ? ATTN_MAX_CHUNKS : chunks;
}


#ifdef ATTN_THREADS
// a job on the threads: the next chunk to take, shared by them (on the caller's stack)
typedef struct {
    attn_chunk_fn fn;
    void *job;
    int chunks;
    int next;
} chunk_work;

// what each thread runs: chunks, as long as any is left
static void take_chunks(void *work, int thread, int threads_) {
    (void)threads_;
    chunk_work *w = work;
    for (int c; (c = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->chunks;)
        w->fn(w->job, c, w->chunks, thread);
}
#endif

void attn_run_chunks(attn_chunk_fn fn, void *job, int chunks) {
#ifdef ATTN_THREADS
    if (threads > 1 && chunks > 1) {
        chunk_work work = {fn, job, chunks, 0};
        attn_parallel(take_chunks, &work, threads);
        return;
    }
#endif
    // one after the other, each thread's scratch in turn (the native tests' split)
    for (int c = 0; c < chunks; c++) fn(job, c, chunks, c % threads);
}

void attn_run_part(attn_part_fn fn, void *work, int thread, int threads_) { fn(work, thread, threads_); }

void attn_part_range(int *i0, int *i1, int n, int chunk, int chunks) {
    *i0 = (int)((long)n * chunk / chunks);
    *i1 = (int)((long)n * (chunk + 1) / chunks);
}

int attn_first_failure(const int *status, int chunks) {
    for (int c = 0; c < chunks; c++)
        if (status[c] != 0) return status[c];
    return 0;
}

// Where chunk `chunk` of `chunks` starts, in units: the chunks shrink as the job goes on
// (chunk c is about (2·(chunks - c) - 1) / chunks² of the whole), so the last ones, which a
// thread takes when the other is about to finish, are small: the wait at a job's end is at
// most one small chunk, not one average chunk.
static long shrinking_start(long units, int chunk, int chunks) {
    const long left = chunks - chunk;
    return units - units * left * left / ((long)chunks * chunks);
}

void attn_part_columns(int *c0, int *c1, int p, int chunk, int chunks) {
    const long units = (p + 7) / 8;
    *c0 = (int)(8 * shrinking_start(units, chunk, chunks));
    *c1 = chunk == chunks - 1 ? p : (int)(8 * shrinking_start(units, chunk + 1, chunks));
    if (*c0 > p) *c0 = p;
    if (*c1 > p) *c1 = p;
}

// ----------------------------------------------------------------------------
// the linear kernels' jobs: one per call, on the calling thread's stack, in chunks of columns

// out (n, p) = a·wᵀ + b (w (p, k) in dtype), or a·w + b (w packed)
typedef struct {
    float *out;
    const void *w;
    const float *b;
    int dtype;
} product;

typedef struct {
    product mat[2];            // one product, or the gated job's gate and up (mat[1].out NULL for one)
    const float *a;
    float *scratch;            // attn_threads() × attn_linear_scratch_floats(k), or NULL
    attn_cols_fn after;        // or NULL
    void *ctx;
    int n, k, p, packed;
    int status[ATTN_MAX_CHUNKS];
} linear_job;

static void linear_chunk(void *job, int chunk, int chunks, int thread) {
    linear_job *j = job;
    int c0, c1;
    attn_part_columns(&c0, &c1, j->p, chunk, chunks);
    j->status[chunk] = ATTN_OK;
    if (c0 >= c1) return;
    float *scratch = j->scratch ? j->scratch + (size_t)thread * attn_linear_scratch_floats(j->k) : NULL;
    for (int i = 0; i < 2 && j->mat[i].out; i++) {
        const product *m = &j->mat[i];
        if (j->packed) attn_linear_fast_cols(m->out, j->a, m->w, m->b, j->n, j->k, j->p, c0, c1);
        else attn_linear_t_cols(m->out, j->a, m->w, m->dtype, m->b, j->n, j->k, j->p, scratch, c0, c1);
    }
    if (j->after) j->status[chunk] = j->after(j->ctx, j->mat[0].out, j->n, j->p, c0, c1);
}

static int run_linear(linear_job *job) {
    const int chunks = attn_chunks((job->p + 7) / 8);   // units of 8 columns (attn_part_columns)
    attn_run_chunks(linear_chunk, job, chunks);
    return attn_first_failure(job->status, chunks);
}

int attn_linear_t_par(float *out, const float *a, const void *w, int dtype, const float *b,
                      int n, int k, int p, float *scratch, attn_cols_fn after, void *ctx) {
    linear_job job = {.mat = {{out, w, b, dtype}}, .a = a, .scratch = scratch, .after = after, .ctx = ctx,
                      .n = n, .k = k, .p = p};
    return run_linear(&job);
}

int attn_linear_t_par_gated(float *gate, float *up, const float *a, const void *w_gate, int gate_dtype,
                            const float *b_gate, const void *w_up, int up_dtype, const float *b_up,
                            int n, int k, int p, float *scratch, attn_cols_fn after, void *ctx) {
    linear_job job = {.mat = {{gate, w_gate, b_gate, gate_dtype}, {up, w_up, b_up, up_dtype}}, .a = a,
                      .scratch = scratch, .after = after, .ctx = ctx, .n = n, .k = k, .p = p};
    return run_linear(&job);
}

int attn_linear_par(float *out, const float *a, const float *packed, const float *b, int n, int k, int p,
                    attn_cols_fn after, void *ctx) {
    linear_job job = {.mat = {{out, packed, b, ATTN_F32}}, .a = a, .after = after, .ctx = ctx,
                      .n = n, .k = k, .p = p, .packed = 1};
    return run_linear(&job);
}

// ----------------------------------------------------------------------------
// steps for `after` that every model takes

int attn_cols_finite(void *ctx, float *out, int n, int p, int c0, int c1) {
    (void)ctx;
    for (int i = 0; i < n; i++)
        if (!all_finite(out + (size_t)i * p + c0, (size_t)(c1 - c0))) return ATTN_ERR_OVERFLOW;
    return ATTN_OK;
}

int attn_cols_residual(void *ctx, float *out, int n, int p, int c0, int c1) {
    float *h = ctx;
    for (int i = 0; i < n; i++) {
        float *hi = h + (size_t)i * p, *yi = out + (size_t)i * p;
        for (int c = c0; c < c1; c++) hi[c] += yi[c];
    }
    return attn_cols_finite(NULL, h, n, p, c0, c1);
}
