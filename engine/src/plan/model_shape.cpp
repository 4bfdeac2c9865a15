// Model shapes for the planner: presets with real dimensions, EXL2 bit counting (§7.3, §7.6), and
// the bytes each module occupies on the device and reads per decoded token, either exactly from
// the safetensors headers of a folder or from a config and a target bpw ("what if").
#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "exl/error.h"
#include "exl/model_config.h"
#include "exl/plan.h"
#include "exl/tensor_store.h"

namespace exl::plan {
namespace {

std::int64_t pad32(std::int64_t n) { return (n + 31) / 32 * 32; }
// The CUDA backend repacks q_weight and q_scale into 64-column tiles (kernels/cuda exl2_tiles).
std::uint64_t tile_padded(std::uint64_t bytes, std::int64_t n_pad) {
  const std::int64_t tiled = (n_pad + 63) / 64 * 64;
  return n_pad > 0 ? bytes * std::uint64_t(tiled) / std::uint64_t(n_pad) : bytes;
}

// The one table of real architectures' shapes (the planner's what-if presets, `exl synth`,
// `exl bench --synth`). theta/eps/rope scaling as in the models' config.json; the test-* presets
// are tiny shapes for tests (vocab 500 exercises the head's padding to 512 columns).
struct Preset {
  const char* name;
  const char* type;
  int vocab, hidden, layers, heads, kv_heads, head_dim, inter, max_pos;
  bool tie;
  double theta;
  float eps;
  float llama3_factor;  // > 0: llama3 rope scaling (low 1, high 4, original 8192)
};
const Preset kPresets[] = {
    {"llama3-8b", "llama", 128256, 4096, 32, 32, 8, 128, 14336, 8192, false, 500000.0, 1e-5f, 0},
    {"llama3-70b", "llama", 128256, 8192, 80, 64, 8, 128, 28672, 8192, false, 500000.0, 1e-5f, 0},
    {"llama3.2-1b", "llama", 128256, 2048, 16, 32, 8, 64, 8192, 131072, true, 500000.0, 1e-5f, 32.0f},
    {"mistral-7b", "mistral", 32768, 4096, 32, 32, 8, 128, 14336, 32768, false, 1000000.0, 1e-5f, 0},
    {"qwen2.5-7b", "qwen2", 152064, 3584, 28, 28, 4, 128, 18944, 32768, false, 1000000.0, 1e-6f, 0},
    {"tinyllama-1.1b", "llama", 32000, 2048, 22, 32, 4, 64, 5632, 2048, false, 10000.0, 1e-5f, 0},
    {"test-tiny", "llama", 500, 256, 2, 4, 2, 64, 512, 2048, false, 10000.0, 1e-5f, 0},
    {"test-tiny-qwen2", "qwen2", 500, 256, 2, 4, 2, 64, 512, 2048, true, 1000000.0, 1e-6f, 0},
};

// Families whose description goes past the table's columns: config.json as their checkpoints
// write it (the fields the engine reads), parsed like a downloaded one. Shapes from the Hub's
// Qwen/Qwen3-8B, google/gemma-3-12b-it (text_config), microsoft/Phi-4-mini-instruct,
// Qwen/Qwen3-30B-A3B and mistralai/Mixtral-8x7B-v0.1; Phi-4-mini's LongRoPE factors are 1 here (they
// change no size). test-tiny-* are tiny shapes for tests.
nlohmann::json family_preset(const std::string& name) {
  using json = nlohmann::json;
  auto base = [](const char* arch, const char* type, int vocab, int hidden, int layers, int heads, int kv, int head_dim,
                 int inter, int max_pos, bool tie, double theta, double eps) {
    return json{{"architectures", {arch}}, {"model_type", type}, {"vocab_size", vocab}, {"hidden_size", hidden},
                {"num_hidden_layers", layers}, {"num_attention_heads", heads}, {"num_key_value_heads", kv},
                {"head_dim", head_dim}, {"intermediate_size", inter}, {"max_position_embeddings", max_pos},
                {"tie_word_embeddings", tie}, {"rope_theta", theta}, {"rms_norm_eps", eps}};
  };
  auto gemma3 = [](json j, int window, int pattern, double qpas) {
    j["sliding_window"] = window;
    j["sliding_window_pattern"] = pattern;
    j["rope_local_base_freq"] = 10000.0;
    j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}};
    j["query_pre_attn_scalar"] = qpas;
    j["hidden_activation"] = "gelu_pytorch_tanh";
    return j;
  };
  auto phi3 = [](json j, int original, int rotary_pairs, int window) {
    j["partial_rotary_factor"] = 0.75;
    j["original_max_position_embeddings"] = original;
    j["rope_scaling"] = {{"type", "longrope"},
                         {"short_factor", std::vector<double>(std::size_t(rotary_pairs), 1.0)},
                         {"long_factor", std::vector<double>(std::size_t(rotary_pairs), 1.0)}};
    j["sliding_window"] = window;
    return j;
  };
  if (name == "qwen3-8b")
    return base("Qwen3ForCausalLM", "qwen3", 151936, 4096, 36, 32, 8, 128, 12288, 40960, false, 1000000.0, 1e-6);
  if (name == "gemma3-12b")
    return gemma3(base("Gemma3ForCausalLM", "gemma3_text", 262208, 3840, 48, 16, 8, 256, 15360, 131072, true, 1000000.0, 1e-6),
                  1024, 6, 256.0);
  if (name == "phi-4-mini")
    return phi3(base("Phi3ForCausalLM", "phi3", 200064, 3072, 32, 24, 8, 128, 8192, 131072, true, 10000.0, 1e-5), 4096, 48,
                262144);
  auto moe = [](json j, int experts, int top_k, int expert_inter) {
    if (j["model_type"] == "mixtral") {
      j["num_local_experts"] = experts;
    } else {
      j["num_experts"] = experts;
      j["moe_intermediate_size"] = expert_inter;
      j["norm_topk_prob"] = true;
      j["decoder_sparse_step"] = 1;
      j["mlp_only_layers"] = json::array();
    }
    j["num_experts_per_tok"] = top_k;
    return j;
  };
  if (name == "qwen3-30b-a3b")
    return moe(base("Qwen3MoeForCausalLM", "qwen3_moe", 151936, 2048, 48, 32, 4, 128, 6144, 40960, false, 1000000.0, 1e-6),
               128, 8, 768);
  if (name == "mixtral-8x7b")
    return moe(base("MixtralForCausalLM", "mixtral", 32000, 4096, 32, 32, 8, 128, 14336, 32768, false, 1000000.0, 1e-5), 8,
               2, 14336);
  if (name == "test-tiny-qwen3-moe")
    return moe(base("Qwen3MoeForCausalLM", "qwen3_moe", 500, 256, 2, 4, 2, 64, 512, 2048, true, 1000000.0, 1e-6), 16, 4,
               128);
  if (name == "test-tiny-mixtral")
    return moe(base("MixtralForCausalLM", "mixtral", 500, 256, 2, 4, 2, 64, 256, 2048, false, 1000000.0, 1e-5), 8, 2, 256);
  if (name == "test-tiny-qwen3")
    return base("Qwen3ForCausalLM", "qwen3", 500, 256, 2, 4, 2, 96, 512, 2048, true, 1000000.0, 1e-6);
  if (name == "test-tiny-gemma3")
    return gemma3(base("Gemma3ForCausalLM", "gemma3_text", 500, 256, 2, 4, 2, 64, 512, 2048, true, 1000000.0, 1e-6), 16, 2,
                  64.0);
  if (name == "test-tiny-phi3")
    return phi3(base("Phi3ForCausalLM", "phi3", 500, 256, 2, 4, 2, 64, 512, 2048, true, 10000.0, 1e-5), 512, 24, 32);
  return nullptr;
}
constexpr const char* kFamilyPresets[] = {"qwen3-8b",        "gemma3-12b",       "phi-4-mini",       "qwen3-30b-a3b",
                                          "mixtral-8x7b",    "test-tiny-qwen3",  "test-tiny-gemma3", "test-tiny-phi3",
                                          "test-tiny-qwen3-moe", "test-tiny-mixtral"};

// Adds one allocation to a module.
void add(ModuleBytes& m, std::uint64_t bytes, bool read = true) {
  if (bytes == 0) return;
  m.device += bytes;
  if (read) m.read += bytes;
  m.buffers.push_back(bytes);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Linear shapes of one decoder layer: (in, out, has_bias). A sparse layer's: the attention only
// (its experts: expert_linears).
struct Lin { std::int64_t k, n; bool bias; };
std::vector<Lin> layer_linears(const ModelConfig& c, int layer) {
  const std::int64_t h = c.hidden_size, q = std::int64_t(c.num_heads) * c.head_dim,
                     kv = std::int64_t(c.num_kv_heads) * c.head_dim, i = c.intermediate_size;
  std::vector<Lin> out{{h, q, c.attention_bias}, {h, kv, c.attention_bias}, {h, kv, c.attention_bias}, {q, h, c.o_bias}};
  if (!c.moe.is_sparse(layer)) out.insert(out.end(), {{h, i, c.mlp_bias}, {h, i, c.mlp_bias}, {i, h, c.mlp_bias}});
  return out;
}
// One expert's linears: gate, up, down of moe.expert_intermediate.
std::vector<Lin> expert_linears(const ModelConfig& c) {
  const std::int64_t h = c.hidden_size, i = c.moe.expert_intermediate;
  return {{h, i, false}, {h, i, false}, {i, h, false}};
}

// A sparse layer's router (kept in 16 bits by the converters) and experts: every expert resident,
// top_k of them read per decoded token; the FLOP count takes the top_k experts a token runs.
template <class AddLinear>
void add_experts(ModuleBytes& m, const ModelConfig& c, AddLinear add_linear) {
  const MoeDescription& moe = c.moe;
  const std::uint64_t router = std::uint64_t(c.hidden_size) * std::uint64_t(moe.num_experts) * 2;
  m.device += router;
  m.read += router;
  m.buffers.push_back(router);
  m.params += std::int64_t(c.hidden_size) * moe.num_experts;
  ModuleBytes one;
  for (const Lin& l : expert_linears(c)) add_linear(one, l);
  for (int e = 0; e < moe.num_experts; ++e) m.buffers.insert(m.buffers.end(), one.buffers.begin(), one.buffers.end());
  m.device += one.device * std::uint64_t(moe.num_experts);
  m.read += one.read * std::uint64_t(moe.top_k);
  m.params += one.params * moe.top_k;
  m.max_dq_elems = std::max(m.max_dq_elems, one.max_dq_elems);
  m.exl3.insert(m.exl3.end(), one.exl3.begin(), one.exl3.end());
}

// An EXL2 linear of k x n at `bpw` (overhead included) as the layout places it.
void add_whatif_linear(ModuleBytes& m, const Lin& l, double bpw, Layout layout, bool is_head) {
  const std::int64_t np = pad32(l.n);
  const std::uint64_t disk = std::uint64_t(std::llround(double(l.k) * double(np) * bpw / 8.0));
  const std::uint64_t groups = std::uint64_t((l.k + 127) / 128);
  m.params += l.k * l.n;
  if (!is_head) m.max_dq_elems = std::max<std::uint64_t>(m.max_dq_elems, std::uint64_t(l.k * np));
  if (layout == Layout::exllamav2) {
    add(m, disk + (l.bias ? std::uint64_t(l.n) * 2 : 0));
    return;
  }
  // engine: q_groups (4 bytes a group) becomes an 8-byte unit per 32 rows; the int32 permutation
  // has the size of q_invperm; biases are fp32.
  const std::uint64_t perm = std::uint64_t(l.k) * 4, units = std::uint64_t(l.k / 32) * 8, smax = groups * 2;
  const std::uint64_t rest = disk - std::min(disk, perm + groups * 4 + smax);
  add(m, tile_padded(rest, np));
  add(m, smax);
  add(m, perm);
  add(m, units);
  if (l.bias) add(m, std::uint64_t(l.n) * 4);
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (const Preset& p : kPresets) out.push_back(p.name);
  for (const char* p : kFamilyPresets) out.push_back(p);
  return out;
}

ModelConfig preset_config(const std::string& name) {
  if (const nlohmann::json j = family_preset(name); !j.is_null()) return parse_model_config(j.dump(), "preset " + name);
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    ModelConfig c;
    c.architecture = p.type == std::string("qwen2") ? "Qwen2ForCausalLM"
                     : p.type == std::string("mistral") ? "MistralForCausalLM" : "LlamaForCausalLM";
    c.model_type = p.type;
    c.vocab_size = p.vocab; c.hidden_size = p.hidden; c.num_layers = p.layers; c.num_heads = p.heads;
    c.num_kv_heads = p.kv_heads; c.head_dim = p.head_dim; c.intermediate_size = p.inter;
    c.max_position_embeddings = p.max_pos; c.tie_word_embeddings = p.tie;
    c.attention_bias = c.model_type == "qwen2";
    c.rope.head_dim = p.head_dim;
    c.rope.theta = float(p.theta);
    c.rms_norm_eps = p.eps;
    if (p.llama3_factor > 0) {
      c.rope.scaling = RopeScaling::llama3;
      c.rope.factor = p.llama3_factor;
      c.rope.low_freq_factor = 1.0f;
      c.rope.high_freq_factor = 4.0f;
      c.rope.original_max_position = 8192;
    }
    return c;
  }
  std::string names;
  for (const std::string& p : preset_names()) names += (names.empty() ? "" : ", ") + p;
  throw Error(ErrorKind::invalid_argument, "unknown preset '" + name + "' (known: " + names + ")", "", "--preset");
}

std::uint64_t exl2_linear_bits(std::int64_t k, std::int64_t n, const std::vector<QuantPart>& option, bool bias) {
  if (k <= 0 || n <= 0 || option.empty()) throw Error(ErrorKind::invalid_argument, "EXL2 option: empty shape or option");
  const std::int64_t np = pad32(n);
  std::int64_t remaining = k, groups = 0;
  std::uint64_t bits = 0;
  for (const QuantPart& p : option) {
    if (p.group_size <= 0 || p.bits < 2 || p.bits > 8)
      throw Error(ErrorKind::invalid_argument, "EXL2 option: bits 2..8 and a positive group size");
    if (remaining <= 0) break;
    const double want = std::min(double(k) * p.proportion, double(remaining));
    const std::int64_t g = std::int64_t(std::ceil(want / p.group_size - 1e-9));
    const std::int64_t rows = std::min<std::int64_t>(g * p.group_size, remaining);
    bits += std::uint64_t(rows) * np * p.bits;
    groups += g;
    remaining -= g * p.group_size;
  }
  if (remaining > 0) throw Error(ErrorKind::invalid_argument, "EXL2 option: proportions cover fewer than all rows");
  bits += std::uint64_t(groups) * (16 + 32) + std::uint64_t(groups) * np * 4 + std::uint64_t(k) * 32;
  if (bias) bits += std::uint64_t(n) * 16;
  return bits;
}

double exl2_linear_bpw(std::int64_t k, std::int64_t n, const std::vector<QuantPart>& option, bool bias) {
  return double(exl2_linear_bits(k, n, option, bias)) / double(k * pad32(n) + (bias ? n : 0));
}

std::vector<QuantPart> head_option(int head_bits) {
  switch (head_bits) {
    case 2: return {{4, 0.3, 32}, {2, 0.7, 32}};
    case 3: return {{4, 0.15, 32}, {3, 0.85, 32}};
    case 4: return {{6, 0.15, 32}, {4, 0.85, 32}};
    case 5: return {{6, 0.15, 128}, {5, 0.85, 128}};
    case 6: return {{8, 0.15, 128}, {6, 0.85, 128}};
    case 8: return {{8, 1.0, 128}};
    default:
      throw Error(ErrorKind::invalid_argument, "head bits must be 2, 3, 4, 5, 6 or 8 (got " + std::to_string(head_bits) + ")",
                  "", "--head-bits");
  }
}

// A decoder layer's norms: attention and MLP input (Gemma: also their outputs), q/k norms.
void add_layer_norms(ModuleBytes& m, const ModelConfig& c) {
  const std::uint64_t norm = std::uint64_t(c.hidden_size) * 2;
  add(m, norm);
  add(m, norm);
  if (c.family.sandwich_norms) {  // Gemma: the MLP's input and output norms
    add(m, norm);
    add(m, norm);
  }
  if (c.family.qk_norm) {  // Qwen3, Gemma 3: [head_dim] each
    add(m, std::uint64_t(c.head_dim) * 2);
    add(m, std::uint64_t(c.head_dim) * 2);
  }
}

// An EXL3 linear of k x n at `bpw`: the trellis of the padded matrix, fp16 suh/svh, fp32 bias.
void add_whatif_exl3_linear(ModuleBytes& m, const Lin& l, double bpw) {
  const std::int64_t kp = (l.k + 127) / 128 * 128, np = (l.n + 127) / 128 * 128;
  add(m, std::uint64_t(std::llround(double(kp) * double(np) * bpw / 8.0)));
  add(m, std::uint64_t(kp) * 2);
  add(m, std::uint64_t(np) * 2);
  if (l.bias) add(m, std::uint64_t(l.n) * 4);
  m.params += l.k * l.n;
  m.exl3.emplace_back(int(kp), int(np));
}

ModelShape shape_from_config(const ModelConfig& c, double bpw, int head_bits, Layout layout, QuantFormat format) {
  if (c.num_layers <= 0 || c.hidden_size <= 0 || c.num_heads <= 0 || c.num_kv_heads <= 0 || c.head_dim <= 0 ||
      c.vocab_size <= 0 || c.intermediate_size <= 0)
    throw Error(ErrorKind::config, "incomplete model shape", c.dir.empty() ? "" : (c.dir / "config.json").string());
  const bool exl3 = format == QuantFormat::exl3 ||
                    (format == QuantFormat::automatic && c.quantization && c.quantization->method == "exl3");
  if (exl3 && !(bpw >= 1.0 && bpw <= 8.0))
    throw Error(ErrorKind::invalid_argument, "EXL3 bpw must be between 1 and 8 (got " + std::to_string(bpw) + ")", "",
                "--bpw");
  if (exl3 && (head_bits < 0 || head_bits > 8))
    throw Error(ErrorKind::invalid_argument,
                "EXL3 head bits must be 0 (fp16) or 1 .. 8 (got " + std::to_string(head_bits) + ")", "", "--head-bits");
  if (!exl3 && !(bpw >= 2.0 && bpw <= 8.5))
    throw Error(ErrorKind::invalid_argument, "bpw must be between 2 and 8.5 (got " + std::to_string(bpw) + ")", "", "--bpw");
  ModelShape s;
  s.name = c.dir.empty() ? c.model_type : c.dir.filename().string();
  s.config = c;
  s.decoder_bpw = bpw;
  s.head_bits = head_bits;
  const std::uint64_t norm = std::uint64_t(c.hidden_size) * 2;
  for (int i = 0; i < c.num_layers; ++i) {
    ModuleBytes m;
    add_layer_norms(m, c);
    auto add_linear = [&](ModuleBytes& into, const Lin& l) {
      if (exl3) add_whatif_exl3_linear(into, l, bpw);
      else add_whatif_linear(into, l, bpw, layout, false);
    };
    for (const Lin& l : layer_linears(c, i)) add_linear(m, l);
    if (c.moe.is_sparse(i)) add_experts(m, c, add_linear);
    s.layers.push_back(std::move(m));
  }
  const Lin head{c.hidden_size, c.vocab_size, false};
  add(s.head, norm);
  if (head_bits > 0 && exl3) {
    add_whatif_exl3_linear(s.head, head, double(head_bits));
  } else if (head_bits > 0) {
    const double hb = exl2_linear_bpw(head.k, head.n, head_option(head_bits), false);
    add_whatif_linear(s.head, head, hb, layout, true);
    s.head.max_dq_elems = std::uint64_t(head.k * pad32(head.n));
  } else {
    add(s.head, std::uint64_t(head.k * head.n) * 2);
    s.head.params = head.k * head.n;
  }
  if (layout == Layout::engine) add(s.head, std::uint64_t(c.head_dim / 2) * 4);  // RoPE inverse frequencies
  const std::uint64_t emb = std::uint64_t(c.vocab_size) * c.hidden_size * 2;
  s.embedding.device = emb;
  s.embedding.read = norm;  // one row per token
  s.embedding.buffers = {emb};
  for (const ModuleBytes& m : s.layers) s.linear_params += m.params;
  s.linear_params += s.head.params;
  return s;
}

ModelShape shape_from_folder(const std::filesystem::path& dir, Layout layout) {
  ModelConfig c = read_model_config(dir);
  const TensorStore store = TensorStore::open_dir(dir);
  ModelShape s;
  s.name = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
  s.config = c;
  s.exact = true;
  s.layers.resize(std::size_t(c.num_layers));
  if (c.quantization) { s.decoder_bpw = c.quantization->bits; s.head_bits = c.quantization->head_bits; }
  const std::string layer_prefix = "model.layers.";
  auto module_of = [&](const std::string& name) -> ModuleBytes* {
    if (name.rfind(layer_prefix, 0) == 0) {
      const std::size_t dot = name.find('.', layer_prefix.size());
      const int i = std::stoi(name.substr(layer_prefix.size(), dot - layer_prefix.size()));
      if (i < 0 || i >= c.num_layers)
        throw Error(ErrorKind::format, "tensor of layer " + std::to_string(i) + " beyond num_hidden_layers",
                    (dir / "config.json").string(), name);
      return &s.layers[std::size_t(i)];
    }
    if (name == "model.embed_tokens.weight") return &s.embedding;
    return &s.head;  // lm_head.*, model.norm.weight and anything else outside the layers
  };
  bool has_head = false;
  // Mixture of experts: what each layer's expert tensors add to `read` and `params`, of which a
  // decoded token reads top_k / num_experts.
  std::vector<std::uint64_t> expert_read(s.layers.size(), 0);
  std::vector<std::int64_t> expert_params(s.layers.size(), 0);
  for (const std::string& name : store.names()) {
    const TensorInfo& t = store.get(name);
    s.header_bytes += t.nbytes;
    ModuleBytes* m = module_of(name);
    const bool expert = c.moe.active() && name.find(".experts.") != std::string::npos && m != &s.head && m != &s.embedding;
    const std::uint64_t read_before = m->read;
    const std::int64_t params_before = m->params;
    if (expert && (ends_with(name, ".experts.gate_up_proj") || ends_with(name, ".experts.down_proj")))
      m->params += t.numel();  // transformers 5's fused experts (3-D, no .weight suffix)
    if (name.rfind("lm_head.", 0) == 0) has_head = true;
    if (m == &s.embedding) {
      s.embedding_header_bytes = t.nbytes;
      const std::uint64_t emb = std::uint64_t(t.numel()) * 2;
      s.embedding.device = emb;
      s.embedding.read = std::uint64_t(c.hidden_size) * 2;
      s.embedding.buffers = {emb};
      continue;
    }
    const std::string prefix = name.substr(0, name.rfind('.'));
    const bool is_head = m == &s.head;
    if (layout == Layout::exllamav2) {
      add(*m, t.nbytes);
    } else if ((ends_with(name, ".q_weight") || ends_with(name, ".q_scale")) && t.shape.size() == 2) {
      const std::int64_t cols = ends_with(name, ".q_weight") ? t.shape[1] : t.shape[1] * 8;  // n_pad
      add(*m, tile_padded(t.nbytes, cols));
    } else if (ends_with(name, ".q_scale_max")) {
      add(*m, t.nbytes);
    } else if (ends_with(name, ".q_invperm")) {
      add(*m, std::uint64_t(t.numel()) * 4);        // int32 q_perm
      add(*m, std::uint64_t(t.numel() / 32) * 8);   // unit table
    } else if (ends_with(name, ".q_groups") || ends_with(name, ".q_perm")) {
      // derived on the host (units, q_perm): not uploaded as stored
    } else if (ends_with(name, ".trellis") && t.shape.size() == 3) {
      // EXL3: uploaded as stored; W-hat k x n (padded) is what prefill reconstructs.
      add(*m, t.nbytes);
      const int k = int(t.shape[0] * 16), n = int(t.shape[1] * 16);
      m->params += std::int64_t(k) * n;
      m->exl3.emplace_back(k, n);
    } else if ((ends_with(name, ".su") || ends_with(name, ".sv")) && t.shape.size() == 1 && t.dtype == DType::i16) {
      add(*m, std::uint64_t(t.numel()) * 16 * 2);   // legacy packed EXL3 signs: fp16 suh/svh on the device
    } else if (ends_with(name, ".mcg") || ends_with(name, ".mul1")) {
      // EXL3 codebook markers: read on the host
    } else if (ends_with(name, ".bias")) {
      add(*m, std::uint64_t(t.numel()) * 4);
    } else {
      add(*m, std::uint64_t(t.numel()) * 2);        // fp16 norms and dense weights
    }
    if (ends_with(name, ".weight") && t.shape.size() == 2) m->params += t.numel();
    if (ends_with(name, ".q_weight") && t.shape.size() == 2) {
      const TensorInfo* perm = store.find(prefix + ".q_invperm");
      const std::int64_t k = perm ? perm->numel() : 0;
      m->params += k * t.shape[1];
      if (!is_head) m->max_dq_elems = std::max<std::uint64_t>(m->max_dq_elems, std::uint64_t(k * t.shape[1]));
      else m->max_dq_elems = std::uint64_t(k * t.shape[1]);
    }
    if (expert) {
      const std::size_t li = std::size_t(m - s.layers.data());
      expert_read[li] += m->read - read_before;
      expert_params[li] += m->params - params_before;
    }
  }
  for (std::size_t i = 0; i < s.layers.size(); ++i) {
    if (expert_read[i] == 0) continue;
    const double active = double(c.moe.top_k) / double(c.moe.num_experts);
    s.layers[i].read -= expert_read[i] - std::uint64_t(std::llround(double(expert_read[i]) * active));
    s.layers[i].params -= expert_params[i] - std::int64_t(std::llround(double(expert_params[i]) * active));
  }
  if (!has_head) {  // tied: the engine uploads the head as its own fp16 copy; ExLlamaV2 reads the embedding
    const std::uint64_t hb = std::uint64_t(c.vocab_size) * c.hidden_size * 2;
    add(s.head, hb);
    s.head.params = std::int64_t(c.vocab_size) * c.hidden_size;
  }
  if (layout == Layout::engine) add(s.head, std::uint64_t(c.head_dim / 2) * 4);
  for (const ModuleBytes& m : s.layers) s.linear_params += m.params;
  s.linear_params += s.head.params;
  return s;
}

}  // namespace exl::plan
