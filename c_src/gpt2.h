// gpt2.h - GPT-2's forward pass (as Hugging Face's GPT2LMHeadModel computes it) with a KV cache,
// in plain C11 on top of attention.h. Same conventions: caller-owned buffers, no malloc, no state,
// outputs first, an attn_status from every entry point.
//
// Legend (more of attention.h's): L = layers, H = heads, C = model width (n_embd), d = C / H,
// V = vocabulary, P = the model's positions (n_positions), T = tokens of this call,
// pos = the position of the first of them, m = pos + T = keys each layer attends over,
// S = positions the KV cache holds (its capacity, <= P is all that is ever used).
//
// The model, per token row (ids at positions pos .. pos + T - 1):
//   h = wte[id] + wpe[position]
//   for each layer l:
//     a   = LayerNorm(h; ln1_w[l], ln1_b[l])
//     qkv = a·qkv_w[l] + qkv_b[l]                  (T, 3C): q | k | v, head i in columns [i·d, (i+1)·d) of each
//     y   = concat_i softmax(q_i·k_iᵀ / √d, causal)·v_i   over keys 0 .. pos + row (the cache's and this call's)
//     h  += y·attproj_w[l] + attproj_b[l]
//     m   = LayerNorm(h; ln2_w[l], ln2_b[l])
//     h  += gelu_new(m·fc_w[l] + fc_b[l])·fcproj_w[l] + fcproj_b[l]
//   logits = LayerNorm(h; lnf_w, lnf_b)·wteᵀ      (tied embeddings)
// LayerNorm(x) = (x - mean)/sqrt(var + eps)·w + b (biased variance); gelu_new(x) =
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). The weights are (in, out) like HF's Conv1D:
// HF's h.{l}.attn.c_attn.weight is qkv_w[l] as it is, no transpose.
#ifndef ATTN_GPT2_H
#define ATTN_GPT2_H

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct attn_gpt2_config {
    int n_layer;      // L
    int n_head;       // H, divides n_embd
    int n_embd;       // C
    int vocab_size;   // V
    int n_positions;  // P
    float eps;        // layer_norm_epsilon (1e-5 in GPT-2), finite and > 0
} attn_gpt2_config;

// The parameters: float32 in ONE block, these kinds in this order, each kind stacked over the
// layers (llm.c's layout). Fill it with the checkpoint's tensors as they are, check it
// (attn_gpt2_check_params), then pack it once (attn_gpt2_pack): the forward pass reads the
// four weight matrices of every layer in its kernel's order. Shapes, with HF's name of layer l's
// tensor:
typedef enum attn_gpt2_param {
    ATTN_GPT2_WTE = 0,      // (V, C)         wte.weight
    ATTN_GPT2_WPE,          // (P, C)         wpe.weight
    ATTN_GPT2_LN1_W,        // (L, C)         h.{l}.ln_1.weight
    ATTN_GPT2_LN1_B,        // (L, C)         h.{l}.ln_1.bias
    ATTN_GPT2_QKV_W,        // (L, C, 3C)     h.{l}.attn.c_attn.weight
    ATTN_GPT2_QKV_B,        // (L, 3C)        h.{l}.attn.c_attn.bias
    ATTN_GPT2_ATTPROJ_W,    // (L, C, C)      h.{l}.attn.c_proj.weight
    ATTN_GPT2_ATTPROJ_B,    // (L, C)         h.{l}.attn.c_proj.bias
    ATTN_GPT2_LN2_W,        // (L, C)         h.{l}.ln_2.weight
    ATTN_GPT2_LN2_B,        // (L, C)         h.{l}.ln_2.bias
    ATTN_GPT2_FC_W,         // (L, C, 4C)     h.{l}.mlp.c_fc.weight
    ATTN_GPT2_FC_B,         // (L, 4C)        h.{l}.mlp.c_fc.bias
    ATTN_GPT2_FCPROJ_W,     // (L, 4C, C)     h.{l}.mlp.c_proj.weight
    ATTN_GPT2_FCPROJ_B,     // (L, C)         h.{l}.mlp.c_proj.bias
    ATTN_GPT2_LNF_W,        // (C)            ln_f.weight
    ATTN_GPT2_LNF_B,        // (C)            ln_f.bias
    ATTN_GPT2_N_PARAMS
} attn_gpt2_param;

// flags of attn_gpt2_forward
#define ATTN_GPT2_LAST_ONLY 1u  // logits of the last token only: logits is (1, V)

// offsets (ATTN_GPT2_N_PARAMS + 1): offsets[kind] = the kind's first float in the block,
// offsets[ATTN_GPT2_N_PARAMS] = the block's length in floats. Layer l of a stacked kind starts
// at offsets[kind] + l·(offsets[kind + 1] - offsets[kind]) / L.
// ATTN_ERR_NULL, ATTN_ERR_SIZE (a size < 1, C not a multiple of H), ATTN_ERR_RANGE (eps not
// finite and > 0), ATTN_ERR_TOO_LARGE (the block's bytes do not fit in size_t).
attn_status attn_gpt2_param_layout(size_t *offsets, const attn_gpt2_config *cfg);

// ATTN_OK when every parameter is finite, else ATTN_ERR_NON_FINITE (the forward pass finds a
// non-finite parameter only where it reaches a result; this looks at all of them).
attn_status attn_gpt2_check_params(const attn_gpt2_config *cfg, const float *params);

// Bytes of scratch attn_gpt2_pack needs: one weight matrix of the largest, 4C·C floats; 0
// when the sizes are invalid or too large.
size_t attn_gpt2_pack_scratch_size(const attn_gpt2_config *cfg);

// Packs params, filled in the layout above, in place for attn_gpt2_forward: each layer's
// QKV_W, ATTPROJ_W, FC_W and FCPROJ_W become attn_pack_weight's order (the same floats, the same
// offsets and sizes; the other kinds stay as they are). Once: packing packed weights scrambles
// them. scratch: attn_gpt2_pack_scratch_size(cfg) bytes. ATTN_ERR_NULL, and the layout's statuses.
attn_status attn_gpt2_pack(float *params, float *scratch, const attn_gpt2_config *cfg);

// Bytes of a KV cache for positions 0 .. S - 1: keys and values (L, 2, H, S, d). 0 when the
// sizes are invalid or too large.
size_t attn_gpt2_cache_size(const attn_gpt2_config *cfg, int S);

// Bytes of workspace attn_gpt2_forward needs for T tokens attending over m = pos + T keys
// (aligned to 4). 0 when the sizes are invalid or too large.
size_t attn_gpt2_workspace_size(const attn_gpt2_config *cfg, int T, int m);

// The forward pass of tokens ids (T) at positions pos .. pos + T - 1. The cache holds the keys
// and values of positions 0 .. pos - 1 from earlier calls (any pos for which they are there);
// this call writes those of its own positions. A full pass is pos = 0, T = n; one step of
// decoding is T = 1 at pos = the tokens so far.
//   -> logits (T, V), or (1, V) for the last token with ATTN_GPT2_LAST_ONLY, or NULL for none;
//      attention (L, H, T, m) or NULL: layer l, head i's softmax weights, row r for the query at
//      position pos + r over keys 0 .. m - 1 (0 for the keys after pos + r).
//      slots (L·H) or NULL picks the heads written: head i of layer l goes to block
//      slots[l·H + i] of attention, (B, T, m) with B = 1 + the largest slot, or nowhere for -1
//      (so one head's map costs T·m floats, not L·H·T·m); NULL is every head, in order.
//      keep (heads.h's attn_heads_keep) or NULL: every head's scores, and what attn_heads_map
//      needs, without the maps.
// kv_cache: attn_gpt2_cache_size(cfg, S) bytes; workspace: attn_gpt2_workspace_size(cfg, T, m).
// ATTN_ERR_RANGE: an id outside [0, V), pos < 0, pos + T past P or S, a slot below -1. A NaN or ±Inf in a
// parameter that reaches a result: ATTN_ERR_NON_FINITE; finite ones that overflow float32:
// ATTN_ERR_OVERFLOW. On any error the outputs and the cache's rows pos .. pos + T - 1 hold
// unspecified values; the rows before pos are untouched.
attn_status attn_gpt2_forward(float *logits, float *attention, const int32_t *slots, const attn_heads_keep *keep,
                              float *kv_cache, float *workspace, const attn_gpt2_config *cfg, const float *params,
                              const int32_t *ids, int T, int pos, int S, unsigned flags);

// The linear layers' kernels, for tests and C users (not exported to wasm).
// packed (k·p floats) = w (k, p) rearranged for attn_linear_packed: for each block of 256
// columns, for each block of 128 rows, strips of 8 columns (the block's last: what is left),
// each strip's rows one after the other. packed and w do not overlap. ATTN_ERR_NULL,
// ATTN_ERR_SIZE, ATTN_ERR_TOO_LARGE.
attn_status attn_pack_weight(float *packed, const float *w, int k, int p);
// out (n, p) = a (n, k)·w (k, p) + b (p, or NULL for none), w given packed: cache-blocked 4-wide
// vectors, each output summed over k in order, so the same bits as attn_linear_naive.
// ATTN_ERR_NULL, ATTN_ERR_SIZE, ATTN_ERR_TOO_LARGE; ATTN_ERR_NON_FINITE when an input holds NaN
// or ±Inf that reaches out, ATTN_ERR_OVERFLOW when finite inputs overflow.
attn_status attn_linear_packed(float *out, const float *a, const float *packed, const float *b, int n, int k, int p);
// The same over w as it is (k, p), in plain loops (each output summed over k in order, then + b):
// the reference.
attn_status attn_linear_naive(float *out, const float *a, const float *w, const float *b, int n, int k, int p);
// out (n, p) = a (n, k)·wᵀ, w (p, k) (logits = h·wteᵀ): dot products, 4 rows of a by 4 of w.
attn_status attn_linear_t(float *out, const float *a, const float *w, int n, int k, int p);
attn_status attn_linear_t_naive(float *out, const float *a, const float *w, int n, int k, int p);
// x = gelu_new(x) in place, as x·σ(2u) (see gpt2.c): within a few ulp of the formula above
// evaluated in float64. ATTN_ERR_NULL.
attn_status attn_gelu_new(float *x, size_t count);

#ifdef __cplusplus
}
#endif

#endif // ATTN_GPT2_H
