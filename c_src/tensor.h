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

// Bytes of one value of dtype; 0 for an unknown dtype.
size_t attn_dtype_size(int dtype);

// out (count floats) = src (count values of dtype), exactly.
void attn_widen(float *out, const void *src, int dtype, size_t count);

// The index of the first NaN or ±Inf among count values of dtype, or count when all are finite.
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
