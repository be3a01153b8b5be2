// tensor.h - weights as checkpoints store them (F32, BF16, F16) and the linear kernel over them,
// shared by every model family (gpt2.c, llama.c); c_src/linear.c. Conventions as attention.h:
// caller-owned buffers, no malloc, an attn_status from every checked entry point.
#ifndef ATTN_TENSOR_H
#define ATTN_TENSOR_H

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

// The dtypes a weight matrix may keep in memory (safetensors' names): 4 or 2 bytes a value,
// little-endian, widened to float where they are used. Vectors (norms, biases) are always F32.
typedef enum attn_dtype {
    ATTN_F32 = 0,
    ATTN_BF16 = 1,
    ATTN_F16 = 2,
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

// Bytes of one value of dtype (with or without ATTN_PANEL8); 0 for an unknown dtype.
size_t attn_dtype_size(int dtype);

// Puts w (p, k) of dtype into panels of 8 rows, in place; scratch: 8·k values of dtype. Returns
// dtype | ATTN_PANEL8, or dtype as it was when panels do not apply (F32, k % 4 != 0, p < 8, or
// already in panels).
int attn_panel8(void *w, int dtype, int p, int k, void *scratch);

// out (k floats) = row j of w (p, k) in dtype (in panels or not), widened exactly.
void attn_widen_row(float *out, const void *w, int dtype, int j, int k, int p);

// out (count floats) = src (count values of dtype, not in panels), exactly.
void attn_widen(float *out, const void *src, int dtype, size_t count);

// The index of the first NaN or ±Inf among count values of dtype, or count when all are finite
// (an index into the values as they are stored: check before attn_panel8).
size_t attn_first_non_finite(const void *w, int dtype, size_t count);

// Floats of scratch attn_linear_typed needs for n > 1 rows and w not F32, for any k' <= k: a block
// of w's rows, widened (128 KiB, or 4 rows when they are longer).
size_t attn_linear_scratch_floats(int k);

// out (n, p) = a (n, k)·wᵀ + b: w (p, k) in dtype (nn.Linear's (out, in) layout), b (p) or NULL.
// Every output summed over k four lanes at a time, then (l0 + l1) + (l2 + l3), then the tail,
// then + b, whatever n is: a row computed alone has the bits it has among others.
// scratch: attn_linear_scratch_floats(k) floats (unused, and may be NULL, for F32 or n = 1).
// ATTN_ERR_NULL, ATTN_ERR_SIZE, ATTN_ERR_FLAGS (an unknown dtype), ATTN_ERR_TOO_LARGE;
// ATTN_ERR_OVERFLOW when the result is not finite.
attn_status attn_linear_typed(float *out, const float *a, const void *w, int dtype, const float *b,
                              int n, int k, int p, float *scratch);
// The same in plain loops (each output summed over k in order, then + b): the reference.
attn_status attn_linear_typed_naive(float *out, const float *a, const void *w, int dtype, const float *b,
                                    int n, int k, int p);

#ifdef __cplusplus
}
#endif

#endif // ATTN_TENSOR_H
