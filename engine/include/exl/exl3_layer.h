// Loading and validating one EXL3 linear layer from a TensorStore (docs/EXL3.md; spec §2.1, §2.3).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exl/kernels/exl3.h"
#include "exl/tensor_store.h"

namespace exl {

// Owns the sign x scale vectors (and the trellis words when the file leaves them unaligned: the
// ExLlamaV3 writer does not pad the safetensors header); `view` points into this struct or into
// the store's memory map.
struct Exl3Tensors {
  std::string prefix;                 // e.g. "model.layers.0.self_attn.q_proj"
  const TensorInfo* trellis = nullptr;
  const TensorInfo* bias = nullptr;   // optional fp16 [n] (or [out_features])
  std::vector<std::uint16_t> trellis_copy;
  std::vector<half_bits> suh, svh;
  Exl3Weight view;
  double bits_per_weight() const { return view.bits2 / 2.0; }  // trellis bits per (padded) weight
  // Bits stored for this layer: trellis, suh, svh, the codebook marker.
  std::uint64_t storage_bits() const;
};

// The EXL3 layer `prefix` (recognised by `prefix.trellis`): validates the trellis (I16
// [k/16, n/16, 16K] with K = 1..8, or 16K + 8 for 1.5 / 2.5 / 3.5 with mul1; k, n = in/out
// features padded to 128), suh/svh (F16 [k]/[n], or the legacy packed I16 su/sv), the codebook
// marker (at most one of I32 scalar mcg / mul1 with the format's multiplier) and an optional bias.
// Throws Error(missing_tensor / shape / format / unsupported) naming file and tensor.
std::unique_ptr<Exl3Tensors> load_exl3(const TensorStore& store, const std::string& prefix, int in_features,
                                       int out_features);

}  // namespace exl
