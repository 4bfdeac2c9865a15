// Batch fp16 rounding and conversions with F16C when the CPU has it (IEEE round-to-nearest-even,
// bit-identical to the scalar conversions in half.h), scalar otherwise.
#include "exl/kernels/half.h"
#include "simd.h"

namespace exl {
namespace {

#if EXL_X86
EXL_AVX2 void round_to_half_avx2(float* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) x[i] = round_to_half(x[i]);
}
#endif

}  // namespace

void round_to_half_n(float* x, std::size_t n) {
#if EXL_X86
  if (cpu_simd_active()) {
    round_to_half_avx2(x, n);
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) x[i] = round_to_half(x[i]);
}

}  // namespace exl
