// Normalizers of tokenizer.json: Sequence, Prepend, Replace (string or regex), Strip, and the
// Unicode forms NFC/NFD/NFKC/NFKD and Lowercase through ICU when the build found it. Others
// (Precompiled with a char map, BertNormalizer, StripAccents, ...) are rejected by name.
#include <memory>

#include "tokenizer/pipeline.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode_norm.h"
#include "tokenizer/utf8.h"

namespace exl::tok {

namespace {

class SequenceNorm : public Normalizer {
 public:
  std::vector<std::unique_ptr<Normalizer>> parts;
  void apply(std::string& t) const override {
    for (const auto& p : parts) p->apply(t);
  }
};

class PrependNorm : public Normalizer {
 public:
  explicit PrependNorm(std::string s) : s_(std::move(s)) {}
  void apply(std::string& t) const override {
    if (!t.empty()) t.insert(0, s_);
  }

 private:
  std::string s_;
};

class ReplaceNorm : public Normalizer {
 public:
  ReplaceNorm(std::unique_ptr<Regex> re, std::string literal, std::string content)
      : re_(std::move(re)), literal_(std::move(literal)), content_(std::move(content)) {}
  void apply(std::string& t) const override {
    std::string out;
    std::size_t prev = 0;
    if (re_) {
      for (auto [b, e] : re_->find_all(t)) {
        out.append(t, prev, b - prev);
        out += content_;
        prev = e;
      }
    } else if (!literal_.empty()) {
      for (std::size_t p = t.find(literal_); p != std::string::npos; p = t.find(literal_, prev)) {
        out.append(t, prev, p - prev);
        out += content_;
        prev = p + literal_.size();
      }
    }
    if (prev == 0) return;
    out.append(t, prev);
    t.swap(out);
  }

 private:
  std::unique_ptr<Regex> re_;
  std::string literal_, content_;
};

bool is_unicode_space(std::uint32_t cp) {
  return (cp >= 9 && cp <= 13) || cp == 32 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

class StripNorm : public Normalizer {
 public:
  StripNorm(bool l, bool r) : l_(l), r_(r) {}
  void apply(std::string& t) const override {
    std::size_t b = 0, e = t.size();
    if (l_) {
      while (b < e) {
        std::size_t n = 0;
        if (!is_unicode_space(utf8_decode(t, b, n))) break;
        b += n;
      }
    }
    if (r_) {
      while (e > b) {
        std::size_t s = e - 1;
        while (s > b && (static_cast<unsigned char>(t[s]) & 0xC0) == 0x80) --s;
        std::size_t n = 0;
        if (!is_unicode_space(utf8_decode(t, s, n))) break;
        e = s;
      }
    }
    t = t.substr(b, e - b);
  }

 private:
  bool l_, r_;
};

class UnicodeNorm : public Normalizer {
 public:
  explicit UnicodeNorm(UnicodeForm f) : f_(f) {}
  void apply(std::string& t) const override { t = unicode_normalize(t, f_); }

 private:
  UnicodeForm f_;
};

}  // namespace

std::unique_ptr<Normalizer> parse_normalizer(const JsonCtx& c, const json& j, const std::string& path) {
  if (j.is_null()) return nullptr;
  const std::string type = as_string(c, required(c, j, "type", path), path + ".type");
  if (type == "Sequence") {
    auto seq = std::make_unique<SequenceNorm>();
    const json& arr = as_array(c, required(c, j, "normalizers", path), path + ".normalizers");
    for (std::size_t i = 0; i < arr.size(); ++i)
      if (auto n = parse_normalizer(c, arr[i], idx_path(path + ".normalizers", i))) seq->parts.push_back(std::move(n));
    return seq;
  }
  if (type == "Prepend")
    return std::make_unique<PrependNorm>(as_string(c, required(c, j, "prepend", path), path + ".prepend"));
  if (type == "Replace") {
    const json& pat = want_object(c, required(c, j, "pattern", path), path + ".pattern");
    std::string content = as_string(c, required(c, j, "content", path), path + ".content");
    if (const json* s = member(c, pat, "String", path + ".pattern"))
      return std::make_unique<ReplaceNorm>(nullptr, as_string(c, *s, path + ".pattern.String"), content);
    if (const json* r = member(c, pat, "Regex", path + ".pattern"))
      return std::make_unique<ReplaceNorm>(
          std::make_unique<Regex>(as_string(c, *r, path + ".pattern.Regex"), c.file, path + ".pattern.Regex"), "",
          content);
    c.fail(path + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
  }
  if (type == "Strip")
    return std::make_unique<StripNorm>(opt_bool(c, j, "strip_left", path, false),
                                       opt_bool(c, j, "strip_right", path, false));
  UnicodeForm form{};
  if (type == "NFC") form = UnicodeForm::nfc;
  else if (type == "NFD") form = UnicodeForm::nfd;
  else if (type == "NFKC") form = UnicodeForm::nfkc;
  else if (type == "NFKD") form = UnicodeForm::nfkd;
  else if (type == "Lowercase") form = UnicodeForm::lowercase;
  else c.fail(path + ".type", "unsupported normalizer type '" + type + "'");
  if (!unicode_form_supported(form))
    c.fail(path + ".type", "normalizer '" + type + "' needs Unicode tables this build lacks (ICU)");
  return std::make_unique<UnicodeNorm>(form);
}

}  // namespace exl::tok
