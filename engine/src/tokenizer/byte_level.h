// GPT-2 byte-level alphabet: every byte maps to a printable code point (printable Latin-1 bytes to
// themselves, the rest to U+0100 upwards), so byte-level BPE works on text with no control or
// space bytes. Shared by the ByteLevel pre-tokenizer and decoder.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace exl::tok {

// UTF-8 text of the code point standing for byte b.
const std::string& byte_to_unicode(unsigned char b);
// Appends the byte-level form of raw bytes.
void bytes_to_byte_level(std::string_view raw, std::string& out);
// Byte for a code point of the alphabet, or -1 if the code point is not part of it.
int unicode_to_byte(std::uint32_t cp);

}  // namespace exl::tok
