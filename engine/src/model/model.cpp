// Model description: resolves every tensor a Llama-family model needs from the tensor store
// and validates names, shapes and dtypes before any backend sees them.
#include "exl/model.h"

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
  const std::int64_t hidden = c.hidden_size, q_out = std::int64_t(c.num_heads) * c.head_dim,
                     kv_out = std::int64_t(c.num_kv_heads) * c.head_dim;

  m->embedding_ = &require_float_tensor(s, "model.embed_tokens.weight", {c.vocab_size, hidden});
  m->layers_.resize(std::size_t(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    LayerTensors& l = m->layers_[std::size_t(i)];
    l.input_norm = &require_float_tensor(s, p + "input_layernorm.weight", {hidden});
    l.q = load_linear(s, p + "self_attn.q_proj", c.hidden_size, int(q_out));
    l.k = load_linear(s, p + "self_attn.k_proj", c.hidden_size, int(kv_out));
    l.v = load_linear(s, p + "self_attn.v_proj", c.hidden_size, int(kv_out));
    l.o = load_linear(s, p + "self_attn.o_proj", int(q_out), c.hidden_size);
    l.post_attention_norm = &require_float_tensor(s, p + "post_attention_layernorm.weight", {hidden});
    l.gate = load_linear(s, p + "mlp.gate_proj", c.hidden_size, c.intermediate_size);
    l.up = load_linear(s, p + "mlp.up_proj", c.hidden_size, c.intermediate_size);
    l.down = load_linear(s, p + "mlp.down_proj", c.intermediate_size, c.hidden_size);
  }
  m->final_norm_ = &require_float_tensor(s, "model.norm.weight", {hidden});

  // The head: a stored lm_head always wins (EXL2 converters quantize a tied head separately);
  // otherwise a tied model reads the embedding table.
  if (s.contains("lm_head.q_weight") || s.contains("lm_head.weight")) {
    m->head_ = load_linear(s, "lm_head", c.hidden_size, c.vocab_size);
  } else if (c.tie_word_embeddings) {
    m->head_.kind = LinearKind::dense;
    m->head_.in_features = c.hidden_size;
    m->head_.out_features = c.vocab_size;
    m->head_.weight = m->embedding_;
  } else {
    throw Error(ErrorKind::missing_tensor,
                "the model has no lm_head.weight / lm_head.q_weight and config.json does not tie embeddings",
                (dir / "config.json").string(), "lm_head.weight");
  }

  if (std::filesystem::exists(dir / "tokenizer.json", ec)) m->tokenizer_ = Tokenizer::from_dir(dir);
  return m;
}

namespace {
void count_linear(const LinearTensors& l, std::int64_t& params, double& qbits, double& qweights, bool& any_q) {
  const std::int64_t n = std::int64_t(l.in_features) * l.out_features;
  params += n;
  if (l.kind == LinearKind::exl2) {
    any_q = true;
    qbits += double(l.exl2->storage_bits());
    qweights += double(n);
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
  for (const auto& l : layers_) {
    params += l.input_norm->numel() + l.post_attention_norm->numel();
    for (const LinearTensors* t : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down})
      count_linear(*t, params, bits, weights, r.quantized);
  }
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
