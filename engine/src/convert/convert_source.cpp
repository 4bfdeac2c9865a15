// The converter's view of the source model (weights widened to fp32), calibration rows, and
// packing one quantized linear into its on-disk tensors.
#include <algorithm>

#include "convert_internal.h"
#include "exl/error.h"
#include "exl/kernels/exl2_pack.h"

namespace exl::convert_detail {
namespace {

const TensorInfo& dense(const LinearTensors& l, const std::string& what) {
  if (l.kind != LinearKind::dense || !l.weight)
    throw Error(ErrorKind::unsupported, "the input is already quantized; convert needs an FP16/BF16/FP32 model", {}, what);
  return *l.weight;
}

std::vector<float> bias_of(const LinearTensors& l) {
  return l.bias ? tensor_to_f32(*l.bias) : std::vector<float>{};
}

// A norm weight as the block multiplies by it: w, or 1 + w (Gemma); empty when absent.
std::vector<float> norm_of(const TensorInfo* t, const ModelConfig& c) {
  if (!t) return {};
  std::vector<float> w = tensor_to_f32(*t);
  if (c.family.norm == NormKind::rms_one_plus)
    for (float& x : w) x += 1.0f;
  return w;
}

}  // namespace

std::vector<float> tensor_to_f32(const TensorInfo& t) {
  const std::int64_t n = t.numel();
  std::vector<float> out(static_cast<std::size_t>(n));
  switch (t.dtype) {
    case DType::f16: half_to_float_n(t.as<half_bits>(), out.data(), std::size_t(n)); break;
    case DType::bf16:
      for (std::int64_t i = 0; i < n; ++i) out[std::size_t(i)] = bf16_to_float(t.as<std::uint16_t>()[i]);
      break;
    case DType::f32: std::copy(t.as<float>(), t.as<float>() + n, out.begin()); break;
    default: throw Error(ErrorKind::unsupported, "expected a float tensor (F16, BF16, F32)", t.file, t.name);
  }
  return out;
}

std::vector<half_bits> tensor_to_f16(const TensorInfo& t) {
  if (t.dtype == DType::f16) return std::vector<half_bits>(t.as<half_bits>(), t.as<half_bits>() + t.numel());
  const std::vector<float> f = tensor_to_f32(t);
  std::vector<half_bits> out(f.size());
  float_to_half_n(f.data(), out.data(), f.size());
  return out;
}

Source Source::open(const std::filesystem::path& dir) {
  Source s;
  s.model = Model::open(dir);
  const ModelConfig& c = s.model->config();
  s.layers = c.num_layers;
  s.vocab = c.vocab_size;
  s.shape.hidden = c.hidden_size;
  s.shape.heads = c.num_heads;
  s.shape.kv_heads = c.num_kv_heads;
  s.shape.head_dim = c.head_dim;
  s.shape.intermediate = c.intermediate_size;
  s.shape.norm_eps = c.rms_norm_eps;
  s.shape.rope = rope_table(rope_for_context(c, 0));
  s.shape.rope_style = c.rope.style;
  s.shape.attention_scale = c.family.attention_scale;
  s.shape.attn_softcap = c.family.attn_logit_softcap;
  s.shape.gelu = c.family.activation == Activation::gelu_tanh;
  const std::string cfg = (dir / "config.json").string();
  for (int k : {c.hidden_size, c.num_heads * c.head_dim, c.intermediate_size})
    if (k % 32 != 0)
      throw Error(ErrorKind::unsupported, "EXL2 needs every linear input width to be a multiple of 32 (got " +
                                              std::to_string(k) + ")", cfg);
  if (c.mlp_bias) throw Error(ErrorKind::unsupported, "MLP biases are not supported by the converter yet", cfg);
  if (c.moe.active())
    throw Error(ErrorKind::unsupported, "the converters do not quantize mixture-of-experts models (" + c.architecture +
                                            ") yet", cfg, "architectures");
  if (!s.model->tokenizer())
    throw Error(ErrorKind::missing_tensor, "the input folder has no tokenizer.json (needed for calibration)",
                (dir / "tokenizer.json").string());
  for (int i = 0; i < s.layers; ++i) {
    const LayerTensors& l = s.model->layers()[std::size_t(i)];
    const std::string p = "model.layers." + std::to_string(i);
    for (const auto* lt : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) dense(*lt, p);
  }
  return s;
}

BlockShape Source::layer_shape(int layer) const {
  const ModelConfig& c = model->config();
  const LayerAttention a = std::size_t(layer) < c.layer_attention.size() ? c.layer_attention[std::size_t(layer)] : LayerAttention{};
  BlockShape s = shape;
  s.window = a.window;
  if (a.local_rope) s.rope = rope_table(rope_for_context(c, 0, true));
  return s;
}

AttentionWeights Source::attention(int i) const {
  const LayerTensors& l = model->layers()[std::size_t(i)];
  const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
  const ModelConfig& c = model->config();
  AttentionWeights w;
  w.norm = norm_of(l.input_norm, c);
  w.q_norm = norm_of(l.q_norm, c);
  w.k_norm = norm_of(l.k_norm, c);
  if (c.family.sandwich_norms) w.out_norm = norm_of(l.post_attention_norm, c);
  w.q = tensor_to_f32(dense(l.q, p + "q_proj"));
  w.k = tensor_to_f32(dense(l.k, p + "k_proj"));
  w.v = tensor_to_f32(dense(l.v, p + "v_proj"));
  w.o = tensor_to_f32(dense(l.o, p + "o_proj"));
  w.q_bias = bias_of(l.q);
  w.k_bias = bias_of(l.k);
  w.v_bias = bias_of(l.v);
  w.o_bias = bias_of(l.o);
  return w;
}

MlpWeights Source::mlp(int i) const {
  const LayerTensors& l = model->layers()[std::size_t(i)];
  const std::string p = "model.layers." + std::to_string(i) + ".mlp.";
  const ModelConfig& c = model->config();
  MlpWeights w;
  w.norm = norm_of(l.mlp_norm(), c);
  w.out_norm = norm_of(l.post_feedforward_norm, c);
  w.gate = tensor_to_f32(dense(l.gate, p + "gate_proj"));
  w.up = tensor_to_f32(dense(l.up, p + "up_proj"));
  w.down = tensor_to_f32(dense(l.down, p + "down_proj"));
  return w;
}

std::vector<float> Source::head_weight() const { return tensor_to_f32(dense(model->head(), "lm_head")); }
std::vector<float> Source::final_norm() const { return norm_of(&model->final_norm(), model->config()); }

std::vector<float> Source::embed(const std::vector<std::int32_t>& ids) const {
  const TensorInfo& e = model->embedding();
  const int H = shape.hidden;
  const int rows = int(e.shape[0]);
  std::vector<std::int32_t> safe(ids);
  for (auto& id : safe)
    if (id < 0 || id >= rows) id = 0;
  std::vector<float> out(ids.size() * std::size_t(H));
  embedding_cpu(e.data, e.dtype, rows, H, safe.data(), int(safe.size()), out.data());
  const float scale = model->config().family.embedding_scale;
  if (scale != 1.0f)
    for (float& x : out) x *= scale;
  return out;
}

std::pair<int, int> Source::dims(const std::string& proj) const {
  const int H = shape.hidden, qd = shape.heads * shape.head_dim, kd = shape.kv_heads * shape.head_dim;
  const int I = shape.intermediate;
  if (proj == "q_proj") return {H, qd};
  if (proj == "k_proj" || proj == "v_proj") return {H, kd};
  if (proj == "o_proj") return {qd, H};
  if (proj == "gate_proj" || proj == "up_proj") return {H, I};
  if (proj == "down_proj") return {I, H};
  throw Error(ErrorKind::internal, "unknown projection", {}, proj);
}

std::uint64_t Source::decoder_numel() const {
  std::uint64_t n = 0;
  for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}) {
    const auto [k, out] = dims(p);
    n += std::uint64_t(k) * std::uint64_t((out + 31) / 32 * 32);
  }
  return n * std::uint64_t(layers);
}

std::vector<std::vector<std::int32_t>> calibration_rows(const Tokenizer& tok, const std::string& text, int rows,
                                                        int length, int vocab) {
  if (rows <= 0 || length <= 1)
    throw Error(ErrorKind::invalid_argument, "calibration needs rows >= 1 and length >= 2");
  const std::vector<std::int32_t> ids = tok.encode(text, false, false);
  const std::size_t need = std::size_t(rows) * std::size_t(length);
  if (ids.size() < need)
    throw Error(ErrorKind::invalid_argument, "not enough calibration text: " + std::to_string(ids.size()) +
                                                 " tokens, " + std::to_string(rows) + " rows x " +
                                                 std::to_string(length) + " need " + std::to_string(need) +
                                                 " (give a longer --cal file or fewer --rows/--length)");
  std::vector<std::vector<std::int32_t>> out(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    out[std::size_t(r)].assign(ids.begin() + std::ptrdiff_t(r) * length, ids.begin() + std::ptrdiff_t(r + 1) * length);
    for (auto& id : out[std::size_t(r)])
      if (id >= vocab) id = 0;
  }
  return out;
}

void check_stop(std::stop_token stop) {
  if (stop.stop_requested()) throw Error(ErrorKind::cancelled, "conversion cancelled");
}

void append_exl2_tensors(const std::string& prefix, const QuantizedLinear& q, const std::vector<float>& bias,
                         std::vector<TensorData>& out) {
  Exl2PackInput in;
  in.k = q.k;
  in.n = q.n;
  in.group_bits = q.layout.bits;
  in.group_rows = q.layout.rows;
  in.q = q.q.data();
  in.scale_codes = q.codes.data();
  in.scale_max = q.scale_max.data();
  in.perm = q.perm.data();
  Exl2Packed p;
  std::string why;
  if (!exl2_pack(in, p, &why)) throw Error(ErrorKind::internal, "packing failed: " + why, {}, prefix);
  out.push_back(make_tensor(prefix + ".q_weight", DType::i32, {p.q_rows, p.n_pad}, p.q_weight.data(), p.q_weight.size()));
  out.push_back(make_tensor(prefix + ".q_scale", DType::i32, {p.groups, p.n_pad / 8}, p.q_scale.data(), p.q_scale.size()));
  out.push_back(make_tensor(prefix + ".q_scale_max", DType::f16, {p.groups}, p.q_scale_max.data(), p.q_scale_max.size()));
  out.push_back(make_tensor(prefix + ".q_groups", DType::i16, {2 * p.groups}, p.q_groups.data(), p.q_groups.size()));
  out.push_back(make_tensor(prefix + ".q_invperm", DType::i32, {p.k}, p.q_invperm.data(), p.q_invperm.size()));
  if (!bias.empty()) {
    std::vector<half_bits> b(std::size_t(p.n_pad), 0);
    for (std::size_t i = 0; i < bias.size() && i < b.size(); ++i) b[i] = float_to_half(bias[i]);
    out.push_back(make_tensor(prefix + ".bias", DType::f16, {p.n_pad}, b.data(), b.size()));
  }
}

}  // namespace exl::convert_detail
