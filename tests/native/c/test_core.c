// test_core.c - native tests of the C core (run under ASan + UBSan by `make -C c_src test`).
//
// PyTorch agreement is checked by tests/native.test.js through tests/c/harness.c with the
// committed golden data; this file checks what C alone can: the fast path against the naive
// reference on odd sizes, the invariants, and every bad input's status.
#include "attention.h"

#define TEST_SEED 0x9E3779B97F4A7C15ull
#include "check.h"

// float64 reference of the same semantics, from the float32 inputs
static void reference(double *out, double *w, const float *q, const float *k, const float *v,
                      const uint8_t *mask, int n, int m, int dk, int dv, float scale, unsigned flags) {
    for (int i = 0; i < n; i++) {
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < m; j++) {
            int ok = !((flags & ATTN_CAUSAL) && j > i) && (!mask || mask[(size_t)i * m + j]);
            double s = 0;
            for (int c = 0; c < dk; c++) s += (double)q[(size_t)i * dk + c] * k[(size_t)j * dk + c];
            w[(size_t)i * m + j] = ok ? s * scale : -INFINITY;
            if (ok && s * scale > mx) mx = s * scale;
        }
        for (int j = 0; j < m; j++) {
            double e = mx == -INFINITY ? 0 : exp(w[(size_t)i * m + j] - mx);
            w[(size_t)i * m + j] = e;
            sum += e;
        }
        for (int c = 0; c < dv; c++) out[(size_t)i * dv + c] = 0;
        for (int j = 0; j < m; j++) {
            if (sum > 0) w[(size_t)i * m + j] /= sum;
            for (int c = 0; c < dv; c++) out[(size_t)i * dv + c] += w[(size_t)i * m + j] * v[(size_t)j * dv + c];
        }
    }
}

static long compare64(const float *a, const double *e, size_t count, double *maxdiff) {
    long first = -1;
    *maxdiff = 0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs((double)a[i] - e[i]);
        if (d > *maxdiff) *maxdiff = d;
        if (first < 0 && !(d <= ATOL + RTOL * fabs(e[i]))) first = (long)i;
    }
    return first;
}

static void test_fast_matches_naive(void) {
    for (int t = 0; t < 600; t++) {
        // sizes on both sides of every block edge: 4-row tiles, 16-row blocks, 8- and 64-key blocks
        int n = randint(1, 37), m = randint(1, 37), dk = randint(1, 19), dv = randint(1, 19);
        if (t % 3 == 2) { n = randint(1, 70); m = randint(30, 140); dk = randint(1, 70); dv = randint(1, 70); }
        if (t % 50 == 0) { n = randint(60, 130); m = randint(60, 130); dk = 64; dv = 64; }
        unsigned flags = (t % 3 == 0) ? ATTN_CAUSAL : 0;
        float scale = (t % 5 == 0) ? uniform(0.0f, 2.0f) : attn_default_scale(dk);
        float mag = (t % 7 == 0 && dk <= 16) ? 2.0f : 1.0f;  // larger logits are ill-conditioned: see test_huge_logits
        float *q = randmat((size_t)n * dk, -mag, mag), *k = randmat((size_t)m * dk, -mag, mag);
        float *v = randmat((size_t)m * dv, -1, 1);
        uint8_t *mask = NULL;
        if (t % 4 == 1) {
            mask = malloc((size_t)n * m);
            for (size_t i = 0; i < (size_t)n * m; i++) mask[i] = (next_u64() % 3) != 0;
            if (n > 2) memset(mask + (size_t)(n / 2) * m, 0, (size_t)m);  // one fully masked row
        }
        float *o1 = malloc((size_t)n * dv * 4), *w1 = malloc((size_t)n * m * 4);
        float *o2 = malloc((size_t)n * dv * 4), *w2 = malloc((size_t)n * m * 4);
        float *o3 = malloc((size_t)n * dv * 4), *ws = malloc(attn_workspace_size(n, m, dk, dv));
        attn_status s1 = attn_forward_naive(o1, w1, NULL, q, k, v, mask, n, m, dk, dv, scale, flags);
        attn_status s2 = attn_forward(o2, w2, NULL, q, k, v, mask, n, m, dk, dv, scale, flags);
        attn_status s3 = attn_forward(o3, NULL, ws, q, k, v, mask, n, m, dk, dv, scale, flags);
        CHECK(s1 == ATTN_OK && s2 == ATTN_OK && s3 == ATTN_OK, "case %d: status %d %d %d", t, s1, s2, s3);
        // both paths against float64, with the project's one tolerance
        double *ew = malloc((size_t)n * m * 8), *eo = malloc((size_t)n * dv * 8);
        reference(eo, ew, q, k, v, mask, n, m, dk, dv, scale, flags);
        const float *paths_w[2] = {w1, w2}, *paths_o[3] = {o1, o2, o3};
        const char *names[3] = {"naive", "rows", "no-weights (tiled when m >= 32)"};
        for (int p = 0; p < 3; p++) {
            double dw = 0, dout;
            long fw = p < 2 ? compare64(paths_w[p], ew, (size_t)n * m, &dw) : -1;
            long fo = compare64(paths_o[p], eo, (size_t)n * dv, &dout);
            CHECK(fw < 0, "case %d %s (n=%d m=%d dk=%d dv=%d): weights differ at %ld, max diff %g", t, names[p], n, m, dk, dv, fw, dw);
            CHECK(fo < 0, "case %d %s (n=%d m=%d dk=%d dv=%d): output differs at %ld, max diff %g", t, names[p], n, m, dk, dv, fo, dout);
        }
        free(ew); free(eo);
        // invariants: rows sum to 1 (or are all zero when fully masked), masked weights exactly 0
        for (int i = 0; i < n; i++) {
            double sum = 0; int any = 0;
            for (int j = 0; j < m; j++) {
                int ok = !((flags & ATTN_CAUSAL) && j > i) && (!mask || mask[(size_t)i * m + j]);
                any |= ok;
                float w = w2[(size_t)i * m + j];
                if (!ok) CHECK(w == 0.0f, "case %d: masked weight [%d][%d] = %g", t, i, j, w);
                CHECK(w >= 0.0f && w <= 1.0f, "case %d: weight [%d][%d] = %g outside [0, 1]", t, i, j, w);
                sum += w;
            }
            if (any) CHECK(fabs(sum - 1.0) <= 1e-5, "case %d: row %d sums to %.9g", t, i, sum);
            else CHECK(sum == 0.0, "case %d: fully masked row %d sums to %g", t, i, sum);
        }
        free(q); free(k); free(v); free(mask); free(o1); free(w1); free(o2); free(w2); free(o3); free(ws);
    }
}

static void test_row_ranges(void) {
    // attn_forward_rows over any split gives attn_forward's bits, on both paths
    for (int t = 0; t < 40; t++) {
        int n = randint(1, 90), m = randint(1, 90), dk = randint(1, 40), dv = randint(1, 40);
        unsigned flags = t % 2 ? ATTN_CAUSAL : 0;
        float *q = randmat((size_t)n * dk, -1, 1), *k = randmat((size_t)m * dk, -1, 1), *v = randmat((size_t)m * dv, -1, 1);
        float *o1 = malloc((size_t)n * dv * 4), *o2 = malloc((size_t)n * dv * 4);
        float *w1 = malloc((size_t)n * m * 4), *w2 = malloc((size_t)n * m * 4);
        float *ws = malloc(attn_workspace_size(n, m, dk, dv));
        float scale = attn_default_scale(dk);
        for (int with_weights = 0; with_weights < 2; with_weights++) {
            float *wa = with_weights ? w1 : NULL, *wb = with_weights ? w2 : NULL;
            CHECK(attn_forward(o1, wa, ws, q, k, v, NULL, n, m, dk, dv, scale, flags) == ATTN_OK, "rows: whole");
            for (int b = 0; b < n;) {
                int e = b + randint(1, 20);
                if (e > n) e = n;
                CHECK(attn_forward_rows(o2, wb, ws, q, k, v, NULL, n, m, dk, dv, scale, flags, b, e) == ATTN_OK, "rows %d..%d", b, e);
                b = e;
            }
            CHECK(memcmp(o1, o2, (size_t)n * dv * 4) == 0, "case %d: split output differs (weights %d)", t, with_weights);
            if (with_weights) CHECK(memcmp(w1, w2, (size_t)n * m * 4) == 0, "case %d: split weights differ", t);
        }
        CHECK(attn_forward_rows(o2, NULL, ws, q, k, v, NULL, n, m, dk, dv, scale, flags, 0, n + 1) == ATTN_ERR_SIZE, "row_end > n");
        CHECK(attn_forward_rows(o2, NULL, ws, q, k, v, NULL, n, m, dk, dv, scale, flags, 1, 1) == ATTN_ERR_SIZE, "empty range");
        free(q); free(k); free(v); free(o1); free(o2); free(w1); free(w2); free(ws);
    }
}

static void test_huge_logits(void) {
    // logits ~ 1e4: no Inf, no NaN, the largest key takes (almost) everything
    float q[2] = {100.0f, 0.0f}, k[6] = {100.0f, 0.0f, 90.0f, 0.0f, -100.0f, 0.0f};
    float v[6] = {1, 2, 3, 4, 5, 6}, out[2], w[3];
    attn_status s = attn_forward(out, w, NULL, q, k, v, NULL, 1, 3, 2, 2, 1.0f, 0);
    CHECK(s == ATTN_OK, "huge logits: status %d", s);
    CHECK(w[0] == 1.0f && w[1] == 0.0f && w[2] == 0.0f, "huge logits: weights %g %g %g", w[0], w[1], w[2]);
    CHECK(out[0] == 1.0f && out[1] == 2.0f, "huge logits: output %g %g", out[0], out[1]);
    // close together at 1e4: an offset does not change the softmax
    float q2[1] = {1.0f}, k2[3] = {10000.0f, 10001.0f, 10002.0f}, v2[3] = {0, 1, 2}, o2[1], w2[3];
    s = attn_forward(o2, w2, NULL, q2, k2, v2, NULL, 1, 3, 1, 1, 1.0f, 0);
    double e0 = 1.0 / (1 + exp(1) + exp(2));
    CHECK(s == ATTN_OK && fabs(w2[0] - e0) < 1e-6 && isfinite(o2[0]), "offset logits: %g vs %g", w2[0], e0);
}

static void test_large_values_no_weights(void) {
    // |v| ~ 1e37 with 40 keys: the tiled path's unnormalized sums could reach 4e38, so
    // attn_forward takes the row path; the result is the weighted average, finite.
    enum { N = 5, M = 40, D = 3 };
    float q[N * D], k[M * D], v[M * D], out[N * D], ref[N * D], w[N * M];
    for (int i = 0; i < N * D; i++) q[i] = uniform(-1, 1);
    for (int i = 0; i < M * D; i++) { k[i] = uniform(-1, 1); v[i] = 1e37f * uniform(0.5f, 1.0f); }
    float *ws = malloc(attn_workspace_size(N, M, D, D));
    attn_status s1 = attn_forward(out, NULL, ws, q, k, v, NULL, N, M, D, D, 0.5f, 0);
    attn_status s2 = attn_forward_naive(ref, w, NULL, q, k, v, NULL, N, M, D, D, 0.5f, 0);
    CHECK(s1 == ATTN_OK && s2 == ATTN_OK, "large v: status %d %d", s1, s2);
    for (int i = 0; i < N * D; i++) CHECK(isfinite(out[i]) && fabs(out[i] - ref[i]) <= 1e-5 * fabs(ref[i]), "large v [%d]: %g vs %g", i, out[i], ref[i]);
    free(ws);
}

static void test_huge_scale(void) {
    // a scale of 3e38 over tiny q and k (the scores moderate): the tiled path's base-2 scale,
    // scale·log2(e), would pass FLT_MAX, so attn_forward takes the row path; OK, as the naive one
    // (the fuzz target fuzz_forward found it: OVERFLOW for moderate inputs)
    enum { N = 2, M = 100, D = 16 };
    float q[N * D], k[M * D], v[M * D], out[N * D], ref[N * D], w[N * M];
    for (int i = 0; i < N * D; i++) q[i] = 1e-20f * uniform(-1, 1);
    for (int i = 0; i < M * D; i++) { k[i] = 1e-20f * uniform(-1, 1); v[i] = uniform(-1, 1); }
    float *ws = malloc(attn_workspace_size(N, M, D, D));
    attn_status s1 = attn_forward(out, NULL, ws, q, k, v, NULL, N, M, D, D, 3e38f, 0);
    attn_status s2 = attn_forward_naive(ref, w, NULL, q, k, v, NULL, N, M, D, D, 3e38f, 0);
    CHECK(s1 == ATTN_OK && s2 == ATTN_OK, "scale 3e38: status %d %d", s1, s2);
    for (int i = 0; i < N * D; i++) CHECK(fabs(out[i] - ref[i]) <= 1e-5, "scale 3e38 [%d]: %g vs %g", i, out[i], ref[i]);
    free(ws);
}

static void test_fully_masked_row(void) {
    float q[4] = {1, 2, 3, 4}, k[4] = {1, 0, 0, 1}, v[4] = {5, 6, 7, 8}, out[4], w[4];
    uint8_t mask[4] = {0, 0, 1, 0};
    attn_status s = attn_forward(out, w, NULL, q, k, v, mask, 2, 2, 2, 2, 1.0f, 0);
    CHECK(s == ATTN_OK, "fully masked: status %d", s);
    CHECK(w[0] == 0 && w[1] == 0 && out[0] == 0 && out[1] == 0, "fully masked row 0 is not zeros");
    CHECK(w[2] == 1 && w[3] == 0 && out[2] == 5 && out[3] == 6, "row 1 attends only to key 0");
    // causal with n > m: query 0 sees key 0 only; top-left alignment
    float q3[3] = {1, 1, 1}, k3[2] = {1, 2}, v3[2] = {10, 20}, o3[3], w3[6];
    s = attn_forward(o3, w3, NULL, q3, k3, v3, NULL, 3, 2, 1, 1, 1.0f, ATTN_CAUSAL);
    CHECK(s == ATTN_OK && w3[0] == 1 && w3[1] == 0 && o3[0] == 10, "causal top-left: row 0 = %g %g", w3[0], w3[1]);
}

static void test_bad_inputs(void) {
    float q[4] = {1, 2, 3, 4}, k[4] = {1, 0, 0, 1}, v[4] = {5, 6, 7, 8}, out[4], w[4], ws[2];
    CHECK(attn_forward(NULL, w, NULL, q, k, v, NULL, 2, 2, 2, 2, 1, 0) == ATTN_ERR_NULL, "NULL out");
    CHECK(attn_forward(out, NULL, NULL, q, k, v, NULL, 2, 2, 2, 2, 1, 0) == ATTN_ERR_NULL, "no weights, no workspace");
    CHECK(attn_forward(out, NULL, ws, q, k, v, NULL, 2, 2, 2, 2, 1, 0) == ATTN_OK, "workspace only");
    CHECK(attn_forward(out, w, NULL, q, k, v, NULL, 0, 2, 2, 2, 1, 0) == ATTN_ERR_SIZE, "n = 0");
    CHECK(attn_forward(out, w, NULL, q, k, v, NULL, 2, -1, 2, 2, 1, 0) == ATTN_ERR_SIZE, "m < 0");
    CHECK(attn_forward(out, w, NULL, q, k, v, NULL, 2, 2, 2, 2, NAN, 0) == ATTN_ERR_SCALE, "NaN scale");
    CHECK(attn_forward(out, w, NULL, q, k, v, NULL, 2, 2, 2, 2, -1, 0) == ATTN_ERR_SCALE, "negative scale");
    CHECK(attn_forward(out, w, NULL, q, k, v, NULL, 2, 2, 2, 2, INFINITY, 0) == ATTN_ERR_SCALE, "inf scale");
    CHECK(attn_forward(out, w, NULL, q, k, v, NULL, 2, 2, 2, 2, 1, 2u) == ATTN_ERR_FLAGS, "flags");
    if (sizeof(size_t) == 4)  // only a 32-bit size_t overflows here (wasm32; tested through JS too)
        CHECK(attn_forward(out, w, NULL, q, k, v, NULL, 0x7fffffff, 0x7fffffff, 0x7fffffff, 2, 1, 0) == ATTN_ERR_TOO_LARGE, "too large");
    float bad[4] = {1, NAN, 3, 4}, inf[4] = {1, 2, INFINITY, 4};
    CHECK(attn_forward(out, w, NULL, bad, k, v, NULL, 2, 2, 2, 2, 1, 0) == ATTN_ERR_NON_FINITE, "NaN in q");
    CHECK(attn_forward(out, w, NULL, q, inf, v, NULL, 2, 2, 2, 2, 1, 0) == ATTN_ERR_NON_FINITE, "Inf in k");
    CHECK(attn_forward_naive(out, w, NULL, q, k, bad, NULL, 2, 2, 2, 2, 1, 0) == ATTN_ERR_NON_FINITE, "NaN in v (naive)");
    float big[4] = {3e38f, 3e38f, 3e38f, 3e38f};
    CHECK(attn_forward(out, w, NULL, big, big, v, NULL, 2, 2, 2, 2, 1, 0) == ATTN_ERR_OVERFLOW, "overflowing scores");
    CHECK(attn_forward_naive(out, w, NULL, big, big, v, NULL, 2, 2, 2, 2, 1, 0) == ATTN_ERR_OVERFLOW, "overflowing scores (naive)");
    CHECK(attn_matmul(out, big, big, 2, 2, 2) == ATTN_ERR_OVERFLOW, "overflowing matmul");
    CHECK(attn_matmul(out, q, k, 2, 0, 2) == ATTN_ERR_SIZE, "matmul size");
    for (int s = 0; s <= 8; s++) CHECK(attn_status_string((attn_status)s) != NULL, "status string %d", s);
    CHECK(strcmp(attn_status_string(ATTN_OK), "ok") == 0, "ok string");
}

static void test_self_forward(void) {
    // the self path equals projections followed by attn_forward, bit for bit
    for (int t = 0; t < 50; t++) {
        int n = randint(1, 17), dm = randint(1, 12), dk = randint(1, 9), dv = randint(1, 9);
        unsigned flags = t % 2 ? ATTN_CAUSAL : 0;
        float *x = randmat((size_t)n * dm, -2, 2), *wq = randmat((size_t)dm * dk, -1, 1);
        float *wk = randmat((size_t)dm * dk, -1, 1), *wv = randmat((size_t)dm * dv, -1, 1);
        float *q = malloc((size_t)n * dk * 4), *k = malloc((size_t)n * dk * 4), *v = malloc((size_t)n * dv * 4);
        float *sc = malloc((size_t)n * n * 4), *sd = malloc((size_t)n * n * 4), *w = malloc((size_t)n * n * 4);
        float *o = malloc((size_t)n * dv * 4), *o2 = malloc((size_t)n * dv * 4), *w2 = malloc((size_t)n * n * 4);
        float scale = attn_default_scale(dk);
        attn_status s = attn_self_forward(q, k, v, sc, sd, w, o, x, wq, wk, wv, NULL, n, dm, dk, dv, scale, flags);
        CHECK(s == ATTN_OK, "self case %d: status %d", t, s);
        s = attn_forward(o2, w2, NULL, q, k, v, NULL, n, n, dk, dv, scale, flags);
        CHECK(s == ATTN_OK && memcmp(w, w2, (size_t)n * n * 4) == 0 && memcmp(o, o2, (size_t)n * dv * 4) == 0,
              "self case %d: differs from attn_forward on its own Q, K, V", t);
        for (int i = 0; i < n * n; i++) CHECK(sd[i] == sc[i] * scale, "scaled[%d] != scores * scale", i);
        // Q really is X·W_Q (double reference)
        double maxd = 0;
        for (int i = 0; i < n; i++) for (int c = 0; c < dk; c++) {
            double e = 0;
            for (int j = 0; j < dm; j++) e += (double)x[i * dm + j] * wq[j * dk + c];
            double d = fabs(e - q[i * dk + c]);
            if (d > maxd) maxd = d;
        }
        CHECK(maxd < 1e-5, "self case %d: Q differs from X·W_Q by %g", t, maxd);
        free(x); free(wq); free(wk); free(wv); free(q); free(k); free(v); free(sc); free(sd); free(w);
        free(o); free(o2); free(w2);
    }
}

// A NaN or ±inf anywhere in x, wq, wk or wv is NON_FINITE (the inputs are scanned only after
// a product came out non-finite), also where it meets a zero (inf·0); finite inputs whose
// product overflows are OVERFLOW.
static void test_self_forward_statuses(void) {
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (int t = 0; t < 200; t++) {
        int n = randint(1, 9), dm = randint(1, 10), dk = randint(1, 9), dv = randint(1, 9);
        size_t sizes[4] = {(size_t)n * dm, (size_t)dm * dk, (size_t)dm * dk, (size_t)dm * dv};
        float *in[4];
        for (int a = 0; a < 4; a++) in[a] = randmat(sizes[a], -1, 1);
        if (t % 3 == 0) memset(in[0], 0, sizes[0] * sizeof(float));   // x = 0: inf·0 = NaN
        int which = t % 4;
        size_t at = (size_t)randint(0, (int)sizes[which] - 1);
        in[which][at] = bad[t % 3];
        float *q = malloc((size_t)n * dk * 4), *k = malloc((size_t)n * dk * 4), *v = malloc((size_t)n * dv * 4);
        float *sc = malloc((size_t)n * n * 4), *sd = malloc((size_t)n * n * 4), *w = malloc((size_t)n * n * 4);
        float *o = malloc((size_t)n * dv * 4);
        attn_status s = attn_self_forward(q, k, v, sc, sd, w, o, in[0], in[1], in[2], in[3], NULL, n, dm, dk, dv,
                                          attn_default_scale(dk), 0);
        CHECK(s == ATTN_ERR_NON_FINITE, "self status case %d (input %d): %d, want NON_FINITE", t, which, s);
        in[which][at] = 3e30f;   // finite again, but X·W overflows (or, with x = 0, the value is unused)
        for (size_t i = 0; i < sizes[0]; i++) in[0][i] = 3e30f;
        s = attn_self_forward(q, k, v, sc, sd, w, o, in[0], in[1], in[2], in[3], NULL, n, dm, dk, dv,
                              attn_default_scale(dk), 0);
        CHECK(s == ATTN_ERR_OVERFLOW, "self status case %d: %d, want OVERFLOW", t, s);
        for (int a = 0; a < 4; a++) free(in[a]);
        free(q); free(k); free(v); free(sc); free(sd); free(w); free(o);
    }
}

static void test_long_sums(void) {
    // issue 11: float running sums stalled at 2^24 equal terms (m = 2^25 equal scores gave
    // weights 2^-24 and output 1 instead of 0.5). Every path, m = 2^25 and 3·2^23, q = 0 so that
    // every score is 0, v half 0 and half 1: weights 1/m, output 0.5.
    const int ms[2] = {1 << 25, 3 << 23};
    for (int t = 0; t < 2; t++) {
        int m = ms[t];
        float q[1] = {0}, out[3];
        float *k = malloc((size_t)m * 4), *v = malloc((size_t)m * 4), *w = malloc((size_t)m * 4);
        float *ws = malloc(attn_workspace_size(1, m, 1, 1));
        for (int j = 0; j < m; j++) { k[j] = 1.0f; v[j] = j < m / 2 ? 0.0f : 1.0f; }
        attn_status s0 = attn_forward_naive(out, w, NULL, q, k, v, NULL, 1, m, 1, 1, 1.0f, 0);
        attn_status s1 = attn_forward(out + 1, w, NULL, q, k, v, NULL, 1, m, 1, 1, 1.0f, 0);
        double wsum = 0;
        for (int j = 0; j < m; j++) wsum += w[j];
        attn_status s2 = attn_forward(out + 2, NULL, ws, q, k, v, NULL, 1, m, 1, 1, 1.0f, 0);
        CHECK(s0 == ATTN_OK && s1 == ATTN_OK && s2 == ATTN_OK, "m = %d: statuses %d %d %d", m, s0, s1, s2);
        for (int p = 0; p < 3; p++) CHECK(fabs(out[p] - 0.5) <= ATOL + RTOL * 0.5, "m = %d, path %d: output %.9g, not 0.5", m, p, out[p]);
        CHECK(fabs(w[0] - 1.0 / m) <= RTOL / m && fabs(wsum - 1.0) <= 1e-6, "m = %d: weight %g (1/m = %g), row sum %.9g", m, w[0], 1.0 / m, wsum);
        free(k); free(v); free(w); free(ws);
    }
}

// RoPE (attn_rope): against glibc's double pow, cos and sin (the core writes its own maths),
// in place, the identity at position 0, pair norms kept, q·k depending on j − i only, statuses
static void test_rope(void) {
    const int ds[] = {2, 4, 8, 64, 128};
    const float bases[] = {10000.0f, 1e6f, 500000.0f, 1.0f};
    double worst = 0;
    for (size_t a = 0; a < sizeof ds / sizeof *ds; a++) {
        for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
            const int d = ds[a], n = 5, heads = 3, half = d / 2, pos0 = a == 4 ? 1000000 : (int)(a * 7);
            const size_t count = (size_t)n * heads * d;
            float *x = randmat(count, -2, 2), *out = malloc(count * sizeof *out), *again = malloc(count * sizeof *again), th[64];
            CHECK(attn_rope(out, th, x, n, heads, d, bases[b], pos0) == ATTN_OK, "rope d %d", d);
            for (int i = 0; i < half; i++) {
                const float theta = (float)pow((double)bases[b], -2.0 * i / d);
                CHECK(th[i] == theta, "theta d %d i %d: %.9g vs %.9g (glibc's pow, rounded once)", d, i, (double)th[i], (double)theta);
                for (int r = 0; r < n; r++) {
                    const double ang = (double)(pos0 + r) * theta, c = cos(ang), s = sin(ang);
                    for (int h = 0; h < heads; h++) {
                        const size_t at = ((size_t)r * heads + h) * d + i;
                        const double e1 = x[at] * c - x[at + half] * s, e2 = x[at + half] * c + x[at] * s;
                        const double g = fmax(fabs(out[at] - e1), fabs(out[at + half] - e2));
                        if (g > worst) worst = g;
                        CHECK(g <= 1e-6, "rope d %d base %g pos %d pair %d: off by %g", d, (double)bases[b], pos0 + r, i, g);
                    }
                }
            }
            memcpy(again, x, count * sizeof *x);
            CHECK(attn_rope(again, NULL, again, n, heads, d, bases[b], pos0) == ATTN_OK && memcmp(again, out, count * sizeof *out) == 0, "in place, same bits");
            free(x); free(out); free(again);
        }
    }
    printf("# rope: largest difference from glibc's double maths %.3g\n", worst);
    // position 0 is the identity; every pair keeps its length
    float x[16], out[16];
    for (int i = 0; i < 16; i++) x[i] = uniform(-3, 3);
    CHECK(attn_rope(out, NULL, x, 2, 1, 8, 10000.0f, 0) == ATTN_OK && memcmp(out, x, 8 * sizeof *x) == 0, "position 0 is the identity");
    for (int i = 0; i < 4; i++) {
        const double before = hypot(x[8 + i], x[12 + i]), after = hypot(out[8 + i], out[12 + i]);
        CHECK(fabs(before - after) <= 1e-6 * before + 1e-7, "pair %d keeps its length: %g vs %g", i, before, after);
    }
    // the score between rows i and j depends on j − i only: rows at 0..n-1 and at s..s+n-1
    enum { N = 6, D = 16 };
    float q[N * D], k[N * D], q0[N * D], k0[N * D], q1[N * D], k1[N * D];
    for (int i = 0; i < N * D; i++) { q[i] = uniform(-1, 1); k[i] = uniform(-1, 1); }
    const int shifts[] = {1, 7, 100};
    for (size_t t = 0; t < 3; t++) {
        CHECK(attn_rope(q0, NULL, q, N, 1, D, 10000.0f, 0) == ATTN_OK && attn_rope(k0, NULL, k, N, 1, D, 10000.0f, 0) == ATTN_OK, "rope q, k");
        CHECK(attn_rope(q1, NULL, q, N, 1, D, 10000.0f, shifts[t]) == ATTN_OK && attn_rope(k1, NULL, k, N, 1, D, 10000.0f, shifts[t]) == ATTN_OK, "rope shifted");
        double gap = 0;
        for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) {
            double s0 = 0, s1 = 0;
            for (int c = 0; c < D; c++) { s0 += (double)q0[i * D + c] * k0[j * D + c]; s1 += (double)q1[i * D + c] * k1[j * D + c]; }
            gap = fmax(gap, fabs(s0 - s1));
        }
        CHECK(gap <= 1e-5, "shift %d: the scores move by %g", shifts[t], gap);
    }
    // statuses
    CHECK(attn_rope(NULL, NULL, x, 2, 1, 8, 10000.0f, 0) == ATTN_ERR_NULL, "NULL out");
    CHECK(attn_rope(out, NULL, NULL, 2, 1, 8, 10000.0f, 0) == ATTN_ERR_NULL, "NULL x");
    CHECK(attn_rope(out, NULL, x, 0, 1, 8, 10000.0f, 0) == ATTN_ERR_SIZE, "n = 0");
    CHECK(attn_rope(out, NULL, x, 2, 0, 8, 10000.0f, 0) == ATTN_ERR_SIZE, "heads = 0");
    CHECK(attn_rope(out, NULL, x, 2, 1, 7, 10000.0f, 0) == ATTN_ERR_SIZE, "d odd");
    CHECK(attn_rope(out, NULL, x, 2, 1, 0, 10000.0f, 0) == ATTN_ERR_SIZE, "d = 0");
    CHECK(attn_rope(out, NULL, x, 2, 1, 8, 0.5f, 0) == ATTN_ERR_RANGE, "base < 1");
    CHECK(attn_rope(out, NULL, x, 2, 1, 8, NAN, 0) == ATTN_ERR_RANGE, "base NaN");
    CHECK(attn_rope(out, NULL, x, 2, 1, 8, INFINITY, 0) == ATTN_ERR_RANGE, "base inf");
    CHECK(attn_rope(out, NULL, x, 2, 1, 8, 10000.0f, -1) == ATTN_ERR_RANGE, "pos0 < 0");
    CHECK(attn_rope(out, NULL, x, 2, 1, 8, 10000.0f, ATTN_ROPE_MAX_POSITION - 1) == ATTN_ERR_RANGE, "past 2^20");
    CHECK(attn_rope(out, NULL, x, 1, 1, 8, 10000.0f, ATTN_ROPE_MAX_POSITION - 1) == ATTN_OK, "the last position");
    CHECK(attn_rope(out, NULL, x, 2, 1, 8, 10000.0f, 0x7fffffff) == ATTN_ERR_RANGE, "pos0 INT_MAX");
    float bad[16];
    memcpy(bad, x, sizeof bad);
    bad[5] = NAN;
    CHECK(attn_rope(out, NULL, bad, 2, 1, 8, 10000.0f, 3) == ATTN_ERR_NON_FINITE, "NaN in x");
    bad[5] = -INFINITY;
    CHECK(attn_rope(out, NULL, bad, 2, 1, 8, 10000.0f, 3) == ATTN_ERR_NON_FINITE, "Inf in x");
    float big[8] = {3e38f, 3e38f, 3e38f, 3e38f, 3e38f, 3e38f, 3e38f, 3e38f};
    CHECK(attn_rope(out, NULL, big, 1, 1, 8, 10000.0f, 1) == ATTN_ERR_OVERFLOW, "a pair past float32");
    float th[4];
    CHECK(attn_rope(out, th, x, 1, 2, 8, 10000.0f, 5) == ATTN_OK && th[0] == 1.0f && th[1] == 0.1f && th[3] == 0.001f, "theta: 1, 0.1, 0.01, 0.001");
}

// RoPE's pieces (rope.c): attn_rope is the bits of attn_rope_frequencies, attn_rope_table and
// attn_rope_rotate in turn; the table against glibc's cos and sin; the interleaved layout is the
// rotate-half one after a permutation of each head's values
static void test_rope_pieces(void) {
    const int ds[] = {2, 8, 64}, pos0s[] = {0, 3, 100000};
    const float bases[] = {10000.0f, 500000.0f};
    for (size_t a = 0; a < 3; a++) for (size_t b = 0; b < 2; b++) for (size_t p = 0; p < 3; p++) {
        const int d = ds[a], half = d / 2, n = 4, heads = 3, pos0 = pos0s[p];
        const size_t count = (size_t)n * heads * d;
        float *x = randmat(count, -2, 2), *one = malloc(count * sizeof *x), *three = malloc(count * sizeof *x);
        float *perm = malloc(count * sizeof *x), *inter = malloc(count * sizeof *x);
        float th1[32], th[32], cs[4 * 32], sn[4 * 32];
        CHECK(attn_rope(one, th1, x, n, heads, d, bases[b], pos0) == ATTN_OK, "attn_rope d %d", d);
        CHECK(attn_rope_frequencies(th, d, bases[b], NULL) == ATTN_OK && memcmp(th, th1, (size_t)half * sizeof *th) == 0,
              "d %d base %g: attn_rope's θ are attn_rope_frequencies'", d, (double)bases[b]);
        CHECK(attn_rope_table(cs, sn, th, n, half, pos0) == ATTN_OK, "table d %d", d);
        for (int r = 0; r < n; r++) for (int i = 0; i < half; i++) {
            const double ang = (double)(pos0 + r) * th[i];
            CHECK(cs[r * half + i] == (float)cos(ang) && sn[r * half + i] == (float)sin(ang),
                  "pos %d pair %d: cos and sin rounded once from glibc's", pos0 + r, i);
        }
        CHECK(attn_rope_rotate(three, x, cs, sn, n, heads, d, 0) == ATTN_OK && memcmp(three, one, count * sizeof *x) == 0,
              "d %d base %g pos %d: attn_rope = frequencies, table, rotate (same bits)", d, (double)bases[b], pos0);
        // each head's (x[i], x[i + d/2]) moved to (x[2i], x[2i + 1]): interleaved gives the same values there
        for (size_t v = 0; v < count / (size_t)d; v++) for (int i = 0; i < half; i++) {
            perm[v * d + 2 * i] = x[v * d + i];
            perm[v * d + 2 * i + 1] = x[v * d + i + half];
        }
        CHECK(attn_rope_rotate(inter, perm, cs, sn, n, heads, d, ATTN_ROPE_INTERLEAVED) == ATTN_OK, "interleaved");
        int same = 1;
        for (size_t v = 0; v < count / (size_t)d; v++) for (int i = 0; i < half; i++)
            same &= inter[v * d + 2 * i] == one[v * d + i] && inter[v * d + 2 * i + 1] == one[v * d + i + half];
        CHECK(same, "d %d pos %d: interleaved = rotate-half after the permutation of the pairs", d, pos0);
        if (d > 2) CHECK(memcmp(inter, one, count * sizeof *x) != 0, "d %d: the two layouts differ unpermuted", d);
        memcpy(perm, x, count * sizeof *x);
        CHECK(attn_rope_rotate(perm, perm, cs, sn, n, heads, d, 0) == ATTN_OK && memcmp(perm, one, count * sizeof *x) == 0, "in place");
        free(x); free(one); free(three); free(perm); free(inter);
    }
}

// Llama 3's scaling, written again from transformers' _compute_llama3_parameters with glibc's pow
// (the core uses its own exp and log): the core's θ within one float32 step, most of them equal
static void test_rope_llama3(void) {
    const struct { int d; double base; attn_rope_scaling s; } cases[] = {
        {128, 500000.0, {8.0, 1.0, 4.0, 8192.0}},     // Llama 3.1
        {64, 500000.0, {32.0, 1.0, 4.0, 8192.0}},     // Llama 3.2 1B
        {16, 500000.0, {8.0, 1.0, 4.0, 40.0}},        // tests/golden/llama/llama3-rope-bf16
        {32, 10000.0, {4.0, 0.5, 3.0, 100.0}},
    };
    int bands[3] = {0, 0, 0}, equal = 0, total = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const int d = cases[c].d;
        const attn_rope_scaling *s = &cases[c].s;
        float th[64];
        CHECK(attn_rope_frequencies(th, d, cases[c].base, s) == ATTN_OK, "llama3 case %zu", c);
        for (int i = 0; i < d / 2; i++) {
            const double f = 1.0 / pow(cases[c].base, 2.0 * i / d), wavelen = 2 * 3.141592653589793 / f;
            const double low_wl = s->original_max_positions / s->low_freq_factor, high_wl = s->original_max_positions / s->high_freq_factor;
            double want;
            if (wavelen < high_wl) { want = f; bands[0]++; }
            else if (wavelen > low_wl) { want = f / s->factor; bands[1]++; }
            else {
                const double t = (s->original_max_positions / wavelen - s->low_freq_factor) / (s->high_freq_factor - s->low_freq_factor);
                want = (1 - t) * f / s->factor + t * f;
                bands[2]++;
            }
            const float w = (float)want;
            CHECK(th[i] == w || th[i] == nextafterf(w, 0) || th[i] == nextafterf(w, 2), "case %zu pair %d: %.9g vs %.9g", c, i, (double)th[i], (double)w);
            equal += th[i] == w;
            total++;
        }
    }
    CHECK(bands[0] > 0 && bands[1] > 0 && bands[2] >= 8, "every band: %d high, %d low, %d blended", bands[0], bands[1], bands[2]);
    CHECK(equal >= total - 2, "%d of %d equal", equal, total);
}

// the pieces' statuses (attention.h)
static void test_rope_statuses(void) {
    float th[4], cs[8], sn[8], x[16] = {0}, out[16];
    attn_rope_scaling s = {8.0, 1.0, 4.0, 8192.0};
    CHECK(attn_rope_frequencies(NULL, 8, 10000.0, NULL) == ATTN_ERR_NULL, "no theta");
    CHECK(attn_rope_frequencies(th, 7, 10000.0, NULL) == ATTN_ERR_SIZE && attn_rope_frequencies(th, 0, 10000.0, NULL) == ATTN_ERR_SIZE, "d 7, 0");
    CHECK(attn_rope_frequencies(th, 8, 0.5, NULL) == ATTN_ERR_RANGE && attn_rope_frequencies(th, 8, INFINITY, NULL) == ATTN_ERR_RANGE &&
          attn_rope_frequencies(th, 8, NAN, NULL) == ATTN_ERR_RANGE, "base 0.5, inf, NaN");
    const attn_rope_scaling bad[] = {{0.5, 1, 4, 8192}, {NAN, 1, 4, 8192}, {8, 0, 4, 8192}, {8, 2, 2, 8192}, {8, 1, INFINITY, 8192},
                                     {8, 1, 4, 0}, {8, 1, 4, NAN}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(attn_rope_frequencies(th, 8, 10000.0, &bad[i]) == ATTN_ERR_RANGE, "bad scaling %zu", i);
    CHECK(attn_rope_frequencies(th, 8, 1.0, &s) == ATTN_OK && th[0] == 1.0f && th[3] == 1.0f, "base 1: every θ 1, wavelength 2π: kept");
    s.original_max_positions = 4.0;   // 2π > 4 / low_freq_factor: a long wavelength now, divided by factor
    CHECK(attn_rope_frequencies(th, 8, 1.0, &s) == ATTN_OK && th[0] == 1.0f / 8 && th[3] == 1.0f / 8, "base 1, original 4: θ / 8");
    CHECK(attn_rope_frequencies(th, 8, 10000.0, NULL) == ATTN_OK, "θ");
    CHECK(attn_rope_table(NULL, sn, th, 2, 4, 0) == ATTN_ERR_NULL && attn_rope_table(cs, sn, NULL, 2, 4, 0) == ATTN_ERR_NULL, "table NULLs");
    CHECK(attn_rope_table(cs, sn, th, 0, 4, 0) == ATTN_ERR_SIZE && attn_rope_table(cs, sn, th, 2, 0, 0) == ATTN_ERR_SIZE, "table sizes");
    CHECK(attn_rope_table(cs, sn, th, 2, 4, -1) == ATTN_ERR_RANGE && attn_rope_table(cs, sn, th, 2, 4, ATTN_ROPE_MAX_POSITION - 1) == ATTN_ERR_RANGE,
          "table positions");
    CHECK(attn_rope_table(cs, sn, th, 1, 4, ATTN_ROPE_MAX_POSITION - 1) == ATTN_OK, "the last position");
    const float wrong[] = {1.5f, -0.25f, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        const float kept = th[2];
        th[2] = wrong[i];
        CHECK(attn_rope_table(cs, sn, th, 2, 4, 0) == ATTN_ERR_RANGE, "θ %g", (double)wrong[i]);
        th[2] = kept;
    }
    CHECK(attn_rope_table(cs, sn, th, 2, 4, 7) == ATTN_OK, "table");
    CHECK(attn_rope_rotate(NULL, x, cs, sn, 2, 1, 8, 0) == ATTN_ERR_NULL && attn_rope_rotate(out, x, NULL, sn, 2, 1, 8, 0) == ATTN_ERR_NULL, "rotate NULLs");
    CHECK(attn_rope_rotate(out, x, cs, sn, 2, 1, 8, 2) == ATTN_ERR_FLAGS, "unknown flag");
    CHECK(attn_rope_rotate(out, x, cs, sn, 2, 1, 7, 0) == ATTN_ERR_SIZE && attn_rope_rotate(out, x, cs, sn, 2, 0, 8, 0) == ATTN_ERR_SIZE, "rotate sizes");
    x[3] = NAN;
    CHECK(attn_rope_rotate(out, x, cs, sn, 2, 1, 8, ATTN_ROPE_INTERLEAVED) == ATTN_ERR_NON_FINITE, "NaN in x");
    x[3] = 0;
    cs[5] = INFINITY;
    CHECK(attn_rope_rotate(out, x, cs, sn, 2, 1, 8, 0) == ATTN_ERR_NON_FINITE, "∞ in cos");
    CHECK(attn_rope_table(cs, sn, th, 2, 4, 7) == ATTN_OK, "table again");
    for (int i = 0; i < 16; i++) x[i] = 3e38f;
    CHECK(attn_rope_rotate(out, x, cs, sn, 2, 1, 8, 0) == ATTN_ERR_OVERFLOW, "a pair past float32");
}


// The row statistics (attn_forward_stats) of both paths against attn_row_stats_naive's, a log per
// cell over the reference weights: the row path (weights kept, or m < 32) and the tiled kernel
// (no weights, m >= 32), causal or masked, with positions that are not the indices (an offset,
// or ranks with gaps), points anywhere in [-1, m), rows split in ranges.
static void test_row_stats(void) {
    for (int t = 0; t < 240; t++) {
        int n = randint(1, 40), m = randint(1, 40), d = randint(1, 24);
        if (t % 3 == 1) { n = randint(20, 150); m = randint(32, 300); d = randint(1, 70); }
        if (t % 40 == 0) { n = randint(200, 300); m = n; d = 64; }
        const unsigned flags = t % 2 ? ATTN_CAUSAL : 0;
        float *q = randmat((size_t)n * d, -2, 2), *k = randmat((size_t)m * d, -2, 2), *v = randmat((size_t)m * d, -1, 1);
        uint8_t *mask = NULL;
        if (t % 4 == 2) {
            mask = malloc((size_t)n * m);
            for (size_t i = 0; i < (size_t)n * m; i++) mask[i] = (next_u64() % 5) != 0;
        }
        float *qpos = malloc((size_t)n * sizeof *qpos), *kpos = malloc((size_t)m * sizeof *kpos);
        for (int i = 0; i < n; i++) qpos[i] = (float)(i + (t % 5)) * (t % 3 == 2 ? 1.5f : 1.0f);
        for (int j = 0; j < m; j++) kpos[j] = (float)j * (t % 3 == 2 ? 1.5f : 1.0f);
        int32_t *points = malloc((size_t)n * ATTN_ROW_POINTS * sizeof *points);
        for (int i = 0; i < n * ATTN_ROW_POINTS; i++) points[i] = randint(-1, m - 1);
        float *w = malloc((size_t)n * m * sizeof *w), *out = malloc((size_t)n * d * sizeof *out);
        float *want = malloc((size_t)n * ATTN_ROW_STATS * sizeof *want), *got = malloc((size_t)n * ATTN_ROW_STATS * sizeof *got);
        float *ws = malloc(attn_workspace_size(n, m, d, d) + 16);
        attn_row_stats ref = {want, qpos, kpos, points}, rs = {got, qpos, kpos, points};
        CHECK(attn_forward_naive(out, w, ws, q, k, v, mask, n, m, d, d, attn_default_scale(d), flags) == ATTN_OK, "naive");
        attn_row_stats_naive(&ref, w, n, m);
        for (int path = 0; path < 2; path++) {   // 0: the row path (weights), 1: without weights
            const int split = randint(1, n);
            for (int r0 = 0; r0 < n; r0 += split) {
                const int r1 = r0 + split < n ? r0 + split : n;
                attn_status st = attn_forward_stats(out, path ? NULL : w, ws, &rs, q, k, v, mask, n, m, d, d,
                                                    attn_default_scale(d), flags, r0, r1);
                CHECK(st == ATTN_OK, "t %d: status %d", t, st);
            }
            for (int i = 0; i < n * ATTN_ROW_STATS; i++) {
                const double e = want[i], a = got[i];
                CHECK(isfinite(a) && fabs(a - e) <= 2e-5 + 2e-5 * fabs(e),
                      "t %d path %d n %d m %d: stat %d of row %d: %.9g, want %.9g", t, path, n, m, i % ATTN_ROW_STATS,
                      i / ATTN_ROW_STATS, a, e);
            }
        }
        points[0] = m;   // a point past the keys
        CHECK(attn_forward_stats(out, NULL, ws, &rs, q, k, v, mask, n, m, d, d, 1.0f, flags, 0, n) == ATTN_ERR_RANGE, "point m");
        points[0] = -2;
        CHECK(attn_forward_stats(out, NULL, ws, &rs, q, k, v, mask, n, m, d, d, 1.0f, flags, 0, n) == ATTN_ERR_RANGE, "point -2");
        points[0] = -1;
        qpos[0] = NAN;
        CHECK(attn_forward_stats(out, NULL, ws, &rs, q, k, v, mask, n, m, d, d, 1.0f, flags, 0, n) == ATTN_ERR_NON_FINITE, "qpos NaN");
        rs.kpos = NULL;
        CHECK(attn_forward_stats(out, NULL, ws, &rs, q, k, v, mask, n, m, d, d, 1.0f, flags, 0, n) == ATTN_ERR_NULL, "kpos NULL");
        free(q); free(k); free(v); free(mask); free(qpos); free(kpos); free(points); free(w); free(out); free(want);
        free(got); free(ws);
    }
}

int main(void) {
    test_fast_matches_naive();
    test_row_ranges();
    test_huge_logits();
    test_large_values_no_weights();
    test_huge_scale();
    test_fully_masked_row();
    test_bad_inputs();
    test_self_forward();
    test_self_forward_statuses();
    test_long_sums();
    test_rope();
    test_rope_pieces();
    test_rope_llama3();
    test_rope_statuses();
    test_row_stats();
    printf("# C core (ASan+UBSan): %d checks\n%d passed, %d failed\n", checks, checks - failures, failures);
    return failures ? 1 : 0;
}
