// Unicode normalization forms and lowercasing for the NFC/NFD/NFKC/NFKD/Lowercase normalizers.
// Backed by ICU when the build found it (EXL_TOKENIZER_HAVE_ICU); otherwise only ASCII-safe
// behaviour is available and unicode_form_supported() says no, so loading such a tokenizer.json
// fails with a clear error instead of tokenizing differently from HF.
#pragma once
#include <string>
#include <string_view>

namespace exl::tok {

enum class UnicodeForm { nfc, nfd, nfkc, nfkd, lowercase };

bool unicode_form_supported(UnicodeForm f);
// Input must be valid UTF-8 (the tokenizer sanitises its input first).
std::string unicode_normalize(std::string_view text, UnicodeForm f);

}  // namespace exl::tok
