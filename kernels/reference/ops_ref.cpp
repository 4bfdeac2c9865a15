// Reference row/element-wise ops (spec §4.3, §4.6): RMSNorm, SiLU-gated product, residual add.
// fp32 activations; sums in double. Single-threaded.
#include <cmath>
#include <cstdint>

#include "elem.h"
#include "exl/kernels/ops.h"

namespace exl {

void rms_norm_ref(const float* x, int rows, int dim, const void* w, DType w_dtype, float eps, float* y) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + std::int64_t(r) * dim;
    float* yr = y + std::int64_t(r) * dim;
    double ss = 0.0;
    for (int i = 0; i < dim; ++i) ss += double(xr[i]) * double(xr[i]);
    const double inv = 1.0 / std::sqrt(ss / double(dim) + double(eps));
    for (int i = 0; i < dim; ++i) yr[i] = float(double(xr[i]) * inv * double(detail::load_elem(w, w_dtype, i)));
  }
}

void silu_mul_ref(const float* gate, const float* up, std::int64_t n, float* out) {
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] = float(g / (1.0 + std::exp(-g)) * double(up[i]));
  }
}

void gelu_tanh_mul_ref(const float* gate, const float* up, std::int64_t n, float* out) {
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] = float(0.5 * g * (1.0 + std::tanh(k * (g + 0.044715 * g * g * g))) * double(up[i]));
  }
}

void softcap_inplace_ref(float* x, std::int64_t n, float cap) {
  for (std::int64_t i = 0; i < n; ++i) x[i] = float(double(cap) * std::tanh(double(x[i]) / double(cap)));
}

void add_inplace_ref(float* acc, const float* x, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) acc[i] += x[i];
}

}  // namespace exl
