// test_mha.c - native tests of multi-head attention, c_src/mha.c (run under ASan + UBSan by
// `make -C c_src test`).
//
// PyTorch agreement is checked by tests/native-mha.test.js through tests/c/harness_mha.c with
// tests/golden/mha.json; this file checks attn_mha_forward against a straightforward float64
// reference on random sizes (every option: kv, biases, mask, causal, grouped-query, with and
// without weights and concat), one head against attn_self_forward, and every bad input's status.
// Buffers are malloc'ed at their exact sizes, so ASan catches any write past them.
#include "attention.h"

#define TEST_SEED 0x2545F4914F6CDD1Dull
#include "check.h"

// y (rows, cols) = a (rows, c) · b (c, cols) + bias, in double from float32 inputs
static void ref_project(double *y, const double *a, const float *b, const float *bias, int rows, int c, int cols) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double s = bias ? bias[j] : 0.0;
            for (int t = 0; t < c; t++) s += a[(size_t)i * c + t] * b[(size_t)t * cols + j];
            y[(size_t)i * cols + j] = s;
        }
}

// Multi-head attention written out plainly in float64: out (n, dm), concat (n, dm), weights (h, n, m)
static void reference(double *out, double *concat, double *weights,
                      const float *x, const float *kv, const float *wq, const float *wk, const float *wv,
                      const float *wo, const float *bq, const float *bk, const float *bv, const float *bo,
                      const uint8_t *mask, int n, int m, int dm, int heads, int kv_heads, double scale,
                      unsigned flags) {
    int dh = dm / heads, dkv = dh * kv_heads, group = heads / kv_heads;
    double *xd = malloc((size_t)n * dm * 8), *kvd = malloc((size_t)m * dm * 8);
    double *Q = malloc((size_t)n * dm * 8), *K = malloc((size_t)m * dkv * 8), *V = malloc((size_t)m * dkv * 8);
    for (size_t i = 0; i < (size_t)n * dm; i++) xd[i] = x[i];
    for (size_t i = 0; i < (size_t)m * dm; i++) kvd[i] = (kv ? kv : x)[i];
    ref_project(Q, xd, wq, bq, n, dm, dm);
    ref_project(K, kvd, wk, bk, m, dm, dkv);
    ref_project(V, kvd, wv, bv, m, dm, dkv);
    for (int h = 0; h < heads; h++) {
        int g = h / group;
        double *w = weights + (size_t)h * n * m;
        for (int i = 0; i < n; i++) {
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j < m; j++) {
                int ok = !((flags & ATTN_CAUSAL) && j > i) && (!mask || mask[(size_t)i * m + j]);
                double s = 0;
                for (int c = 0; c < dh; c++) s += Q[(size_t)i * dm + h * dh + c] * K[(size_t)j * dkv + g * dh + c];
                w[(size_t)i * m + j] = ok ? s * scale : -INFINITY;
                if (ok && s * scale > mx) mx = s * scale;
            }
            for (int j = 0; j < m; j++) {
                double e = mx == -INFINITY ? 0 : exp(w[(size_t)i * m + j] - mx);
                w[(size_t)i * m + j] = e;
                sum += e;
            }
            for (int c = 0; c < dh; c++) concat[(size_t)i * dm + h * dh + c] = 0;
            for (int j = 0; j < m; j++) {
                if (sum > 0) w[(size_t)i * m + j] /= sum;
                for (int c = 0; c < dh; c++)
                    concat[(size_t)i * dm + h * dh + c] += w[(size_t)i * m + j] * V[(size_t)j * dkv + g * dh + c];
            }
        }
    }
    ref_project(out, concat, wo, bo, n, dm, dm);
    free(xd); free(kvd); free(Q); free(K); free(V);
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

static void test_against_reference(void) {
    for (int t = 0; t < 300; t++) {
        int heads = randint(1, 6), dh = randint(1, 9), dm = heads * dh;
        int divisors[6], nd = 0;
        for (int g = 1; g <= heads; g++) if (heads % g == 0) divisors[nd++] = g;
        int kv_heads = (t % 3 == 0) ? divisors[randint(0, nd - 1)] : heads;
        int n = randint(1, 20), cross = t % 4 == 1, m = cross ? randint(1, 40) : n;
        if (t % 25 == 0) { heads = 2; dh = 64; dm = 128; kv_heads = t % 50 ? 2 : 1; n = randint(30, 50); m = cross ? randint(32, 60) : n; }
        int has_bias = t % 5 != 2, with_weights = t % 2 == 0, with_concat = t % 7 != 3;
        unsigned flags = (t % 3 == 1) ? ATTN_CAUSAL : 0;
        int dkv = dh * kv_heads;
        float *x = randmat((size_t)n * dm, -2, 2), *kv = cross ? randmat((size_t)m * dm, -2, 2) : NULL;
        // weights like nn.Linear's init, U(±1/√d_model): logits of a realistic size (larger
        // ones are ill-conditioned: float32 rounding of Q, K then moves the softmax visibly)
        float r = 1.0f / sqrtf((float)dm);
        float *wq = randmat((size_t)dm * dm, -r, r), *wk = randmat((size_t)dm * dkv, -r, r);
        float *wv = randmat((size_t)dm * dkv, -r, r), *wo = randmat((size_t)dm * dm, -r, r);
        float *bq = has_bias ? randmat((size_t)dm, -1, 1) : NULL, *bk = has_bias ? randmat((size_t)dkv, -1, 1) : NULL;
        float *bv = has_bias ? randmat((size_t)dkv, -1, 1) : NULL, *bo = has_bias ? randmat((size_t)dm, -1, 1) : NULL;
        uint8_t *mask = NULL;
        if (t % 4 == 2) {
            mask = malloc((size_t)n * m);
            for (size_t i = 0; i < (size_t)n * m; i++) mask[i] = (next_u64() % 3) != 0;
            if (n > 2) memset(mask + (size_t)(n / 2) * m, 0, (size_t)m);  // one fully masked row
        }
        float scale = (t % 6 == 5) ? uniform(0.0f, 1.5f) : attn_default_scale(dh);
        size_t wsb = attn_mha_workspace_size(n, m, dm, heads, kv_heads);
        CHECK(wsb > 0, "case %d: workspace size 0", t);
        float *ws = malloc(wsb), *out = malloc((size_t)n * dm * 4);
        float *concat = with_concat ? malloc((size_t)n * dm * 4) : NULL;
        float *w = with_weights ? malloc((size_t)heads * n * m * 4) : NULL;
        attn_status s = attn_mha_forward(out, concat, w, ws, x, kv, wq, wk, wv, wo, bq, bk, bv, bo,
                                         mask, n, m, dm, heads, kv_heads, scale, flags);
        CHECK(s == ATTN_OK, "case %d: status %d", t, s);
        double *eo = malloc((size_t)n * dm * 8), *ec = malloc((size_t)n * dm * 8), *ew = malloc((size_t)heads * n * m * 8);
        reference(eo, ec, ew, x, kv, wq, wk, wv, wo, bq, bk, bv, bo, mask, n, m, dm, heads, kv_heads, scale, flags);
        double d;
        long f = compare64(out, eo, (size_t)n * dm, &d);
        CHECK(f < 0, "case %d (n=%d m=%d dm=%d heads=%d kv=%d): output differs at %ld, max diff %g", t, n, m, dm, heads, kv_heads, f, d);
        if (concat) {
            f = compare64(concat, ec, (size_t)n * dm, &d);
            CHECK(f < 0, "case %d: concat differs at %ld, max diff %g", t, f, d);
        }
        if (w) {
            f = compare64(w, ew, (size_t)heads * n * m, &d);
            CHECK(f < 0, "case %d: weights differ at %ld, max diff %g", t, f, d);
            // invariants: masked weights exactly 0, rows sum to 1 or are all 0
            for (int h = 0; h < heads; h++)
                for (int i = 0; i < n; i++) {
                    double sum = 0; int any = 0;
                    for (int j = 0; j < m; j++) {
                        int ok = !((flags & ATTN_CAUSAL) && j > i) && (!mask || mask[(size_t)i * m + j]);
                        float wij = w[((size_t)h * n + i) * m + j];
                        any |= ok;
                        if (!ok) CHECK(wij == 0.0f, "case %d: masked weight %d,%d,%d = %g", t, h, i, j, wij);
                        sum += wij;
                    }
                    if (any) CHECK(fabs(sum - 1) <= 1e-5, "case %d: head %d row %d sums to %g", t, h, i, sum);
                    else CHECK(sum == 0, "case %d: fully masked row sums to %g", t, sum);
                }
        }
        // a query with no allowed key: head outputs 0, so out is exactly bo
        if (mask && n > 2) {
            int i = n / 2;
            for (int c = 0; c < dm; c++)
                CHECK(out[(size_t)i * dm + c] == (bo ? bo[c] : 0.0f), "case %d: fully masked row %d: out[%d] = %g", t, i, c, out[(size_t)i * dm + c]);
        }
        free(x); free(kv); free(wq); free(wk); free(wv); free(wo); free(bq); free(bk); free(bv); free(bo);
        free(mask); free(ws); free(out); free(concat); free(w); free(eo); free(ec); free(ew);
    }
}

static void test_options_agree(void) {
    // concat NULL / weights NULL / kv = x give the same bits where the paths are the same
    for (int t = 0; t < 30; t++) {
        int heads = randint(1, 4), dh = randint(1, 8), dm = heads * dh, n = randint(1, 25);
        float *x = randmat((size_t)n * dm, -1, 1), *wq = randmat((size_t)dm * dm, -1, 1), *wk = randmat((size_t)dm * dm, -1, 1);
        float *wv = randmat((size_t)dm * dm, -1, 1), *wo = randmat((size_t)dm * dm, -1, 1), *b = randmat((size_t)dm, -1, 1);
        float *ws = malloc(attn_mha_workspace_size(n, n, dm, heads, heads));
        float *o1 = malloc((size_t)n * dm * 4), *o2 = malloc((size_t)n * dm * 4), *o3 = malloc((size_t)n * dm * 4);
        float *c1 = malloc((size_t)n * dm * 4), *w1 = malloc((size_t)heads * n * n * 4), *w3 = malloc((size_t)heads * n * n * 4);
        float scale = attn_default_scale(dh);
        unsigned flags = t % 2 ? ATTN_CAUSAL : 0;
        CHECK(attn_mha_forward(o1, c1, w1, ws, x, NULL, wq, wk, wv, wo, b, b, b, b, NULL, n, n, dm, heads, heads, scale, flags) == ATTN_OK, "whole");
        CHECK(attn_mha_forward(o2, NULL, w1, ws, x, NULL, wq, wk, wv, wo, b, b, b, b, NULL, n, n, dm, heads, heads, scale, flags) == ATTN_OK, "concat NULL");
        CHECK(attn_mha_forward(o3, NULL, w3, ws, x, x, wq, wk, wv, wo, b, b, b, b, NULL, n, n, dm, heads, heads, scale, flags) == ATTN_OK, "kv = x");
        CHECK(memcmp(o1, o2, (size_t)n * dm * 4) == 0, "case %d: concat NULL changes out", t);
        CHECK(memcmp(o1, o3, (size_t)n * dm * 4) == 0 && memcmp(w1, w3, (size_t)heads * n * n * 4) == 0, "case %d: kv = x differs from kv NULL", t);
        if (n < 32) {  // below the tiled kernel's threshold, weights NULL runs the same row code
            CHECK(attn_mha_forward(o2, NULL, NULL, ws, x, NULL, wq, wk, wv, wo, b, b, b, b, NULL, n, n, dm, heads, heads, scale, flags) == ATTN_OK, "weights NULL");
            CHECK(memcmp(o1, o2, (size_t)n * dm * 4) == 0, "case %d: weights NULL changes out", t);
        }
        free(x); free(wq); free(wk); free(wv); free(wo); free(b); free(ws); free(o1); free(o2); free(o3); free(c1); free(w1); free(w3);
    }
}

static void test_one_head_is_self_attention(void) {
    // heads = 1, no bias: concat is attn_self_forward's output and weights are its weights, bit
    // for bit; out is that times W_O through attn_matmul
    for (int t = 0; t < 30; t++) {
        int n = randint(1, 17), dm = randint(1, 16);
        unsigned flags = t % 2 ? ATTN_CAUSAL : 0;
        float *x = randmat((size_t)n * dm, -2, 2), *wq = randmat((size_t)dm * dm, -1, 1), *wk = randmat((size_t)dm * dm, -1, 1);
        float *wv = randmat((size_t)dm * dm, -1, 1), *wo = randmat((size_t)dm * dm, -1, 1);
        float *q = malloc((size_t)n * dm * 4), *k = malloc((size_t)n * dm * 4), *v = malloc((size_t)n * dm * 4);
        float *sc = malloc((size_t)n * n * 4), *sd = malloc((size_t)n * n * 4), *w = malloc((size_t)n * n * 4);
        float *o = malloc((size_t)n * dm * 4), *po = malloc((size_t)n * dm * 4);
        float *out = malloc((size_t)n * dm * 4), *cat = malloc((size_t)n * dm * 4), *w2 = malloc((size_t)n * n * 4);
        float *ws = malloc(attn_mha_workspace_size(n, n, dm, 1, 1));
        float scale = attn_default_scale(dm);
        CHECK(attn_self_forward(q, k, v, sc, sd, w, o, x, wq, wk, wv, NULL, n, dm, dm, dm, scale, flags) == ATTN_OK, "self");
        CHECK(attn_matmul(po, o, wo, n, dm, dm) == ATTN_OK, "matmul");
        CHECK(attn_mha_forward(out, cat, w2, ws, x, NULL, wq, wk, wv, wo, NULL, NULL, NULL, NULL, NULL, n, n, dm, 1, 1, scale, flags) == ATTN_OK, "mha");
        CHECK(memcmp(w, w2, (size_t)n * n * 4) == 0, "case %d: weights differ from attn_self_forward", t);
        CHECK(memcmp(o, cat, (size_t)n * dm * 4) == 0, "case %d: concat differs from attn_self_forward's output", t);
        CHECK(memcmp(po, out, (size_t)n * dm * 4) == 0, "case %d: out differs from attn_self_forward·W_O", t);
        free(x); free(wq); free(wk); free(wv); free(wo); free(q); free(k); free(v); free(sc); free(sd); free(w);
        free(o); free(po); free(out); free(cat); free(w2); free(ws);
    }
}

static void test_bad_inputs(void) {
    enum { N = 3, D = 4 };
    float x[N * D], w[D * D], b[D], out[N * D], cat[N * D], wt[2 * N * N];
    for (int i = 0; i < N * D; i++) x[i] = uniform(-1, 1);
    for (int i = 0; i < D * D; i++) w[i] = uniform(-1, 1);
    for (int i = 0; i < D; i++) b[i] = uniform(-1, 1);
    float *ws = malloc(attn_mha_workspace_size(N, N, D, 2, 2));
    float s = attn_default_scale(2);
#define MHA(out_, ws_, x_, kv_, wq_, bq_, mask_, n_, m_, dm_, h_, g_, scale_, flags_) \
    attn_mha_forward(out_, cat, wt, ws_, x_, kv_, wq_, w, w, w, bq_, b, b, b, mask_, n_, m_, dm_, h_, g_, scale_, flags_)
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_OK, "good call");
    CHECK(MHA(NULL, ws, x, NULL, w, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_NULL, "NULL out");
    CHECK(MHA(out, NULL, x, NULL, w, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_NULL, "NULL workspace");
    CHECK(MHA(out, ws, NULL, NULL, w, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_NULL, "NULL x");
    CHECK(MHA(out, ws, x, NULL, NULL, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_NULL, "NULL wq");
    CHECK(attn_mha_forward(out, cat, wt, ws, x, NULL, w, w, w, NULL, b, b, b, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_NULL, "NULL wo");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, 0, N, D, 2, 2, s, 0) == ATTN_ERR_SIZE, "n = 0");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, 0, 2, 2, s, 0) == ATTN_ERR_SIZE, "d_model = 0");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, 0, 1, s, 0) == ATTN_ERR_SIZE, "heads = 0");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, -2, -2, s, 0) == ATTN_ERR_SIZE, "heads < 0");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, 3, 3, s, 0) == ATTN_ERR_SIZE, "heads does not divide d_model");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, 2, 0, s, 0) == ATTN_ERR_SIZE, "kv_heads = 0");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, 2, 4, s, 0) == ATTN_ERR_SIZE, "kv_heads does not divide heads");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, 2, D, 2, 2, s, 0) == ATTN_ERR_SIZE, "m != n without kv");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, 2, 2, NAN, 0) == ATTN_ERR_SCALE, "NaN scale");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, 2, 2, -1.0f, 0) == ATTN_ERR_SCALE, "negative scale");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, 2, 2, s, 4u) == ATTN_ERR_FLAGS, "flags");
    float xn[N * D], bn[D], big[D * D], xb[N * D];
    memcpy(xn, x, sizeof xn); xn[5] = NAN;
    memcpy(bn, b, sizeof bn); bn[1] = INFINITY;
    for (int i = 0; i < D * D; i++) big[i] = 1e30f;
    for (int i = 0; i < N * D; i++) xb[i] = 1e30f;
    CHECK(MHA(out, ws, xn, NULL, w, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_NON_FINITE, "NaN in x");
    CHECK(MHA(out, ws, x, xn, w, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_NON_FINITE, "NaN in kv");
    CHECK(MHA(out, ws, x, NULL, w, bn, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_NON_FINITE, "Inf in bq");
    CHECK(attn_mha_forward(out, cat, wt, ws, x, NULL, w, w, w, w, b, b, b, bn, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_NON_FINITE, "Inf in bo");
    CHECK(MHA(out, ws, xb, NULL, big, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_OVERFLOW, "overflowing projection");
    float bb[D] = {3e38f, 3e38f, 3e38f, 3e38f}, ones[D * D];
    for (int i = 0; i < D * D; i++) ones[i] = 1.0f;
    CHECK(MHA(out, ws, xb, NULL, ones, bb, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_OVERFLOW, "overflowing bias");
    float wbig[D * D], xo[N * D];
    for (int i = 0; i < D * D; i++) wbig[i] = 1e19f;   // Q, K entries 4e19: finite, but Q·Kᵀ is not
    for (int i = 0; i < N * D; i++) xo[i] = 1.0f;
    CHECK(attn_mha_forward(out, cat, wt, ws, xo, NULL, wbig, wbig, w, w, NULL, NULL, NULL, NULL, NULL, N, N, D, 2, 2, s, 0) == ATTN_ERR_OVERFLOW, "overflowing scores");
    CHECK(attn_mha_workspace_size(N, N, D, 3, 3) == 0, "workspace size: heads does not divide");
    CHECK(attn_mha_workspace_size(N, N, D, 2, 4) == 0, "workspace size: kv_heads does not divide");
    CHECK(attn_mha_workspace_size(0, N, D, 2, 2) == 0, "workspace size: n = 0");
    CHECK(attn_mha_workspace_size(0x7fffffff, 0x7fffffff, 0x7fffffff, 1, 1) == 0, "workspace size: too large");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, 0x7fffffff, 0x7fffffff, 0x7fffffff, 1, 1, s, 0) == ATTN_ERR_TOO_LARGE, "too large");
    // the instance of all this: a good call still gives the same bits
    float out2[N * D];
    CHECK(MHA(out2, ws, x, NULL, w, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_OK, "good call again");
    CHECK(MHA(out, ws, x, NULL, w, b, NULL, N, N, D, 2, 2, s, 0) == ATTN_OK && memcmp(out, out2, sizeof out) == 0, "repeatable");
#undef MHA
    free(ws);
}

int main(void) {
    test_against_reference();
    test_options_agree();
    test_one_head_is_self_attention();
    test_bad_inputs();
    printf("# multi-head attention (ASan+UBSan): %d checks\n%d passed, %d failed\n", checks, checks - failures, failures);
    return failures ? 1 : 0;
}
