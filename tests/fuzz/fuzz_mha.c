// fuzz_mha.c - attn_mha_forward (c_src/mha.c) against its definition in attention.h, composed
// from the public single-head functions: Q = x·wq + bq, K = kv·wk + bk, V = kv·wv + bv, each
// head through attn_forward_naive on its columns (query head i with kv head i / (h / g)),
// concat, out = concat·wo + bo.
//
// Input: size bytes (n, m or kv NULL, heads, kv_heads, d_head), an options byte (weights,
// concat, mask, biases), scale, flags, what to break, then the matrices (fuzz.h).
// Checks: the right error for each broken precondition (a NULL buffer, a size < 1, heads not
// dividing d_model, kv_heads not dividing heads, kv NULL with m != n), NON_FINITE for NaN/Inf
// in any input, OVERFLOW only when plausible; on ATTN_OK every output finite, each head's
// weights pass the invariants and match the composition, concat and out match it within a
// tolerance carried through W_O, and a fully masked query's row of out is exactly bo (or 0).
#include "fuzz.h"

enum { COST_CAP = 60000 };

// y (rows, cols) = a·b (+ bias), as attention.h defines the projections; OVERFLOW if not finite
static attn_status project(float *y, const float *a, const float *b, const float *bias, int rows, int c, int cols) {
    attn_status st = attn_matmul(y, a, b, rows, c, cols);
    if (st != ATTN_OK || !bias) return st;
    for (size_t i = 0; i < (size_t)rows * cols; i++) {
        y[i] += bias[i % (size_t)cols];
        if (!isfinite(y[i])) return ATTN_ERR_OVERFLOW;
    }
    return ATTN_OK;
}

static void gather(float *dst, const float *src, int rows, int src_cols, int col, int width) {
    for (int i = 0; i < rows; i++) memcpy(dst + (size_t)i * width, src + (size_t)i * src_cols + col, (size_t)width * 4);
}

static int any_nonfinite(const float *x, size_t count) { return x && !all_finite(x, count); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz in = fz_init(data, size);
    int n = 1 + fz_u8(&in) % 16;
    uint8_t mb = fz_u8(&in);
    int has_kv = mb & 1, m = has_kv ? 1 + (mb >> 1) % 40 : n;
    int heads = 1 + fz_u8(&in) % 6;
    int divisors[6], nd = 0;
    for (int g = 1; g <= heads; g++) if (heads % g == 0) divisors[nd++] = g;
    int kv_heads = divisors[fz_u8(&in) % nd];
    int dh = 1 + fz_u8(&in) % 8, dm = heads * dh, dkv = kv_heads * dh;
    while (n > 1 && 2 * n * dm * dm + 2 * m * dm * dkv + 2 * heads * n * m * dh > COST_CAP) {
        n /= 2;
        if (!has_kv) m = n;
    }
    uint8_t opt = fz_u8(&in);
    int has_weights = opt & 1, has_concat = (opt >> 1) & 1, has_mask = (opt >> 2) & 1;
    int has_bias[4] = {(opt >> 3) & 1, (opt >> 4) & 1, (opt >> 5) & 1, (opt >> 6) & 1};
    int breaking = (opt >> 7) && (fz_u8(&in) & 3) == 0;
    float scale = fz_scale(&in, fz_u8(&in), dh);
    unsigned flags = fz_flags(&in);
    int ws_offset = 4 * (fz_u8(&in) & 3);

    // what the call sees; the buffers keep the valid sizes
    int cn = n, cm = m, cdm = dm, ch = heads, cg = kv_heads, null_what = 0, kv_null_mismatch = 0;
    if (breaking) {
        uint8_t b = fz_u8(&in) % 13;
        if (b < 7) null_what = 1 + b;                          // out, workspace, x, wq, wk, wv, wo
        else if (b == 7) cn = fz_bad_dim(&in);
        else if (b == 8) cm = fz_bad_dim(&in);
        else if (b == 9) cdm = fz_bad_dim(&in);
        else if (b == 10) ch = fz_bad_dim(&in);
        else if (b == 11) cg = fz_u8(&in) & 1 ? fz_bad_dim(&in) : heads + 1;   // < 1, or not dividing heads
        else { kv_null_mismatch = 1; cm = n + 1; }            // kv NULL but m != n
        if (b == 10 && ch == 0) ch = dm + 1;                  // heads not dividing d_model
    }
    int bad_size = cn < 1 || cm < 1 || cdm < 1 || ch < 1 || cg < 1 ||
                   (ch >= 1 && cdm >= 1 && cdm % ch != 0) || (cg >= 1 && ch >= 1 && ch % cg != 0) || kv_null_mismatch;

    float *x = fz_matrix(&in, (size_t)n * dm), *kv = has_kv ? fz_matrix(&in, (size_t)m * dm) : NULL;
    float *wq = fz_matrix(&in, (size_t)dm * dm), *wk = fz_matrix(&in, (size_t)dm * dkv);
    float *wv = fz_matrix(&in, (size_t)dm * dkv), *wo = fz_matrix(&in, (size_t)dm * dm);
    int blen[4] = {dm, dkv, dkv, dm};
    float *bias[4];
    for (int i = 0; i < 4; i++) bias[i] = has_bias[i] ? fz_matrix(&in, (size_t)blen[i]) : NULL;
    uint8_t *mask = has_mask ? fz_mask(&in, n, m) : NULL;
    size_t ws_bytes = attn_mha_workspace_size(n, m, dm, heads, kv_heads);
    CHECK(ws_bytes > 0, "attn_mha_workspace_size(%d, %d, %d, %d, %d) = 0 for valid sizes", n, m, dm, heads, kv_heads);
    char *ws_mem = malloc(ws_bytes + ws_offset);
    float *out = fz_output((size_t)n * dm), *concat = has_concat ? fz_output((size_t)n * dm) : NULL;
    float *weights = has_weights ? fz_output((size_t)heads * n * m) : NULL;

    const float *p[7] = {out, (float *)(void *)(ws_mem + ws_offset), x, wq, wk, wv, wo};
    if (null_what) p[null_what - 1] = NULL;
    const float *kv_arg = kv_null_mismatch ? NULL : kv;
    if (fz_dumping()) {
        fprintf(stderr, "n %d m %d d_model %d heads %d kv_heads %d (call: %d %d %d %d %d, kv %s, null %d) scale %.9g flags %#x "
                "weights %d concat %d biases %d%d%d%d\n", n, m, dm, heads, kv_heads, cn, cm, cdm, ch, cg,
                kv_arg ? "given" : "NULL", null_what, (double)scale, flags, has_weights, has_concat,
                has_bias[0], has_bias[1], has_bias[2], has_bias[3]);
        fz_dump("x", x, n, dm); if (kv) fz_dump("kv", kv, m, dm);
        fz_dump("wq", wq, dm, dm); fz_dump("wk", wk, dm, dkv); fz_dump("wv", wv, dm, dkv); fz_dump("wo", wo, dm, dm);
        static const char *BN[4] = {"bq", "bk", "bv", "bo"};
        for (int i = 0; i < 4; i++) if (bias[i]) fz_dump(BN[i], bias[i], 1, blen[i]);
        fz_dump_mask(mask, n, m);
    }
    attn_status s = attn_mha_forward((float *)p[0], concat, weights, (float *)p[1], p[2], kv_arg, p[3], p[4], p[5], p[6],
                                     bias[0], bias[1], bias[2], bias[3], mask, cn, cm, cdm, ch, cg, scale, flags);
    if (fz_dumping()) fprintf(stderr, "status %d\n", s);
    CHECK(status_valid(s), "status %d", s);

    int bad_scale = !isfinite(scale) || scale < 0.0f, bad_flags = (flags & ~ATTN_CAUSAL) != 0;
    if (null_what || bad_size || bad_scale || bad_flags) {
        CHECK((null_what && s == ATTN_ERR_NULL) || (bad_size && s == ATTN_ERR_SIZE) ||
              (bad_scale && s == ATTN_ERR_SCALE) || (bad_flags && s == ATTN_ERR_FLAGS),
              "attn_mha_forward returned %d (%s); broken: NULL #%d, sizes (n %d m %d d_model %d heads %d kv_heads %d, kv %s), scale %g, flags %#x",
              s, attn_status_string(s), null_what, cn, cm, cdm, ch, cg, kv_arg ? "given" : "NULL", (double)scale, flags);
        goto done;
    }
    if (any_nonfinite(x, (size_t)n * dm) || any_nonfinite(kv, (size_t)m * dm) || any_nonfinite(wq, (size_t)dm * dm) ||
        any_nonfinite(wk, (size_t)dm * dkv) || any_nonfinite(wv, (size_t)dm * dkv) || any_nonfinite(wo, (size_t)dm * dm) ||
        any_nonfinite(bias[0], dm) || any_nonfinite(bias[1], dkv) || any_nonfinite(bias[2], dkv) || any_nonfinite(bias[3], dm)) {
        CHECK(s == ATTN_ERR_NON_FINITE, "attn_mha_forward returned %d (%s) for NaN/Inf inputs", s, attn_status_string(s));
        goto done;
    }
    CHECK(s == ATTN_OK || s == ATTN_ERR_OVERFLOW, "attn_mha_forward returned %d (%s) for valid finite inputs", s, attn_status_string(s));

    // the composition of public functions
    {
        const float *src = kv ? kv : x;
        float *Q = fz_output((size_t)n * dm), *K = fz_output((size_t)m * dkv), *V = fz_output((size_t)m * dkv);
        float *qh = fz_output((size_t)n * dh), *kh = fz_output((size_t)m * dh), *vh = fz_output((size_t)m * dh);
        float *oh = fz_output((size_t)n * dh), *wh = fz_output((size_t)n * m), *cat = fz_output((size_t)n * dm);
        float *ref = fz_output((size_t)n * dm);
        double *row_tol = calloc((size_t)n, sizeof *row_tol);  // largest head-output tolerance per row, -1: not compared
        attn_status rs = project(Q, x, wq, bias[0], n, dm, dm);
        if (rs == ATTN_OK) rs = project(K, src, wk, bias[1], m, dm, dkv);
        if (rs == ATTN_OK) rs = project(V, src, wv, bias[2], m, dm, dkv);
        int plausible = rs != ATTN_OK;
        for (int h = 0; h < heads && rs == ATTN_OK; h++) {
            int g = h / (heads / kv_heads);
            gather(qh, Q, n, dm, h * dh, dh); gather(kh, K, m, dkv, g * dh, dh); gather(vh, V, m, dkv, g * dh, dh);
            if (overflow_plausible(qh, kh, vh, n, m, dh, dh, scale)) plausible = 1;
            attn_status hs = attn_forward_naive(oh, wh, NULL, qh, kh, vh, mask, n, m, dh, dh, scale, flags);
            if (hs != ATTN_OK) { rs = hs; plausible = 1; break; }
            for (int i = 0; i < n; i++) memcpy(cat + (size_t)i * dm + h * dh, oh + (size_t)i * dh, (size_t)dh * 4);
            if (s != ATTN_OK) continue;
            char who[64];
            snprintf(who, sizeof who, "attn_mha_forward head %d", h);
            if (weights) {
                check_attention_result(who, oh, weights + (size_t)h * n * m, vh, mask, n, m, dh, flags);
            }
            float *mine = fz_output((size_t)n * dh);
            if (concat) gather(mine, concat, n, dm, h * dh, dh); else memcpy(mine, oh, (size_t)n * dh * 4);
            compare_attention(who, mine, weights ? weights + (size_t)h * n * m : NULL, oh, wh, qh, kh, vh, n, m, dh, dh, scale);
            free(mine);
            for (int i = 0; i < n; i++) {
                double tw, to;
                if (row_tol[i] < 0) continue;
                if (!row_tolerance(qh, kh, vh, i, m, dh, dh, scale, &tw, &to)) row_tol[i] = -1;
                else if (to > row_tol[i]) row_tol[i] = to;
            }
        }
        double bound = 0;  // the largest Σ|concat·wo| + |bo|: out can only overflow near FLT_MAX
        if (rs == ATTN_OK) {
            rs = project(ref, cat, wo, bias[3], n, dm, dm);
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < dm; j++) {
                    double b = bias[3] ? fabs((double)bias[3][j]) : 0;
                    for (int c = 0; c < dm; c++) b += fabs((double)cat[(size_t)i * dm + c] * wo[(size_t)c * dm + j]);
                    if (b > bound) bound = b;
                }
            }
            if (bound >= 0.5 * FLT_MAX) plausible = 1;
        }
        if (s == ATTN_ERR_OVERFLOW) {
            CHECK(plausible, "attn_mha_forward returned OVERFLOW but the composition is far from the float32 limits");
        } else {
            CHECK(rs == ATTN_OK, "attn_mha_forward OK but the composition of public functions returned %d (%s)", rs, attn_status_string(rs));
            CHECK(all_finite(out, (size_t)n * dm), "out holds a non-finite value");
            if (concat) CHECK(all_finite(concat, (size_t)n * dm), "concat holds a non-finite value");
            for (int i = 0; i < n; i++) {
                int any = 0;
                for (int j = 0; j < m; j++) any |= allowed_at(mask, i, j, m, flags);
                for (int j = 0; j < dm; j++) {
                    float o = out[(size_t)i * dm + j], want = bias[3] ? bias[3][j] : 0.0f;
                    if (!any) CHECK(o == want, "query %d is fully masked but out[%d][%d] = %.9g, not bo = %.9g", i, i, j, (double)o, (double)want);
                    if (row_tol[i] < 0) continue;
                    // the heads may differ by row_tol[i] each, and W_O carries that through
                    double wsum = 0, abs = bias[3] ? fabs((double)bias[3][j]) : 0;
                    for (int c = 0; c < dm; c++) {
                        wsum += fabs((double)wo[(size_t)c * dm + j]);
                        abs += fabs((double)cat[(size_t)i * dm + c] * wo[(size_t)c * dm + j]);
                    }
                    double tol = row_tol[i] * wsum + (dm + 3) * 0x1p-23 * abs + dm * 0x1p-149;
                    CHECK(fabs(o - ref[(size_t)i * dm + j]) <= tol, "out[%d][%d] = %.9g, composition %.9g (tolerance %g)",
                          i, j, (double)o, (double)ref[(size_t)i * dm + j], tol);
                }
            }
        }
        free(Q); free(K); free(V); free(qh); free(kh); free(vh); free(oh); free(wh); free(cat); free(ref); free(row_tol);
    }

done:
    free(x); free(kv); free(wq); free(wk); free(wv); free(wo);
    for (int i = 0; i < 4; i++) free(bias[i]);
    free(mask); free(ws_mem); free(out); free(concat); free(weights);
    return 0;
}
