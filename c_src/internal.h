// internal.h - what attention.c, mha.c, rope.c, gpt2.c, llama.c and bert.c share; not part of the API
// (attention.h is).
//
//   - 4-wide vectors (GCC/Clang vector extensions: SSE natively, wasm simd128 under
//     emcc -msimd128; the same source gives the same rounding on both);
//   - dot(), exp4() (e^x for x <= 0, four lanes), fits(), all_finite() and layernorm();
//   - the argument checks every entry point ends with: the caller's n×m buffers, scale, flags.
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include "attention.h"

#include <float.h>
#include <math.h>
#include <string.h>

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));

static inline v4f load4(const float *p) { v4f r; memcpy(&r, p, sizeof r); return r; }
static inline void store4(float *p, v4f x) { memcpy(p, &x, sizeof x); }
static inline v4f splat(float x) { return (v4f){x, x, x, x}; }
// lanes of a where mask is set (all ones), else lanes of b
static inline v4f select4(v4i mask, v4f a, v4f b) { return (v4f)((mask & (v4i)a) | (~mask & (v4i)b)); }
static inline float hsum(v4f x) { return (x[0] + x[1]) + (x[2] + x[3]); }

// a·b, four lanes then (l0 + l1) + (l2 + l3), then the tail (attention.c's scores, gpt2.c's logits)
static inline float dot(const float *a, const float *b, int d) {
    v4f acc = splat(0.0f);
    int c = 0;
    for (; c + 4 <= d; c += 4) acc += load4(a + c) * load4(b + c);
    float s = hsum(acc);
    for (; c < d; c++) s += a[c] * b[c];
    return s;
}

// e^x for x <= 0, four lanes, for gpt2.c's gelu_new and llama.c's silu (Cephes expf: x = n·ln2
// + r, |r| <= ln2/2, a degree-6 polynomial, then 2^n through the exponent bits; within 2 ulp of
// expf; attention.c's tiled softmax has its own base-2 exp2_tile4). Lanes below ln(FLT_MIN), -inf among them, give exactly 0.
static inline v4f exp4(v4f x) {
    const v4f lo = splat(-87.33654475f), magic = splat(12582912.0f);  // 1.5·2^23 rounds to an integer
    v4i under = x < lo;
    x = select4(under, lo, x);
    v4f t = x * splat(1.44269504088896341f) + magic;
    v4f nf = t - magic;
    v4f r = x - nf * splat(0.693359375f) - nf * splat(-2.12194440e-4f);
    v4f y = splat(1.9875691500e-4f);
    y = y * r + splat(1.3981999507e-3f);
    y = y * r + splat(8.3334519073e-3f);
    y = y * r + splat(4.1665795894e-2f);
    y = y * r + splat(1.6666665459e-1f);
    y = y * r + splat(5.0000001201e-1f);
    y = y * (r * r) + r + splat(1.0f);
    v4i bits = (v4i)y + (((v4i)t - (v4i)magic) << 23);
    return select4(under, splat(0.0f), (v4f)bits);
}

// a*b fits in size_t as a count of floats (so in bytes too)
static inline int fits(size_t a, size_t b) { return b == 0 || a <= ((size_t)-1 / sizeof(float)) / b; }

// Every one of count values finite (|x| ≤ FLT_MAX is false for NaN and ±inf); NULL (an
// optional input left out) counts as finite.
static inline int all_finite(const float *x, size_t count) {
    if (!x) return 1;
    const v4i absmask = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
    const v4f fmax = splat(FLT_MAX);
    v4i ok = {-1, -1, -1, -1};
    size_t i = 0;
    for (; i + 4 <= count; i += 4) ok &= (v4f)((v4i)load4(x + i) & absmask) <= fmax;
    for (; i < count; i++) {
        if (!isfinite(x[i])) return 0;
    }
    return ok[0] & ok[1] & ok[2] & ok[3];
}

// The n×m buffers exist only as the caller's: `copies` matrices of weights (floats; 0 when
// weights is NULL) and the mask (bytes). ATTN_ERR_TOO_LARGE when they do not fit in size_t.
static inline attn_status check_nm(size_t copies, const uint8_t *mask, int n, int m) {
    if (copies && (!fits((size_t)n, (size_t)m) || !fits((size_t)n * (size_t)m, copies))) return ATTN_ERR_TOO_LARGE;
    if (mask && (size_t)n > (size_t)-1 / (size_t)m) return ATTN_ERR_TOO_LARGE;
    return ATTN_OK;
}

// scale finite and >= 0, no unknown flag bits
static inline attn_status check_scale_flags(float scale, unsigned flags) {
    if (!isfinite(scale) || scale < 0.0f) return ATTN_ERR_SCALE;
    if (flags & ~ATTN_CAUSAL) return ATTN_ERR_FLAGS;
    return ATTN_OK;
}

// LayerNorm (gpt2.c, bert.c): out (T, C) = (x - mean)/sqrt(var + eps)·w + b per row, biased
// variance; mean and variance summed in double (no overflow, no cancellation), the rest in float
static inline void layernorm(float *out, const float *x, const float *w, const float *b, int T, int C, float eps) {
    for (int i = 0; i < T; i++) {
        const float *xi = x + (size_t)i * C;
        float *o = out + (size_t)i * C;
        double sum = 0.0, sq = 0.0;
        for (int c = 0; c < C; c++) sum += xi[c];
        const double mean = sum / C;
        for (int c = 0; c < C; c++) sq += (xi[c] - mean) * (xi[c] - mean);
        const float m = (float)mean, rstd = (float)(1.0 / sqrt(sq / C + eps));
        for (int c = 0; c < C; c++) o[c] = (xi[c] - m) * rstd * w[c] + b[c];
    }
}

// The models' attention slots (gpt2.c, llama.c, bert.c check them; heads.c writes them): the
// number of (layer, head) blocks the attention output holds for `heads` = L·H heads: all of them
// without slots, else 1 + the largest slot (slots of -1 are not written); -1 when a slot is below -1
static inline long attention_blocks(const int32_t *slots, long heads) {
    if (!slots) return heads;
    long blocks = 0;
    for (long i = 0; i < heads; i++) {
        if (slots[i] < -1) return -1;
        if (slots[i] >= blocks) blocks = (long)slots[i] + 1;
    }
    return blocks;
}

// One head's columns (mha.c, heads.c):
// dst (rows, width) = columns [col, col + width) of src (rows, src_cols)
static inline void gather(float *dst, const float *src, int rows, int src_cols, int col, int width) {
    for (int i = 0; i < rows; i++)
        memcpy(dst + (size_t)i * width, src + (size_t)i * src_cols + col, (size_t)width * sizeof *dst);
}

// columns [col, col + width) of dst (rows, dst_cols) = src (rows, width)
static inline void scatter(float *dst, const float *src, int rows, int dst_cols, int col, int width) {
    for (int i = 0; i < rows; i++)
        memcpy(dst + (size_t)i * dst_cols + col, src + (size_t)i * width, (size_t)width * sizeof *dst);
}

// The packed linear kernel (attention.c), for mha.c's projections and gpt2.c's layers; checked
// arguments only. packed (k·p floats) = w (k, p) in the kernel's order; out (n, p) =
// a (n, k)·w + b (b may be NULL), each output summed over k in order: attn_matmul's bits.
void attn_pack_fast(float *packed, const float *w, int k, int p);
void attn_linear_fast(float *out, const float *a, const float *packed, const float *b, int n, int k, int p);
// its columns [c0, c1) alone: c0 a multiple of 8, c1 one too or p; the bits of the whole call
void attn_linear_fast_cols(float *out, const float *a, const float *packed, const float *b, int n, int k, int p,
                           int c0, int c1);

// linear.c's kernel without the checks (tensor.h attn_linear_typed): out (n, p) = a·wᵀ + b, w
// (p, k) in dtype; scratch as attn_linear_scratch_floats(k) (NULL for F32 or n = 1).
void attn_linear_t_fast(float *out, const float *a, const void *w, int dtype, const float *b,
                        int n, int k, int p, float *scratch);
// its columns [c0, c1) alone: c0 a multiple of 8; the bits of the whole call
void attn_linear_t_cols(float *out, const float *a, const void *w, int dtype, const float *b,
                        int n, int k, int p, float *scratch, int c0, int c1);

// rope.c's table and rotation without the checks (attention.h attn_rope_table, attn_rope_rotate),
// for llama.c, which checks its positions and its results itself
void attn_rope_cos_sin(float *cos, float *sin, const float *theta, int n, int half, int pos0);
void attn_rope_rotate_fast(float *out, const float *x, const float *cos, const float *sin, int n, int heads,
                           int d, unsigned flags);

#endif // ATTN_INTERNAL_H
