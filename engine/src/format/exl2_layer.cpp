// Loading one linear layer: EXL2 (q_weight + q_scale + q_scale_max + q_groups + q_invperm,
// validated per spec §2.10) or dense ([out, in] F16/BF16/F32), recognised by tensor names (§3.2).
#include "exl/exl2_layer.h"

#include <cstdint>
#include <string>

#include "exl/error.h"

namespace exl {
namespace {

int ceil32(int n) { return (n + 31) / 32 * 32; }

[[noreturn]] void fail(ErrorKind kind, const TensorInfo& t, const std::string& what) {
  throw Error(kind, what, t.file, t.name);
}

const TensorInfo& require(const TensorStore& store, const std::string& name, const std::string& file) {
  const TensorInfo* t = store.find(name);
  if (t == nullptr) throw Error(ErrorKind::missing_tensor, "EXL2 layer tensor is missing", file, name);
  return *t;
}

void expect_dtype(const TensorInfo& t, DType want) {
  if (t.dtype != want)
    fail(ErrorKind::shape, t, std::string("dtype is ") + dtype_name(t.dtype) + ", expected " + dtype_name(want));
}

// The kernels read these arrays in place from the memory map, so each must sit on its element size.
void expect_aligned(const TensorInfo& t) {
  if (t.nbytes != 0 && reinterpret_cast<std::uintptr_t>(t.data) % dtype_size(t.dtype) != 0)
    fail(ErrorKind::format, t, std::string("data is not aligned to its ") + dtype_name(t.dtype) + " element size");
}

void expect_shape(const TensorInfo& t, const std::vector<std::int64_t>& want) {
  if (t.shape != want) fail(ErrorKind::shape, t, "shape is " + shape_text(t.shape) + ", expected " + shape_text(want));
}

void expect_rank(const TensorInfo& t, std::size_t rank) {
  if (t.shape.size() != rank)
    fail(ErrorKind::shape, t, "shape is " + shape_text(t.shape) + ", expected " + std::to_string(rank) + " dimensions");
}

bool valid_bits(int b) { return b == 2 || b == 3 || b == 4 || b == 5 || b == 6 || b == 8; }

// q_groups: bit widths allowed and non-increasing, packed offsets strictly increasing from 0,
// rows per group a positive multiple of 32, summing to K.
void check_groups(const TensorInfo& qg, int groups, int q_rows, int k) {
  const std::int16_t* g = qg.as<std::int16_t>();
  for (int i = 0; i < groups; ++i) {
    const int bits = g[2 * i];
    const std::string at = "group " + std::to_string(i) + ": ";
    if (!valid_bits(bits)) fail(ErrorKind::format, qg, at + "bit width " + std::to_string(bits) + " is not 2, 3, 4, 5, 6 or 8");
    if (i > 0 && bits > g[2 * i - 2])
      fail(ErrorKind::format, qg, at + "bit width " + std::to_string(bits) + " follows " + std::to_string(g[2 * i - 2]) +
                                      " (bit widths must be non-increasing)");
  }
  if (g[1] != 0) fail(ErrorKind::format, qg, "first packed row offset is " + std::to_string(g[1]) + ", expected 0");
  long total_rows = 0;
  for (int i = 0; i < groups; ++i) {
    const int bits = g[2 * i], start = g[2 * i + 1];
    const int next = i + 1 < groups ? g[2 * i + 3] : q_rows;
    const std::string at = "group " + std::to_string(i) + ": ";
    if (next <= start)
      fail(ErrorKind::format, qg, at + "packed row offsets must be strictly increasing and below q_weight rows (" +
                                      std::to_string(start) + " then " + std::to_string(next) + ")");
    const long packed = next - start;
    if ((packed * 32) % bits != 0)
      fail(ErrorKind::format, qg, at + std::to_string(packed) + " packed rows do not hold whole " + std::to_string(bits) + "-bit rows");
    const long rows = packed * 32 / bits;
    if (rows % 32 != 0) fail(ErrorKind::format, qg, at + std::to_string(rows) + " rows is not a multiple of 32");
    total_rows += rows;
  }
  if (total_rows != k)
    fail(ErrorKind::shape, qg, "groups cover " + std::to_string(total_rows) + " rows, expected in_features " + std::to_string(k));
}

std::unique_ptr<Exl2Tensors> load_exl2(const TensorStore& store, const std::string& prefix, int k, int n,
                                       const TensorInfo& q_weight) {
  const std::string& file = q_weight.file;
  const TensorInfo& q_scale = require(store, prefix + ".q_scale", file);
  const TensorInfo& q_scale_max = require(store, prefix + ".q_scale_max", file);
  const TensorInfo& q_groups = require(store, prefix + ".q_groups", file);
  const TensorInfo& q_invperm = require(store, prefix + ".q_invperm", file);
  expect_dtype(q_weight, DType::i32);
  expect_dtype(q_scale, DType::i32);
  expect_dtype(q_scale_max, DType::f16);
  expect_dtype(q_groups, DType::i16);
  expect_dtype(q_invperm, DType::i32);
  for (const TensorInfo* t : {&q_weight, &q_scale, &q_scale_max, &q_groups, &q_invperm}) expect_aligned(*t);
  expect_rank(q_weight, 2);
  expect_rank(q_scale_max, 1);

  const int n_pad = ceil32(n);
  const auto groups = q_scale_max.shape[0];
  if (groups < 1 || groups > 65536) fail(ErrorKind::shape, q_scale_max, "group count " + std::to_string(groups) + " is out of range");
  expect_shape(q_groups, {2 * groups});
  if (q_weight.shape[1] != n_pad)
    fail(ErrorKind::shape, q_weight, "has " + std::to_string(q_weight.shape[1]) + " columns, expected " + std::to_string(n_pad) +
                                         " (out_features " + std::to_string(n) + " rounded up to 32)");
  expect_shape(q_scale, {groups, n_pad / 8});
  expect_shape(q_invperm, {k});
  const auto q_rows = q_weight.shape[0];
  if (q_rows < 1 || q_rows > 32767) fail(ErrorKind::shape, q_weight, "packed row count " + std::to_string(q_rows) + " is out of range");
  check_groups(q_groups, int(groups), int(q_rows), k);

  auto t = std::make_unique<Exl2Tensors>();
  t->prefix = prefix;
  t->q_invperm.assign(q_invperm.as<std::int32_t>(), q_invperm.as<std::int32_t>() + k);
  t->q_perm.assign(std::size_t(k), -1);
  for (int i = 0; i < k; ++i) {
    const std::int32_t v = t->q_invperm[i];
    if (v < 0 || v >= k) fail(ErrorKind::format, q_invperm, "entry " + std::to_string(i) + " = " + std::to_string(v) + " is outside 0.." + std::to_string(k - 1) + " (not a permutation)");
    if (t->q_perm[v] != -1) fail(ErrorKind::format, q_invperm, "value " + std::to_string(v) + " appears twice (not a permutation)");
    t->q_perm[v] = i;
  }

  Exl2Weight& w = t->view;
  w.q_weight = q_weight.as<std::uint32_t>();
  w.q_scale = q_scale.as<std::uint32_t>();
  w.q_scale_max = q_scale_max.as<half_bits>();
  w.q_groups = q_groups.as<std::int16_t>();
  w.q_perm = t->q_perm.data();
  w.k = k;
  w.n = n;
  w.n_pad = n_pad;
  w.groups = int(groups);
  w.q_rows = int(q_rows);

  if (const TensorInfo* bias = store.find(prefix + ".bias")) {
    expect_dtype(*bias, DType::f16);
    expect_aligned(*bias);
    if (bias->shape != std::vector<std::int64_t>{n_pad} && bias->shape != std::vector<std::int64_t>{n})
      fail(ErrorKind::shape, *bias, "shape is " + shape_text(bias->shape) + ", expected [" + std::to_string(n_pad) + "] or [" + std::to_string(n) + "]");
    t->bias = bias;
  }
  return t;
}

}  // namespace

std::uint64_t Exl2Tensors::storage_bits() const {
  const auto& w = view;
  return std::uint64_t(w.q_rows) * w.n_pad * 32     // q_weight
         + std::uint64_t(w.groups) * (w.n_pad / 8) * 32  // q_scale
         + std::uint64_t(w.groups) * 16                  // q_scale_max
         + std::uint64_t(w.groups) * 2 * 16              // q_groups
         + std::uint64_t(w.k) * 32;                      // q_invperm
}

double Exl2Tensors::bits_per_weight() const {
  const auto& w = view;
  if (w.k == 0 || w.n == 0) return 0.0;
  return double(std::uint64_t(w.q_rows) * w.n_pad * 32) / (double(w.k) * double(w.n));
}

LinearTensors load_linear(const TensorStore& store, const std::string& prefix, int in_features, int out_features) {
  if (in_features <= 0 || out_features <= 0)
    throw Error(ErrorKind::invalid_argument, "in/out features must be positive", "", prefix);
  LinearTensors out;
  out.in_features = in_features;
  out.out_features = out_features;
  if (const TensorInfo* q_weight = store.find(prefix + ".q_weight")) {
    out.kind = LinearKind::exl2;
    out.exl2 = load_exl2(store, prefix, in_features, out_features, *q_weight);
    out.bias = out.exl2->bias;
    return out;
  }
  if (store.contains(prefix + ".trellis")) {
    out.kind = LinearKind::exl3;
    out.exl3 = load_exl3(store, prefix, in_features, out_features);
    out.bias = out.exl3->bias;
    return out;
  }
  const TensorInfo* weight = store.find(prefix + ".weight");
  if (weight == nullptr)
    throw Error(ErrorKind::missing_tensor, "none of " + prefix + ".q_weight (EXL2), " + prefix + ".trellis (EXL3), " + prefix + ".weight (dense) exists",
                "", prefix);
  if (weight->dtype != DType::f16 && weight->dtype != DType::bf16 && weight->dtype != DType::f32)
    fail(ErrorKind::shape, *weight, std::string("dtype ") + dtype_name(weight->dtype) + " is not F16, BF16 or F32");
  expect_shape(*weight, {out_features, in_features});
  expect_aligned(*weight);
  out.kind = LinearKind::dense;
  out.weight = weight;
  if (const TensorInfo* bias = store.find(prefix + ".bias")) {
    if (bias->dtype != DType::f16 && bias->dtype != DType::bf16 && bias->dtype != DType::f32)
      fail(ErrorKind::shape, *bias, std::string("dtype ") + dtype_name(bias->dtype) + " is not F16, BF16 or F32");
    expect_shape(*bias, {out_features});
    expect_aligned(*bias);
    out.bias = bias;
  }
  return out;
}

}  // namespace exl
