// linear.c - out = a·wᵀ (+ b) over weights kept in the dtype the checkpoint stores (F32, BF16 or
// F16), the kernel every model family shares: GPT-2's logits (gpt2.c), every projection and the
// logits of the LLaMA family (llama.c). See tensor.h for the API; the naive reference is beside
// the fast path.
//
// Shapes: a (n, k) float, w (p, k) in its dtype (nn.Linear's (out, in), or an embedding table),
// b (p) float or NULL, out (n, p) float. Every output is summed over k in the same order
// whatever n is: four lanes, k in steps of 4, then (l0 + l1) + (l2 + l3), then the tail, then + b.
// So one row computed alone (a decoding step, n = 1) has the bits it has in a full pass.
//
// BF16 and F16 stay two bytes in memory and are widened where they are used: a decoding step
// reads each weight once, so half the bytes is about half the time; a pass over n > 1 rows
// widens a block of WB rows of w once into scratch and runs the float kernel over it. Such a
// matrix may be kept in panels of 8 rows (attn_panel8, tensor.h): a decoding step then reads 8
// rows as one stream at fixed offsets, which wasm's loads take as immediates (one address for 8
// loads, not 8), the same sums in the same order.
//
// ggml's quantized blocks (GGUF files: Q8_0 .. Q6_K, IQ4_NL, IQ4_XS) stay as they are in memory
// and are dequantized where they are used, to ggml's values bit for bit: a pass over n > 1 rows
// dequantizes a block of rows into scratch as BF16 widens them; a decoding step forms each value
// in registers (Q8_0, Q4_0, Q4_K, Q6_K; the other types a block at a time on the stack) and sums
// it into the same four lanes, so a row alone has the bits it has among others. The activations
// stay float (not ggml's Q8 of them).
#include "tensor.h"
#include "internal.h"  // v4f, v4i, load4, store4, splat, hsum, fits, all_finite

#include <string.h>
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

typedef uint16_t v4u16 __attribute__((vector_size(8)));

static int min_int(int a, int b) { return a < b ? a : b; }

// a dtype without the panel flag, and whether w is in panels
static inline int base_of(int dtype) { return dtype & ~ATTN_PANEL8; }
static inline int in_panels(int dtype) { return (dtype & ATTN_PANEL8) != 0; }

// ----------------------------------------------------------------------------
// widening: 4 values at a time, exactly (every BF16 and every finite F16 is a float)

// a bfloat16 is the top half of a float32
static inline v4f bf16x4(const uint16_t *p) {
    v4u16 h;
    memcpy(&h, p, sizeof h);
    return (v4f)(__builtin_convertvector(h, v4i) << 16);
}

// float16 s|e5|m10: |x|'s bits shifted into a float's exponent and mantissa fields read as a
// float are |x|·2^-112 (subnormals too, as float subnormals), so one multiply by 2^112 gives |x|;
// then the sign. Inf and NaN are not handled: attnmap refuses non-finite weights when it loads.
static inline v4f f16x4(const uint16_t *p) {
    v4u16 h;
    memcpy(&h, p, sizeof h);
    const v4i x = __builtin_convertvector(h, v4i);
    const v4f mag = (v4f)((x & 0x7fff) << 13) * splat(0x1p112f);
    return (v4f)((v4i)mag | ((x & 0x8000) << 16));
}

static inline float bf16_1(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static inline float f16_1(uint16_t h) {
    uint32_t u = ((uint32_t)(h & 0x7fff) << 13);
    float f;
    memcpy(&f, &u, 4);
    f *= 0x1p112f;
    memcpy(&u, &f, 4);
    u |= (uint32_t)(h & 0x8000) << 16;
    memcpy(&f, &u, 4);
    return f;
}

// 4 values of w (a row of a dtype) from element t, widened
static inline v4f load4_typed(const void *w, int dtype, size_t t) {
    if (dtype == ATTN_BF16) return bf16x4((const uint16_t *)w + t);
    if (dtype == ATTN_F16) return f16x4((const uint16_t *)w + t);
    return load4((const float *)w + t);
}

static inline float get_typed(const void *w, int dtype, size_t t) {
    if (dtype == ATTN_BF16) return bf16_1(((const uint16_t *)w)[t]);
    if (dtype == ATTN_F16) return f16_1(((const uint16_t *)w)[t]);
    return ((const float *)w)[t];
}

// ----------------------------------------------------------------------------
// ggml's quantized blocks (tensor.h), dequantized a block at a time into floats. Each value is
// what ggml's dequantize_row_* gives: the same products in float in the same order (the build
// has no fused multiply-add), the float16 scales widened exactly. Fields are read byte by byte
// (blocks have no alignment). Every product before the last is exact in float, so the values
// are also those of the layout computed exactly and rounded once (tests/native/c/test_quant.c).

// an f16 scale at b, exactly, Inf and NaN too (the values then show it)
static float half_at(const uint8_t *b) {
    const uint16_t h = (uint16_t)(b[0] | b[1] << 8);
    if ((h & 0x7c00) != 0x7c00) return f16_1(h);
    const uint32_t u = (uint32_t)(h & 0x8000) << 16 | 0x7f800000u | (uint32_t)(h & 0x3ff) << 13;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

// ggml's 16 non-linear levels of IQ4_NL and IQ4_XS
static const int8_t iq4_levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

typedef uint8_t v4u8 __attribute__((vector_size(4)));

// Q8_0, Q4_0, Q4_K and Q6_K are dequantized 4 values at a time: the same products as one at a
// time, so the same values. 4 bytes from p as ints; ints as floats; 4 signed bytes as floats,
// exactly, without converting bytes to floats (which clang 14, Debian's emcc, compiles one lane
// at a time): x + 128 in the low bits of 2^23's mantissa is the float 2^23 + 128 + x, which less
// 2^23 + 128 is x.
static inline v4i bytes4(const uint8_t *p) { v4u8 x; memcpy(&x, p, sizeof x); return __builtin_convertvector(x, v4i); }
static inline v4f floats4(v4i x) { return __builtin_convertvector(x, v4f); }
static inline v4f signed4(const uint8_t *p) { return (v4f)((bytes4(p) ^ 0x80) | 0x4b000000) - splat(8388736.0f); }

// Q8_0: d, then 32 signed bytes
static void deq_q8_0(float *y, const uint8_t *b) {
    const v4f d = splat(half_at(b));
    for (int t = 0; t < 32; t += 4) store4(y + t, signed4(b + 2 + t) * d);
}

// Q4_0: d, then 16 bytes: value t in the low nibble of byte t, value 16 + t in its high one
static void deq_q4_0(float *y, const uint8_t *b) {
    const v4f d = splat(half_at(b));
    for (int t = 0; t < 16; t += 4) {
        const v4i q = bytes4(b + 2 + t);
        store4(y + t, floats4((q & 15) - 8) * d);
        store4(y + t + 16, floats4((q >> 4) - 8) * d);
    }
}

// Q4_1: d, m, then the nibbles as Q4_0's, unsigned
static void deq_q4_1(float *y, const uint8_t *b) {
    const float d = half_at(b), m = half_at(b + 2);
    const uint8_t *q = b + 4;
    for (int t = 0; t < 16; t++) {
        y[t] = (float)(q[t] & 15) * d + m;
        y[t + 16] = (float)(q[t] >> 4) * d + m;
    }
}

// the fifth bits of Q5_0 and Q5_1: bit t of 4 little-endian bytes is value t's
static uint32_t le32_at(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

// Q5_0: d, the fifth bits, the nibbles as Q4_0's
static void deq_q5_0(float *y, const uint8_t *b) {
    const float d = half_at(b);
    const uint32_t hi = le32_at(b + 2);
    const uint8_t *q = b + 6;
    for (int t = 0; t < 16; t++) {
        y[t] = (float)((int)((q[t] & 15) | ((hi >> t) & 1) << 4) - 16) * d;
        y[t + 16] = (float)((int)((q[t] >> 4) | ((hi >> (t + 16)) & 1) << 4) - 16) * d;
    }
}

// Q5_1: d, m, the fifth bits, the nibbles; unsigned
static void deq_q5_1(float *y, const uint8_t *b) {
    const float d = half_at(b), m = half_at(b + 2);
    const uint32_t hi = le32_at(b + 4);
    const uint8_t *q = b + 8;
    for (int t = 0; t < 16; t++) {
        y[t] = (float)((q[t] & 15) | ((hi >> t) & 1) << 4) * d + m;
        y[t + 16] = (float)((q[t] >> 4) | ((hi >> (t + 16)) & 1) << 4) * d + m;
    }
}

// IQ4_NL: d, then the nibbles as Q4_0's, each an index into iq4_levels
static void deq_iq4_nl(float *y, const uint8_t *b) {
    const float d = half_at(b);
    const uint8_t *q = b + 2;
    for (int t = 0; t < 16; t++) {
        y[t] = d * (float)iq4_levels[q[t] & 15];
        y[t + 16] = d * (float)iq4_levels[q[t] >> 4];
    }
}

// Q2_K: 16 bytes of sub-block scale (low nibble) and min (high nibble), 64 bytes of 2-bit values,
// d, dmin. Value 128h + 32j + 16s + l is bits 2j of byte 32h + 16s + l, its sub-block 8h + 2j + s.
static void deq_q2_k(float *y, const uint8_t *b) {
    const float d = half_at(b + 80), dmin = half_at(b + 82);
    for (int h = 0; h < 2; h++) {
        for (int j = 0; j < 4; j++) {
            for (int s = 0; s < 2; s++) {
                const uint8_t sc = b[8 * h + 2 * j + s], *q = b + 16 + 32 * h + 16 * s;
                const float dl = d * (float)(sc & 15), ml = dmin * (float)(sc >> 4);
                float *o = y + 128 * h + 32 * j + 16 * s;
                for (int l = 0; l < 16; l++) o[l] = dl * (float)((q[l] >> (2 * j)) & 3) - ml;
            }
        }
    }
}

// Q3_K: 32 bytes of high bits (value 128h + 32j + 16s + l: bit 4h + j of byte 16s + l; clear
// means minus 4), 64 bytes of 2-bit values as Q2_K's, 12 bytes of 16 6-bit scales, d
static void deq_q3_k(float *y, const uint8_t *b) {
    const uint8_t *hm = b, *sb = b + 96;
    const float d = half_at(b + 108);
    for (int h = 0; h < 2; h++) {
        for (int j = 0; j < 4; j++) {
            for (int s = 0; s < 2; s++) {
                // scale i: its low 4 bits a nibble of bytes 0..7, its high 2 from bytes 8..11
                const int i = 8 * h + 2 * j + s;
                const int lo = i < 8 ? sb[i] & 15 : sb[i - 8] >> 4, hi = (sb[8 + i % 4] >> (2 * (i / 4))) & 3;
                const float dl = d * (float)((lo | hi << 4) - 32);
                const uint8_t *q = b + 32 + 32 * h + 16 * s, *hb = hm + 16 * s, bit = (uint8_t)(1u << (4 * h + j));
                float *o = y + 128 * h + 32 * j + 16 * s;
                for (int l = 0; l < 16; l++) o[l] = dl * (float)(((q[l] >> (2 * j)) & 3) - ((hb[l] & bit) ? 0 : 4));
            }
        }
    }
}

// Q4_K's and Q5_K's 8 6-bit scales and mins in 12 bytes: sub-block i < 4 in the low 6 bits of
// bytes i and 4 + i; i >= 4 in the nibbles of byte 4 + i, with the top 2 bits of bytes i - 4, i
static void scale_min_k(const uint8_t *s, int i, int *sc, int *mn) {
    if (i < 4) {
        *sc = s[i] & 63;
        *mn = s[i + 4] & 63;
    } else {
        *sc = (s[i + 4] & 15) | (s[i - 4] >> 6) << 4;
        *mn = (s[i + 4] >> 4) | (s[i] >> 6) << 4;
    }
}

// Q4_K: d, dmin, the scales, 128 bytes: value 64c + l the low nibble of byte 32c + l
// (sub-block 2c), 64c + 32 + l its high nibble (sub-block 2c + 1)
static void deq_q4_k(float *y, const uint8_t *b) {
    const float d = half_at(b), dmin = half_at(b + 2);
    for (int c = 0; c < 4; c++) {
        int sc, mn;
        const uint8_t *q = b + 16 + 32 * c;
        scale_min_k(b + 4, 2 * c, &sc, &mn);
        const float d1 = d * (float)sc, m1 = dmin * (float)mn;
        scale_min_k(b + 4, 2 * c + 1, &sc, &mn);
        const float d2 = d * (float)sc, m2 = dmin * (float)mn;
        for (int l = 0; l < 32; l += 4) {
            const v4i x = bytes4(q + l);
            store4(y + 64 * c + l, splat(d1) * floats4(x & 15) - splat(m1));
            store4(y + 64 * c + 32 + l, splat(d2) * floats4(x >> 4) - splat(m2));
        }
    }
}

// Q5_K: Q4_K's with 32 bytes of fifth bits before the nibbles: value 64c + l has bit 2c of
// byte l, 64c + 32 + l bit 2c + 1
static void deq_q5_k(float *y, const uint8_t *b) {
    const float d = half_at(b), dmin = half_at(b + 2);
    const uint8_t *qh = b + 16;
    for (int c = 0; c < 4; c++) {
        int sc, mn;
        const uint8_t *q = b + 48 + 32 * c;
        scale_min_k(b + 4, 2 * c, &sc, &mn);
        const float d1 = d * (float)sc, m1 = dmin * (float)mn;
        scale_min_k(b + 4, 2 * c + 1, &sc, &mn);
        const float d2 = d * (float)sc, m2 = dmin * (float)mn;
        for (int l = 0; l < 32; l++) y[64 * c + l] = d1 * (float)((q[l] & 15) | ((qh[l] >> (2 * c)) & 1) << 4) - m1;
        for (int l = 0; l < 32; l++) y[64 * c + 32 + l] = d2 * (float)((q[l] >> 4) | ((qh[l] >> (2 * c + 1)) & 1) << 4) - m2;
    }
}

// Q6_K: 128 bytes of low nibbles, 64 of high 2-bit pairs, 16 signed scales (one per 16 values),
// d. In half h, value 128h + 32r + l (r < 4) takes the nibble r / 2 of byte 64h + 32(r % 2) + l
// and bits 2r of byte 128 + 32h + l; minus 32; times d·scale
static void deq_q6_k(float *y, const uint8_t *b) {
    const float d = half_at(b + 208);
    const int8_t *sc = (const int8_t *)(b + 192);
    for (int h = 0; h < 2; h++) {
        const uint8_t *ql = b + 64 * h, *qh = b + 128 + 32 * h;
        for (int r = 0; r < 4; r++) {
            const float s0 = d * (float)sc[8 * h + 2 * r], s1 = d * (float)sc[8 * h + 2 * r + 1];
            for (int l = 0; l < 32; l += 4) {
                const v4i lo = (bytes4(ql + 32 * (r % 2) + l) >> (4 * (r / 2))) & 15, hi = (bytes4(qh + l) >> (2 * r)) & 3;
                store4(y + 128 * h + 32 * r + l, splat(l < 16 ? s0 : s1) * floats4((lo | hi << 4) - 32));
            }
        }
    }
}

// IQ4_XS: d, 2 bytes and 4 bytes of 8 6-bit scales (sub-block i: nibble i % 2 of byte 4 + i / 2,
// bits 2i of the little-endian 16 at 2), 128 bytes of nibbles as IQ4_NL's, 16 bytes a sub-block
static void deq_iq4_xs(float *y, const uint8_t *b) {
    const float d = half_at(b);
    const unsigned high = (unsigned)(b[2] | b[3] << 8);
    for (int i = 0; i < 8; i++) {
        const int ls = ((b[4 + i / 2] >> (4 * (i % 2))) & 15) | (int)((high >> (2 * i)) & 3) << 4;
        const float dl = d * (float)(ls - 32);
        const uint8_t *q = b + 8 + 16 * i;
        for (int t = 0; t < 16; t++) {
            y[32 * i + t] = dl * (float)iq4_levels[q[t] & 15];
            y[32 * i + 16 + t] = dl * (float)iq4_levels[q[t] >> 4];
        }
    }
}

// a quantized type: values and bytes a block, its dequantizer, where its f16 scales are
typedef struct {
    int values, bytes;
    void (*deq)(float *y, const uint8_t *block);
    uint8_t scales, scale_at[2];
} quant_type;

// by ggml's type id (tensor.h: dtype >> 8); values 0 where ggml's type is not one of these
static const quant_type quant_types[] = {
    [ATTN_Q4_0 >> 8] = {32, 18, deq_q4_0, 1, {0, 0}},
    [ATTN_Q4_1 >> 8] = {32, 20, deq_q4_1, 2, {0, 2}},
    [ATTN_Q5_0 >> 8] = {32, 22, deq_q5_0, 1, {0, 0}},
    [ATTN_Q5_1 >> 8] = {32, 24, deq_q5_1, 2, {0, 2}},
    [ATTN_Q8_0 >> 8] = {32, 34, deq_q8_0, 1, {0, 0}},
    [ATTN_Q2_K >> 8] = {256, 84, deq_q2_k, 2, {80, 82}},
    [ATTN_Q3_K >> 8] = {256, 110, deq_q3_k, 1, {108, 0}},
    [ATTN_Q4_K >> 8] = {256, 144, deq_q4_k, 2, {0, 2}},
    [ATTN_Q5_K >> 8] = {256, 176, deq_q5_k, 2, {0, 2}},
    [ATTN_Q6_K >> 8] = {256, 210, deq_q6_k, 1, {208, 0}},
    [ATTN_IQ4_NL >> 8] = {32, 18, deq_iq4_nl, 1, {0, 0}},
    [ATTN_IQ4_XS >> 8] = {256, 136, deq_iq4_xs, 1, {0, 0}},
};
enum { QUANT_MAX_VALUES = 256 };

// dtype's quantized type, or NULL (F32, BF16, F16, in panels, unknown)
static const quant_type *quant_of(int dtype) {
    const int id = dtype >> 8;
    if (dtype < 0 || (dtype & 0xff) || id >= (int)(sizeof quant_types / sizeof *quant_types)) return NULL;
    return quant_types[id].values ? &quant_types[id] : NULL;
}

// out = the count / block whole blocks at src, dequantized
static void dequantize(float *out, const uint8_t *src, const quant_type *q, size_t count) {
    for (size_t i = 0; i + (size_t)q->values <= count; i += (size_t)q->values, src += q->bytes) q->deq(out + i, src);
}

// the first value of the first block of count values with a scale NaN or ±Inf, or count
static size_t quant_non_finite(const uint8_t *src, const quant_type *q, size_t count) {
    for (size_t i = 0; i + (size_t)q->values <= count; i += (size_t)q->values, src += q->bytes)
        for (int s = 0; s < q->scales; s++)
            if ((src[q->scale_at[s] + 1] & 0x7c) == 0x7c) return i;
    return count;
}

// a · w_j for one row of w of a quantized type, k a multiple of its block, summed as dot_tile
// sums the row dequantized: four lanes over k in steps of 4, then (l0 + l1) + (l2 + l3)
static float dot_quant(const float *a, const uint8_t *row, const quant_type *q, int k) {
    float y[QUANT_MAX_VALUES];
    v4f acc = splat(0.0f);
    for (int t0 = 0; t0 < k; t0 += q->values, row += q->bytes) {
        q->deq(y, row);
        for (int t = 0; t < q->values; t += 4) acc += load4(a + t0 + t) * load4(y + t);
    }
    return hsum(acc);
}

// ----------------------------------------------------------------------------
// A decoding step (n = 1) over the common types, the dequantization fused into the dot product:
// each value the same product as its deq_* (so the same float), each row summed in dot_quant's
// order (so the same bits), 16 codes at a time in registers, never through the stack. About 2.5×
// faster than dot_quant (bench/decode-kernels.js).

typedef uint8_t v16u8 __attribute__((vector_size(16)));
typedef uint16_t v8u16 __attribute__((vector_size(16)));

static inline v16u8 load16(const uint8_t *p) { v16u8 x; memcpy(&x, p, sizeof x); return x; }

// bits s .. s + m of each byte (m + s <= 8): shifted as 16-bit lanes (wasm has no byte shift on
// x86; V8 emulates i8x16 shifts with several instructions), the bits from the next byte masked off
static inline v16u8 bits16(v16u8 x, int s, uint8_t mask) { return (v16u8)((v8u16)x >> s) & mask; }

typedef int8_t v16i8 __attribute__((vector_size(16)));

// 16 signed byte codes q as 4 × 4 floats q·2^24, exactly: each byte moved to the top byte of a
// 32-bit lane, zeros below, and the lane converted (clang 14 converts ints narrower than 32 bits
// to floats one lane at a time, and merges a sign extension into the conversion after it). In
// wasm the move is i8x16.swizzle with constant indices, out-of-range ones 0x80, which V8 emits as
// one pshufb; elsewhere the same as a shuffle with zeros. The scales are taken times 2^-24, so
// each (q·2^24)·(s·2^-24) is the float q·s, as (q)·(s) is: both scalings are exact.
#ifdef __wasm_simd128__
#define TOP_BYTE(q, i) wasm_i8x16_swizzle((v128_t)(q), wasm_i8x16_const(-128, -128, -128, 4 * (i), -128, -128, -128, 4 * (i) + 1, \
                                                                        -128, -128, -128, 4 * (i) + 2, -128, -128, -128, 4 * (i) + 3))
#else
#define TOP_BYTE(q, i) __builtin_shufflevector((v16i8)(q), (v16i8){0}, 16, 16, 16, 4 * (i), 16, 16, 16, 4 * (i) + 1, \
                                               16, 16, 16, 4 * (i) + 2, 16, 16, 16, 4 * (i) + 3)
#endif
static inline void codes16(v4f y[4], v16i8 q) {
    y[0] = __builtin_convertvector((v4i)TOP_BYTE(q, 0), v4f);
    y[1] = __builtin_convertvector((v4i)TOP_BYTE(q, 1), v4f);
    y[2] = __builtin_convertvector((v4i)TOP_BYTE(q, 2), v4f);
    y[3] = __builtin_convertvector((v4i)TOP_BYTE(q, 3), v4f);
}

// a scale s as s·2^-24 (codes16's), exactly: Inf and NaN stay so, and a nonzero s is at least
// an f16 subnormal, 2^-24, so s·2^-24 is a normal float
static inline v4f scale24(float s) { return splat(s * 0x1p-24f); }

// acc + x[0..16) · (q·s), 4 lanes at a time, in order; s from scale24
static inline v4f dot16(v4f acc, const float *x, v16i8 q, v4f s) {
    v4f y[4];
    codes16(y, q);
    for (int i = 0; i < 4; i++) acc += load4(x + 4 * i) * (y[i] * s);
    return acc;
}

// as dot16, each value s·q - m (Q4_K's)
static inline v4f dot16_min(v4f acc, const float *x, v16i8 q, v4f s, v4f m) {
    v4f y[4];
    codes16(y, q);
    for (int i = 0; i < 4; i++) acc += load4(x + 4 * i) * (s * y[i] - m);
    return acc;
}

// unsigned codes less a bias, as signed bytes (codes below 64, the bias 8 or 32)
static inline v16i8 less(v16u8 q, int8_t bias) { return (v16i8)q - bias; }

// One block of a row summed into acc, for each fused type: x its values of a, b the block.

// Q8_0: d, 32 signed bytes
static inline v4f block_q8_0(v4f acc, const float *x, const uint8_t *b) {
    const v4f d = scale24(half_at(b));
    acc = dot16(acc, x, (v16i8)load16(b + 2), d);
    return dot16(acc, x + 16, (v16i8)load16(b + 18), d);
}

// Q4_0: d, 16 bytes: values 0..15 the low nibbles, 16..31 the high ones, less 8
static inline v4f block_q4_0(v4f acc, const float *x, const uint8_t *b) {
    const v4f d = scale24(half_at(b));
    const v16u8 q = load16(b + 2);
    acc = dot16(acc, x, less(q & 15, 8), d);
    return dot16(acc, x + 16, less(bits16(q, 4, 15), 8), d);
}

// Q4_K: sub-blocks of 32 (deq_q4_k), each d·scale·q - dmin·min
static inline v4f block_q4_k(v4f acc, const float *x, const uint8_t *b) {
    const float d = half_at(b), dmin = half_at(b + 2);
    for (int c = 0; c < 4; c++) {
        int sc, mn;
        const uint8_t *q = b + 16 + 32 * c;
        scale_min_k(b + 4, 2 * c, &sc, &mn);
        const v4f d1 = scale24(d * (float)sc), m1 = splat(dmin * (float)mn);
        scale_min_k(b + 4, 2 * c + 1, &sc, &mn);
        const v4f d2 = scale24(d * (float)sc), m2 = splat(dmin * (float)mn);
        const v16u8 q0 = load16(q), q1 = load16(q + 16);
        acc = dot16_min(acc, x + 64 * c, (v16i8)(q0 & 15), d1, m1);
        acc = dot16_min(acc, x + 64 * c + 16, (v16i8)(q1 & 15), d1, m1);
        acc = dot16_min(acc, x + 64 * c + 32, (v16i8)bits16(q0, 4, 15), d2, m2);
        acc = dot16_min(acc, x + 64 * c + 48, (v16i8)bits16(q1, 4, 15), d2, m2);
    }
    return acc;
}

// Q6_K: halves of 128 (deq_q6_k), sub-blocks of 16 each d·scale·(q - 32)
static inline v4f block_q6_k(v4f acc, const float *x, const uint8_t *b) {
    const float d = half_at(b + 208);
    const int8_t *sc = (const int8_t *)(b + 192);
    for (int h = 0; h < 2; h++) {
        const uint8_t *ql = b + 64 * h, *qh = b + 128 + 32 * h;
        for (int i = 0; i < 8; i++) {   // sub-block 8h + i: quarter r = i / 2 of the half, l from 16·(i % 2)
            const int r = i / 2, l = 16 * (i % 2);
            const v16u8 lo = bits16(load16(ql + 32 * (r % 2) + l), 4 * (r / 2), 15), hi = bits16(load16(qh + l), 2 * r, 3);
            acc = dot16(acc, x + 128 * h + 16 * i, less(lo | (v16u8)((v8u16)hi << 4), 32), scale24(d * (float)sc[8 * h + i]));
        }
    }
    return acc;
}

typedef v4f (*block_fn)(v4f acc, const float *x, const uint8_t *b);

// o[r] = a · w_r for `rows` (<= 3) rows of w from b, `row` bytes apart, in blocks of `values`
// values in `bytes` bytes: each row its own four lanes, in dot_quant's order. One row alone waits
// on each addition of its chain; rows taken block by block together overlap their chains.
static inline __attribute__((always_inline)) void dot_rows(float *o, const float *a, const uint8_t *b, size_t row,
                                                          int rows, int k, int values, int bytes, block_fn block) {
    v4f acc[3];
    for (int r = 0; r < rows; r++) acc[r] = splat(0.0f);
    for (int t = 0; t < k; t += values, b += bytes)
        for (int r = 0; r < rows; r++) acc[r] = block(acc[r], a + t, b + (size_t)r * row);
    for (int r = 0; r < rows; r++) o[r] = hsum(acc[r]);
}

// Each type's step over one row, and Q4_0's over three (faster so, bench/decode-kernels.js; Q8_0,
// Q4_K and Q6_K were slower so over matrices larger than the cache). Not inlined: V8 allocates
// registers better in small functions.
#define DOT_ROWS(name, rows, values, bytes, block)                                          \
    static __attribute__((noinline)) void name(float *o, const float *a, const uint8_t *b, size_t row, int k) { \
        dot_rows(o, a, b, row, rows, k, values, bytes, block);                              \
    }
DOT_ROWS(dot_q8_0, 1, 32, 34, block_q8_0)
DOT_ROWS(dot_q4_0, 1, 32, 18, block_q4_0)
DOT_ROWS(dot_q4_0x3, 3, 32, 18, block_q4_0)
DOT_ROWS(dot_q4_k, 1, 256, 144, block_q4_k)
DOT_ROWS(dot_q6_k, 1, 256, 210, block_q6_k)

// out[j] = a · w_j for j in [c0, c1) of a quantized w: fused where it is written, else dot_quant
static void linear_row_quant(float *out, const float *a, const uint8_t *w, const quant_type *q, int dtype, int k, int c0, int c1) {
    const size_t row = attn_row_bytes(dtype, k);
    int j = c0;
    if (dtype == ATTN_Q4_0)
        for (; j + 3 <= c1; j += 3) dot_q4_0x3(out + j, a, w + (size_t)j * row, row, k);
    for (; j < c1; j++) {
        const uint8_t *b = w + (size_t)j * row;
        switch (dtype) {
            case ATTN_Q8_0: dot_q8_0(out + j, a, b, row, k); break;
            case ATTN_Q4_0: dot_q4_0(out + j, a, b, row, k); break;
            case ATTN_Q4_K: dot_q4_k(out + j, a, b, row, k); break;
            case ATTN_Q6_K: dot_q6_k(out + j, a, b, row, k); break;
            default: out[j] = dot_quant(a, b, q, k);
        }
    }
}

void attn_widen(float *out, const void *src, int dtype, size_t count) {
    const quant_type *q = quant_of(dtype);
    if (q) { dequantize(out, src, q, count); return; }
    if (dtype == ATTN_F32) { memcpy(out, src, count * sizeof *out); return; }
    size_t i = 0;
    for (; i + 4 <= count; i += 4) store4(out + i, load4_typed(src, dtype, i));
    for (; i < count; i++) out[i] = get_typed(src, dtype, i);
}

size_t attn_dtype_size(int dtype) {
    if (in_panels(dtype) && base_of(dtype) == ATTN_F32) return 0;
    dtype = base_of(dtype);
    return dtype == ATTN_F32 ? 4 : dtype == ATTN_BF16 || dtype == ATTN_F16 ? 2 : 0;
}

int attn_dtype_block(int dtype) {
    const quant_type *q = quant_of(dtype);
    return q ? q->values : attn_dtype_size(dtype) ? 1 : 0;
}

size_t attn_row_bytes(int dtype, int k) {
    const quant_type *q = quant_of(dtype);
    if (k < 0) return 0;
    if (q) return k % q->values ? 0 : (size_t)(k / q->values) * (size_t)q->bytes;
    return (size_t)k * attn_dtype_size(dtype);
}

// the naive scan: the index of the first NaN or ±Inf from i on (an exponent all ones)
static size_t first_non_finite_from(const void *w, int dtype, size_t i, size_t count) {
    for (; i < count; i++) {
        if (dtype == ATTN_F32) {
            if (!isfinite(((const float *)w)[i])) return i;
        } else {
            const uint16_t h = ((const uint16_t *)w)[i];
            if (dtype == ATTN_BF16 ? (h & 0x7f80) == 0x7f80 : (h & 0x7c00) == 0x7c00) return i;
        }
    }
    return count;
}

size_t attn_first_non_finite(const void *w, int dtype, size_t count) {
    const quant_type *q = quant_of(dtype);
    if (q) return quant_non_finite(w, q, count);
    dtype = base_of(dtype);
    if (dtype == ATTN_F32) return first_non_finite_from(w, dtype, 0, count);
    // 2-byte values, 8 at a time: any lane with its exponent all ones, then the naive scan finds which
    const uint16_t e = dtype == ATTN_BF16 ? 0x7f80 : 0x7c00;
    const v8u16 exp = {e, e, e, e, e, e, e, e};
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        v8u16 h;
        memcpy(&h, (const uint16_t *)w + i, sizeof h);
        const v8u16 hit = (h & exp) == exp;
        v4i any;
        memcpy(&any, &hit, sizeof any);
        if (any[0] | any[1] | any[2] | any[3]) return first_non_finite_from(w, dtype, i, count);
    }
    return first_non_finite_from(w, dtype, i, count);
}

int attn_panel8(void *w, int dtype, int p, int k, void *scratch) {
    if (!w || !scratch || in_panels(dtype) || (dtype != ATTN_BF16 && dtype != ATTN_F16) || k < 4 || k % 4 || p < 8) return dtype;
    uint16_t *m = w, *rows = scratch;
    for (int g = 0; g + 8 <= p; g += 8) {
        uint16_t *panel = m + (size_t)g * k;
        memcpy(rows, panel, (size_t)8 * k * sizeof *rows);
        for (int r = 0; r < 8; r++)
            for (int t = 0; t < k; t += 4) memcpy(panel + (size_t)8 * t + 4 * r, rows + (size_t)r * k + t, 4 * sizeof *rows);
    }
    return dtype | ATTN_PANEL8;
}

// where value (j, t) of w (p, k) is, in values from w (rows, or panels of 8 rows)
static size_t at_of(int dtype, int j, int t, int k, int p) {
    if (!in_panels(dtype) || j >= p - p % 8) return (size_t)j * k + t;
    return (size_t)(j - j % 8) * k + (size_t)8 * (t - t % 4) + 4 * (j % 8) + t % 4;
}

void attn_widen_row(float *out, const void *w, int dtype, int j, int k, int p) {
    const int base = base_of(dtype);
    if (!in_panels(dtype) || j >= p - p % 8) {
        attn_widen(out, (const char *)w + (size_t)j * attn_row_bytes(base, k), base, (size_t)k);
        return;
    }
    const uint16_t *panel = (const uint16_t *)w + at_of(dtype, j, 0, k, p);
    for (int t = 0; t < k; t += 4) store4(out + t, load4_typed(panel, base, (size_t)8 * t));
}

// ----------------------------------------------------------------------------
// the float kernels (w float): 2 rows of a × 4 rows of w per register tile (8 vectors)

// o[r·ldo + j] = a_r · w_j for r < rows (1 or 2), j < 4
static void dot_tile(float *o, const float *a0, const float *a1, const float *w, int k, int ldo, int rows) {
    const float *w0 = w, *w1 = w + k, *w2 = w + 2 * (size_t)k, *w3 = w + 3 * (size_t)k;
    v4f c[2][4];
    for (int r = 0; r < 2; r++)
        for (int j = 0; j < 4; j++) c[r][j] = splat(0.0f);
    int t = 0;
    for (; t + 4 <= k; t += 4) {
        v4f x0 = load4(a0 + t), x1 = load4(a1 + t);
        v4f y0 = load4(w0 + t), y1 = load4(w1 + t), y2 = load4(w2 + t), y3 = load4(w3 + t);
        c[0][0] += x0 * y0; c[0][1] += x0 * y1; c[0][2] += x0 * y2; c[0][3] += x0 * y3;
        c[1][0] += x1 * y0; c[1][1] += x1 * y1; c[1][2] += x1 * y2; c[1][3] += x1 * y3;
    }
    const float *ar[2] = {a0, a1}, *wr[4] = {w0, w1, w2, w3};
    for (int r = 0; r < rows; r++) {
        for (int j = 0; j < 4; j++) {
            float s = hsum(c[r][j]);
            for (int u = t; u < k; u++) s += ar[r][u] * wr[j][u];
            o[(size_t)r * ldo + j] = s;
        }
    }
}

// o[j] = a · w_j for j < 8: one row of a against 8 rows of w in its dtype, widened as they are
// read; each sum as dot_tile's
static void dot_row8(float *o, const float *a, const void *w, int dtype, int k) {
    v4f c[8];
    for (int j = 0; j < 8; j++) c[j] = splat(0.0f);
    int t = 0;
    for (; t + 4 <= k; t += 4) {
        v4f x = load4(a + t);
        for (int j = 0; j < 8; j++) c[j] += x * load4_typed(w, dtype, (size_t)j * k + t);
    }
    for (int j = 0; j < 8; j++) {
        float s = hsum(c[j]);
        for (int u = t; u < k; u++) s += a[u] * get_typed(w, dtype, (size_t)j * k + u);
        o[j] = s;
    }
}

// o[j] = a · w_j for the 8 rows of a panel (attn_panel8; k % 4 == 0): as dot_row8 sums them
static void dot_panel8(float *o, const float *a, const uint16_t *panel, int dtype, int k) {
    v4f c[8];
    for (int j = 0; j < 8; j++) c[j] = splat(0.0f);
    for (int t = 0; t < k; t += 4, panel += 32) {
        v4f x = load4(a + t);
        for (int j = 0; j < 8; j++) c[j] += x * load4_typed(panel, dtype, (size_t)4 * j);
    }
    for (int j = 0; j < 8; j++) o[j] = hsum(c[j]);
}

// a · w_j for one row j of w in its dtype, as dot_tile sums it
static float dot_typed(const float *a, const void *w, int dtype, int k) {
    v4f acc = splat(0.0f);
    int t = 0;
    for (; t + 4 <= k; t += 4) acc += load4(a + t) * load4_typed(w, dtype, (size_t)t);
    float s = hsum(acc);
    for (; t < k; t++) s += a[t] * get_typed(w, dtype, (size_t)t);
    return s;
}

// the rows of w of a block of at most this many floats are widened together (128 KiB)
enum { BLOCK_FLOATS = 32768, WB_MAX = 32 };

static int block_rows(int k) {
    int wb = BLOCK_FLOATS / k;
    wb = wb < 4 ? 4 : wb > WB_MAX ? WB_MAX : wb - wb % 4;
    return wb;
}

// every k' <= k: block_rows(k')·k' <= BLOCK_FLOATS while block_rows is above 4, else 4·k' <= 4·k
size_t attn_linear_scratch_floats(int k) {
    const size_t four = 4 * (size_t)(k > 0 ? k : 0);
    return four > BLOCK_FLOATS ? four : BLOCK_FLOATS;
}

static const void *row_of(const void *w, int dtype, size_t j, int k) {
    return (const char *)w + j * attn_row_bytes(dtype, k);
}

// out[c0 .. c1) of one row = a · wᵀ: 8 rows of w at a time (a panel, or 8 rows), widened as they
// are read; c0 a multiple of 8 (panels start there)
static void linear_row(float *out, const float *a, const void *w, int dtype, int k, int c0, int c1) {
    const int base = base_of(dtype);
    const quant_type *q = quant_of(dtype);
    int j = c0;
    if (q) {
        linear_row_quant(out, a, (const uint8_t *)w, q, dtype, k, c0, c1);
        return;
    }
    if (in_panels(dtype)) {
        for (; j + 8 <= c1; j += 8) dot_panel8(out + j, a, (const uint16_t *)w + (size_t)j * k, base, k);
    } else {
        for (; j + 8 <= c1; j += 8) dot_row8(out + j, a, row_of(w, base, (size_t)j, k), base, k);
    }
    for (; j < c1; j++) out[j] = dot_typed(a, row_of(w, base, (size_t)j, k), base, k);
}

// scratch (jend - j0, k) = rows j0 .. jend - 1 of w, widened
static void widen_rows(float *scratch, const void *w, int dtype, int j0, int jend, int k, int p) {
    if (!in_panels(dtype)) {
        attn_widen(scratch, row_of(w, dtype, (size_t)j0, k), dtype, (size_t)(jend - j0) * k);
        return;
    }
    for (int j = j0; j < jend; j++) attn_widen_row(scratch + (size_t)(j - j0) * k, w, dtype, j, k, p);
}

// Columns [c0, c1) of out = a·wᵀ + b (internal.h); c0 a multiple of 8. Each output is one
// dot_tile/dot_row8/dot_panel8/dot_typed sum, the same whichever columns run together, so any
// split of the columns gives the bits of one call.
void attn_linear_t_cols(float *out, const float *a, const void *w, int dtype, const float *b,
                        int n, int k, int p, float *scratch, int c0, int c1) {
    if (n == 1) {
        linear_row(out, a, w, dtype, k, c0, c1);
    } else {
        const int wb = block_rows(k);
        for (int j0 = c0; j0 < c1; j0 += wb) {
            const int jend = min_int(c1, j0 + wb);
            const float *wf = (const float *)row_of(w, dtype, (size_t)j0, k);
            if (dtype != ATTN_F32) {
                widen_rows(scratch, w, dtype, j0, jend, k, p);
                wf = scratch;
            }
            for (int i = 0; i < n; i += 2) {
                const int rows = min_int(2, n - i);
                const float *a0 = a + (size_t)i * k, *a1 = rows > 1 ? a0 + k : a0;
                float *o = out + (size_t)i * p;
                int j = j0;
                for (; j + 4 <= jend; j += 4) dot_tile(o + j, a0, a1, wf + (size_t)(j - j0) * k, k, p, rows);
                for (; j < jend; j++) {
                    for (int r = 0; r < rows; r++) o[(size_t)r * p + j] = dot_typed(a0 + (size_t)r * k, wf + (size_t)(j - j0) * k, ATTN_F32, k);
                }
            }
        }
    }
    if (b) {
        for (int i = 0; i < n; i++)
            for (int j = c0; j < c1; j++) out[(size_t)i * p + j] += b[j];
    }
}

void attn_linear_t_fast(float *out, const float *a, const void *w, int dtype, const float *b,
                        int n, int k, int p, float *scratch) {
    attn_linear_t_cols(out, a, w, dtype, b, n, k, p, scratch, 0, p);
}

// ----------------------------------------------------------------------------
// the API: checked arguments, the fast path and the reference

static attn_status check_typed(const float *out, const float *a, const void *w, int dtype, int n, int k, int p) {
    if (!out || !a || !w) return ATTN_ERR_NULL;
    if (n < 1 || k < 1 || p < 1) return ATTN_ERR_SIZE;
    if (attn_dtype_block(dtype) == 0 || (in_panels(dtype) && k % 4)) return ATTN_ERR_FLAGS;
    if (k % attn_dtype_block(dtype)) return ATTN_ERR_SIZE;
    if (!fits((size_t)n, (size_t)k) || !fits((size_t)k, (size_t)p) || !fits((size_t)n, (size_t)p)) return ATTN_ERR_TOO_LARGE;
    return ATTN_OK;
}

attn_status attn_linear_typed(float *out, const float *a, const void *w, int dtype, const float *b,
                              int n, int k, int p, float *scratch) {
    attn_status st = check_typed(out, a, w, dtype, n, k, p);
    if (st != ATTN_OK) return st;
    if (!scratch && dtype != ATTN_F32 && n > 1) return ATTN_ERR_NULL;
    attn_linear_t_fast(out, a, w, dtype, b, n, k, p, scratch);
    return all_finite(out, (size_t)n * p) ? ATTN_OK : ATTN_ERR_OVERFLOW;
}

// the reference over a quantized w: each row dequantized a block at a time, summed in order
static attn_status quant_naive(float *out, const float *a, const uint8_t *w, const quant_type *q, const float *b,
                               int n, int k, int p) {
    float y[QUANT_MAX_VALUES];
    const size_t row = (size_t)(k / q->values) * (size_t)q->bytes;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < p; j++) {
            float s = 0.0f;
            for (int t0 = 0; t0 < k; t0 += q->values) {
                q->deq(y, w + (size_t)j * row + (size_t)(t0 / q->values) * q->bytes);
                for (int t = 0; t < q->values; t++) s += a[(size_t)i * k + t0 + t] * y[t];
            }
            out[(size_t)i * p + j] = b ? s + b[j] : s;
        }
    }
    return all_finite(out, (size_t)n * p) ? ATTN_OK : ATTN_ERR_OVERFLOW;
}

attn_status attn_linear_typed_naive(float *out, const float *a, const void *w, int dtype, const float *b,
                                    int n, int k, int p) {
    attn_status st = check_typed(out, a, w, dtype, n, k, p);
    if (st != ATTN_OK) return st;
    if (quant_of(dtype)) return quant_naive(out, a, w, quant_of(dtype), b, n, k, p);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < p; j++) {
            float s = 0.0f;
            for (int t = 0; t < k; t++) s += a[(size_t)i * k + t] * get_typed(w, base_of(dtype), at_of(dtype, j, t, k, p));
            out[(size_t)i * p + j] = b ? s + b[j] : s;
        }
    }
    return all_finite(out, (size_t)n * p) ? ATTN_OK : ATTN_ERR_OVERFLOW;
}
