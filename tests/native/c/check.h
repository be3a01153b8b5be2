// check.h - what the native C tests share: the project's tolerance, CHECK, a seeded generator.
// Include once per test program, after defining TEST_SEED.
#ifndef ATTN_TEST_CHECK_H
#define ATTN_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// one tolerance for the whole project, |a - e| <= ATOL + RTOL * |e| (tests/helpers.js; keep in step)
#define ATOL 1e-5
#define RTOL 1.3e-6

static int failures = 0, checks = 0;

#define CHECK(cond, ...) do { checks++; if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

static unsigned long long rng = TEST_SEED;
static unsigned long long next_u64(void) {  // xorshift64*
    rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}
static float uniform(float lo, float hi) {
    return lo + (hi - lo) * (float)((double)(next_u64() >> 40) / (double)(1ull << 24));
}
static int randint(int lo, int hi) { return lo + (int)(next_u64() % (unsigned long long)(hi - lo + 1)); }

static inline float *randmat(size_t count, float lo, float hi) {
    float *p = malloc(count * sizeof *p + 1);
    for (size_t i = 0; i < count; i++) p[i] = uniform(lo, hi);
    return p;
}

#endif
