#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace exl::tok {

namespace {
struct Tables {
  std::array<std::string, 256> to_text;
  std::array<std::uint32_t, 256> to_cp{};
  std::array<int, 68> high_to_byte{};  // code points 256..323
  Tables() {
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_cp[b] = printable ? std::uint32_t(b) : std::uint32_t(256 + n++);
      utf8_append(to_text[b], to_cp[b]);
      if (to_cp[b] >= 256) high_to_byte[to_cp[b] - 256] = b;
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}
}  // namespace

const std::string& byte_to_unicode(unsigned char b) { return tables().to_text[b]; }

void bytes_to_byte_level(std::string_view raw, std::string& out) {
  const auto& t = tables();
  for (unsigned char c : raw) out += t.to_text[c];
}

int unicode_to_byte(std::uint32_t cp) {
  if (cp < 256) {
    const bool printable = (cp >= '!' && cp <= '~') || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF);
    return printable ? int(cp) : -1;
  }
  if (cp < 256 + 68) return tables().high_to_byte[cp - 256];
  return -1;
}

}  // namespace exl::tok
