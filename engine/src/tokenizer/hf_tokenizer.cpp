#include "tokenizer/hf_tokenizer.h"

#include <algorithm>
#include <cctype>

#include "tokenizer/utf8.h"

namespace exl::tok {

namespace {

bool is_space_cp(std::uint32_t cp) {
  return (cp >= 9 && cp <= 13) || cp == 32 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

// Approximates Rust's char::is_alphanumeric for single_word checks: ASCII letters and digits,
// and any non-ASCII character that is neither space nor general punctuation.
bool is_word_cp(std::uint32_t cp) {
  if (cp < 0x80) return std::isalnum(static_cast<int>(cp)) != 0;
  return !is_space_cp(cp) && !(cp >= 0x2000 && cp <= 0x206F) && !(cp >= 0x3000 && cp <= 0x303F);
}

std::uint32_t last_cp(std::string_view s, std::size_t end, std::size_t& begin) {
  std::size_t b = end - 1;
  while (b > 0 && (static_cast<unsigned char>(s[b]) & 0xC0) == 0x80) --b;
  begin = b;
  std::size_t n = 0;
  return utf8_decode(s, b, n);
}

}  // namespace

void AddedMatcher::add(const AddedToken* t) {
  if (t->pattern.empty()) return;
  by_first_[static_cast<unsigned char>(t->pattern[0])].push_back(t);
  ++count_;
}

void AddedMatcher::finish() {
  for (auto& v : by_first_)
    std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->pattern.size() > b->pattern.size(); });
}

std::vector<AddedMatcher::Span> AddedMatcher::split(std::string_view s, bool parse_special) const {
  std::vector<Span> out;
  std::size_t start_offset = 0, pos = 0;
  while (pos < s.size() && count_ > 0) {
    const auto& cands = by_first_[static_cast<unsigned char>(s[pos])];
    const AddedToken* hit = nullptr;
    for (const AddedToken* t : cands)
      if (s.compare(pos, t->pattern.size(), t->pattern) == 0) { hit = t; break; }
    if (!hit) { ++pos; continue; }
    std::size_t start = pos, stop = pos + hit->pattern.size();
    pos = stop;
    if (hit->special && !parse_special) continue;  // its text stays plain and is not searched again
    if (hit->single_word) {
      std::size_t b = 0, n = 0;
      bool start_ok = start == 0 || !is_word_cp(last_cp(s, start, b));
      bool stop_ok = stop == s.size() || !is_word_cp(utf8_decode(s, stop, n));
      if (!start_ok || !stop_ok) continue;
    }
    if (hit->lstrip) {
      std::size_t ns = start;
      while (ns > 0) {
        std::size_t b = 0;
        if (!is_space_cp(last_cp(s, ns, b))) break;
        ns = b;
      }
      start = std::max(ns, start_offset);
    }
    if (hit->rstrip) {
      while (stop < s.size()) {
        std::size_t n = 0;
        if (!is_space_cp(utf8_decode(s, stop, n))) break;
        stop += n;
      }
      pos = stop;
    }
    if (start_offset < start) out.push_back({start_offset, start, nullptr});
    out.push_back({start, stop, hit});
    start_offset = stop;
  }
  if (start_offset < s.size()) out.push_back({start_offset, s.size(), nullptr});
  return out;
}

std::optional<std::int32_t> HfTokenizer::added_id(std::string_view content) const {
  auto it = added_by_content_.find(content);
  if (it == added_by_content_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::int32_t> HfTokenizer::encode(std::string_view text, bool parse_special, bool add_bos) const {
  std::string sanitized;
  if (!utf8_is_valid(text)) {
    sanitized = utf8_lossy(text);
    text = sanitized;
  }
  std::vector<std::int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (add_bos && ctl_.bos) out.push_back(*ctl_.bos);
  for (const auto& span : raw_matcher_.split(text, parse_special)) {
    if (span.token) out.push_back(span.token->id);
    else encode_plain(text.substr(span.begin, span.end - span.begin), span.begin == 0, parse_special, out);
  }
  return out;
}

void HfTokenizer::encode_plain(std::string_view text, bool at_start, bool parse_special,
                               std::vector<std::int32_t>& out) const {
  std::string norm(text);
  if (normalizer_) normalizer_->apply(norm);
  std::vector<Piece> pieces;
  auto run_pipeline = [&](std::string_view seg, bool seg_start) {
    pieces.clear();
    pieces.push_back(Piece{std::string(seg), seg_start});
    if (pre_tokenizer_) pre_tokenizer_->apply(pieces);
    for (const auto& p : pieces) model_->tokenize(p.text, out);
  };
  if (normalized_matcher_.empty()) {
    run_pipeline(norm, at_start);
    return;
  }
  for (const auto& span : normalized_matcher_.split(norm, parse_special)) {
    if (span.token) out.push_back(span.token->id);
    else run_pipeline(std::string_view(norm).substr(span.begin, span.end - span.begin), at_start && span.begin == 0);
  }
}

std::string HfTokenizer::decode(std::span<const std::int32_t> ids, bool skip_special) const {
  // As HF tokenizers 0.23 does: added tokens contribute their (normalized) text, and the whole token list goes
  // through the decoder chain (so e.g. Strip only touches the very first token).
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (std::int32_t id : ids) {
    if (auto it = added_by_id_.find(id); it != added_by_id_.end()) {
      if (!(skip_special && it->second->special)) tokens.push_back(it->second->pattern);
      continue;
    }
    std::string_view t = model_->id_to_token(id);
    if (!t.empty()) tokens.emplace_back(t);
  }
  std::string out;
  if (decoder_) {
    decoder_->apply(tokens);
    for (const auto& s : tokens) out += s;
  } else {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) out += ' ';
      out += tokens[i];
    }
  }
  return out;
}

std::string HfTokenizer::piece(std::int32_t id) const {
  // A normalized added token reads as its normalized form, as HF's id_to_token gives it.
  if (auto it = added_by_id_.find(id); it != added_by_id_.end()) return it->second->pattern;
  return std::string(model_->id_to_token(id));
}

std::optional<std::int32_t> HfTokenizer::piece_to_id(std::string_view p) const {
  if (auto id = added_id(p)) return id;
  return model_->token_to_id(p);
}

bool HfTokenizer::is_special(std::int32_t id) const {
  auto it = added_by_id_.find(id);
  return it != added_by_id_.end() && it->second->special;
}

}  // namespace exl::tok
