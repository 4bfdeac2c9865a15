#include "tokenizer/unicode_norm.h"

#include <cctype>

#include "exl/error.h"

#ifdef EXL_TOKENIZER_HAVE_ICU
#include <unicode/normalizer2.h>
#include <unicode/locid.h>
#include <unicode/unistr.h>
#endif

namespace exl::tok {

#ifdef EXL_TOKENIZER_HAVE_ICU
bool unicode_form_supported(UnicodeForm) { return true; }

std::string unicode_normalize(std::string_view text, UnicodeForm f) {
  // Pure ASCII is already in every normal form; skip ICU's round trip through UTF-16.
  bool ascii = true;
  for (unsigned char ch : text) ascii = ascii && ch < 0x80;
  if (ascii) {
    std::string out(text);
    if (f == UnicodeForm::lowercase)
      for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
  }
  icu::UnicodeString s = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  if (f == UnicodeForm::lowercase) {
    s.toLower(icu::Locale::getRoot());
  } else {
    UErrorCode err = U_ZERO_ERROR;
    const icu::Normalizer2* n = nullptr;
    switch (f) {
      case UnicodeForm::nfc: n = icu::Normalizer2::getNFCInstance(err); break;
      case UnicodeForm::nfd: n = icu::Normalizer2::getNFDInstance(err); break;
      case UnicodeForm::nfkc: n = icu::Normalizer2::getNFKCInstance(err); break;
      default: n = icu::Normalizer2::getNFKDInstance(err); break;
    }
    if (U_FAILURE(err) || !n) throw Error(ErrorKind::tokenizer, "ICU normalizer unavailable");
    icu::UnicodeString r = n->normalize(s, err);
    if (U_FAILURE(err)) throw Error(ErrorKind::tokenizer, "ICU normalization failed");
    s = r;
  }
  std::string out;
  s.toUTF8String(out);
  return out;
}
#else
bool unicode_form_supported(UnicodeForm) { return false; }
std::string unicode_normalize(std::string_view text, UnicodeForm) { return std::string(text); }
#endif

}  // namespace exl::tok
