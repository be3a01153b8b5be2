// attention.c - see attention.h for the API, shapes and semantics.
//
// Two implementations of the same function live here:
//   attn_forward_naive  plain scalar loops, the reference;
//   attn_forward        4-wide vectors (GCC/Clang vector extensions: SSE natively,
//                       wasm simd128 under emcc -msimd128), same passes.
// Both are tested against each other and against PyTorch (tests/).
// Also here: the packed, cache-blocked linear kernel that mha.c's projections and gpt2.c's
// layers share (attn_pack_fast, attn_linear_fast; internal.h), beside attn_matmul's plain one.
// Build without -ffast-math: softmax relies on IEEE rules for -inf and exp.
#include "attention.h"
#include "internal.h"  // the 4-wide vectors (load4, splat, ...), fits, all_finite, the shared checks

#include <float.h>
#include <math.h>
#include <string.h>

// a·b + c in the tiled kernel's two products (and only there). The default build rounds twice,
// as everywhere else. With -DATTN_RELAXED (build.sh's second build, -mrelaxed-simd) it is wasm's
// f32x4.relaxed_madd: one fused rounding where the CPU has FMA. clang 14 (Debian's emcc 3.1.6)
// knows only the pre-standard opcode of that instruction; build.sh rewrites it to the standard
// one, which takes the same operands in the same order and computes a·b + c.
#ifdef ATTN_RELAXED
#define MADD(a, b, c) ((v4f)__builtin_wasm_fma_f32x4((a), (b), (c)))
#else
#define MADD(a, b, c) ((a) * (b) + (c))
#endif

// ----------------------------------------------------------------------------
// status, sizes, validation

const char *attn_status_string(attn_status status) {
    switch (status) {
    case ATTN_OK: return "ok";
    case ATTN_ERR_NULL: return "a required buffer is NULL";
    case ATTN_ERR_SIZE: return "every dimension must be at least 1";
    case ATTN_ERR_SCALE: return "scale must be a finite number >= 0";
    case ATTN_ERR_NON_FINITE: return "an input holds NaN or Infinity";
    case ATTN_ERR_OVERFLOW: return "the result overflows float32 (inputs are too large in magnitude)";
    case ATTN_ERR_TOO_LARGE: return "a buffer size does not fit in memory addresses";
    case ATTN_ERR_FLAGS: return "unknown flag bits";
    case ATTN_ERR_RANGE: return "a token id, a position or RoPE's base is out of range";
    }
    return "unknown status";
}

float attn_default_scale(int d_k) { return d_k < 1 ? 0.0f : 1.0f / sqrtf((float)d_k); }

static attn_status check_sizes(int n, int m, int d_k, int d_v) {
    if (n < 1 || m < 1 || d_k < 1 || d_v < 1) return ATTN_ERR_SIZE;
    if (!fits((size_t)n, (size_t)d_k) ||
        !fits((size_t)m, (size_t)d_k) || !fits((size_t)m, (size_t)d_v) ||
        !fits((size_t)n, (size_t)d_v)) return ATTN_ERR_TOO_LARGE;
    return ATTN_OK;
}

// Every value finite; the largest squared row norm and the largest |x|, in double.
// Four lanes at a time: |x| ≤ FLT_MAX (false for NaN and ±inf), the largest |x| in float
// (exact), squares summed in double two lanes at a time.
static int scan(const float *x, int rows, int cols, double *max_sq, double *max_abs) {
    const v4i absmask = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
    const v4f fmax = {FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX};
    v4f amax = {0, 0, 0, 0};
    v4i ok = {-1, -1, -1, -1};
    float tail_max = 0.0f;
    double sq_max = 0;
    for (int i = 0; i < rows; i++) {
        const float *r = x + (size_t)i * cols;
        v2d s0 = {0, 0}, s1 = {0, 0};
        int c = 0;
        for (; c + 4 <= cols; c += 4) {
            v4f e = load4(r + c);
            v4f a = (v4f)((v4i)e & absmask);
            ok &= a <= fmax;
            amax = select4(a > amax, a, amax);
            v2d lo = __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1), v2d);
            v2d hi = __builtin_convertvector(__builtin_shufflevector(e, e, 2, 3), v2d);
            s0 += lo * lo;
            s1 += hi * hi;
        }
        double sq = (s0[0] + s0[1]) + (s1[0] + s1[1]);
        for (; c < cols; c++) {
            float e = r[c];
            if (!isfinite(e)) return 0;
            sq += (double)e * e;
            if (fabsf(e) > tail_max) tail_max = fabsf(e);
        }
        if (sq > sq_max) sq_max = sq;
    }
    if (!(ok[0] & ok[1] & ok[2] & ok[3])) return 0;
    float m = tail_max;
    for (int t = 0; t < 4; t++) m = amax[t] > m ? amax[t] : m;
    *max_sq = sq_max;
    *max_abs = m;
    return 1;
}

// Q·Kᵀ cannot overflow (nor any partial sum of it) when max‖q_i‖·max‖k_j‖·max(scale, 1) is below
// FLT_MAX/2 (Cauchy-Schwarz, with room for rounding). Above it the inputs are refused with
// ATTN_ERR_OVERFLOW on every path alike, whatever the mask: |scores| near 1e38 are not data.
// *vmax_out receives max |v| (the tiled path checks that its unnormalized sums stay finite).
static attn_status check_values(const float *q, const float *k, const float *v,
                                int n, int m, int d_k, int d_v, float scale, double *vmax_out) {
    double q2, k2, v2, qa, ka, va;
    if (!scan(q, n, d_k, &q2, &qa) || !scan(k, m, d_k, &k2, &ka) || !scan(v, m, d_v, &v2, &va))
        return ATTN_ERR_NON_FINITE;
    // the unscaled dot products are summed first, so they must stay finite too
    if (sqrt(q2) * sqrt(k2) * (scale > 1.0f ? (double)scale : 1.0) >= 0.5 * (double)FLT_MAX)
        return ATTN_ERR_OVERFLOW;
    if (vmax_out) *vmax_out = va;
    return ATTN_OK;
}

static attn_status check_forward(const float *out, const float *weights, const float *workspace,
                                 const float *q, const float *k, const float *v, const uint8_t *mask,
                                 int n, int m, int d_k, int d_v, float scale, unsigned flags) {
    if (!out || !q || !k || !v || (!weights && !workspace)) return ATTN_ERR_NULL;
    attn_status st = check_sizes(n, m, d_k, d_v);
    if (st == ATTN_OK) st = check_nm(weights ? 1 : 0, mask, n, m);
    if (st == ATTN_OK) st = check_scale_flags(scale, flags);
    return st;
}

// may query i attend to key j?
static int allowed(const uint8_t *mask, int i, int j, int m, unsigned flags) {
    if ((flags & ATTN_CAUSAL) && j > i) return 0;
    return !mask || mask[(size_t)i * m + j] != 0;
}

// Long sums are blocked: SUM_BLOCK terms are summed in float, and the blocks' sums in double.
// A float running sum of m terms drifts by up to m·2⁻²⁴ of its value, and stops growing once
// it holds 2²⁴ equal terms (m = 2²⁵ equal scores gave weights of 2⁻²⁴, not 2⁻²⁵); a blocked
// sum errs as one block does, at most 63·2⁻²⁴ ≈ 3.8e-6 of its value, whatever m. A row of at
// most SUM_BLOCK keys is summed as before (one block, to double and back without change).
// The tiled kernel folds after every FOLD keys (below).
enum { SUM_BLOCK = 64, SUM_COLS = 64 };

static int min_int(int a, int b) { return a < b ? a : b; }

// Passes 2-3 of one row, shared by the reference and the row path: row (m) holds the scaled
// logits (-inf where masked, exp gives exactly 0) and maxval their maximum, finite.
// pass 2: exp and sum, in blocks (SUM_BLOCK terms in float, the blocks in double);
// pass 3: normalize (sum >= 1: the maximum contributes exp(0)).
static void softmax_normalize(float *row, float maxval, int m) {
    double sum = 0.0;
    for (int j0 = 0; j0 < m; j0 += SUM_BLOCK) {
        float part = 0.0f;
        for (int j = j0; j < min_int(m, j0 + SUM_BLOCK); j++) {
            row[j] = expf(row[j] - maxval);
            part += row[j];
        }
        sum += part;
    }
    float inv = 1.0f / (float)sum;
    for (int j = 0; j < m; j++) row[j] *= inv;
}

// The row statistics (attn_forward_stats) are for the models (heads.c). The builds of the teaching
// core alone (build.sh's attention and attention-relaxed, which the element and the pool load:
// -DATTN_NO_STATS) and the embed's leave them out, so their kernels carry no code for them; there
// attn_forward_stats refuses statistics (ATTN_ERR_FLAGS).
#if defined(ATTN_EMBED) && !defined(ATTN_NO_STATS)
#define ATTN_NO_STATS
#endif

#ifndef ATTN_EMBED
// One row's statistics (attention.h's attn_row_stats) from its sums: Z = Σ e, U = Σ e·(s − max),
// D = Σ e·|qpos − kpos|, and the scores at its points less the maximum (-inf: none). Z = 0 (every
// key masked): zeros.
static void row_stats_write(float *o, double Z, double U, double D, const float *point_logits) {
    if (!(Z > 0.0)) { memset(o, 0, ATTN_ROW_STATS * sizeof *o); return; }
    o[ATTN_ROW_ENTROPY] = (float)((log(Z) - U / Z) / log(2.0));
    o[ATTN_ROW_DISTANCE] = (float)(D / Z);
    // exp only where it cannot underflow: libm's sets errno there, one static that the model's
    // threads share (threads.js: no pthreads); e^x rounds to 0 in float below -104 anyway
    for (int p = 0; p < ATTN_ROW_POINTS; p++) {
        const float x = point_logits[p];
        o[ATTN_ROW_POINT + p] = x > -104.0f ? (float)(exp((double)x) / Z) : 0.0f;
    }
}

// The row path's statistics of row i, after pass 1 (row: its scaled scores, -inf where masked,
// maxval their maximum, finite), before the softmax: U and D summed in blocks as the sum is.
static void row_stats_scores(const attn_row_stats *rs, const float *row, float maxval, int i, int m) {
    const float qp = rs->qpos[i];
    double Z = 0.0, U = 0.0, D = 0.0;
    for (int j0 = 0; j0 < m; j0 += SUM_BLOCK) {
        float z = 0.0f, u = 0.0f, d = 0.0f;
        for (int j = j0; j < min_int(m, j0 + SUM_BLOCK); j++) {
            const float x = row[j] - maxval, e = expf(x);
            if (e == 0.0f) continue;   // masked (x = -inf: e·x would be NaN) or vanishing
            z += e; u += e * x; d += e * fabsf(qp - rs->kpos[j]);
        }
        Z += z; U += u; D += d;
    }
    float at[ATTN_ROW_POINTS];
    for (int p = 0; p < ATTN_ROW_POINTS; p++) {
        const int32_t j = rs->points[(size_t)i * ATTN_ROW_POINTS + p];
        at[p] = j < 0 ? -INFINITY : row[j] - maxval;
    }
    row_stats_write(rs->out + (size_t)i * ATTN_ROW_STATS, Z, U, D, at);
}
#endif

void attn_row_stats_naive(const attn_row_stats *rs, const float *weights, int n, int m) {
    for (int i = 0; i < n; i++) {
        const float *w = weights + (size_t)i * m;
        float *o = rs->out + (size_t)i * ATTN_ROW_STATS;
        double h = 0.0, d = 0.0;
        for (int j = 0; j < m; j++) {
            if (w[j] > 0.0f) h -= (double)w[j] * log2((double)w[j]);
            d += (double)w[j] * fabs((double)rs->qpos[i] - (double)rs->kpos[j]);
        }
        o[ATTN_ROW_ENTROPY] = (float)h;
        o[ATTN_ROW_DISTANCE] = (float)d;
        for (int p = 0; p < ATTN_ROW_POINTS; p++) {
            const int32_t j = rs->points[(size_t)i * ATTN_ROW_POINTS + p];
            o[ATTN_ROW_POINT + p] = j < 0 ? 0.0f : w[j];
        }
    }
}

// ----------------------------------------------------------------------------
// the reference: plain loops, one pass at a time

attn_status attn_forward_naive(float *out, float *weights, float *workspace,
                               const float *q, const float *k, const float *v, const uint8_t *mask,
                               int n, int m, int d_k, int d_v, float scale, unsigned flags) {
    attn_status st = check_forward(out, weights, workspace, q, k, v, mask, n, m, d_k, d_v, scale, flags);
    if (st == ATTN_OK) st = check_values(q, k, v, n, m, d_k, d_v, scale, NULL);
    if (st != ATTN_OK) return st;
    for (int i = 0; i < n; i++) {
        float *row = weights ? weights + (size_t)i * m : workspace;
        float *o = out + (size_t)i * d_v;
        // pass 1: query dot key, scaled, and the row's true maximum
        float maxval = -INFINITY;
        for (int j = 0; j < m; j++) {
            if (!allowed(mask, i, j, m, flags)) { row[j] = -INFINITY; continue; }
            float s = 0.0f;
            for (int c = 0; c < d_k; c++) s += q[(size_t)i * d_k + c] * k[(size_t)j * d_k + c];
            s *= scale;  // finite: check_values bounds |s|
            row[j] = s;
            if (s > maxval) maxval = s;
        }
        if (maxval == -INFINITY) {  // every key masked: weights 0, output 0
            for (int j = 0; j < m; j++) row[j] = 0.0f;
            for (int c = 0; c < d_v; c++) o[c] = 0.0f;
            continue;
        }
        // passes 2-3: exp, sum and normalize, as the row path does (so that both round alike
        // also at the float32 limits)
        softmax_normalize(row, maxval, m);
        // pass 4: weighted sum of values, blocked likewise
        for (int c = 0; c < d_v; c++) {
            double acc = 0.0;
            for (int j0 = 0; j0 < m; j0 += SUM_BLOCK) {
                float part = 0.0f;
                for (int j = j0; j < min_int(m, j0 + SUM_BLOCK); j++) part += row[j] * v[(size_t)j * d_v + c];
                acc += part;
            }
            o[c] = (float)acc;
            if (!isfinite(o[c])) return ATTN_ERR_OVERFLOW;
        }
    }
    return ATTN_OK;
}


// y += w * x
static inline void axpy(float *y, float w, const float *x, int d) {
    v4f wv = splat(w);
    int c = 0;
    for (; c + 4 <= d; c += 4) store4(y + c, load4(y + c) + wv * load4(x + c));
    for (; c < d; c++) y[c] += w * x[c];
}


// Passes 2-4 for one query row. row (m) holds the scaled logits, -inf where masked;
// maxval is their maximum (-inf when every key is masked). Writes weights into row
// and the output row o (d_v). Returns ATTN_OVERFLOW if o is not finite.
static attn_status softmax_row_times_v(float *row, float *o, float maxval,
                                       const float *v, int m, int d_v) {
    if (maxval == -INFINITY) {  // every key masked: weights 0, output 0
        memset(o, 0, (size_t)d_v * sizeof *o);
        memset(row, 0, (size_t)m * sizeof *row);
        return ATTN_OK;
    }
    softmax_normalize(row, maxval, m);  // passes 2-3
    // pass 4: weighted sum of values (masked keys have weight 0: skip them), SUM_COLS output
    // columns at a time, in blocks of keys
    for (int c0 = 0; c0 < d_v; c0 += SUM_COLS) {
        int w = min_int(SUM_COLS, d_v - c0);
        double acc[SUM_COLS] = {0};
        float part[SUM_COLS];
        for (int j0 = 0; j0 < m; j0 += SUM_BLOCK) {
            memset(part, 0, (size_t)w * sizeof *part);
            for (int j = j0; j < min_int(m, j0 + SUM_BLOCK); j++) {
                if (row[j] != 0.0f) axpy(part, row[j], v + (size_t)j * d_v + c0, w);
            }
            for (int c = 0; c < w; c++) acc[c] += part[c];
        }
        for (int c = 0; c < w; c++) {
            o[c0 + c] = (float)acc[c];
            if (!isfinite(o[c0 + c])) return ATTN_ERR_OVERFLOW;
        }
    }
    return ATTN_OK;
}

// Row by row, with the n×m weights (or one row of workspace): the path for small sizes
// and for callers who want the weights.
static attn_status forward_rows(float *out, float *weights, float *workspace, const attn_row_stats *stats,
                                const float *q, const float *k, const float *v, const uint8_t *mask,
                                int m, int d_k, int d_v, float scale, unsigned flags,
                                int row_begin, int row_end) {
#ifdef ATTN_NO_STATS
    stats = NULL;   // (check_stats refused them): the statistics' code is left out
#endif
    for (int i = row_begin; i < row_end; i++) {
        float *row = weights ? weights + (size_t)i * m : workspace;
        const float *qi = q + (size_t)i * d_k;
        // pass 1: query dot key, scaled, and the row's true maximum
        float maxval = -INFINITY;
        for (int j = 0; j < m; j++) {
            if (!allowed(mask, i, j, m, flags)) { row[j] = -INFINITY; continue; }
            float s = dot(qi, k + (size_t)j * d_k, d_k) * scale;
            row[j] = s;
            if (s > maxval) maxval = s;
        }
#ifndef ATTN_EMBED
        if (stats) {
            if (maxval == -INFINITY) memset(stats->out + (size_t)i * ATTN_ROW_STATS, 0, ATTN_ROW_STATS * sizeof(float));
            else row_stats_scores(stats, row, maxval, i, m);
        }
#endif
        attn_status st = softmax_row_times_v(row, out + (size_t)i * d_v, maxval, v, m, d_v);
        if (st != ATTN_OK) return st;
    }
    return ATTN_OK;
}

#ifndef ATTN_EMBED
// The tiled path (FlashAttention's schedule, on a CPU): queries in blocks of 8 rows, keys in
// blocks of BK; per row a running maximum and sum, so that nothing of size n×m exists.
// The 8 rows of a block sit side by side in every buffer (rows in vector lanes): Q is packed
// as Qᵀ (d_k, 8), scores and probabilities as Sᵀ (BK, 8), the output accumulators as Oᵀ
// (d_v, 8). Then both products are 8 rows × 4 columns register tiles that read two vectors
// and broadcast four scalars per step, every address a constant offset from two pointers,
// and the softmax works on 8 rows at once with plain vertical vector operations.
// The scores are kept in base 2 (scaled by scale·log2(e), so that e^(s - max) is 2^(s2 - max2)):
// the exponential is then a rounding, a polynomial and the exponent bits (exp2_tile4), without
// exp4's multiplication by log2(e) and its two-part reduction by ln 2.
// The running sums are blocked as in the row path (SUM_BLOCK), with longer blocks: FOLD keys
// are summed in float, then added to twins in double (adding after every 64 keys cost 4-5% of
// the speed at n = 1024; after 256, within the noise). Blocks of BK = 256 keys rather than 64:
// a quarter of the blocks' rescaling when a row's maximum grows and of the Oᵀ tiles' loads and
// stores, for Sᵀ of 8 KiB (about 1% faster at n = 1024-2048 in V8, 2-3% natively; docs/BENCHMARKS.md).
enum { BK = 256, FOLD = 256, TILED_MIN_KEYS = 32 };
#define LOG2_E 1.44269504088896341f
_Static_assert(FOLD % BK == 0, "the float sums are folded after whole blocks of keys");

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
static int use_tiled(int m) { return m >= TILED_MIN_KEYS; }

// floats of tiled workspace: K packed (round_up(m, 4), d_k), Qᵀ (d_k, 8), Sᵀ (BK, 8), Oᵀ
// (d_v, 8), then in double Oᵀ (d_v, 8), the sums (8) and the statistics' U and D (8 each), then
// the statistics' points' scores (8, ATTN_ROW_POINTS); plus 16 bytes to align
static int tiled_floats(int m, int d_k, int d_v, size_t *count) {
    size_t mp = round_up((size_t)m, 4);
    if (!fits(mp, (size_t)d_k) || !fits(8, (size_t)d_k) || !fits(24, (size_t)d_v)) return 0;
    size_t c = mp * (size_t)d_k;
    size_t rest = (size_t)d_k * 8 + (size_t)BK * 8 + (size_t)d_v * 24 + 16 + 32 + 8 * ATTN_ROW_POINTS + 4;
    if (c > (size_t)-1 / sizeof(float) - rest) return 0;
    *count = c + rest;
    return 1;
}

// lane-wise maximum (no NaN reaches it: inputs are finite, masked scores are -inf)
#ifdef __wasm_simd128__
static inline v4f vmax4(v4f a, v4f b) { return __builtin_wasm_pmax_f32x4(a, b); }  // one maxps
#else
static inline v4f vmax4(v4f a, v4f b) { return select4(a < b, b, a); }
#endif

// 2^x for the tiled kernel's x = s2 - max2 <= 0 (-inf where masked), four lanes: x = n + f with
// n = round(x), |f| <= 1/2; 2^f by a degree-6 polynomial, times 2^n made from n's exponent bits.
// The polynomial: 1 + f·(c1 + ... + c6·f⁵), c1..c6 fitted for this kernel (minimax relative error
// over |f| <= 1/2, Remez; 2.6e-9 before rounding the coefficients to float, 2.1e-8 after), so
// within about an ulp of 2^x; and 2^0 = 1 exactly. x is clamped to -127 first, where 2^n's bits
// are those of +0: lanes below -126.5 (-inf among them) give exactly 0, as exp4's below ln FLT_MIN.
static inline v4f exp2_tile4(v4f x) {
    const v4f magic = splat(12582912.0f);  // 1.5·2^23: x + magic rounds x to an integer, n in the low bits
    const v4f u = vmax4(x, splat(-127.0f));
    const v4f t = u + magic;
    const v4f f = u - (t - magic);         // exact
    v4f p = splat(1.559467782e-4f);
    p = p * f + splat(1.340664341e-3f);
    p = p * f + splat(9.617692791e-3f);
    p = p * f + splat(5.550310388e-2f);
    p = p * f + splat(2.402265221e-1f);
    p = p * f + splat(6.931472421e-1f);
    p = p * f + splat(1.0f);
    const v4i e = ((v4i)t + 127) << 23;    // magic's own bits shift out: (n + 127) << 23, 2^n
    return p * (v4f)e;
}

static inline v2d load2d(const double *p) { v2d r; memcpy(&r, p, sizeof r); return r; }
static inline void store2d(double *p, v2d x) { memcpy(p, &x, sizeof x); }

// y (4 doubles) += x (4 floats)
static inline void add_to_double(double *y, v4f x) {
    store2d(y, load2d(y) + __builtin_convertvector(__builtin_shufflevector(x, x, 0, 1), v2d));
    store2d(y + 2, load2d(y + 2) + __builtin_convertvector(__builtin_shufflevector(x, x, 2, 3), v2d));
}

// The state of one block of 8 query rows, rows 0-3 and 4-7 in two vectors: the running
// maximum; the sums and the output accumulators Oᵀ (d_v, 8) of the keys since the last fold,
// in float; and their running totals in double.
typedef struct {
    v4f mx0, mx1, s0, s1;
    float *ot;
    double *sum, *otd;
    // with statistics (attn_row_stats): U = Σ e·(s − max) and D = Σ e·|qpos − kpos| as the sums
    // are kept (in float since the last fold, then in double), and the rows' query positions
    const float *kpos;
    v4f u0, u1, d0, d1, qp0, qp1;
    double *usum, *dsum;
} row_state;

// the float sums added to the double totals, and started again from zero
static void fold(row_state *rs, int d_v) {
    for (size_t i = 0; i < (size_t)d_v * 8; i += 4) {
        add_to_double(rs->otd + i, load4(rs->ot + i));
        store4(rs->ot + i, splat(0.0f));
    }
    add_to_double(rs->sum, rs->s0);
    add_to_double(rs->sum + 4, rs->s1);
    rs->s0 = rs->s1 = splat(0.0f);
    if (!rs->kpos) return;
    add_to_double(rs->usum, rs->u0); add_to_double(rs->usum + 4, rs->u1);
    add_to_double(rs->dsum, rs->d0); add_to_double(rs->dsum + 4, rs->d1);
    rs->u0 = rs->u1 = rs->d0 = rs->d1 = splat(0.0f);
}

// The statistics' sums moved to a new maximum: with δ = old − new (≤ 0, in base 2) and c = 2^δ,
// Σ e'·(s − new) = c·(U + δ·Z) and D' = c·D; a row that had no key yet (old -inf) has U = Z = 0.
// U is kept in base 2 like the scores (block_stats multiplies it by ln 2).
static void stats_rescale(row_state *rs, v4f c0, v4f c1, v4f z0, v4f z1) {
    const v4f ninf = splat(-INFINITY), zero = splat(0.0f);
    const v4f dl0 = select4(rs->mx0 == ninf, zero, rs->mx0 - z0), dl1 = select4(rs->mx1 == ninf, zero, rs->mx1 - z1);
    rs->u0 = c0 * (rs->u0 + dl0 * rs->s0); rs->u1 = c1 * (rs->u1 + dl1 * rs->s1);
    rs->d0 *= c0; rs->d1 *= c1;
    const double c[8] = {c0[0], c0[1], c0[2], c0[3], c1[0], c1[1], c1[2], c1[3]};
    const double dl[8] = {dl0[0], dl0[1], dl0[2], dl0[3], dl1[0], dl1[1], dl1[2], dl1[3]};
    for (int r = 0; r < 8; r++) {
        rs->usum[r] = c[r] * (rs->usum[r] + dl[r] * rs->sum[r]);
        rs->dsum[r] *= c[r];
    }
}

// passes 2-3's exponentials with the statistics' terms: st = 2^(s − z) in place, summed, and
// e·(s − z) and e·|qpos − kpos| (keys j0 .. j0 + bk4; masked and padding keys have e = 0)
static void block_exp_stats(row_state *rs, float *st, int j0, int bk4, int m, v4f z0, v4f z1) {
    const v4f zero = splat(0.0f);
    for (int jj = 0; jj < bk4; jj++) {
        const v4f x0 = load4(st + jj * 8) - z0, x1 = load4(st + jj * 8 + 4) - z1;
        const v4f p0 = exp2_tile4(x0), p1 = exp2_tile4(x1);
        const v4f kp = splat(j0 + jj < m ? rs->kpos[j0 + jj] : 0.0f);
        const v4f a0 = rs->qp0 - kp, a1 = rs->qp1 - kp;
        store4(st + jj * 8, p0); store4(st + jj * 8 + 4, p1);
        rs->s0 += p0; rs->s1 += p1;
        rs->u0 += select4(p0 == zero, zero, p0 * x0); rs->u1 += select4(p1 == zero, zero, p1 * x1);
        rs->d0 += p0 * select4(a0 < zero, -a0, a0); rs->d1 += p1 * select4(a1 < zero, -a1, a1);
    }
}

// kp (round_up(m, 4), d_k): K in panels of 4 keys, transposed: kp[(j/4)·d_k·4 + c·4 + j%4] = k[j][c]
static void pack_keys(float *kp, const float *k, int m, int d_k) {
    size_t mp = round_up((size_t)m, 4);
    for (size_t j4 = 0; j4 < mp / 4; j4++) {
        for (int c = 0; c < d_k; c++) {
            for (int t = 0; t < 4; t++) {
                size_t j = j4 * 4 + (size_t)t;
                kp[(j4 * (size_t)d_k + (size_t)c) * 4 + (size_t)t] = j < (size_t)m ? k[j * (size_t)d_k + (size_t)c] : 0.0f;
            }
        }
    }
}

// One step of the tiled kernel's 8 × 4 register tile (passes 1 and 4): t[2c] += a[0..4)·s[c] and
// t[2c + 1] += a[4..8)·s[c] for c < 4: eight rows (a, one transposed column of 8) times four
// values s (keys, value columns). Inlined: the compiler keeps t in eight registers.
static inline __attribute__((always_inline)) void tile_step(v4f t[8], const float *a, const float *s) {
    const v4f x0 = load4(a), x1 = load4(a + 4), s0 = splat(s[0]), s1 = splat(s[1]), s2 = splat(s[2]), s3 = splat(s[3]);
    t[0] = MADD(x0, s0, t[0]); t[1] = MADD(x1, s0, t[1]);
    t[2] = MADD(x0, s1, t[2]); t[3] = MADD(x1, s1, t[3]);
    t[4] = MADD(x0, s2, t[4]); t[5] = MADD(x1, s2, t[5]);
    t[6] = MADD(x0, s3, t[6]); t[7] = MADD(x1, s3, t[7]);
}

// pass 1: st (bk4, 8) = (Q·Kᵀ·scale2)ᵀ for keys j0 .. j0 + bk4, 8 rows × 4 keys per register
// tile (scale2 = scale·log2(e): the scores in base 2); padding keys past bk and keys the mask or
// causality forbid get -inf
static void block_scores(float *st, const float *qt, const float *kp, const uint8_t *mask,
                         int i0, int bq, int j0, int bk, int m, int d_k, float scale2, unsigned flags) {
    const v4f vscale = splat(scale2), zero = splat(0.0f), ninf = splat(-INFINITY);
    int bk4 = (int)round_up((size_t)bk, 4);
    for (int jj = 0; jj < bk4; jj += 4) {
        const float *kq = kp + (size_t)(j0 + jj) * d_k, *qq = qt;
        v4f t[8] = {zero, zero, zero, zero, zero, zero, zero, zero};
        for (int c = 0; c < d_k; c++, qq += 8, kq += 4) tile_step(t, qq, kq);
        float *s = st + jj * 8;
        for (int r = 0; r < 8; r++) store4(s + 4 * r, t[r] * vscale);
    }
    for (int jj = bk; jj < bk4; jj++) { store4(st + jj * 8, ninf); store4(st + jj * 8 + 4, ninf); }
    if (mask || ((flags & ATTN_CAUSAL) && j0 + bk > i0 + 1)) {
        for (int jj = 0; jj < bk; jj++) {
            for (int r = 0; r < bq; r++) {
                if (!allowed(mask, i0 + r, j0 + jj, m, flags)) st[jj * 8 + r] = -INFINITY;
            }
        }
    }
}

// passes 2-3, online: the new running maximum, what came before rescaled to it, then
// st = e^(s - max) = 2^(s2 - max2) in place, summed
static void block_softmax(row_state *rs, float *st, int j0, int bk4, int m, int d_v) {
    const v4f ninf = splat(-INFINITY), zero = splat(0.0f);
    v4f nm0 = rs->mx0, nm1 = rs->mx1;
    for (int jj = 0; jj < bk4; jj++) {
        nm0 = vmax4(nm0, load4(st + jj * 8));
        nm1 = vmax4(nm1, load4(st + jj * 8 + 4));
    }
    // a row with nothing allowed so far keeps max -inf: subtract 0 instead (2^-inf = 0)
    v4f z0 = select4(nm0 == ninf, zero, nm0), z1 = select4(nm1 == ninf, zero, nm1);
    v4i grew = (nm0 != rs->mx0) | (nm1 != rs->mx1);
    if (grew[0] | grew[1] | grew[2] | grew[3]) {
        v4f c0 = exp2_tile4(rs->mx0 - z0), c1 = exp2_tile4(rs->mx1 - z1);  // 1 where unchanged, 0 from -inf
        if (rs->kpos) stats_rescale(rs, c0, c1, z0, z1);
        rs->s0 *= c0; rs->s1 *= c1;
        for (int c = 0; c < d_v; c++) {
            store4(rs->ot + c * 8, load4(rs->ot + c * 8) * c0);
            store4(rs->ot + c * 8 + 4, load4(rs->ot + c * 8 + 4) * c1);
        }
        double f[8] = {c0[0], c0[1], c0[2], c0[3], c1[0], c1[1], c1[2], c1[3]};
        for (int r = 0; r < 8; r++) rs->sum[r] *= f[r];
        for (size_t c = 0; c < (size_t)d_v; c++) {
            for (int r = 0; r < 8; r++) rs->otd[c * 8 + (size_t)r] *= f[r];
        }
        rs->mx0 = nm0; rs->mx1 = nm1;
    }
    if (rs->kpos) { block_exp_stats(rs, st, j0, bk4, m, z0, z1); return; }
    for (int jj = 0; jj < bk4; jj++) {
        v4f p0 = exp2_tile4(load4(st + jj * 8) - z0), p1 = exp2_tile4(load4(st + jj * 8 + 4) - z1);
        store4(st + jj * 8, p0); store4(st + jj * 8 + 4, p1);
        rs->s0 += p0; rs->s1 += p1;
    }
}

// pass 4: Oᵀ += (P·V)ᵀ for keys j0 .. j0 + bk, 8 rows × 4 value columns per register tile
static void block_values(float *ot, const float *pt, const float *v, int j0, int bk, int d_v) {
    int c0 = 0;
    for (; c0 + 4 <= d_v; c0 += 4) {
        float *o = ot + c0 * 8;
        v4f t[8];
        for (int r = 0; r < 8; r++) t[r] = load4(o + 4 * r);
        const float *pp = pt, *vr = v + (size_t)j0 * d_v + c0;
        for (int jj = 0; jj < bk; jj++, pp += 8, vr += d_v) tile_step(t, pp, vr);
        for (int r = 0; r < 8; r++) store4(o + 4 * r, t[r]);
    }
    for (; c0 < d_v; c0++) {  // the last d_v % 4 columns
        float *o = ot + (size_t)c0 * 8;
        v4f o0 = load4(o), o1 = load4(o + 4);
        for (int jj = 0; jj < bk; jj++) {
            v4f x = splat(v[(size_t)(j0 + jj) * d_v + c0]);
            o0 += load4(pt + jj * 8) * x;
            o1 += load4(pt + jj * 8 + 4) * x;
        }
        store4(o, o0); store4(o + 4, o1);
    }
}

// the scores at the points of rows i0 .. i0 + bq that fall in keys j0 .. j0 + bk, before the
// softmax turns them into exponentials: cap (8, ATTN_ROW_POINTS)
static void catch_points(float *cap, const attn_row_stats *stats, const float *st, int i0, int bq, int j0, int bk) {
    for (int r = 0; r < bq; r++) {
        const int32_t *pt = stats->points + (size_t)(i0 + r) * ATTN_ROW_POINTS;
        for (int p = 0; p < ATTN_ROW_POINTS; p++)
            if (pt[p] >= j0 && pt[p] < j0 + bk) cap[r * ATTN_ROW_POINTS + p] = st[(pt[p] - j0) * 8 + r];
    }
}

// the statistics of the block's rows from their final sums (the points' scores less the maximum),
// back from base 2: U and those scores times ln 2
static void block_stats(const attn_row_stats *stats, const row_state *rs, float *cap, int i0, int bq) {
    // the maxima stored, not lanes taken by a variable index: in the threaded build, on a model
    // thread (V8 14.x), rs->mx0[r] read wrong values now and then (the points' weights of the
    // heads that thread ran went wrong, tests/unit/heads.test.js); a plain array reads right
    float mx8[8];
    store4(mx8, rs->mx0);
    store4(mx8 + 4, rs->mx1);
    for (int r = 0; r < bq; r++) {
        const float mx = mx8[r];
        float *at = cap + r * ATTN_ROW_POINTS;
        for (int p = 0; p < ATTN_ROW_POINTS; p++) at[p] = (at[p] - mx) * 0.693147181f;   // -inf stays -inf
        row_stats_write(stats->out + (size_t)(i0 + r) * ATTN_ROW_STATS, rs->sum[r], rs->usum[r] * 0.693147180559945309,
                        rs->dsum[r], at);
    }
}

static attn_status forward_tiled(float *out, float *workspace, const attn_row_stats *stats,
                                 const float *q, const float *k, const float *v, const uint8_t *mask,
                                 int m, int d_k, int d_v, float scale, unsigned flags,
                                 int row_begin, int row_end) {
#ifdef ATTN_NO_STATS
    stats = NULL;
#endif
    float *kp = (float *)(((uintptr_t)workspace + 15) & ~(uintptr_t)15);
    float *qt = kp + round_up((size_t)m, 4) * (size_t)d_k;  // (d_k, 8) this block's queries, transposed
    float *st = qt + (size_t)d_k * 8;                      // (BK, 8) scores, then probabilities, transposed
    row_state rs = {.ot = st + BK * 8};                    // Oᵀ (d_v, 8), then in double Oᵀ and the sums
    rs.otd = (double *)(rs.ot + (size_t)d_v * 8);
    rs.sum = rs.otd + (size_t)d_v * 8;
    rs.usum = rs.sum + 8;
    rs.dsum = rs.usum + 8;
    rs.kpos = stats ? stats->kpos : NULL;
    float *cap = (float *)(rs.dsum + 8);   // (8, ATTN_ROW_POINTS) the points' scores (stats)
    pack_keys(kp, k, m, d_k);
    const float scale2 = scale * LOG2_E;   // scores in base 2: e^s = 2^(s·log2(e)); finite (attn_forward_stats)

    for (int i0 = row_begin; i0 < row_end; i0 += 8) {
        int bq = row_end - i0 < 8 ? row_end - i0 : 8;
        // rows past bq in the last block are zeros: they compute harmless numbers, never stored
        for (int c = 0; c < d_k; c++) {
            for (int r = 0; r < 8; r++) qt[c * 8 + r] = r < bq ? q[(size_t)(i0 + r) * d_k + c] : 0.0f;
        }
        memset(rs.ot, 0, (size_t)d_v * 8 * sizeof(float));
        memset(rs.otd, 0, ((size_t)d_v * 8 + 24) * sizeof(double));
        rs.mx0 = rs.mx1 = splat(-INFINITY);
        rs.s0 = rs.s1 = rs.u0 = rs.u1 = rs.d0 = rs.d1 = splat(0.0f);
        if (stats) {
            float qp[8];
            for (int r = 0; r < 8; r++) qp[r] = r < bq ? stats->qpos[i0 + r] : 0.0f;
            rs.qp0 = load4(qp); rs.qp1 = load4(qp + 4);
            for (int c = 0; c < 8 * ATTN_ROW_POINTS; c++) cap[c] = -INFINITY;
        }
        // causal: no row of this block sees a key past its last row
        int jend = (flags & ATTN_CAUSAL) && i0 + bq < m ? i0 + bq : m;
        for (int j0 = 0; j0 < jend; j0 += BK) {
            int bk = jend - j0 < BK ? jend - j0 : BK;
            block_scores(st, qt, kp, mask, i0, bq, j0, bk, m, d_k, scale2, flags);
            if (stats) catch_points(cap, stats, st, i0, bq, j0, bk);
            block_softmax(&rs, st, j0, (int)round_up((size_t)bk, 4), m, d_v);
            block_values(rs.ot, st, v, j0, bk, d_v);
            if ((j0 + BK) % FOLD == 0 || j0 + BK >= jend) fold(&rs, d_v);
        }
        if (stats) block_stats(stats, &rs, cap, i0, bq);
        // normalize: out = O / sum (a row that attended to nothing has sum 0 and stays 0)
        for (int r = 0; r < bq; r++) {
            float *o = out + (size_t)(i0 + r) * d_v;
            float s = (float)rs.sum[r];
            float inv = s > 0.0f ? 1.0f / s : 0.0f;
            for (int c = 0; c < d_v; c++) {
                o[c] = (float)rs.otd[(size_t)c * 8 + (size_t)r] * inv;
                if (!isfinite(o[c])) return ATTN_ERR_OVERFLOW;
            }
        }
    }
    return ATTN_OK;
}

// forward_tiled is called through this pointer to keep it a function of its own (binaryen's
// inliner ignores noinline): engines compile wasm lazily, one function at a time on its first
// call, so a tutorial-sized first call does not wait for the large tiled kernel to compile.
static attn_status (*volatile tiled_kernel)(float *, float *, const attn_row_stats *, const float *, const float *,
                                            const float *, const uint8_t *, int, int, int, float, unsigned, int,
                                            int) = forward_tiled;
#else
// The one-file embed's build (build.sh, -DATTN_EMBED, optimised for size) has no tiled kernel:
// the element always asks for the weights, which only the row path computes. Without weights
// the row path runs too (the reference's results; the tiled kernel's differ in the last bits).
static int use_tiled(int m) { (void)m; return 0; }
#endif

size_t attn_workspace_size(int n, int m, int d_k, int d_v) {
    if (check_sizes(n, m, d_k, d_v) != ATTN_OK) return 0;
    if (!use_tiled(m)) return (size_t)m * sizeof(float);
#ifndef ATTN_EMBED
    size_t count;
    if (tiled_floats(m, d_k, d_v, &count)) return count * sizeof(float);
#endif
    return 0;
}

// the statistics' arguments: every pointer there, positions finite, points in [-1, m)
static attn_status check_stats(const attn_row_stats *stats, int n, int m) {
    if (!stats) return ATTN_OK;
#ifdef ATTN_NO_STATS
    (void)n; (void)m;
    return ATTN_ERR_FLAGS;
#endif
    if (!stats->out || !stats->qpos || !stats->kpos || !stats->points) return ATTN_ERR_NULL;
    if (!all_finite(stats->qpos, (size_t)n) || !all_finite(stats->kpos, (size_t)m)) return ATTN_ERR_NON_FINITE;
    for (int i = 0; i < n; i++) if (fabsf(stats->qpos[i]) > ATTN_MAX_POSITION) return ATTN_ERR_RANGE;
    for (int j = 0; j < m; j++) if (fabsf(stats->kpos[j]) > ATTN_MAX_POSITION) return ATTN_ERR_RANGE;
    for (size_t i = 0; i < (size_t)n * ATTN_ROW_POINTS; i++)
        if (stats->points[i] < -1 || stats->points[i] >= m) return ATTN_ERR_RANGE;
    return ATTN_OK;
}

attn_status attn_forward_rows(float *out, float *weights, float *workspace,
                              const float *q, const float *k, const float *v, const uint8_t *mask,
                              int n, int m, int d_k, int d_v, float scale, unsigned flags,
                              int row_begin, int row_end) {
    return attn_forward_stats(out, weights, workspace, NULL, q, k, v, mask, n, m, d_k, d_v, scale, flags, row_begin, row_end);
}

attn_status attn_forward_stats(float *out, float *weights, float *workspace, const attn_row_stats *stats,
                               const float *q, const float *k, const float *v, const uint8_t *mask,
                               int n, int m, int d_k, int d_v, float scale, unsigned flags,
                               int row_begin, int row_end) {
    attn_status st = check_forward(out, weights, workspace, q, k, v, mask, n, m, d_k, d_v, scale, flags);
    if (st == ATTN_OK && (row_begin < 0 || row_end > n || row_begin >= row_end)) st = ATTN_ERR_SIZE;
    if (st == ATTN_OK) st = check_stats(stats, n, m);
    double vmax = 0;
    if (st == ATTN_OK) st = check_values(q, k, v, n, m, d_k, d_v, scale, &vmax);
    if (st != ATTN_OK) return st;
#ifndef ATTN_EMBED
    // the tiled path sums e^(s - max)·v before dividing: at most m·max|v|, which must stay finite;
    // its scores are in base 2, scaled by scale·log2(e), which must be finite too (a scale near
    // FLT_MAX takes the row path, as it did before the base-2 scores)
    if (!weights && use_tiled(m) && vmax * m < 0.5 * (double)FLT_MAX && fabs((double)scale) * LOG2_E < 0.5 * (double)FLT_MAX)
        return tiled_kernel(out, workspace, stats, q, k, v, mask, m, d_k, d_v, scale, flags, row_begin, row_end);
#endif
    return forward_rows(out, weights, workspace, stats, q, k, v, mask, m, d_k, d_v, scale, flags, row_begin, row_end);
}

attn_status attn_forward(float *out, float *weights, float *workspace,
                         const float *q, const float *k, const float *v, const uint8_t *mask,
                         int n, int m, int d_k, int d_v, float scale, unsigned flags) {
    return attn_forward_rows(out, weights, workspace, q, k, v, mask, n, m, d_k, d_v, scale, flags, 0, n);
}

// ----------------------------------------------------------------------------
// the packed linear kernel

// out (n, p) = a (n, k)·w (k, p) + b, for mha.c's projections and gpt2.c's layers. Each output
// is summed over k in order, in float, starting from 0, then + b: exactly the plain loop's order
// (no fused multiply-add: -ffp-contract=off), so the same bits as attn_matmul and
// attn_linear_naive. It reads w packed (attn_pack_fast), the same floats in the order it uses them:
// for each block of NC columns, for each block of KC rows, strips of NR = 8 columns (the block's
// last strip: what is left), each strip's kc rows one after the other:
//
//   w (k, p) ─▶ [column block j0][row block t0][strip j][row t][column u < 8]
//
// A block (KC × NC, 128 KiB) is read from memory as one run instead of kc runs p floats apart,
// and within it a strip (KC × 8, 4 KiB) in order, by every 4 rows of a, from L1: 4 rows × 8
// columns of out stay in registers (8 vectors). The rows past a multiple of 4, and decoding's
// single row, take 4 strips (32 columns) at a time.
enum { KC = 128, NC = 256, NR = 8 };

// where strip j (counted from the block's first column) of block (j0, t0) starts; the block is
// kc rows × nc columns
static size_t packed_at(int k, int j0, int t0, int kc, int nc, int j) {
    return (size_t)j0 * k + (size_t)t0 * nc + (size_t)j * kc;
}

// o[0..8) of 4 rows (ldo apart) += a[r][0..kc)·s[0..kc)[0..8), s one strip; first: start
// from 0, not from o
static void tile4x8(float *o, const float *a, const float *s, int kc, int lda, int ldo, int first) {
    v4f acc[4][2];
    for (int r = 0; r < 4; r++) {
        acc[r][0] = first ? splat(0.0f) : load4(o + (size_t)r * ldo);
        acc[r][1] = first ? splat(0.0f) : load4(o + (size_t)r * ldo + 4);
    }
    const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * (size_t)lda, *a3 = a + 3 * (size_t)lda;
    for (int t = 0; t < kc; t++, s += NR) {
        v4f w0 = load4(s), w1 = load4(s + 4);
        v4f s0 = splat(a0[t]), s1 = splat(a1[t]), s2 = splat(a2[t]), s3 = splat(a3[t]);
        acc[0][0] += s0 * w0; acc[0][1] += s0 * w1;
        acc[1][0] += s1 * w0; acc[1][1] += s1 * w1;
        acc[2][0] += s2 * w0; acc[2][1] += s2 * w1;
        acc[3][0] += s3 * w0; acc[3][1] += s3 * w1;
    }
    for (int r = 0; r < 4; r++) {
        store4(o + (size_t)r * ldo, acc[r][0]);
        store4(o + (size_t)r * ldo + 4, acc[r][1]);
    }
}

// o[0..32) of one row += a[0..kc)·(4 strips of 8, s the first; 8 vectors)
static void row4x8(float *o, const float *a, const float *s, int kc, int first) {
    v4f c[8];
    for (int u = 0; u < 8; u++) c[u] = first ? splat(0.0f) : load4(o + 4 * u);
    const float *s1 = s + (size_t)NR * kc, *s2 = s1 + (size_t)NR * kc, *s3 = s2 + (size_t)NR * kc;
    for (int t = 0; t < kc; t++) {
        const v4f x = splat(a[t]);
        const size_t at = (size_t)t * NR;
        c[0] += x * load4(s + at); c[1] += x * load4(s + at + 4);
        c[2] += x * load4(s1 + at); c[3] += x * load4(s1 + at + 4);
        c[4] += x * load4(s2 + at); c[5] += x * load4(s2 + at + 4);
        c[6] += x * load4(s3 + at); c[7] += x * load4(s3 + at + 4);
    }
    for (int u = 0; u < 8; u++) store4(o + 4 * u, c[u]);
}

// o[0..width) of one row += a[0..kc)·s, one strip of width <= 8 columns
static void row_strip(float *o, const float *a, const float *s, int kc, int width, int first) {
    for (int u = 0; u < width; u++) {
        float c = first ? 0.0f : o[u];
        for (int t = 0; t < kc; t++) c += a[t] * s[(size_t)t * width + u];
        o[u] = c;
    }
}

// one block: rows [0, n) of out, columns [j0 + js, j0 + je) += a[:, t0 .. t0 + kc)·strips js/NR ..
// of the block at w (kc rows × nc columns); js a multiple of NR, je one too or nc
static void linear_block(float *out, const float *a, const float *w, int n, int k, int p,
                         int j0, int t0, int kc, int js, int je) {
    const int first = t0 == 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        float *o = out + (size_t)i * p + j0;
        const float *ai = a + (size_t)i * k + t0;
        int j = js;
        for (; j + NR <= je; j += NR) tile4x8(o + j, ai, w + (size_t)j * kc, kc, k, p, first);
        for (int r = 0; r < 4 && j < je; r++)
            row_strip(o + (size_t)r * p + j, ai + (size_t)r * k, w + (size_t)j * kc, kc, je - j, first);
    }
    for (; i < n; i++) {
        float *o = out + (size_t)i * p + j0;
        const float *ai = a + (size_t)i * k + t0;
        int j = js;
        for (; j + 4 * NR <= je; j += 4 * NR) row4x8(o + j, ai, w + (size_t)j * kc, kc, first);
        for (; j < je; j += NR) row_strip(o + j, ai, w + (size_t)j * kc, kc, min_int(NR, je - j), first);
    }
}

// columns [c0, c1) of out = a·w + b for checked arguments, w packed (internal.h); c0 a multiple of
// NR, c1 one too or p. Each output's sum does not depend on which strips run together (tile4x8,
// row4x8 and row_strip each add a[t]·w[t] for t in order from 0, or from the block's first row
// onto what the block before left), so any split of the columns gives the bits of one call.
void attn_linear_fast_cols(float *out, const float *a, const float *w, const float *b, int n, int k, int p,
                           int c0, int c1) {
    for (int j0 = c0 - c0 % NC; j0 < c1; j0 += NC) {
        const int nc = min_int(NC, p - j0);
        const int js = c0 > j0 ? c0 - j0 : 0, je = min_int(c1 - j0, nc);
        for (int t0 = 0; t0 < k; t0 += KC) {
            const int kc = min_int(KC, k - t0);
            linear_block(out, a, w + packed_at(k, j0, t0, kc, nc, 0), n, k, p, j0, t0, kc, js, je);
        }
        if (!b) continue;
        for (int i = 0; i < n; i++) {
            float *o = out + (size_t)i * p;
            for (int j = j0 + js; j < j0 + je; j++) o[j] += b[j];
        }
    }
}

// out = a·w + b for checked arguments, w packed (internal.h)
void attn_linear_fast(float *out, const float *a, const float *w, const float *b, int n, int k, int p) {
    attn_linear_fast_cols(out, a, w, b, n, k, p, 0, p);
}

// packed (k·p floats) = w (k, p) in attn_linear_fast's order, for checked arguments (internal.h)
void attn_pack_fast(float *packed, const float *w, int k, int p) {
    for (int j0 = 0; j0 < p; j0 += NC) {
        const int nc = min_int(NC, p - j0);
        for (int t0 = 0; t0 < k; t0 += KC) {
            const int kc = min_int(KC, k - t0);
            for (int j = 0; j < nc; j += NR) {
                const int width = min_int(NR, nc - j);
                float *s = packed + packed_at(k, j0, t0, kc, nc, j);
                for (int t = 0; t < kc; t++)
                    memcpy(s + (size_t)t * width, w + (size_t)(t0 + t) * p + j0 + j, (size_t)width * sizeof *s);
            }
        }
    }
}

// ----------------------------------------------------------------------------
// projections and the episode's self-attention

static attn_status matmul_tiles(float *out, const float *a, const float *b, int n, int c, int p);

attn_status attn_matmul(float *out, const float *a, const float *b, int n, int c, int p) {
    if (!out || !a || !b) return ATTN_ERR_NULL;
    if (n < 1 || c < 1 || p < 1) return ATTN_ERR_SIZE;
    if (!fits((size_t)n, (size_t)c) || !fits((size_t)c, (size_t)p) || !fits((size_t)n, (size_t)p))
        return ATTN_ERR_TOO_LARGE;
    if (!all_finite(a, (size_t)n * c) || !all_finite(b, (size_t)c * p)) return ATTN_ERR_NON_FINITE;
    return matmul_tiles(out, a, b, n, c, p);
}

// out = a·b for checked arguments (attn_matmul without the argument checks)
static attn_status matmul_tiles(float *out, const float *a, const float *b, int n, int c, int p) {
    // 4 rows × 8 columns of out in registers, summed over t in order (the same rounding as
    // one row at a time); rows past n repeat the last row and are not stored
    for (int i0 = 0; i0 < n; i0 += 4) {
        int rows = n - i0 < 4 ? n - i0 : 4;
        const float *a0 = a + (size_t)i0 * c;
        const float *a1 = rows > 1 ? a0 + c : a0, *a2 = rows > 2 ? a0 + 2 * (size_t)c : a0;
        const float *a3 = rows > 3 ? a0 + 3 * (size_t)c : a0;
        int j0 = 0;
        for (; j0 + 8 <= p; j0 += 8) {
            v4f b00 = splat(0), b01 = splat(0), b10 = splat(0), b11 = splat(0);
            v4f b20 = splat(0), b21 = splat(0), b30 = splat(0), b31 = splat(0);
            const float *br = b + j0;
            for (int t = 0; t < c; t++, br += p) {
                v4f v0 = load4(br), v1 = load4(br + 4);
                v4f s0 = splat(a0[t]), s1 = splat(a1[t]), s2 = splat(a2[t]), s3 = splat(a3[t]);
                b00 += s0 * v0; b01 += s0 * v1;
                b10 += s1 * v0; b11 += s1 * v1;
                b20 += s2 * v0; b21 += s2 * v1;
                b30 += s3 * v0; b31 += s3 * v1;
            }
            v4f acc[4][2] = {{b00, b01}, {b10, b11}, {b20, b21}, {b30, b31}};
            for (int r = 0; r < rows; r++) {
                float *o = out + (size_t)(i0 + r) * p + j0;
                store4(o, acc[r][0]);
                store4(o + 4, acc[r][1]);
            }
        }
        for (; j0 < p; j0++) {  // the last p % 8 columns
            const float *ar[4] = {a0, a1, a2, a3};
            for (int r = 0; r < rows; r++) {
                float acc = 0.0f;
                for (int t = 0; t < c; t++) acc += ar[r][t] * b[(size_t)t * p + j0];
                out[(size_t)(i0 + r) * p + j0] = acc;
            }
        }
    }
    return all_finite(out, (size_t)n * p) ? ATTN_OK : ATTN_ERR_OVERFLOW;
}

attn_status attn_self_forward(float *q, float *k, float *v, float *scores, float *scaled,
                              float *weights, float *out,
                              const float *x, const float *wq, const float *wk, const float *wv,
                              const uint8_t *mask, int n, int d_model, int d_k, int d_v,
                              float scale, unsigned flags) {
    if (!q || !k || !v || !scores || !scaled || !weights || !out || !x || !wq || !wk || !wv)
        return ATTN_ERR_NULL;
    attn_status st = check_sizes(n, n, d_k, d_v);
    if (st == ATTN_OK) st = check_nm(1, mask, n, n);  // the n×n scores, scaled and weights
    if (st != ATTN_OK) return st;
    if (d_model < 1) return ATTN_ERR_SIZE;
    if (!fits((size_t)n, (size_t)d_model) || !fits((size_t)d_model, (size_t)d_k) ||
        !fits((size_t)d_model, (size_t)d_v)) return ATTN_ERR_TOO_LARGE;
    if ((st = check_scale_flags(scale, flags)) != ATTN_OK) return st;
    // Q = X·W_Q, K = X·W_K, V = X·W_V. A NaN or ±inf in x or a weight always makes some
    // element of a product non-finite (NaN·0 and inf·0 are NaN), so the inputs are scanned
    // only when a product is not finite: NON_FINITE if one of them holds it, else OVERFLOW.
    if (matmul_tiles(q, x, wq, n, d_model, d_k) != ATTN_OK || matmul_tiles(k, x, wk, n, d_model, d_k) != ATTN_OK ||
        matmul_tiles(v, x, wv, n, d_model, d_v) != ATTN_OK) {
        int finite = all_finite(x, (size_t)n * d_model) && all_finite(wq, (size_t)d_model * d_k) &&
                     all_finite(wk, (size_t)d_model * d_k) && all_finite(wv, (size_t)d_model * d_v);
        return finite ? ATTN_ERR_OVERFLOW : ATTN_ERR_NON_FINITE;
    }
    // both the raw scores and the scaled ones must stay finite
    if ((st = check_values(q, k, v, n, n, d_k, d_v, scale > 1.0f ? scale : 1.0f, NULL)) != ATTN_OK) return st;
    for (int i = 0; i < n; i++) {
        float *srow = scores + (size_t)i * n, *crow = scaled + (size_t)i * n;
        float *row = weights + (size_t)i * n;
        // pass 1: similarity Q·Kᵀ, scaling, the row's true maximum over allowed keys
        float maxval = -INFINITY;
        for (int j = 0; j < n; j++) {
            srow[j] = dot(q + (size_t)i * d_k, k + (size_t)j * d_k, d_k);
            crow[j] = srow[j] * scale;  // finite: check_values bounds both
            if (!allowed(mask, i, j, n, flags)) { row[j] = -INFINITY; continue; }
            row[j] = crow[j];
            if (row[j] > maxval) maxval = row[j];
        }
        // passes 2-4: softmax and weighted sum of values
        st = softmax_row_times_v(row, out + (size_t)i * d_v, maxval, v, n, d_v);
        if (st != ATTN_OK) return st;
    }
    return ATTN_OK;
}
