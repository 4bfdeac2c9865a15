#include "exl/kernels/half.h"

namespace exl {

void half_to_float_n(const half_bits* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = half_to_float(src[i]);
}

void float_to_half_n(const float* src, half_bits* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = float_to_half(src[i]);
}

}  // namespace exl
