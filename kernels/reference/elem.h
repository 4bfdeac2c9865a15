// Element access shared by the reference and CPU kernels: reads one element of an fp32 / fp16 /
// bf16 tensor as float. Private to the kernels library.
#pragma once
#include <cstdint>

#include "exl/kernels/half.h"
#include "exl/kernels/linear.h"

namespace exl::detail {

inline float load_elem(const void* p, DType dt, std::int64_t i) {
  switch (dt) {
    case DType::f16: return half_to_float(static_cast<const half_bits*>(p)[i]);
    case DType::bf16: return bf16_to_float(static_cast<const std::uint16_t*>(p)[i]);
    case DType::f32: return static_cast<const float*>(p)[i];
    default: return 0.0f;  // unsupported dtypes read as zero (callers validate dtypes)
  }
}

// Bytes per element of the float dtypes (0 for others).
inline int float_dtype_size(DType dt) {
  switch (dt) {
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f32: return 4;
    default: return 0;
  }
}

}  // namespace exl::detail
