#include "tokenizer/utf8.h"

namespace exl::tok {

std::size_t utf8_char_len(unsigned char c) {
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return 2;
  if (c >= 0xE0 && c <= 0xEF) return 3;
  if (c >= 0xF0 && c <= 0xF4) return 4;
  return 1;
}

// How many bytes of the sequence at s[i] are a valid prefix (Unicode "maximal subpart"), and
// whether the whole sequence is complete. Follows Table 3-7 of the Unicode standard.
static std::size_t valid_prefix(std::string_view s, std::size_t i, bool& complete) {
  const auto c = static_cast<unsigned char>(s[i]);
  complete = false;
  if (c < 0x80) { complete = true; return 1; }
  std::size_t need = utf8_char_len(c);
  if (need == 1) return 0;  // stray continuation or invalid lead byte
  unsigned char lo = 0x80, hi = 0xBF;
  if (c == 0xE0) lo = 0xA0;
  else if (c == 0xED) hi = 0x9F;
  else if (c == 0xF0) lo = 0x90;
  else if (c == 0xF4) hi = 0x8F;
  std::size_t k = 1;
  for (; k < need; ++k) {
    if (i + k >= s.size()) return k;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return k;
  }
  complete = true;
  return need;
}

std::size_t utf8_valid_len(std::string_view s, std::size_t i) {
  bool complete = false;
  std::size_t n = valid_prefix(s, i, complete);
  return complete ? n : 0;
}

std::uint32_t utf8_decode(std::string_view s, std::size_t i, std::size_t& len) {
  len = utf8_valid_len(s, i);
  if (len == 0) { len = 1; return 0xFFFD; }
  const auto c = static_cast<unsigned char>(s[i]);
  if (len == 1) return c;
  std::uint32_t cp = c & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

void utf8_append(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool utf8_is_valid(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_valid_len(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_lossy(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    bool complete = false;
    std::size_t n = valid_prefix(s, i, complete);
    if (complete) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append(kReplacementChar);
      i += n == 0 ? 1 : n;
    }
  }
  return out;
}

bool ends_with_replacement(std::string_view s) {
  return s.size() >= 3 && s.substr(s.size() - 3) == kReplacementChar;
}

}  // namespace exl::tok
