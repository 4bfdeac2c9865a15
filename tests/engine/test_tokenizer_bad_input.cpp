// Malformed tokenizer.json variants give typed errors naming the field; none aborts.
#include "test_tokenizer_support.h"

using namespace exl::test::tokenizer_support;
using nlohmann::json;

namespace {

json fixture_json() {
  static json j = read_json(exl::test::fixture("tokenizer/tokenizer.json"));
  return j;
}

std::shared_ptr<const exl::Tokenizer> load(const json& j) { return exl::Tokenizer::from_json(j.dump()); }

json tiny() {
  return json::parse(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
    "pre_tokenizer": null, "decoder": null, "normalizer": null, "added_tokens": []})");
}

}  // namespace

EXL_TEST(tokenizer, bad_json_syntax) {
  CHECK_THROWS_ERROR(exl::Tokenizer::from_json("{\"model\": "), exl::ErrorKind::tokenizer, "malformed JSON");
  CHECK_THROWS_ERROR(exl::Tokenizer::from_json(""), exl::ErrorKind::tokenizer, "malformed JSON");
  CHECK_THROWS_ERROR(exl::Tokenizer::from_json("[1,2]"), exl::ErrorKind::tokenizer, "top level");
}

EXL_TEST(tokenizer, bad_model_fields) {
  json j = tiny();
  j.erase("model");
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model: missing field");
  j = tiny();
  j["model"]["type"] = "Unigram";
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model.type");
  j = tiny();
  j["model"]["vocab"] = json::array();
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model.vocab");
  j = tiny();
  j["model"]["vocab"]["a"] = "zero";
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model.vocab[\"a\"]");
  j = tiny();
  j["model"]["vocab"]["a"] = -1;
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "out of range");
  j = tiny();
  j["model"]["vocab"]["z"] = 2000000;
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "sparse");
  j = tiny();
  j["model"]["merges"] = json::array({"a c"});
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model.merges[0]: merge names unknown token 'c'");
  j = tiny();
  j["model"]["merges"] = json::array({"ab"});
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model.merges[0]");
  j = tiny();
  j["model"]["merges"] = json::array({json::array({"b", "a"})});
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "'ba' is not in the vocabulary");
  j = tiny();
  j["model"]["merges"] = json::array({42});
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model.merges[0]");
  j = tiny();
  j["model"]["unk_token"] = "<unk>";
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model.unk_token");
  j = tiny();
  j["model"]["byte_fallback"] = "yes";
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model.byte_fallback");
}

EXL_TEST(tokenizer, bad_pipeline_fields) {
  json j = tiny();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "([a-"}}}, {"behavior", "Isolated"}};
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "pre_tokenizer.pattern.Regex: invalid regex");
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Sideways"}};
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "pre_tokenizer.behavior");
  j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Nope"}}}}};
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "pre_tokenizer.pretokenizers[0].type");
  j = tiny();
  j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}};
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "unsupported normalizer type 'Precompiled'");
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "("}}}, {"content", "x"}};
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "normalizer.pattern.Regex");
  j = tiny();
  j["decoder"] = {{"type", "WordPiece"}};
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "decoder.type");
  j["decoder"] = {{"type", "Strip"}, {"content", " "}, {"start", "1"}, {"stop", 0}};
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "decoder.start");
  j = tiny();
  j["added_tokens"] = json::array({{{"id", 5}}});
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "added_tokens[0].content");
  j["added_tokens"] = json::array({{{"id", "5"}, {"content", "<x>"}}});
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "added_tokens[0].id");
  j["added_tokens"] = json::object();
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "added_tokens");
  j = tiny();
  j["post_processor"] = {{"type", "TemplateProcessing"}, {"single", {{{"SpecialToken", {{"id", "<s>"}}}}}}};
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "post_processor.special_tokens");
}

EXL_TEST(tokenizer, bad_fixture_variants) {
  json j = fixture_json();
  j["model"]["merges"][100] = "\xC4\xA0 zzzzunknown";
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "model.merges[100]");
  j = fixture_json();
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"Regex", "(?<=a+)b"}};
  CHECK_THROWS_ERROR(load(j), exl::ErrorKind::tokenizer, "pre_tokenizer.pretokenizers[0].pattern.Regex");
}

EXL_TEST(tokenizer, bad_directory) {
  CHECK_THROWS_ERROR(exl::Tokenizer::from_dir("/nonexistent/model"), exl::ErrorKind::io, "tokenizer.json");
}

EXL_TEST(tokenizer, tiny_model_works) {
  auto t = load(tiny());
  CHECK(t->encode("abab") == (std::vector<std::int32_t>{2, 2}));
  CHECK(t->encode("ba") == (std::vector<std::int32_t>{1, 0}));
  CHECK_EQ(t->decode(std::vector<std::int32_t>{2, 0}), std::string("ab a"));  // no decoder: joined with spaces
  CHECK(t->encode("xyz").empty());  // unknown characters without unk token are dropped, as HF does
}
