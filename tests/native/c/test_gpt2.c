// test_gpt2.c - native tests of GPT-2's forward pass, c_src/gpt2.c (run under ASan + UBSan by
// `make -C c_src test`).
//
//   - the linear kernels: packed fast path against naive on odd shapes (the (k, p) one gives the
//     same bits); packing moves every float once; gelu_new against its formula in float64;
//   - a case small enough to compute by hand (L = 1, H = 1, C = 2), in closed form;
//   - random small models against a plain float64 GPT-2 written here (no KV cache, no code of
//     gpt2.c), logits and every layer's and head's attention;
//   - the KV cache: prefill n - 1 then one step, token by token from 0, and chunks of T > 1 at
//     pos > 0 give the full pass's logits and attention rows;
//   - the parameter layout (GPT-2 small has 124,439,808 parameters) and every bad input's status.
// Buffers are malloc'ed at their exact sizes, so ASan catches any write past them.
#include "gpt2.h"
#include "parallel.h"  // the forward passes again with their work in 3 parts (run one after the other here)

#define TEST_SEED 0x9E3779B97F4A7C15ull
#include "check.h"

static int min_int(int a, int b) { return a < b ? a : b; }

static long compare64(const float *a, const double *e, size_t count, double *maxdiff) {
    long first = -1;
    *maxdiff = 0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs((double)a[i] - e[i]);
        if (!(d <= *maxdiff)) *maxdiff = d;
        if (first < 0 && !(d <= ATOL + RTOL * fabs(e[i]))) first = (long)i;
    }
    return first;
}

// the same against float32 expected values (widened exactly)
static long compare32(const float *a, const float *e, size_t count, double *maxdiff) {
    double *wide = malloc((count ? count : 1) * sizeof *wide);
    for (size_t i = 0; i < count; i++) wide[i] = e[i];
    long first = compare64(a, wide, count, maxdiff);
    free(wide);
    return first;
}

// ----------------------------------------------------------------------------
// a model: its config and one parameter block

typedef struct {
    attn_gpt2_config cfg;
    size_t off[ATTN_GPT2_N_PARAMS + 1];
    float *p;
} model;

static float *kind(model *md, attn_gpt2_param k) { return md->p + md->off[k]; }

static model new_model(int L, int H, int C, int V, int P) {
    model md = {.cfg = {L, H, C, V, P, 1e-5f}};
    attn_status st = attn_gpt2_param_layout(md.off, &md.cfg);
    CHECK(st == ATTN_OK, "layout: %s", attn_status_string(st));
    md.p = calloc(md.off[ATTN_GPT2_N_PARAMS], sizeof(float));
    return md;
}

// weights like nn.Linear's init, U(±1/√fan_in) (activations of a realistic size), biases
// U(±0.1), LayerNorm gains near 1, embeddings U(±1)
static model random_model(int L, int H, int C, int V, int P) {
    model md = new_model(L, H, C, V, P);
    for (int k = 0; k < ATTN_GPT2_N_PARAMS; k++) {
        float r = 0.1f, lo = 0.0f;
        if (k == ATTN_GPT2_WTE || k == ATTN_GPT2_WPE) r = 1.0f;
        if (k == ATTN_GPT2_QKV_W || k == ATTN_GPT2_ATTPROJ_W || k == ATTN_GPT2_FC_W) r = 1.0f / sqrtf((float)C);
        if (k == ATTN_GPT2_FCPROJ_W) r = 1.0f / sqrtf(4.0f * (float)C);
        if (k == ATTN_GPT2_LN1_W || k == ATTN_GPT2_LN2_W || k == ATTN_GPT2_LNF_W) { r = 0.2f; lo = 1.0f; }
        for (size_t i = md.off[k]; i < md.off[k + 1]; i++) md.p[i] = lo + uniform(-r, r);
    }
    return md;
}

typedef struct {
    float *cache, *logits, *att;
    int S;
} run_state;

static run_state new_state(const model *md, int S, int T_max) {
    run_state rs = {.S = S};
    rs.cache = malloc(attn_gpt2_cache_size(&md->cfg, S));
    rs.logits = malloc((size_t)T_max * md->cfg.vocab_size * sizeof(float));
    rs.att = malloc((size_t)md->cfg.n_layer * md->cfg.n_head * T_max * S * sizeof(float));
    return rs;
}

static void free_state(run_state *rs) { free(rs->cache); free(rs->logits); free(rs->att); }

// a copy of the model's block packed for the forward pass (md->p stays as the checkpoint has
// it: the float64 reference reads it)
static float *packed_params(const model *md) {
    const size_t count = md->off[ATTN_GPT2_N_PARAMS];
    float *q = malloc(count * sizeof *q), *scratch = malloc(attn_gpt2_pack_scratch_size(&md->cfg));
    memcpy(q, md->p, count * sizeof *q);
    attn_status st = attn_gpt2_pack(q, scratch, &md->cfg);
    CHECK(st == ATTN_OK, "pack: %s", attn_status_string(st));
    free(scratch);
    return q;
}

// one call with a workspace of exactly the size asked for, on the packed parameters
static attn_status run(run_state *rs, const model *md, const int32_t *ids, int T, int pos, int with_att, unsigned flags) {
    size_t bytes = attn_gpt2_workspace_size(&md->cfg, T, pos + T);
    float *ws = malloc(bytes ? bytes : 1), *q = packed_params(md);
    attn_status st = attn_gpt2_forward(rs->logits, with_att ? rs->att : NULL, NULL, NULL, rs->cache, ws, &md->cfg, q,
                                       ids, T, pos, rs->S, flags);
    free(ws); free(q);
    return st;
}

// ----------------------------------------------------------------------------
// GPT-2 in float64, written out plainly from the model's description (gpt2.h), no cache

static void ref_layernorm(double *x, const float *w, const float *b, int T, int C, double eps) {
    for (int i = 0; i < T; i++) {
        double *r = x + (size_t)i * C, mean = 0, var = 0;
        for (int c = 0; c < C; c++) mean += r[c] / C;
        for (int c = 0; c < C; c++) var += (r[c] - mean) * (r[c] - mean) / C;
        for (int c = 0; c < C; c++) r[c] = (r[c] - mean) / sqrt(var + eps) * w[c] + b[c];
    }
}

static void ref_linear(double *y, const double *x, const float *w, const float *b, int T, int k, int p) {
    for (int i = 0; i < T; i++)
        for (int j = 0; j < p; j++) {
            double s = b[j];
            for (int t = 0; t < k; t++) s += x[(size_t)i * k + t] * w[(size_t)t * p + j];
            y[(size_t)i * p + j] = s;
        }
}

// logits (T, V), att (L, H, T, T)
static void reference(double *logits, double *att, model *md, const int32_t *ids, int T) {
    const int L = md->cfg.n_layer, H = md->cfg.n_head, C = md->cfg.n_embd, V = md->cfg.vocab_size, d = C / H;
    const double eps = md->cfg.eps;
    double *h = calloc((size_t)T * C, 8), *a = malloc((size_t)T * C * 8), *qkv = malloc((size_t)T * 3 * C * 8);
    double *y = malloc((size_t)T * C * 8), *f = malloc((size_t)T * 4 * C * 8), *s = malloc((size_t)T * 8);
    for (int i = 0; i < T; i++)
        for (int c = 0; c < C; c++)
            h[(size_t)i * C + c] = (double)kind(md, ATTN_GPT2_WTE)[(size_t)ids[i] * C + c] + kind(md, ATTN_GPT2_WPE)[(size_t)i * C + c];
    for (int l = 0; l < L; l++) {
        const size_t v = (size_t)l * C, m2 = (size_t)l * C * C;
        memcpy(a, h, (size_t)T * C * 8);
        ref_layernorm(a, kind(md, ATTN_GPT2_LN1_W) + v, kind(md, ATTN_GPT2_LN1_B) + v, T, C, eps);
        ref_linear(qkv, a, kind(md, ATTN_GPT2_QKV_W) + 3 * m2, kind(md, ATTN_GPT2_QKV_B) + 3 * v, T, C, 3 * C);
        for (int hd = 0; hd < H; hd++) {
            for (int i = 0; i < T; i++) {
                double *w = att + (((size_t)l * H + hd) * T + i) * T, mx = -INFINITY, sum = 0;
                for (int j = 0; j < T; j++) {
                    double dot = 0;
                    for (int c = 0; c < d; c++) dot += qkv[(size_t)i * 3 * C + hd * d + c] * qkv[(size_t)j * 3 * C + C + hd * d + c];
                    s[j] = j <= i ? dot / sqrt((double)d) : -INFINITY;
                    if (s[j] > mx) mx = s[j];
                }
                for (int j = 0; j < T; j++) sum += (w[j] = exp(s[j] - mx));
                for (int c = 0; c < d; c++) y[(size_t)i * C + hd * d + c] = 0;
                for (int j = 0; j < T; j++) {
                    w[j] /= sum;
                    for (int c = 0; c < d; c++) y[(size_t)i * C + hd * d + c] += w[j] * qkv[(size_t)j * 3 * C + 2 * C + hd * d + c];
                }
            }
        }
        ref_linear(a, y, kind(md, ATTN_GPT2_ATTPROJ_W) + m2, kind(md, ATTN_GPT2_ATTPROJ_B) + v, T, C, C);
        for (size_t i = 0; i < (size_t)T * C; i++) h[i] += a[i];
        memcpy(a, h, (size_t)T * C * 8);
        ref_layernorm(a, kind(md, ATTN_GPT2_LN2_W) + v, kind(md, ATTN_GPT2_LN2_B) + v, T, C, eps);
        ref_linear(f, a, kind(md, ATTN_GPT2_FC_W) + 4 * m2, kind(md, ATTN_GPT2_FC_B) + 4 * v, T, C, 4 * C);
        for (size_t i = 0; i < (size_t)T * 4 * C; i++)
            f[i] = 0.5 * f[i] * (1 + tanh(0.79788456080286536 * (f[i] + 0.044715 * f[i] * f[i] * f[i])));
        ref_linear(a, f, kind(md, ATTN_GPT2_FCPROJ_W) + 4 * m2, kind(md, ATTN_GPT2_FCPROJ_B) + v, T, 4 * C, C);
        for (size_t i = 0; i < (size_t)T * C; i++) h[i] += a[i];
    }
    ref_layernorm(h, kind(md, ATTN_GPT2_LNF_W), kind(md, ATTN_GPT2_LNF_B), T, C, eps);
    for (int i = 0; i < T; i++)
        for (int t = 0; t < V; t++) {
            double dot = 0;
            for (int c = 0; c < C; c++) dot += h[(size_t)i * C + c] * kind(md, ATTN_GPT2_WTE)[(size_t)t * C + c];
            logits[(size_t)i * V + t] = dot;
        }
    free(h); free(a); free(qkv); free(y); free(f); free(s);
}

// ----------------------------------------------------------------------------
// the linear kernels

static void test_linear_kernels(void) {
    for (int t = 0; t < 120; t++) {
        int n = randint(1, 13), k = randint(1, 300), p = randint(1, 600);
        if (t % 10 == 0) { k = 128 * randint(1, 2) + (t % 20 == 0); p = 256 + randint(0, 17); }
        float *a = randmat((size_t)n * k, -1, 1), *w = randmat((size_t)k * p, -1, 1), *packed = malloc((size_t)k * p * sizeof(float));
        float *b = t % 3 ? randmat((size_t)p, -1, 1) : NULL, *wt = randmat((size_t)p * k, -1, 1);
        float *fast = malloc((size_t)n * p * sizeof(float)), *naive = malloc((size_t)n * p * sizeof(float));
        attn_status s0 = attn_pack_weight(packed, w, k, p);
        attn_status s1 = attn_linear_packed(fast, a, packed, b, n, k, p), s2 = attn_linear_naive(naive, a, w, b, n, k, p);
        CHECK(s0 == ATTN_OK && s1 == ATTN_OK && s2 == ATTN_OK, "linear (%d, %d, %d): %d %d %d", n, k, p, s0, s1, s2);
        // the same order of operations: the same bits
        CHECK(memcmp(fast, naive, (size_t)n * p * sizeof(float)) == 0, "linear (%d, %d, %d): fast != naive", n, k, p);
        s1 = attn_linear_t(fast, a, wt, n, k, p);
        s2 = attn_linear_t_naive(naive, a, wt, n, k, p);
        double md;
        long bad = compare32(fast, naive, (size_t)n * p, &md);
        CHECK(s1 == ATTN_OK && s2 == ATTN_OK && bad < 0, "linear_t (%d, %d, %d): first bad %ld, max diff %g", n, k, p, bad, md);
        free(a); free(w); free(packed); free(b); free(wt); free(fast); free(naive);
    }
    // packing moves every float exactly once: w[i] = i, and each i is found once in the packed copy
    for (int t = 0; t < 20; t++) {
        const int k = t ? randint(1, 400) : 3072, p = t ? randint(1, 700) : 768;
        const size_t count = (size_t)k * p;
        float *w = malloc(count * sizeof *w), *packed = malloc(count * sizeof *packed);
        unsigned char *seen = calloc(count, 1);
        for (size_t i = 0; i < count; i++) w[i] = (float)i;  // exact below 2^24
        CHECK(attn_pack_weight(packed, w, k, p) == ATTN_OK, "pack (%d, %d)", k, p);
        size_t twice = 0;
        for (size_t i = 0; i < count; i++) twice += seen[(size_t)packed[i]]++ != 0;
        CHECK(twice == 0, "pack (%d, %d): %zu floats twice", k, p, twice);
        free(w); free(packed); free(seen);
    }
    // statuses
    float x[6] = {1, 2, 3, 4, 5, 6}, o[6];
    CHECK(attn_pack_weight(NULL, x, 2, 3) == ATTN_ERR_NULL && attn_pack_weight(o, NULL, 2, 3) == ATTN_ERR_NULL, "pack NULL");
    CHECK(attn_pack_weight(o, x, 0, 3) == ATTN_ERR_SIZE && attn_pack_weight(o, x, 2, -1) == ATTN_ERR_SIZE, "pack sizes");
    CHECK(attn_linear_packed(NULL, x, x, NULL, 2, 3, 2) == ATTN_ERR_NULL, "linear NULL out");
    CHECK(attn_linear_packed(o, x, NULL, NULL, 2, 3, 2) == ATTN_ERR_NULL, "linear NULL w");
    CHECK(attn_linear_t(o, x, x, 0, 3, 2) == ATTN_ERR_SIZE, "linear_t n = 0");
    CHECK(attn_linear_packed(o, x, x, NULL, 2, 3, -1) == ATTN_ERR_SIZE, "linear p < 0");
    x[4] = NAN;
    CHECK(attn_linear_packed(o, x, x, NULL, 2, 3, 2) == ATTN_ERR_NON_FINITE, "linear NaN");
    CHECK(attn_linear_t_naive(o, x, x, 2, 3, 2) == ATTN_ERR_NON_FINITE, "linear_t_naive NaN");
    float big[4] = {3e38f, 3e38f, 3e38f, 3e38f};
    CHECK(attn_linear_packed(o, big, big, NULL, 2, 2, 2) == ATTN_ERR_OVERFLOW, "linear overflow");
    CHECK(attn_linear_naive(o, big, big, NULL, 2, 2, 2) == ATTN_ERR_OVERFLOW, "linear_naive overflow");
}

// gelu_new against 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) in float64, on a grid over
// [-12, 12], random points, tiny and huge values: |error| <= 4 ulp of |x| (float32's own
// error in u = √(2/π)(x + 0.044715x³) alone moves σ(2u) by up to about 1e-7), plus the
// special values
static void test_gelu(void) {
    enum { N = 48000 + 4000 + 8 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    size_t n = 0;
    for (int i = 0; i < 48000; i++) x[n++] = -12.0f + (float)i * 0.0005f;
    for (int i = 0; i < 4000; i++) x[n++] = uniform(-1, 1) * powf(10.0f, uniform(-30, 12));
    const float special[8] = {0.0f, -0.0f, 1e-45f, -1e-45f, 3e38f, -3e38f, 7e12f, -7e12f};
    for (int i = 0; i < 8; i++) x[n++] = special[i];
    memcpy(y, x, n * sizeof *x);
    CHECK(attn_gelu_new(y, n - 1) == ATTN_OK, "gelu");  // n - 1: a tail of count mod 4 = 3
    CHECK(attn_gelu_new(y + n - 1, 1) == ATTN_OK, "gelu of one value");
    double worst = 0;
    long bad = -1;
    for (size_t i = 0; i < n; i++) {
        const double v = x[i], want = 0.5 * v * (1 + tanh(0.79788456080286536 * (v + 0.044715 * v * v * v)));
        const double err = fabs((double)y[i] - want), bound = 4 * 0x1p-24 * fabs(v) + 0x1p-149;  // + float's least subnormal
        if (err / bound > worst) worst = err / bound;
        if (bad < 0 && !(err <= bound)) bad = (long)i;
    }
    CHECK(bad < 0, "gelu(%g) = %.9g, want %.9g", bad < 0 ? 0 : x[bad], bad < 0 ? 0 : y[bad],
          bad < 0 ? 0 : 0.5 * x[bad] * (1 + tanh(0.79788456080286536 * (x[bad] + 0.044715 * (double)x[bad] * x[bad] * x[bad]))));
    printf("test_gpt2: gelu_new within %.2f of its bound (4 ulp of |x|)\n", worst);
    float s[4] = {NAN, INFINITY, -INFINITY, 1.0f};
    CHECK(attn_gelu_new(s, 4) == ATTN_OK && isnan(s[0]) && s[1] == INFINITY && isnan(s[2]), "gelu NaN, +Inf, -Inf: %g %g %g", s[0], s[1], s[2]);
    CHECK(attn_gelu_new(NULL, 4) == ATTN_ERR_NULL && attn_gelu_new(s, 0) == ATTN_OK, "gelu NULL, count 0");
    free(x); free(y);
}

// attn_gpt2_pack: each layer's four weight matrices become attn_pack_weight's order, every
// other float stays where it was
static void test_pack(void) {
    model md = random_model(3, 2, 12, 7, 5);
    float *q = packed_params(&md);
    const int C = 12;
    const struct { attn_gpt2_param kind; int k, p; } mats[4] = {
        {ATTN_GPT2_QKV_W, C, 3 * C}, {ATTN_GPT2_ATTPROJ_W, C, C}, {ATTN_GPT2_FC_W, C, 4 * C}, {ATTN_GPT2_FCPROJ_W, 4 * C, C},
    };
    float *one = malloc((size_t)4 * C * C * sizeof *one);
    for (int kind = 0; kind < ATTN_GPT2_N_PARAMS; kind++) {
        const size_t at = md.off[kind], count = md.off[kind + 1] - at;
        int i = 0;
        while (i < 4 && mats[i].kind != (attn_gpt2_param)kind) i++;
        if (i == 4) {
            CHECK(memcmp(q + at, md.p + at, count * sizeof *q) == 0, "pack leaves kind %d as it is", kind);
            continue;
        }
        const size_t per = (size_t)mats[i].k * mats[i].p;
        for (int l = 0; l < 3; l++) {
            attn_pack_weight(one, md.p + at + l * per, mats[i].k, mats[i].p);
            CHECK(memcmp(q + at + l * per, one, per * sizeof *q) == 0, "pack: kind %d layer %d as attn_pack_weight", kind, l);
        }
    }
    const attn_gpt2_config small = {12, 12, 768, 50257, 1024, 1e-5f}, none = {0, 12, 768, 50257, 1024, 1e-5f};
    CHECK(attn_gpt2_pack_scratch_size(&small) == 4u * 768 * 768 * 4, "GPT-2 small: scratch of one (3072, 768) matrix");
    CHECK(attn_gpt2_pack_scratch_size(&none) == 0 && attn_gpt2_pack_scratch_size(NULL) == 0, "scratch of a bad config: 0");
    CHECK(attn_gpt2_pack(NULL, one, &md.cfg) == ATTN_ERR_NULL && attn_gpt2_pack(q, NULL, &md.cfg) == ATTN_ERR_NULL, "pack NULL");
    CHECK(attn_gpt2_pack(q, one, &none) == ATTN_ERR_SIZE, "pack of a bad config: SIZE");
    free(one); free(q); free(md.p);
}

// ----------------------------------------------------------------------------
// by hand: L = 1, H = 1, C = 2, V = 2, P = 2
//   wte = [[1, -1], [-1, 1]], wpe = 0, ln_1 and ln_f: w = 1, b = 0
//   c_attn: weight 0, bias q = k = (0, 0), v = (0.5, 0.25): every score is 0, so every query
//     weighs its keys 0 .. i equally, and each head outputs v = (0.5, 0.25); c_proj = identity
//   ln_2: w = 0, b = (1, -1), so its output is (1, -1); c_fc: weight 0, bias (1, -1, 0, 2, 0, 0, 0, 0);
//     mlp.c_proj rows 0 = (1, 0), 1 = (0, 1), 3 = (1, 1), the rest 0: the MLP adds
//     (g(1) + g(2), g(-1) + g(2)), and g(x) - g(-x) = x for gelu_new.
//   So h0 - h1 = (e0 - e1) + 0.25 + 1 for the token's embedding e: 3.25 for id 0, -0.75 for id 1.
//   LayerNorm of a 2-vector with h0 - h1 = 2δ is (δ, -δ)/√(δ² + eps), and the tied logits are
//   (o0 - o1, o1 - o0) = ±2δ/√(δ² + eps).
static void test_by_hand(void) {
    model md = new_model(1, 1, 2, 2, 2);
    float *p;
    p = kind(&md, ATTN_GPT2_WTE); p[0] = 1; p[1] = -1; p[2] = -1; p[3] = 1;
    p = kind(&md, ATTN_GPT2_LN1_W); p[0] = p[1] = 1;
    p = kind(&md, ATTN_GPT2_QKV_B); p[4] = 0.5f; p[5] = 0.25f;
    p = kind(&md, ATTN_GPT2_ATTPROJ_W); p[0] = p[3] = 1;
    p = kind(&md, ATTN_GPT2_LN2_B); p[0] = 1; p[1] = -1;
    p = kind(&md, ATTN_GPT2_FC_B); p[0] = 1; p[1] = -1; p[3] = 2;
    p = kind(&md, ATTN_GPT2_FCPROJ_W); p[0] = 1; p[3] = 1; p[6] = 1; p[7] = 1;
    p = kind(&md, ATTN_GPT2_LNF_W); p[0] = p[1] = 1;

    const int32_t ids[2] = {0, 1};
    const double d0 = 3.25 / 2, d1 = -0.75 / 2;
    const double l0 = 2 * d0 / sqrt(d0 * d0 + 1e-5), l1 = 2 * d1 / sqrt(d1 * d1 + 1e-5);
    const double want_logits[4] = {l0, -l0, l1, -l1}, want_att[4] = {1, 0, 0.5, 0.5};
    run_state rs = new_state(&md, 2, 2);
    attn_status st = run(&rs, &md, ids, 2, 0, 1, 0);
    double diff;
    CHECK(st == ATTN_OK, "by hand: %s", attn_status_string(st));
    CHECK(compare64(rs.logits, want_logits, 4, &diff) < 0, "by hand logits: %g %g %g %g, want %g %g %g %g",
          rs.logits[0], rs.logits[1], rs.logits[2], rs.logits[3], l0, -l0, l1, -l1);
    CHECK(compare64(rs.att, want_att, 4, &diff) < 0, "by hand attention: %g %g %g %g",
          rs.att[0], rs.att[1], rs.att[2], rs.att[3]);
    // the second token alone, with the first one's keys in the cache
    st = run(&rs, &md, ids + 1, 1, 1, 1, 0);
    CHECK(st == ATTN_OK && compare64(rs.logits, want_logits + 2, 2, &diff) < 0 && compare64(rs.att, want_att + 2, 2, &diff) < 0,
          "by hand, step 2: %s, %g %g", attn_status_string(st), rs.logits[0], rs.att[0]);
    free_state(&rs);
    free(md.p);
}

// ----------------------------------------------------------------------------
// the full pass against the float64 model

static void test_against_reference(void) {
    const int shapes[][5] = {  // L, H, C, V, P
        {1, 1, 4, 7, 8}, {2, 2, 8, 11, 12}, {2, 3, 6, 5, 9}, {3, 4, 16, 30, 40}, {1, 2, 130, 9, 36},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int *sh = shapes[s];
        model md = random_model(sh[0], sh[1], sh[2], sh[3], sh[4]);
        const int T = sh[4] - randint(0, 3), L = sh[0], H = sh[1], V = sh[3];
        int32_t *ids = malloc((size_t)T * sizeof *ids);
        for (int i = 0; i < T; i++) ids[i] = randint(0, V - 1);
        double *wl = malloc((size_t)T * V * 8), *wa = malloc((size_t)L * H * T * T * 8), diff;
        reference(wl, wa, &md, ids, T);
        run_state rs = new_state(&md, T, T);
        attn_status st = run(&rs, &md, ids, T, 0, 1, 0);
        long bad = compare64(rs.logits, wl, (size_t)T * V, &diff);
        CHECK(st == ATTN_OK && bad < 0, "shape %zu logits: %s, first bad %ld, max diff %g", s, attn_status_string(st), bad, diff);
        bad = compare64(rs.att, wa, (size_t)L * H * T * T, &diff);
        CHECK(bad < 0, "shape %zu attention: first bad %ld, max diff %g", s, bad, diff);
        // the tiled attention kernel (no weights asked for: m >= 32 runs it) and the last row only
        st = run(&rs, &md, ids, T, 0, 0, ATTN_GPT2_LAST_ONLY);
        bad = compare64(rs.logits, wl + (size_t)(T - 1) * V, (size_t)V, &diff);
        CHECK(st == ATTN_OK && bad < 0, "shape %zu last row: %s, first bad %ld, max diff %g", s, attn_status_string(st), bad, diff);
        free_state(&rs);
        free(ids); free(wl); free(wa); free(md.p);
    }
}

// ----------------------------------------------------------------------------
// the KV cache against the full pass

typedef struct {
    float *logits, *att;  // the full pass: (n, V), (L, H, n, n)
    int n, L, H, V;
} full_pass;

// rows pos .. pos + T of the full pass, with rs holding a call's logits (T, V) and attention
// (L, H, T, pos + T); the full rows past column pos + T must be 0
static void check_rows(const full_pass *fp, const run_state *rs, int T, int pos, const char *what) {
    const int m = pos + T;
    double diff;
    long bad = compare32(rs->logits, fp->logits + (size_t)pos * fp->V, (size_t)T * fp->V, &diff);
    CHECK(bad < 0, "%s at pos %d, T %d: logits differ at %ld (max diff %g)", what, pos, T, bad, diff);
    for (int lh = 0; lh < fp->L * fp->H; lh++) {
        for (int i = 0; i < T; i++) {
            const float *got = rs->att + ((size_t)lh * T + i) * m, *want = fp->att + ((size_t)lh * fp->n + pos + i) * fp->n;
            bad = compare32(got, want, (size_t)m, &diff);
            int zero = 1;
            for (int j = m; j < fp->n; j++) zero &= want[j] == 0.0f;
            CHECK(bad < 0 && zero, "%s at pos %d: layer·head %d row %d differs at %ld (max diff %g)", what, pos, lh, i, bad, diff);
        }
    }
}

static void test_cache(int L, int H, int C, int V, int P, int n) {
    model md = random_model(L, H, C, V, P);
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    for (int i = 0; i < n; i++) ids[i] = randint(0, V - 1);
    run_state full = new_state(&md, P, n);
    attn_status st = run(&full, &md, ids, n, 0, 1, 0);
    CHECK(st == ATTN_OK, "full pass: %s", attn_status_string(st));
    full_pass fp = {full.logits, full.att, n, L, H, V};
    run_state rs = new_state(&md, P, n);

    // prefill n - 1 tokens, then one step
    st = run(&rs, &md, ids, n - 1, 0, 1, 0);
    CHECK(st == ATTN_OK, "prefill: %s", attn_status_string(st));
    check_rows(&fp, &rs, n - 1, 0, "prefill");
    st = run(&rs, &md, ids + n - 1, 1, n - 1, 1, 0);
    CHECK(st == ATTN_OK, "step: %s", attn_status_string(st));
    check_rows(&fp, &rs, 1, n - 1, "step after prefill");
    // token by token from 0
    for (int pos = 0; pos < n; pos++) {
        st = run(&rs, &md, ids + pos, 1, pos, 1, 0);
        CHECK(st == ATTN_OK, "token by token: %s", attn_status_string(st));
        check_rows(&fp, &rs, 1, pos, "token by token");
    }
    // chunks of T > 1 at pos > 0 (the mask path), from a cache filled by the previous chunks
    for (int pos = 0, T = 2; pos < n; pos += T, T++) {
        int t = min_int(T, n - pos);
        st = run(&rs, &md, ids + pos, t, pos, 1, 0);
        CHECK(st == ATTN_OK, "chunks: %s", attn_status_string(st));
        check_rows(&fp, &rs, t, pos, "chunks");
    }
    // a step without the attention weights (the tiled kernel when pos + 1 >= 32), last row only
    st = run(&rs, &md, ids + n - 1, 1, n - 1, 0, ATTN_GPT2_LAST_ONLY);
    double diff;
    long bad = compare32(rs.logits, fp.logits + (size_t)(n - 1) * V, (size_t)V, &diff);
    CHECK(st == ATTN_OK && bad < 0, "step without weights: %s, first bad %ld, max diff %g", attn_status_string(st), bad, diff);
    free_state(&rs); free_state(&full);
    free(ids); free(md.p);
}

// ----------------------------------------------------------------------------
// layout, sizes and statuses

static void test_layout(void) {
    const attn_gpt2_config small = {12, 12, 768, 50257, 1024, 1e-5f};
    size_t off[ATTN_GPT2_N_PARAMS + 1];
    CHECK(attn_gpt2_param_layout(off, &small) == ATTN_OK, "GPT-2 small layout");
    CHECK(off[ATTN_GPT2_N_PARAMS] == 124439808u, "GPT-2 small: %zu parameters, want 124439808", off[ATTN_GPT2_N_PARAMS]);
    CHECK(off[ATTN_GPT2_WPE] == 50257u * 768 && off[ATTN_GPT2_LN1_W] == 50257u * 768 + 1024 * 768, "wte, wpe first");
    CHECK(off[ATTN_GPT2_FCPROJ_W + 1] - off[ATTN_GPT2_FCPROJ_W] == 12u * 3072 * 768, "fcproj_w (L, 4C, C)");
    CHECK(off[ATTN_GPT2_LNF_B] + 768 == off[ATTN_GPT2_N_PARAMS], "lnf_b last");
    CHECK(attn_gpt2_cache_size(&small, 1024) == 2u * 12 * 1024 * 768 * 4, "cache bytes");
    const attn_gpt2_config huge = {1 << 30, 1, 1 << 20, 1, 1, 1e-5f};
    CHECK(attn_gpt2_param_layout(off, &huge) == ATTN_ERR_TOO_LARGE, "huge layout: TOO_LARGE");
    CHECK(attn_gpt2_cache_size(&huge, 1 << 30) == 0, "huge cache: 0");
    attn_gpt2_config bad = small;
    bad.n_head = 5;
    CHECK(attn_gpt2_param_layout(off, &bad) == ATTN_ERR_SIZE, "C %% H != 0: SIZE");
    CHECK(attn_gpt2_workspace_size(&bad, 4, 4) == 0, "C %% H != 0: no workspace");
    bad = small; bad.n_layer = 0;
    CHECK(attn_gpt2_param_layout(off, &bad) == ATTN_ERR_SIZE, "n_layer 0: SIZE");
    bad = small; bad.eps = 0;
    CHECK(attn_gpt2_param_layout(off, &bad) == ATTN_ERR_RANGE, "eps 0: RANGE");
    bad.eps = NAN;
    CHECK(attn_gpt2_param_layout(off, &bad) == ATTN_ERR_RANGE, "eps NaN: RANGE");
    CHECK(attn_gpt2_param_layout(NULL, &small) == ATTN_ERR_NULL && attn_gpt2_param_layout(off, NULL) == ATTN_ERR_NULL, "layout NULL");
    CHECK(attn_gpt2_workspace_size(&small, 4, 3) == 0 && attn_gpt2_workspace_size(&small, 0, 3) == 0, "workspace m < T, T = 0");
    CHECK(attn_status_string(ATTN_ERR_RANGE)[0] == 'a', "RANGE has a message: %s", attn_status_string(ATTN_ERR_RANGE));
}

// (statuses do not depend on the order of the weights: these calls pass the block unpacked)
static void test_errors(void) {
    model md = random_model(2, 2, 8, 10, 6);
    const int S = 5;  // the cache holds fewer positions than the model's 6
    run_state rs = new_state(&md, S, 6);
    float *ws = malloc(attn_gpt2_workspace_size(&md.cfg, 6, 6));
    int32_t ids[6] = {1, 2, 3, 4, 5, 6};
#define FWD(logits, att, cache, w, cfg, params, ids_, T, pos, S_, flags) \
    attn_gpt2_forward(logits, att, NULL, NULL, cache, w, cfg, params, ids_, T, pos, S_, flags)
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_OK, "a good call");
    CHECK(FWD(rs.logits, NULL, NULL, ws, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_ERR_NULL, "NULL cache");
    CHECK(FWD(rs.logits, NULL, rs.cache, NULL, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_ERR_NULL, "NULL workspace");
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, NULL, md.p, ids, 3, 0, S, 0) == ATTN_ERR_NULL, "NULL config");
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, NULL, ids, 3, 0, S, 0) == ATTN_ERR_NULL, "NULL params");
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, NULL, 3, 0, S, 0) == ATTN_ERR_NULL, "NULL ids");
    CHECK(FWD(NULL, NULL, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_OK, "no outputs at all (a prefill)");
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 0, 0, S, 0) == ATTN_ERR_SIZE, "T = 0");
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, 0, 0) == ATTN_ERR_SIZE, "S = 0");
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, S, 2) == ATTN_ERR_FLAGS, "unknown flag");
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 1, -1, S, 0) == ATTN_ERR_RANGE, "pos < 0");
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 2, 4, S, 0) == ATTN_ERR_RANGE, "past the cache");
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 1, 4, S, 0) == ATTN_OK, "the cache's last position");
    float *cache8 = malloc(attn_gpt2_cache_size(&md.cfg, 8));
    CHECK(FWD(rs.logits, NULL, cache8, ws, &md.cfg, md.p, ids, 6, 0, 8, 0) == ATTN_OK, "the model's 6 positions (a cache of 8)");
    CHECK(FWD(rs.logits, NULL, cache8, ws, &md.cfg, md.p, ids, 1, 6, 8, 0) == ATTN_ERR_RANGE, "past n_positions");
    ids[2] = 10;
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_ERR_RANGE, "id = V");
    ids[2] = -1;
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_ERR_RANGE, "id < 0");
    ids[2] = 3;
    attn_gpt2_config bad = md.cfg;
    bad.n_head = 3;
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &bad, md.p, ids, 3, 0, S, 0) == ATTN_ERR_SIZE, "C %% H != 0");

    // non-finite parameters: where they reach a result, NON_FINITE; an unused one is not read
    CHECK(attn_gpt2_check_params(&md.cfg, md.p) == ATTN_OK, "finite parameters");
    float *q = kind(&md, ATTN_GPT2_QKV_W) + 8 * 24 + 5;  // layer 1
    float keep = *q;
    *q = NAN;
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_ERR_NON_FINITE, "NaN weight");
    CHECK(FWD(NULL, rs.att, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_ERR_NON_FINITE, "NaN weight, attention only");
    CHECK(attn_gpt2_check_params(&md.cfg, md.p) == ATTN_ERR_NON_FINITE, "check_params finds the NaN");
    *q = keep;
    float *pe = kind(&md, ATTN_GPT2_WPE) + 5 * 8;  // position 5, not used by a call over 0 .. 2
    *pe = INFINITY;
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_OK, "an unused Inf");
    CHECK(FWD(rs.logits, NULL, cache8, ws, &md.cfg, md.p, ids, 1, 5, 8, 0) == ATTN_ERR_NON_FINITE, "the Inf used");
    *pe = 0;
    float *fc = kind(&md, ATTN_GPT2_FCPROJ_B);
    for (int c = 0; c < 8; c++) fc[c] = c % 2 ? 3e38f : -3e38f;  // finite, and the residual overflows
    float *b2 = kind(&md, ATTN_GPT2_FCPROJ_B) + 8;
    for (int c = 0; c < 8; c++) b2[c] = c % 2 ? 3e38f : -3e38f;
    CHECK(FWD(rs.logits, NULL, rs.cache, ws, &md.cfg, md.p, ids, 3, 0, S, 0) == ATTN_ERR_OVERFLOW, "finite but overflows");
    free(ws); free(cache8); free_state(&rs); free(md.p);
#undef FWD
}

// slots: the heads picked (here two of six, in reverse order, into blocks 1 and 0) get exactly the
// weights the full call gives them; -1 heads are not written; the logits do not change
static void test_slots(void) {
    model md = random_model(2, 3, 12, 11, 8);
    const int T = 5, L = 2, H = 3;
    run_state rs = new_state(&md, 8, T);
    CHECK(run(&rs, &md, (const int32_t[]){1, 4, 2, 9, 3}, T, 0, 1, 0) == ATTN_OK, "the full call");
    const size_t block = (size_t)T * T;
    float *all = malloc((size_t)L * H * block * sizeof(float)), *logits = malloc((size_t)T * 11 * sizeof(float));
    memcpy(all, rs.att, (size_t)L * H * block * sizeof(float));
    memcpy(logits, rs.logits, (size_t)T * 11 * sizeof(float));
    int32_t slots[6] = {-1, -1, -1, 1, -1, 0};     // layer 1: head 0 -> block 1, head 2 -> block 0
    float *two = malloc(3 * block * sizeof(float));
    for (size_t i = 0; i < 3 * block; i++) two[i] = -7.0f;   // block 2 must stay as it is
    size_t bytes = attn_gpt2_workspace_size(&md.cfg, T, T);
    float *ws = malloc(bytes), *q = packed_params(&md);
    attn_status st = attn_gpt2_forward(rs.logits, two, slots, NULL, rs.cache, ws, &md.cfg, q, (const int32_t[]){1, 4, 2, 9, 3}, T, 0, 8, 0);
    CHECK(st == ATTN_OK, "slots: %s", attn_status_string(st));
    CHECK(memcmp(two, all + (size_t)(1 * H + 2) * block, block * sizeof(float)) == 0, "block 0 is layer 1 head 2");
    CHECK(memcmp(two + block, all + (size_t)(1 * H + 0) * block, block * sizeof(float)) == 0, "block 1 is layer 1 head 0");
    CHECK(two[2 * block] == -7.0f && two[3 * block - 1] == -7.0f, "nothing written past the last slot");
    CHECK(memcmp(logits, rs.logits, (size_t)T * 11 * sizeof(float)) == 0, "the logits do not depend on the slots");
    slots[4] = -2;
    st = attn_gpt2_forward(rs.logits, two, slots, NULL, rs.cache, ws, &md.cfg, q, (const int32_t[]){1, 4, 2, 9, 3}, T, 0, 8, 0);
    CHECK(st == ATTN_ERR_RANGE, "a slot below -1: %s", attn_status_string(st));
    free(ws); free(q); free(two); free(all); free(logits); free_state(&rs); free(md.p);
}

int main(void) {
    test_linear_kernels();
    test_gelu();
    test_pack();
    test_by_hand();
    test_against_reference();
    test_cache(1, 1, 4, 5, 8, 6);       // d = 4
    test_cache(2, 3, 6, 9, 12, 9);      // d = 2, C not a multiple of 4
    test_cache(2, 2, 16, 13, 48, 40);   // m >= 32: the tiled attention kernel when weights are not asked for
    attn_set_threads(3);   // heads and columns split in 3 parts: the workspace grows with them (ASan)
    test_against_reference();
    test_cache(2, 3, 6, 9, 12, 9);
    test_cache(2, 2, 16, 13, 48, 40);
    attn_set_threads(1);
    test_layout();
    test_errors();
    test_slots();
    printf("test_gpt2: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
