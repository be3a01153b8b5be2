// parallel.h - a model's heavy steps split across threads that share one wasm memory (issue 26),
// with the bits of one thread: a job is cut into chunks (columns of a product, heads of attention
// and blocks of their query rows: heads.c),
// each chunk writes outputs no other chunk writes, and computes each of them with the sums the
// one-thread path does, in the same order. Not part of the API.
//
// The threads take the chunks from a shared counter, the next one as each finishes one: a thread
// the system holds up (its other threads, another process) delays no other, and no thread waits
// for a share fixed in advance. A chunk's scratch belongs to the thread that runs it.
//
// The threaded build (build.sh's attention-model-mt, -DATTN_THREADS, a shared memory) imports
// env.attn_parallel(fn, work, threads): web/model/threads/threads.js runs attn_run_part(fn, work, thread,
// threads) for threads 1 .. threads - 1 in its workers, each an instance of the same module over
// the same memory, runs thread 0 itself, and returns when every thread is done. Every other build,
// the native one among them, runs the chunks one after the other here, handing them to the
// threads' scratch in turn: the native tests split a job for 1 to 5 threads and compare the bits.
#ifndef ATTN_PARALLEL_H
#define ATTN_PARALLEL_H

#include <stddef.h>

enum { ATTN_MAX_THREADS = 16 };

// chunk `chunk` of `chunks` of a job, run by thread `thread` (0 .. attn_threads() - 1: whose scratch
// it uses); fn writes only what that chunk owns
typedef void (*attn_chunk_fn)(void *job, int chunk, int chunks, int thread);
// what a thread runs of a job (attn_run_part)
typedef void (*attn_part_fn)(void *work, int thread, int threads);

enum { ATTN_MAX_CHUNKS = 256 };   // a job's chunks at most (a status each, on the caller's stack)

// The threads every job is run on from now on, clamped to [1, ATTN_MAX_THREADS]; returns them.
// Exported: the threaded build's host calls it once its workers are up (and again with fewer
// when one is lost). A workspace sized before a change to more threads is too small for it.
int attn_set_threads(int threads);
int attn_threads(void);

// The chunks to cut a job of n items into (heads; units of 8 columns): 1 on one thread, else
// CHUNKS_PER_THREAD a thread, at most n and ATTN_MAX_CHUNKS.
int attn_chunks(int n);

// fn(job, chunk, chunks, thread) for every chunk in [0, chunks), chunks ≤ ATTN_MAX_CHUNKS, then return
void attn_run_chunks(attn_chunk_fn fn, void *job, int chunks);

// Exported, for the threaded build's workers (and the host's own thread): fn(work, thread, threads),
// which takes chunks of the job attn_parallel was given until none is left.
void attn_run_part(attn_part_fn fn, void *work, int thread, int threads);

// Items [*i0, *i1) of n (heads, rows) for chunk `chunk` of `chunks`: shared out evenly, in order.
void attn_part_range(int *i0, int *i1, int n, int chunk, int chunks);

// The first status that is not ATTN_OK among the chunks' (a job's chunks in order: the status the
// one-thread loop stops at), or ATTN_OK.
int attn_first_failure(const int *status, int chunks);

// Columns [c0, c1) of chunk `chunk` of `chunks`, for p columns in units of 8 (the kernels' strips
// and panels start at multiples of 8), in order, the last chunk ending at p: the chunks shrink
// from the first to the last (the first about 2 / chunks of the units, the last about
// 1 / chunks²), so that the threads end a job at nearly the same time.
void attn_part_columns(int *c0, int *c1, int p, int chunk, int chunks);

// What a product's job does to each chunk's columns [c0, c1) of out (n, p), every row, once they
// are computed and while they are in cache: an elementwise step (GELU; SwiGLU, ctx the up
// product), the residual add (ctx the stream), a check that they are finite. Elementwise: the
// chunks give what one call and the step over all of it give. Returns ATTN_OK or the chunk's
// status; a job returns the first chunk's that is not ATTN_OK (attn_first_failure).
typedef int (*attn_cols_fn)(void *ctx, float *out, int n, int p, int c0, int c1);

// The linear kernels, their columns cut into chunks (internal.h has the kernels), each then
// after(ctx, out, …) on its columns (after may be NULL); each returns the job's status.
// out (n, p) = a (n, k)·wᵀ + b, w (p, k) in dtype; scratch: attn_threads() ×
// attn_linear_scratch_floats(k) floats (or NULL as attn_linear_t_fast allows)
int attn_linear_t_par(float *out, const float *a, const void *w, int dtype, const float *b,
                      int n, int k, int p, float *scratch, attn_cols_fn after, void *ctx);
// The gated product of a LLaMA MLP in one job: gate (n, p) = a·w_gateᵀ + b_gate and up (n, p) =
// a·w_upᵀ + b_up, then after(ctx, gate, …) (SwiGLU, ctx = up). A bias may be NULL.
int attn_linear_t_par_gated(float *gate, float *up, const float *a, const void *w_gate, int gate_dtype,
                            const float *b_gate, const void *w_up, int up_dtype, const float *b_up,
                            int n, int k, int p, float *scratch, attn_cols_fn after, void *ctx);
// out (n, p) = a (n, k)·w + b, w packed (attn_pack_fast)
int attn_linear_par(float *out, const float *a, const float *packed, const float *b, int n, int k, int p,
                    attn_cols_fn after, void *ctx);

// Steps for `after`: the chunk's columns of out all finite (else ATTN_ERR_OVERFLOW; ctx unused);
// h (n, p) += out on the chunk's columns, then those of h all finite (ctx = h: the residual add).
int attn_cols_finite(void *ctx, float *out, int n, int p, int c0, int c1);
int attn_cols_residual(void *ctx, float *out, int n, int p, int c0, int c1);

#endif // ATTN_PARALLEL_H
