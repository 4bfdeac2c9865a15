// Loading: tokenizer.json into HfTokenizer, and the control ids, add-BOS default and chat
// template from tokenizer_config.json, config.json and generation_config.json (spec §10.3).
#include <fstream>
#include <sstream>

#include "tokenizer/hf_tokenizer.h"

namespace exl {

namespace tok {

HfTokenizer::HfTokenizer(const JsonCtx& c, const json& root) {
  if (!root.is_object()) c.fail("", "top level must be a JSON object");
  const json& model = required(c, root, "model", "");
  if (const json* type = member(c, model, "type", "model")) {
    std::string t = as_string(c, *type, "model.type");
    if (t != "BPE") c.fail("model.type", "unsupported tokenizer model '" + t + "' (only BPE is supported)");
  } else if (!member(c, model, "merges", "model")) {
    c.fail("model.type", "missing field (and no merges: not a BPE model)");
  }
  model_ = std::make_unique<BpeModel>(c, model);
  if (const json* n = member(c, root, "normalizer", "")) normalizer_ = parse_normalizer(c, *n, "normalizer");
  if (const json* p = member(c, root, "pre_tokenizer", "")) pre_tokenizer_ = parse_pre_tokenizer(c, *p, "pre_tokenizer");
  if (const json* d = member(c, root, "decoder", "")) decoder_ = parse_decoder(c, *d, "decoder");
  parse_added_tokens(c, root);
  if (const json* pp = member(c, root, "post_processor", "")) parse_post_processor(c, *pp, "post_processor");
}

void HfTokenizer::parse_added_tokens(const JsonCtx& c, const json& root) {
  vocab_size_ = model_->size();
  const json* arr = member(c, root, "added_tokens", "");
  if (!arr) return;
  as_array(c, *arr, "added_tokens");
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const std::string p = idx_path("added_tokens", i);
    const json& j = want_object(c, (*arr)[i], p);
    auto t = std::make_unique<AddedToken>();
    // pattern is set once all entries are read; until then it mirrors content.
    t->id = static_cast<std::int32_t>(as_int(c, required(c, j, "id", p), p + ".id", 0, (1 << 24) - 1));
    t->content = as_string(c, required(c, j, "content", p), p + ".content");
    if (t->content.empty()) c.fail(p + ".content", "empty added token");
    t->special = opt_bool(c, j, "special", p, false);
    t->lstrip = opt_bool(c, j, "lstrip", p, false);
    t->rstrip = opt_bool(c, j, "rstrip", p, false);
    t->single_word = opt_bool(c, j, "single_word", p, false);
    t->normalized = opt_bool(c, j, "normalized", p, !t->special);
    t->pattern = t->content;
    vocab_size_ = std::max(vocab_size_, t->id + 1);
    added_by_id_[t->id] = t.get();
    added_by_content_[t->content] = t->id;
    added_.push_back(std::move(t));
  }
  for (const auto& t : added_) {
    // A later entry with the same content or id replaces an earlier one.
    if (added_by_id_[t->id] != t.get() || added_by_content_[t->content] != t->id) continue;
    t->pattern = t->content;
    if (t->normalized && normalizer_) {
      // HF matches a normalized added token by its normalized form (Llama-2's Prepend turns
      // "<x>" into "▁<x>").
      normalizer_->apply(t->pattern);
      normalized_matcher_.add(t.get());
    } else {
      raw_matcher_.add(t.get());
    }
  }
  raw_matcher_.finish();
  normalized_matcher_.finish();
}

void HfTokenizer::parse_post_processor(const JsonCtx& c, const json& j, const std::string& path) {
  const std::string type = as_string(c, required(c, j, "type", path), path + ".type");
  if (type == "Sequence") {
    const json& arr = as_array(c, required(c, j, "processors", path), path + ".processors");
    for (std::size_t i = 0; i < arr.size(); ++i) parse_post_processor(c, arr[i], idx_path(path + ".processors", i));
  } else if (type == "TemplateProcessing") {
    const json* single = member(c, j, "single", path);
    if (!single) return;
    as_array(c, *single, path + ".single");
    const json* specials = member(c, j, "special_tokens", path);
    template_prefix_.clear();
    for (std::size_t i = 0; i < single->size(); ++i) {
      const std::string ip = idx_path(path + ".single", i);
      const json& item = want_object(c, (*single)[i], ip);
      if (member(c, item, "Sequence", ip)) break;
      const json* st = member(c, item, "SpecialToken", ip);
      if (!st) c.fail(ip, "expected SpecialToken or Sequence");
      std::string name = as_string(c, required(c, *st, "id", ip + ".SpecialToken"), ip + ".SpecialToken.id");
      const json* entry = specials ? member(c, *specials, name.c_str(), path + ".special_tokens") : nullptr;
      if (!entry) c.fail(path + ".special_tokens", "no entry for template token '" + name + "'");
      const std::string ep = path + ".special_tokens." + name;
      const json& ids = as_array(c, required(c, *entry, "ids", ep), ep + ".ids");
      for (std::size_t k = 0; k < ids.size(); ++k)
        template_prefix_.push_back(static_cast<std::int32_t>(as_int(c, ids[k], idx_path(ep + ".ids", k), 0, (1 << 30))));
    }
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    const json& cls = as_array(c, required(c, j, "cls", path), path + ".cls");
    if (cls.size() == 2) template_prefix_ = {static_cast<std::int32_t>(as_int(c, cls[1], path + ".cls[1]", 0, 1 << 30))};
  }
  // ByteLevel and other processors do not add tokens at the start.
}

}  // namespace tok

namespace {

using tok::json;

json parse_json(std::string_view text, const std::string& file, ErrorKind kind) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw Error(kind, std::string("malformed JSON: ") + e.what(), file);
  }
}

// An id field: int, or a list of ints (all taken), or null. Appends to out.
void read_ids(const json& obj, const char* key, const std::string& file, std::vector<std::int32_t>& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return;
  auto one = [&](const json& v) {
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= (1LL << 31))
      throw Error(ErrorKind::config, "expected a non-negative integer id or a list of them", file, key);
    out.push_back(static_cast<std::int32_t>(v.get<long long>()));
  };
  if (it->is_array()) for (const auto& v : *it) one(v);
  else one(*it);
}

// tokenizer_config.json token field: "text" or {"content": "text"}; looked up as a piece.
std::optional<std::int32_t> token_field(const tok::HfTokenizer& t, const json& obj, const char* key,
                                        const std::string& file) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  std::string text;
  if (it->is_string()) text = it->get<std::string>();
  else if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) text = (*it)["content"].get<std::string>();
  else throw Error(ErrorKind::config, "expected a string or an object with \"content\"", file, key);
  if (text.empty()) return std::nullopt;
  return t.piece_to_id(text);
}

tok::ControlIds control_ids(const tok::HfTokenizer& t, const json& tc, const json& cfg, const json& gen) {
  const std::string tcf = "tokenizer_config.json", cf = "config.json", gf = "generation_config.json";
  tok::ControlIds ids;
  auto in_vocab = [&](std::int32_t id) { return id >= 0 && id < t.vocab_size(); };
  std::vector<std::int32_t> v;
  read_ids(cfg, "bos_token_id", cf, v);
  if (!v.empty()) ids.bos = v.front();
  else if (auto b = token_field(t, tc, "bos_token", tcf)) ids.bos = b;
  else if (in_vocab(1)) ids.bos = 1;  // ExLlamaV2's default

  read_ids(cfg, "eos_token_id", cf, ids.eos);
  if (ids.eos.empty())
    if (auto e = token_field(t, tc, "eos_token", tcf)) ids.eos.push_back(*e);
  if (ids.eos.empty() && in_vocab(2)) ids.eos.push_back(2);
  read_ids(gen, "eos_token_id", gf, ids.eos);
  if (auto e = token_field(t, tc, "eos_token", tcf)) ids.eos.push_back(*e);
  std::vector<std::int32_t> unique;
  for (auto id : ids.eos)
    if (std::find(unique.begin(), unique.end(), id) == unique.end()) unique.push_back(id);
  ids.eos = std::move(unique);

  v.clear();
  read_ids(cfg, "pad_token_id", cf, v);
  if (!v.empty()) ids.pad = v.front();
  else if (auto p = token_field(t, tc, "pad_token", tcf)) ids.pad = p;
  else if (auto p2 = t.piece_to_id("<pad>"); p2 && *p2 != 0) ids.pad = p2;
  else if (!ids.eos.empty() && (!ids.bos || ids.eos.front() != *ids.bos)) ids.pad = ids.eos.front();

  if (auto it = tc.find("add_bos_token"); it != tc.end() && !it->is_null()) {
    if (!it->is_boolean()) throw Error(ErrorKind::config, "expected a boolean", tcf, "add_bos_token");
    ids.add_bos = it->get<bool>();
  } else {
    ids.add_bos = !t.template_prefix().empty() && ids.bos && t.template_prefix().front() == *ids.bos;
  }

  if (auto it = tc.find("chat_template"); it != tc.end() && !it->is_null()) {
    if (it->is_string()) {
      ids.chat_template = it->get<std::string>();
    } else if (it->is_array()) {
      for (const auto& e : *it)
        if (e.is_object() && e.value("name", "") == "default" && e.contains("template") && e["template"].is_string())
          ids.chat_template = e["template"].get<std::string>();
    } else {
      throw Error(ErrorKind::config, "expected a string or a list of {name, template}", tcf, "chat_template");
    }
  }
  return ids;
}

json optional_json(std::string_view text, const std::string& file) {
  if (text.empty()) return json::object();
  json j = parse_json(text, file, ErrorKind::config);
  if (!j.is_object()) throw Error(ErrorKind::config, "top level must be a JSON object", file);
  return j;
}

std::string read_file(const std::filesystem::path& p, bool required) {
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) {
    if (required) throw Error(ErrorKind::io, "file not found", p.string());
    return {};
  }
  std::ifstream f(p, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, "cannot open file", p.string());
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) throw Error(ErrorKind::io, "read failed", p.string());
  return s.str();
}

}  // namespace

std::shared_ptr<const Tokenizer> Tokenizer::from_json(std::string_view tokenizer_json,
                                                      std::string_view tokenizer_config_json,
                                                      std::string_view config_json,
                                                      std::string_view generation_config_json,
                                                      const std::string& display_name) {
  tok::JsonCtx c{display_name};
  json root = parse_json(tokenizer_json, display_name, ErrorKind::tokenizer);
  std::shared_ptr<tok::HfTokenizer> t;
  try {
    t = std::make_shared<tok::HfTokenizer>(c, root);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::tokenizer, std::string("unexpected JSON content: ") + e.what(), display_name);
  }
  try {
    t->set_controls(control_ids(*t, optional_json(tokenizer_config_json, "tokenizer_config.json"),
                                optional_json(config_json, "config.json"),
                                optional_json(generation_config_json, "generation_config.json")));
  } catch (const json::exception& e) {
    throw Error(ErrorKind::config, std::string("unexpected JSON content: ") + e.what(), "config files");
  }
  return t;
}

std::shared_ptr<const Tokenizer> Tokenizer::from_dir(const std::filesystem::path& dir) {
  const auto tj = dir / "tokenizer.json";
  std::string text = read_file(tj, true);
  return from_json(text, read_file(dir / "tokenizer_config.json", false), read_file(dir / "config.json", false),
                   read_file(dir / "generation_config.json", false), tj.string());
}

}  // namespace exl
