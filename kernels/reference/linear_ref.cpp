// Reference dense ops: linear layer (HF weight layout w[n, k], fp16/bf16/fp32 storage) and the
// embedding lookup. Single-threaded, double accumulation.
#include <cstdint>

#include "elem.h"
#include "exl/kernels/linear.h"

namespace exl {

void linear_ref(const float* x, int m, int k, const void* w, DType w_dtype, int n, const float* bias,
                float* y) {
  for (int r = 0; r < m; ++r) {
    for (int j = 0; j < n; ++j) {
      double acc = bias ? double(bias[j]) : 0.0;
      for (int i = 0; i < k; ++i)
        acc += double(x[std::int64_t(r) * k + i]) * double(detail::load_elem(w, w_dtype, std::int64_t(j) * k + i));
      y[std::int64_t(r) * n + j] = float(acc);
    }
  }
}

void embedding_ref(const void* table, DType dtype, int vocab, int dim, const std::int32_t* ids, int n,
                   float* out) {
  for (int t = 0; t < n; ++t) {
    const std::int32_t id = ids[t];
    for (int i = 0; i < dim; ++i) {
      out[std::int64_t(t) * dim + i] =
          (id >= 0 && id < vocab) ? detail::load_elem(table, dtype, std::int64_t(id) * dim + i) : 0.0f;
    }
  }
}

}  // namespace exl
