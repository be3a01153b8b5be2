// attention.h - scaled dot-product self-attention in plain C11.
//
// Attention(Q, K, V) = softmax(Q·Kᵀ · scale) · V, in four passes:
//   1. similarity  S = Q·Kᵀ
//   2. scaling     S · scale            (scale defaults to 1/√d_k)
//   3. softmax     each row of S becomes weights that sum to 1
//   4. weighted sum of the rows of V
//
// Legend used in every shape comment below (row-major float32, PyTorch order):
//   n = queries, m = keys, d_k = key width, d_v = value width, d_model = token width.
//   "(n, m)" is a buffer of n*m floats, row i at offset i*m.
//
// Conventions (after ggml / llm.c):
//   - every buffer is owned by the caller; no function here calls malloc or keeps state;
//   - outputs come first, then inputs, then sizes;
//   - no function aborts on bad input: each returns an attn_status, and
//     attn_status_string() turns it into an English message;
//   - on any status other than ATTN_OK the outputs hold unspecified values.
//
// Semantics:
//   - mask (n, m), optional (NULL = none): nonzero means "query i MAY attend to key j"
//     (the polarity of PyTorch's scaled_dot_product_attention; nn.MultiheadAttention's
//     boolean attn_mask is the opposite: pass !attn_mask).
//   - ATTN_CAUSAL: query i sees keys j <= i, aligned top-left like PyTorch's is_causal
//     (also when n != m). Combined with a mask, a key must pass both.
//   - A row whose keys are all masked gets weights 0 and output 0 (PyTorch gives NaN).
//   - Softmax subtracts the row's true maximum, so huge logits (|x| ~ 1e4) give no Inf/NaN.
//   - Inputs holding NaN or ±Inf give ATTN_ERR_NON_FINITE. Finite inputs so large that Q·Kᵀ
//     could overflow float32 (max‖q_i‖·max‖k_j‖·max(scale, 1) >= FLT_MAX/2, checked before
//     any work, the same on every path whatever the mask) give ATTN_ERR_OVERFLOW, and so do
//     projections or outputs that overflow. No NaN ever reaches an output.
#ifndef ATTN_ATTENTION_H
#define ATTN_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum attn_status {
    ATTN_OK = 0,
    ATTN_ERR_NULL = 1,        // a required pointer is NULL
    ATTN_ERR_SIZE = 2,        // a dimension is < 1
    ATTN_ERR_SCALE = 3,       // scale is NaN, infinite or negative
    ATTN_ERR_NON_FINITE = 4,  // an input holds NaN or ±Inf
    ATTN_ERR_OVERFLOW = 5,    // finite inputs, but a product or score overflows float32
    ATTN_ERR_TOO_LARGE = 6,   // a buffer size does not fit in size_t
    ATTN_ERR_FLAGS = 7,       // unknown bits in flags
    ATTN_ERR_RANGE = 8,       // gpt2.h: a token id outside the vocabulary, a position past the model's;
                              // attn_rope*: base < 1 or not finite, a position outside [0, 2^20)
} attn_status;

// flags
#define ATTN_CAUSAL 1u

// A static English sentence for a status; never NULL.
const char *attn_status_string(attn_status status);

// 1/√d_k, the default scale (0 for d_k < 1).
float attn_default_scale(int d_k);

// Scaled dot-product attention.
// q (n, d_k), k (m, d_k), v (m, d_v), mask (n, m) or NULL -> out (n, d_v), weights (n, m) or NULL
// workspace: at least attn_workspace_size(n, m, d_k, d_v) bytes, aligned to 4, used when
// weights is NULL (may be NULL when weights is not NULL). With weights NULL nothing of size
// n×m is touched: long sequences run in O(m·d) memory (a FlashAttention-style tiled kernel).
attn_status attn_forward(float *out, float *weights, float *workspace,
                         const float *q, const float *k, const float *v, const uint8_t *mask,
                         int n, int m, int d_k, int d_v, float scale, unsigned flags);

// The same, written as plainly as possible: the reference the fast path is tested against.
attn_status attn_forward_naive(float *out, float *weights, float *workspace,
                               const float *q, const float *k, const float *v, const uint8_t *mask,
                               int n, int m, int d_k, int d_v, float scale, unsigned flags);

// Rows [row_begin, row_end) of attn_forward: the same arguments (whole q, out, weights,
// mask, indexed as in attn_forward) and the same results for those query rows; other rows
// are not touched. For splitting one long call into several: progress, responsiveness,
// threads (each thread with its own workspace). 0 <= row_begin < row_end <= n.
attn_status attn_forward_rows(float *out, float *weights, float *workspace,
                              const float *q, const float *k, const float *v, const uint8_t *mask,
                              int n, int m, int d_k, int d_v, float scale, unsigned flags,
                              int row_begin, int row_end);

// Bytes of workspace attn_forward needs when weights is NULL: O(m·d_k), never n×m.
// 0 when the sizes are invalid or too large for size_t.
size_t attn_workspace_size(int n, int m, int d_k, int d_v);

// Per query row, what the heads' scores need (heads.h), taken from the softmax's own sums while
// the row is in registers or cache: the n×m weights need not exist. For row i, with s_ij the
// scaled scores, M_i their maximum, e_ij = e^(s_ij − M_i), Z_i = Σ_j e_ij, w_ij = e_ij / Z_i:
//   out[i·ATTN_ROW_STATS + ATTN_ROW_ENTROPY]    −Σ_j w_ij·log2 w_ij = (ln Z_i − U_i / Z_i) / ln 2,
//                                               U_i = Σ_j e_ij·(s_ij − M_i): no log per cell;
//   out[i·ATTN_ROW_STATS + ATTN_ROW_DISTANCE]   Σ_j w_ij·|qpos_i − kpos_j|;
//   out[i·ATTN_ROW_STATS + ATTN_ROW_POINT + p]  w_ij at j = points[i·ATTN_ROW_POINTS + p] (0 for -1).
// A row whose keys are all masked gets 0 in every statistic.
enum { ATTN_ROW_ENTROPY = 0, ATTN_ROW_DISTANCE = 1, ATTN_ROW_POINT = 2, ATTN_ROW_POINTS = 6,
       ATTN_ROW_STATS = ATTN_ROW_POINT + ATTN_ROW_POINTS };
typedef struct attn_row_stats {
    float *out;              // (n, ATTN_ROW_STATS)
    const float *qpos;       // (n) each query's position
    const float *kpos;       // (m) each key's position
    const int32_t *points;   // (n, ATTN_ROW_POINTS) key indices in [0, m), or -1
} attn_row_stats;

// attn_forward_rows, and the statistics of rows [row_begin, row_end) into stats->out (stats NULL:
// none). Positions finite (else ATTN_ERR_NON_FINITE) and within ±ATTN_MAX_POSITION (2^60: each
// distance's float sums stay finite), else ATTN_ERR_RANGE; a point outside [-1, m): ATTN_ERR_RANGE.
#define ATTN_MAX_POSITION 0x1p60f
attn_status attn_forward_stats(float *out, float *weights, float *workspace, const attn_row_stats *stats,
                               const float *q, const float *k, const float *v, const uint8_t *mask,
                               int n, int m, int d_k, int d_v, float scale, unsigned flags,
                               int row_begin, int row_end);

// The same statistics from the weights (n, m) themselves, a log per cell: the reference the
// kernels' are tested against.
void attn_row_stats_naive(const attn_row_stats *stats, const float *weights, int n, int m);

// ----------------------------------------------------------------------------
// The models' heads (gpt2.h, llama.h, bert.h; c_src/heads.c): what a forward keeps of its heads
// besides their weights (issue 37), given as its keep argument. scores: each head's
// scores, layer-major (L·H, ATTN_SCORES), from its rows' statistics (attn_row_stats above),
// without its weights. With n = the real tokens (every key of a decoder; an
// encoder's keys its key mask keeps, counted in order) and A a head's map over them, rows R =
// 1 .. n − 1: sink = mean_R A[i, 0], previous = mean_R A[i, i − 1], self = mean_R A[i, i],
// next = mean over i = 1 .. n − 2 of A[i, i + 1], entropy = mean_R −Σ_j A[i, j]·log2 A[i, j],
// distance = mean_R Σ_j A[i, j]·|i − j|; with repeat = S (the input repeats with period S),
// rows S .. n − 1: induction = mean A[i, i − S + 1], duplicate = mean A[i, i − S]. A mean over
// no rows is 0. Each head's rows are summed in order in double: the same bits on any number of
// threads. queries and keys: what attn_heads_map needs to draw one head's map again.
enum { ATTN_SCORE_SINK = 0, ATTN_SCORE_PREVIOUS, ATTN_SCORE_SELF, ATTN_SCORE_NEXT, ATTN_SCORE_ENTROPY,
       ATTN_SCORE_DISTANCE, ATTN_SCORE_INDUCTION, ATTN_SCORE_DUPLICATE, ATTN_SCORES };
typedef struct attn_heads_keep {
    float *scores;     // (L·H, ATTN_SCORES) or NULL
    float *scratch;    // attn_heads_keep_floats(T, m, H) floats, with scores
    int32_t repeat;    // S in [1, n − 1], or 0 (induction and duplicate stay 0)
    float *queries;    // (L, H, T, d): each head's q as its attention read it (after RoPE), or NULL
    float *keys;       // (L, G, m, d): each kv head's keys, or NULL (a decoder's are in its cache)
} attn_heads_keep;

// Floats of keep's scratch: the rows' positions and ranks, their points, one layer's row
// statistics. 0 when too large.
size_t attn_heads_keep_floats(int T, int m, int H);

// weights (T, m) = query head i of layer l's weights again, from what a forward with keep's
// queries kept: the keys from a decoder's cache (causal, from position 0: T = m; S the cache's
// capacity) or, cache NULL, from keep's keys under key_mask (m bytes) or none. The bits of that forward's
// weights for the head. workspace: attn_heads_map_floats(T, m, d) floats (0 when a size is < 1 or
// their bytes do not fit in size_t). A NULL pointer: ATTN_ERR_NULL; l < 0, i outside [0, H), G < 1 or
// not dividing H, T < 1, m < T (with a cache m ≠ T), S < m: ATTN_ERR_RANGE; d < 1: ATTN_ERR_SIZE.
attn_status attn_heads_map(float *weights, float *workspace, const attn_heads_keep *keep, const float *cache,
                           const uint8_t *key_mask, int l, int i, int T, int m, int S, int H, int G, int d);
size_t attn_heads_map_floats(int T, int m, int d);

// Self-attention with projections, every intermediate exposed (the episode, step by step).
// x (n, d_model), wq (d_model, d_k), wk (d_model, d_k), wv (d_model, d_v), mask (n, n) or NULL
//   -> q = x·wq (n, d_k), k = x·wk (n, d_k), v = x·wv (n, d_v),
//      scores = q·kᵀ (n, n), scaled = scores·scale (n, n, before masking),
//      weights (n, n), out (n, d_v)
// Note: the weight of a PyTorch nn.Linear(d_model, d_k) is (d_k, d_model); pass its transpose.
attn_status attn_self_forward(float *q, float *k, float *v, float *scores, float *scaled,
                              float *weights, float *out,
                              const float *x, const float *wq, const float *wk, const float *wv,
                              const uint8_t *mask, int n, int d_model, int d_k, int d_v,
                              float scale, unsigned flags);

// out (n, p) = a (n, c) · b (c, p). ATTN_ERR_NON_FINITE if a or b holds NaN or ±Inf,
// ATTN_ERR_OVERFLOW if a result is not finite.
attn_status attn_matmul(float *out, const float *a, const float *b, int n, int c, int p);

// ----------------------------------------------------------------------------
// RoPE, rotary position embedding (Su et al. 2021), the position encoding of LLaMA, Qwen2 and
// Mistral (c_src/rope.c; llama.c runs the same functions). Each head's vector of d values is seen
// as d/2 pairs; pair i of the token at position p turns by the angle p·θ_i, θ_i = base^(-2i/d):
//   out[a] = x[a]·cos(p·θ_i) − x[b]·sin(p·θ_i)
//   out[b] = x[b]·cos(p·θ_i) + x[a]·sin(p·θ_i)
// with (a, b) = (i, i + d/2) in the rotate-half layout of Hugging Face's LLaMA
// (apply_rotary_pos_emb), or (2i, 2i + 1) interleaved (ATTN_ROPE_INTERLEAVED: llama.cpp's "normal"
// RoPE, which GGUF files of the `llama` architecture need; ggml's NEOX mode is rotate-half).
// Applied to q and k (not v), the score q_i·k_j then depends on the positions only through j − i.
// θ_i is rounded to float32 (as a checkpoint's inv_freq is), the angle and its cosine and sine
// are computed in double and rounded once (the core's own double maths: the same bits natively
// and in every wasm build), the rotation in float32.
// More legend: half = d/2; positions run from 0 to ATTN_ROPE_MAX_POSITION - 1.
#define ATTN_ROPE_MAX_POSITION (1 << 20)

// flags of attn_rope_rotate
#define ATTN_ROPE_INTERLEAVED 1u  // pairs (x[2i], x[2i + 1]); without it (x[i], x[i + d/2])

// Llama 3's frequency scaling (rope_type "llama3": transformers' _compute_llama3_parameters), the
// config's numbers: wavelengths 2π/θ longer than original_max_positions / low_freq_factor get
// θ / factor, those shorter than original_max_positions / high_freq_factor keep θ, and the band
// between is blended: (1 − s)·θ/factor + s·θ, s = (original_max_positions / wavelength −
// low_freq_factor) / (high_freq_factor − low_freq_factor).
typedef struct attn_rope_scaling {
    double factor;                  // >= 1
    double low_freq_factor;         // > 0
    double high_freq_factor;        // > low_freq_factor
    double original_max_positions;  // original_max_position_embeddings, >= 1
} attn_rope_scaling;

// 1. The inverse frequencies: theta (half) = base^(-2i/d), scaled when scaling is not NULL,
// computed in double and rounded once to float32 (each within (0, 1]).
// d even >= 2 (ATTN_ERR_SIZE); base >= 1 and finite, scaling's numbers as above (ATTN_ERR_RANGE).
attn_status attn_rope_frequencies(float *theta, int d, double base, const attn_rope_scaling *scaling);

// 2. The cosines and sines of rows at positions pos0 .. pos0 + n - 1: theta (half) ->
// cos (n, half), sin (n, half), cos[r][i] = cos((pos0 + r)·theta[i]). half >= 1, n >= 1
// (ATTN_ERR_SIZE); 0 <= pos0, pos0 + n <= 2^20, every theta in [0, 1] (ATTN_ERR_RANGE).
attn_status attn_rope_table(float *cos, float *sin, const float *theta, int n, int half, int pos0);

// 3. The rotation: x (n, heads·d), cos (n, d/2), sin (n, d/2) (row r's from attn_rope_table) ->
// out (n, heads·d); out may be x (in place). flags: ATTN_ROPE_INTERLEAVED or 0 (ATTN_ERR_FLAGS);
// d even >= 2 (ATTN_ERR_SIZE); NaN or ±Inf in x, cos or sin: ATTN_ERR_NON_FINITE; an output past
// float32: ATTN_ERR_OVERFLOW.
attn_status attn_rope_rotate(float *out, const float *x, const float *cos, const float *sin, int n, int heads,
                             int d, unsigned flags);

// RoPE in one call, rotate-half, no scaling: the bits of 1, 2 and 3 in turn, without their
// buffers. x (n, heads·d), row r at position pos0 + r -> out (n, heads·d), theta (d/2) or NULL:
// θ_i as used (float32). out may be x (in place). d even >= 2 (ATTN_ERR_SIZE); base >= 1 and
// finite, 0 <= pos0 and pos0 + n <= 2^20 (ATTN_ERR_RANGE); NaN or ±Inf in x:
// ATTN_ERR_NON_FINITE; an output past float32: ATTN_ERR_OVERFLOW.
attn_status attn_rope(float *out, float *theta, const float *x, int n, int heads, int d, float base, int pos0);

// ----------------------------------------------------------------------------
// Multi-head attention (episode 06), as torch.nn.MultiheadAttention computes it (c_src/mha.c).
//
// More legend: h = heads, d_head = d_model / h, g = kv_heads (g divides h: g = h is plain
// multi-head attention, 1 < g < h grouped-query attention, g = 1 multi-query attention),
// d_kv = g·d_head (= d_model when g = h).
//
//   Q = x·wq + bq,  K = kv·wk + bk,  V = kv·wv + bv      (kv = x for self-attention)
//   head_i = attention(Q[:, i·d_head ... (i+1)·d_head), K[:, j·d_head ...), V[:, j·d_head ...))
//            with j = i / (h / g), the kv head that query head i shares (j = i when g = h)
//   concat = [head_0 | head_1 | ... | head_{h-1}]   (n, d_model)
//   out    = concat·wo + bo
//
// From PyTorch (E = d_model): wq = in_proj_weight[:E].T, wk = in_proj_weight[E:2E].T,
// wv = in_proj_weight[2E:].T, wo = out_proj.weight.T; bq = in_proj_bias[:E],
// bk = in_proj_bias[E:2E], bv = in_proj_bias[2E:], bo = out_proj.bias.
// One mask (n, m) is shared by every head, with the polarity above (nonzero = may attend;
// pass !attn_mask of nn.MultiheadAttention). A query that may attend to no key gets weights 0
// and head outputs 0 in every head, so its row of out is bo (0 without bias); PyTorch gives NaN.
// Grouped-query attention matches PyTorch's scaled_dot_product_attention(enable_gqa=True),
// which repeats each kv head h / g times (repeat_interleave).

// Multi-head attention.
// x (n, d_model), kv (m, d_model) or NULL (keys and values from x: then m must equal n),
// wq (d_model, d_model), wk (d_model, d_kv), wv (d_model, d_kv), wo (d_model, d_model),
// bq (d_model), bk (d_kv), bv (d_kv), bo (d_model): each NULL for no bias, mask (n, m) or NULL
//   -> out (n, d_model), concat (n, d_model) or NULL, weights (h, n, m) or NULL
//      (head i's weights at weights + i·n·m; head i's output is columns
//       [i·d_head, (i+1)·d_head) of concat)
// scale: usually attn_default_scale(d_head) (what PyTorch uses).
// workspace: at least attn_mha_workspace_size(n, m, d_model, heads, kv_heads) bytes, aligned
// to 4 (O(n·d_model + m·d_kv), never n×m: with weights NULL each head runs the tiled kernel).
// heads < 1, kv_heads < 1, d_model not a multiple of heads, or heads not a multiple of
// kv_heads: ATTN_ERR_SIZE.
attn_status attn_mha_forward(float *out, float *concat, float *weights, float *workspace,
                             const float *x, const float *kv,
                             const float *wq, const float *wk, const float *wv, const float *wo,
                             const float *bq, const float *bk, const float *bv, const float *bo,
                             const uint8_t *mask, int n, int m, int d_model, int heads, int kv_heads,
                             float scale, unsigned flags);

// Bytes of workspace attn_mha_forward needs; 0 when the sizes are invalid or too large.
size_t attn_mha_workspace_size(int n, int m, int d_model, int heads, int kv_heads);

#ifdef __cplusplus
}
#endif

#endif // ATTN_ATTENTION_H
