// EXL2 packer: turns integer quantized values, scale codes and a row permutation into the exact
// on-disk tensors of one EXL2 linear layer (spec §2.1-2.6). Used by the converter's writer and
// by tests that build layers with known contents.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "exl/kernels/exl2.h"

namespace exl {

struct Exl2PackInput {
  int k = 0;  // in_features, multiple of 32
  int n = 0;  // out_features (logical); the output is padded to n_pad = round_up(n, 32)
  std::vector<int> group_bits;  // per group, non-increasing, each in {8, 6, 5, 4, 3, 2}
  std::vector<int> group_rows;  // per group, positive multiples of 32, summing to k
  const std::uint8_t* q = nullptr;            // [k, n_pad] values in stored (act-order) row order
  const std::uint8_t* scale_codes = nullptr;  // [groups, n_pad] codes 0..15 (scale s = code + 1)
  const half_bits* scale_max = nullptr;       // [groups] fp16
  const std::int32_t* perm = nullptr;         // [k] stored row j holds original feature perm[j]
};

// Owning storage of one packed layer, in the on-disk layout.
struct Exl2Packed {
  std::vector<std::uint32_t> q_weight;   // [q_rows, n_pad]
  std::vector<std::uint32_t> q_scale;    // [groups, n_pad / 8]
  std::vector<half_bits> q_scale_max;    // [groups]
  std::vector<std::int16_t> q_groups;    // [2 * groups]
  std::vector<std::int32_t> q_invperm;   // [k]
  std::vector<std::int32_t> q_perm;      // [k] (argsort of q_invperm; not written to disk)
  int k = 0, n = 0, n_pad = 0, groups = 0, q_rows = 0;

  // A view for the kernels; valid while this object lives and is not modified.
  Exl2Weight view() const;
};

// Packs `in` into `out`. Returns false and sets *error (when given) if the input breaks a layout
// rule (bit widths, row counts, value ranges, permutation); `out` is then unspecified.
bool exl2_pack(const Exl2PackInput& in, Exl2Packed& out, std::string* error = nullptr);

// Extracts the integer value of stored row `row`, column `col` from packed tensors (spec §2.4).
int exl2_unpack_value(const Exl2Weight& w, int row, int col);

}  // namespace exl
