// test_bert.c - native tests of BERT's encoder (c_src/bert.c), under ASan + UBSan by
// `make -C c_src test`.
//
//   - random small models (every dtype, 1 to 3 layers, with and without the masked-LM head)
//     against a plain float64 forward pass written here from bert.h's description (no code of
//     bert.c): hidden states, logits and every head's attention;
//   - token types and a key mask (padding): a dropped key gets weight 0 in every row, and the
//     kept rows equal the unpadded text's;
//   - slots, and every bad input's status.
// Buffers are malloc'ed at their exact sizes, so ASan catches any write past them.
#include "bert.h"
#include "parallel.h"  // the forward passes again with their work in 3 parts (run one after the other here)

#define TEST_SEED 0xBE27C0DEull
#include "check.h"
#include "typed.h"

typedef struct {
    attn_bert_config cfg;
    attn_tensor *table;
    typed *mats;        // every tensor, as stored and as doubles (vectors: F32)
    int count;
} model;

static int is_norm_weight(int global, int kind) {
    return global ? kind == ATTN_BERT_EMB_LN_W || kind == ATTN_BERT_HEAD_LN_W : kind == ATTN_BERT_LN1_W || kind == ATTN_BERT_LN2_W;
}

static void put(model *md, int at, size_t count, int dtype, float r, int norm) {
    md->mats[at] = random_typed(count, dtype, r);
    if (norm) for (size_t i = 0; i < count; i++) md->mats[at].value[i] = ((float *)md->mats[at].data)[i] += 1.0f;
    md->table[at] = (attn_tensor){md->mats[at].data, md->mats[at].dtype};
}

static model random_model(int L, int H, int C, int F, int V, int P, int Y, int dtype, int head) {
    model md = {.cfg = {L, H, C, F, V, P, Y, 1e-12f}, .count = ATTN_BERT_GLOBALS + L * ATTN_BERT_PER_LAYER};
    md.table = calloc((size_t)md.count, sizeof *md.table);
    md.mats = calloc((size_t)md.count, sizeof *md.mats);
    const size_t c = (size_t)C, f = (size_t)F;
    const struct { int kind; size_t count; int matrix; float r; } globals[] = {
        {ATTN_BERT_WORD, (size_t)V * c, 1, 1.0f}, {ATTN_BERT_POSITION, (size_t)P * c, 1, 0.5f},
        {ATTN_BERT_TYPE, (size_t)Y * c, 1, 0.5f}, {ATTN_BERT_EMB_LN_W, c, 0, 0.2f}, {ATTN_BERT_EMB_LN_B, c, 0, 0.1f},
        {ATTN_BERT_HEAD_W, c * c, 1, 1.5f / sqrtf((float)C)}, {ATTN_BERT_HEAD_B, c, 0, 0.1f},
        {ATTN_BERT_HEAD_LN_W, c, 0, 0.2f}, {ATTN_BERT_HEAD_LN_B, c, 0, 0.1f}, {ATTN_BERT_DECODER_B, (size_t)V, 0, 0.3f},
    };
    for (size_t s = 0; s < sizeof globals / sizeof *globals; s++) {
        if (!head && globals[s].kind >= ATTN_BERT_HEAD_W) continue;
        put(&md, globals[s].kind, globals[s].count, globals[s].matrix ? dtype : ATTN_F32, globals[s].r, is_norm_weight(1, globals[s].kind));
    }
    const float rc = 1.5f / sqrtf((float)C), rf = 1.0f / sqrtf((float)F);
    const struct { size_t count; int matrix; float r; } layer[ATTN_BERT_PER_LAYER] = {
        {c * c, 1, rc}, {c, 0, 0.3f}, {c * c, 1, rc}, {c, 0, 0.3f}, {c * c, 1, rc}, {c, 0, 0.1f},   // q, k, v
        {c * c, 1, rc}, {c, 0, 0.05f}, {c, 0, 0.2f}, {c, 0, 0.1f},                               // o, ln1
        {f * c, 1, rc}, {f, 0, 0.1f}, {c * f, 1, rf}, {c, 0, 0.05f}, {c, 0, 0.2f}, {c, 0, 0.1f},  // i, o2, ln2
    };
    for (int l = 0; l < L; l++)
        for (int k = 0; k < ATTN_BERT_PER_LAYER; k++)
            put(&md, ATTN_BERT_GLOBALS + l * ATTN_BERT_PER_LAYER + k, layer[k].count, layer[k].matrix ? dtype : ATTN_F32,
                layer[k].r, is_norm_weight(0, k));
    return md;
}

static void free_model(model *md) {
    for (int i = 0; i < md->count; i++) if (md->mats[i].data) free_typed(&md->mats[i]);
    free(md->mats); free(md->table);
}

static const double *val(const model *md, int l, int kind) {
    return md->mats[l < 0 ? kind : ATTN_BERT_GLOBALS + l * ATTN_BERT_PER_LAYER + kind].value;
}

// ----------------------------------------------------------------------------
// the float64 reference

// out (rows, p) = x (rows, k)·wᵀ + b
static void ref_linear(double *out, const double *x, const double *w, const double *b, int rows, int k, int p) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < p; j++) {
            double s = b[j];
            for (int t = 0; t < k; t++) s += x[(size_t)i * k + t] * w[(size_t)j * k + t];
            out[(size_t)i * p + j] = s;
        }
}

// x (rows, n) = LayerNorm(x; w, b), in place
static void ref_ln(double *x, const double *w, const double *b, int rows, int n, double eps) {
    for (int i = 0; i < rows; i++) {
        double *r = x + (size_t)i * n, mean = 0, var = 0;
        for (int c = 0; c < n; c++) mean += r[c] / n;
        for (int c = 0; c < n; c++) var += (r[c] - mean) * (r[c] - mean) / n;
        for (int c = 0; c < n; c++) r[c] = (r[c] - mean) / sqrt(var + eps) * w[c] + b[c];
    }
}

static void ref_gelu(double *x, size_t count) {
    for (size_t i = 0; i < count; i++) x[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0)));
}

// y (n, C) = the heads' attention over the keys keep[] keeps; att (H, n, n)
static void ref_attention(double *y, double *att, const double *q, const double *k, const double *v,
                          const uint8_t *keep, int n, int C, int H) {
    const int d = C / H;
    for (int hd = 0; hd < H; hd++)
        for (int i = 0; i < n; i++) {
            double *a = att + ((size_t)hd * n + i) * n, mx = -INFINITY, sum = 0;
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int t = 0; t < d; t++) s += q[(size_t)i * C + hd * d + t] * k[(size_t)j * C + hd * d + t];
                a[j] = keep[j] ? s / sqrt(d) : -INFINITY;
                mx = fmax(mx, a[j]);
            }
            for (int j = 0; j < n; j++) sum += (a[j] = keep[j] ? exp(a[j] - mx) : 0);
            for (int j = 0; j < n; j++) a[j] /= sum;
            for (int t = 0; t < d; t++) {
                double o = 0;
                for (int j = 0; j < n; j++) o += a[j] * v[(size_t)j * C + hd * d + t];
                y[(size_t)i * C + hd * d + t] = o;
            }
        }
}

static void reference(double *hidden, double *logits, double *att, const model *md, const int32_t *ids,
                      const int32_t *types, const uint8_t *keep, int n) {
    const attn_bert_config *c = &md->cfg;
    const int C = c->hidden, F = c->intermediate, H = c->n_head, V = c->vocab_size;
    const size_t nc = (size_t)n * C;
    double *h = malloc(nc * 8), *q = malloc(nc * 8), *k = malloc(nc * 8), *v = malloc(nc * 8), *y = malloc(nc * 8);
    double *in = malloc((size_t)n * F * 8);
    for (int i = 0; i < n; i++)
        for (int t = 0; t < C; t++)
            h[(size_t)i * C + t] = val(md, -1, ATTN_BERT_WORD)[(size_t)ids[i] * C + t] +
                                   val(md, -1, ATTN_BERT_TYPE)[(size_t)types[i] * C + t] + val(md, -1, ATTN_BERT_POSITION)[(size_t)i * C + t];
    ref_ln(h, val(md, -1, ATTN_BERT_EMB_LN_W), val(md, -1, ATTN_BERT_EMB_LN_B), n, C, c->eps);
    for (int l = 0; l < c->n_layer; l++) {
        ref_linear(q, h, val(md, l, ATTN_BERT_WQ), val(md, l, ATTN_BERT_BQ), n, C, C);
        ref_linear(k, h, val(md, l, ATTN_BERT_WK), val(md, l, ATTN_BERT_BK), n, C, C);
        ref_linear(v, h, val(md, l, ATTN_BERT_WV), val(md, l, ATTN_BERT_BV), n, C, C);
        ref_attention(y, att + (size_t)l * H * n * n, q, k, v, keep, n, C, H);
        ref_linear(q, y, val(md, l, ATTN_BERT_WO), val(md, l, ATTN_BERT_BO), n, C, C);
        for (size_t i = 0; i < nc; i++) h[i] += q[i];
        ref_ln(h, val(md, l, ATTN_BERT_LN1_W), val(md, l, ATTN_BERT_LN1_B), n, C, c->eps);
        ref_linear(in, h, val(md, l, ATTN_BERT_WI), val(md, l, ATTN_BERT_BI), n, C, F);
        ref_gelu(in, (size_t)n * F);
        ref_linear(q, in, val(md, l, ATTN_BERT_WO2), val(md, l, ATTN_BERT_BO2), n, F, C);
        for (size_t i = 0; i < nc; i++) h[i] += q[i];
        ref_ln(h, val(md, l, ATTN_BERT_LN2_W), val(md, l, ATTN_BERT_LN2_B), n, C, c->eps);
    }
    memcpy(hidden, h, nc * 8);
    if (logits) {
        ref_linear(q, h, val(md, -1, ATTN_BERT_HEAD_W), val(md, -1, ATTN_BERT_HEAD_B), n, C, C);
        ref_gelu(q, nc);
        ref_ln(q, val(md, -1, ATTN_BERT_HEAD_LN_W), val(md, -1, ATTN_BERT_HEAD_LN_B), n, C, c->eps);
        ref_linear(logits, q, val(md, -1, ATTN_BERT_WORD), val(md, -1, ATTN_BERT_DECODER_B), n, C, V);
    }
    free(h); free(q); free(k); free(v); free(y); free(in);
}

// ----------------------------------------------------------------------------
// runs

typedef struct { float *hidden, *logits, *att; } outputs;

static outputs new_outputs(const model *md, int n) {
    const attn_bert_config *c = &md->cfg;
    return (outputs){malloc((size_t)n * c->hidden * sizeof(float)), malloc((size_t)n * c->vocab_size * sizeof(float)),
                     malloc((size_t)c->n_layer * c->n_head * n * n * sizeof(float))};
}
static void free_outputs(outputs *o) { free(o->hidden); free(o->logits); free(o->att); }

static attn_status run(outputs *o, const model *md, const int32_t *ids, const int32_t *types, const uint8_t *keep,
                       int n, const int32_t *slots, int with_logits) {
    float *ws = malloc(attn_bert_workspace_size(&md->cfg, n));
    attn_status st = attn_bert_forward(o->hidden, with_logits ? o->logits : NULL, o->att, slots, NULL, ws, &md->cfg, md->table,
                                       ids, types, keep, n);
    free(ws);
    return st;
}

static void test_against_reference(int L, int dtype, int head, int padded) {
    const int H = 2, C = 8, F = 12, V = 11, n = 7;
    model md = random_model(L, H, C, F, V, 9, 2, dtype, head);
    CHECK(attn_bert_check(&md.cfg, md.table) == ATTN_OK, "check");
    int32_t ids[7], types[7];
    uint8_t keep[7];
    for (int i = 0; i < n; i++) {
        ids[i] = randint(0, V - 1);
        types[i] = i >= 4;                     // a pair: [CLS] A A [SEP] B B [SEP]
        keep[i] = !padded || i < n - 2;        // the last two are padding
    }
    double *hidden = malloc((size_t)n * C * 8), *logits = malloc((size_t)n * V * 8), *att = malloc((size_t)L * H * n * n * 8), diff;
    reference(hidden, head ? logits : NULL, att, &md, ids, types, keep, n);
    outputs o = new_outputs(&md, n);
    attn_status st = run(&o, &md, ids, types, padded ? keep : NULL, n, NULL, head);
    CHECK(st == ATTN_OK, "forward: %s", attn_status_string(st));
    long bad = compare64(o.hidden, hidden, (size_t)n * C, &diff);
    CHECK(bad < 0, "hidden (L %d dtype %d head %d padded %d): first bad %ld, max diff %g", L, dtype, head, padded, bad, diff);
    if (head) {
        bad = compare64(o.logits, logits, (size_t)n * V, &diff);
        CHECK(bad < 0, "logits (L %d dtype %d padded %d): first bad %ld, max diff %g", L, dtype, padded, bad, diff);
    }
    bad = compare64(o.att, att, (size_t)L * H * n * n, &diff);
    CHECK(bad < 0, "attention (L %d dtype %d padded %d): first bad %ld, max diff %g", L, dtype, padded, bad, diff);
    if (padded) {   // the kept rows are the unpadded text's, to the float tolerance
        outputs u = new_outputs(&md, n - 2);
        CHECK(run(&u, &md, ids, types, NULL, n - 2, NULL, 0) == ATTN_OK, "unpadded");
        double d = 0;
        for (size_t i = 0; i < (size_t)(n - 2) * C; i++) d = fmax(d, fabs(u.hidden[i] - o.hidden[i]));
        CHECK(d <= 1e-5, "padding changed the real tokens' states by %g", d);
        free_outputs(&u);
    }
    // slots: the last layer's second head alone, into block 0: the same bits
    int32_t *slots = malloc((size_t)L * H * sizeof *slots);
    for (int i = 0; i < L * H; i++) slots[i] = -1;
    slots[L * H - 1] = 0;
    float *all = malloc((size_t)L * H * n * n * sizeof(float));
    memcpy(all, o.att, (size_t)L * H * n * n * sizeof(float));
    st = run(&o, &md, ids, types, padded ? keep : NULL, n, slots, 0);
    CHECK(st == ATTN_OK && memcmp(o.att, all + (size_t)(L * H - 1) * n * n, (size_t)n * n * sizeof(float)) == 0, "slots: the one head's bits");
    free(all); free(slots); free(hidden); free(logits); free(att); free_outputs(&o); free_model(&md);
}

static void test_errors(void) {
    model md = random_model(1, 2, 8, 6, 5, 6, 2, ATTN_F32, 1);
    outputs o = new_outputs(&md, 7);
    int32_t ids[7] = {1, 2, 3, 4, 0, 1, 2}, types[7] = {0, 0, 1, 1, 0, 0, 0};
    uint8_t none[7] = {0};
    CHECK(run(&o, &md, ids, types, NULL, 4, NULL, 1) == ATTN_OK, "a good call");
    CHECK(run(&o, &md, ids, types, NULL, 7, NULL, 1) == ATTN_ERR_RANGE, "more tokens than the 6 positions");
    CHECK(run(&o, &md, ids, types, none, 4, NULL, 1) == ATTN_ERR_RANGE, "a mask that keeps no key");
    types[1] = 2;
    CHECK(run(&o, &md, ids, types, NULL, 4, NULL, 1) == ATTN_ERR_RANGE, "a type = Y");
    types[1] = 0; ids[2] = 5;
    CHECK(run(&o, &md, ids, types, NULL, 4, NULL, 1) == ATTN_ERR_RANGE, "an id = V");
    ids[2] = 3;
    md.table[ATTN_BERT_HEAD_LN_B].data = NULL;
    CHECK(attn_bert_check(&md.cfg, md.table) == ATTN_ERR_NULL, "a head without its LayerNorm bias");
    for (int k = ATTN_BERT_HEAD_W; k <= ATTN_BERT_DECODER_B; k++) md.table[k].data = NULL;
    CHECK(attn_bert_check(&md.cfg, md.table) == ATTN_OK, "no head at all: an encoder");
    CHECK(run(&o, &md, ids, types, NULL, 4, NULL, 1) == ATTN_ERR_NULL, "logits asked of an encoder without a head");
    CHECK(run(&o, &md, ids, NULL, NULL, 4, NULL, 0) == ATTN_OK, "hidden states of an encoder, types all 0");
    md.table[ATTN_BERT_GLOBALS + ATTN_BERT_WQ].dtype = 9;
    CHECK(attn_bert_check(&md.cfg, md.table) == ATTN_ERR_FLAGS, "an unknown dtype");
    md.table[ATTN_BERT_GLOBALS + ATTN_BERT_WQ].dtype = ATTN_F32;
    md.table[ATTN_BERT_GLOBALS + ATTN_BERT_LN2_B].dtype = ATTN_BF16;
    CHECK(attn_bert_check(&md.cfg, md.table) == ATTN_ERR_FLAGS, "a LayerNorm that is not F32");
    md.table[ATTN_BERT_GLOBALS + ATTN_BERT_LN2_B].dtype = ATTN_F32;
    attn_bert_config bad = md.cfg;
    bad.n_head = 3;
    CHECK(attn_bert_check(&bad, md.table) == ATTN_ERR_SIZE, "C not a multiple of H");
    bad = md.cfg; bad.eps = 0;
    CHECK(attn_bert_check(&bad, md.table) == ATTN_ERR_RANGE, "eps 0");
    bad = md.cfg; bad.n_types = 0;
    CHECK(attn_bert_check(&bad, md.table) == ATTN_ERR_SIZE, "no token types");
    CHECK(attn_bert_workspace_size(&md.cfg, 0) == 0, "a workspace for nothing");
    bad = md.cfg; bad.hidden = 1 << 30; bad.n_head = 1;
    CHECK(attn_bert_workspace_size(&bad, 1 << 30) == 0, "a workspace that does not fit");
    free_outputs(&o); free_model(&md);
}

int main(void) {
    test_against_reference(1, ATTN_F32, 1, 0);
    test_against_reference(2, ATTN_BF16, 1, 1);
    test_against_reference(3, ATTN_F16, 0, 1);
    test_against_reference(2, ATTN_F32, 1, 1);
    attn_set_threads(3);   // heads and columns split in 3 parts: the workspace grows with them (ASan)
    test_against_reference(2, ATTN_BF16, 1, 1);
    test_against_reference(3, ATTN_F16, 0, 1);
    attn_set_threads(1);
    test_errors();
    printf("test_bert: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
