// Element-wise and row-wise ops of the Llama forward pass (spec §4), fp32 activations.
#pragma once
#include <cstdint>

#include "exl/kernels/half.h"
#include "exl/kernels/linear.h"

namespace exl {

// y[r, :] = x[r, :] * w[:] / sqrt(mean(x[r, :]^2) + eps). w fp16 (or fp32/bf16 per dtype).
// x and y may alias.
void rms_norm_ref(const float* x, int rows, int dim, const void* w, DType w_dtype, float eps, float* y);
void rms_norm_cpu(const float* x, int rows, int dim, const void* w, DType w_dtype, float eps, float* y);

// out[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + exp(-x)). out may alias gate or up.
void silu_mul_ref(const float* gate, const float* up, std::int64_t n, float* out);
void silu_mul_cpu(const float* gate, const float* up, std::int64_t n, float* out);

// acc[i] += x[i]
void add_inplace_ref(float* acc, const float* x, std::int64_t n);
void add_inplace_cpu(float* acc, const float* x, std::int64_t n);

}  // namespace exl
