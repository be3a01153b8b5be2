// test_parallel.c - parallel.h's jobs cut into chunks for 1 to 5 threads give the bits of one
// thread (issue 26): the native build runs the chunks one after the other (each thread's scratch
// in turn), so what is tested here is that the chunks own disjoint columns, cover them all, and
// sum each one as the whole call does. The wasm threads run the same chunks at once, whichever
// takes which (tests/unit/model-threads.test.js).
#include "parallel.h"
#include "tensor.h"
#include "internal.h"

#define TEST_SEED 0x7A11E1ull
#include "check.h"
#include "typed.h"

#include <stdint.h>

// every chunk's columns: disjoint, in order, covering [0, p), starting at multiples of 8 (or
// empty at p: a small job's last chunks may have nothing left); and
// shrinking: no chunk is wider than the one before it by more than the 8-column rounding
static void test_columns(void) {
    for (int p = 1; p <= 70; p++) {
        for (int parts = 1; parts <= 9; parts++) {
            int next = 0, last_width = p;
            for (int part = 0; part < parts; part++) {
                int c0, c1;
                attn_part_columns(&c0, &c1, p, part, parts);
                CHECK(c0 == next && c1 >= c0 && (c0 % 8 == 0 || c0 == p), "p %d parts %d part %d: [%d, %d) after %d", p, parts, part, c0, c1, next);
                CHECK(c1 - c0 <= last_width + 8, "p %d parts %d part %d: %d columns after %d", p, parts, part, c1 - c0, last_width);
                next = c1;
                last_width = c1 - c0;
            }
            CHECK(next == p, "p %d parts %d: the parts end at %d", p, parts, next);
        }
    }
    // GPT-2's c_attn (2304 columns) in 8 chunks: the first is the widest, the last a strip or two
    int c0, c1, w0;
    attn_part_columns(&c0, &c1, 2304, 0, 8);
    w0 = c1 - c0;
    attn_part_columns(&c0, &c1, 2304, 7, 8);
    CHECK(w0 == 8 * 68 && c1 - c0 == 8 * 4 && c1 == 2304, "2304 columns in 8: first %d, last [%d, %d)", w0, c0, c1);
}

// attn_linear_t_par_gated's step after each chunk (ctx = up), for the test below
static int gate_times_up_plus_one(void *ctx, float *gate, int n, int p, int c0, int c1) {
    const float *up = ctx;
    for (int i = 0; i < n; i++)
        for (int c = c0; c < c1; c++) gate[(size_t)i * p + c] = gate[(size_t)i * p + c] * up[(size_t)i * p + c] + 1.0f;
    return ATTN_OK;
}

// attn_linear_t_par on 2 to 5 threads (F32, BF16, F16, in panels or not; one row or several) has
// the bits of one thread; attn_linear_t_par_gated (here w with b as the gate, w without a bias
// as up) on 1 to 5 threads, the gate on each chunk's columns, gives what two products and the
// gate over all of it give
static void test_linear_t(void) {
    enum { FIXED = 7, RANDOM = 8 };
    int shapes[FIXED + RANDOM][3] = {{1, 16, 40}, {1, 12, 37}, {3, 20, 9}, {5, 64, 300}, {2, 7, 33}, {6, 300, 130}, {1, 8, 517}};
    for (int s = FIXED; s < FIXED + RANDOM; s++) {
        shapes[s][0] = randint(1, 9); shapes[s][1] = 4 * randint(1, 40) + randint(0, 1) * randint(1, 3); shapes[s][2] = randint(1, 400);
    }
    for (int dt = 0; dt < 3; dt++) {
        for (int s = 0; s < FIXED + RANDOM; s++) {
            const int n = shapes[s][0], k = shapes[s][1], p = shapes[s][2];
            typed w = random_typed((size_t)p * k, dt, 1.0f);
            if (dt != ATTN_F32 && k % 4 == 0) {
                uint16_t *tmp = malloc((size_t)8 * k * sizeof *tmp);
                w.dtype = attn_panel8(w.data, dt, p, k, tmp);
                free(tmp);
            }
            float *a = randmat((size_t)n * k, -1, 1), *b = randmat((size_t)p, -1, 1);
            float *one = malloc((size_t)n * p * sizeof *one), *split = malloc((size_t)n * p * sizeof *split);
            float *scratch = malloc((size_t)ATTN_MAX_THREADS * attn_linear_scratch_floats(k) * sizeof *scratch);
            attn_set_threads(1);
            attn_linear_t_par(one, a, w.data, w.dtype, b, n, k, p, scratch, NULL, NULL);
            for (int parts = 2; parts <= 5; parts++) {
                memset(split, 0xff, (size_t)n * p * sizeof *split);   // NaN wherever no part wrote
                CHECK(attn_set_threads(parts) == parts, "parts");
                attn_linear_t_par(split, a, w.data, w.dtype, b, n, k, p, scratch, NULL, NULL);
                CHECK(memcmp(one, split, (size_t)n * p * sizeof *one) == 0,
                      "linear_t dtype %d n %d k %d p %d: %d parts differ from one", w.dtype, n, k, p, parts);
            }
            float *up = malloc((size_t)n * p * sizeof *up), *gated_up = malloc((size_t)n * p * sizeof *up);
            attn_set_threads(1);
            attn_linear_t_par(up, a, w.data, w.dtype, NULL, n, k, p, scratch, NULL, NULL);
            gate_times_up_plus_one(up, one, n, p, 0, p);
            for (int threads = 1; threads <= 5; threads++) {
                memset(split, 0xff, (size_t)n * p * sizeof *split);
                attn_set_threads(threads);
                attn_linear_t_par_gated(split, gated_up, a, w.data, w.dtype, b, w.data, w.dtype, NULL, n, k, p, scratch,
                                        gate_times_up_plus_one, gated_up);
                CHECK(memcmp(one, split, (size_t)n * p * sizeof *one) == 0 && memcmp(up, gated_up, (size_t)n * p * sizeof *up) == 0,
                      "gated dtype %d n %d k %d p %d: %d threads differ", w.dtype, n, k, p, threads);
            }
            free(up); free(gated_up);
            attn_set_threads(1);
            free(a); free(b); free(one); free(split); free(scratch); free_typed(&w);
        }
    }
}

// an elementwise step after each chunk, for the test below
static int square_less_one(void *ctx, float *x, int n, int p, int c0, int c1) {
    (void)ctx;
    for (int i = 0; i < n; i++)
        for (int c = c0; c < c1; c++) x[(size_t)i * p + c] = x[(size_t)i * p + c] * x[(size_t)i * p + c] - 1.0f;
    return ATTN_OK;
}

// attn_linear_par (the packed kernel, GPT-2's layers) on 2 to 5 threads, across its blocks of 256
// columns and 128 rows, has the bits of one thread; with a step after each chunk, on 1 to 5
// threads, what the whole product and the step over all of it give; with attn_cols_residual,
// h + the product, and ATTN_OK
static void test_linear_packed(void) {
    const int shapes[][3] = {{1, 16, 40}, {4, 130, 300}, {7, 5, 37}, {3, 260, 513}, {9, 64, 777}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const int n = shapes[s][0], k = shapes[s][1], p = shapes[s][2];
        float *w = randmat((size_t)k * p, -1, 1), *packed = malloc((size_t)k * p * sizeof *packed);
        float *a = randmat((size_t)n * k, -1, 1), *b = randmat((size_t)p, -1, 1);
        float *one = malloc((size_t)n * p * sizeof *one), *split = malloc((size_t)n * p * sizeof *split);
        attn_pack_fast(packed, w, k, p);
        attn_set_threads(1);
        attn_linear_par(one, a, packed, b, n, k, p, NULL, NULL);
        float *h0 = randmat((size_t)n * p, -1, 1), *sum = malloc((size_t)n * p * sizeof *sum), *h = malloc((size_t)n * p * sizeof *h);
        for (size_t i = 0; i < (size_t)n * p; i++) sum[i] = h0[i] + one[i];
        for (int parts = 2; parts <= 5; parts++) {
            memset(split, 0xff, (size_t)n * p * sizeof *split);
            attn_set_threads(parts);
            attn_linear_par(split, a, packed, b, n, k, p, NULL, NULL);
            CHECK(memcmp(one, split, (size_t)n * p * sizeof *one) == 0, "packed n %d k %d p %d: %d parts differ from one", n, k, p, parts);
        }
        square_less_one(NULL, one, n, p, 0, p);
        for (int threads = 1; threads <= 5; threads++) {
            memset(split, 0xff, (size_t)n * p * sizeof *split);
            attn_set_threads(threads);
            int st = attn_linear_par(split, a, packed, b, n, k, p, square_less_one, NULL);
            CHECK(st == ATTN_OK && memcmp(one, split, (size_t)n * p * sizeof *one) == 0, "after n %d k %d p %d: %d threads differ", n, k, p, threads);
            memcpy(h, h0, (size_t)n * p * sizeof *h);
            st = attn_linear_par(split, a, packed, b, n, k, p, attn_cols_residual, h);
            CHECK(st == ATTN_OK && memcmp(sum, h, (size_t)n * p * sizeof *h) == 0, "residual n %d k %d p %d: %d threads differ", n, k, p, threads);
        }
        attn_set_threads(1);
        free(w); free(packed); free(a); free(b); free(one); free(split); free(h0); free(sum); free(h);
    }
}

// attn_cols_finite and attn_cols_residual after a product, on 1 to 5 threads: ATTN_OK while every
// value is finite; ATTN_ERR_OVERFLOW for a ±inf or NaN in any chunk's columns (the product's,
// or h's after the add), the first column or the last
static void test_cols_checks(void) {
    enum { n = 3, k = 8, p = 45 };
    float *w = randmat((size_t)k * p, -1, 1), *packed = malloc((size_t)k * p * sizeof *packed);
    float *a = randmat((size_t)n * k, -1, 1), *b = randmat((size_t)p, -1, 1), *out = malloc((size_t)n * p * sizeof *out);
    float *h = malloc((size_t)n * p * sizeof *h);
    attn_pack_fast(packed, w, k, p);
    for (int threads = 1; threads <= 5; threads++) {
        attn_set_threads(threads);
        for (size_t i = 0; i < (size_t)n * p; i++) h[i] = 1.0f;
        CHECK(attn_linear_par(out, a, packed, b, n, k, p, attn_cols_finite, NULL) == ATTN_OK, "%d threads: finite", threads);
        CHECK(attn_linear_par(out, a, packed, b, n, k, p, attn_cols_residual, h) == ATTN_OK, "%d threads: residual finite", threads);
        const int columns[2] = {0, p - 1};
        for (int c = 0; c < 2; c++) {
            const float keep = b[columns[c]];
            b[columns[c]] = INFINITY;
            CHECK(attn_linear_par(out, a, packed, b, n, k, p, attn_cols_finite, NULL) == ATTN_ERR_OVERFLOW,
                  "%d threads: inf in column %d", threads, columns[c]);
            b[columns[c]] = keep;
            for (size_t i = 0; i < (size_t)n * p; i++) h[i] = 1.0f;
            h[(size_t)(n - 1) * p + columns[c]] = NAN;
            CHECK(attn_linear_par(out, a, packed, b, n, k, p, attn_cols_residual, h) == ATTN_ERR_OVERFLOW,
                  "%d threads: NaN in h's column %d", threads, columns[c]);
        }
    }
    attn_set_threads(1);
    free(w); free(packed); free(a); free(b); free(out); free(h);
}

// attn_chunks: 1 on one thread, else 4 a thread, at most n and ATTN_MAX_CHUNKS; attn_run_chunks
// runs every chunk once, with the chunk count given and a thread in [0, threads)
static int ran[ATTN_MAX_CHUNKS], ran_bad;
static void count_chunk(void *job, int chunk, int chunks, int thread) {
    if (chunks != *(int *)job || chunk < 0 || chunk >= chunks || thread < 0 || thread >= attn_threads()) ran_bad++;
    else ran[chunk]++;
}

static void test_chunks(void) {
    attn_set_threads(1);
    CHECK(attn_chunks(1000) == 1 && attn_chunks(1) == 1, "one thread: one chunk");
    attn_set_threads(2);
    CHECK(attn_chunks(1000) == 8 && attn_chunks(5) == 5 && attn_chunks(1) == 1 && attn_chunks(0) == 1, "two threads: min(8, n)");
    attn_set_threads(ATTN_MAX_THREADS);
    CHECK(attn_chunks(100000) == 4 * ATTN_MAX_THREADS && 4 * ATTN_MAX_THREADS <= ATTN_MAX_CHUNKS, "16 threads");
    for (int threads = 1; threads <= 5; threads++) {
        attn_set_threads(threads);
        for (int chunks = 1; chunks <= ATTN_MAX_CHUNKS; chunks += 17) {
            memset(ran, 0, sizeof ran);
            ran_bad = 0;
            attn_run_chunks(count_chunk, &chunks, chunks);
            int once = 0;
            for (int c = 0; c < chunks; c++) once += ran[c] == 1;
            CHECK(once == chunks && ran_bad == 0, "threads %d chunks %d: %d run once, %d bad", threads, chunks, once, ran_bad);
        }
    }
    attn_set_threads(1);
}

// the count of threads is clamped to [1, ATTN_MAX_THREADS]
static void test_clamp(void) {
    CHECK(attn_set_threads(0) == 1, "0 -> 1");
    CHECK(attn_set_threads(-3) == 1, "-3 -> 1");
    CHECK(attn_set_threads(1000) == ATTN_MAX_THREADS, "1000 -> max");
    CHECK(attn_threads() == ATTN_MAX_THREADS, "threads");
    attn_set_threads(1);
}

int main(void) {
    test_columns();
    test_linear_t();
    test_linear_packed();
    test_cols_checks();
    test_chunks();
    test_clamp();
    printf("test_parallel: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
