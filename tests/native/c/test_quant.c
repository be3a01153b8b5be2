// test_quant.c - ggml's quantized blocks in tensor.h (issue 38, item 3): each type's values
// against a reference written here from ggml-common.h's layouts, one value at a time in double
// (each value is exact in double and rounds once to ggml's float, so the bits must agree);
// hand-made blocks with known values; attn_linear_typed over quantized rows against the float
// kernel on the dequantized rows (the same bits), against the naive reference, one row alone and
// among others, on 1 to 5 threads; the checks (k not a multiple of the block, unknown dtypes,
// non-finite scales) and attn_panel8 leaving quantized matrices as they are; a LLaMA model of
// quantized matrices runs with the bits of its dequantized twin.
#include "tensor.h"
#include "parallel.h"
#include "internal.h"
#include "llama.h"

#define TEST_SEED 0x9A2D0ull
#include "check.h"
#include "typed.h"

#include <stdint.h>

enum { NTYPES = 12 };
static const int types[NTYPES] = {ATTN_Q8_0, ATTN_Q4_0, ATTN_Q4_1, ATTN_Q5_0, ATTN_Q5_1, ATTN_Q2_K,
                                  ATTN_Q3_K, ATTN_Q4_K, ATTN_Q5_K, ATTN_Q6_K, ATTN_IQ4_NL, ATTN_IQ4_XS};
// values and bytes a block (ggml-common.h's static_asserts), where the f16 scales are
static const int block_values[NTYPES] = {32, 32, 32, 32, 32, 256, 256, 256, 256, 256, 32, 256};
static const int block_bytes[NTYPES] = {34, 18, 20, 22, 24, 84, 110, 144, 176, 210, 18, 136};
static const int scale_at[NTYPES][2] = {{0, -1}, {0, -1}, {0, 2}, {0, -1}, {0, 2}, {80, 82},
                                        {108, -1}, {0, 2}, {0, 2}, {208, -1}, {0, -1}, {0, -1}};
static const char *const names[NTYPES] = {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K",
                                          "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS"};
static const int iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// ----------------------------------------------------------------------------
// the reference: value t of a block, from the layout, in double

static double h16(const uint8_t *b) { return f16_value((uint16_t)(b[0] | b[1] << 8)); }
// value t of 32 stored as nibbles in 16 bytes: t < 16 the low nibble of byte t, else the high of t - 16
static int nib32(const uint8_t *q, int t) { return t < 16 ? q[t] & 15 : q[t - 16] >> 4; }
// bit i of the little-endian bytes at b
static int bit_at(const uint8_t *b, int i) { return (b[i / 8] >> (i % 8)) & 1; }

// K types' 6-bit scale and min of sub-block i (of 8) in 12 bytes
static void k_scale_min(const uint8_t *s, int i, int *sc, int *mn) {
    *sc = i < 4 ? s[i] & 63 : (s[i + 4] & 15) + 16 * (s[i - 4] >> 6);
    *mn = i < 4 ? s[i + 4] & 63 : (s[i + 4] >> 4) + 16 * (s[i] >> 6);
}

static double ref_value(int dtype, const uint8_t *b, int t) {
    switch (dtype) {
    case ATTN_Q8_0: return h16(b) * (int8_t)b[2 + t];
    case ATTN_Q4_0: return h16(b) * (nib32(b + 2, t) - 8);
    case ATTN_Q4_1: return h16(b) * nib32(b + 4, t) + h16(b + 2);
    case ATTN_Q5_0: return h16(b) * (nib32(b + 6, t) + 16 * bit_at(b + 2, t) - 16);
    case ATTN_Q5_1: return h16(b) * (nib32(b + 8, t) + 16 * bit_at(b + 4, t)) + h16(b + 2);
    case ATTN_IQ4_NL: return h16(b) * iq4nl[nib32(b + 2, t)];
    case ATTN_Q2_K: {   // 16 sub-blocks of 16; 2-bit values: byte 32·(t / 128) + t % 32, bits 2·((t % 128) / 32)
        const int sc = b[t / 16], q = (b[16 + 32 * (t / 128) + t % 32] >> (2 * ((t % 128) / 32))) & 3;
        return h16(b + 80) * (sc & 15) * q - h16(b + 82) * (sc >> 4);
    }
    case ATTN_Q3_K: {   // high bit: bit t / 32 of byte t % 32; scale i: nibble of byte i % 8, 2 bits of byte 8 + i % 4
        const int i = t / 16, lo = i < 8 ? b[96 + i] & 15 : b[96 + i - 8] >> 4, hi = (b[104 + i % 4] >> (2 * (i / 4))) & 3;
        const int q = ((b[32 + 32 * (t / 128) + t % 32] >> (2 * ((t % 128) / 32))) & 3) - (bit_at(b + t % 32, t / 32) ? 0 : 4);
        return h16(b + 108) * (lo + 16 * hi - 32) * q;
    }
    case ATTN_Q4_K: case ATTN_Q5_K: {   // sub-block t / 32; nibbles: byte 32·(t / 64) + t % 32, high for odd sub-blocks
        int sc, mn;
        k_scale_min(b + 4, t / 32, &sc, &mn);
        const uint8_t *qs = b + (dtype == ATTN_Q4_K ? 16 : 48);
        int q = (qs[32 * (t / 64) + t % 32] >> (4 * ((t / 32) % 2))) & 15;
        if (dtype == ATTN_Q5_K) q += 16 * bit_at(b + 16 + t % 32, t / 32);
        return h16(b) * sc * q - h16(b + 2) * mn;
    }
    case ATTN_Q6_K: {   // halves of 128; in a half, quarter r: nibble r / 2 of byte 32·(r % 2) + l, bits 2r of byte 128 + l
        const int h = t / 128, r = (t % 128) / 32, l = t % 32;
        const int lo = (b[64 * h + 32 * (r % 2) + l] >> (4 * (r / 2))) & 15, hi = (b[128 + 32 * h + l] >> (2 * r)) & 3;
        return h16(b + 208) * (int8_t)b[192 + t / 16] * (lo + 16 * hi - 32);
    }
    case ATTN_IQ4_XS: {   // sub-block i: 4 bits at 4 + i / 2 and 2 bits of the 16 at 2
        const int i = t / 32, ls = ((b[4 + i / 2] >> (4 * (i % 2))) & 15) + 16 * (((b[2] | b[3] << 8) >> (2 * i)) & 3);
        return h16(b) * (ls - 32) * iq4nl[nib32(b + 8 + 16 * i, t % 32)];
    }
    }
    return NAN;
}

// ----------------------------------------------------------------------------
// random blocks: random bytes, the f16 scales random with exponents in [2^-10, 2^5] (both signs)

static void put_f16(uint8_t *b, uint16_t h) { b[0] = (uint8_t)h; b[1] = (uint8_t)(h >> 8); }

static uint8_t *random_blocks(int ti, size_t blocks) {
    uint8_t *w = malloc(blocks * block_bytes[ti] + 1);
    for (size_t i = 0; i < blocks * block_bytes[ti]; i++) w[i] = (uint8_t)next_u64();
    for (size_t i = 0; i < blocks; i++)
        for (int s = 0; s < 2 && scale_at[ti][s] >= 0; s++)
            put_f16(w + i * block_bytes[ti] + scale_at[ti][s], (uint16_t)((randint(0, 1) << 15) | randint(5, 20) << 10 | randint(0, 1023)));
    return w;
}

// the rows of w (count values of type ti) dequantized by attn_widen against ref_value: the same bits
static void check_values(int ti, const uint8_t *w, size_t count, const char *what) {
    float *got = malloc(count * sizeof *got);
    attn_widen(got, w, types[ti], count);
    long bad = -1;
    for (size_t t = 0; t < count && bad < 0; t++) {
        const float e = (float)ref_value(types[ti], w + t / block_values[ti] * block_bytes[ti], (int)(t % block_values[ti]));
        if (memcmp(&e, &got[t], sizeof e) != 0) bad = (long)t;
    }
    CHECK(bad < 0, "%s %s: value %ld is %.9g, the layout gives %.9g", names[ti], what, bad, bad < 0 ? 0 : got[bad],
          bad < 0 ? 0 : ref_value(types[ti], w + bad / block_values[ti] * block_bytes[ti], (int)(bad % block_values[ti])));
    free(got);
}

// every type: sizes, and 8 random blocks dequantized as the layout says (also as rows)
static void test_dequantize(void) {
    for (int ti = 0; ti < NTYPES; ti++) {
        const int dt = types[ti], bv = block_values[ti];
        CHECK(attn_dtype_size(dt) == 0, "%s: attn_dtype_size %zu", names[ti], attn_dtype_size(dt));
        CHECK(attn_dtype_block(dt) == bv, "%s: block %d", names[ti], attn_dtype_block(dt));
        CHECK(attn_row_bytes(dt, 3 * bv) == (size_t)(3 * block_bytes[ti]), "%s: row bytes %zu", names[ti], attn_row_bytes(dt, 3 * bv));
        CHECK(attn_row_bytes(dt, bv + 4) == 0 && attn_row_bytes(dt, -bv) == 0, "%s: row bytes of a partial block", names[ti]);
        uint8_t *w = random_blocks(ti, 8);
        check_values(ti, w, (size_t)8 * bv, "random blocks");
        float *row = malloc((size_t)2 * bv * sizeof *row), *all = malloc((size_t)8 * bv * sizeof *all);
        attn_widen(all, w, dt, (size_t)8 * bv);
        for (int j = 0; j < 4; j++) {
            attn_widen_row(row, w, dt, j, 2 * bv, 4);
            CHECK(memcmp(row, all + (size_t)j * 2 * bv, (size_t)2 * bv * sizeof *row) == 0, "%s: attn_widen_row %d", names[ti], j);
        }
        free(row); free(all); free(w);
    }
    CHECK(attn_dtype_block(ATTN_F32) == 1 && attn_dtype_block(ATTN_BF16 | ATTN_PANEL8) == 1 && attn_dtype_block(15) == 0 && attn_dtype_block(9 << 8) == 0 &&
          attn_dtype_block(ATTN_Q8_0 | ATTN_PANEL8) == 0 && attn_dtype_block(-1) == 0, "attn_dtype_block of the others");
    CHECK(attn_row_bytes(ATTN_F32, 5) == 20 && attn_row_bytes(ATTN_F16, 5) == 10 && attn_row_bytes(99, 32) == 0 &&
          attn_row_bytes(ATTN_Q4_K | ATTN_PANEL8, 256) == 0, "attn_row_bytes of the others");
}

// ----------------------------------------------------------------------------
// hand-made blocks with values known without the layout's formulas

static int index_of(int dt) {
    for (int ti = 0; ti < NTYPES; ti++)
        if (types[ti] == dt) return ti;
    return -1;
}

// the values of blocks of dt at w against expected[], exactly
static void check_known(int dt, const uint8_t *w, const float *expected, int count, const char *what) {
    float got[256];
    attn_widen(got, w, dt, (size_t)count);
    int bad = -1;
    for (int t = 0; t < count && bad < 0; t++)
        if (memcmp(&got[t], &expected[t], sizeof got[t]) != 0) bad = t;
    CHECK(bad < 0, "%s: value %d is %.9g, expected %.9g", what, bad, bad < 0 ? 0 : got[bad], bad < 0 ? 0 : expected[bad]);
    check_values(index_of(dt), w, (size_t)count, what);   // the reference agrees too
}

static void test_known_blocks(void) {
    uint8_t w[8 * 34];
    float e[256];
    // Q8_0: d = 0.5, 8 blocks of -128 .. 127: 0.5·q
    for (int i = 0; i < 8; i++) {
        put_f16(w + 34 * i, 0x3800);
        for (int t = 0; t < 32; t++) w[34 * i + 2 + t] = (uint8_t)(int8_t)(32 * i + t - 128);
    }
    for (int t = 0; t < 256; t++) e[t] = 0.5f * (float)(t - 128);
    check_known(ATTN_Q8_0, w, e, 256, "Q8_0 d 0.5, -128 .. 127");
    // Q4_0: d = 0.25; byte j holds j low and 15 - j high: values (j - 8)/4 then (7 - j)/4
    put_f16(w, 0x3400);
    for (int j = 0; j < 16; j++) w[2 + j] = (uint8_t)(j | (15 - j) << 4);
    for (int t = 0; t < 32; t++) e[t] = 0.25f * (float)(t < 16 ? t - 8 : 7 - (t - 16));
    check_known(ATTN_Q4_0, w, e, 32, "Q4_0 d 0.25");
    // Q4_K: d = 1, dmin = 0.5; sub-block i: scale 8i + 7, min 63 - 8i (6 bits, the top two
    // of sub-blocks 4..7 in bytes 0..7); byte 32c + l holds l % 16 low and 15 - l % 16 high
    uint8_t k4[144] = {0};
    put_f16(k4, 0x3c00);
    put_f16(k4 + 2, 0x3800);
    int sc[8], mn[8];
    for (int i = 0; i < 8; i++) { sc[i] = 8 * i + 7; mn[i] = 63 - 8 * i; }
    for (int i = 0; i < 4; i++) {
        k4[4 + i] = (uint8_t)(sc[i] | (sc[i + 4] >> 4) << 6);
        k4[8 + i] = (uint8_t)(mn[i] | (mn[i + 4] >> 4) << 6);
        k4[12 + i] = (uint8_t)((sc[i + 4] & 15) | (mn[i + 4] & 15) << 4);
    }
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++) k4[16 + 32 * c + l] = (uint8_t)(l % 16 | (15 - l % 16) << 4);
    for (int t = 0; t < 256; t++) {
        const int i = t / 32, q = i % 2 ? 15 - t % 16 : t % 16;
        e[t] = (float)(sc[i] * q) - 0.5f * (float)mn[i];
    }
    check_known(ATTN_Q4_K, k4, e, 256, "Q4_K scales 8i + 7, mins 63 - 8i");
    // Q6_K: d = 1/8, scale of sub-block i (16 values) 9·(i - 8); value t's 6 bits t % 64
    uint8_t k6[210] = {0};
    put_f16(k6 + 208, 0x3000);
    for (int i = 0; i < 16; i++) k6[192 + i] = (uint8_t)(int8_t)(9 * (i - 8));
    for (int t = 0; t < 256; t++) {
        const int h = t / 128, r = (t % 128) / 32, l = t % 32, q = t % 64;
        k6[64 * h + 32 * (r % 2) + l] |= (uint8_t)((q & 15) << (4 * (r / 2)));
        k6[128 + 32 * h + l] |= (uint8_t)((q >> 4) << (2 * r));
        e[t] = 0.125f * (float)(9 * (t / 16 - 8)) * (float)(q - 32);   // as ggml: -0 where a negative scale meets 0
    }
    check_known(ATTN_Q6_K, k6, e, 256, "Q6_K d 1/8, scales 9(i - 8), values t % 64");
}

// ----------------------------------------------------------------------------
// the products

// out (n, p) = a·wᵀ + b in double over the dequantized w (p, k), and a bound on float's error in
// any order of the sums (|e| ≤ (k + 1)·2^-24·Σ|terms| per output, doubled for room)
static void product64(double *e, double *bound, const float *a, const float *wf, const float *b, int n, int k, int p) {
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < p; j++) {
            double s = b ? b[j] : 0, mag = b ? fabs(b[j]) : 0;
            for (int t = 0; t < k; t++) {
                const double x = (double)a[(size_t)i * k + t] * wf[(size_t)j * k + t];
                s += x;
                mag += fabs(x);
            }
            e[(size_t)i * p + j] = s;
            bound[(size_t)i * p + j] = 2 * (k + 2) * 0x1p-24 * mag;
        }
    }
}

static int within(const float *got, const double *e, const double *bound, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!(fabs((double)got[i] - e[i]) <= bound[i])) return (int)i;
    return -1;
}

// one shape of one type: the fast kernel has the bits of the float kernel over the dequantized
// rows (n = 1 and n > 1), each row alone the bits it has among others, any count of threads the
// bits of one; fast and naive both near the double product
static void check_product(int ti, int n, int k, int p, int with_bias) {
    const int dt = types[ti];
    uint8_t *w = random_blocks(ti, (size_t)p * k / block_values[ti]);
    float *wf = malloc((size_t)p * k * sizeof *wf), *a = randmat((size_t)n * k, -1, 1), *b = with_bias ? randmat((size_t)p, -1, 1) : NULL;
    float *fast = malloc((size_t)n * p * sizeof *fast), *f32 = malloc((size_t)n * p * sizeof *f32);
    float *naive = malloc((size_t)n * p * sizeof *naive), *naive32 = malloc((size_t)n * p * sizeof *naive32);
    float *scratch = malloc((size_t)ATTN_MAX_THREADS * attn_linear_scratch_floats(k) * sizeof *scratch);
    double *e = malloc((size_t)n * p * sizeof *e), *bound = malloc((size_t)n * p * sizeof *bound);
    attn_widen(wf, w, dt, (size_t)p * k);
    CHECK(attn_linear_typed(fast, a, w, dt, b, n, k, p, scratch) == ATTN_OK, "%s n %d k %d p %d: status", names[ti], n, k, p);
    CHECK(attn_linear_typed(f32, a, wf, ATTN_F32, b, n, k, p, NULL) == ATTN_OK, "F32 status");
    CHECK(memcmp(fast, f32, (size_t)n * p * sizeof *fast) == 0, "%s n %d k %d p %d: not the float kernel's bits over the dequantized rows", names[ti], n, k, p);
    CHECK(attn_linear_typed_naive(naive, a, w, dt, b, n, k, p) == ATTN_OK, "naive status");
    CHECK(attn_linear_typed_naive(naive32, a, wf, ATTN_F32, b, n, k, p) == ATTN_OK, "naive F32 status");
    CHECK(memcmp(naive, naive32, (size_t)n * p * sizeof *naive) == 0, "%s n %d k %d p %d: naive not the sums in order over the dequantized rows", names[ti], n, k, p);
    product64(e, bound, a, wf, b, n, k, p);
    int bad = within(fast, e, bound, (size_t)n * p), bad_naive = within(naive, e, bound, (size_t)n * p);
    CHECK(bad < 0 && bad_naive < 0, "%s n %d k %d p %d: output %d/%d off the double product", names[ti], n, k, p, bad, bad_naive);
    for (int i = 0; i < n; i++) {
        CHECK(attn_linear_typed(f32, a + (size_t)i * k, w, dt, b, 1, k, p, NULL) == ATTN_OK, "row status");
        CHECK(memcmp(f32, fast + (size_t)i * p, (size_t)p * sizeof *f32) == 0, "%s n %d k %d p %d: row %d alone differs", names[ti], n, k, p, i);
    }
    for (int parts = 1; parts <= 5; parts++) {
        attn_set_threads(parts);
        memset(f32, 0xff, (size_t)n * p * sizeof *f32);
        attn_linear_t_par(f32, a, w, dt, b, n, k, p, scratch, NULL, NULL);
        CHECK(memcmp(f32, fast, (size_t)n * p * sizeof *f32) == 0, "%s n %d k %d p %d: %d threads differ", names[ti], n, k, p, parts);
    }
    attn_set_threads(1);
    free(w); free(wf); free(a); free(b); free(fast); free(f32); free(naive); free(naive32); free(scratch); free(e); free(bound);
}

static void test_products(void) {
    static const int ns[] = {1, 3, 17}, ps[] = {1, 5, 9, 33};
    for (int ti = 0; ti < NTYPES; ti++) {
        const int bv = block_values[ti];
        const int ks[] = {bv, 3 * bv, bv == 32 ? 7 * bv : 2 * bv};
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 3; d++) check_product(ti, ns[a], ks[d], ps[c], (a + c + d) % 2);
    }
}

// ----------------------------------------------------------------------------
// the checks

static void test_checks(void) {
    float a[17 * 512], out[17 * 8], scratch[32768];
    for (int i = 0; i < 17 * 512; i++) a[i] = 0.5f;
    for (int ti = 0; ti < NTYPES; ti++) {
        const int dt = types[ti], bv = block_values[ti];
        uint8_t *w = random_blocks(ti, 8 * 2);
        // k not a multiple of the block
        const int bad_k[] = {bv + 4, bv / 2, 3 * bv - 32};
        for (int i = 0; i < 3; i++) {
            if (bad_k[i] % bv == 0) continue;
            CHECK(attn_linear_typed(out, a, w, dt, NULL, 3, bad_k[i], 2, scratch) == ATTN_ERR_SIZE, "%s k %d: not ATTN_ERR_SIZE", names[ti], bad_k[i]);
            CHECK(attn_linear_typed(out, a, w, dt, NULL, 1, bad_k[i], 2, NULL) == ATTN_ERR_SIZE, "%s k %d n 1: not ATTN_ERR_SIZE", names[ti], bad_k[i]);
            CHECK(attn_linear_typed_naive(out, a, w, dt, NULL, 3, bad_k[i], 2) == ATTN_ERR_SIZE, "%s k %d naive: not ATTN_ERR_SIZE", names[ti], bad_k[i]);
        }
        CHECK(attn_linear_typed(out, a, w, dt, NULL, 3, bv, 8, NULL) == ATTN_ERR_NULL, "%s: n > 1 without scratch", names[ti]);
        CHECK(attn_linear_typed(out, a, w, dt | ATTN_PANEL8, NULL, 1, bv, 8, NULL) == ATTN_ERR_FLAGS, "%s in panels: not ATTN_ERR_FLAGS", names[ti]);
        // attn_panel8 leaves quantized blocks as they are
        uint8_t *copy = malloc((size_t)16 * block_bytes[ti]), tmp[16 * 210];
        memcpy(copy, w, (size_t)16 * block_bytes[ti]);
        CHECK(attn_panel8(w, dt, 16, bv, tmp) == dt && memcmp(copy, w, (size_t)16 * block_bytes[ti]) == 0, "%s: attn_panel8 changed it", names[ti]);
        // non-finite scales: found at their block's first value; and the product overflows
        const size_t count = (size_t)16 * bv;
        CHECK(attn_first_non_finite(w, dt, count) == count, "%s: finite scales reported", names[ti]);
        for (int s = 0; s < 2 && scale_at[ti][s] >= 0; s++) {
            static const uint16_t bad[] = {0x7c00, 0xfc00, 0x7e00, 0x7c01};
            for (int v = 0; v < 4; v++) {
                for (int blk = 0; blk < 16; blk += 5) {
                    uint8_t *at = w + (size_t)blk * block_bytes[ti] + scale_at[ti][s];
                    const uint8_t keep[2] = {at[0], at[1]};
                    put_f16(at, bad[v]);
                    CHECK(attn_first_non_finite(w, dt, count) == (size_t)blk * bv, "%s scale %d = %04x in block %d: %zu", names[ti], s, bad[v], blk, attn_first_non_finite(w, dt, count));
                    put_f16(at, 0x7bff);   // the largest finite f16
                    CHECK(attn_first_non_finite(w, dt, count) == count, "%s scale %d = 65504 in block %d reported", names[ti], s, blk);
                    put_f16(at, bad[v]);
                    CHECK(attn_linear_typed(out, a, w, dt, NULL, 1, 16 * bv / 8, 8, NULL) == ATTN_ERR_OVERFLOW, "%s scale %d = %04x: the product is finite", names[ti], s, bad[v]);
                    at[0] = keep[0]; at[1] = keep[1];
                }
            }
        }
        free(copy); free(w);
    }
    // unknown dtypes
    uint8_t w[8 * 210] = {0};
    // (ggml's F16, Q8_1, Q8_K, IQ2_XXS shifted as the quantized codes are; a code with low bits)
    const int unknown[] = {15, 99, -1, 1 << 8, 9 << 8, 15 << 8, 16 << 8, 24 << 8, 1000 << 8, ATTN_IQ4_XS + 1,
                           ATTN_Q8_0 | ATTN_PANEL8, ATTN_F32 | ATTN_PANEL8};
    for (int i = 0; i < 12; i++) {
        CHECK(attn_linear_typed(out, a, w, unknown[i], NULL, 1, 256, 1, scratch) == ATTN_ERR_FLAGS, "dtype %d: not ATTN_ERR_FLAGS", unknown[i]);
        CHECK(attn_linear_typed_naive(out, a, w, unknown[i], NULL, 1, 256, 1) == ATTN_ERR_FLAGS, "dtype %d naive: not ATTN_ERR_FLAGS", unknown[i]);
    }
}

// ----------------------------------------------------------------------------
// a LLaMA model of quantized matrices (Q4_K, Q8_0, Q6_K mixed) passes attn_llama_check and runs
// with the bits of the same model over the dequantized matrices in F32; rows that are not whole
// blocks are refused

static void test_llama(void) {
    const attn_llama_config cfg = {.n_layer = 1, .n_head = 4, .n_kv_head = 2, .head_dim = 64, .hidden = 256,
                                   .intermediate = 512, .vocab_size = 16, .n_positions = 16, .eps = 1e-5f};
    enum { N = ATTN_LLAMA_GLOBALS + ATTN_LLAMA_PER_LAYER, T = 5 };
    attn_tensor q[N], f[N];
    void *owned[2 * N];
    int owned_n = 0;
    memset(q, 0, sizeof q);
    static const struct { int at, rows, cols, ti; } mats[] = {
        {ATTN_LLAMA_EMBED, 16, 256, 7}, {ATTN_LLAMA_LM_HEAD, 16, 256, 0},
        {ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WQ, 256, 256, 7}, {ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WK, 128, 256, 9},
        {ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WV, 128, 256, 0}, {ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WO, 256, 256, 7},
        {ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WGATE, 512, 256, 8}, {ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WUP, 512, 256, 1},
        {ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WDOWN, 256, 512, 9}};
    for (size_t i = 0; i < sizeof mats / sizeof *mats; i++) {
        const int ti = mats[i].ti;
        const size_t count = (size_t)mats[i].rows * mats[i].cols;
        uint8_t *w = random_blocks(ti, count / block_values[ti]);
        // small scales (2^-10 .. 2^-7): the activations stay in range through the layer
        for (size_t bl = 0; bl < count / block_values[ti]; bl++)
            for (int s = 0; s < 2 && scale_at[ti][s] >= 0; s++)
                put_f16(w + bl * block_bytes[ti] + scale_at[ti][s], (uint16_t)(randint(5, 8) << 10 | randint(0, 1023)));
        float *wf = malloc(count * sizeof *wf);
        attn_widen(wf, w, types[ti], count);
        q[mats[i].at] = (attn_tensor){w, types[ti]};
        f[mats[i].at] = (attn_tensor){wf, ATTN_F32};
        owned[owned_n++] = w;
        owned[owned_n++] = wf;
    }
    float *norm = randmat(256, 0.9f, 1.1f), *ln1 = randmat(256, 0.9f, 1.1f), *ln2 = randmat(256, 0.9f, 1.1f), inv_freq[32];
    for (int i = 0; i < 32; i++) inv_freq[i] = (float)pow(10000.0, -2.0 * i / 64);
    q[ATTN_LLAMA_NORM] = (attn_tensor){norm, ATTN_F32};
    q[ATTN_LLAMA_INV_FREQ] = (attn_tensor){inv_freq, ATTN_F32};
    q[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_LN1] = (attn_tensor){ln1, ATTN_F32};
    q[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_LN2] = (attn_tensor){ln2, ATTN_F32};
    for (int i = 0; i < N; i++)
        if (!f[i].data || f[i].dtype != ATTN_F32 || q[i].dtype == ATTN_F32) f[i] = q[i];
    CHECK(attn_llama_check(&cfg, q) == ATTN_OK, "quantized llama: check %d", attn_llama_check(&cfg, q));
    CHECK(attn_llama_check(&cfg, f) == ATTN_OK, "dequantized llama: check");
    const int32_t ids[T] = {3, 1, 4, 1, 5};
    const size_t cache_bytes = attn_llama_cache_size(&cfg, 8), ws_bytes = attn_llama_workspace_size(&cfg, T, T);
    float *logits_q = malloc((size_t)T * 16 * sizeof(float)), *logits_f = malloc((size_t)T * 16 * sizeof(float));
    float *cache = malloc(cache_bytes), *ws = malloc(ws_bytes);
    CHECK(attn_llama_forward(logits_q, NULL, NULL, NULL, cache, ws, &cfg, q, ids, T, 0, 8, 0) == ATTN_OK, "quantized forward");
    CHECK(attn_llama_forward(logits_f, NULL, NULL, NULL, cache, ws, &cfg, f, ids, T, 0, 8, 0) == ATTN_OK, "dequantized forward");
    CHECK(memcmp(logits_q, logits_f, (size_t)T * 16 * sizeof(float)) == 0, "quantized llama: logits not those over the dequantized weights");
    // W_down's rows of F = 288 values: whole blocks of 32 (Q8_0), not of 256 (Q6_K)
    attn_llama_config odd = cfg;
    odd.intermediate = 288;
    CHECK(attn_llama_check(&odd, q) == ATTN_ERR_FLAGS, "Q6_K rows of 288 values accepted");
    q[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WDOWN].dtype = ATTN_Q8_0;
    CHECK(attn_llama_check(&odd, q) == ATTN_OK, "Q8_0 rows of 288 values refused");
    odd.hidden = 240;   // not whole blocks of 32 (Q8_0 V)
    CHECK(attn_llama_check(&odd, q) == ATTN_ERR_FLAGS, "rows of 240 values accepted");
    for (int i = 0; i < owned_n; i++) free(owned[i]);
    free(norm); free(ln1); free(ln2); free(logits_q); free(logits_f); free(cache); free(ws);
}

int main(void) {
    test_dequantize();
    test_known_blocks();
    test_products();
    test_checks();
    test_llama();
    printf("test_quant: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
