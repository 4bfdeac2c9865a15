// PCRE2 regex for the tokenizer's pre-tokenizers and normalizers: UTF + UCP so that \p{L}, \p{N}
// and \s have their Unicode meaning (as in HF `tokenizers`, which uses Oniguruma), JIT-compiled
// where the platform allows. Compiled once at load; matching is thread-safe (per-call match data).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exl::tok {

class Regex {
 public:
  // Throws Error(tokenizer) naming `where` (file and field) when the pattern does not compile.
  Regex(const std::string& pattern, const std::string& file, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Byte ranges [begin, end) of all non-overlapping matches, left to right. Empty matches are
  // skipped (the search moves on by one character), as Oniguruma's find_iter does.
  std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const;

  static std::string escape(std::string_view literal);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string file_, where_;
};

}  // namespace exl::tok
