// llama.h - the LLaMA family's forward pass (Hugging Face's LlamaForCausalLM, Qwen2ForCausalLM,
// Qwen3ForCausalLM) with a KV cache, in plain C11 on attention.h and tensor.h. The conventions
// of gpt2.h: caller-owned buffers, no malloc, no state, outputs first, an attn_status from every
// entry point; the same cache layout, attention slots and flags.
//
// Legend: L = layers, H = query heads, G = key/value heads (H a multiple of G), D = head_dim
// (need not be C / H), C = hidden_size, F = intermediate_size, V = vocabulary, P = positions,
// T = tokens of this call, pos = the first one's position, m = pos + T, S = the cache's capacity.
//
// The model, per token row (ids at positions pos .. pos + T - 1):
//   h = embed[id]
//   for each layer l:
//     x = RMSNorm(h; ln1[l])                        RMSNorm(x) = x / sqrt(mean(x²) + eps) · w
//     q = x·wqᵀ + bq   (T, H·D)    k = x·wkᵀ + bk   (T, G·D)    v = x·wvᵀ + bv   (T, G·D)
//     Qwen3: q, k = RMSNorm over each head's D values (q_norm, k_norm), before RoPE
//     q, k = RoPE(q, k; position): rotate-half, angle position·inv_freq[i] for i < D/2
//     y = concat_i softmax(q_i·k_gᵀ / √D, causal)·v_g, g = i / (H / G), over keys 0 .. pos + row
//     h += y·woᵀ + bo
//     x = RMSNorm(h; ln2[l]);  h += (silu(x·wgateᵀ + bgate) ⊙ (x·wupᵀ + bup))·wdownᵀ + bdown
//   logits = RMSNorm(h; norm)·lm_headᵀ   (lm_head NULL: tied, the embedding table)
// Biases and the q/k norms are present when their tensor is (non-NULL), absent otherwise.
// Matrices keep the checkpoint's dtype (F32, BF16, F16; tensor.h); vectors are F32.
#ifndef ATTN_LLAMA_H
#define ATTN_LLAMA_H

#include "attention.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct attn_llama_config {
    int n_layer;        // L
    int n_head;         // H
    int n_kv_head;      // G, divides H
    int head_dim;       // D, even
    int hidden;         // C
    int intermediate;   // F
    int vocab_size;     // V
    int n_positions;    // P
    float eps;          // rms_norm_eps, finite and > 0
} attn_llama_config;

// The tensors: a table of ATTN_LLAMA_GLOBALS + L·ATTN_LLAMA_PER_LAYER attn_tensor, the globals
// first, then layer 0's kinds, layer 1's, ... Shapes (HF's names without "model."):
enum {
    ATTN_LLAMA_EMBED = 0,   // (V, C)     embed_tokens.weight                   any dtype
    ATTN_LLAMA_NORM,        // (C)        norm.weight                           F32
    ATTN_LLAMA_LM_HEAD,     // (V, C)     lm_head.weight, or NULL when tied     any dtype
    ATTN_LLAMA_INV_FREQ,    // (D/2)      RoPE's inverse frequencies, after any scaling (attention.h's
                            //            attn_rope_frequencies), each in [0, 1]    F32
    ATTN_LLAMA_GLOBALS
};
enum {
    ATTN_LLAMA_LN1 = 0,     // (C)        layers.{l}.input_layernorm.weight     F32
    ATTN_LLAMA_WQ,          // (H·D, C)   layers.{l}.self_attn.q_proj.weight
    ATTN_LLAMA_BQ,          // (H·D)      .q_proj.bias or NULL                  F32
    ATTN_LLAMA_WK,          // (G·D, C)   .k_proj.weight
    ATTN_LLAMA_BK,          // (G·D)      .k_proj.bias or NULL
    ATTN_LLAMA_WV,          // (G·D, C)   .v_proj.weight
    ATTN_LLAMA_BV,          // (G·D)      .v_proj.bias or NULL
    ATTN_LLAMA_QNORM,       // (D)        .q_norm.weight or NULL (Qwen3)
    ATTN_LLAMA_KNORM,       // (D)        .k_norm.weight or NULL (Qwen3)
    ATTN_LLAMA_WO,          // (C, H·D)   .o_proj.weight
    ATTN_LLAMA_BO,          // (C)        .o_proj.bias or NULL
    ATTN_LLAMA_LN2,         // (C)        layers.{l}.post_attention_layernorm.weight
    ATTN_LLAMA_WGATE,       // (F, C)     layers.{l}.mlp.gate_proj.weight
    ATTN_LLAMA_BGATE,       // (F)        .gate_proj.bias or NULL
    ATTN_LLAMA_WUP,         // (F, C)     .up_proj.weight
    ATTN_LLAMA_BUP,         // (F)        .up_proj.bias or NULL
    ATTN_LLAMA_WDOWN,       // (C, F)     .down_proj.weight
    ATTN_LLAMA_BDOWN,       // (C)        .down_proj.bias or NULL
    ATTN_LLAMA_PER_LAYER
};

// flags of attn_llama_forward
#define ATTN_LLAMA_LAST_ONLY 1u  // logits of the last token only: logits is (1, V)

// ATTN_OK for a table the forward pass can run: every required tensor there, matrices of a known
// dtype, vectors F32; both q/k norms or neither in every layer. ATTN_ERR_NULL, ATTN_ERR_SIZE (a
// size < 1, H not a multiple of G, D odd), ATTN_ERR_RANGE (eps, an inverse frequency outside
// [0, 1]), ATTN_ERR_FLAGS (a dtype).
attn_status attn_llama_check(const attn_llama_config *cfg, const attn_tensor *tensors);

// Bytes of a KV cache for positions 0 .. S - 1: (L, 2, G, S, D) floats, as gpt2.h's with G
// heads. 0 when the sizes are invalid or too large.
size_t attn_llama_cache_size(const attn_llama_config *cfg, int S);

// Bytes of workspace attn_llama_forward needs for T tokens over m keys; 0 when too large.
size_t attn_llama_workspace_size(const attn_llama_config *cfg, int T, int m);

// The forward pass of ids (T) at positions pos .. pos + T - 1, as gpt2.h's attn_gpt2_forward:
// logits (T, V), (1, V) with ATTN_LLAMA_LAST_ONLY, or NULL; attention, slots and keep as there,
// one block per query head (H per layer); the cache holds positions 0 .. pos - 1 and gets this
// call's. ATTN_ERR_RANGE for an id outside [0, V) or positions past P, S or 2^20 (RoPE's
// ATTN_ROPE_MAX_POSITION); ATTN_ERR_OVERFLOW when a result is not finite (the weights are checked
// when loaded: attn_first_non_finite).
attn_status attn_llama_forward(float *logits, float *attention, const int32_t *slots, const attn_heads_keep *keep,
                               float *kv_cache, float *workspace, const attn_llama_config *cfg, const attn_tensor *tensors,
                               const int32_t *ids, int T, int pos, int S, unsigned flags);

// A KV cache of capacity S_src moved into one of capacity S_dst (positions 0 .. length - 1 kept):
// caches of both families are (blocks, S, d) with blocks = L·2·heads. dst and src do not overlap.
attn_status attn_cache_move(float *dst, int S_dst, const float *src, int S_src, int blocks, int d, int length);

#ifdef __cplusplus
}
#endif

#endif // ATTN_LLAMA_H
