// fuzz_self.c - attn_self_forward: the episode's steps, each checked against the others.
//
// Checks: valid statuses and the right error for each broken precondition (a NULL among the
// eleven buffers, a dimension < 1, scale, flags), NON_FINITE for NaN/Inf inputs, OVERFLOW only
// when plausible; on ATTN_OK: q, k, v are bit-identical to attn_matmul, scaled is exactly
// fl(scores·scale), scores ≈ q·kᵀ in double, the weights and output invariants, and
// weights/output ≈ attn_forward_naive on the same q, k, v (which must succeed too).
#include "fuzz.h"

enum { COST_CAP = 40000 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz in = fz_init(data, size);
    int n = 1 + fz_u8(&in) % 40, dm = 1 + fz_u8(&in) % 32, d_k = 1 + fz_u8(&in) % 24, d_v = 1 + fz_u8(&in) % 24;
    while (n > 1 && n * dm * (2 * d_k + d_v) + n * n * (d_k + d_v) > COST_CAP) n /= 2;
    uint8_t opt = fz_u8(&in);
    int with_mask = opt & 1;
    float scale = fz_scale(&in, (opt >> 1) & 3, d_k);
    unsigned flags = fz_flags(&in);
    int null_what = 0, bad_dim = 0;  // 1..11: which pointer is NULL; 1..4: which size is bad
    if ((opt >> 3) == 31) {
        uint8_t b = fz_u8(&in);
        if (b & 1) null_what = 1 + (b >> 1) % 11; else bad_dim = 1 + (b >> 1) % 4;
    }

    float *x = fz_matrix(&in, (size_t)n * dm), *wq = fz_matrix(&in, (size_t)dm * d_k);
    float *wk = fz_matrix(&in, (size_t)dm * d_k), *wv = fz_matrix(&in, (size_t)dm * d_v);
    uint8_t *mask = with_mask ? fz_mask(&in, n, n) : NULL;
    float *q = fz_output((size_t)n * d_k), *k = fz_output((size_t)n * d_k), *v = fz_output((size_t)n * d_v);
    float *scores = fz_output((size_t)n * n), *scaled = fz_output((size_t)n * n), *w = fz_output((size_t)n * n);
    float *out = fz_output((size_t)n * d_v);

    float *p[11] = {q, k, v, scores, scaled, w, out, x, wq, wk, wv};
    if (null_what) p[null_what - 1] = NULL;
    int dims[4] = {n, dm, d_k, d_v};
    if (bad_dim) dims[bad_dim - 1] = fz_bad_dim(&in);
    if (fz_dumping()) {
        fprintf(stderr, "n %d d_model %d d_k %d d_v %d scale %.9g flags %#x null %d bad dim %d\n",
                dims[0], dims[1], dims[2], dims[3], (double)scale, flags, null_what, bad_dim);
        fz_dump("x", x, n, dm); fz_dump("wq", wq, dm, d_k); fz_dump("wk", wk, dm, d_k); fz_dump("wv", wv, dm, d_v);
        fz_dump_mask(mask, n, n);
    }
    attn_status s = attn_self_forward(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10],
                                      mask, dims[0], dims[1], dims[2], dims[3], scale, flags);
    if (fz_dumping()) fprintf(stderr, "status %d\n", s);
    CHECK(status_valid(s), "status %d", s);

    int bad_scale = !isfinite(scale) || scale < 0.0f, bad_flags = (flags & ~ATTN_CAUSAL) != 0;
    if (null_what || bad_dim || bad_scale || bad_flags) {
        CHECK((null_what && s == ATTN_ERR_NULL) || (bad_dim && s == ATTN_ERR_SIZE) ||
              (bad_scale && s == ATTN_ERR_SCALE) || (bad_flags && s == ATTN_ERR_FLAGS),
              "attn_self_forward returned %d (%s); broken: NULL pointer #%d, size #%d (%d), scale %g, flags %#x",
              s, attn_status_string(s), null_what, bad_dim, bad_dim ? dims[bad_dim - 1] : 0, (double)scale, flags);
        goto done;
    }
    if (!all_finite(x, (size_t)n * dm) || !all_finite(wq, (size_t)dm * d_k) || !all_finite(wk, (size_t)dm * d_k) ||
        !all_finite(wv, (size_t)dm * d_v)) {
        CHECK(s == ATTN_ERR_NON_FINITE, "attn_self_forward returned %d (%s) for NaN/Inf inputs", s, attn_status_string(s));
        goto done;
    }
    CHECK(s == ATTN_OK || s == ATTN_ERR_OVERFLOW, "attn_self_forward returned %d (%s) for valid finite inputs", s, attn_status_string(s));

    // the projections, as attn_matmul computes them
    float *mq = fz_output((size_t)n * d_k), *mk = fz_output((size_t)n * d_k), *mv = fz_output((size_t)n * d_v);
    attn_status sq = attn_matmul(mq, x, wq, n, dm, d_k), sk = attn_matmul(mk, x, wk, n, dm, d_k);
    attn_status sv = attn_matmul(mv, x, wv, n, dm, d_v);
    int proj_ok = sq == ATTN_OK && sk == ATTN_OK && sv == ATTN_OK;
    if (s == ATTN_ERR_OVERFLOW) {
        CHECK(!proj_ok || overflow_plausible(mq, mk, mv, n, n, d_k, d_v, scale),
              "attn_self_forward returned OVERFLOW for moderate inputs (scale %g)", (double)scale);
    } else {
        CHECK(!proj_ok || !must_overflow(mq, mk, n, n, d_k, scale),
              "attn_self_forward OK although max‖q‖·max‖k‖·max(scale, 1) = %g >= FLT_MAX/2", logits_bound(mq, mk, n, n, d_k, scale));
        CHECK(proj_ok, "attn_self_forward OK but attn_matmul of a projection returned %d/%d/%d", sq, sk, sv);
        CHECK(memcmp(q, mq, (size_t)n * d_k * 4) == 0 && memcmp(k, mk, (size_t)n * d_k * 4) == 0 &&
              memcmp(v, mv, (size_t)n * d_v * 4) == 0, "q, k or v differs from attn_matmul's");
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                float sc = scores[(size_t)i * n + j], sd = scaled[(size_t)i * n + j];
                CHECK(isfinite(sc) && isfinite(sd), "scores[%d][%d] = %g, scaled = %g", i, j, (double)sc, (double)sd);
                float want = sc * scale;
                CHECK(float_bits(sd) == float_bits(want), "scaled[%d][%d] = %.9g but scores·scale = %.9g", i, j, (double)sd, (double)want);
                double dot = 0, abs = 0;
                for (int c = 0; c < d_k; c++) {
                    dot += (double)q[(size_t)i * d_k + c] * k[(size_t)j * d_k + c];
                    abs += fabs((double)q[(size_t)i * d_k + c] * k[(size_t)j * d_k + c]);
                }
                double tol = (d_k + 2) * 0x1p-23 * abs + d_k * 0x1p-149;
                CHECK(fabs(sc - dot) <= tol, "scores[%d][%d] = %.9g, q·k in double %.9g (tolerance %g)", i, j, (double)sc, dot, tol);
            }
        }
        check_attention_result("attn_self_forward", out, w, v, mask, n, n, d_v, flags);
        float *out_n = fz_output((size_t)n * d_v), *w_n = fz_output((size_t)n * n);
        attn_status sn = attn_forward_naive(out_n, w_n, NULL, q, k, v, mask, n, n, d_k, d_v, scale, flags);
        CHECK(sn == ATTN_OK || (sn == ATTN_ERR_OVERFLOW && at_float_limit(v, (size_t)n * d_v)),
              "attn_self_forward OK but attn_forward_naive on its q, k, v returned %d (%s)", sn, attn_status_string(sn));
        if (sn == ATTN_OK) compare_attention("attn_self_forward vs attn_forward_naive", out, w, out_n, w_n, q, k, v, n, n, d_k, d_v, scale);
        free(out_n); free(w_n);
    }
    free(mq); free(mk); free(mv);

done:
    free(x); free(wq); free(wk); free(wv); free(mask);
    free(q); free(k); free(v); free(scores); free(scaled); free(w); free(out);
    return 0;
}
