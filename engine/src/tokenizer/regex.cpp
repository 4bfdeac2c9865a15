#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>

#include "exl/error.h"
#include "tokenizer/utf8.h"

namespace exl::tok {

struct Regex::Impl {
  pcre2_code* code = nullptr;
  pcre2_match_context* mctx = nullptr;
  bool jit = false;
  ~Impl() {
    if (mctx) pcre2_match_context_free(mctx);
    if (code) pcre2_code_free(code);
  }
};

static std::string pcre_message(int code) {
  PCRE2_UCHAR buf[256];
  int n = pcre2_get_error_message(code, buf, sizeof buf);
  return n < 0 ? "error " + std::to_string(code) : std::string(reinterpret_cast<char*>(buf));
}

Regex::Regex(const std::string& pattern, const std::string& file, const std::string& where)
    : impl_(std::make_unique<Impl>()), file_(file), where_(where) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  // UTF checks stay on at compile time (the pattern comes from a file); subjects are validated
  // by us before matching, so matching skips the check.
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
  if (!impl_->code)
    throw Error(ErrorKind::tokenizer,
                "invalid regex at offset " + std::to_string(offset) + ": " + pcre_message(err), file, where);
  impl_->jit = pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE) == 0;
  impl_->mctx = pcre2_match_context_create(nullptr);
  // Bound pathological backtracking from hostile patterns instead of hanging.
  pcre2_set_match_limit(impl_->mctx, 10'000'000);
  pcre2_set_depth_limit(impl_->mctx, 100'000);
}

Regex::~Regex() = default;

std::vector<std::pair<std::size_t, std::size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  if (!md) throw Error(ErrorKind::out_of_memory, "pcre2 match data", file_, where_);
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> guard(md, pcre2_match_data_free);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t pos = 0;
  const bool valid = utf8_is_valid(text);
  const uint32_t opts = valid ? PCRE2_NO_UTF_CHECK : 0;
  while (pos <= text.size()) {
    int rc = impl_->jit ? pcre2_jit_match(impl_->code, subject, text.size(), pos, opts, md, impl_->mctx)
                        : pcre2_match(impl_->code, subject, text.size(), pos, opts, md, impl_->mctx);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw Error(ErrorKind::tokenizer, "regex matching failed: " + pcre_message(rc), file_, where_);
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    std::size_t b = ov[0], e = ov[1];
    if (e < b) e = b;  // \K tricks can put the end before the start
    if (e > b) {
      out.emplace_back(b, e);
      pos = e;
    } else {
      if (b >= text.size()) break;
      pos = b + utf8_char_len(static_cast<unsigned char>(text[b]));
    }
  }
  return out;
}

std::string Regex::escape(std::string_view literal) {
  std::string out = "\\Q";
  for (std::size_t i = 0; i < literal.size(); ++i) {
    if (literal.substr(i, 2) == "\\E") {
      out += "\\E\\\\E\\Q";
      ++i;
    } else {
      out += literal[i];
    }
  }
  out += "\\E";
  return out;
}

}  // namespace exl::tok
