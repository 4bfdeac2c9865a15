// Model description: resolves every tensor a model of a supported family needs from the tensor
// store (the family's optional tensors, fused projections split into views) and validates names,
// shapes and dtypes before any backend sees them.
#include "exl/model.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "exl/error.h"
#include "exl/log.h"

namespace exl {
namespace {

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

bool is_float(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32; }

// A fused tensor (several projections or experts in one): float dtype and exactly `want`.
const TensorInfo& require_float_shape(const TensorInfo& t, const std::vector<std::int64_t>& want) {
  if (!is_float(t.dtype) || t.shape != want)
    throw Error(ErrorKind::shape,
                "expected a float tensor of shape " + shape_str(want) + ", found " + dtype_name(t.dtype) + " " + shape_str(t.shape),
                t.file, t.name);
  return t;
}

// Whether a linear `prefix` is stored in any form: dense (.weight), EXL2 (.q_weight) or EXL3 (.trellis).
bool has_linear(const TensorStore& s, const std::string& prefix) {
  return s.contains(prefix + ".weight") || s.contains(prefix + ".q_weight") || s.contains(prefix + ".trellis");
}

// The file of a quantized linear `prefix` (EXL2 or EXL3), for errors that refuse it.
std::string quantized_file(const TensorStore& s, const std::string& prefix) {
  return s.find(prefix + ".q_weight") ? s.get(prefix + ".q_weight").file : s.get(prefix + ".trellis").file;
}

// Rows [first_row, first_row + rows) of w, each `in` wide, as a tensor of its own named w's name +
// suffix (the memory is contiguous, so the view points into the map).
const TensorInfo* row_view(const TensorInfo& w, std::int64_t first_row, std::int64_t rows, std::int64_t in,
                           const std::string& suffix, std::vector<std::unique_ptr<TensorInfo>>& views) {
  auto v = std::make_unique<TensorInfo>(w);
  v->name = w.name + suffix;
  v->shape = {rows, in};
  v->data = w.data + std::size_t(first_row * in) * dtype_size(w.dtype);
  v->nbytes = std::size_t(rows * in) * dtype_size(w.dtype);
  views.push_back(std::move(v));
  return views.back().get();
}

// A norm or embedding tensor: float dtype and exactly the expected shape.
const TensorInfo& require_float_tensor(const TensorStore& store, const std::string& name,
                                       const std::vector<std::int64_t>& shape) {
  const TensorInfo& t = store.get(name);
  if (!is_float(t.dtype))
    throw Error(ErrorKind::shape, std::string("expected a float tensor, found dtype ") + dtype_name(t.dtype),
                t.file, name);
  if (t.shape != shape)
    throw Error(ErrorKind::shape, "expected shape " + shape_str(shape) + ", found " + shape_str(t.shape), t.file,
                name);
  return t;
}

// A decoder layer's quantizable linears: attention, then the dense MLP or every expert's.
std::vector<const LinearTensors*> decoder_linears(const LayerTensors& l) {
  std::vector<const LinearTensors*> out{&l.q, &l.k, &l.v, &l.o};
  if (!l.sparse()) {
    out.insert(out.end(), {&l.gate, &l.up, &l.down});
    return out;
  }
  for (const ExpertTensors& x : l.experts) out.insert(out.end(), {&x.gate, &x.up, &x.down});
  return out;
}

// An EXL3 quantization_config must agree with the tensors: head_bits with the head's rate (16 for
// an unquantized head) and bits with the decoder layers' average rate (the converter rounds it
// to two decimals), so a file whose config and tensors disagree is reported, not half-believed.
void check_exl3_config(const Model& m, const std::filesystem::path& dir) {
  const auto& q = m.config().quantization;
  if (!q || q->method != "exl3") return;
  const std::string file = (dir / "config.json").string();
  const LinearTensors& head = m.head();
  const double head_rate = head.kind == LinearKind::exl3 ? head.exl3->bits_per_weight() : head.kind == LinearKind::dense ? 16.0 : -1.0;
  if (q->head_bits_value > 0 && head_rate > 0 && std::fabs(q->head_bits_value - head_rate) > 1e-6)
    throw Error(ErrorKind::config,
                "head_bits is " + std::to_string(q->head_bits_value) + " but lm_head is stored at " + std::to_string(head_rate) + " bits",
                file, "quantization_config.head_bits");
  double bits = 0, weights = 0;
  for (const auto& l : m.layers())
    for (const LinearTensors* t : decoder_linears(l)) {
      if (t->kind != LinearKind::exl3) return;  // mixed or partly unquantized: nothing to compare
      const double n = double(t->exl3->view.k) * double(t->exl3->view.n);
      bits += t->exl3->bits_per_weight() * n;
      weights += n;
    }
  if (q->bits > 0 && weights > 0 && std::fabs(bits / weights - q->bits) > 0.0051)
    throw Error(ErrorKind::config,
                "bits is " + std::to_string(q->bits) + " but the decoder layers are stored at " + std::to_string(bits / weights) +
                    " bits per weight on average",
                file, "quantization_config.bits");
}

// Rows [row0, row0 + rows) of a dense fused projection [out, in] as a tensor of its own.
// Quantized fused projections are refused: the converter writes them split.
const TensorInfo* fused_rows(const TensorStore& s, const std::string& prefix, std::int64_t row0, std::int64_t rows,
                             std::int64_t total_rows, std::int64_t in, const std::string& part,
                             std::vector<std::unique_ptr<TensorInfo>>& views) {
  const TensorInfo* w = s.find(prefix + ".weight");
  if (w == nullptr) {
    if (has_linear(s, prefix))
      throw Error(ErrorKind::unsupported,
                  "a quantized fused projection is not supported; `exl convert` writes it as separate projections",
                  quantized_file(s, prefix), prefix);
    s.get(prefix + ".weight");  // throws missing_tensor naming it
  }
  require_float_shape(*w, {total_rows, in});
  return row_view(*w, row0, rows, in, "[" + part + "]", views);
}

LinearTensors dense_view(const TensorInfo* w, int in, int out) {
  LinearTensors l;
  l.kind = LinearKind::dense;
  l.in_features = in;
  l.out_features = out;
  l.weight = w;
  return l;
}

// A family's projections: separate (Llama layout, also every converted model) or fused (Phi-3).
void load_projections(const TensorStore& s, const ModelConfig& c, const std::string& p, LayerTensors& l,
                      std::vector<std::unique_ptr<TensorInfo>>& views) {
  const int H = c.hidden_size, q_out = c.num_heads * c.head_dim, kv_out = c.num_kv_heads * c.head_dim,
            I = c.intermediate_size;
  const std::string qkv = p + "self_attn.qkv_proj";
  if (c.family.fused_qkv && !has_linear(s, p + "self_attn.q_proj")) {
    const std::int64_t total = std::int64_t(q_out) + 2 * std::int64_t(kv_out);
    l.q = dense_view(fused_rows(s, qkv, 0, q_out, total, H, "q", views), H, q_out);
    l.k = dense_view(fused_rows(s, qkv, q_out, kv_out, total, H, "k", views), H, kv_out);
    l.v = dense_view(fused_rows(s, qkv, q_out + kv_out, kv_out, total, H, "v", views), H, kv_out);
  } else {
    l.q = load_linear(s, p + "self_attn.q_proj", H, q_out);
    l.k = load_linear(s, p + "self_attn.k_proj", H, kv_out);
    l.v = load_linear(s, p + "self_attn.v_proj", H, kv_out);
  }
  l.o = load_linear(s, p + "self_attn.o_proj", q_out, H);
  if (l.sparse()) return;  // the experts replace the dense MLP
  const std::string gu = p + "mlp.gate_up_proj";
  if (c.family.fused_gate_up && !has_linear(s, p + "mlp.gate_proj")) {
    l.gate = dense_view(fused_rows(s, gu, 0, I, 2 * std::int64_t(I), H, "gate", views), H, I);
    l.up = dense_view(fused_rows(s, gu, I, I, 2 * std::int64_t(I), H, "up", views), H, I);
  } else {
    l.gate = load_linear(s, p + "mlp.gate_proj", H, I);
    l.up = load_linear(s, p + "mlp.up_proj", H, I);
  }
  l.down = load_linear(s, p + "mlp.down_proj", I, H);
}

// Rows [row0, row0 + rows) of expert `e` of a fused expert tensor [experts, total_rows, in]
// (transformers 5 keeps the experts of a layer in one tensor), as a tensor of its own.
const TensorInfo* expert_rows(const TensorInfo& w, int e, std::int64_t row0, std::int64_t rows, std::int64_t in,
                              const std::string& part, std::vector<std::unique_ptr<TensorInfo>>& views) {
  return row_view(w, std::int64_t(e) * w.shape[1] + row0, rows, in,
                  "[" + std::to_string(e) + "]" + (part.empty() ? "" : "[" + part + "]"), views);
}

// A sparse layer's router and experts. The Hub's checkpoints store every expert's projections as
// tensors of their own: Mixtral block_sparse_moe.experts.N.w1 (gate) / w3 (up) / w2 (down) with the
// router block_sparse_moe.gate, Qwen3-MoE mlp.experts.N.gate_proj / up_proj / down_proj with mlp.gate
// (EXL2 / EXL3 experts load the same way, each through load_linear). transformers 5 saves a layer's
// experts fused: mlp.experts.gate_up_proj [experts, 2 x inter, hidden] (gate rows first) and
// mlp.experts.down_proj [experts, hidden, inter]; both layouts load, into per-expert views.
void load_experts(const TensorStore& s, const ModelConfig& c, const std::string& p, LayerTensors& l,
                  std::vector<std::unique_ptr<TensorInfo>>& views) {
  const MoeDescription& moe = c.moe;
  const int H = c.hidden_size, I = moe.expert_intermediate, E = moe.num_experts;
  const bool mixtral_names =
      s.contains(p + "block_sparse_moe.gate.weight") || has_linear(s, p + "block_sparse_moe.experts.0.w1");
  const std::string block = p + (mixtral_names ? "block_sparse_moe." : "mlp.");
  // An expert beyond the configured count means config and checkpoint disagree.
  const std::string extra = block + "experts." + std::to_string(E) + "." + (mixtral_names ? "w1" : "gate_proj");
  for (const char* suffix : {".weight", ".q_weight", ".trellis"})
    if (s.contains(extra + suffix))
      throw Error(ErrorKind::shape, "the checkpoint has more experts than config.json's " +
                                        std::string("num_local_experts / num_experts") +
                                        " (" + std::to_string(E) + ")",
                  s.get(extra + suffix).file, extra + suffix);
  // A missing router or expert projection is reported as its .weight tensor with the files searched.
  auto expert_linear = [&](const std::string& prefix, int in, int out) {
    if (!has_linear(s, prefix)) (void)s.get(prefix + ".weight");
    return load_linear(s, prefix, in, out);
  };
  l.router = expert_linear(block + "gate", H, E);
  if (l.router.kind != LinearKind::dense)
    throw Error(ErrorKind::unsupported, "a quantized router is not supported (the converters keep it in 16 bits)",
                quantized_file(s, block + "gate"), block + "gate");
  l.experts.resize(std::size_t(E));
  const std::string fused = block + "experts.gate_up_proj";
  if (!mixtral_names && s.contains(fused)) {
    const TensorInfo& gu = require_float_shape(s.get(fused), {E, 2 * std::int64_t(I), H});
    const TensorInfo& dn = require_float_shape(s.get(block + "experts.down_proj"), {E, H, I});
    for (int e = 0; e < E; ++e) {
      ExpertTensors& x = l.experts[std::size_t(e)];
      x.gate = dense_view(expert_rows(gu, e, 0, I, H, "gate", views), H, I);
      x.up = dense_view(expert_rows(gu, e, I, I, H, "up", views), H, I);
      x.down = dense_view(expert_rows(dn, e, 0, H, I, "", views), I, H);
    }
    return;
  }
  const char* names[3] = {"gate_proj", "up_proj", "down_proj"};
  if (mixtral_names) names[0] = "w1", names[1] = "w3", names[2] = "w2";
  for (int e = 0; e < E; ++e) {
    const std::string ep = block + "experts." + std::to_string(e) + ".";
    ExpertTensors& x = l.experts[std::size_t(e)];
    x.gate = expert_linear(ep + names[0], H, I);
    x.up = expert_linear(ep + names[1], H, I);
    x.down = expert_linear(ep + names[2], I, H);
  }
}

// Multimodal checkpoints (Gemma3ForConditionalGeneration) keep the language model under a prefix.
std::string find_tensor_prefix(const TensorStore& s) {
  for (const char* p : {"model.", "model.language_model.", "language_model.model."})
    if (s.contains(std::string(p) + "embed_tokens.weight")) return p;
  return "model.";
}

}  // namespace

std::shared_ptr<const Model> Model::open(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(ErrorKind::io, "model folder does not exist or is not a folder", dir.string());
  auto m = std::make_shared<Model>();
  m->config_ = read_model_config(dir);
  m->store_ = TensorStore::open_dir(dir);
  const ModelConfig& c = m->config_;
  const TensorStore& s = m->store_;
  const std::int64_t hidden = c.hidden_size;

  m->config_.tensor_prefix = find_tensor_prefix(s);
  const std::string& root = c.tensor_prefix;
  m->embedding_ = &require_float_tensor(s, root + "embed_tokens.weight", {c.vocab_size, hidden});
  m->layers_.resize(std::size_t(c.num_layers));
  const FamilyDescription& fam = c.family;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = root + "layers." + std::to_string(i) + ".";
    LayerTensors& l = m->layers_[std::size_t(i)];
    l.input_norm = &require_float_tensor(s, p + "input_layernorm.weight", {hidden});
    if (c.moe.is_sparse(i)) load_experts(s, c, p, l, m->views_);
    load_projections(s, c, p, l, m->views_);
    if (fam.qk_norm) {
      l.q_norm = &require_float_tensor(s, p + "self_attn.q_norm.weight", {c.head_dim});
      l.k_norm = &require_float_tensor(s, p + "self_attn.k_norm.weight", {c.head_dim});
    }
    l.post_attention_norm = &require_float_tensor(s, p + "post_attention_layernorm.weight", {hidden});
    if (fam.sandwich_norms) {
      l.pre_feedforward_norm = &require_float_tensor(s, p + "pre_feedforward_layernorm.weight", {hidden});
      l.post_feedforward_norm = &require_float_tensor(s, p + "post_feedforward_layernorm.weight", {hidden});
    }
  }
  m->final_norm_ = &require_float_tensor(s, root + "norm.weight", {hidden});

  // The head: a stored lm_head always wins (EXL2 converters quantize a tied head separately);
  // otherwise a tied model reads the embedding table.
  if (has_linear(s, "lm_head")) {
    m->head_ = load_linear(s, "lm_head", c.hidden_size, c.vocab_size);
  } else if (c.tie_word_embeddings) {
    m->head_.kind = LinearKind::dense;
    m->head_.in_features = c.hidden_size;
    m->head_.out_features = c.vocab_size;
    m->head_.weight = m->embedding_;
  } else {
    throw Error(ErrorKind::missing_tensor,
                "the model has no lm_head.weight / lm_head.q_weight / lm_head.trellis and config.json does not tie embeddings",
                (dir / "config.json").string(), "lm_head.weight");
  }

  check_exl3_config(*m, dir);
  if (std::filesystem::exists(dir / "tokenizer.json", ec)) m->tokenizer_ = Tokenizer::from_dir(dir);
  return m;
}

namespace {
void count_linear(const LinearTensors& l, std::int64_t& params, double& qbits, double& qweights, bool& any_q,
                  unsigned* formats = nullptr) {
  const std::int64_t n = std::int64_t(l.in_features) * l.out_features;
  params += n;
  if (l.kind == LinearKind::exl2) {
    any_q = true;
    qbits += double(l.exl2->storage_bits());
    qweights += double(n);
    if (formats) *formats |= 1u;
  } else if (l.kind == LinearKind::exl3) {
    any_q = true;
    qbits += double(l.exl3->storage_bits());
    qweights += double(n);
    if (formats) *formats |= 2u;
  } else {
    qbits += 16.0 * double(n);
    qweights += double(n);
  }
}
}  // namespace

ModelSummary Model::summary() const {
  ModelSummary r;
  double bits = 0, weights = 0;
  std::int64_t params = embedding_->numel() + final_norm_->numel();
  unsigned formats = 0;
  for (const auto& l : layers_) {
    params += l.input_norm->numel() + l.post_attention_norm->numel();
    for (const TensorInfo* t : {l.q_norm, l.k_norm, l.pre_feedforward_norm, l.post_feedforward_norm})
      if (t) params += t->numel();
    for (const LinearTensors* t : decoder_linears(l)) count_linear(*t, params, bits, weights, r.quantized, &formats);
    if (l.sparse()) params += std::int64_t(l.router.in_features) * l.router.out_features;
  }
  r.format = formats == 3 ? "exl2+exl3" : formats == 2 ? "exl3" : formats == 1 ? "exl2" : "fp16";
  r.average_bpw = weights > 0 ? bits / weights : 0.0;
  if (head_.weight != embedding_) {
    double hb = 0, hw = 0;
    bool q = false;
    count_linear(head_, params, hb, hw, q);
    r.head_bpw = hw > 0 ? hb / hw : 0.0;
  } else {
    r.head_bpw = 16.0;
  }
  r.parameters = params;
  std::error_code ec;
  for (const auto& f : store_.files()) r.bytes_on_disk += std::filesystem::file_size(f, ec);
  return r;
}

}  // namespace exl
