// UTF-8 helpers for the tokenizer: code point iteration, encoding, and the lossy conversion that
// turns invalid byte sequences into U+FFFD exactly as Rust's String::from_utf8_lossy does (one
// replacement per maximal invalid subpart), which is what HF `tokenizers` emits when decoding.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace exl::tok {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence starting at s[i], or 0 if the bytes there are invalid.
std::size_t utf8_valid_len(std::string_view s, std::size_t i);
// Number of bytes a lead byte announces (1 for ASCII and for invalid bytes).
std::size_t utf8_char_len(unsigned char lead);
// Decodes the code point at s[i] (valid input expected); sets len to its byte length.
std::uint32_t utf8_decode(std::string_view s, std::size_t i, std::size_t& len);
void utf8_append(std::string& out, std::uint32_t cp);
bool utf8_is_valid(std::string_view s);
// Invalid subsequences become U+FFFD (Rust from_utf8_lossy semantics).
std::string utf8_lossy(std::string_view s);
// Whether s ends with U+FFFD (the stream decoder holds such text back).
bool ends_with_replacement(std::string_view s);

}  // namespace exl::tok
