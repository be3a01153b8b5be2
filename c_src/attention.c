// attention.c - see attention.h for the API, shapes and semantics.
//
// Two implementations of the same function live here:
//   attn_forward_naive  plain scalar loops, the reference;
//   attn_forward        4-wide vectors (GCC/Clang vector extensions: SSE natively,
//                       wasm simd128 under emcc -msimd128), same passes.
// Both are tested against each other and against PyTorch (tests/).
// Build without -ffast-math: softmax relies on IEEE rules for -inf and exp.
#include "attention.h"

#include <math.h>
#include <string.h>

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
    }
    return "unknown status";
}

float attn_default_scale(int d_k) { return d_k < 1 ? 0.0f : 1.0f / sqrtf((float)d_k); }

size_t attn_workspace_size(int m) { return m < 1 ? 0 : (size_t)m * sizeof(float); }

// a*b fits in size_t (as a count of floats, in bytes too)
static int fits(size_t a, size_t b) { return b == 0 || a <= ((size_t)-1 / sizeof(float)) / b; }

static int all_finite(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(x[i])) return 0;
    }
    return 1;
}

static attn_status check_sizes(int n, int m, int d_k, int d_v) {
    if (n < 1 || m < 1 || d_k < 1 || d_v < 1) return ATTN_ERR_SIZE;
    if (!fits((size_t)n, (size_t)m) || !fits((size_t)n, (size_t)d_k) ||
        !fits((size_t)m, (size_t)d_k) || !fits((size_t)m, (size_t)d_v) ||
        !fits((size_t)n, (size_t)d_v)) return ATTN_ERR_TOO_LARGE;
    return ATTN_OK;
}

static attn_status check_forward(const float *out, const float *weights, const float *workspace,
                                 const float *q, const float *k, const float *v,
                                 int n, int m, int d_k, int d_v, float scale, unsigned flags) {
    if (!out || !q || !k || !v || (!weights && !workspace)) return ATTN_ERR_NULL;
    attn_status st = check_sizes(n, m, d_k, d_v);
    if (st != ATTN_OK) return st;
    if (!isfinite(scale) || scale < 0.0f) return ATTN_ERR_SCALE;
    if (flags & ~ATTN_CAUSAL) return ATTN_ERR_FLAGS;
    if (!all_finite(q, (size_t)n * d_k) || !all_finite(k, (size_t)m * d_k) ||
        !all_finite(v, (size_t)m * d_v)) return ATTN_ERR_NON_FINITE;
    return ATTN_OK;
}

// may query i attend to key j?
static int allowed(const uint8_t *mask, int i, int j, int m, unsigned flags) {
    if ((flags & ATTN_CAUSAL) && j > i) return 0;
    return !mask || mask[(size_t)i * m + j] != 0;
}

// ----------------------------------------------------------------------------
// the reference: plain loops, one pass at a time

attn_status attn_forward_naive(float *out, float *weights, float *workspace,
                               const float *q, const float *k, const float *v, const uint8_t *mask,
                               int n, int m, int d_k, int d_v, float scale, unsigned flags) {
    attn_status st = check_forward(out, weights, workspace, q, k, v, n, m, d_k, d_v, scale, flags);
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
            s *= scale;
            if (!isfinite(s)) return ATTN_ERR_OVERFLOW;
            row[j] = s;
            if (s > maxval) maxval = s;
        }
        if (maxval == -INFINITY) {  // every key masked: weights 0, output 0
            for (int j = 0; j < m; j++) row[j] = 0.0f;
            for (int c = 0; c < d_v; c++) o[c] = 0.0f;
            continue;
        }
        // pass 2: exp and sum (masked keys hold -inf, exp gives exactly 0)
        float sum = 0.0f;
        for (int j = 0; j < m; j++) {
            row[j] = expf(row[j] - maxval);
            sum += row[j];
        }
        // pass 3: normalize (sum >= 1: the maximum contributes exp(0))
        for (int j = 0; j < m; j++) row[j] = row[j] / sum;
        // pass 4: weighted sum of values
        for (int c = 0; c < d_v; c++) o[c] = 0.0f;
        for (int j = 0; j < m; j++) {
            float w = row[j];
            for (int c = 0; c < d_v; c++) o[c] += w * v[(size_t)j * d_v + c];
        }
        for (int c = 0; c < d_v; c++) {
            if (!isfinite(o[c])) return ATTN_ERR_OVERFLOW;
        }
    }
    return ATTN_OK;
}

// ----------------------------------------------------------------------------
// the fast path: 4-wide vectors

typedef float v4f __attribute__((vector_size(16)));

static inline v4f load4(const float *p) { v4f r; memcpy(&r, p, sizeof r); return r; }
static inline void store4(float *p, v4f x) { memcpy(p, &x, sizeof x); }

// a·b, four lanes then (l0 + l1) + (l2 + l3), then the tail
static inline float dot(const float *a, const float *b, int d) {
    v4f acc = {0.0f, 0.0f, 0.0f, 0.0f};
    int c = 0;
    for (; c + 4 <= d; c += 4) acc += load4(a + c) * load4(b + c);
    float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (; c < d; c++) s += a[c] * b[c];
    return s;
}

// y += w * x
static inline void axpy(float *y, float w, const float *x, int d) {
    v4f wv = {w, w, w, w};
    int c = 0;
    for (; c + 4 <= d; c += 4) store4(y + c, load4(y + c) + wv * load4(x + c));
    for (; c < d; c++) y[c] += w * x[c];
}

// Passes 2-4 for one query row. row (m) holds the scaled logits, -inf where masked;
// maxval is their maximum (-inf when every key is masked). Writes weights into row
// and the output row o (d_v). Returns ATTN_OVERFLOW if o is not finite.
static attn_status softmax_row_times_v(float *row, float *o, float maxval,
                                       const float *v, int m, int d_v) {
    memset(o, 0, (size_t)d_v * sizeof *o);
    if (maxval == -INFINITY) {  // every key masked: weights 0, output 0
        memset(row, 0, (size_t)m * sizeof *row);
        return ATTN_OK;
    }
    // pass 2: exp and sum
    float sum = 0.0f;
    for (int j = 0; j < m; j++) {
        row[j] = expf(row[j] - maxval);
        sum += row[j];
    }
    // pass 3: normalize
    float inv = 1.0f / sum;
    for (int j = 0; j < m; j++) row[j] *= inv;
    // pass 4: weighted sum of values (masked keys have weight 0: skip them)
    for (int j = 0; j < m; j++) {
        if (row[j] != 0.0f) axpy(o, row[j], v + (size_t)j * d_v, d_v);
    }
    for (int c = 0; c < d_v; c++) {
        if (!isfinite(o[c])) return ATTN_ERR_OVERFLOW;
    }
    return ATTN_OK;
}

attn_status attn_forward(float *out, float *weights, float *workspace,
                         const float *q, const float *k, const float *v, const uint8_t *mask,
                         int n, int m, int d_k, int d_v, float scale, unsigned flags) {
    attn_status st = check_forward(out, weights, workspace, q, k, v, n, m, d_k, d_v, scale, flags);
    if (st != ATTN_OK) return st;
    for (int i = 0; i < n; i++) {
        float *row = weights ? weights + (size_t)i * m : workspace;
        const float *qi = q + (size_t)i * d_k;
        // pass 1: query dot key, scaled, and the row's true maximum
        float maxval = -INFINITY;
        for (int j = 0; j < m; j++) {
            if (!allowed(mask, i, j, m, flags)) { row[j] = -INFINITY; continue; }
            float s = dot(qi, k + (size_t)j * d_k, d_k) * scale;
            if (!isfinite(s)) return ATTN_ERR_OVERFLOW;
            row[j] = s;
            if (s > maxval) maxval = s;
        }
        st = softmax_row_times_v(row, out + (size_t)i * d_v, maxval, v, m, d_v);
        if (st != ATTN_OK) return st;
    }
    return ATTN_OK;
}

// ----------------------------------------------------------------------------
// projections and the episode's self-attention

attn_status attn_matmul(float *out, const float *a, const float *b, int n, int c, int p) {
    if (!out || !a || !b) return ATTN_ERR_NULL;
    if (n < 1 || c < 1 || p < 1) return ATTN_ERR_SIZE;
    if (!fits((size_t)n, (size_t)c) || !fits((size_t)c, (size_t)p) || !fits((size_t)n, (size_t)p))
        return ATTN_ERR_TOO_LARGE;
    for (int i = 0; i < n; i++) {
        float *o = out + (size_t)i * p;
        memset(o, 0, (size_t)p * sizeof *o);
        for (int t = 0; t < c; t++) axpy(o, a[(size_t)i * c + t], b + (size_t)t * p, p);
        for (int j = 0; j < p; j++) {
            if (!isfinite(o[j])) return ATTN_ERR_OVERFLOW;
        }
    }
    return ATTN_OK;
}

attn_status attn_self_forward(float *q, float *k, float *v, float *scores, float *scaled,
                              float *weights, float *out,
                              const float *x, const float *wq, const float *wk, const float *wv,
                              const uint8_t *mask, int n, int d_model, int d_k, int d_v,
                              float scale, unsigned flags) {
    if (!q || !k || !v || !scores || !scaled || !weights || !out || !x || !wq || !wk || !wv)
        return ATTN_ERR_NULL;
    attn_status st = check_sizes(n, n, d_k, d_v);
    if (st != ATTN_OK) return st;
    if (d_model < 1) return ATTN_ERR_SIZE;
    if (!fits((size_t)n, (size_t)d_model) || !fits((size_t)d_model, (size_t)d_k) ||
        !fits((size_t)d_model, (size_t)d_v)) return ATTN_ERR_TOO_LARGE;
    if (!isfinite(scale) || scale < 0.0f) return ATTN_ERR_SCALE;
    if (flags & ~ATTN_CAUSAL) return ATTN_ERR_FLAGS;
    if (!all_finite(x, (size_t)n * d_model) || !all_finite(wq, (size_t)d_model * d_k) ||
        !all_finite(wk, (size_t)d_model * d_k) || !all_finite(wv, (size_t)d_model * d_v))
        return ATTN_ERR_NON_FINITE;
    // Q = X·W_Q, K = X·W_K, V = X·W_V
    if ((st = attn_matmul(q, x, wq, n, d_model, d_k)) != ATTN_OK) return st;
    if ((st = attn_matmul(k, x, wk, n, d_model, d_k)) != ATTN_OK) return st;
    if ((st = attn_matmul(v, x, wv, n, d_model, d_v)) != ATTN_OK) return st;
    for (int i = 0; i < n; i++) {
        float *srow = scores + (size_t)i * n, *crow = scaled + (size_t)i * n;
        float *row = weights + (size_t)i * n;
        // pass 1: similarity Q·Kᵀ, scaling, the row's true maximum over allowed keys
        float maxval = -INFINITY;
        for (int j = 0; j < n; j++) {
            srow[j] = dot(q + (size_t)i * d_k, k + (size_t)j * d_k, d_k);
            crow[j] = srow[j] * scale;
            if (!isfinite(crow[j])) return ATTN_ERR_OVERFLOW;
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
