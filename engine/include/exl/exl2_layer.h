// Loading and validating one EXL2 (or dense) linear layer from a TensorStore (spec §2.10, §3.2).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exl/exl3_layer.h"
#include "exl/kernels/exl2.h"
#include "exl/tensor_store.h"

namespace exl {

// Owns the derived q_perm; the other arrays point into the store's memory map.
struct Exl2Tensors {
  std::string prefix;                 // e.g. "model.layers.0.self_attn.q_proj"
  std::vector<std::int32_t> q_perm;   // argsort(q_invperm)
  std::vector<std::int32_t> q_invperm;
  const TensorInfo* bias = nullptr;   // optional fp16 [n_pad] (or [n])
  Exl2Weight view;                    // q_perm points into this struct's q_perm: do not copy-move carelessly
  // Bits stored for this layer (q_weight + q_scale + q_scale_max + q_groups + q_invperm), for bpw reporting.
  std::uint64_t storage_bits() const;
  double bits_per_weight() const;     // q_weight bits / (k * n)
};

enum class LinearKind : std::uint8_t { exl2, dense, exl3 };

struct LinearTensors {
  LinearKind kind = LinearKind::dense;
  int in_features = 0;
  int out_features = 0;
  std::unique_ptr<Exl2Tensors> exl2;     // when kind == exl2 (heap: view holds pointers into it)
  std::unique_ptr<Exl3Tensors> exl3;     // when kind == exl3 (heap: view holds pointers into it)
  const TensorInfo* weight = nullptr;    // when kind == dense: [out, in] f16/bf16/f32
  const TensorInfo* bias = nullptr;      // optional
};

// Recognises `prefix.q_weight` (EXL2), `prefix.trellis` (EXL3) or `prefix.weight` (dense) and validates everything against
// the expected in/out features. Throws Error(missing_tensor/shape/format) naming file and tensor.
LinearTensors load_linear(const TensorStore& store, const std::string& prefix, int in_features,
                          int out_features);

}  // namespace exl
