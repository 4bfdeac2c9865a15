// Decoders of tokenizer.json (HF decode_chain semantics): ByteLevel (byte alphabet back to bytes,
// invalid UTF-8 as U+FFFD), Metaspace, ByteFallback (<0xNN> runs), Fuse, Strip, Replace,
// BPEDecoder and Sequence.
#include "tokenizer/byte_level.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/regex.h"
#include "tokenizer/utf8.h"

namespace exl::tok {

namespace {

class ByteLevelDec : public Decoder {
 public:
  void apply(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& t : tokens) {
      const std::size_t mark = bytes.size();
      bool ok = true;
      for (std::size_t i = 0; i < t.size() && ok;) {
        std::size_t n = 0;
        int b = unicode_to_byte(utf8_decode(t, i, n));
        if (b < 0) ok = false;
        else bytes += static_cast<char>(b);
        i += n;
      }
      if (!ok) {  // not byte-level text (e.g. an added token): keep it as it is
        bytes.resize(mark);
        bytes += t;
      }
    }
    tokens.assign(1, utf8_lossy(bytes));
  }
};

class MetaspaceDec : public Decoder {
 public:
  MetaspaceDec(std::string rep, bool strip_first) : rep_(std::move(rep)), strip_first_(strip_first) {}
  void apply(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& t = tokens[i];
      for (std::size_t p = 0; p < t.size();) {
        if (t.compare(p, rep_.size(), rep_) == 0) {
          if (!(i == 0 && strip_first_)) out += ' ';
          p += rep_.size();
        } else {
          out += t[p++];
        }
      }
      tokens[i].swap(out);
    }
  }

 private:
  std::string rep_;
  bool strip_first_;
};

int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

class ByteFallbackDec : public Decoder {
 public:
  void apply(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    std::size_t count = 0;
    auto flush = [&] {
      if (count == 0) return;
      if (utf8_is_valid(bytes)) out.push_back(bytes);
      else
        for (std::size_t k = 0; k < count; ++k) out.emplace_back(kReplacementChar);
      bytes.clear();
      count = 0;
    };
    for (auto& t : tokens) {
      int v = -1;
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
        // Rust's u8::from_str_radix accepts a leading '+'.
        int hi = t[3] == '+' ? 0 : hex_digit(t[3]), lo = hex_digit(t[4]);
        if (hi >= 0 && lo >= 0) v = hi * 16 + lo;
      }
      if (v >= 0) {
        bytes += static_cast<char>(v);
        ++count;
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens.swap(out);
  }
};

class FuseDec : public Decoder {
 public:
  void apply(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

class StripDec : public Decoder {
 public:
  StripDec(std::string content, std::size_t start, std::size_t stop) : c_(std::move(content)), start_(start), stop_(stop) {}
  void apply(std::vector<std::string>& tokens) const override {
    if (c_.empty()) return;
    for (auto& t : tokens) {
      std::size_t b = 0, e = t.size();
      for (std::size_t k = 0; k < start_ && b + c_.size() <= e && t.compare(b, c_.size(), c_) == 0; ++k) b += c_.size();
      for (std::size_t k = 0; k < stop_ && e >= b + c_.size() && t.compare(e - c_.size(), c_.size(), c_) == 0; ++k)
        e -= c_.size();
      t = t.substr(b, e - b);
    }
  }

 private:
  std::string c_;
  std::size_t start_, stop_;
};

class ReplaceDec : public Decoder {
 public:
  ReplaceDec(std::unique_ptr<Regex> re, std::string lit, std::string content)
      : re_(std::move(re)), lit_(std::move(lit)), content_(std::move(content)) {}
  void apply(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      std::vector<std::pair<std::size_t, std::size_t>> m;
      if (re_) m = re_->find_all(t);
      else if (!lit_.empty())
        for (std::size_t p = t.find(lit_); p != std::string::npos; p = t.find(lit_, p + lit_.size()))
          m.emplace_back(p, p + lit_.size());
      if (m.empty()) continue;
      std::string out;
      std::size_t prev = 0;
      for (auto [b, e] : m) {
        out.append(t, prev, b - prev);
        out += content_;
        prev = e;
      }
      out.append(t, prev);
      t.swap(out);
    }
  }

 private:
  std::unique_ptr<Regex> re_;
  std::string lit_, content_;
};

class BpeDec : public Decoder {
 public:
  explicit BpeDec(std::string suffix) : suffix_(std::move(suffix)) {}
  void apply(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      const std::string rep = i + 1 == tokens.size() ? "" : " ";
      if (suffix_.empty()) continue;
      std::string out;
      std::size_t prev = 0;
      for (std::size_t p = t.find(suffix_); p != std::string::npos; p = t.find(suffix_, prev)) {
        out.append(t, prev, p - prev);
        out += rep;
        prev = p + suffix_.size();
      }
      out.append(t, prev);
      t.swap(out);
    }
  }

 private:
  std::string suffix_;
};

class SequenceDec : public Decoder {
 public:
  std::vector<std::unique_ptr<Decoder>> parts;
  void apply(std::vector<std::string>& tokens) const override {
    for (const auto& p : parts) p->apply(tokens);
  }
};

}  // namespace

std::unique_ptr<Decoder> parse_decoder(const JsonCtx& c, const json& j, const std::string& path) {
  if (j.is_null()) return nullptr;
  const std::string type = as_string(c, required(c, j, "type", path), path + ".type");
  if (type == "Sequence") {
    auto seq = std::make_unique<SequenceDec>();
    const json& arr = as_array(c, required(c, j, "decoders", path), path + ".decoders");
    for (std::size_t i = 0; i < arr.size(); ++i)
      if (auto d = parse_decoder(c, arr[i], idx_path(path + ".decoders", i))) seq->parts.push_back(std::move(d));
    return seq;
  }
  if (type == "ByteLevel") return std::make_unique<ByteLevelDec>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDec>();
  if (type == "Fuse") return std::make_unique<FuseDec>();
  if (type == "Metaspace") {
    std::string rep = opt_string(c, j, "replacement", path, "\xE2\x96\x81");
    if (rep.empty()) c.fail(path + ".replacement", "must be one character");
    bool strip = opt_bool(c, j, "add_prefix_space", path, true);
    if (const json* s = member(c, j, "prepend_scheme", path)) {
      std::string v = as_string(c, *s, path + ".prepend_scheme");
      if (v != "always" && v != "never" && v != "first") c.fail(path + ".prepend_scheme", "unknown value '" + v + "'");
      strip = v != "never";
    }
    return std::make_unique<MetaspaceDec>(rep, strip);
  }
  if (type == "Strip") {
    std::string content = as_string(c, required(c, j, "content", path), path + ".content");
    auto start = static_cast<std::size_t>(as_int(c, required(c, j, "start", path), path + ".start", 0, 1 << 20));
    auto stop = static_cast<std::size_t>(as_int(c, required(c, j, "stop", path), path + ".stop", 0, 1 << 20));
    return std::make_unique<StripDec>(content, start, stop);
  }
  if (type == "Replace") {
    const json& pat = want_object(c, required(c, j, "pattern", path), path + ".pattern");
    std::string content = as_string(c, required(c, j, "content", path), path + ".content");
    if (const json* s = member(c, pat, "String", path + ".pattern"))
      return std::make_unique<ReplaceDec>(nullptr, as_string(c, *s, path + ".pattern.String"), content);
    if (const json* r = member(c, pat, "Regex", path + ".pattern"))
      return std::make_unique<ReplaceDec>(
          std::make_unique<Regex>(as_string(c, *r, path + ".pattern.Regex"), c.file, path + ".pattern.Regex"), "",
          content);
    c.fail(path + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
  }
  if (type == "BPEDecoder") return std::make_unique<BpeDec>(opt_string(c, j, "suffix", path, "</w>"));
  c.fail(path + ".type", "unsupported decoder type '" + type + "'");
}

}  // namespace exl::tok
