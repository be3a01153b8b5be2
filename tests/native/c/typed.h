// typed.h - what the native tests of the typed models share (test_llama.c, test_bert.c): the
// comparison against a float64 reference, and matrices of F32, BF16 and F16 values written by hand
// beside their values as doubles. Include after check.h.
#ifndef ATTN_TEST_TYPED_H
#define ATTN_TEST_TYPED_H

#include "tensor.h"

#include <stdint.h>

static inline long compare64(const float *a, const double *e, size_t count, double *maxdiff) {
    long first = -1;
    *maxdiff = 0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs((double)a[i] - e[i]);
        if (!(d <= *maxdiff)) *maxdiff = d;
        if (first < 0 && !(d <= ATOL + RTOL * fabs(e[i]))) first = (long)i;
    }
    return first;
}

// ----------------------------------------------------------------------------
// dtypes: bits written and read here by hand

static inline uint16_t bf16_bits(float x) {  // round to nearest even (finite x)
    uint32_t u;
    memcpy(&u, &x, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
static inline double bf16_value(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static inline double f16_value(uint16_t h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}
static inline uint16_t f16_bits(float x) {  // nearest by search (slow, exact): tests only
    uint16_t best = 0;
    double bd = INFINITY;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        double d = fabs(f16_value((uint16_t)h) - fabs((double)x));
        if (d < bd) { bd = d; best = (uint16_t)h; }
    }
    return x < 0 ? (uint16_t)(best | 0x8000) : best;
}

// a matrix of count values in dtype, and the same values as doubles
typedef struct { void *data; double *value; int dtype; } typed;

static inline typed random_typed(size_t count, int dtype, float r) {
    typed t = {malloc(count * attn_dtype_size(dtype) + 1), malloc(count * sizeof(double) + 1), dtype};
    for (size_t i = 0; i < count; i++) {
        float x = uniform(-r, r);
        if (dtype == ATTN_F32) { ((float *)t.data)[i] = x; t.value[i] = x; }
        else if (dtype == ATTN_BF16) { uint16_t h = bf16_bits(x); ((uint16_t *)t.data)[i] = h; t.value[i] = bf16_value(h); }
        else { uint16_t h = f16_bits(x); ((uint16_t *)t.data)[i] = h; t.value[i] = f16_value(h); }
    }
    return t;
}
static inline void free_typed(typed *t) { free(t->data); free(t->value); }

#endif
