// The text files of a synthetic model: config.json (the preset's fields, quantization_config as
// the converter writes it, plus an "exl_synth" note), a byte-level BPE tokenizer.json padded to
// the vocabulary with merges that build short lowercase words, and tokenizer_config.json with a
// ChatML chat template (so /v1/chat/completions works).
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "exl/error.h"
#include "exl/synth.h"
#include "tokenizer/byte_level.h"

namespace exl::synth {
namespace {

using ojson = nlohmann::ordered_json;
constexpr int kSpecials = 5;
const char* const kSpecialNames[kSpecials] = {"<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>",
                                              "<|pad|>"};

// What the family description needs beyond the Llama fields (config_family.cpp reads them back).
void write_family_fields(const ModelConfig& c, ojson& j) {
  const FamilyDescription& f = c.family;
  bool any_window = false;
  ojson types = ojson::array();
  for (const LayerAttention& a : c.layer_attention) {
    any_window = any_window || a.window > 0;
    types.push_back(a.window > 0 ? "sliding_attention" : "full_attention");
  }
  if (any_window) {
    j["sliding_window"] = c.sliding_window;
    j["layer_types"] = types;
    if (c.model_type == "qwen3") j["use_sliding_window"] = true;
  }
  if (f.attention_scale > 0.0f) j["query_pre_attn_scalar"] = double(1.0f / (f.attention_scale * f.attention_scale));
  if (c.model_type == "gemma2" || c.model_type == "gemma3_text" || c.model_type == "gemma3") {
    j["attn_logit_softcapping"] = f.attn_logit_softcap > 0.0f ? ojson(double(f.attn_logit_softcap)) : ojson(nullptr);
    j["final_logit_softcapping"] = f.final_logit_softcap > 0.0f ? ojson(double(f.final_logit_softcap)) : ojson(nullptr);
    j["rope_local_base_freq"] = double(c.rope_local.theta);
  }
  if (c.moe.active()) {
    const MoeDescription& m = c.moe;
    j[c.model_type == "mixtral" ? "num_local_experts" : "num_experts"] = m.num_experts;
    j["num_experts_per_tok"] = m.top_k;
    if (c.model_type != "mixtral") {
      j["moe_intermediate_size"] = m.expert_intermediate;
      j["norm_topk_prob"] = m.norm_topk_prob;
      j["decoder_sparse_step"] = 1;
      ojson dense = ojson::array();
      for (int i = 0; i < c.num_layers; ++i)
        if (!m.is_sparse(i)) dense.push_back(i);
      j["mlp_only_layers"] = dense;
    }
  }
  if (c.rope.scaling == RopeScaling::linear) j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", double(c.rope.factor)}};
  if (c.rope.rotary_dim > 0) j["partial_rotary_factor"] = double(c.rope.rotary_dim) / double(c.head_dim);
  if (c.rope.scaling == RopeScaling::longrope) {
    j["original_max_position_embeddings"] = c.rope.original_max_position;
    j["rope_scaling"] = {{"type", "longrope"}, {"short_factor", c.rope.longrope_short}, {"long_factor", c.rope.longrope_long}};
  }
}

}  // namespace

int synth_bos_id(int vocab) { return vocab - kSpecials; }
int synth_eos_id(int vocab) { return vocab - kSpecials + 1; }

std::string synth_config_json(const ModelConfig& c, double bpw, int head_bits, std::uint64_t seed,
                              const std::string& preset, bool fp16, SynthFormat format) {
  ojson j;
  j["architectures"] = ojson::array({c.architecture});
  j["model_type"] = c.model_type;
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.hidden_size;
  j["intermediate_size"] = c.intermediate_size;
  j["num_hidden_layers"] = c.num_layers;
  j["num_attention_heads"] = c.num_heads;
  j["num_key_value_heads"] = c.num_kv_heads;
  j["head_dim"] = c.head_dim;
  if (c.family.activation == Activation::gelu_tanh) j["hidden_activation"] = "gelu_pytorch_tanh";
  else j["hidden_act"] = "silu";
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["rms_norm_eps"] = double(c.rms_norm_eps);
  j["rope_theta"] = double(c.rope.theta);
  if (c.rope.scaling == RopeScaling::llama3) {
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", double(c.rope.factor)},
                         {"low_freq_factor", double(c.rope.low_freq_factor)},
                         {"high_freq_factor", double(c.rope.high_freq_factor)},
                         {"original_max_position_embeddings", c.rope.original_max_position}};
  }
  write_family_fields(c, j);
  if (c.model_type != "qwen2") j["attention_bias"] = c.attention_bias;
  j["mlp_bias"] = c.mlp_bias;
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  j["bos_token_id"] = synth_bos_id(c.vocab_size);
  j["eos_token_id"] = synth_eos_id(c.vocab_size);
  j["pad_token_id"] = c.vocab_size - 1;
  j["torch_dtype"] = "float16";
  if (!fp16 && format == SynthFormat::exl3)
    j["quantization_config"] = {  // as ExLlamaV3's converter writes it (its loader reads none of it)
      {"quant_method", "exl3"},
      {"version", "1.6.5"},
      {"bits", bpw},
      {"head_bits", head_bits},
      {"calibration", {{"rows", 0}, {"cols", 0}}},
      {"out_scales", "auto"},
      {"codebook", "mul1"}};
  else if (!fp16)
    j["quantization_config"] = {
      {"quant_method", "exl2"},
      {"version", "0.2.7"},
      {"bits", bpw},
      {"head_bits", head_bits},
      {"calibration", {{"rows", 0}, {"length", 0}, {"dataset", "(synthetic)"}}}};
  j["exl_synth"] = {{"preset", preset}, {"seed", seed}, {"note", "random weights: benchmarks only, the text is noise"}};
  return j.dump(4);
}

std::string synth_tokenizer_json(int vocab) {
  if (vocab < 256 + kSpecials)
    throw Error(ErrorKind::invalid_argument, "a byte-level vocabulary needs at least " +
                                                 std::to_string(256 + kSpecials) + " entries");
  const int regular = vocab - kSpecials;
  ojson v = ojson::object();
  std::vector<std::string> tokens;
  tokens.reserve(std::size_t(regular));
  for (int b = 0; b < 256; ++b) tokens.push_back(tok::byte_to_unicode(static_cast<unsigned char>(b)));
  // Words: a first symbol ("Ġ" = space, or a letter) then lowercase letters, shortest first;
  // each is the merge of its prefix and its last letter.
  const std::string space = tok::byte_to_unicode(' ');
  std::vector<std::string> firsts{space};
  for (char ch = 'a'; ch <= 'z'; ++ch) firsts.emplace_back(1, ch);
  std::vector<std::string> level = firsts;
  ojson merges = ojson::array();
  while (int(tokens.size()) < regular) {
    std::vector<std::string> next;
    for (const std::string& prefix : level) {
      for (char ch = 'a'; ch <= 'z' && int(tokens.size()) < regular; ++ch) {
        std::string w = prefix + ch;
        merges.push_back(prefix + " " + std::string(1, ch));
        tokens.push_back(w);
        next.push_back(std::move(w));
      }
      if (int(tokens.size()) >= regular) break;
    }
    level = std::move(next);
  }
  for (int i = 0; i < regular; ++i) v[tokens[std::size_t(i)]] = i;

  ojson added = ojson::array();
  for (int i = 0; i < kSpecials; ++i)
    added.push_back({{"id", regular + i},
                     {"content", kSpecialNames[i]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  const std::string bos = kSpecialNames[0];
  ojson t;
  t["version"] = "1.0";
  t["truncation"] = nullptr;
  t["padding"] = nullptr;
  t["added_tokens"] = added;
  t["normalizer"] = nullptr;
  t["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       ojson::array({{{"type", "Split"},
                      {"pattern",
                       {{"Regex", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                                  "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
                      {"behavior", "Isolated"},
                      {"invert", false}},
                     {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}})}};
  t["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", ojson::array({{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
      {"pair", ojson::array({{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
                             {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                             {{"SpecialToken", {{"id", bos}, {"type_id", 1}}}},
                             {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}})},
      {"special_tokens", {{bos, {{"id", bos}, {"ids", {regular}}, {"tokens", {bos}}}}}}};
  t["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
  t["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", false},
                {"vocab", v},
                {"merges", merges}};
  return t.dump();
}

std::string synth_tokenizer_config_json(int max_position_embeddings) {
  ojson j;
  j["backend"] = "tokenizers";
  j["bos_token"] = kSpecialNames[0];
  j["eos_token"] = kSpecialNames[1];
  j["pad_token"] = kSpecialNames[4];
  j["clean_up_tokenization_spaces"] = false;
  j["model_max_length"] = max_position_embeddings;
  j["tokenizer_class"] = "PreTrainedTokenizerFast";
  j["chat_template"] =
      "{{ bos_token }}{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
      "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  return j.dump(2);
}

}  // namespace exl::synth
