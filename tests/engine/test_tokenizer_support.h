// Helpers shared by the tokenizer suites: loading the fixture tokenizer and JSON reference files.
#pragma once
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "exl/error.h"
#include "exl/tokenizer.h"
#include "exl_test.h"

namespace exl::test::tokenizer_support {

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) fail(__FILE__, __LINE__, "cannot read " + p.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

inline nlohmann::json read_json(const std::filesystem::path& p) { return nlohmann::json::parse(read_text(p)); }

inline std::shared_ptr<const Tokenizer> fixture_tokenizer() {
  static std::shared_ptr<const Tokenizer> tok = Tokenizer::from_dir(fixture("tokenizer"));
  return tok;
}

inline std::vector<std::int32_t> ids_of(const nlohmann::json& j) { return j.get<std::vector<std::int32_t>>(); }

inline std::string show(const std::vector<std::int32_t>& v) {
  std::ostringstream s;
  s << '[';
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  s << ']';
  return s.str();
}

inline std::filesystem::path data_dir() { return EXL_TOKENIZER_TEST_DATA; }

}  // namespace exl::test::tokenizer_support
