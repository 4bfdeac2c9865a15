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

// out[i] = gelu_tanh(gate[i]) * up[i] (GeGLU, Gemma), gelu_tanh(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
// PyTorch's gelu(approximate="tanh"). out may alias gate or up.
void gelu_tanh_mul_ref(const float* gate, const float* up, std::int64_t n, float* out);
void gelu_tanh_mul_cpu(const float* gate, const float* up, std::int64_t n, float* out);

// x[i] = cap * tanh(x[i] / cap) (Gemma 2's logit soft-capping), cap > 0.
void softcap_inplace_ref(float* x, std::int64_t n, float cap);
void softcap_inplace_cpu(float* x, std::int64_t n, float cap);

// acc[i] += x[i]
void add_inplace_ref(float* acc, const float* x, std::int64_t n);
void add_inplace_cpu(float* acc, const float* x, std::int64_t n);

}  // namespace exl
