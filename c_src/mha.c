// mha.c - multi-head attention (episode 06) on top of attention.c: its packed linear kernel
// (internal.h) and attn_forward. See attention.h for shapes and semantics.
//
// The schedule, for h heads of width d_head = d_model / h:
//   pass 1: project        Q = x·wq + bq, K = kv·wk + bk, V = kv·wv + bv (each weight packed
//                          into the workspace first: attn_pack_fast)
//   pass 2: per head       gather the head's columns of Q (and of its kv head's K, V) into
//                          contiguous (rows, d_head) buffers, run attn_forward, scatter the
//                          head's output into its columns of concat
//   pass 3: output         out = concat·wo + bo
// Nothing here allocates: every buffer is the caller's or a slice of the workspace.
#include "attention.h"
#include "internal.h"  // fits, all_finite, the shared checks, gather, scatter

#include <math.h>
#include <string.h>

// Carve `rows·cols` floats, rounded up to 4 (16 bytes), from a running total. 0 on overflow.
static int carve(size_t *total, size_t rows, size_t cols) {
    if (!fits(rows, cols)) return 0;
    size_t c = (rows * cols + 3) / 4 * 4;
    if (*total > (size_t)-1 / sizeof(float) - c) return 0;
    *total += c;
    return 1;
}

static attn_status check_mha_sizes(int n, int m, int d_model, int heads, int kv_heads) {
    if (n < 1 || m < 1 || d_model < 1 || heads < 1 || kv_heads < 1) return ATTN_ERR_SIZE;
    if (d_model % heads != 0 || heads % kv_heads != 0) return ATTN_ERR_SIZE;
    return ATTN_OK;
}

// The workspace in floats: Q (n, d_model), K and V (m, d_kv), one head's q (n, d_head),
// k and v (m, d_head), output (n, d_head), concat (n, d_model) for callers who pass
// concat NULL, attn_forward's own workspace, and one packed weight (d_model, d_model). 0 when
// the sizes are invalid or too large.
static size_t mha_floats(int n, int m, int d_model, int heads, int kv_heads) {
    if (check_mha_sizes(n, m, d_model, heads, kv_heads) != ATTN_OK) return 0;
    size_t dh = (size_t)(d_model / heads), dkv = dh * (size_t)kv_heads;
    size_t aws = attn_workspace_size(n, m, (int)dh, (int)dh);
    if (aws == 0) return 0;
    size_t total = 0;
    if (!carve(&total, (size_t)n, (size_t)d_model) || !carve(&total, (size_t)m, dkv) ||
        !carve(&total, (size_t)m, dkv) || !carve(&total, (size_t)n, dh) ||
        !carve(&total, (size_t)m, dh) || !carve(&total, (size_t)m, dh) ||
        !carve(&total, (size_t)n, dh) || !carve(&total, (size_t)n, (size_t)d_model) ||
        !carve(&total, (aws + sizeof(float) - 1) / sizeof(float), 1) ||
        !carve(&total, (size_t)d_model, (size_t)d_model)) return 0;
    return total;
}

size_t attn_mha_workspace_size(int n, int m, int d_model, int heads, int kv_heads) {
    size_t floats = mha_floats(n, m, d_model, heads, kv_heads);
    return floats ? floats * sizeof(float) : 0;
}

// y (rows, cols) = a·b + bias (bias (cols) or NULL), for finite a and b; b is packed into
// `packed` (c·cols floats) for the packed kernel, which gives attn_matmul's bits 1.9× as fast at
// GPT-2's (1024, 768)·(768, 768) (docs/BENCHMARKS.md). The one-file embed (ATTN_EMBED: small
// sizes, every byte counts) has attn_matmul only.
static attn_status project(float *y, float *packed, const float *a, const float *b, const float *bias,
                           int rows, int c, int cols) {
#ifdef ATTN_EMBED
    (void)packed;
    attn_status st = attn_matmul(y, a, b, rows, c, cols);
    if (st != ATTN_OK) return st;
#else
    attn_pack_fast(packed, b, c, cols);
    attn_linear_fast(y, a, packed, NULL, rows, c, cols);
    if (!all_finite(y, (size_t)rows * cols)) return ATTN_ERR_OVERFLOW;
#endif
    if (!bias) return ATTN_OK;
    for (int i = 0; i < rows; i++) {
        float *yi = y + (size_t)i * cols;
        for (int j = 0; j < cols; j++) {
            yi[j] += bias[j];
            if (!isfinite(yi[j])) return ATTN_ERR_OVERFLOW;
        }
    }
    return ATTN_OK;
}

attn_status attn_mha_forward(float *out, float *concat, float *weights, float *workspace,
                             const float *x, const float *kv,
                             const float *wq, const float *wk, const float *wv, const float *wo,
                             const float *bq, const float *bk, const float *bv, const float *bo,
                             const uint8_t *mask, int n, int m, int d_model, int heads, int kv_heads,
                             float scale, unsigned flags) {
    if (!out || !workspace || !x || !wq || !wk || !wv || !wo) return ATTN_ERR_NULL;
    attn_status st = check_mha_sizes(n, m, d_model, heads, kv_heads);
    if (st != ATTN_OK) return st;
    if (!kv && m != n) return ATTN_ERR_SIZE;  // self-attention: the keys are the queries' tokens
    size_t floats = mha_floats(n, m, d_model, heads, kv_heads);
    if (floats == 0 || !fits((size_t)d_model, (size_t)d_model)) return ATTN_ERR_TOO_LARGE;
    if ((st = check_nm(weights ? (size_t)heads : 0, mask, n, m)) != ATTN_OK) return st;
    if ((st = check_scale_flags(scale, flags)) != ATTN_OK) return st;

    const int dh = d_model / heads, group = heads / kv_heads, dkv = dh * kv_heads;
    const size_t dm = (size_t)d_model;
    if (!all_finite(x, (size_t)n * dm) || !all_finite(kv, (size_t)m * dm) ||
        !all_finite(wq, dm * dm) || !all_finite(wk, dm * dkv) || !all_finite(wv, dm * dkv) ||
        !all_finite(wo, dm * dm) || !all_finite(bq, dm) || !all_finite(bk, (size_t)dkv) ||
        !all_finite(bv, (size_t)dkv) || !all_finite(bo, dm))
        return ATTN_ERR_NON_FINITE;

    // the workspace, in the order of mha_floats
    float *p = workspace;
    float *Q = p;  p += ((size_t)n * dm + 3) / 4 * 4;
    float *K = p;  p += ((size_t)m * dkv + 3) / 4 * 4;
    float *V = p;  p += ((size_t)m * dkv + 3) / 4 * 4;
    float *qh = p; p += ((size_t)n * dh + 3) / 4 * 4;
    float *kh = p; p += ((size_t)m * dh + 3) / 4 * 4;
    float *vh = p; p += ((size_t)m * dh + 3) / 4 * 4;
    float *oh = p; p += ((size_t)n * dh + 3) / 4 * 4;
    float *cat = p; p += ((size_t)n * dm + 3) / 4 * 4;
    float *aws = p; p += ((attn_workspace_size(n, m, dh, dh) + 3) / 4 + 3) / 4 * 4;
    float *packed = p;
    if (concat) cat = concat;
    if (!kv) kv = x;

    // pass 1: project the tokens into queries, keys and values
    if ((st = project(Q, packed, x, wq, bq, n, d_model, d_model)) != ATTN_OK) return st;
    if ((st = project(K, packed, kv, wk, bk, m, d_model, dkv)) != ATTN_OK) return st;
    if ((st = project(V, packed, kv, wv, bv, m, d_model, dkv)) != ATTN_OK) return st;

    // pass 2: each head attends with its own slice of d_head columns; query head h shares
    // kv head h / group (grouped-query attention; group = 1 is plain multi-head attention)
    for (int h = 0; h < heads; h++) {
        if (h % group == 0) {
            gather(kh, K, m, dkv, (h / group) * dh, dh);
            gather(vh, V, m, dkv, (h / group) * dh, dh);
        }
        gather(qh, Q, n, d_model, h * dh, dh);
        float *wh = weights ? weights + (size_t)h * n * m : NULL;
        st = attn_forward(oh, wh, wh ? NULL : aws, qh, kh, vh, mask, n, m, dh, dh, scale, flags);
        if (st != ATTN_OK) return st;
        scatter(cat, oh, n, d_model, h * dh, dh);
    }

    // pass 3: mix the heads
    return project(out, packed, cat, wo, bo, n, d_model, d_model);
}
