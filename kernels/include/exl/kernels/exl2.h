// EXL2 quantized linear layers: views of the on-disk tensors and the ops over them.
// Layout (spec §2): W is input-major [K, N]; stored rows are in act-order; q_weight is
// [Q, n_pad] int32 packed little-endian bitstreams per column and group; q_scale packs 4-bit
// scale codes 8 per int32 along the columns; q_scale_max is one fp16 per group.
#pragma once
#include <cstdint>
#include <vector>

#include "exl/kernels/half.h"

namespace exl {

// Non-owning view of one EXL2 layer. All pointers stay valid while the owner lives.
struct Exl2Weight {
  const std::uint32_t* q_weight = nullptr;  // [q_rows, n_pad]
  const std::uint32_t* q_scale = nullptr;   // [groups, n_pad / 8]
  const half_bits* q_scale_max = nullptr;   // [groups]
  const std::int16_t* q_groups = nullptr;   // [2 * groups]: (bits, first packed row)
  const std::int32_t* q_perm = nullptr;     // [k]: stored row j holds original input feature q_perm[j]
  int k = 0;       // in_features
  int n = 0;       // out_features (logical)
  int n_pad = 0;   // out_features rounded up to a multiple of 32 (q_weight/q_scale width)
  int groups = 0;
  int q_rows = 0;  // packed rows of q_weight
  // Optional: q_weight repacked tile-contiguous by exl2_tile_cpu ([n_pad / 32][q_rows][32]: each
  // 32-column tile's packed rows one after the other). The fast CPU kernels stream it instead of
  // walking q_weight down a column strip (same values, same results); null: q_weight is read.
  const std::uint32_t* q_tiled = nullptr;
};

// Per-group facts derived from q_groups (first stored row, rows, bits, first packed row).
struct Exl2Group {
  int bits;
  int first_row;
  int rows;
  int first_qrow;
};
std::vector<Exl2Group> exl2_groups(const Exl2Weight& w);

// ---- reference (kernels/reference): obviously-correct, bit-exact to spec §2.7 ----

// Dequantizes to fp16, input-major [k, n_pad], rows in the ORIGINAL feature order (scattered
// through q_perm). Bit-exact with ExLlamaV2's reconstruct kernel.
void exl2_dequant_ref(const Exl2Weight& w, half_bits* out);

// y[m, n] = sum_k x[m, k] * W[k, n] for n < w.n, fp32 accumulation over the fp16 weights.
// x: [m, k] fp32 (original feature order), y: [m, w.n] fp32.
void exl2_matmul_ref(const Exl2Weight& w, const float* x, int m, float* y);

// ---- fast CPU (kernels/cpu) ----

// Same contract as exl2_matmul_ref; dequantizes on the fly (m small) or tile by tile (m large),
// threaded over output columns. Like the GPU kernel it applies each fp16 scale once per group
// rather than rounding every weight to fp16, so it equals the exact product of the unrounded
// (q - z) * scale weights to fp32 summation noise, and the reference to within that rounding.
void exl2_matmul_cpu(const Exl2Weight& w, const float* x, int m, float* y);

// The tile-contiguous copy of q_weight for Exl2Weight::q_tiled: out holds n_pad * q_rows words.
void exl2_tile_cpu(const Exl2Weight& w, std::uint32_t* out);

}  // namespace exl
