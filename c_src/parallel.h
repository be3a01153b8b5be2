// parallel.h - a model's heavy steps split across threads that share one wasm memory (issue 26),
// with the bits of one thread: each part writes outputs no other part writes, and computes each of
// them with the sums the one-thread path does, in the same order. Not part of the API.
//
// The threaded build (build.sh's attention-model-mt, -DATTN_THREADS, a shared memory) imports
// env.attn_parallel(fn, job, parts): web/model/threads.js runs attn_run_part(fn, job, part, parts)
// for parts 1 .. parts - 1 in its workers, each an instance of the same module over the same
// memory, runs part 0 itself, and returns when every part is done. Every other build, the native
// one among them, runs the parts one after the other here: the native tests split a job into 1 to
// 5 parts and compare the bits.
#ifndef ATTN_PARALLEL_H
#define ATTN_PARALLEL_H

#include <stddef.h>

enum { ATTN_MAX_THREADS = 16 };

// part `part` of `parts` of a job; fn writes only what that part owns
typedef void (*attn_part_fn)(void *job, int part, int parts);

// The parts every job is split into from now on, clamped to [1, ATTN_MAX_THREADS]; returns them.
// Exported: the threaded build's host calls it once its workers are up (and again with fewer
// when one is lost). A workspace sized before a change to more parts is too small for it.
int attn_set_threads(int parts);
int attn_threads(void);

// fn(job, part, attn_threads()) for every part, then return
void attn_run_parts(attn_part_fn fn, void *job);

// Exported, for the threaded build's workers (and the host's own part): fn(job, part, parts).
void attn_run_part(attn_part_fn fn, void *job, int part, int parts);

// Items [*i0, *i1) of n (heads, rows) for part `part` of `parts`: shared out evenly, in order.
void attn_part_range(int *i0, int *i1, int n, int part, int parts);

// The first status that is not ATTN_OK among the parts' (a job's parts in order: the status the
// one-thread loop stops at), or ATTN_OK.
int attn_first_failure(const int *status, int parts);

// Columns [c0, c1) of part `part` of `parts`, for p columns in units of 8 (the kernels' strips and
// panels start at multiples of 8): the units shared out evenly, the last part ends at p.
void attn_part_columns(int *c0, int *c1, int p, int part, int parts);

// The linear kernels, their columns split across the parts (internal.h has the kernels):
// out (n, p) = a (n, k)·wᵀ + b, w (p, k) in dtype; scratch: attn_threads() ×
// attn_linear_scratch_floats(k) floats (or NULL as attn_linear_t_fast allows)
void attn_linear_t_par(float *out, const float *a, const void *w, int dtype, const float *b,
                       int n, int k, int p, float *scratch);
// out (n, p) = a (n, k)·w + b, w packed (attn_pack_fast)
void attn_linear_par(float *out, const float *a, const float *packed, const float *b, int n, int k, int p);

#endif // ATTN_PARALLEL_H
