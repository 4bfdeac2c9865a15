// The family description of config.json (ARCHITECTURE.md, "Families as data"): which
// architectures the engine runs and, for each, the FamilyDescription and per-layer attention
// (window, RoPE) its config implies. Defaults are transformers' where a config omits a field
// (transformers writes only the fields that differ from its defaults).
#include <cmath>

#include <nlohmann/json.hpp>

#include "config_family.h"
#include "exl/error.h"
#include "exl/model_config.h"

namespace exl {
namespace format_detail {
namespace {

using json = nlohmann::json;

// Per-layer windows from layer_types ("sliding_attention" / "full_attention"), or from the
// family's default pattern when layer_types is absent (`sliding(i)` says which layers slide).
template <class Sliding>
void read_layer_types(const Fields& f, ModelConfig& c, int window, Sliding sliding) {
  c.layer_attention.assign(std::size_t(c.num_layers), {});
  const json* types = f.find("layer_types");
  if (types != nullptr && !types->is_null()) {
    if (!types->is_array() || int(types->size()) != c.num_layers)
      f.fail("layer_types", "must list one type per layer (" + std::to_string(c.num_layers) + ")");
    for (int i = 0; i < c.num_layers; ++i) {
      const json& t = (*types)[std::size_t(i)];
      if (!t.is_string()) f.fail("layer_types", "must be a list of strings");
      const std::string s = t.get<std::string>();
      if (s == "sliding_attention") {
        if (window <= 0) f.fail("sliding_window", "layer_types names sliding layers but no window is set");
        c.layer_attention[std::size_t(i)] = {window, true};
      } else if (s != "full_attention") {
        f.fail("layer_types", "layer " + std::to_string(i) + ": '" + s +
                                  "' is not supported (sliding_attention, full_attention)");
      }
    }
    return;
  }
  for (int i = 0; i < c.num_layers; ++i)
    if (window > 0 && sliding(i)) c.layer_attention[std::size_t(i)] = {window, true};
}

int read_window(const Fields& f, int fallback) {
  const json* v = f.find("sliding_window");
  if (v != nullptr && v->is_null()) return 0;
  const int w = f.get_int("sliding_window").value_or(fallback);
  if (w < 0) f.fail("sliding_window", "must not be negative");
  return w;
}

float positive_or_zero(const Fields& f, const char* key, double fallback) {
  const json* v = f.find(key);
  if (v != nullptr && v->is_null()) return 0.0f;
  const double d = f.get_double(key).value_or(fallback);
  if (d < 0.0 || !std::isfinite(d)) f.fail(key, "must be a positive number or null");
  return static_cast<float>(d);
}

void check_activation(const Fields& f, const char* key, const char* expected, const char* fallback) {
  const std::string act = f.get_string(key).value_or(fallback);
  if (act != expected && !(std::string(expected) == "gelu_pytorch_tanh" && act == "gelu_tanh"))
    throw Error(ErrorKind::unsupported, "activation '" + act + "' is not supported for this architecture (" +
                                            expected + ")", f.file, key);
}

// Gemma 2 and 3: (1 + w) norms around both blocks, scaled embeddings, GeGLU, query_pre_attn_scalar.
void read_gemma_common(const Fields& f, ModelConfig& c) {
  FamilyDescription& fam = c.family;
  fam.norm = NormKind::rms_one_plus;
  fam.sandwich_norms = true;
  fam.activation = Activation::gelu_tanh;
  fam.embedding_scale = std::sqrt(float(c.hidden_size));
  check_activation(f, f.find("hidden_activation") ? "hidden_activation" : "hidden_act", "gelu_pytorch_tanh",
                   "gelu_pytorch_tanh");
  const double qpas = f.get_double("query_pre_attn_scalar").value_or(256.0);
  if (!(qpas > 0.0)) f.fail("query_pre_attn_scalar", "must be positive");
  fam.attention_scale = static_cast<float>(1.0 / std::sqrt(qpas));
}

// Gemma 3's local layers: rope_local_base_freq (older configs) or rope_parameters.sliding_attention
// (transformers 5.x, which also moves the global RoPE to rope_parameters.full_attention).
void read_gemma3_rope(const Fields& f, ModelConfig& c) {
  c.rope_local = c.rope;
  c.rope_local.scaling = RopeScaling::none;
  c.rope_local.theta = 10000.0f;
  const json* params = f.find("rope_parameters");
  if (params != nullptr && params->is_object() && params->contains("full_attention")) {
    auto nested = [&](const char* key) {
      const json& sub = (*params)[key];
      json wrapper = {{"rope_parameters", sub}};
      if (const json* o = f.find("original_max_position_embeddings")) wrapper["original_max_position_embeddings"] = *o;
      return read_rope(Fields{wrapper, f.file, ""}, c.head_dim, c.max_position_embeddings);
    };
    c.rope = nested("full_attention");
    if (params->contains("sliding_attention") && (*params)["sliding_attention"].is_object())
      c.rope_local = nested("sliding_attention");
    return;
  }
  if (const auto local = f.get_double("rope_local_base_freq")) {
    if (!(*local > 0.0)) f.fail("rope_local_base_freq", "must be positive");
    c.rope_local.theta = static_cast<float>(*local);
  }
  if (!f.get_double("rope_theta")) c.rope.theta = 1000000.0f;  // Gemma3TextConfig's default
}

// Mixture of experts: how many experts, how many per token, their size and which layers are sparse.
// Mixtral: num_local_experts of intermediate_size each on every layer, always renormalised.
// Qwen3-MoE: num_experts of moe_intermediate_size on the layers that decoder_sparse_step selects and
// mlp_only_layers does not list (those keep a dense MLP of intermediate_size); norm_topk_prob.
void read_moe(const Fields& f, ModelConfig& c) {
  MoeDescription& moe = c.moe;
  const bool mixtral = c.model_type == "mixtral";
  // transformers 5 writes Qwen3-MoE's num_experts as num_local_experts too.
  const char* experts_key = mixtral || !f.find("num_experts") ? "num_local_experts" : "num_experts";
  moe.num_experts = f.get_int(experts_key).value_or(mixtral ? 8 : 128);
  if (moe.num_experts <= 0) f.fail(experts_key, "must be positive");
  moe.top_k = f.get_int("num_experts_per_tok").value_or(mixtral ? 2 : 8);
  if (moe.top_k <= 0 || moe.top_k > moe.num_experts)
    f.fail("num_experts_per_tok", "must be between 1 and " + std::string(experts_key) + " (" +
                                      std::to_string(moe.num_experts) + "), found " + std::to_string(moe.top_k));
  check_activation(f, "hidden_act", "silu", "silu");
  moe.sparse.assign(std::size_t(c.num_layers), true);
  if (mixtral) {
    moe.expert_intermediate = c.intermediate_size;
    moe.norm_topk_prob = true;
    return;
  }
  moe.expert_intermediate = f.get_int("moe_intermediate_size").value_or(768);
  if (moe.expert_intermediate <= 0) f.fail("moe_intermediate_size", "must be positive");
  moe.norm_topk_prob = f.get_bool("norm_topk_prob").value_or(false);
  const int step = f.get_int("decoder_sparse_step").value_or(1);
  if (step <= 0) f.fail("decoder_sparse_step", "must be positive");
  for (int i = 0; i < c.num_layers; ++i) moe.sparse[std::size_t(i)] = (i + 1) % step == 0;
  if (const json* only = f.find("mlp_only_layers"); only != nullptr && !only->is_null()) {
    if (!only->is_array()) f.fail("mlp_only_layers", "must be a list of layer indices");
    for (const json& v : *only) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= c.num_layers)
        f.fail("mlp_only_layers", "must list layer indices below num_hidden_layers (" + std::to_string(c.num_layers) + ")");
      moe.sparse[std::size_t(v.get<int>())] = false;
    }
  }
}

}  // namespace

void read_family(const Fields& f, ModelConfig& c) {
  FamilyDescription& fam = c.family;
  const std::string& t = c.model_type;
  if (t == "llama" || t == "mistral" || t == "qwen2") {
    read_layer_types(f, c, c.sliding_window, [](int) { return true; });
    if (t == "qwen2" && c.sliding_window > 0 && !f.find("layer_types")) {
      const int from = f.get_int("max_window_layers").value_or(28);
      for (int i = 0; i < c.num_layers; ++i)
        if (i < from) c.layer_attention[std::size_t(i)] = {};
    }
  } else if (t == "mixtral") {
    c.sliding_window = read_window(f, 0);
    read_layer_types(f, c, c.sliding_window, [](int) { return true; });
    read_moe(f, c);
  } else if (t == "qwen3" || t == "qwen3_moe") {
    fam.qk_norm = true;
    if (t == "qwen3_moe") read_moe(f, c);
    c.sliding_window = f.get_bool("use_sliding_window").value_or(false) ? read_window(f, 4096) : 0;
    const int from = f.get_int("max_window_layers").value_or(28);
    read_layer_types(f, c, c.sliding_window, [&](int i) { return i >= from; });
  } else if (t == "gemma2") {
    read_gemma_common(f, c);
    fam.attn_logit_softcap = positive_or_zero(f, "attn_logit_softcapping", 50.0);
    fam.final_logit_softcap = positive_or_zero(f, "final_logit_softcapping", 30.0);
    c.sliding_window = read_window(f, 4096);
    read_layer_types(f, c, c.sliding_window, [](int i) { return (i + 1) % 2 != 0; });
  } else if (t == "gemma3_text" || t == "gemma3") {
    read_gemma_common(f, c);
    fam.qk_norm = true;
    fam.attn_logit_softcap = positive_or_zero(f, "attn_logit_softcapping", 0.0);
    fam.final_logit_softcap = positive_or_zero(f, "final_logit_softcapping", 0.0);
    c.sliding_window = read_window(f, 4096);
    const int pattern = f.get_int("sliding_window_pattern").value_or(6);
    if (pattern <= 0) f.fail("sliding_window_pattern", "must be positive");
    read_gemma3_rope(f, c);
    read_layer_types(f, c, c.sliding_window, [&](int i) { return (i + 1) % pattern != 0; });
  } else if (t == "phi3") {
    check_activation(f, "hidden_act", "silu", "silu");
    fam.fused_qkv = true;
    fam.fused_gate_up = true;
    c.sliding_window = read_window(f, 0);
    read_layer_types(f, c, c.sliding_window, [](int) { return true; });
  }
  // Only Gemma 3 has a second RoPE; the flag says which layers take it.
  if (t != "gemma3_text" && t != "gemma3")
    for (LayerAttention& a : c.layer_attention) a.local_rope = false;
}

}  // namespace format_detail

namespace {
struct Feature {
  bool on;
  const char* name;
};
}  // namespace

std::vector<std::string> features_beyond_llama(const ModelConfig& c, int context) {
  const FamilyDescription& f = c.family;
  bool window = false, local_rope = false;
  for (const LayerAttention& a : c.layer_attention) {
    window = window || (a.window > 0 && a.window < context);
    local_rope = local_rope || a.local_rope;
  }
  const Feature all[] = {
      {f.norm != NormKind::rms, "(1 + w) RMSNorm"},
      {f.sandwich_norms, "norms after attention and MLP"},
      {f.qk_norm, "q/k norm"},
      {f.activation != Activation::silu, "GeGLU (tanh GELU)"},
      {f.embedding_scale != 1.0f, "scaled embeddings"},
      {f.attention_scale > 0.0f && std::fabs(f.attention_scale * std::sqrt(float(c.head_dim)) - 1.0f) > 1e-6f,
       "query_pre_attn_scalar"},
      {f.attn_logit_softcap > 0.0f, "attention-logit soft-capping"},
      {f.final_logit_softcap > 0.0f, "final-logit soft-capping"},
      {c.rope.rotary_dim > 0, "partial rotary"},
      {window, "sliding-window attention"},
      {local_rope, "per-layer RoPE"},
      {c.moe.active(), "mixture of experts"},
  };
  std::vector<std::string> out;
  for (const Feature& x : all)
    if (x.on) out.emplace_back(x.name);
  return out;
}

RopeParams rope_for_context(const ModelConfig& c, int context, bool local) {
  RopeParams p = local ? c.rope_local : c.rope;
  p.head_dim = c.head_dim;
  if (p.scaling == RopeScaling::longrope) p.longrope_use_long = context > p.original_max_position;
  return p;
}

}  // namespace exl
