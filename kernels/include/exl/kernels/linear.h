// Unquantized linear layers and small dense helpers.
// Weights use the HF layout: w[n, k] (out_features rows), fp16, bf16 or fp32 storage.
#pragma once
#include <cstdint>

#include "exl/kernels/half.h"

namespace exl {

enum class DType : std::uint8_t { f32, f16, bf16, i32, i16, i8, u8 };

// y[m, n] = sum_k x[m, k] * w[n, k] (+ bias[n]); x and y fp32; bias may be null (fp32).
// w_dtype is f16, bf16 or f32.
void linear_ref(const float* x, int m, int k, const void* w, DType w_dtype, int n, const float* bias,
                float* y);
void linear_cpu(const float* x, int m, int k, const void* w, DType w_dtype, int n, const float* bias,
                float* y);

// Embedding lookup: out[t, :] = table[ids[t], :] widened to fp32 (table [vocab, dim]).
// Ids outside [0, vocab) give a zero row (callers validate ids first).
void embedding_ref(const void* table, DType dtype, int vocab, int dim, const std::int32_t* ids, int n,
                   float* out);
void embedding_cpu(const void* table, DType dtype, int vocab, int dim, const std::int32_t* ids, int n,
                   float* out);

}  // namespace exl
