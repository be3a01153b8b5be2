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
#include "tensor.h"
#include "internal.h"  // v4f, v4i, load4, store4, splat, hsum, fits, all_finite

#include <string.h>

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

void attn_widen(float *out, const void *src, int dtype, size_t count) {
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

typedef uint16_t v8u16 __attribute__((vector_size(16)));

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
        attn_widen(out, (const char *)w + (size_t)j * k * attn_dtype_size(base), base, (size_t)k);
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
    return (const char *)w + j * (size_t)k * attn_dtype_size(dtype);
}

// out[c0 .. c1) of one row = a · wᵀ: 8 rows of w at a time (a panel, or 8 rows), widened as they
// are read; c0 a multiple of 8 (panels start there)
static void linear_row(float *out, const float *a, const void *w, int dtype, int k, int c0, int c1) {
    const int base = base_of(dtype);
    int j = c0;
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
    if (attn_dtype_size(dtype) == 0 || (in_panels(dtype) && k % 4)) return ATTN_ERR_FLAGS;
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

attn_status attn_linear_typed_naive(float *out, const float *a, const void *w, int dtype, const float *b,
                                    int n, int k, int p) {
    attn_status st = check_typed(out, a, w, dtype, n, k, p);
    if (st != ATTN_OK) return st;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < p; j++) {
            float s = 0.0f;
            for (int t = 0; t < k; t++) s += a[(size_t)i * k + t] * get_typed(w, base_of(dtype), at_of(dtype, j, t, k, p));
            out[(size_t)i * p + j] = b ? s + b[j] : s;
        }
    }
    return all_finite(out, (size_t)n * p) ? ATTN_OK : ATTN_ERR_OVERFLOW;
}
