// Fast CPU row / element-wise ops of the forward pass: RMSNorm (threads over rows, double sum
// of squares), SiLU- and GELU(tanh)-gated products, soft-capping and residual add (threads over contiguous element ranges,
// fp32), and RoPE (threads over tokens; cos/sin per token and frequency computed once, exactly
// as the reference does, then applied to every head).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../reference/elem.h"
#include "exl/kernels/ops.h"
#include "exl/kernels/rope.h"
#include "exl/kernels/threads.h"

namespace exl {

namespace {
constexpr std::int64_t k_elem_grain = 16384;
}

void rms_norm_cpu(const float* x, int rows, int dim, const void* w, DType w_dtype, float eps, float* y) {
  std::vector<float> wf(std::size_t(std::max(dim, 0)));
  for (int i = 0; i < dim; ++i) wf[i] = detail::load_elem(w, w_dtype, i);
  parallel_for(rows, 1, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * dim;
      float* yr = y + r * dim;
      double ss0 = 0.0, ss1 = 0.0;
      int i = 0;
      for (; i + 2 <= dim; i += 2) {
        ss0 += double(xr[i]) * xr[i];
        ss1 += double(xr[i + 1]) * xr[i + 1];
      }
      if (i < dim) ss0 += double(xr[i]) * xr[i];
      const float inv = float(1.0 / std::sqrt((ss0 + ss1) / double(dim) + double(eps)));
      for (int j = 0; j < dim; ++j) yr[j] = xr[j] * inv * wf[j];
    }
  });
}

void silu_mul_cpu(const float* gate, const float* up, std::int64_t n, float* out) {
  parallel_for(n, k_elem_grain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const float g = gate[i];
      out[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
  });
}

void gelu_tanh_mul_cpu(const float* gate, const float* up, std::int64_t n, float* out) {
  constexpr float k = 0.7978845608028654f;  // sqrt(2 / pi)
  parallel_for(n, k_elem_grain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const float g = gate[i];
      out[i] = 0.5f * g * (1.0f + std::tanh(k * (g + 0.044715f * g * g * g))) * up[i];
    }
  });
}

void softcap_inplace_cpu(float* x, std::int64_t n, float cap) {
  const float inv = 1.0f / cap;
  for (std::int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] * inv);
}

void add_inplace_cpu(float* acc, const float* x, std::int64_t n) {
  parallel_for(n, k_elem_grain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) acc[i] += x[i];
  });
}

void rope_apply_cpu(float* x, int tokens, int heads, int head_dim, const std::int32_t* positions,
                    const RopeTable& table, RopeStyle style) {
  const int half = rope_half(table, head_dim);
  parallel_for(tokens, 1, [&](std::int64_t t0, std::int64_t t1) {
    std::vector<float> cs(static_cast<std::size_t>(half)), sn(static_cast<std::size_t>(half));
    for (std::int64_t t = t0; t < t1; ++t) {
      const double pos = double(positions[t]) / double(table.position_divisor);
      for (int i = 0; i < half; ++i) {
        const double angle = double(float(pos * double(table.inv_freq[i])));
        cs[i] = float(std::cos(angle) * table.mscale);
        sn[i] = float(std::sin(angle) * table.mscale);
      }
      for (int h = 0; h < heads; ++h) {
        float* v = x + (t * heads + h) * head_dim;
        if (style == RopeStyle::neox) {
          for (int i = 0; i < half; ++i) {
            const float a = v[i], b = v[i + half];
            v[i] = a * cs[i] - b * sn[i];
            v[i + half] = b * cs[i] + a * sn[i];
          }
        } else {
          for (int i = 0; i < half; ++i) {
            const float a = v[2 * i], b = v[2 * i + 1];
            v[2 * i] = a * cs[i] - b * sn[i];
            v[2 * i + 1] = b * cs[i] + a * sn[i];
          }
        }
      }
    }
  });
}

}  // namespace exl
