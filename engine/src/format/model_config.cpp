// config.json of the supported architectures (Llama, Mistral, Qwen2, Qwen3, Gemma 2 and 3, Phi-3,
// Mixtral, Qwen3-MoE):
// the fields the engine needs, checked for presence, type and consistency, with errors naming the
// file and the field (spec §1.2). The family description is read by config_family.cpp.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config_family.h"
#include "config_fields.h"
#include "exl/error.h"
#include "exl/log.h"
#include "exl/model_config.h"

namespace exl {
namespace {

using json = nlohmann::json;
using format_detail::Fields;

struct KnownArch {
  const char* model_type;
  const char* architecture;
};
constexpr KnownArch known_archs[] = {{"llama", "LlamaForCausalLM"},
                                     {"mistral", "MistralForCausalLM"},
                                     {"qwen2", "Qwen2ForCausalLM"},
                                     {"qwen3", "Qwen3ForCausalLM"},
                                     {"gemma2", "Gemma2ForCausalLM"},
                                     {"gemma3_text", "Gemma3ForCausalLM"},
                                     {"gemma3", "Gemma3ForConditionalGeneration"},
                                     {"phi3", "Phi3ForCausalLM"},
                                     {"mixtral", "MixtralForCausalLM"},
                                     {"qwen3_moe", "Qwen3MoeForCausalLM"}};

void read_architecture(const Fields& f, ModelConfig& c) {
  if (const json* a = f.find("architectures")) {
    if (!a->is_array() || a->empty() || !(*a)[0].is_string())
      f.fail("architectures", "must be a non-empty list of strings");
    c.architecture = (*a)[0].get<std::string>();
  }
  c.model_type = f.get_string("model_type").value_or("");
  if (c.model_type.empty()) {
    for (const auto& k : known_archs)
      if (c.architecture == k.architecture) c.model_type = k.model_type;
    if (c.architecture.empty()) f.fail("model_type", "neither model_type nor architectures is present");
    if (c.model_type.empty())
      throw Error(ErrorKind::unsupported,
                  "architecture '" + c.architecture + "' is not supported (supported: " + supported_architectures() + ")",
                  f.file, "architectures");
    return;
  }
  for (const auto& k : known_archs) {
    if (c.model_type == k.model_type) {
      if (c.architecture.empty()) c.architecture = k.architecture;
      return;
    }
  }
  throw Error(ErrorKind::unsupported,
              "model_type '" + c.model_type + "' (architecture '" + c.architecture +
                  "') is not supported (supported: " + supported_architectures() + ")",
              f.file, "model_type");
}

// Token ids: an int, null, or (eos) a list of ints.
std::vector<int> read_token_ids(const Fields& f, const char* key) {
  std::vector<int> ids;
  const json* v = f.find(key);
  if (v == nullptr || v->is_null()) return ids;
  auto one = [&](const json& x) {
    if (!x.is_number_integer() || x.get<std::int64_t>() < 0 || x.get<std::int64_t>() > 0x7fffffff)
      f.fail(key, "must be a non-negative integer or a list of them");
    ids.push_back(x.get<int>());
  };
  if (v->is_array()) {
    for (const auto& x : *v) one(x);
  } else {
    one(*v);
  }
  return ids;
}

std::optional<int> read_single_id(const Fields& f, const char* key) {
  const auto ids = read_token_ids(f, key);
  if (ids.empty()) return std::nullopt;
  return ids.front();
}

void read_quantization(const Fields& f, ModelConfig& c) {
  const json* q = f.find("quantization_config");
  if (q == nullptr || q->is_null()) return;
  if (!q->is_object()) f.fail("quantization_config", "must be an object");
  Fields qf{*q, f.file, "quantization_config."};
  QuantizationConfig out;
  out.method = qf.get_string("quant_method").value_or("");
  out.version = qf.get_string("version").value_or("");
  out.bits = qf.get_double("bits").value_or(0.0);
  if (out.method == "exl3") {
    // EXL3 (docs/EXL3.md): the head may take a half-integer rate; no field is required.
    out.head_bits_value = qf.get_double("head_bits").value_or(0.0);
    if (out.head_bits_value < 0.0 || out.head_bits_value > 16.0) qf.fail("head_bits", "must be between 1 and 16");
    if (out.bits < 0.0 || out.bits > 16.0) qf.fail("bits", "must be between 1 and 16");
    out.head_bits = int(out.head_bits_value);
    out.codebook = qf.get_string("codebook").value_or("");
    if (!out.codebook.empty() && out.codebook != "mul1" && out.codebook != "mcg" && out.codebook != "3inst")
      qf.fail("codebook", "'" + out.codebook + "' is not mul1, mcg or 3inst");
  } else {
    out.head_bits = qf.get_int("head_bits").value_or(0);
    out.head_bits_value = out.head_bits;
  }
  c.quantization = out;
}

void merge_eos(std::vector<int>& into, const std::vector<int>& more) {
  for (int id : more)
    if (std::find(into.begin(), into.end(), id) == into.end()) into.push_back(id);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot read file", path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string supported_architectures() {
  std::string out;
  for (const auto& k : known_archs) out += (out.empty() ? "" : ", ") + std::string(k.architecture);
  return out;
}

ModelConfig parse_model_config(const std::string& json_text, const std::string& display_name) {
  const json root = format_detail::parse_json_config(json_text, display_name);
  const Fields f{root, display_name, ""};
  ModelConfig c;
  read_architecture(f, c);

  c.vocab_size = f.require_positive("vocab_size");
  c.hidden_size = f.require_positive("hidden_size");
  c.num_layers = f.require_positive("num_hidden_layers");
  c.num_heads = f.require_positive("num_attention_heads");
  c.intermediate_size = f.require_positive("intermediate_size");
  c.num_kv_heads = f.get_int("num_key_value_heads").value_or(c.num_heads);
  if (c.num_kv_heads <= 0) f.fail("num_key_value_heads", "must be positive");
  if (c.num_heads % c.num_kv_heads != 0)
    f.fail("num_key_value_heads", "num_attention_heads (" + std::to_string(c.num_heads) +
                                      ") is not a multiple of num_key_value_heads (" +
                                      std::to_string(c.num_kv_heads) + ")");
  if (const auto hd = f.get_int("head_dim")) {
    if (*hd <= 0) f.fail("head_dim", "must be positive");
    c.head_dim = *hd;
  } else {
    if (c.hidden_size % c.num_heads != 0)
      f.fail("num_attention_heads", "hidden_size (" + std::to_string(c.hidden_size) +
                                        ") is not a multiple of num_attention_heads (" +
                                        std::to_string(c.num_heads) + ") and head_dim is absent");
    c.head_dim = c.hidden_size / c.num_heads;
  }
  if (c.head_dim % 2 != 0) f.fail("head_dim", "must be even for rotary embeddings");

  c.max_position_embeddings = f.get_int("max_position_embeddings").value_or(2048);
  if (c.max_position_embeddings <= 0) f.fail("max_position_embeddings", "must be positive");
  c.rms_norm_eps = static_cast<float>(f.get_double("rms_norm_eps").value_or(1e-5));
  if (!(c.rms_norm_eps > 0.0f) || !std::isfinite(c.rms_norm_eps)) f.fail("rms_norm_eps", "must be positive");

  c.tie_word_embeddings = f.get_bool("tie_word_embeddings").value_or(false);
  c.mlp_bias = f.get_bool("mlp_bias").value_or(false);
  if (c.model_type == "qwen2") {
    c.attention_bias = true;  // Qwen2 always has q/k/v biases and no o bias
    c.o_bias = false;
  } else {
    c.attention_bias = f.get_bool("attention_bias").value_or(false);
    c.o_bias = c.attention_bias;
  }
  const bool swa_enabled = c.model_type != "qwen2" || f.get_bool("use_sliding_window").value_or(false);
  if (swa_enabled) c.sliding_window = std::max(0, f.get_int("sliding_window").value_or(0));

  c.rope = format_detail::read_rope(f, c.head_dim, c.max_position_embeddings);
  format_detail::read_family(f, c);

  c.bos_token_id = read_single_id(f, "bos_token_id");
  c.eos_token_ids = read_token_ids(f, "eos_token_id");
  c.pad_token_id = read_single_id(f, "pad_token_id");
  read_quantization(f, c);
  return c;
}

ModelConfig read_model_config(const std::filesystem::path& dir) {
  const auto path = dir / "config.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::io, "config.json is missing", path.string());
  ModelConfig c = parse_model_config(read_text(path), path.string());
  c.dir = dir;

  const auto gen_path = dir / "generation_config.json";
  if (std::filesystem::is_regular_file(gen_path, ec)) {
    const json gen = format_detail::parse_json_config(read_text(gen_path), gen_path.string());
    const Fields gf{gen, gen_path.string(), ""};
    merge_eos(c.eos_token_ids, read_token_ids(gf, "eos_token_id"));
    if (!c.bos_token_id) c.bos_token_id = read_single_id(gf, "bos_token_id");
    if (!c.pad_token_id) c.pad_token_id = read_single_id(gf, "pad_token_id");
  }
  return c;
}

}  // namespace exl
