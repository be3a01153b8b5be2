// fuzz.h - shared by the libFuzzer targets in tests/fuzz/ (see README.md there).
//
// The fuzzer's bytes are read as a little script: a few header bytes choose sizes and
// options, then one byte (sometimes five) per float. When the bytes run out a small PRNG
// seeded from the whole input takes over, so short inputs still give full matrices and
// every input is deterministic.
//
// A target checks the header's contract (attention.h), not only the absence of crashes:
// CHECK() prints what was violated and aborts, which libFuzzer records as a crash.
#ifndef ATTN_FUZZ_H
#define ATTN_FUZZ_H

#include "attention.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                            \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "\ncontract violated: %s (%s:%d)\n  ", #cond, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                           \
            fprintf(stderr, "\n");                                                  \
            abort();                                                                \
        }                                                                           \
    } while (0)

// ----------------------------------------------------------------------------
// reading the input

typedef struct fz {
    const uint8_t *p;
    size_t left;
    uint64_t rng;  // used once the bytes are exhausted
} fz;

static inline fz fz_init(const uint8_t *data, size_t size) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a of the whole input
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211ull;
    fz in = {data, size, h | 1};
    return in;
}

static inline uint8_t fz_u8(fz *in) {
    if (in->left) { in->left--; return *in->p++; }
    in->rng ^= in->rng << 13; in->rng ^= in->rng >> 7; in->rng ^= in->rng << 17;  // xorshift64
    return (uint8_t)(in->rng >> 32);
}

static inline uint32_t fz_u32(fz *in) {
    uint32_t x = 0;
    for (int i = 0; i < 4; i++) x |= (uint32_t)fz_u8(in) << (8 * i);
    return x;
}

static inline float bits_to_float(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
static inline uint32_t float_bits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }

// Values that break numerical code: NaN, ±Inf, subnormals, the float32 extremes, -0, huge
// logits, the edges of expf's range.
static const float FZ_SPECIAL[] = {
    0.0f, -0.0f, 1.0f, -1.0f, NAN, -NAN, INFINITY, -INFINITY,
    FLT_MIN, -FLT_MIN, 1e-45f, -1e-45f, 1e-40f, -1e-40f, FLT_MAX, -FLT_MAX,
    3e38f, -3e38f, 1e4f, -1e4f, 1e19f, -1e19f, 1e-19f, 88.7f, -87.4f, 0.5f, 65504.0f, 2e-38f,
};
#define FZ_NSPECIAL (sizeof FZ_SPECIAL / sizeof FZ_SPECIAL[0])

// How the values of one matrix are drawn, from one mode byte:
//   low 3 bits: 0-4 plain (small multiples of 1/32 times an amplitude), 5-6 plain with
//   special values mixed in, 7 raw bit patterns mixed in; high bits: the amplitude.
typedef struct fz_values { int kind; float amp; } fz_values;

static inline fz_values fz_values_mode(fz *in) {
    static const float AMP[] = {1.0f, 1.0f, 0.25f, 4.0f, 1e-3f, 30.0f, 1e3f, 1e-20f,
                                1e18f, 1e36f, 1.0f, 0.0f, 1e-38f, 100.0f, 1e30f, 1.0f, 8.0f,
                                2.0f, 1e-30f, 1e37f, 1.0f, 1e5f, 1e10f, 1.0f, 0.5f, 1.0f,
                                1e-5f, 1e15f, 1.0f, 1e20f, 16.0f, 1e38f};
    uint8_t b = fz_u8(in);
    int low = b & 7;
    fz_values v = {low <= 4 ? 0 : low <= 6 ? 1 : 2, AMP[b >> 3]};
    return v;
}

static inline float fz_float(fz *in, fz_values mode) {
    uint8_t b = fz_u8(in);
    if (mode.kind == 0 || b < 216) return (float)((int)b - 108) / 32.0f * mode.amp;
    if (mode.kind == 1 || b < 248) return FZ_SPECIAL[(size_t)b % FZ_NSPECIAL];
    return bits_to_float(fz_u32(in));
}

// A malloc'd copy of count floats drawn from the input; exactly count floats, so that
// AddressSanitizer sees any read past the end. Never NULL (count 0 gives 1 float).
static inline float *fz_matrix(fz *in, size_t count) {
    fz_values mode = fz_values_mode(in);
    float *p = malloc((count ? count : 1) * sizeof *p);
    for (size_t i = 0; i < count; i++) p[i] = fz_float(in, mode);
    return p;
}

// An output buffer of exactly count floats, filled with a NaN canary, so that an output the
// core forgot to write shows up as non-finite.
#define FZ_CANARY 0x7fc0dead
static inline float *fz_output(size_t count) {
    float *p = malloc((count ? count : 1) * sizeof *p);
    float c = bits_to_float(FZ_CANARY);
    for (size_t i = 0; i < count; i++) p[i] = c;
    return p;
}

// Mask (n, m): mode 0 random bits, 1 everything allowed, 2 random rows fully masked,
// 3 nothing allowed, 4 a band, 5 random bytes (any nonzero value means allowed).
static inline uint8_t *fz_mask(fz *in, int n, int m) {
    size_t count = (size_t)n * (size_t)m;
    uint8_t *mask = malloc(count ? count : 1);
    uint8_t mode = fz_u8(in) % 6;
    for (int i = 0; i < n; i++) {
        int dead = mode == 2 && (fz_u8(in) & 3) == 0;
        uint8_t bits = 0;
        for (int j = 0; j < m; j++) {
            if ((j & 7) == 0) bits = fz_u8(in);
            uint8_t allowed;
            switch (mode) {
            case 1: allowed = 1; break;
            case 2: allowed = dead ? 0 : (bits >> (j & 7)) & 1; break;
            case 3: allowed = 0; break;
            case 4: allowed = (uint8_t)(abs(i - j) <= (bits & 3)); break;
            case 5: allowed = (uint8_t)((bits >> 4) ^ (uint8_t)j); break;  // any byte value
            default: allowed = (bits >> (j & 7)) & 1; break;
            }
            mask[(size_t)i * m + j] = allowed;
        }
    }
    return mask;
}

// A scale: 0 the default 1/√d_k, 1 a small custom value (0 included), 2 any value from the
// special table (NaN, negative, -0, subnormal, huge), 3 raw bits.
static inline float fz_scale(fz *in, int mode, int d_k) {
    switch (mode & 3) {
    case 1: return (float)fz_u8(in) / 64.0f;
    case 2: return FZ_SPECIAL[fz_u8(in) % FZ_NSPECIAL];
    case 3: return bits_to_float(fz_u32(in));
    default: return attn_default_scale(d_k);
    }
}

// Flags: mostly 0 or ATTN_CAUSAL, sometimes unknown bits as well.
static inline unsigned fz_flags(fz *in) {
    uint8_t b = fz_u8(in);
    unsigned f = b & 1u;
    if ((b & 0xe0) == 0xe0) {
        static const unsigned UNKNOWN[] = {2u, 4u, 0x80u, 0x80000000u, ~0u, ~1u, 0x100u, 6u};
        f |= UNKNOWN[(b >> 1) & 7];
    }
    return f;
}

// An invalid dimension, from the fuzzer: 0, negative, INT_MIN.
static inline int fz_bad_dim(fz *in) {
    static const int BAD[] = {0, -1, -2, -31, -64, -2147483647 - 1, -1000000, 0};
    return BAD[fz_u8(in) & 7];
}

// With FUZZ_DUMP=1 in the environment, targets print their decoded inputs (to stderr) before
// calling the core: the reproduction of a failing input in readable form.
static inline int fz_dumping(void) {
    static int on = -1;
    if (on < 0) on = getenv("FUZZ_DUMP") != NULL;
    return on;
}

static inline void fz_dump(const char *name, const float *x, int rows, int cols) {
    if (!fz_dumping()) return;
    fprintf(stderr, "%s (%d, %d) =", name, rows, cols);
    for (int i = 0; i < rows; i++) {
        fprintf(stderr, "\n  [");
        for (int c = 0; c < cols; c++) fprintf(stderr, "%s%.9g", c ? ", " : "", (double)x[(size_t)i * cols + c]);
        fprintf(stderr, "]");
    }
    fprintf(stderr, "\n");
}

static inline void fz_dump_mask(const uint8_t *mask, int rows, int cols) {
    if (!fz_dumping() || !mask) return;
    fprintf(stderr, "mask (%d, %d) =", rows, cols);
    for (int i = 0; i < rows; i++) {
        fprintf(stderr, "\n  ");
        for (int c = 0; c < cols; c++) fprintf(stderr, "%c", mask[(size_t)i * cols + c] ? '1' : '0');
    }
    fprintf(stderr, "\n");
}

// ----------------------------------------------------------------------------
// checks shared by the targets

static inline int status_valid(attn_status s) { return s >= ATTN_OK && s <= ATTN_ERR_FLAGS; }

static inline int all_finite(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++) if (!isfinite(x[i])) return 0;
    return 1;
}

static inline int allowed_at(const uint8_t *mask, int i, int j, int m, unsigned flags) {
    if ((flags & ATTN_CAUSAL) && j > i) return 0;
    return !mask || mask[(size_t)i * m + j] != 0;
}

// Largest row norm (double) of a (rows, cols) matrix.
static inline double max_row_norm(const float *x, int rows, int cols) {
    double best = 0;
    for (int i = 0; i < rows; i++) {
        double s = 0;
        for (int c = 0; c < cols; c++) s += (double)x[(size_t)i * cols + c] * x[(size_t)i * cols + c];
        if (s > best) best = s;
    }
    return sqrt(best);
}

static inline double max_abs(const float *x, size_t count) {
    double best = 0;
    for (size_t i = 0; i < count; i++) if (fabs((double)x[i]) > best) best = fabs((double)x[i]);
    return best;
}

// The invariants of a successful attention call (attention.h, "Semantics"):
// weights finite in [0, 1], masked ones exactly 0, each row sums to 1 within 1e-4 or is all 0
// when no key is allowed, in which case the output row is all 0; outputs finite and inside
// the range of the values (a convex combination). weights may be NULL.
static inline void check_attention_result(const char *who, const float *out, const float *weights,
                                          const float *v, const uint8_t *mask,
                                          int n, int m, int d_v, unsigned flags) {
    double vmax = max_abs(v, (size_t)m * d_v);
    for (int i = 0; i < n; i++) {
        int any = 0;
        for (int j = 0; j < m; j++) any |= allowed_at(mask, i, j, m, flags);
        const float *o = out + (size_t)i * d_v;
        for (int c = 0; c < d_v; c++) {
            CHECK(isfinite(o[c]), "%s: out[%d][%d] = %g (bits %08x) is not finite", who, i, c, (double)o[c], float_bits(o[c]));
            CHECK(fabs((double)o[c]) <= vmax * (1 + 1e-4) + 1e-30,
                  "%s: |out[%d][%d]| = %g exceeds max |v| = %g: not a convex combination", who, i, c, (double)o[c], vmax);
            if (!any) CHECK(o[c] == 0.0f, "%s: row %d is fully masked but out[%d][%d] = %g", who, i, i, c, (double)o[c]);
        }
        if (!weights) continue;
        const float *w = weights + (size_t)i * m;
        double sum = 0;
        for (int j = 0; j < m; j++) {
            CHECK(isfinite(w[j]) && w[j] >= 0.0f && w[j] <= 1.0f + 1e-6f,
                  "%s: weights[%d][%d] = %g (bits %08x) is not in [0, 1]", who, i, j, (double)w[j], float_bits(w[j]));
            if (!allowed_at(mask, i, j, m, flags)) {
                CHECK(w[j] == 0.0f, "%s: weights[%d][%d] = %g but that key is masked", who, i, j, (double)w[j]);
            }
            sum += w[j];
        }
        if (any) CHECK(fabs(sum - 1.0) <= 1e-4, "%s: weights row %d sums to %.9g, not 1", who, i, sum);
        else CHECK(sum == 0.0, "%s: row %d is fully masked but its weights sum to %g", who, i, sum);
    }
}

// A loose comparison of two successful attention results (fast vs naive, tiled vs rows).
// The logits of row i may differ by about E_i = (d_k + 4)·2⁻²³·scale·‖q_i‖·max‖k_j‖ between
// two summation orders; weights then differ by at most ~2·E_i relatively, and outputs by
// (2·E_i + rounding)·max|v|. Rows whose logits are so large that E_i > 1e-3 are not
// compared (float32 cannot tell those keys apart; both results still pass the invariants).
// The tolerances of row i: *tol_w for weights, *tol_o for outputs; 0 when the row is not
// compared (E_i > 1e-3).
static inline int row_tolerance(const float *q, const float *k, const float *v, int i,
                                int m, int d_k, int d_v, float scale, double *tol_w, double *tol_o) {
    double kmax = max_row_norm(k, m, d_k), vmax = max_abs(v, (size_t)m * d_v);
    double qn = max_row_norm(q + (size_t)i * d_k, 1, d_k);
    double e = (d_k + 4) * 0x1p-23 * (double)scale * qn * kmax;
    if (!(e <= 1e-3)) return 0;
    *tol_w = 2e-5 + 4 * e;
    *tol_o = (1e-5 + 4 * e + m * 3e-7) * vmax + 1e-35;
    return 1;
}

static inline void compare_attention(const char *who, const float *out_a, const float *w_a,
                                     const float *out_b, const float *w_b,
                                     const float *q, const float *k, const float *v,
                                     int n, int m, int d_k, int d_v, float scale) {
    for (int i = 0; i < n; i++) {
        double tol_w, tol_o;
        if (!row_tolerance(q, k, v, i, m, d_k, d_v, scale, &tol_w, &tol_o)) continue;
        for (int c = 0; c < d_v; c++) {
            double a = out_a[(size_t)i * d_v + c], b = out_b[(size_t)i * d_v + c];
            CHECK(fabs(a - b) <= tol_o, "%s: out[%d][%d]: %.9g vs %.9g (tolerance %g)", who, i, c, a, b, tol_o);
        }
        if (!w_a || !w_b) continue;
        for (int j = 0; j < m; j++) {
            double a = w_a[(size_t)i * m + j], b = w_b[(size_t)i * m + j];
            CHECK(fabs(a - b) <= tol_w, "%s: weights[%d][%d]: %.9g vs %.9g (tolerance %g)", who, i, j, a, b, tol_w);
        }
    }
}

// attention.h: "Finite inputs so large that Q·Kᵀ could overflow float32 (max‖q_i‖·max‖k_j‖·
// max(scale, 1) >= FLT_MAX/2, checked before any work, the same on every path whatever the
// mask) give ATTN_ERR_OVERFLOW, and so do projections or outputs that overflow."
static inline double logits_bound(const float *q, const float *k, int n, int m, int d_k, float scale) {
    return max_row_norm(q, n, d_k) * max_row_norm(k, m, d_k) * (scale > 1.0f ? (double)scale : 1.0);
}

// Above the bound every path must refuse (a relative margin of 1e-12 for rounding in double).
static inline int must_overflow(const float *q, const float *k, int n, int m, int d_k, float scale) {
    return logits_bound(q, k, n, m, d_k, scale) >= 0.5 * FLT_MAX * (1 + 1e-12);
}

// Below it, ATTN_ERR_OVERFLOW is plausible only when an output can overflow: outputs are convex
// combinations of the rows of v, so max |v| must be within 1e-3 of FLT_MAX.
static inline int overflow_plausible(const float *q, const float *k, const float *v,
                                     int n, int m, int d_k, int d_v, float scale) {
    return logits_bound(q, k, n, m, d_k, scale) >= 0.5 * FLT_MAX * (1 - 1e-12) ||
           max_abs(v, (size_t)m * d_v) >= (1 - 1e-3) * FLT_MAX;
}

// At the float32 limit: a value of v within 1e-3 of FLT_MAX. There an output, a convex
// combination of v's rows, may round to ±FLT_MAX on one path and to ±inf (OVERFLOW) on another
// whose scores differ in their last bits (a dot product summed in another order): both are
// right to within rounding, so the paths may disagree on OK against OVERFLOW (F5).
static inline int at_float_limit(const float *v, size_t count) {
    return max_abs(v, count) >= (1 - 1e-3) * FLT_MAX;
}

#endif  // ATTN_FUZZ_H
