// The tiny random-weight models of tests/data/families (make_refs.py) and transformers' outputs
// for them: refs.json (prompts, contexts, greedy continuations with their margins) + logits.bin.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exl_test.h"
#include "refs.h"

namespace exl::test {

#ifdef EXL_FAMILIES_TEST_DATA
inline std::string family_dir(const std::string& name) { return std::string(EXL_FAMILIES_TEST_DATA) + "/" + name; }
#endif

struct FamilyPrompt {
  std::string name;
  std::vector<std::int32_t> ids;
  int context = 0;
  LogitBlock logits;
  std::vector<std::int32_t> greedy;
  std::vector<float> greedy_margins;
};

// The references in folder `dir` (tests/data/families/NAME, tests/data/moe/NAME).
inline std::vector<FamilyPrompt> read_refs_in(const std::string& dir) {
  std::ifstream js(dir + "/refs.json");
  if (!js) fail(__FILE__, __LINE__, "cannot read " + dir + "/refs.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  std::ifstream bin(dir + "/logits.bin", std::ios::binary);
  std::vector<FamilyPrompt> out;
  for (const auto& p : j["prompts"]) {
    FamilyPrompt fp;
    fp.name = p["name"];
    fp.ids = p["ids"].get<std::vector<std::int32_t>>();
    fp.context = p["context"];
    fp.logits = read_block(bin, dir + "/logits.bin", fp.name, p["rows"], p["cols"], p["offset_bytes"].get<std::int64_t>());
    fp.greedy = p["greedy"].get<std::vector<std::int32_t>>();
    fp.greedy_margins = p["greedy_margins"].get<std::vector<float>>();
    out.push_back(std::move(fp));
  }
  return out;
}

#ifdef EXL_FAMILIES_TEST_DATA
inline std::vector<FamilyPrompt> read_family_refs(const std::string& name) { return read_refs_in(family_dir(name)); }
#endif

}  // namespace exl::test
