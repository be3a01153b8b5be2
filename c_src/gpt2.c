// gpt2.c - GPT-2's forward pass with a KV cache; see gpt2.h for the model, shapes and statuses.
//
// Sections: sizes and layouts; the linear kernels (fast, and the naive reference beside them);
// the layers (embedding, LayerNorm, attention over the cache, MLP); the forward pass.
// The matmuls are what costs (GPT-2 small: 85 M multiply-adds per token in the layers, 38 M for
// its logits): they use 4-wide vectors (internal.h: SSE natively, wasm simd128 under -msimd128,
// so the native tests run the very kernel the wasm runs). Attention itself is attention.c's, a
// head at a time in heads.c's job.
#include "gpt2.h"
#include "heads.h"     // attn_heads_causal, attn_heads_run
#include "internal.h"  // v4f, load4, store4, splat, hsum, dot, exp4, fits, all_finite, layernorm,
                       // attn_linear_t_fast
#include "tensor.h"    // ATTN_F32
#include "parallel.h"  // attn_linear_par, attn_linear_t_par, attn_cols_finite, attn_cols_residual

#include <math.h>
#include <string.h>


// ----------------------------------------------------------------------------
// sizes and layouts

static attn_status check_config(const attn_gpt2_config *cfg) {
    if (!cfg) return ATTN_ERR_NULL;
    if (cfg->n_layer < 1 || cfg->n_head < 1 || cfg->n_embd < 1 || cfg->vocab_size < 1 ||
        cfg->n_positions < 1 || cfg->n_embd % cfg->n_head != 0) return ATTN_ERR_SIZE;
    if (!(isfinite(cfg->eps) && cfg->eps > 0.0f)) return ATTN_ERR_RANGE;
    return ATTN_OK;
}

// *total += rows·cols floats, rounded up to 4 (16 bytes); 0 when it does not fit in size_t bytes
static int add_floats(size_t *total, size_t rows, size_t cols) {
    if (!fits(rows, cols)) return 0;
    size_t c = (rows * cols + 3) / 4 * 4;
    if (*total > (size_t)-1 / sizeof(float) - c) return 0;
    *total += c;
    return 1;
}

attn_status attn_gpt2_param_layout(size_t *offsets, const attn_gpt2_config *cfg) {
    if (!offsets) return ATTN_ERR_NULL;
    attn_status st = check_config(cfg);
    if (st != ATTN_OK) return st;
    const size_t L = (size_t)cfg->n_layer, C = (size_t)cfg->n_embd;
    // rows and columns of each kind, in the order of attn_gpt2_param
    const size_t dims[ATTN_GPT2_N_PARAMS][2] = {
        {(size_t)cfg->vocab_size, C}, {(size_t)cfg->n_positions, C},
        {L, C}, {L, C}, {L * C, 3 * C}, {L, 3 * C}, {L * C, C}, {L, C},
        {L, C}, {L, C}, {L * C, 4 * C}, {L, 4 * C}, {L * 4 * C, C}, {L, C},
        {1, C}, {1, C},
    };
    if (!fits(L, 4 * C) || !fits(L * 4, C)) return ATTN_ERR_TOO_LARGE;
    size_t total = 0;
    for (int kind = 0; kind < ATTN_GPT2_N_PARAMS; kind++) {
        offsets[kind] = total;
        // packed: only whole kinds are aligned, and C is usually a multiple of 4 anyway
        if (!fits(dims[kind][0], dims[kind][1])) return ATTN_ERR_TOO_LARGE;
        size_t n = dims[kind][0] * dims[kind][1];
        if (total > (size_t)-1 / sizeof(float) - n) return ATTN_ERR_TOO_LARGE;
        total += n;
    }
    offsets[ATTN_GPT2_N_PARAMS] = total;
    return ATTN_OK;
}

attn_status attn_gpt2_check_params(const attn_gpt2_config *cfg, const float *params) {
    size_t off[ATTN_GPT2_N_PARAMS + 1];
    attn_status st = attn_gpt2_param_layout(off, cfg);
    if (st != ATTN_OK) return st;
    if (!params) return ATTN_ERR_NULL;
    return all_finite(params, off[ATTN_GPT2_N_PARAMS]) ? ATTN_OK : ATTN_ERR_NON_FINITE;
}

size_t attn_gpt2_cache_size(const attn_gpt2_config *cfg, int S) {
    size_t total = 0;
    if (check_config(cfg) != ATTN_OK || S < 1) return 0;
    if (!fits((size_t)cfg->n_layer * 2, (size_t)S) ||
        !add_floats(&total, (size_t)cfg->n_layer * 2 * (size_t)S, (size_t)cfg->n_embd)) return 0;
    return total * sizeof(float);
}

// The workspace: the residual stream h (T, C); a (T, C), LayerNorm's output and the
// projections'; big (T, 4C), first qkv (T, 3C), then the MLP's hidden layer; y (T, C), the heads
// side by side; one head's q and output (T, d); the causal mask (T, m) bytes; attn_forward's
// workspace.
typedef struct {
    float *h, *a, *big, *y;
    uint8_t *mask;
    attn_heads_scratch heads;   // qh, oh and attn_forward's workspace, one per thread
} gpt2_buffers;

// the workspace's floats (0 when the sizes are invalid or too large); with base, its layout
static size_t workspace_layout(gpt2_buffers *ws, float *base, const attn_gpt2_config *cfg, int T, int m) {
    if (check_config(cfg) != ATTN_OK || T < 1 || m < T) return 0;
    const size_t C = (size_t)cfg->n_embd, d = C / (size_t)cfg->n_head, t = (size_t)T;
    size_t aws = attn_workspace_size(T, m, (int)d, (int)d), at[8], total = 0;
    if (aws == 0) return 0;
    const size_t parts = (size_t)attn_threads();   // threads: a scratch each
    const size_t rows[8] = {t, t, t, t, t * parts, t * parts, t, (aws + 3) / 4};
    const size_t cols[8] = {C, C, 4 * C, C, d, d, ((size_t)m + 3) / 4, parts};
    for (int i = 0; i < 8; i++) {
        at[i] = total;
        if (!fits(4, C) || !add_floats(&total, rows[i], cols[i])) return 0;
    }
    if (base) {
        *ws = (gpt2_buffers){.h = base + at[0], .a = base + at[1], .big = base + at[2], .y = base + at[3],
                             .mask = (uint8_t *)(base + at[6]),
                             .heads = {.qh = base + at[4], .oh = base + at[5], .aws = base + at[7], .aws_floats = (aws + 3) / 4}};
    }
    return total;
}

size_t attn_gpt2_workspace_size(const attn_gpt2_config *cfg, int T, int m) {
    return workspace_layout(NULL, NULL, cfg, T, m) * sizeof(float);
}

// ----------------------------------------------------------------------------
// the linear kernels: out (n, p) = a (n, k)·w (k, p) + b

// The fast path is attention.c's packed kernel (attn_pack_fast, attn_linear_fast, internal.h),
// which mha.c's projections share: each output summed over k in order, in float, from 0, then
// + b, exactly the naive loop's order (no fused multiply-add: -ffp-contract=off), so both give
// the same bits.

// out = a·wᵀ, w (p, k): linear.c's kernel (tensor.h), shared with the LLaMA family, over float
// weights (no scratch): 2 rows of a × 4 rows of w per register tile, or one row against 8
static void linear_t_fast(float *out, const float *a, const float *w, int n, int k, int p) {
    attn_linear_t_fast(out, a, w, ATTN_F32, NULL, n, k, p, NULL);
}

static attn_status check_linear(const float *out, const float *a, const float *w, int n, int k, int p) {
    if (!out || !a || !w) return ATTN_ERR_NULL;
    if (n < 1 || k < 1 || p < 1) return ATTN_ERR_SIZE;
    if (!fits((size_t)n, (size_t)k) || !fits((size_t)k, (size_t)p) || !fits((size_t)n, (size_t)p))
        return ATTN_ERR_TOO_LARGE;
    return ATTN_OK;
}

// after a product: OK if out is finite, else NON_FINITE if an input is not, else OVERFLOW
static attn_status product_status(const float *out, size_t count, const float *a, size_t na,
                                  const float *w, size_t nw, const float *b, size_t nb) {
    if (all_finite(out, count)) return ATTN_OK;
    return all_finite(a, na) && all_finite(w, nw) && all_finite(b, nb) ? ATTN_ERR_OVERFLOW : ATTN_ERR_NON_FINITE;
}

attn_status attn_pack_weight(float *packed, const float *w, int k, int p) {
    attn_status st = check_linear(packed, w, w, 1, k, p);
    if (st != ATTN_OK) return st;
    attn_pack_fast(packed, w, k, p);
    return ATTN_OK;
}

attn_status attn_linear_packed(float *out, const float *a, const float *packed, const float *b, int n, int k, int p) {
    attn_status st = check_linear(out, a, packed, n, k, p);
    if (st != ATTN_OK) return st;
    attn_linear_fast(out, a, packed, b, n, k, p);
    return product_status(out, (size_t)n * p, a, (size_t)n * k, packed, (size_t)k * p, b, (size_t)p);
}

// out (n, p) = a (n, k)·w + b (b may be NULL), w's element (t, j) at w[t·wt + j·wj], in the plain
// loop both naive products share: w (k, p) is wt = p, wj = 1; w (p, k) read transposed, wt = 1, wj = k
static void naive_product(float *out, const float *a, const float *w, const float *b, int n, int k, int p,
                          size_t wt, size_t wj) {
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < p; j++) {
            float s = 0.0f;
            for (int t = 0; t < k; t++) s += a[(size_t)i * k + t] * w[(size_t)t * wt + (size_t)j * wj];
            out[(size_t)i * p + j] = b ? s + b[j] : s;
        }
    }
}

attn_status attn_linear_naive(float *out, const float *a, const float *w, const float *b, int n, int k, int p) {
    attn_status st = check_linear(out, a, w, n, k, p);
    if (st != ATTN_OK) return st;
    naive_product(out, a, w, b, n, k, p, (size_t)p, 1);
    return product_status(out, (size_t)n * p, a, (size_t)n * k, w, (size_t)k * p, b, (size_t)p);
}

attn_status attn_linear_t(float *out, const float *a, const float *w, int n, int k, int p) {
    attn_status st = check_linear(out, a, w, n, k, p);
    if (st != ATTN_OK) return st;
    linear_t_fast(out, a, w, n, k, p);
    return product_status(out, (size_t)n * p, a, (size_t)n * k, w, (size_t)p * k, NULL, 0);
}

attn_status attn_linear_t_naive(float *out, const float *a, const float *w, int n, int k, int p) {
    attn_status st = check_linear(out, a, w, n, k, p);
    if (st != ATTN_OK) return st;
    naive_product(out, a, w, NULL, n, k, p, 1, (size_t)k);
    return product_status(out, (size_t)n * p, a, (size_t)n * k, w, (size_t)p * k, NULL, 0);
}

// ----------------------------------------------------------------------------
// the layers

// The parameters of the model, named as in the checkpoint; each stacked kind at layer 0.
typedef struct {
    const float *wte, *wpe, *ln1_w, *ln1_b, *qkv_w, *qkv_b, *attproj_w, *attproj_b;
    const float *ln2_w, *ln2_b, *fc_w, *fc_b, *fcproj_w, *fcproj_b, *lnf_w, *lnf_b;
} gpt2_params;

// One layer's parameters.
typedef struct {
    const float *ln1_w, *ln1_b, *qkv_w, *qkv_b, *attproj_w, *attproj_b;
    const float *ln2_w, *ln2_b, *fc_w, *fc_b, *fcproj_w, *fcproj_b;
} gpt2_layer;

static gpt2_params params_of(const float *p, const size_t *off) {
    return (gpt2_params){
        p + off[ATTN_GPT2_WTE], p + off[ATTN_GPT2_WPE], p + off[ATTN_GPT2_LN1_W], p + off[ATTN_GPT2_LN1_B],
        p + off[ATTN_GPT2_QKV_W], p + off[ATTN_GPT2_QKV_B], p + off[ATTN_GPT2_ATTPROJ_W], p + off[ATTN_GPT2_ATTPROJ_B],
        p + off[ATTN_GPT2_LN2_W], p + off[ATTN_GPT2_LN2_B], p + off[ATTN_GPT2_FC_W], p + off[ATTN_GPT2_FC_B],
        p + off[ATTN_GPT2_FCPROJ_W], p + off[ATTN_GPT2_FCPROJ_B], p + off[ATTN_GPT2_LNF_W], p + off[ATTN_GPT2_LNF_B],
    };
}

static gpt2_layer layer_of(const gpt2_params *p, int l, size_t C) {
    const size_t v = (size_t)l * C, m = (size_t)l * C * C;
    return (gpt2_layer){
        p->ln1_w + v, p->ln1_b + v, p->qkv_w + 3 * m, p->qkv_b + 3 * v, p->attproj_w + m, p->attproj_b + v,
        p->ln2_w + v, p->ln2_b + v, p->fc_w + 4 * m, p->fc_b + 4 * v, p->fcproj_w + 4 * m, p->fcproj_b + v,
    };
}

// h (T, C) = wte[ids] + wpe[pos .. pos + T)
static void embed(float *h, const float *wte, const float *wpe, const int32_t *ids, int T, int pos, int C) {
    for (int i = 0; i < T; i++) {
        const float *te = wte + (size_t)ids[i] * C, *pe = wpe + (size_t)(pos + i) * C;
        float *hi = h + (size_t)i * C;
        for (int c = 0; c < C; c++) hi[c] = te[c] + pe[c];
    }
}

// gelu_new, four lanes: 0.5·x·(1 + tanh(u)) = x·σ(2u) for u = √(2/π)·(x + 0.044715·x³), with
// σ(2u) = 1/(1 + e) for u >= 0 and e/(1 + e) for u < 0, e = e^(-2|u|) <= 1: exp4 cannot
// overflow, and nothing cancels where 1 + tanh(u) nears 0. NaN stays NaN, ±Inf give what the
// formula gives (+Inf, NaN); within a few ulp of the formula in float64 (test_gpt2.c).
static inline v4f gelu4(v4f x) {
    const v4f u = splat(0.7978845608028654f) * (x + splat(0.044715f) * (x * x * x));
    const v4i neg = u < splat(0.0f);
    const v4f e = exp4(select4(neg, u + u, -(u + u)));
    return x * (select4(neg, e, splat(1.0f)) / (splat(1.0f) + e));
}

// x = gelu_new(x), in place; the last count mod 4 through a vector too, so every value is
// computed alike
static void gelu_new(float *x, size_t count) {
    size_t i = 0;
    for (; i + 4 <= count; i += 4) store4(x + i, gelu4(load4(x + i)));
    if (i == count) return;
    float tail[4] = {0};
    memcpy(tail, x + i, (count - i) * sizeof *x);
    store4(tail, gelu4(load4(tail)));
    memcpy(x + i, tail, (count - i) * sizeof *x);
}

attn_status attn_gelu_new(float *x, size_t count) {
    if (!x) return ATTN_ERR_NULL;
    gelu_new(x, count);
    return ATTN_OK;
}

// gelu_new on a chunk's columns of x (n, p), every row (parallel.h's attn_cols_fn)
static int gelu_cols(void *ctx, float *x, int n, int p, int c0, int c1) {
    (void)ctx;
    for (int i = 0; i < n; i++) gelu_new(x + (size_t)i * p + c0, (size_t)(c1 - c0));
    return ATTN_OK;
}

// h += attn.c_proj(attention(ln_1(h))) for layer l
static attn_status attention_block(gpt2_buffers *ws, float *attention, const int32_t *slots, const attn_heads_keep *keep,
                                   float *cache, const gpt2_layer *p, const attn_heads_plan *pl, int l, float eps) {
    const int T = pl->T, C = pl->H * pl->d;
    layernorm(ws->a, ws->h, p->ln1_w, p->ln1_b, T, C, eps);
    attn_status st = (attn_status)attn_linear_par(ws->big, ws->a, p->qkv_w, p->qkv_b, T, C, 3 * C, attn_cols_finite, NULL);
    // the heads' q, k and v: columns 0, C and 2C of qkv (T, 3C); keys and values through the cache
    const attn_heads_input in = {ws->big, ws->big + C, ws->big + 2 * C, 3 * C, 3 * C, cache};
    if (st == ATTN_OK) st = attn_heads_run(ws->y, attention, slots, keep, l, pl, &ws->heads, &in);
    if (st != ATTN_OK) return st;
    return (attn_status)attn_linear_par(ws->a, ws->y, p->attproj_w, p->attproj_b, T, C, C, attn_cols_residual, ws->h);
}

// h += mlp.c_proj(gelu_new(mlp.c_fc(ln_2(h)))) for one layer
static attn_status mlp_block(gpt2_buffers *ws, const gpt2_layer *p, int T, int C, float eps) {
    layernorm(ws->a, ws->h, p->ln2_w, p->ln2_b, T, C, eps);
    attn_linear_par(ws->big, ws->a, p->fc_w, p->fc_b, T, C, 4 * C, gelu_cols, NULL);
    return (attn_status)attn_linear_par(ws->a, ws->big, p->fcproj_w, p->fcproj_b, T, 4 * C, C, attn_cols_residual, ws->h);
}

// logits (rows, V) = ln_f(h)·wteᵀ for the last `rows` of the T rows of h
static attn_status lm_head(float *logits, gpt2_buffers *ws, const gpt2_params *p, int T, int rows,
                           int C, int V, float eps) {
    const float *last = ws->h + (size_t)(T - rows) * C;
    layernorm(ws->a, last, p->lnf_w, p->lnf_b, rows, C, eps);
    return (attn_status)attn_linear_t_par(logits, ws->a, p->wte, ATTN_F32, NULL, rows, C, V, NULL, attn_cols_finite, NULL);
}

// ----------------------------------------------------------------------------
// packing the weight matrices for attn_linear_fast

size_t attn_gpt2_pack_scratch_size(const attn_gpt2_config *cfg) {
    size_t off[ATTN_GPT2_N_PARAMS + 1];
    if (attn_gpt2_param_layout(off, cfg) != ATTN_OK) return 0;
    return (size_t)4 * cfg->n_embd * cfg->n_embd * sizeof(float);  // fits: the layout holds L of them
}

attn_status attn_gpt2_pack(float *params, float *scratch, const attn_gpt2_config *cfg) {
    size_t off[ATTN_GPT2_N_PARAMS + 1];
    attn_status st = attn_gpt2_param_layout(off, cfg);
    if (st != ATTN_OK) return st;
    if (!params || !scratch) return ATTN_ERR_NULL;
    const int C = cfg->n_embd;
    const struct { attn_gpt2_param kind; int k, p; } mats[4] = {
        {ATTN_GPT2_QKV_W, C, 3 * C}, {ATTN_GPT2_ATTPROJ_W, C, C},
        {ATTN_GPT2_FC_W, C, 4 * C}, {ATTN_GPT2_FCPROJ_W, 4 * C, C},
    };
    for (int l = 0; l < cfg->n_layer; l++) {
        for (int i = 0; i < 4; i++) {
            const size_t count = (size_t)mats[i].k * mats[i].p;
            float *w = params + off[mats[i].kind] + (size_t)l * count;
            memcpy(scratch, w, count * sizeof *w);
            attn_pack_fast(w, scratch, mats[i].k, mats[i].p);
        }
    }
    return ATTN_OK;
}

// ----------------------------------------------------------------------------
// the forward pass

static attn_status check_forward(const float *logits, const float *attention, const int32_t *slots,
                                 const float *kv_cache, const float *workspace, const attn_gpt2_config *cfg,
                                 const float *params, const int32_t *ids, int T, int pos, int S, unsigned flags) {
    if (!kv_cache || !workspace || !cfg || !params || !ids) return ATTN_ERR_NULL;
    attn_status st = check_config(cfg);
    if (st != ATTN_OK) return st;
    if (T < 1 || S < 1) return ATTN_ERR_SIZE;
    if (flags & ~ATTN_GPT2_LAST_ONLY) return ATTN_ERR_FLAGS;
    if (pos < 0 || pos > cfg->n_positions - T || pos > S - T) return ATTN_ERR_RANGE;
    for (int i = 0; i < T; i++) {
        if (ids[i] < 0 || ids[i] >= cfg->vocab_size) return ATTN_ERR_RANGE;
    }
    const long blocks = attention_blocks(slots, (long)cfg->n_layer * cfg->n_head);
    if (blocks < 0) return ATTN_ERR_RANGE;
    const size_t m = (size_t)(pos + T), heads = (size_t)blocks;
    if (logits && !fits((size_t)T, (size_t)cfg->vocab_size)) return ATTN_ERR_TOO_LARGE;
    if (attention && (!fits(heads, (size_t)T) || !fits(heads * (size_t)T, m))) return ATTN_ERR_TOO_LARGE;
    if (attn_gpt2_cache_size(cfg, S) == 0 || attn_gpt2_workspace_size(cfg, T, (int)m) == 0) return ATTN_ERR_TOO_LARGE;
    return ATTN_OK;
}

attn_status attn_gpt2_forward(float *logits, float *attention, const int32_t *slots, const attn_heads_keep *keep,
                              float *kv_cache, float *workspace, const attn_gpt2_config *cfg, const float *params,
                              const int32_t *ids, int T, int pos, int S, unsigned flags) {
    attn_status st = check_forward(logits, attention, slots, kv_cache, workspace, cfg, params, ids, T, pos, S, flags);
    if (st != ATTN_OK) return st;
    size_t off[ATTN_GPT2_N_PARAMS + 1];
    attn_gpt2_param_layout(off, cfg);
    const gpt2_params p = params_of(params, off);
    const int C = cfg->n_embd, H = cfg->n_head, m = pos + T;
    gpt2_buffers ws;
    workspace_layout(&ws, workspace, cfg, T, m);
    const attn_heads_plan pl = attn_heads_causal(ws.mask, T, pos, S, H, H, C / H);
    st = attn_heads_begin(keep, &pl, NULL);

    // 1. token and position embeddings
    embed(ws.h, p.wte, p.wpe, ids, T, pos, C);
    // 2. the layers: attention, then MLP, each added to the residual stream
    for (int l = 0; l < cfg->n_layer && st == ATTN_OK; l++) {
        const gpt2_layer layer = layer_of(&p, l, (size_t)C);
        st = attention_block(&ws, attention, slots, keep, kv_cache, &layer, &pl, l, cfg->eps);
        if (st == ATTN_OK) st = mlp_block(&ws, &layer, T, C, cfg->eps);
    }
    // 3. final LayerNorm and the logits (tied to wte)
    if (st == ATTN_OK && logits) {
        int rows = (flags & ATTN_GPT2_LAST_ONLY) ? 1 : T;
        st = lm_head(logits, &ws, &p, T, rows, C, cfg->vocab_size, cfg->eps);
    }
    // a result that is not finite: a NaN or ±Inf among the parameters, or else an overflow
    if (st == ATTN_ERR_OVERFLOW || st == ATTN_ERR_NON_FINITE)
        st = attn_gpt2_check_params(cfg, params) == ATTN_OK ? ATTN_ERR_OVERFLOW : ATTN_ERR_NON_FINITE;
    return st;
}
