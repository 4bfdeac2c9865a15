// Private to the CPU EXL2 matmul: the per-call preparation shared by the portable and AVX2
// tile kernels (kernels/cpu/exl2_cpu.cpp, exl2_cpu_avx2.cpp, exl2_cpu_avx512.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "exl/kernels/exl2.h"

namespace exl::detail {

struct Exl2Prep {
  std::vector<Exl2Group> groups;
  std::vector<float> scale_tab;  // [groups][16]: fp32 value of the fp16 scale for each code
  std::vector<float> xp;         // [m][k] activations in stored row order
  std::vector<float> xsum;       // [m][groups] per-group sums of xp
};

// Packed row `qrow` of the 32-column tile at n0, and the word stride from one packed row to the
// next: in the tile-contiguous copy when there is one (sequential reads), else in q_weight.
struct PackedRows {
  const std::uint32_t* p;
  std::int64_t stride;
};
inline PackedRows packed_rows(const Exl2Weight& w, int n0, int qrow) {
  constexpr int tile = 32;
  if (w.q_tiled) return {w.q_tiled + (std::int64_t(n0 / tile) * w.q_rows + qrow) * tile, tile};
  return {w.q_weight + std::int64_t(qrow) * w.n_pad + n0, w.n_pad};
}

// One 32-column tile: yt[m][32] = x * W[:, n0 .. n0+32). m <= 8.
void exl2_gemv_tile_avx2(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt);
// Same for any m through 256-row fp32 dequantized blocks; buf holds 256 x 32 floats.
void exl2_gemm_tile_avx2(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt, float* buf);
// Rows [row0, row0 + rows) of the 32-column tile at n0 dequantized to fp32 (scale applied):
// buf[rows][32].
void exl2_dequant_block_avx2(const Exl2Weight& w, const Exl2Prep& P, int n0, int row0, int rows, float* buf);
// AVX-512 forms (exl2_cpu_avx512.cpp), bit-identical to the AVX2 ones: the one-row GEMV, and
// the GEMM of any m on the same dequantized blocks.
void exl2_gemv1_tile_avx512(const Exl2Weight& w, const Exl2Prep& P, int n0, float* yt);
void exl2_gemm_tile_avx512(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt, float* buf);

}  // namespace exl::detail
