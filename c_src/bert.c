// bert.c - BERT's encoder and its masked-LM head; see bert.h for the model, shapes and statuses.
//
// Sections: sizes and layouts; the layers' pieces (embeddings, exact gelu, bidirectional
// attention under a key mask); the forward pass. The products are linear.c's (weights in their
// own dtype, widened as they are read), LayerNorm is gpt2.c's (internal.h), attention itself is
// attention.c's, one head at a time in heads.c's job.
#include "bert.h"
#include "heads.h"     // attn_heads_run
#include "internal.h"  // fits, all_finite, layernorm
#include "parallel.h"  // attn_linear_t_par, attn_cols_*, attn_threads (a scratch per thread)

#include <math.h>
#include <string.h>

static int max_int(int a, int b) { return a > b ? a : b; }

static attn_status check_config(const attn_bert_config *cfg) {
    if (!cfg) return ATTN_ERR_NULL;
    if (cfg->n_layer < 1 || cfg->n_head < 1 || cfg->hidden < 1 || cfg->intermediate < 1 ||
        cfg->vocab_size < 1 || cfg->n_positions < 1 || cfg->n_types < 1) return ATTN_ERR_SIZE;
    if (cfg->hidden % cfg->n_head != 0) return ATTN_ERR_SIZE;
    if (!(cfg->eps > 0.0f) || !isfinite(cfg->eps)) return ATTN_ERR_RANGE;
    return ATTN_OK;
}

static const attn_tensor *layer_tensors(const attn_tensor *t, int l) {
    return t + ATTN_BERT_GLOBALS + (size_t)l * ATTN_BERT_PER_LAYER;
}

// a matrix: there, of a known dtype; a vector: there, F32
static attn_status matrix_status(const attn_tensor *t) {
    return !t->data ? ATTN_ERR_NULL : attn_dtype_size(t->dtype) ? ATTN_OK : ATTN_ERR_FLAGS;
}
static attn_status vector_status(const attn_tensor *t) {
    return !t->data ? ATTN_ERR_NULL : t->dtype == ATTN_F32 ? ATTN_OK : ATTN_ERR_FLAGS;
}

// the first status that is not ATTN_OK among count kinds of t, each a matrix or a vector
static attn_status kinds_status(const attn_tensor *t, const int *kinds, const int *matrix, size_t count) {
    for (size_t i = 0; i < count; i++) {
        const attn_status st = matrix[i] ? matrix_status(&t[kinds[i]]) : vector_status(&t[kinds[i]]);
        if (st != ATTN_OK) return st;
    }
    return ATTN_OK;
}

static int has_head(const attn_tensor *t) { return t[ATTN_BERT_HEAD_W].data != NULL; }

attn_status attn_bert_check(const attn_bert_config *cfg, const attn_tensor *t) {
    attn_status st = check_config(cfg);
    if (st != ATTN_OK) return st;
    if (!t) return ATTN_ERR_NULL;
    static const int globals[] = {ATTN_BERT_WORD, ATTN_BERT_POSITION, ATTN_BERT_TYPE, ATTN_BERT_EMB_LN_W, ATTN_BERT_EMB_LN_B};
    static const int globals_matrix[] = {1, 1, 1, 0, 0};
    static const int head[] = {ATTN_BERT_HEAD_W, ATTN_BERT_HEAD_B, ATTN_BERT_HEAD_LN_W, ATTN_BERT_HEAD_LN_B, ATTN_BERT_DECODER_B};
    static const int head_matrix[] = {1, 0, 0, 0, 0};
    static const int layer[ATTN_BERT_PER_LAYER] = {
        ATTN_BERT_WQ, ATTN_BERT_BQ, ATTN_BERT_WK, ATTN_BERT_BK, ATTN_BERT_WV, ATTN_BERT_BV, ATTN_BERT_WO, ATTN_BERT_BO,
        ATTN_BERT_LN1_W, ATTN_BERT_LN1_B, ATTN_BERT_WI, ATTN_BERT_BI, ATTN_BERT_WO2, ATTN_BERT_BO2, ATTN_BERT_LN2_W, ATTN_BERT_LN2_B};
    static const int layer_matrix[ATTN_BERT_PER_LAYER] = {1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0};
    st = kinds_status(t, globals, globals_matrix, 5);
    if (st == ATTN_OK && has_head(t)) st = kinds_status(t, head, head_matrix, 5);
    for (int i = 1; st == ATTN_OK && !has_head(t) && i < 5; i++)
        if (t[head[i]].data) st = ATTN_ERR_NULL;   // a head without its dense weight
    for (int l = 0; st == ATTN_OK && l < cfg->n_layer; l++)
        st = kinds_status(layer_tensors(t, l), layer, layer_matrix, ATTN_BERT_PER_LAYER);
    return st;
}

// *total += rows·cols floats, then rounded up to 4 (each buffer 16-byte aligned); 0 when it
// would not fit in size_t bytes
static int add_floats(size_t *total, size_t rows, size_t cols) {
    if (!fits(rows, cols)) return 0;
    const size_t n = (rows * cols + 3) / 4 * 4;
    if (*total > ((size_t)-1 / sizeof(float)) - n) return 0;
    *total += n;
    return 1;
}

// The workspace: the residual stream h (T, C); x (T, C), a sum before its LayerNorm; q, k, v
// (T, C); y (T, C), the heads side by side; inter (T, F); one head's q, k, v and output (T, d);
// the key mask as attention.c takes it (T, T) bytes; attn_forward's workspace; linear.c's scratch.
typedef struct {
    float *h, *x, *q, *k, *v, *y, *inter, *scratch;
    uint8_t *mask;
    attn_heads_scratch heads;   // the heads' q, k, v, output and attn_forward's workspace, one per thread (scratch too)
} bert_buffers;

enum { N_BUFFERS = 14 };

static size_t workspace_layout(bert_buffers *ws, float *base, const attn_bert_config *cfg, int T) {
    if (check_config(cfg) != ATTN_OK || T < 1) return 0;
    const size_t t = (size_t)T, C = (size_t)cfg->hidden, F = (size_t)cfg->intermediate;
    const size_t d = C / (size_t)cfg->n_head, aws = attn_workspace_size(T, T, (int)d, (int)d);
    if (aws == 0) return 0;
    const size_t parts = (size_t)attn_threads(), tp = t * parts;
    const size_t rows[N_BUFFERS] = {t, t, t, t, t, t, t, tp, tp, tp, tp, t, (aws + 3) / 4,
                                    attn_linear_scratch_floats(max_int(cfg->hidden, cfg->intermediate))};
    const size_t cols[N_BUFFERS] = {C, C, C, C, C, C, F, d, d, d, d, (t + 3) / 4, parts, parts};
    size_t at[N_BUFFERS], total = 0;
    for (int i = 0; i < N_BUFFERS; i++) {
        at[i] = total;
        if (!add_floats(&total, rows[i], cols[i])) return 0;
    }
    if (base) {
        float *p[N_BUFFERS];
        for (int i = 0; i < N_BUFFERS; i++) p[i] = base + at[i];
        *ws = (bert_buffers){.h = p[0], .x = p[1], .q = p[2], .k = p[3], .v = p[4], .y = p[5], .inter = p[6],
                             .mask = (uint8_t *)p[11], .scratch = p[13],
                             .heads = {.qh = p[7], .kh = p[8], .vh = p[9], .oh = p[10], .aws = p[12], .aws_floats = (aws + 3) / 4}};
    }
    return total;
}

size_t attn_bert_workspace_size(const attn_bert_config *cfg, int T) {
    return workspace_layout(NULL, NULL, cfg, T) * sizeof(float);
}

// ----------------------------------------------------------------------------
// the layers' pieces

// x (T, C) = word[ids] + position[0 .. T) + type[types], each row widened (llama.c's embed, thrice);
// the sum in the order HF adds them: (word + type) + position
static void embed(float *x, float *row, const attn_tensor *t, const attn_bert_config *cfg,
                  const int32_t *ids, const int32_t *types, int T) {
    const int C = cfg->hidden;
    for (int i = 0; i < T; i++) {
        float *xi = x + (size_t)i * C;
        attn_widen_row(xi, t[ATTN_BERT_WORD].data, t[ATTN_BERT_WORD].dtype, ids[i], C, cfg->vocab_size);
        attn_widen_row(row, t[ATTN_BERT_TYPE].data, t[ATTN_BERT_TYPE].dtype, types ? types[i] : 0, C, cfg->n_types);
        for (int c = 0; c < C; c++) xi[c] += row[c];
        attn_widen_row(row, t[ATTN_BERT_POSITION].data, t[ATTN_BERT_POSITION].dtype, i, C, cfg->n_positions);
        for (int c = 0; c < C; c++) xi[c] += row[c];
    }
}

// x = x/2·(1 + erf(x/√2)), in place, each value through double and rounded once
static void gelu_erf(float *x, size_t count) {
    for (size_t i = 0; i < count; i++) {
        const double v = x[i];
        x[i] = (float)(0.5 * v * (1.0 + erf(v * 0.70710678118654752440)));
    }
}

// gelu_erf on a chunk's columns of x (n, p), every row (parallel.h's attn_cols_fn)
static int gelu_cols(void *ctx, float *x, int n, int p, int c0, int c1) {
    (void)ctx;
    for (int i = 0; i < n; i++) gelu_erf(x + (size_t)i * p + c0, (size_t)(c1 - c0));
    return ATTN_OK;
}

// out (T, p) = a (T, k)·wᵀ + b, w and b from the table, then after(ctx, …) on each chunk's
// columns (parallel.h); the job's status
static attn_status linear(float *out, const float *a, const attn_tensor *w, const attn_tensor *b, int T, int k, int p,
                          float *scratch, attn_cols_fn after, void *ctx) {
    return (attn_status)attn_linear_t_par(out, a, w->data, w->dtype, (const float *)b->data, T, k, p, scratch, after, ctx);
}

// h = LayerNorm(h; w, b), in place, h + y already added (the product's job, attn_cols_residual)
static attn_status norm(bert_buffers *ws, const attn_tensor *w, const attn_tensor *b, int T, int C, float eps) {
    layernorm(ws->h, ws->h, (const float *)w->data, (const float *)b->data, T, C, eps);
    return all_finite(ws->h, (size_t)T * C) ? ATTN_OK : ATTN_ERR_OVERFLOW;
}

// h = LayerNorm(h + self-attention(h)·woᵀ + bo; ln1) for layer l
static attn_status attention_block(bert_buffers *ws, float *attention, const int32_t *slots, const attn_heads_keep *keep,
                                   const attn_heads_plan *pl, const attn_bert_config *cfg, const attn_tensor *lt, int l) {
    const int T = pl->T;
    const int C = cfg->hidden;
    attn_status st = linear(ws->q, ws->h, &lt[ATTN_BERT_WQ], &lt[ATTN_BERT_BQ], T, C, C, ws->scratch, attn_cols_finite, NULL);
    if (st == ATTN_OK) st = linear(ws->k, ws->h, &lt[ATTN_BERT_WK], &lt[ATTN_BERT_BK], T, C, C, ws->scratch, attn_cols_finite, NULL);
    if (st == ATTN_OK) st = linear(ws->v, ws->h, &lt[ATTN_BERT_WV], &lt[ATTN_BERT_BV], T, C, C, ws->scratch, attn_cols_finite, NULL);
    const attn_heads_input in = {ws->q, ws->k, ws->v, C, C, NULL};
    if (st == ATTN_OK) st = attn_heads_run(ws->y, attention, slots, keep, l, pl, &ws->heads, &in);
    if (st == ATTN_OK) st = linear(ws->q, ws->y, &lt[ATTN_BERT_WO], &lt[ATTN_BERT_BO], T, C, C, ws->scratch, attn_cols_residual, ws->h);
    return st == ATTN_OK ? norm(ws, &lt[ATTN_BERT_LN1_W], &lt[ATTN_BERT_LN1_B], T, C, cfg->eps) : st;
}

// h = LayerNorm(h + gelu(h·wiᵀ + bi)·wo2ᵀ + bo2; ln2)
static attn_status mlp_block(bert_buffers *ws, const attn_bert_config *cfg, const attn_tensor *lt, int T) {
    const int C = cfg->hidden, F = cfg->intermediate;
    linear(ws->inter, ws->h, &lt[ATTN_BERT_WI], &lt[ATTN_BERT_BI], T, C, F, ws->scratch, gelu_cols, NULL);
    attn_status st = linear(ws->q, ws->inter, &lt[ATTN_BERT_WO2], &lt[ATTN_BERT_BO2], T, F, C, ws->scratch, attn_cols_residual, ws->h);
    return st == ATTN_OK ? norm(ws, &lt[ATTN_BERT_LN2_W], &lt[ATTN_BERT_LN2_B], T, C, cfg->eps) : st;
}

// logits (T, V) = LayerNorm(gelu(h·whᵀ + bh); head_ln)·wordᵀ + decoder_bias
static attn_status mlm_head(float *logits, bert_buffers *ws, const attn_bert_config *cfg, const attn_tensor *t, int T) {
    const int C = cfg->hidden;
    linear(ws->x, ws->h, &t[ATTN_BERT_HEAD_W], &t[ATTN_BERT_HEAD_B], T, C, C, ws->scratch, gelu_cols, NULL);
    layernorm(ws->q, ws->x, (const float *)t[ATTN_BERT_HEAD_LN_W].data, (const float *)t[ATTN_BERT_HEAD_LN_B].data,
              T, C, cfg->eps);
    return linear(logits, ws->q, &t[ATTN_BERT_WORD], &t[ATTN_BERT_DECODER_B], T, C, cfg->vocab_size, ws->scratch,
                  attn_cols_finite, NULL);
}

// ----------------------------------------------------------------------------
// the forward pass

static attn_status check_forward(const float *logits, const float *attention, const int32_t *slots,
                                 const float *workspace, const attn_bert_config *cfg, const attn_tensor *t,
                                 const int32_t *ids, const int32_t *types, const uint8_t *key_mask, int T) {
    if (!workspace || !ids) return ATTN_ERR_NULL;
    attn_status st = attn_bert_check(cfg, t);
    if (st != ATTN_OK) return st;
    if (logits && !has_head(t)) return ATTN_ERR_NULL;
    if (T < 1) return ATTN_ERR_SIZE;
    if (T > cfg->n_positions) return ATTN_ERR_RANGE;
    int kept = 0;
    for (int i = 0; i < T; i++) {
        if (ids[i] < 0 || ids[i] >= cfg->vocab_size) return ATTN_ERR_RANGE;
        if (types && (types[i] < 0 || types[i] >= cfg->n_types)) return ATTN_ERR_RANGE;
        kept += !key_mask || key_mask[i];
    }
    if (kept == 0) return ATTN_ERR_RANGE;
    const long blocks = attention_blocks(slots, (long)cfg->n_layer * cfg->n_head);
    if (blocks < 0) return ATTN_ERR_RANGE;
    if (attention && (!fits((size_t)blocks, (size_t)T) || !fits((size_t)blocks * T, (size_t)T))) return ATTN_ERR_TOO_LARGE;
    if (!fits((size_t)T, (size_t)cfg->vocab_size) || attn_bert_workspace_size(cfg, T) == 0) return ATTN_ERR_TOO_LARGE;
    return ATTN_OK;
}

attn_status attn_bert_forward(float *hidden, float *logits, float *attention, const int32_t *slots,
                              const attn_heads_keep *keep, float *workspace, const attn_bert_config *cfg,
                              const attn_tensor *t, const int32_t *ids, const int32_t *types,
                              const uint8_t *key_mask, int T) {
    attn_status st = check_forward(logits, attention, slots, workspace, cfg, t, ids, types, key_mask, T);
    if (st != ATTN_OK) return st;
    bert_buffers ws;
    workspace_layout(&ws, workspace, cfg, T);
    const int C = cfg->hidden;
    for (int i = 0; i < T; i++)           // every query sees the keys the mask keeps
        for (int j = 0; j < T; j++) ws.mask[(size_t)i * T + j] = !key_mask || key_mask[j];
    // every head over all T keys the mask keeps (heads.h: no cache)
    const attn_heads_plan pl = {T, 0, T, T, cfg->n_head, cfg->n_head, C / cfg->n_head, 0, ws.mask};
    st = attn_heads_begin(keep, &pl, key_mask);

    // 1. the embeddings (word, type, position), then their LayerNorm
    embed(ws.x, ws.y, t, cfg, ids, types, T);
    layernorm(ws.h, ws.x, (const float *)t[ATTN_BERT_EMB_LN_W].data, (const float *)t[ATTN_BERT_EMB_LN_B].data,
              T, C, cfg->eps);
    if (st == ATTN_OK && !all_finite(ws.h, (size_t)T * C)) st = ATTN_ERR_OVERFLOW;
    // 2. the layers: attention, then the MLP, each followed by its LayerNorm (post-LN)
    for (int l = 0; l < cfg->n_layer && st == ATTN_OK; l++) {
        const attn_tensor *lt = layer_tensors(t, l);
        st = attention_block(&ws, attention, slots, keep, &pl, cfg, lt, l);
        if (st == ATTN_OK) st = mlp_block(&ws, cfg, lt, T);
    }
    // 3. the outputs: the last hidden states, the masked-LM logits
    if (st == ATTN_OK && hidden) memcpy(hidden, ws.h, (size_t)T * C * sizeof *hidden);
    if (st == ATTN_OK && logits) st = mlm_head(logits, &ws, cfg, t, T);
    return st;
}
