// HF tokenizer.json / tokenizer_config.json rebuilt from GGUF tokenizer metadata: `gpt2` byte-level
// BPE (tokens + merges, pre-tokenizer chosen from tokenizer.ggml.pre) and `llama` SentencePiece
// BPE (tokens + scores, merges derived as transformers' SentencePieceExtractor does, byte fallback).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "exl/error.h"
#include "gguf_internal.h"

namespace exl {
namespace {

using json = nlohmann::ordered_json;

// token_type values of llama.cpp
constexpr int kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kByte = 6;

const char* kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

json byte_level(bool use_regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", use_regex}};
}
json split(const char* regex) {
  return {{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}};
}

json gpt2_pre_tokenizer(const std::string& pre) {
  if (pre == "smollm" || pre == "starcoder" || pre == "refact")
    return {{"type", "Sequence"},
            {"pretokenizers", json::array({{{"type", "Digits"}, {"individual_digits", true}}, byte_level(true)})}};
  if (pre == "llama-bpe" || pre == "llama3" || pre == "smaug-bpe")
    return {{"type", "Sequence"}, {"pretokenizers", json::array({split(kLlama3Regex), byte_level(false)})}};
  if (pre == "qwen2" || pre == "deepseek-r1-qwen")
    return {{"type", "Sequence"}, {"pretokenizers", json::array({split(kQwen2Regex), byte_level(false)})}};
  return byte_level(true);  // gpt-2, default
}

std::size_t utf8_len(unsigned char c) { return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1; }

// transformers' SentencePieceExtractor: every split of a piece into two vocabulary pieces is a
// merge, ordered by the merged piece's score (descending, stable), ties by the parts' ids.
json spm_merges(const std::vector<std::string>& tokens, const std::vector<double>& scores) {
  std::unordered_map<std::string, std::size_t> ids;
  for (std::size_t i = 0; i < tokens.size(); ++i) ids.emplace(tokens[i], i);
  struct M { double score; std::size_t order; std::size_t l, r; };
  std::vector<M> merges;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const std::string& s = tokens[t];
    std::vector<M> local;
    for (std::size_t i = utf8_len(s[0]); i < s.size(); i += utf8_len(static_cast<unsigned char>(s[i]))) {
      auto l = ids.find(s.substr(0, i)), r = ids.find(s.substr(i));
      if (l != ids.end() && r != ids.end()) local.push_back({t < scores.size() ? scores[t] : 0.0, 0, l->second, r->second});
    }
    std::sort(local.begin(), local.end(), [](const M& a, const M& b) { return a.l != b.l ? a.l < b.l : a.r < b.r; });
    for (auto& m : local) {
      m.order = merges.size();
      merges.push_back(m);
    }
  }
  std::stable_sort(merges.begin(), merges.end(), [](const M& a, const M& b) { return a.score > b.score; });
  json out = json::array();
  for (auto& m : merges) out.push_back(json::array({tokens[m.l], tokens[m.r]}));
  return out;
}

}  // namespace

GgufSpecialIds gguf_special_ids(const GgufFile& f) {
  GgufSpecialIds s;
  s.bos = f.get_int("tokenizer.ggml.bos_token_id");
  s.eos = f.get_int("tokenizer.ggml.eos_token_id");
  s.eot = f.get_int("tokenizer.ggml.eot_token_id");
  s.pad = f.get_int("tokenizer.ggml.padding_token_id");
  s.unk = f.get_int("tokenizer.ggml.unknown_token_id");
  return s;
}

void gguf_build_tokenizer(const GgufFile& f, std::string& tokenizer_json, std::string& tokenizer_config_json) {
  const std::string& file = f.display_name();
  const auto model = f.get_string("tokenizer.ggml.model");
  if (!model) throw Error(ErrorKind::format, file + ": metadata 'tokenizer.ggml.model' is missing", file, "tokenizer.ggml.model");
  const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  if (tokens.empty()) throw Error(ErrorKind::format, file + ": metadata 'tokenizer.ggml.tokens' is missing or empty", file, "tokenizer.ggml.tokens");
  const auto types = f.get_number_array("tokenizer.ggml.token_type");
  if (!types.empty() && types.size() != tokens.size())
    throw Error(ErrorKind::format, file + ": token_type has " + std::to_string(types.size()) + " entries for " +
                                       std::to_string(tokens.size()) + " tokens", file, "tokenizer.ggml.token_type");
  const auto ids = gguf_special_ids(f);
  auto check_id = [&](const std::optional<std::int64_t>& id, const char* key) {
    if (id && (*id < 0 || *id >= std::int64_t(tokens.size())))
      throw Error(ErrorKind::format, file + ": token id " + std::to_string(*id) + " is out of the vocabulary", file, key);
  };
  check_id(ids.bos, "tokenizer.ggml.bos_token_id");
  check_id(ids.eos, "tokenizer.ggml.eos_token_id");
  check_id(ids.eot, "tokenizer.ggml.eot_token_id");
  check_id(ids.pad, "tokenizer.ggml.padding_token_id");
  check_id(ids.unk, "tokenizer.ggml.unknown_token_id");

  json tj;
  tj["version"] = "1.0";
  tj["truncation"] = nullptr;
  tj["padding"] = nullptr;
  json added = json::array();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const int type = types.empty() ? kNormal : int(types[i]);
    if (type == kControl || type == kUserDefined || (type == kUnknown && *model == "gpt2"))
      added.push_back({{"id", i}, {"content", tokens[i]}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                       {"normalized", type == kUserDefined && *model != "gpt2"}, {"special", type != kUserDefined}});
  }
  tj["added_tokens"] = added;
  json vocab = json::object();
  for (std::size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = i;

  if (*model == "gpt2") {
    const auto merges = f.get_string_array("tokenizer.ggml.merges");
    const std::string pre = f.get_string("tokenizer.ggml.pre").value_or("default");
    tj["normalizer"] = nullptr;
    tj["pre_tokenizer"] = gpt2_pre_tokenizer(pre);
    tj["post_processor"] = nullptr;
    tj["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
    tj["model"] = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
                   {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
                   {"ignore_merges", pre == "llama-bpe" || pre == "llama3"}, {"vocab", vocab}, {"merges", merges}};
  } else if (*model == "llama") {
    const auto scores = f.get_number_array("tokenizer.ggml.scores");
    const bool prefix = f.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
    json norms = json::array();
    if (prefix) norms.push_back({{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}});
    norms.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}});
    tj["normalizer"] = {{"type", "Sequence"}, {"normalizers", norms}};
    tj["pre_tokenizer"] = nullptr;
    tj["post_processor"] = nullptr;
    json decs = json::array({{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
                             {{"type", "ByteFallback"}}, {{"type", "Fuse"}}});
    if (prefix) decs.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
    tj["decoder"] = {{"type", "Sequence"}, {"decoders", decs}};
    bool has_bytes = false;
    for (double t : types) has_bytes |= int(t) == kByte;
    tj["model"] = {{"type", "BPE"}, {"dropout", nullptr},
                   {"unk_token", ids.unk ? json(tokens[std::size_t(*ids.unk)]) : json(nullptr)},
                   {"continuing_subword_prefix", nullptr}, {"end_of_word_suffix", nullptr}, {"fuse_unk", true},
                   {"byte_fallback", has_bytes}, {"ignore_merges", false}, {"vocab", vocab},
                   {"merges", spm_merges(tokens, scores)}};
  } else {
    throw Error(ErrorKind::unsupported, file + ": tokenizer model '" + *model + "' is not supported (gpt2 and llama are)",
                file, "tokenizer.ggml.model");
  }
  tokenizer_json = tj.dump();

  json tc;
  tc["tokenizer_class"] = "PreTrainedTokenizerFast";
  tc["add_bos_token"] = f.get_bool("tokenizer.ggml.add_bos_token").value_or(*model == "llama");
  tc["add_eos_token"] = f.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
  if (ids.bos) tc["bos_token"] = tokens[std::size_t(*ids.bos)];
  if (ids.eos) tc["eos_token"] = tokens[std::size_t(*ids.eos)];
  if (ids.unk) tc["unk_token"] = tokens[std::size_t(*ids.unk)];
  if (ids.pad) tc["pad_token"] = tokens[std::size_t(*ids.pad)];
  if (auto ctx = f.get_int(f.get_string("general.architecture").value_or("") + ".context_length")) tc["model_max_length"] = *ctx;
  if (auto tmpl = f.get_string("tokenizer.chat_template")) tc["chat_template"] = *tmpl;
  tokenizer_config_json = tc.dump(2);
}

}  // namespace exl
