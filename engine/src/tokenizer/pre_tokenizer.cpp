// Pre-tokenizers of tokenizer.json: Split (regex or literal, all five behaviours, invert),
// ByteLevel (prefix space, GPT-2 regex, byte-to-unicode mapping), Metaspace, Digits, Punctuation,
// Whitespace, WhitespaceSplit, BertPreTokenizer and Sequence. Semantics follow HF `tokenizers`.
#include <algorithm>
#include <optional>

#include "tokenizer/byte_level.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/regex.h"

namespace exl::tok {

namespace {

const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// A regex or a literal string to split on.
class Matcher {
 public:
  Matcher(std::unique_ptr<Regex> re) : re_(std::move(re)) {}
  Matcher(std::string literal) : literal_(std::move(literal)) {}
  std::vector<Segment> segments(const std::string& text, bool invert) const {
    std::vector<std::pair<std::size_t, std::size_t>> m;
    if (re_) {
      m = re_->find_all(text);
    } else if (!literal_.empty()) {
      for (std::size_t p = text.find(literal_); p != std::string::npos; p = text.find(literal_, p + literal_.size()))
        m.emplace_back(p, p + literal_.size());
    }
    std::vector<Segment> segs;
    segs.reserve(m.size() * 2 + 1);
    std::size_t prev = 0;
    for (auto [b, e] : m) {
      if (b > prev) segs.push_back({prev, b, invert});
      segs.push_back({b, e, !invert});
      prev = e;
    }
    if (prev < text.size()) segs.push_back({prev, text.size(), invert});
    return segs;
  }

 private:
  std::unique_ptr<Regex> re_;
  std::string literal_;
};

Matcher parse_pattern(const JsonCtx& c, const json& j, const std::string& path) {
  want_object(c, j, path);
  if (const json* s = member(c, j, "String", path)) return Matcher(as_string(c, *s, path + ".String"));
  if (const json* r = member(c, j, "Regex", path))
    return Matcher(std::make_unique<Regex>(as_string(c, *r, path + ".Regex"), c.file, path + ".Regex"));
  c.fail(path, "expected {\"String\": ...} or {\"Regex\": ...}");
}

SplitBehavior parse_behavior(const JsonCtx& c, const json& obj, const std::string& path, SplitBehavior def) {
  const json* b = member(c, obj, "behavior", path);
  if (!b) return def;
  std::string s = as_string(c, *b, path + ".behavior");
  if (s == "Removed") return SplitBehavior::removed;
  if (s == "Isolated") return SplitBehavior::isolated;
  if (s == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (s == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (s == "Contiguous") return SplitBehavior::contiguous;
  c.fail(path + ".behavior", "unknown split behavior '" + s + "'");
}

class SplitPre : public PreTokenizer {
 public:
  SplitPre(Matcher m, SplitBehavior b, bool invert) : m_(std::move(m)), b_(b), invert_(invert) {}
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    out.reserve(pieces.size());
    for (const auto& p : pieces) split_segments(p, m_.segments(p.text, invert_), b_, out);
    pieces.swap(out);
  }

 private:
  Matcher m_;
  SplitBehavior b_;
  bool invert_;
};

class ByteLevelPre : public PreTokenizer {
 public:
  ByteLevelPre(const JsonCtx& c, bool prefix, bool use_regex, const std::string& path) : prefix_(prefix) {
    if (use_regex) re_ = std::make_unique<Matcher>(std::make_unique<Regex>(kGpt2Pattern, c.file, path));
  }
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> split;
    split.reserve(pieces.size());
    for (auto& p : pieces) {
      if (prefix_ && (p.text.empty() || p.text[0] != ' ')) p.text.insert(0, " ");
      if (re_) split_segments(p, re_->segments(p.text, false), SplitBehavior::isolated, split);
      else if (!p.text.empty()) split.push_back(std::move(p));
    }
    for (auto& p : split) {
      std::string mapped;
      mapped.reserve(p.text.size() * 2);
      bytes_to_byte_level(p.text, mapped);
      p.text.swap(mapped);
    }
    pieces.swap(split);
  }

 private:
  bool prefix_;
  std::unique_ptr<Matcher> re_;
};

enum class PrependScheme { always, never, first };

class MetaspacePre : public PreTokenizer {
 public:
  MetaspacePre(std::string rep, PrependScheme s, bool split) : rep_(std::move(rep)), scheme_(s), split_(split) {}
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    for (auto& p : pieces) {
      if (p.text.empty()) continue;  // HF never prepends to an empty string
      std::string t;
      t.reserve(p.text.size() + rep_.size());
      for (char ch : p.text) ch == ' ' ? void(t += rep_) : void(t += ch);
      const bool has = t.rfind(rep_, 0) == 0;
      if (!has && (scheme_ == PrependScheme::always || (scheme_ == PrependScheme::first && p.at_start)))
        t.insert(0, rep_);
      Piece np{std::move(t), p.at_start};
      if (split_) split_segments(np, Matcher(rep_).segments(np.text, false), SplitBehavior::merged_with_next, out);
      else if (!np.text.empty()) out.push_back(std::move(np));
    }
    pieces.swap(out);
  }

 private:
  std::string rep_;
  PrependScheme scheme_;
  bool split_;
};

class SequencePre : public PreTokenizer {
 public:
  std::vector<std::unique_ptr<PreTokenizer>> parts;
  void apply(std::vector<Piece>& pieces) const override {
    for (const auto& p : parts) p->apply(pieces);
  }
};

std::unique_ptr<PreTokenizer> regex_split(const JsonCtx& c, const std::string& re, SplitBehavior b, bool invert,
                                          const std::string& path) {
  return std::make_unique<SplitPre>(Matcher(std::make_unique<Regex>(re, c.file, path)), b, invert);
}

}  // namespace

void split_segments(const Piece& piece, const std::vector<Segment>& segs, SplitBehavior behavior,
                    std::vector<Piece>& out) {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  ranges.reserve(segs.size());
  bool prev_match = false;
  switch (behavior) {
    case SplitBehavior::removed:
      for (const auto& s : segs)
        if (!s.is_match) ranges.emplace_back(s.begin, s.end);
      break;
    case SplitBehavior::isolated:
      for (const auto& s : segs) ranges.emplace_back(s.begin, s.end);
      break;
    case SplitBehavior::merged_with_previous:
      for (const auto& s : segs) {
        if (s.is_match && !prev_match && !ranges.empty()) ranges.back().second = s.end;
        else ranges.emplace_back(s.begin, s.end);
        prev_match = s.is_match;
      }
      break;
    case SplitBehavior::merged_with_next:
      for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
        if (it->is_match && !prev_match && !ranges.empty()) ranges.back().first = it->begin;
        else ranges.emplace_back(it->begin, it->end);
        prev_match = it->is_match;
      }
      std::reverse(ranges.begin(), ranges.end());
      break;
    case SplitBehavior::contiguous:
      for (std::size_t i = 0; i < segs.size(); ++i) {
        if (i > 0 && segs[i].is_match == prev_match) ranges.back().second = segs[i].end;
        else ranges.emplace_back(segs[i].begin, segs[i].end);
        prev_match = segs[i].is_match;
      }
      break;
  }
  for (auto [b, e] : ranges)
    if (e > b) out.push_back(Piece{piece.text.substr(b, e - b), piece.at_start && b == 0});
}

std::unique_ptr<PreTokenizer> parse_pre_tokenizer(const JsonCtx& c, const json& j, const std::string& path) {
  if (j.is_null()) return nullptr;
  const std::string type = as_string(c, required(c, j, "type", path), path + ".type");
  if (type == "Sequence") {
    auto seq = std::make_unique<SequencePre>();
    const json& arr = as_array(c, required(c, j, "pretokenizers", path), path + ".pretokenizers");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      auto p = parse_pre_tokenizer(c, arr[i], idx_path(path + ".pretokenizers", i));
      if (p) seq->parts.push_back(std::move(p));
    }
    return seq;
  }
  if (type == "Split") {
    Matcher m = parse_pattern(c, required(c, j, "pattern", path), path + ".pattern");
    return std::make_unique<SplitPre>(std::move(m), parse_behavior(c, j, path, SplitBehavior::isolated),
                                      opt_bool(c, j, "invert", path, false));
  }
  if (type == "ByteLevel")
    return std::make_unique<ByteLevelPre>(c, opt_bool(c, j, "add_prefix_space", path, true),
                                          opt_bool(c, j, "use_regex", path, true), path);
  if (type == "Metaspace") {
    std::string rep = opt_string(c, j, "replacement", path, "\xE2\x96\x81");
    if (rep.empty()) c.fail(path + ".replacement", "must be one character");
    PrependScheme scheme = opt_bool(c, j, "add_prefix_space", path, true) ? PrependScheme::always : PrependScheme::never;
    if (const json* s = member(c, j, "prepend_scheme", path)) {
      std::string v = as_string(c, *s, path + ".prepend_scheme");
      if (v == "always") scheme = PrependScheme::always;
      else if (v == "never") scheme = PrependScheme::never;
      else if (v == "first") scheme = PrependScheme::first;
      else c.fail(path + ".prepend_scheme", "unknown prepend_scheme '" + v + "'");
    }
    return std::make_unique<MetaspacePre>(rep, scheme, opt_bool(c, j, "split", path, true));
  }
  if (type == "Digits")
    return regex_split(c, R"(\p{N})",
                       opt_bool(c, j, "individual_digits", path, false) ? SplitBehavior::isolated : SplitBehavior::contiguous,
                       false, path);
  if (type == "Punctuation")
    return regex_split(c, R"([\p{P}\x21-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E])",
                       parse_behavior(c, j, path, SplitBehavior::isolated), false, path);
  if (type == "Whitespace") return regex_split(c, R"(\w+|[^\w\s]+)", SplitBehavior::removed, true, path);
  if (type == "WhitespaceSplit") return regex_split(c, R"(\s)", SplitBehavior::removed, false, path);
  if (type == "BertPreTokenizer") {
    auto seq = std::make_unique<SequencePre>();
    seq->parts.push_back(regex_split(c, R"(\s)", SplitBehavior::removed, false, path));
    seq->parts.push_back(regex_split(c, R"([\p{P}\x21-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E])", SplitBehavior::isolated, false, path));
    return seq;
  }
  c.fail(path + ".type", "unsupported pre-tokenizer type '" + type + "'");
}

}  // namespace exl::tok
