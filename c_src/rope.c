// rope.c - RoPE, rotary position embedding (Su et al. 2021), once for the whole core: the inverse
// frequencies (with Llama 3's scaling), the table of each position's cosines and sines, the
// rotation (rotate-half or interleaved pairs), and attn_rope, the page's one-call RoPE, built from
// the same three pieces; llama.c runs the table and the rotation. See attention.h for the maths.
//
// θ_i is rounded to float32 (as a checkpoint's inv_freq is); each angle and its cosine and sine are
// computed in double and rounded once; the rotation is in float32. The double maths is written out
// below (no libm): the native build and every wasm build give the same bits, and the wasm gains no
// sin/cos/pow tables. RoPE is a small part of the work (n·d values, against attention's n²·d): its
// functions are compiled for size (clang's minsize: no unrolled or vectorised copies).
#include "attention.h"
#include "internal.h"  // fits, all_finite; attn_rope_cos_sin, attn_rope_rotate_fast are defined here

#ifdef ATTN_EMBED
// The one-file embed's build (-DATTN_EMBED) has no RoPE: its element never rotates, and the maths
// below would add ~1.3 KB to the file blog authors copy. The export stays (one export list for
// every build); ATTN_ERR_FLAGS, which attn_rope cannot return otherwise (it takes no flags), says
// "not in this build" (web/core/ops.js words it so).
attn_status attn_rope(float *out, float *theta, const float *x, int n, int heads, int d, float base, int pos0) {
    (void)out; (void)theta; (void)x; (void)n; (void)heads; (void)d; (void)base; (void)pos0;
    return ATTN_ERR_FLAGS;
}
#else
#if defined(__clang__)
#define ROPE_FN __attribute__((minsize, noinline))
#else
#define ROPE_FN __attribute__((noinline))
#endif

// ----------------------------------------------------------------------------
// the double maths

// e^y for y <= 0, in double: y = k·ln2 + r with |r| <= ln2/2, Taylor to r^16 (error < 1e-17)
ROPE_FN static double rope_exp(double y) {
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    if (y < -700.0) return 0.0;
    const int k = (int)(y * 1.44269504088896338700 - 0.5);   // round(y / ln2), y <= 0
    const double r = (y - k * ln2_hi) - k * ln2_lo;
    double s = 1.0;
    for (int j = 16; j >= 1; j--) s = 1.0 + s * r / j;
    for (int j = 0; j < -k; j++) s *= 0.5;                   // 2^k, exact
    return s;
}

// ln(b) for a finite b > 0, in double: b = m·2^e with m in [√½, √2), ln m = 2·atanh((m-1)/(m+1))
ROPE_FN static double rope_log(double b) {
    int e = 0;
    while (b >= 1.4142135623730951) { b *= 0.5; e++; }
    while (b < 0.7071067811865476) { b *= 2.0; e--; }
    const double s = (b - 1.0) / (b + 1.0), s2 = s * s;
    double t = 0.0;
    for (int j = 25; j >= 1; j -= 2) t = 1.0 / j + s2 * t;   // s·(1 + s²/3 + s⁴/5 + ...), s <= 0.172
    return 2.0 * s * t + e * 6.93147180559945309417e-01;
}

// cos a and sin a for 0 <= a < 2^20·π/2, in double, rounded once: a = k·π/2 + r with |r| <= π/4
// (π/2 in three parts, Cody-Waite, k·part exact), then the Taylor series of cos r and sin r
ROPE_FN static void rope_sincos(double a, float *c, float *s) {
    const double p1 = 1.57079632673412561417e+00, p2 = 6.07710050630396597660e-11,
                 p3 = 2.02226624879595063154e-21;
    const int k = (int)(a * 6.36619772367581382433e-01 + 0.5);
    const double r = ((a - k * p1) - k * p2) - k * p3, r2 = r * r;
    double cs = 1.0, sn = 1.0;
    for (int j = 18; j >= 2; j -= 2) cs = 1.0 - cs * r2 / (j * (j - 1));
    for (int j = 19; j >= 3; j -= 2) sn = 1.0 - sn * r2 / (j * (j - 1));
    sn *= r;
    switch (k & 3) {
    case 0: *c = (float)cs; *s = (float)sn; break;
    case 1: *c = (float)-sn; *s = (float)cs; break;
    case 2: *c = (float)-cs; *s = (float)-sn; break;
    default: *c = (float)sn; *s = (float)-cs; break;
    }
}

// ----------------------------------------------------------------------------
// 1. the inverse frequencies

// θ_i = base^(-2i/d), ln base given, in double
ROPE_FN static double frequency(int i, int d, double log_base) { return rope_exp(-(2.0 * i / d) * log_base); }

// Llama 3's scaling of a frequency f (transformers' _compute_llama3_parameters, in double):
// wavelengths 2π/f above original/low divided by factor, those below original/high kept, the band
// between blended, both ends included
static double llama3_scaled(double f, const attn_rope_scaling *s) {
    const double wavelength = 2.0 * 3.14159265358979311600 / f;
    if (wavelength > s->original_max_positions / s->low_freq_factor) return f / s->factor;
    if (wavelength < s->original_max_positions / s->high_freq_factor) return f;
    const double smooth = (s->original_max_positions / wavelength - s->low_freq_factor) /
                          (s->high_freq_factor - s->low_freq_factor);
    return (1.0 - smooth) * f / s->factor + smooth * f;
}

static int finite_at_least(double x, double lo) { return x >= lo && x <= 1.79769313486231570815e+308; }

// the scaling's numbers as attention.h asks: factor >= 1, 0 < low < high, original >= 1, all finite
static int scaling_ok(const attn_rope_scaling *s) {
    return finite_at_least(s->factor, 1.0) && s->low_freq_factor > 0.0 && s->high_freq_factor > s->low_freq_factor &&
           finite_at_least(s->high_freq_factor, 0.0) && finite_at_least(s->original_max_positions, 1.0);
}

ROPE_FN attn_status attn_rope_frequencies(float *theta, int d, double base, const attn_rope_scaling *scaling) {
    if (!theta) return ATTN_ERR_NULL;
    if (d < 2 || d % 2) return ATTN_ERR_SIZE;
    if (!finite_at_least(base, 1.0) || (scaling && !scaling_ok(scaling))) return ATTN_ERR_RANGE;
    const double lb = rope_log(base);
    for (int i = 0; i < d / 2; i++) {
        const double f = frequency(i, d, lb);
        theta[i] = (float)(scaling ? llama3_scaled(f, scaling) : f);
    }
    return ATTN_OK;
}

// ----------------------------------------------------------------------------
// 2. the cosines and sines; 3. the rotation (internal.h: unchecked, for llama.c)

ROPE_FN void attn_rope_cos_sin(float *cs, float *sn, const float *theta, int n, int half, int pos0) {
    for (int r = 0; r < n; r++)
        for (int i = 0; i < half; i++)
            rope_sincos((double)(pos0 + r) * theta[i], cs + (size_t)r * half + i, sn + (size_t)r * half + i);
}

// the two values of pair i of a vector of d = 2·half: (i, i + half) rotate-half, (2i, 2i + 1) interleaved
static inline size_t first_of(int i, unsigned flags) { return flags & ATTN_ROPE_INTERLEAVED ? 2 * (size_t)i : (size_t)i; }
static inline size_t second_of(int i, int half, unsigned flags) {
    return flags & ATTN_ROPE_INTERLEAVED ? 2 * (size_t)i + 1 : (size_t)(i + half);
}

// pair (a, b) of x turned by the angle whose cosine and sine are c, s: (a·c − b·s, b·c + a·s)
static inline void turn(float *o, const float *x, size_t ia, size_t ib, float c, float s) {
    const float a = x[ia], b = x[ib];
    o[ia] = a * c - b * s;
    o[ib] = b * c + a * s;
}

ROPE_FN void attn_rope_rotate_fast(float *out, const float *x, const float *cs, const float *sn, int n, int heads,
                                   int d, unsigned flags) {
    const int half = d / 2;
    for (int r = 0; r < n; r++) {
        const float *c = cs + (size_t)r * half, *s = sn + (size_t)r * half;
        for (int h = 0; h < heads; h++) {
            const size_t at = ((size_t)r * heads + h) * d;
            for (int i = 0; i < half; i++) turn(out + at, x + at, first_of(i, flags), second_of(i, half, flags), c[i], s[i]);
        }
    }
}

// the checks the table and attn_rope share: n rows from pos0 within [0, 2^20)
static attn_status check_rows(int n, int pos0) {
    if (n < 1) return ATTN_ERR_SIZE;
    if (pos0 < 0 || pos0 > ATTN_ROPE_MAX_POSITION - n) return ATTN_ERR_RANGE;
    return ATTN_OK;
}

ROPE_FN attn_status attn_rope_table(float *cos, float *sin, const float *theta, int n, int half, int pos0) {
    if (!cos || !sin || !theta) return ATTN_ERR_NULL;
    attn_status st = check_rows(n, pos0);
    if (st != ATTN_OK) return st;
    if (half < 1) return ATTN_ERR_SIZE;
    if (!fits((size_t)n, (size_t)half)) return ATTN_ERR_TOO_LARGE;
    for (int i = 0; i < half; i++)
        if (!(theta[i] >= 0.0f && theta[i] <= 1.0f)) return ATTN_ERR_RANGE;
    attn_rope_cos_sin(cos, sin, theta, n, half, pos0);
    return ATTN_OK;
}

// x (n, heads·d): sizes that fit in size_t
static attn_status check_sizes(int n, int heads, int d) {
    if (n < 1 || heads < 1 || d < 2 || d % 2) return ATTN_ERR_SIZE;
    if (!fits((size_t)heads, (size_t)d) || !fits((size_t)n, (size_t)heads * d)) return ATTN_ERR_TOO_LARGE;
    return ATTN_OK;
}

ROPE_FN attn_status attn_rope_rotate(float *out, const float *x, const float *cos, const float *sin, int n, int heads,
                                    int d, unsigned flags) {
    if (!out || !x || !cos || !sin) return ATTN_ERR_NULL;
    if (flags & ~ATTN_ROPE_INTERLEAVED) return ATTN_ERR_FLAGS;
    attn_status st = check_sizes(n, heads, d);
    if (st != ATTN_OK) return st;
    const size_t count = (size_t)n * heads * d, angles = (size_t)n * (d / 2);
    if (!all_finite(x, count) || !all_finite(cos, angles) || !all_finite(sin, angles)) return ATTN_ERR_NON_FINITE;
    attn_rope_rotate_fast(out, x, cos, sin, n, heads, d, flags);
    return all_finite(out, count) ? ATTN_OK : ATTN_ERR_OVERFLOW;   // x was: a pair past float32
}

// ----------------------------------------------------------------------------
// 4. attn_rope: the same pieces a pair index at a time (θ_i as frequency() gives it, then each
// row's cosine and sine through rope_sincos, then every head's pair i turned), so that it needs
// no buffer of the caller's: the bits of attn_rope_frequencies, attn_rope_table and
// attn_rope_rotate run one after the other (test_core.c checks it)

ROPE_FN attn_status attn_rope(float *out, float *theta, const float *x, int n, int heads, int d, float base, int pos0) {
    if (!out || !x) return ATTN_ERR_NULL;
    if (n < 1 || heads < 1 || d < 2 || d % 2) return ATTN_ERR_SIZE;
    if (!(base >= 1.0f) || !(base <= FLT_MAX)) return ATTN_ERR_RANGE;
    attn_status st = check_rows(n, pos0);
    if (st == ATTN_OK) st = check_sizes(n, heads, d);
    if (st != ATTN_OK) return st;
    if (!all_finite(x, (size_t)n * heads * d)) return ATTN_ERR_NON_FINITE;
    const int half = d / 2;
    const double lb = rope_log(base);
    const size_t width = (size_t)heads * d;
    for (int i = 0; i < half; i++) {
        const float th = (float)frequency(i, d, lb);
        if (theta) theta[i] = th;
        for (int r = 0; r < n; r++) {
            float c, s;
            rope_sincos((double)(pos0 + r) * th, &c, &s);   // attn_rope_cos_sin's one value
            for (int h = 0; h < heads; h++) {
                float *o = out + (size_t)r * width + (size_t)h * d;
                turn(o, x + (o - out), (size_t)i, (size_t)(i + half), c, s);
                if (!(fabsf(o[i]) <= FLT_MAX) || !(fabsf(o[i + half]) <= FLT_MAX)) return ATTN_ERR_OVERFLOW;
            }
        }
    }
    return ATTN_OK;
}
#endif // ATTN_EMBED
