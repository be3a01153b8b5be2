// test_llama.c - native tests of the LLaMA family's forward pass (c_src/llama.c) and the typed
// linear kernel (c_src/linear.c), under ASan + UBSan by `make -C c_src test`.
//
//   - widening: every BF16 value, and every finite F16 value, becomes exactly its float;
//   - the typed kernel against the naive loop for F32, BF16 and F16 on odd shapes, and a row
//     computed alone (n = 1) with the bits it has in a pass over many rows;
//   - random small models (GQA, biases, Qwen3's q/k norms, tied and untied, every dtype) against
//     a plain float64 forward pass written here from llama.h's description (no code of llama.c);
//   - the KV cache: prefill then a step, token by token, chunks at pos > 0: the full pass's rows;
//   - slots, attn_cache_move, and every bad input's status.
// Buffers are malloc'ed at their exact sizes, so ASan catches any write past them.
#include "llama.h"
#include "parallel.h"  // the forward passes again with their work in 3 parts (run one after the other here)

#define TEST_SEED 0x5DEECE66DB16ull
#include "check.h"
#include "typed.h"

#include <stdint.h>

static void test_widen(void) {
    static uint16_t all[65536];
    static float out[65536];
    for (uint32_t h = 0; h < 65536; h++) all[h] = (uint16_t)h;
    attn_widen(out, all, ATTN_BF16, 65536);
    long bad = -1;
    for (uint32_t h = 0; h < 65536 && bad < 0; h++) {
        uint32_t u = h << 16, v;
        memcpy(&v, &out[h], 4);
        if (u != v) bad = (long)h;
    }
    CHECK(bad < 0, "BF16 0x%lx widened wrong", bad);
    attn_widen(out, all, ATTN_F16, 65536);
    bad = -1;
    for (uint32_t h = 0; h < 65536 && bad < 0; h++)
        if ((h & 0x7c00) != 0x7c00 && (double)out[h] != f16_value((uint16_t)h)) bad = (long)h;
    CHECK(bad < 0, "F16 0x%lx widened to %g, expected %g", bad, bad >= 0 ? out[bad] : 0.0, bad >= 0 ? f16_value((uint16_t)bad) : 0.0);
    CHECK(attn_first_non_finite(all, ATTN_BF16, 65536) == 0x7f80, "first non-finite BF16");
    CHECK(attn_first_non_finite(all, ATTN_F16, 0x7c00) == 0x7c00, "no non-finite F16 below 0x7c00");
    float f[3] = {1, NAN, 2};
    CHECK(attn_first_non_finite(f, ATTN_F32, 3) == 1 && attn_first_non_finite(f, ATTN_F32, 1) == 1, "F32 NaN found");
}

static void test_linear(void) {
    const int shapes[][3] = {{1, 7, 9}, {2, 16, 8}, {5, 33, 17}, {7, 64, 40}, {1, 100, 13}, {3, 9000, 5}};
    for (int dtype = 0; dtype < 3; dtype++) {
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            const int n = shapes[s][0], k = shapes[s][1], p = shapes[s][2];
            float *a = randmat((size_t)n * k, -1, 1), *b = randmat((size_t)p, -0.5f, 0.5f);
            typed w = random_typed((size_t)p * k, dtype, 1.0f / sqrtf((float)k));
            float *out = malloc((size_t)n * p * sizeof *out), *ref = malloc((size_t)n * p * sizeof *ref);
            float *row = malloc((size_t)p * sizeof *row), *scratch = malloc(attn_linear_scratch_floats(k) * sizeof *scratch);
            attn_status st = attn_linear_typed(out, a, w.data, dtype, b, n, k, p, scratch);
            CHECK(st == ATTN_OK, "linear %d %dx%dx%d: %s", dtype, n, k, p, attn_status_string(st));
            st = attn_linear_typed_naive(ref, a, w.data, dtype, b, n, k, p);
            double *e = malloc((size_t)n * p * sizeof *e), diff;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < p; j++) {
                    double sum = b[j];
                    for (int t = 0; t < k; t++) sum += (double)a[(size_t)i * k + t] * w.value[(size_t)j * k + t];
                    e[(size_t)i * p + j] = sum;
                }
            long bad = compare64(out, e, (size_t)n * p, &diff);
            CHECK(st == ATTN_OK && bad < 0, "fast vs float64, dtype %d %dx%dx%d: first bad %ld, max diff %g", dtype, n, k, p, bad, diff);
            bad = compare64(ref, e, (size_t)n * p, &diff);
            CHECK(bad < 0, "naive vs float64, dtype %d: first bad %ld", dtype, bad);
            for (int i = 0; i < n; i++) {
                attn_linear_typed(row, a + (size_t)i * k, w.data, dtype, b, 1, k, p, NULL);
                CHECK(memcmp(row, out + (size_t)i * p, (size_t)p * sizeof *row) == 0, "row %d alone: other bits (dtype %d, k %d)", i, dtype, k);
            }
            free(a); free(b); free(out); free(ref); free(row); free(scratch); free(e); free_typed(&w);
        }
    }
    // one scratch for every product of a model: sized for its largest k, enough for each smaller k'
    // (a scratch sized by block_rows(k)·k was too small for k' = 1000 under k = 1200: ASan)
    for (int kp = 1; kp <= 1200; kp += 37) {
        const int kmax = 1200, n = 2, p = 9;
        float *a = randmat((size_t)n * kp, -1, 1), *out = malloc((size_t)n * p * sizeof *out);
        float *scratch = malloc(attn_linear_scratch_floats(kmax) * sizeof *scratch);
        typed w = random_typed((size_t)p * kp, ATTN_BF16, 0.1f);
        CHECK(attn_linear_typed(out, a, w.data, ATTN_BF16, NULL, n, kp, p, scratch) == ATTN_OK, "k' = %d under k = %d", kp, kmax);
        free(a); free(out); free(scratch); free_typed(&w);
    }
    float x = 1, y[4];
    CHECK(attn_linear_typed(y, &x, &x, 7, NULL, 1, 1, 1, NULL) == ATTN_ERR_FLAGS, "an unknown dtype");
    CHECK(attn_linear_typed(y, &x, NULL, ATTN_F32, NULL, 1, 1, 1, NULL) == ATTN_ERR_NULL, "NULL w");
    CHECK(attn_linear_typed(y, &x, &x, ATTN_F32, NULL, 0, 1, 1, NULL) == ATTN_ERR_SIZE, "n = 0");
    CHECK(attn_linear_typed(y, y, y, ATTN_BF16, NULL, 2, 2, 1, NULL) == ATTN_ERR_NULL, "no scratch for BF16 over 2 rows");
}

// panels of 8 rows (attn_panel8): every output has the bits it has over rows, for n = 1 (the
// panel kernel) and n > 1 (rows widened from panels), the naive reference too; each row widened
// back is the row; what panels do not apply to is left as it was
static void test_panel8(void) {
    const int shapes[][3] = {{1, 8, 8}, {3, 12, 13}, {2, 64, 40}, {5, 100, 17}, {4, 36, 9}, {1, 896, 24}, {3, 2000, 16}};
    for (int dtype = ATTN_BF16; dtype <= ATTN_F16; dtype++) {
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            const int n = shapes[s][0], k = shapes[s][1], p = shapes[s][2];
            if (dtype == ATTN_F16 && (size_t)k * p > 4000) continue;   // f16_bits is a slow search
            float *a = randmat((size_t)n * k, -1, 1), *b = randmat((size_t)p, -0.5f, 0.5f);
            typed w = random_typed((size_t)p * k, dtype, 1.0f / sqrtf((float)k));
            const size_t bytes = (size_t)p * k * 2;
            uint16_t *panels = malloc(bytes), *rows = malloc((size_t)8 * k * 2);
            memcpy(panels, w.data, bytes);
            const int pd = attn_panel8(panels, dtype, p, k, rows);
            CHECK(pd == (dtype | ATTN_PANEL8), "panels apply to dtype %d, %dx%d", dtype, p, k);
            CHECK(memcmp((char *)panels + (size_t)(p - p % 8) * k * 2, (char *)w.data + (size_t)(p - p % 8) * k * 2, (size_t)(p % 8) * k * 2) == 0,
                  "the last p %% 8 rows stay rows");
            float *want = malloc((size_t)n * p * sizeof *want), *got = malloc((size_t)n * p * sizeof *got), *row = malloc((size_t)k * sizeof *row);
            float *scratch = malloc(attn_linear_scratch_floats(k) * sizeof *scratch), *wrow = malloc((size_t)k * sizeof *wrow);
            CHECK(attn_linear_typed(want, a, w.data, dtype, b, n, k, p, scratch) == ATTN_OK, "rows");
            CHECK(attn_linear_typed(got, a, panels, pd, b, n, k, p, scratch) == ATTN_OK, "panels");
            CHECK(memcmp(got, want, (size_t)n * p * sizeof *got) == 0, "panels vs rows, %d rows of a: other bits (dtype %d, %dx%dx%d)", n, dtype, n, k, p);
            for (int i = 0; i < n; i++) {
                attn_linear_typed(got, a + (size_t)i * k, panels, pd, b, 1, k, p, NULL);
                CHECK(memcmp(got, want + (size_t)i * p, (size_t)p * sizeof *got) == 0, "panels, row %d alone: other bits (dtype %d, k %d)", i, dtype, k);
            }
            CHECK(attn_linear_typed_naive(want, a, w.data, dtype, b, n, k, p) == ATTN_OK &&
                  attn_linear_typed_naive(got, a, panels, pd, b, n, k, p) == ATTN_OK &&
                  memcmp(got, want, (size_t)n * p * sizeof *got) == 0, "the naive reference reads panels as rows");
            for (int j = 0; j < p; j++) {
                attn_widen_row(row, panels, pd, j, k, p);
                attn_widen_row(wrow, w.data, dtype, j, k, p);
                CHECK(memcmp(row, wrow, (size_t)k * sizeof *row) == 0, "row %d widened from panels", j);
                for (int t = 0; t < k; t++) CHECK(row[t] == (float)w.value[(size_t)j * k + t], "row %d value %d", j, t);
            }
            free(a); free(b); free(panels); free(rows); free(want); free(got); free(row); free(wrow); free(scratch); free_typed(&w);
        }
    }
    uint16_t m[16 * 9] = {0}, tmp[8 * 12];
    CHECK(attn_panel8(m, ATTN_BF16, 16, 9, tmp) == ATTN_BF16, "k %% 4 != 0: rows");
    CHECK(attn_panel8(m, ATTN_BF16, 7, 12, tmp) == ATTN_BF16, "p < 8: rows");
    CHECK(attn_panel8(m, ATTN_F32, 8, 4, tmp) == ATTN_F32, "F32: rows");
    CHECK(attn_panel8(m, ATTN_BF16 | ATTN_PANEL8, 8, 12, tmp) == (ATTN_BF16 | ATTN_PANEL8), "already panels");
    CHECK(attn_dtype_size(ATTN_F32 | ATTN_PANEL8) == 0 && attn_dtype_size(ATTN_BF16 | ATTN_PANEL8) == 2, "sizes of panel dtypes");
    float x[12] = {0}, y[8];
    CHECK(attn_linear_typed(y, x, m, ATTN_BF16 | ATTN_PANEL8, NULL, 1, 9, 8, NULL) == ATTN_ERR_FLAGS, "panels with k %% 4 != 0 refused");
    // the first non-finite value of 2-byte weights, 8 at a time: found wherever it is
    for (int dtype = ATTN_BF16; dtype <= ATTN_F16; dtype++) {
        uint16_t v[37];
        for (int at = 0; at <= 37; at++) {
            for (int i = 0; i < 37; i++) v[i] = 0x3c00;
            if (at < 37) v[at] = dtype == ATTN_BF16 ? 0xff80 : 0x7c00;   // -Inf, +Inf
            CHECK(attn_first_non_finite(v, dtype, 37) == (size_t)at, "dtype %d: non-finite at %d", dtype, at);
        }
    }
}

// ----------------------------------------------------------------------------
// a random model and the float64 reference

typedef struct {
    attn_llama_config cfg;
    attn_tensor *table;
    typed *mats;        // every tensor, as stored and as doubles (vectors: F32)
    int count;
} model;

enum { BIAS = 1, QKNORM = 2, TIED = 4 };

static model random_model(int L, int H, int G, int D, int C, int F, int V, int P, int dtype, int features) {
    model md = {.cfg = {L, H, G, D, C, F, V, P, 1e-5f}, .count = ATTN_LLAMA_GLOBALS + L * ATTN_LLAMA_PER_LAYER};
    md.table = calloc((size_t)md.count, sizeof *md.table);
    md.mats = calloc((size_t)md.count, sizeof *md.mats);
    const size_t HD = (size_t)H * D, GD = (size_t)G * D;
    struct { int kind; size_t count; int matrix; float r; int when; } spec[] = {
        {ATTN_LLAMA_LN1, C, 0, 0.2f, 0}, {ATTN_LLAMA_WQ, HD * C, 1, 1.5f / sqrtf((float)C), 0}, {ATTN_LLAMA_BQ, HD, 0, 0.3f, BIAS},
        {ATTN_LLAMA_WK, GD * C, 1, 1.5f / sqrtf((float)C), 0}, {ATTN_LLAMA_BK, GD, 0, 0.3f, BIAS},
        {ATTN_LLAMA_WV, GD * C, 1, 1.0f / sqrtf((float)C), 0}, {ATTN_LLAMA_BV, GD, 0, 0.1f, BIAS},
        {ATTN_LLAMA_QNORM, (size_t)D, 0, 0.2f, QKNORM}, {ATTN_LLAMA_KNORM, (size_t)D, 0, 0.2f, QKNORM},
        {ATTN_LLAMA_WO, (size_t)C * HD, 1, 1.0f / sqrtf((float)HD), 0}, {ATTN_LLAMA_BO, C, 0, 0.05f, BIAS},
        {ATTN_LLAMA_LN2, C, 0, 0.2f, 0}, {ATTN_LLAMA_WGATE, (size_t)F * C, 1, 1.5f / sqrtf((float)C), 0},
        {ATTN_LLAMA_BGATE, F, 0, 0.1f, BIAS}, {ATTN_LLAMA_WUP, (size_t)F * C, 1, 1.5f / sqrtf((float)C), 0},
        {ATTN_LLAMA_BUP, F, 0, 0.1f, BIAS}, {ATTN_LLAMA_WDOWN, (size_t)C * F, 1, 1.0f / sqrtf((float)F), 0},
        {ATTN_LLAMA_BDOWN, C, 0, 0.05f, BIAS},
    };
    for (int l = 0; l < L; l++) {
        for (size_t s = 0; s < sizeof spec / sizeof *spec; s++) {
            if (spec[s].when && !(features & spec[s].when)) continue;
            const int at = ATTN_LLAMA_GLOBALS + l * ATTN_LLAMA_PER_LAYER + spec[s].kind;
            const int norm = spec[s].kind == ATTN_LLAMA_LN1 || spec[s].kind == ATTN_LLAMA_LN2 || spec[s].when == QKNORM;
            md.mats[at] = random_typed(spec[s].count, spec[s].matrix ? dtype : ATTN_F32, spec[s].r);
            if (norm) for (size_t i = 0; i < spec[s].count; i++) md.mats[at].value[i] = ((float *)md.mats[at].data)[i] += 1.0f;
            md.table[at] = (attn_tensor){md.mats[at].data, md.mats[at].dtype};
        }
    }
    md.mats[ATTN_LLAMA_EMBED] = random_typed((size_t)V * C, dtype, 1.0f);
    md.mats[ATTN_LLAMA_NORM] = random_typed((size_t)C, ATTN_F32, 0.2f);
    for (int i = 0; i < C; i++) md.mats[ATTN_LLAMA_NORM].value[i] = ((float *)md.mats[ATTN_LLAMA_NORM].data)[i] += 1.0f;
    if (!(features & TIED)) md.mats[ATTN_LLAMA_LM_HEAD] = random_typed((size_t)V * C, dtype, 1.0f / sqrtf((float)C));
    md.mats[ATTN_LLAMA_INV_FREQ] = random_typed((size_t)D / 2, ATTN_F32, 1.0f);
    for (int i = 0; i < D / 2; i++)
        md.mats[ATTN_LLAMA_INV_FREQ].value[i] = ((float *)md.mats[ATTN_LLAMA_INV_FREQ].data)[i] = powf(10000.0f, -2.0f * (float)i / (float)D);
    for (int g = 0; g < ATTN_LLAMA_GLOBALS; g++)
        if (md.mats[g].data) md.table[g] = (attn_tensor){md.mats[g].data, md.mats[g].dtype};
    return md;
}

static void free_model(model *md) {
    for (int i = 0; i < md->count; i++) if (md->mats[i].data) free_typed(&md->mats[i]);
    free(md->mats); free(md->table);
}

static const double *val(const model *md, int l, int kind) {
    return md->mats[l < 0 ? kind : ATTN_LLAMA_GLOBALS + l * ATTN_LLAMA_PER_LAYER + kind].value;
}

// out (rows, p) = x (rows, k)·wᵀ + b in double
static void ref_linear(double *out, const double *x, const double *w, const double *b, int rows, int k, int p) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < p; j++) {
            double s = b ? b[j] : 0;
            for (int t = 0; t < k; t++) s += x[(size_t)i * k + t] * w[(size_t)j * k + t];
            out[(size_t)i * p + j] = s;
        }
}

static void ref_rms(double *x, const double *w, int rows, int n, double eps) {
    for (int i = 0; i < rows; i++) {
        double sq = 0;
        for (int c = 0; c < n; c++) sq += x[(size_t)i * n + c] * x[(size_t)i * n + c];
        const double r = 1 / sqrt(sq / n + eps);
        for (int c = 0; c < n; c++) x[(size_t)i * n + c] *= r * w[c];
    }
}

static void ref_rope(double *x, const double *inv, int n, int heads, int D) {
    for (int r = 0; r < n; r++)
        for (int h = 0; h < heads; h++) {
            double *v = x + ((size_t)r * heads + h) * D;
            for (int i = 0; i < D / 2; i++) {
                const double c = cos(r * inv[i]), s = sin(r * inv[i]), a = v[i], b = v[i + D / 2];
                v[i] = a * c - b * s;
                v[i + D / 2] = b * c + a * s;
            }
        }
}

// logits (n, V) and attention (L, H, n, n) of ids from position 0, in float64
static void reference(double *logits, double *att, const model *md, const int32_t *ids, int n) {
    const attn_llama_config *c = &md->cfg;
    const int C = c->hidden, D = c->head_dim, H = c->n_head, G = c->n_kv_head, F = c->intermediate;
    double *h = calloc((size_t)n * C, 8), *x = calloc((size_t)n * C, 8), *q = calloc((size_t)n * H * D, 8);
    double *k = calloc((size_t)n * G * D, 8), *v = calloc((size_t)n * G * D, 8), *y = calloc((size_t)n * H * D, 8);
    double *gt = calloc((size_t)n * F, 8), *up = calloc((size_t)n * F, 8);
    for (int i = 0; i < n; i++) memcpy(h + (size_t)i * C, val(md, -1, ATTN_LLAMA_EMBED) + (size_t)ids[i] * C, (size_t)C * 8);
    for (int l = 0; l < c->n_layer; l++) {
        memcpy(x, h, (size_t)n * C * 8);
        ref_rms(x, val(md, l, ATTN_LLAMA_LN1), n, C, c->eps);
        ref_linear(q, x, val(md, l, ATTN_LLAMA_WQ), val(md, l, ATTN_LLAMA_BQ), n, C, H * D);
        ref_linear(k, x, val(md, l, ATTN_LLAMA_WK), val(md, l, ATTN_LLAMA_BK), n, C, G * D);
        ref_linear(v, x, val(md, l, ATTN_LLAMA_WV), val(md, l, ATTN_LLAMA_BV), n, C, G * D);
        if (val(md, l, ATTN_LLAMA_QNORM)) {
            ref_rms(q, val(md, l, ATTN_LLAMA_QNORM), n * H, D, c->eps);
            ref_rms(k, val(md, l, ATTN_LLAMA_KNORM), n * G, D, c->eps);
        }
        ref_rope(q, val(md, -1, ATTN_LLAMA_INV_FREQ), n, H, D);
        ref_rope(k, val(md, -1, ATTN_LLAMA_INV_FREQ), n, G, D);
        for (int hd = 0; hd < H; hd++) {
            const int g = hd / (H / G);
            double *a = att + ((size_t)l * H + hd) * n * n;
            for (int i = 0; i < n; i++) {
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int t = 0; t < D; t++) s += q[((size_t)i * H + hd) * D + t] * k[((size_t)j * G + g) * D + t];
                    a[(size_t)i * n + j] = j <= i ? s / sqrt(D) : -INFINITY;
                    if (a[(size_t)i * n + j] > mx) mx = a[(size_t)i * n + j];
                }
                for (int j = 0; j < n; j++) { a[(size_t)i * n + j] = j <= i ? exp(a[(size_t)i * n + j] - mx) : 0; sum += a[(size_t)i * n + j]; }
                for (int t = 0; t < D; t++) {
                    double o = 0;
                    for (int j = 0; j <= i; j++) o += (a[(size_t)i * n + j] /= (t == 0 ? sum : 1)) * v[((size_t)j * G + g) * D + t];
                    y[((size_t)i * H + hd) * D + t] = o;
                }
            }
        }
        ref_linear(x, y, val(md, l, ATTN_LLAMA_WO), val(md, l, ATTN_LLAMA_BO), n, H * D, C);
        for (size_t i = 0; i < (size_t)n * C; i++) h[i] += x[i];
        memcpy(x, h, (size_t)n * C * 8);
        ref_rms(x, val(md, l, ATTN_LLAMA_LN2), n, C, c->eps);
        ref_linear(gt, x, val(md, l, ATTN_LLAMA_WGATE), val(md, l, ATTN_LLAMA_BGATE), n, C, F);
        ref_linear(up, x, val(md, l, ATTN_LLAMA_WUP), val(md, l, ATTN_LLAMA_BUP), n, C, F);
        for (size_t i = 0; i < (size_t)n * F; i++) gt[i] = gt[i] / (1 + exp(-gt[i])) * up[i];
        ref_linear(x, gt, val(md, l, ATTN_LLAMA_WDOWN), val(md, l, ATTN_LLAMA_BDOWN), n, F, C);
        for (size_t i = 0; i < (size_t)n * C; i++) h[i] += x[i];
    }
    ref_rms(h, val(md, -1, ATTN_LLAMA_NORM), n, C, c->eps);
    const double *head = val(md, -1, ATTN_LLAMA_LM_HEAD) ? val(md, -1, ATTN_LLAMA_LM_HEAD) : val(md, -1, ATTN_LLAMA_EMBED);
    ref_linear(logits, h, head, NULL, n, C, c->vocab_size);
    free(h); free(x); free(q); free(k); free(v); free(y); free(gt); free(up);
}

// ----------------------------------------------------------------------------
// runs

typedef struct { float *cache, *logits, *att; int S; } run_state;

static run_state new_state(const model *md, int S, int T_max) {
    run_state rs = {.S = S};
    rs.cache = malloc(attn_llama_cache_size(&md->cfg, S));
    rs.logits = malloc((size_t)T_max * md->cfg.vocab_size * sizeof(float));
    rs.att = malloc((size_t)md->cfg.n_layer * md->cfg.n_head * T_max * S * sizeof(float));
    return rs;
}
static void free_state(run_state *rs) { free(rs->cache); free(rs->logits); free(rs->att); }

static attn_status run(run_state *rs, const model *md, const int32_t *ids, int T, int pos, const int32_t *slots, unsigned flags) {
    float *ws = malloc(attn_llama_workspace_size(&md->cfg, T, pos + T));
    attn_status st = attn_llama_forward(rs->logits, rs->att, slots, NULL, rs->cache, ws, &md->cfg, md->table, ids, T, pos, rs->S, flags);
    free(ws);
    return st;
}

static void test_against_reference(int dtype, int features, int H, int G, int D) {
    model md = random_model(2, H, G, D, 10, 14, 13, 24, dtype, features);
    CHECK(attn_llama_check(&md.cfg, md.table) == ATTN_OK, "check");
    const int n = 9, L = 2, V = 13;
    int32_t ids[9];
    for (int i = 0; i < n; i++) ids[i] = randint(0, V - 1);
    double *logits = malloc((size_t)n * V * 8), *att = malloc((size_t)L * H * n * n * 8), diff;
    reference(logits, att, &md, ids, n);
    run_state rs = new_state(&md, 24, n);
    attn_status st = run(&rs, &md, ids, n, 0, NULL, 0);
    CHECK(st == ATTN_OK, "forward: %s", attn_status_string(st));
    long bad = compare64(rs.logits, logits, (size_t)n * V, &diff);
    CHECK(bad < 0, "logits (dtype %d, features %d, H %d G %d D %d): first bad %ld, max diff %g", dtype, features, H, G, D, bad, diff);
    float *full_att = malloc((size_t)L * H * n * n * sizeof(float));
    memcpy(full_att, rs.att, (size_t)L * H * n * n * sizeof(float));
    bad = compare64(full_att, att, (size_t)L * H * n * n, &diff);
    CHECK(bad < 0, "attention (dtype %d, features %d): first bad %ld, max diff %g", dtype, features, bad, diff);

    // the KV cache: prefill n - 1, a step, token by token, chunks; every row as the full pass's
    float *full_logits = malloc((size_t)n * V * sizeof(float));
    memcpy(full_logits, rs.logits, (size_t)n * V * sizeof(float));
    for (int mode = 0; mode < 3; mode++) {
        for (int pos = 0, T = mode == 0 ? n - 1 : mode == 1 ? 1 : 2; pos < n; pos += T, T = mode == 0 ? 1 : mode == 1 ? 1 : T + 1) {
            if (T > n - pos) T = n - pos;
            st = run(&rs, &md, ids + pos, T, pos, NULL, 0);
            CHECK(st == ATTN_OK, "cache mode %d pos %d: %s", mode, pos, attn_status_string(st));
            for (int r = 0; r < T; r++) {
                double d = 0;
                for (int j = 0; j < V; j++) d = fmax(d, fabs(rs.logits[(size_t)r * V + j] - full_logits[(size_t)(pos + r) * V + j]));
                CHECK(d <= 1e-5, "cache mode %d: logits of position %d differ by %g", mode, pos + r, d);
                for (int hl = 0; hl < L * H; hl++) {
                    double da = 0;
                    for (int j = 0; j <= pos + r; j++)
                        da = fmax(da, fabs(rs.att[((size_t)hl * T + r) * (pos + T) + j] - full_att[((size_t)hl * n + pos + r) * n + j]));
                    CHECK(da <= 1e-6, "cache mode %d: attention row %d of head %d differs by %g", mode, pos + r, hl, da);
                }
            }
        }
    }
    // slots: layer 1's last head alone, into block 0
    int32_t *slots = malloc((size_t)L * H * sizeof *slots);
    for (int i = 0; i < L * H; i++) slots[i] = -1;
    slots[L * H - 1] = 0;
    st = run(&rs, &md, ids, n, 0, slots, ATTN_LLAMA_LAST_ONLY);
    CHECK(st == ATTN_OK && memcmp(rs.att, full_att + (size_t)(L * H - 1) * n * n, (size_t)n * n * sizeof(float)) == 0, "slots: the one head's bits");
    CHECK(memcmp(rs.logits, full_logits + (size_t)(n - 1) * V, (size_t)V * sizeof(float)) == 0, "LAST_ONLY: the last row's bits");
    free(slots); free(full_att); free(full_logits); free(logits); free(att); free_state(&rs); free_model(&md);
}

static void test_cache_move(void) {
    const int blocks = 3, d = 2, S0 = 4, S1 = 7, len = 3;
    float src[3 * 4 * 2], dst[3 * 7 * 2];
    for (int i = 0; i < 24; i++) src[i] = (float)i;
    memset(dst, 0, sizeof dst);
    CHECK(attn_cache_move(dst, S1, src, S0, blocks, d, len) == ATTN_OK, "move");
    int ok = 1;
    for (int b = 0; b < blocks; b++)
        for (int s = 0; s < S1; s++)
            for (int j = 0; j < d; j++) ok &= dst[(b * S1 + s) * d + j] == (s < len ? src[(b * S0 + s) * d + j] : 0.0f);
    CHECK(ok, "moved rows land at their block, the rest untouched");
    CHECK(attn_cache_move(dst, S1, src, S0, blocks, d, 5) == ATTN_ERR_SIZE, "more positions than the source holds");
}

static void test_errors(void) {
    model md = random_model(1, 2, 1, 4, 8, 6, 5, 6, ATTN_F32, QKNORM);
    run_state rs = new_state(&md, 4, 6);
    int32_t ids[6] = {1, 2, 3, 4, 0, 1};
    CHECK(run(&rs, &md, ids, 3, 0, NULL, 0) == ATTN_OK, "a good call");
    CHECK(run(&rs, &md, ids, 5, 0, NULL, 0) == ATTN_ERR_RANGE, "past the cache's 4 positions");
    ids[1] = 5;
    CHECK(run(&rs, &md, ids, 2, 0, NULL, 0) == ATTN_ERR_RANGE, "an id = V");
    ids[1] = 2;
    CHECK(run(&rs, &md, ids, 2, 0, NULL, 7) == ATTN_ERR_FLAGS, "unknown flags");
    attn_tensor saved = md.table[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_KNORM];
    md.table[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_KNORM].data = NULL;
    CHECK(attn_llama_check(&md.cfg, md.table) == ATTN_ERR_NULL, "q_norm without k_norm");
    md.table[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_KNORM] = saved;
    md.table[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WQ].dtype = 9;
    CHECK(attn_llama_check(&md.cfg, md.table) == ATTN_ERR_FLAGS, "an unknown dtype");
    md.table[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_WQ].dtype = ATTN_F32;
    md.table[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_LN1].dtype = ATTN_BF16;
    CHECK(attn_llama_check(&md.cfg, md.table) == ATTN_ERR_FLAGS, "a norm that is not F32");
    md.table[ATTN_LLAMA_GLOBALS + ATTN_LLAMA_LN1].dtype = ATTN_F32;
    attn_llama_config bad = md.cfg;
    bad.n_kv_head = 3;
    CHECK(attn_llama_check(&bad, md.table) == ATTN_ERR_SIZE, "H not a multiple of G");
    bad = md.cfg; bad.head_dim = 5;
    CHECK(attn_llama_check(&bad, md.table) == ATTN_ERR_SIZE, "an odd head_dim");
    bad = md.cfg; bad.eps = 0;
    CHECK(attn_llama_check(&bad, md.table) == ATTN_ERR_RANGE, "eps 0");
    // RoPE's frequencies (rope.c's angles need θ in [0, 1]) and positions (below 2^20)
    float *inv = (float *)md.mats[ATTN_LLAMA_INV_FREQ].data;
    const float kept = inv[1], wrong[] = {1.5f, -1e-3f, NAN};
    for (int i = 0; i < 3; i++) {
        inv[1] = wrong[i];
        CHECK(attn_llama_check(&md.cfg, md.table) == ATTN_ERR_RANGE, "inv_freq %g", (double)wrong[i]);
    }
    inv[1] = 1.0f;
    CHECK(attn_llama_check(&md.cfg, md.table) == ATTN_OK, "inv_freq 1");
    inv[1] = kept;
    bad = md.cfg; bad.n_positions = ATTN_ROPE_MAX_POSITION + 8;
    float cache[4], ws[4];   // never touched: the positions are refused first
    CHECK(attn_llama_forward(NULL, NULL, NULL, NULL, cache, ws, &bad, md.table, ids, 1, ATTN_ROPE_MAX_POSITION,
                             ATTN_ROPE_MAX_POSITION + 8, 0) == ATTN_ERR_RANGE, "position 2^20");
    CHECK(attn_llama_cache_size(&md.cfg, 0) == 0 && attn_llama_workspace_size(&md.cfg, 0, 1) == 0, "sizes of nothing");
    bad = md.cfg; bad.n_layer = 1 << 30; bad.n_kv_head = 1 << 30; bad.n_head = 1 << 30;
    CHECK(attn_llama_cache_size(&bad, 1 << 30) == 0, "a cache that does not fit");
    free_state(&rs); free_model(&md);
}

int main(void) {
    test_widen();
    test_linear();
    test_panel8();
    test_against_reference(ATTN_F32, 0, 4, 4, 6);              // GQA ratio 1
    test_against_reference(ATTN_BF16, BIAS | TIED, 4, 2, 6);    // ratio 2, Qwen2-like
    test_against_reference(ATTN_F16, QKNORM | TIED, 4, 1, 8);   // ratio 4, Qwen3-like, D·H ≠ C
    test_against_reference(ATTN_BF16, BIAS | QKNORM, 2, 2, 4);
    attn_set_threads(3);   // heads and columns split in 3 parts: the workspace grows with them (ASan)
    test_against_reference(ATTN_BF16, BIAS | TIED, 4, 2, 6);
    test_against_reference(ATTN_F16, QKNORM | TIED, 4, 1, 8);
    attn_set_threads(1);
    test_cache_move();
    test_errors();
    printf("test_llama: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
