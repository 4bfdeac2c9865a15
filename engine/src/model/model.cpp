// Model description: resolves every tensor a Llama-family model needs from the tensor store
// and validates names, shapes and dtypes before any backend sees them.
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
    for (const LinearTensors* t : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) {
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
  if (s.contains("lm_head.q_weight") || s.contains("lm_head.trellis") || s.contains("lm_head.weight")) {
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
    for (const LinearTensors* t : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down})
      count_linear(*t, params, bits, weights, r.quantized, &formats);
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
