// llama.c - the LLaMA family's forward pass with a KV cache; see llama.h for the model, shapes
// and statuses.
//
// Sections: sizes and layouts; the layers' pieces (embedding, RMSNorm, SiLU, attention over the
// cache with grouped keys and values); the forward pass. RoPE is rope.c's (its table of cosines
// and sines, its rotation). The products are linear.c's (attn_linear_t_fast: weights in their own
// dtype, widened as they are read); attention itself is attention.c's, one query head at a time
// in heads.c's job, as gpt2.c and bert.c run it.
#include "llama.h"
#include "heads.h"     // attn_heads_causal, attn_heads_run
#include "internal.h"  // v4f, load4, store4, splat, exp4, select4, fits, all_finite, attn_rope_cos_sin,
                       // attn_rope_rotate_fast
#include "parallel.h"  // attn_linear_t_par(_gated), attn_cols_*, attn_threads (a scratch per thread)

#include <math.h>
#include <string.h>

static int max_int(int a, int b) { return a > b ? a : b; }

static attn_status check_config(const attn_llama_config *cfg) {
    if (!cfg) return ATTN_ERR_NULL;
    if (cfg->n_layer < 1 || cfg->n_head < 1 || cfg->n_kv_head < 1 || cfg->head_dim < 2 || cfg->hidden < 1 ||
        cfg->intermediate < 1 || cfg->vocab_size < 1 || cfg->n_positions < 1) return ATTN_ERR_SIZE;
    if (cfg->n_head % cfg->n_kv_head != 0 || cfg->head_dim % 2 != 0) return ATTN_ERR_SIZE;
    if (!(cfg->eps > 0.0f) || !isfinite(cfg->eps)) return ATTN_ERR_RANGE;
    return ATTN_OK;
}

static const attn_tensor *layer_tensors(const attn_tensor *t, int l) {
    return t + ATTN_LLAMA_GLOBALS + (size_t)l * ATTN_LLAMA_PER_LAYER;
}

// a matrix of rows of k values: there, of a known dtype, its rows whole blocks (quantized types);
// a vector: F32 (or absent when optional)
static int matrix_ok(const attn_tensor *t, int k) { return t->data && attn_row_bytes(t->dtype, k) != 0; }
static int vector_ok(const attn_tensor *t, int optional) { return t->data ? t->dtype == ATTN_F32 : optional; }

attn_status attn_llama_check(const attn_llama_config *cfg, const attn_tensor *t) {
    attn_status st = check_config(cfg);
    if (st != ATTN_OK) return st;
    if (!t || !t[ATTN_LLAMA_EMBED].data || !t[ATTN_LLAMA_NORM].data || !t[ATTN_LLAMA_INV_FREQ].data) return ATTN_ERR_NULL;
    if (!matrix_ok(&t[ATTN_LLAMA_EMBED], cfg->hidden) || (t[ATTN_LLAMA_LM_HEAD].data && !matrix_ok(&t[ATTN_LLAMA_LM_HEAD], cfg->hidden)) ||
        !vector_ok(&t[ATTN_LLAMA_NORM], 0) || !vector_ok(&t[ATTN_LLAMA_INV_FREQ], 0)) return ATTN_ERR_FLAGS;
    const float *inv_freq = t[ATTN_LLAMA_INV_FREQ].data;   // rope.c's angles need θ in [0, 1]
    for (int i = 0; i < cfg->head_dim / 2; i++)
        if (!(inv_freq[i] >= 0.0f && inv_freq[i] <= 1.0f)) return ATTN_ERR_RANGE;
    static const int matrices[] = {ATTN_LLAMA_WQ, ATTN_LLAMA_WK, ATTN_LLAMA_WV, ATTN_LLAMA_WO, ATTN_LLAMA_WGATE, ATTN_LLAMA_WUP, ATTN_LLAMA_WDOWN};
    static const int required[] = {ATTN_LLAMA_LN1, ATTN_LLAMA_LN2};
    static const int optional[] = {ATTN_LLAMA_BQ, ATTN_LLAMA_BK, ATTN_LLAMA_BV, ATTN_LLAMA_QNORM, ATTN_LLAMA_KNORM,
                                   ATTN_LLAMA_BO, ATTN_LLAMA_BGATE, ATTN_LLAMA_BUP, ATTN_LLAMA_BDOWN};
    for (int l = 0; l < cfg->n_layer; l++) {
        const attn_tensor *lt = layer_tensors(t, l);
        for (size_t i = 0; i < sizeof matrices / sizeof *matrices; i++) {
            if (!lt[matrices[i]].data) return ATTN_ERR_NULL;
            const long long hd = (long long)cfg->n_head * cfg->head_dim;   // W_o's rows (clamped: only whole blocks matter)
            const int k = matrices[i] == ATTN_LLAMA_WO ? (hd > 0x7fffffff ? 0x7fffffff : (int)hd) : matrices[i] == ATTN_LLAMA_WDOWN ? cfg->intermediate : cfg->hidden;
            if (!matrix_ok(&lt[matrices[i]], k)) return ATTN_ERR_FLAGS;
        }
        for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
            if (!lt[required[i]].data) return ATTN_ERR_NULL;
            if (!vector_ok(&lt[required[i]], 0)) return ATTN_ERR_FLAGS;
        }
        for (size_t i = 0; i < sizeof optional / sizeof *optional; i++)
            if (!vector_ok(&lt[optional[i]], 1)) return ATTN_ERR_FLAGS;
        if (!lt[ATTN_LLAMA_QNORM].data != !lt[ATTN_LLAMA_KNORM].data) return ATTN_ERR_NULL;
    }
    return ATTN_OK;
}

// *total += rows·cols floats, 0 when it would not fit in size_t bytes
static int add_floats(size_t *total, size_t rows, size_t cols) {
    if (!fits(rows, cols)) return 0;
    const size_t n = rows * cols;
    if (*total > ((size_t)-1 / sizeof(float)) - n) return 0;
    *total += n;
    return 1;
}

size_t attn_llama_cache_size(const attn_llama_config *cfg, int S) {
    size_t total = 0;
    if (check_config(cfg) != ATTN_OK || S < 1) return 0;
    const size_t blocks = (size_t)cfg->n_layer * 2 * (size_t)cfg->n_kv_head;
    if (!fits(blocks, (size_t)S) || !add_floats(&total, blocks * (size_t)S, (size_t)cfg->head_dim)) return 0;
    return total * sizeof(float);
}

// The workspace: the residual stream h (T, C); x (T, C), RMSNorm's output and the products';
// q (T, H·D), k and v (T, G·D); y (T, H·D), the heads side by side; gate and up (T, F); one
// head's q and output (T, D); RoPE's cos and sin (T, D/2); the causal mask (T, m) bytes;
// attn_forward's workspace; linear.c's scratch for widening weights.
typedef struct {
    float *h, *x, *q, *k, *v, *y, *gate, *up, *cos, *sin, *scratch;
    uint8_t *mask;
    attn_heads_scratch heads;   // qh, oh and attn_forward's workspace, one per thread (scratch too)
} llama_buffers;

static size_t workspace_layout(llama_buffers *ws, float *base, const attn_llama_config *cfg, int T, int m) {
    if (check_config(cfg) != ATTN_OK || T < 1 || m < T) return 0;
    const size_t t = (size_t)T, C = (size_t)cfg->hidden, D = (size_t)cfg->head_dim, F = (size_t)cfg->intermediate;
    const size_t HD = (size_t)cfg->n_head * D, GD = (size_t)cfg->n_kv_head * D;
    const size_t aws = attn_workspace_size(T, m, (int)D, (int)D);
    if (aws == 0 || !fits((size_t)cfg->n_head, D)) return 0;
    const int kmax = max_int(max_int(cfg->hidden, cfg->intermediate), cfg->n_head * cfg->head_dim);
    const size_t parts = (size_t)attn_threads();   // threads: a scratch each
    const size_t rows[15] = {t, t, t, t, t, t, t, t, t * parts, t * parts, t, t, t, (aws + 3) / 4, attn_linear_scratch_floats(kmax)};
    const size_t cols[15] = {C, C, HD, GD, GD, HD, F, F, D, D, D / 2, D / 2, ((size_t)m + 3) / 4, parts, parts};
    size_t at[15], total = 0;
    for (int i = 0; i < 15; i++) {
        at[i] = total;
        if (!add_floats(&total, rows[i], cols[i]) || !add_floats(&total, 3, 1)) return 0;
        total &= ~(size_t)3;   // each buffer 16-byte aligned
    }
    if (base) {
        float *p[15];
        for (int i = 0; i < 15; i++) p[i] = base + at[i];
        *ws = (llama_buffers){.h = p[0], .x = p[1], .q = p[2], .k = p[3], .v = p[4], .y = p[5], .gate = p[6], .up = p[7],
                              .cos = p[10], .sin = p[11], .mask = (uint8_t *)p[12], .scratch = p[14],
                              .heads = {.qh = p[8], .oh = p[9], .aws = p[13], .aws_floats = (aws + 3) / 4}};
    }
    return total;
}

size_t attn_llama_workspace_size(const attn_llama_config *cfg, int T, int m) {
    return workspace_layout(NULL, NULL, cfg, T, m) * sizeof(float);
}

attn_status attn_cache_move(float *dst, int S_dst, const float *src, int S_src, int blocks, int d, int length) {
    if (!dst || !src) return ATTN_ERR_NULL;
    if (S_dst < 1 || S_src < 1 || blocks < 1 || d < 1 || length < 0 || length > S_dst || length > S_src) return ATTN_ERR_SIZE;
    for (int b = 0; b < blocks; b++)
        memcpy(dst + (size_t)b * S_dst * d, src + (size_t)b * S_src * d, (size_t)length * d * sizeof *dst);
    return ATTN_OK;
}

// ----------------------------------------------------------------------------
// the layers' pieces

// h (T, C) = embed[ids], widened (embed (V, C), in rows or panels of 8 rows)
static void embed(float *h, const attn_tensor *e, const int32_t *ids, int T, int C, int V) {
    for (int i = 0; i < T; i++) attn_widen_row(h + (size_t)i * C, e->data, e->dtype, ids[i], C, V);
}

// out (rows, n) = x / sqrt(mean(x²) + eps) · w per row of n values, the mean summed in double;
// out may be x
static void rmsnorm(float *out, const float *x, const float *w, int rows, int n, float eps) {
    for (int i = 0; i < rows; i++) {
        const float *xi = x + (size_t)i * n;
        float *o = out + (size_t)i * n;
        double sq = 0.0;
        for (int c = 0; c < n; c++) sq += (double)xi[c] * xi[c];
        const float rstd = (float)(1.0 / sqrt(sq / n + eps));
        for (int c = 0; c < n; c++) o[c] = (xi[c] * rstd) * w[c];
    }
}

// silu(x) = x·σ(x), four lanes, with σ through e = e^(-|x|) <= 1 (exp4 cannot overflow)
static inline v4f silu4(v4f x) {
    const v4i neg = x < splat(0.0f);
    const v4f e = exp4(select4(neg, x, -x));
    return x * (select4(neg, e, splat(1.0f)) / (splat(1.0f) + e));
}

// gate = silu(gate) ⊙ up, count values; the tail through a vector too, so every value alike
static void swiglu(float *gate, const float *up, size_t count) {
    size_t i = 0;
    for (; i + 4 <= count; i += 4) store4(gate + i, silu4(load4(gate + i)) * load4(up + i));
    if (i == count) return;
    float g[4] = {0}, u[4] = {0};
    memcpy(g, gate + i, (count - i) * sizeof *g);
    memcpy(u, up + i, (count - i) * sizeof *u);
    store4(g, silu4(load4(g)) * load4(u));
    memcpy(gate + i, g, (count - i) * sizeof *g);
}

// swiglu on a chunk's columns of gate (n, p), every row, with up (n, p) = ctx (parallel.h's attn_cols_fn)
static int swiglu_cols(void *ctx, float *gate, int n, int p, int c0, int c1) {
    const float *up = ctx;
    for (int i = 0; i < n; i++) {
        const size_t row = (size_t)i * p + c0;
        swiglu(gate + row, up + row, (size_t)(c1 - c0));
    }
    return ATTN_OK;
}

// out (T, p) = a (T, k)·wᵀ + b, w and b from the table, then after(ctx, …) on each chunk's
// columns (parallel.h); the job's status
static attn_status linear(float *out, const float *a, const attn_tensor *w, const attn_tensor *b, int T, int k, int p,
                          float *scratch, attn_cols_fn after, void *ctx) {
    return (attn_status)attn_linear_t_par(out, a, w->data, w->dtype, (const float *)b->data, T, k, p, scratch, after, ctx);
}

// h += o_proj(attention(RoPE(q, k), v)) for layer l, from x = RMSNorm(h; ln1)
static attn_status attention_block(llama_buffers *ws, float *attention, const int32_t *slots, const attn_heads_keep *keep,
                                   float *cache, const attn_llama_config *cfg, const attn_tensor *lt,
                                   const attn_heads_plan *pl, int l) {
    const int T = pl->T, C = cfg->hidden, D = pl->d, HD = pl->H * D, GD = pl->G * D;
    rmsnorm(ws->x, ws->h, (const float *)lt[ATTN_LLAMA_LN1].data, T, C, cfg->eps);
    linear(ws->q, ws->x, &lt[ATTN_LLAMA_WQ], &lt[ATTN_LLAMA_BQ], T, C, HD, ws->scratch, NULL, NULL);
    linear(ws->k, ws->x, &lt[ATTN_LLAMA_WK], &lt[ATTN_LLAMA_BK], T, C, GD, ws->scratch, NULL, NULL);
    linear(ws->v, ws->x, &lt[ATTN_LLAMA_WV], &lt[ATTN_LLAMA_BV], T, C, GD, ws->scratch, NULL, NULL);
    if (lt[ATTN_LLAMA_QNORM].data) {
        rmsnorm(ws->q, ws->q, (const float *)lt[ATTN_LLAMA_QNORM].data, T * pl->H, D, cfg->eps);
        rmsnorm(ws->k, ws->k, (const float *)lt[ATTN_LLAMA_KNORM].data, T * pl->G, D, cfg->eps);
    }
    attn_rope_rotate_fast(ws->q, ws->q, ws->cos, ws->sin, T, pl->H, D, 0);   // rotate-half, as HF's LLaMA
    attn_rope_rotate_fast(ws->k, ws->k, ws->cos, ws->sin, T, pl->G, D, 0);
    if (!all_finite(ws->q, (size_t)T * HD) || !all_finite(ws->k, (size_t)T * GD) || !all_finite(ws->v, (size_t)T * GD))
        return ATTN_ERR_OVERFLOW;
    const attn_heads_input in = {ws->q, ws->k, ws->v, HD, GD, cache};
    attn_status st = attn_heads_run(ws->y, attention, slots, keep, l, pl, &ws->heads, &in);
    if (st != ATTN_OK) return st;
    return linear(ws->x, ws->y, &lt[ATTN_LLAMA_WO], &lt[ATTN_LLAMA_BO], T, HD, C, ws->scratch, attn_cols_residual, ws->h);
}

// h += down(silu(gate(x)) ⊙ up(x)) for one layer, x = RMSNorm(h; ln2)
static attn_status mlp_block(llama_buffers *ws, const attn_llama_config *cfg, const attn_tensor *lt, int T) {
    const int C = cfg->hidden, F = cfg->intermediate;
    rmsnorm(ws->x, ws->h, (const float *)lt[ATTN_LLAMA_LN2].data, T, C, cfg->eps);
    // gate and up in one job, SwiGLU on each chunk's columns
    const attn_tensor *wg = &lt[ATTN_LLAMA_WGATE], *wu = &lt[ATTN_LLAMA_WUP];
    attn_linear_t_par_gated(ws->gate, ws->up, ws->x, wg->data, wg->dtype, (const float *)lt[ATTN_LLAMA_BGATE].data,
                            wu->data, wu->dtype, (const float *)lt[ATTN_LLAMA_BUP].data, T, C, F, ws->scratch,
                            swiglu_cols, ws->up);
    return linear(ws->x, ws->gate, &lt[ATTN_LLAMA_WDOWN], &lt[ATTN_LLAMA_BDOWN], T, F, C, ws->scratch, attn_cols_residual, ws->h);
}

// logits (rows, V) = RMSNorm(last rows of h; norm)·lm_headᵀ (the embedding table when tied)
static attn_status lm_head(float *logits, llama_buffers *ws, const attn_llama_config *cfg, const attn_tensor *t, int T, int rows) {
    const int C = cfg->hidden;
    rmsnorm(ws->x, ws->h + (size_t)(T - rows) * C, (const float *)t[ATTN_LLAMA_NORM].data, rows, C, cfg->eps);
    const attn_tensor *w = t[ATTN_LLAMA_LM_HEAD].data ? &t[ATTN_LLAMA_LM_HEAD] : &t[ATTN_LLAMA_EMBED];
    const attn_tensor none = {NULL, ATTN_F32};
    return linear(logits, ws->x, w, &none, rows, C, cfg->vocab_size, ws->scratch, attn_cols_finite, NULL);
}

// ----------------------------------------------------------------------------
// the forward pass

static attn_status check_forward(const float *attention, const int32_t *slots, const float *kv_cache,
                                 const float *workspace, const attn_llama_config *cfg, const attn_tensor *t,
                                 const int32_t *ids, int T, int pos, int S, unsigned flags) {
    if (!kv_cache || !workspace || !ids) return ATTN_ERR_NULL;
    attn_status st = attn_llama_check(cfg, t);
    if (st != ATTN_OK) return st;
    if (T < 1 || S < 1) return ATTN_ERR_SIZE;
    if (flags & ~ATTN_LLAMA_LAST_ONLY) return ATTN_ERR_FLAGS;
    if (pos < 0 || pos > cfg->n_positions - T || pos > S - T || pos > ATTN_ROPE_MAX_POSITION - T) return ATTN_ERR_RANGE;
    for (int i = 0; i < T; i++)
        if (ids[i] < 0 || ids[i] >= cfg->vocab_size) return ATTN_ERR_RANGE;
    const long blocks = attention_blocks(slots, (long)cfg->n_layer * cfg->n_head);
    if (blocks < 0) return ATTN_ERR_RANGE;
    if (attention && (!fits((size_t)blocks, (size_t)T) || !fits((size_t)blocks * T, (size_t)(pos + T)))) return ATTN_ERR_TOO_LARGE;
    if (!fits((size_t)T, (size_t)cfg->vocab_size) || attn_llama_cache_size(cfg, S) == 0 ||
        attn_llama_workspace_size(cfg, T, pos + T) == 0) return ATTN_ERR_TOO_LARGE;
    return ATTN_OK;
}

attn_status attn_llama_forward(float *logits, float *attention, const int32_t *slots, const attn_heads_keep *keep,
                               float *kv_cache, float *workspace, const attn_llama_config *cfg, const attn_tensor *t,
                               const int32_t *ids, int T, int pos, int S, unsigned flags) {
    attn_status st = check_forward(attention, slots, kv_cache, workspace, cfg, t, ids, T, pos, S, flags);
    if (st != ATTN_OK) return st;
    llama_buffers ws;
    workspace_layout(&ws, workspace, cfg, T, pos + T);
    const attn_heads_plan pl = attn_heads_causal(ws.mask, T, pos, S, cfg->n_head, cfg->n_kv_head, cfg->head_dim);
    st = attn_heads_begin(keep, &pl, NULL);
    attn_rope_cos_sin(ws.cos, ws.sin, (const float *)t[ATTN_LLAMA_INV_FREQ].data, T, cfg->head_dim / 2, pos);

    // 1. the token embeddings (no positions: RoPE puts them into q and k)
    embed(ws.h, &t[ATTN_LLAMA_EMBED], ids, T, cfg->hidden, cfg->vocab_size);
    // 2. the layers: attention, then the MLP, each added to the residual stream
    for (int l = 0; l < cfg->n_layer && st == ATTN_OK; l++) {
        const attn_tensor *lt = layer_tensors(t, l);
        st = attention_block(&ws, attention, slots, keep, kv_cache, cfg, lt, &pl, l);
        if (st == ATTN_OK) st = mlp_block(&ws, cfg, lt, T);
    }
    // 3. the final RMSNorm and the logits
    if (st == ATTN_OK && logits) st = lm_head(logits, &ws, cfg, t, T, (flags & ATTN_LLAMA_LAST_ONLY) ? 1 : T);
    return st;
}
