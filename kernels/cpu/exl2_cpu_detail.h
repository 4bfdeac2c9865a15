// Private to the CPU EXL2 matmul: the per-call preparation shared by the portable and AVX2
// tile kernels (kernels/cpu/exl2_cpu.cpp, exl2_cpu_avx2.cpp).
#pragma once
#include <vector>

#include "exl/kernels/exl2.h"

namespace exl::detail {

struct Exl2Prep {
  std::vector<Exl2Group> groups;
  std::vector<float> scale_tab;  // [groups][16]: fp32 value of the fp16 scale for each code
  std::vector<float> xp;         // [m][k] activations in stored row order
  std::vector<float> xsum;       // [m][groups] per-group sums of xp
};

// One 32-column tile: yt[m][32] = x * W[:, n0 .. n0+32). m <= 8.
void exl2_gemv_tile_avx2(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt);
// Same for any m through 256-row fp32 dequantized blocks; buf holds 256 x 32 floats.
void exl2_gemm_tile_avx2(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt, float* buf);

}  // namespace exl::detail
