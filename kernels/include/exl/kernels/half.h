// Half-precision (IEEE binary16) and bfloat16 conversions on raw 16-bit patterns.
// The engine stores fp16 tensors as uint16_t so that plain C++ (no CUDA headers) can hold them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace exl {

using half_bits = std::uint16_t;

// Exact widening conversion (subnormals, inf and NaN preserved).
inline float half_to_float(half_bits h) {
  const std::uint32_t sign = (std::uint32_t(h) & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f;
  std::uint32_t man = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do { ++e; man <<= 1; } while ((man & 0x400u) == 0);
      bits = sign | (std::uint32_t(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Narrowing conversion, round to nearest even, overflow to inf, NaN kept quiet.
inline half_bits float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or NaN
    return half_bits(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  }
  if (absx >= 0x477ff000u) return half_bits(sign | 0x7c00u);  // rounds to >= 65520 -> inf
  if (absx < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (absx < 0x33000000u) return half_bits(sign);  // < 2^-25 rounds to zero
    // value = man * 2^(e - 150); one subnormal unit is 2^-24, so q = man >> (126 - e), rounded.
    const std::uint32_t e = absx >> 23;
    const std::uint32_t man = (absx & 0x7fffffu) | 0x800000u;
    const std::uint32_t drop = 126 - e;  // 14..24
    std::uint32_t q = man >> drop;
    const std::uint32_t rem = man & ((1u << drop) - 1);
    const std::uint32_t halfway = 1u << (drop - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return half_bits(sign | q);
  }
  std::uint32_t h = ((absx >> 13) - (112u << 10));  // rebias exponent 127 -> 15
  const std::uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return half_bits(sign | h);
}

inline float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = std::uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((x >> 16) | 0x40u);
  const std::uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return std::uint16_t(x >> 16);
}

// Rounds a float through fp16 and back (models an fp16 store).
inline float round_to_half(float f) { return half_to_float(float_to_half(f)); }

void half_to_float_n(const half_bits* src, float* dst, std::size_t n);
void float_to_half_n(const float* src, half_bits* dst, std::size_t n);
// x[i] = round_to_half(x[i]) for n values (F16C when available; identical results).
void round_to_half_n(float* x, std::size_t n);

}  // namespace exl
