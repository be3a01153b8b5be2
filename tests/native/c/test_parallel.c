// test_parallel.c - parallel.h's jobs split into 1 to 5 parts give the bits of one part (issue
// 26): the native build runs the parts one after the other, so what is tested here is that the
// parts own disjoint columns, cover them all, and sum each one as the whole call does. The wasm
// threads run the same parts at once (tests/unit/model-threads.test.js).
#include "parallel.h"
#include "tensor.h"
#include "internal.h"

#define TEST_SEED 0x7A11E1ull
#include "check.h"
#include "typed.h"

#include <stdint.h>

// every part's columns: disjoint, in order, covering [0, p), starting at multiples of 8
static void test_columns(void) {
    for (int p = 1; p <= 70; p++) {
        for (int parts = 1; parts <= 9; parts++) {
            int next = 0;
            for (int part = 0; part < parts; part++) {
                int c0, c1;
                attn_part_columns(&c0, &c1, p, part, parts);
                CHECK(c0 == next && c1 >= c0 && c0 % 8 == 0, "p %d parts %d part %d: [%d, %d) after %d", p, parts, part, c0, c1, next);
                next = c1;
            }
            CHECK(next == p, "p %d parts %d: the parts end at %d", p, parts, next);
        }
    }
}

// attn_linear_t_par in 2 to 5 parts (F32, BF16, F16, in panels or not; one row or several) has
// the bits of one part
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
            attn_linear_t_par(one, a, w.data, w.dtype, b, n, k, p, scratch);
            for (int parts = 2; parts <= 5; parts++) {
                memset(split, 0xff, (size_t)n * p * sizeof *split);   // NaN wherever no part wrote
                CHECK(attn_set_threads(parts) == parts, "parts");
                attn_linear_t_par(split, a, w.data, w.dtype, b, n, k, p, scratch);
                CHECK(memcmp(one, split, (size_t)n * p * sizeof *one) == 0,
                      "linear_t dtype %d n %d k %d p %d: %d parts differ from one", w.dtype, n, k, p, parts);
            }
            attn_set_threads(1);
            free(a); free(b); free(one); free(split); free(scratch); free_typed(&w);
        }
    }
}

// attn_linear_par (the packed kernel, GPT-2's layers) in 2 to 5 parts, across its blocks of 256
// columns and 128 rows, has the bits of one part
static void test_linear_packed(void) {
    const int shapes[][3] = {{1, 16, 40}, {4, 130, 300}, {7, 5, 37}, {3, 260, 513}, {9, 64, 777}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const int n = shapes[s][0], k = shapes[s][1], p = shapes[s][2];
        float *w = randmat((size_t)k * p, -1, 1), *packed = malloc((size_t)k * p * sizeof *packed);
        float *a = randmat((size_t)n * k, -1, 1), *b = randmat((size_t)p, -1, 1);
        float *one = malloc((size_t)n * p * sizeof *one), *split = malloc((size_t)n * p * sizeof *split);
        attn_pack_fast(packed, w, k, p);
        attn_set_threads(1);
        attn_linear_par(one, a, packed, b, n, k, p);
        for (int parts = 2; parts <= 5; parts++) {
            memset(split, 0xff, (size_t)n * p * sizeof *split);
            attn_set_threads(parts);
            attn_linear_par(split, a, packed, b, n, k, p);
            CHECK(memcmp(one, split, (size_t)n * p * sizeof *one) == 0, "packed n %d k %d p %d: %d parts differ from one", n, k, p, parts);
        }
        attn_set_threads(1);
        free(w); free(packed); free(a); free(b); free(one); free(split);
    }
}

// the count of parts is clamped to [1, ATTN_MAX_THREADS]
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
    test_clamp();
    printf("test_parallel: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
