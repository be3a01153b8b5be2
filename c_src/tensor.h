// tensor.h - weights as checkpoints store them (F32, BF16, F16, ggml's quantized blocks) and the
// linear kernel over them, shared by every model family (gpt2.c, llama.c); c_src/linear.c.
// Conventions as attention.h: caller-owned buffers, no malloc, an attn_status from every checked
// entry point.
#ifndef ATTN_TENSOR_H
#define ATTN_TENSOR_H

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

// The dtypes a weight matrix may keep in memory (safetensors' names): 4 or 2 bytes a value,
// little-endian, widened to float where they are used. Vectors (norms, biases) are always F32.
// Then ggml's block-quantized types (GGUF files), byte for byte in ggml's layouts
// (ggml/src/ggml-common.h): a row of k values is k / block blocks, one after the other, each
// dequantized to ggml's values bit for bit (its float16 scales widened exactly, each value's
// products in float in ggml's order) where it is used. Blocks of 32 values: Q8_0, Q4_0, Q4_1,
// Q5_0, Q5_1, IQ4_NL; of 256 (ggml's super-blocks): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS.
// Each code is ggml's type id (enum ggml_type, the GGUF tensor info's type) shifted left by 8:
// ggml's ids themselves collide with F16 (1) and ATTN_PANEL8 (0x10).
typedef enum attn_dtype {
    ATTN_F32 = 0,
    ATTN_BF16 = 1,
    ATTN_F16 = 2,
    ATTN_Q4_0 = 2 << 8,      // 18 bytes / 32: f16 d, 16 bytes of nibbles; d·(q - 8)
    ATTN_Q4_1 = 3 << 8,      // 20 bytes / 32: f16 d, f16 m, nibbles; d·q + m
    ATTN_Q5_0 = 6 << 8,      // 22 bytes / 32: f16 d, 4 bytes of fifth bits, nibbles; d·(q - 16)
    ATTN_Q5_1 = 7 << 8,      // 24 bytes / 32: f16 d, f16 m, fifth bits, nibbles; d·q + m
    ATTN_Q8_0 = 8 << 8,      // 34 bytes / 32: f16 d, 32 int8 q; d·q
    ATTN_Q2_K = 10 << 8,     // 84 bytes / 256
    ATTN_Q3_K = 11 << 8,     // 110 bytes / 256
    ATTN_Q4_K = 12 << 8,     // 144 bytes / 256
    ATTN_Q5_K = 13 << 8,     // 176 bytes / 256
    ATTN_Q6_K = 14 << 8,     // 210 bytes / 256
    ATTN_IQ4_NL = 20 << 8,   // 18 bytes / 32
    ATTN_IQ4_XS = 23 << 8,   // 136 bytes / 256
} attn_dtype;

// A tensor in memory: its first value and its dtype.
typedef struct attn_tensor {
    const void *data;
    int32_t dtype;
} attn_tensor;

// A matrix of 2-byte values (BF16, F16) may be kept in panels of 8 rows, or-ed into its dtype:
// rows 8g .. 8g + 7 hold their values four by four, interleaved, value (8g + r, t) at
// 32·(t / 4) + 4·r + t % 4 of the panel (which takes the bytes the 8 rows took). A decoding step
// (n = 1) then reads one stream per 8 rows, with fixed offsets. The last p % 8 rows stay rows.
// Every sum is the same as over rows: only where values are read from changes.
enum { ATTN_PANEL8 = 0x10 };

// Bytes of one value of dtype (with or without ATTN_PANEL8); 0 for an unknown dtype, and 0 for
// the block-quantized types, whose values take no whole number of bytes (see attn_row_bytes).
size_t attn_dtype_size(int dtype);

// Values in one block of dtype: 1 for F32, BF16, F16 (in panels or not), 32 or 256 for the
// quantized types, 0 for an unknown dtype (so also: whether a matrix may be of dtype).
int attn_dtype_block(int dtype);

// Bytes of a row of k values of dtype (k · attn_dtype_size for F32, BF16, F16; k / block blocks
// for the quantized types); 0 when k < 0, when k is not a multiple of dtype's block, or when the
// dtype is unknown.
size_t attn_row_bytes(int dtype, int k);

// Puts w (p, k) of dtype into panels of 8 rows, in place; scratch: 8·k values of dtype. Returns
// dtype | ATTN_PANEL8, or dtype as it was when panels do not apply (F32, a quantized type,
// k % 4 != 0, p < 8, or already in panels).
int attn_panel8(void *w, int dtype, int p, int k, void *scratch);

// out (k floats) = row j of w (p, k) in dtype (in panels or not), widened exactly (quantized:
// dequantized as ggml does; k a multiple of the block).
void attn_widen_row(float *out, const void *w, int dtype, int j, int k, int p);

// out (count floats) = src (count values of dtype, not in panels), exactly (quantized: count a
// multiple of the block; a last partial block is left out).
void attn_widen(float *out, const void *src, int dtype, size_t count);

// The index of the first NaN or ±Inf among count values of dtype, or count when all are finite
// (an index into the values as they are stored: check before attn_panel8). Quantized (count a
// multiple of the block): the first value of the first block with a scale (d, m or dmin) that
// is NaN or ±Inf; finite scales give finite values.
size_t attn_first_non_finite(const void *w, int dtype, size_t count);

// Floats of scratch attn_linear_typed needs for n > 1 rows and w not F32, for any k' <= k: a block
// of w's rows, widened (128 KiB, or 4 rows when they are longer).
size_t attn_linear_scratch_floats(int k);

// out (n, p) = a (n, k)·wᵀ + b: w (p, k) in dtype (nn.Linear's (out, in) layout), b (p) or NULL.
// Every output summed over k four lanes at a time, then (l0 + l1) + (l2 + l3), then the tail,
// then + b, whatever n is: a row computed alone has the bits it has among others.
// scratch: attn_linear_scratch_floats(k) floats (unused, and may be NULL, for F32 or n = 1).
// Quantized w: k a multiple of the block; n > 1 dequantizes blocks of rows into scratch, n = 1
// dequantizes a block at a time and sums as above (the same bits as over the dequantized rows).
// ATTN_ERR_NULL, ATTN_ERR_SIZE (also k not a multiple of w's block), ATTN_ERR_FLAGS (an unknown
// dtype), ATTN_ERR_TOO_LARGE; ATTN_ERR_OVERFLOW when the result is not finite.
attn_status attn_linear_typed(float *out, const float *a, const void *w, int dtype, const float *b,
                              int n, int k, int p, float *scratch);
// The same in plain loops (each output summed over k in order, then + b): the reference
// (quantized: each row dequantized by ggml's loops, a block at a time, and summed in order).
attn_status attn_linear_typed_naive(float *out, const float *a, const void *w, int dtype, const float *b,
                                    int n, int k, int p);

#ifdef __cplusplus
}
#endif

#endif // ATTN_TENSOR_H
