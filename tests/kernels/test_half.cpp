// fp16 / bf16 conversions: every half pattern round-trips, and random floats round exactly as
// the compiler's own _Float16 conversion (IEEE round-to-nearest-even) where the compiler has it.
#include <cstring>
#include <random>

#include "exl/kernels/half.h"
#include "exl_test.h"

EXL_TEST(half, all_patterns_round_trip) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = exl::half_to_float(exl::half_bits(h));
    if (std::isnan(f)) continue;
    CHECK_EQ(exl::float_to_half(f), exl::half_bits(h));
  }
}

EXL_TEST(half, known_values) {
  CHECK_EQ(exl::half_to_float(0x3c00), 1.0f);
  CHECK_EQ(exl::half_to_float(0x0001), std::ldexp(1.0f, -24));
  CHECK_EQ(exl::half_to_float(0x7bff), 65504.0f);
  CHECK_EQ(exl::float_to_half(65520.0f), exl::half_bits(0x7c00));
  CHECK_EQ(exl::float_to_half(65519.0f), exl::half_bits(0x7bff));
  // halfway between 1 and the next half rounds to even (1.0)
  CHECK_EQ(exl::float_to_half(1.0f + std::ldexp(1.0f, -11)), exl::half_bits(0x3c00));
  CHECK_EQ(exl::float_to_half(std::ldexp(1.0f, -25)), exl::half_bits(0));       // tie to even zero
  CHECK_EQ(exl::float_to_half(std::ldexp(1.5f, -25)), exl::half_bits(1));
  CHECK_EQ(exl::bf16_to_float(exl::float_to_bf16(3.140625f)), 3.140625f);
}

#if defined(__FLT16_MAX__)
EXL_TEST(half, random_floats_match_compiler) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    std::uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    const _Float16 r = static_cast<_Float16>(f);
    std::uint16_t rb;
    std::memcpy(&rb, &r, 2);
    CHECK_EQ(exl::float_to_half(f), rb);
  }
}
#endif
