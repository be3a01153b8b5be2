// bert.h - BERT's encoder (Hugging Face's BertModel and BertForMaskedLM), in plain C11 on
// attention.h and tensor.h. The conventions of gpt2.h and llama.h: caller-owned buffers, no
// malloc, no state, outputs first, an attn_status from every entry point; llama.h's table of
// typed tensors and its attention slots. No cache: an encoder sees the whole text at once.
//
// Legend: L = layers, H = heads, C = hidden_size, d = C / H, F = intermediate_size,
// V = vocabulary, P = max_position_embeddings, Y = type_vocab_size, T = tokens of this call.
//
// The model, per token row i (ids, token types, key mask over the T tokens):
//   h = LayerNorm(word[id] + position[i] + type[type]; emb_ln)
//   for each layer l (post-LN):
//     q = h·wqᵀ + bq    k = h·wkᵀ + bk    v = h·wvᵀ + bv            (T, C), head i in columns [i·d, (i+1)·d)
//     y = concat_i softmax(q_i·k_iᵀ / √d over the keys the mask keeps)·v_i   (bidirectional)
//     h = LayerNorm(h + y·woᵀ + bo; ln1[l])
//     h = LayerNorm(h + gelu(h·wiᵀ + bi)·wo2ᵀ + bo2; ln2[l])
//   hidden = h
//   masked-LM head (when its tensors are there):
//     t = LayerNorm(gelu(h·whᵀ + bh); head_ln);  logits = t·wordᵀ + decoder_bias
// LayerNorm(x) = (x - mean)/sqrt(var + eps)·w + b (biased variance); gelu(x) = x/2·(1 + erf(x/√2)),
// the exact form (hidden_act "gelu"). A key the mask drops is seen by no query (HF adds the
// float's minimum to its scores); a masked query row is computed all the same.
#ifndef ATTN_BERT_H
#define ATTN_BERT_H

#include "attention.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct attn_bert_config {
    int n_layer;        // L
    int n_head;         // H, divides C
    int hidden;         // C
    int intermediate;   // F
    int vocab_size;     // V
    int n_positions;    // P (max_position_embeddings)
    int n_types;        // Y (type_vocab_size)
    float eps;          // layer_norm_eps, finite and > 0
} attn_bert_config;

// The tensors: a table of ATTN_BERT_GLOBALS + L·ATTN_BERT_PER_LAYER attn_tensor, the globals
// first, then layer 0's kinds, layer 1's, ... Shapes (HF's names without "bert."):
enum {
    ATTN_BERT_WORD = 0,     // (V, C)  embeddings.word_embeddings.weight          any dtype
    ATTN_BERT_POSITION,     // (P, C)  embeddings.position_embeddings.weight      any dtype
    ATTN_BERT_TYPE,         // (Y, C)  embeddings.token_type_embeddings.weight    any dtype
    ATTN_BERT_EMB_LN_W,     // (C)     embeddings.LayerNorm.weight (or .gamma)    F32
    ATTN_BERT_EMB_LN_B,     // (C)     embeddings.LayerNorm.bias (or .beta)       F32
    ATTN_BERT_HEAD_W,       // (C, C)  cls.predictions.transform.dense.weight, or NULL: no head
    ATTN_BERT_HEAD_B,       // (C)     cls.predictions.transform.dense.bias
    ATTN_BERT_HEAD_LN_W,    // (C)     cls.predictions.transform.LayerNorm.weight
    ATTN_BERT_HEAD_LN_B,    // (C)     cls.predictions.transform.LayerNorm.bias
    ATTN_BERT_DECODER_B,    // (V)     cls.predictions.bias (the decoder is tied to the word table)
    ATTN_BERT_GLOBALS
};
enum {
    ATTN_BERT_WQ = 0,       // (C, C)  encoder.layer.{l}.attention.self.query.weight
    ATTN_BERT_BQ,           // (C)     .query.bias                                 F32
    ATTN_BERT_WK,           // (C, C)  .key.weight
    ATTN_BERT_BK,           // (C)     .key.bias
    ATTN_BERT_WV,           // (C, C)  .value.weight
    ATTN_BERT_BV,           // (C)     .value.bias
    ATTN_BERT_WO,           // (C, C)  encoder.layer.{l}.attention.output.dense.weight
    ATTN_BERT_BO,           // (C)     .dense.bias
    ATTN_BERT_LN1_W,        // (C)     encoder.layer.{l}.attention.output.LayerNorm.weight
    ATTN_BERT_LN1_B,        // (C)     .LayerNorm.bias
    ATTN_BERT_WI,           // (F, C)  encoder.layer.{l}.intermediate.dense.weight
    ATTN_BERT_BI,           // (F)     .dense.bias
    ATTN_BERT_WO2,          // (C, F)  encoder.layer.{l}.output.dense.weight
    ATTN_BERT_BO2,          // (C)     .dense.bias
    ATTN_BERT_LN2_W,        // (C)     encoder.layer.{l}.output.LayerNorm.weight
    ATTN_BERT_LN2_B,        // (C)     .LayerNorm.bias
    ATTN_BERT_PER_LAYER
};

// ATTN_OK for a table the forward pass can run: every tensor there (the head's five all there
// or, from HEAD_W on, all NULL), matrices of a known dtype, vectors F32. ATTN_ERR_NULL,
// ATTN_ERR_SIZE (a size < 1, C not a multiple of H), ATTN_ERR_RANGE (eps), ATTN_ERR_FLAGS (a
// dtype).
attn_status attn_bert_check(const attn_bert_config *cfg, const attn_tensor *tensors);

// Bytes of workspace attn_bert_forward needs for T tokens; 0 when the sizes are invalid or too
// large.
size_t attn_bert_workspace_size(const attn_bert_config *cfg, int T);

// The encoder over ids (T) with token types types (T, NULL: all 0) and key_mask (T bytes, nonzero
// = a real token; NULL: all real): hidden (T, C) the last layer's states, or NULL; logits (T, V)
// through the masked-LM head, or NULL (ATTN_ERR_NULL when asked without a head); attention and
// slots as llama.h's, blocks of (T, T) (a dropped key's column is 0); keep as llama.h's, its
// scores over the tokens key_mask keeps. ATTN_ERR_RANGE for an id
// outside [0, V), a type outside [0, Y), T > P, or a mask that keeps no key; ATTN_ERR_OVERFLOW
// when a result is not finite (the weights are checked when loaded: attn_first_non_finite).
attn_status attn_bert_forward(float *hidden, float *logits, float *attention, const int32_t *slots,
                              const attn_heads_keep *keep, float *workspace, const attn_bert_config *cfg,
                              const attn_tensor *tensors, const int32_t *ids, const int32_t *types,
                              const uint8_t *key_mask, int T);

#ifdef __cplusplus
}
#endif

#endif // ATTN_BERT_H
