// Fixture tokenizer (byte-level BPE with the Llama-3 split regex, refs from HF tokenizers 0.23.2):
// every reference case must give identical ids and decoded text.
#include <chrono>

#include "test_tokenizer_support.h"

using namespace exl::test::tokenizer_support;

EXL_TEST(tokenizer, fixture_cases_ids) {
  auto tok = fixture_tokenizer();
  auto refs = read_json(exl::test::fixture("refs/tokenizer_cases.json"));
  CHECK_EQ(refs["cases"].size(), std::size_t(42));
  for (const auto& c : refs["cases"]) {
    const std::string text = c["text"];
    auto ids = tok->encode(text, true, false);
    CHECK_MSG(ids == ids_of(c["ids"]), "ids of '" << text << "': " << show(ids) << " vs " << c["ids"].dump());
    auto plain = tok->encode(text, false, false);
    CHECK_MSG(plain == ids_of(c["ids_special_as_text"]),
              "special-as-text ids of '" << text << "': " << show(plain) << " vs " << c["ids_special_as_text"].dump());
    auto bos = tok->encode(text, true, true);
    CHECK_MSG(bos == ids_of(c["ids_with_bos"]), "ids with BOS of '" << text << "': " << show(bos));
    for (std::size_t i = 0; i < ids.size(); ++i) CHECK_EQ(tok->piece(ids[i]), c["pieces"][i].get<std::string>());
  }
}

EXL_TEST(tokenizer, fixture_cases_decode) {
  auto tok = fixture_tokenizer();
  auto refs = read_json(exl::test::fixture("refs/tokenizer_cases.json"));
  for (const auto& c : refs["cases"]) {
    auto ids = ids_of(c["ids"]);
    CHECK_EQ(tok->decode(ids, false), c["decode"].get<std::string>());
    CHECK_EQ(tok->decode(ids, true), c["decode_skip_special"].get<std::string>());
    CHECK_EQ(tok->decode(ids_of(c["ids_special_as_text"]), false), c["decode_special_as_text"].get<std::string>());
  }
}

EXL_TEST(tokenizer, fixture_single_token_decode) {
  auto tok = fixture_tokenizer();
  auto refs = read_json(exl::test::fixture("refs/tokenizer_cases.json"));
  for (auto it = refs["single_token_decode"].begin(); it != refs["single_token_decode"].end(); ++it) {
    std::int32_t id = std::stoi(it.key());
    std::vector<std::int32_t> one{id};
    CHECK_MSG(tok->decode(one) == it.value().get<std::string>(), "id " << id << ": '" << tok->decode(one) << "'");
  }
}

EXL_TEST(tokenizer, fixture_vocab_and_control_ids) {
  auto tok = fixture_tokenizer();
  auto refs = read_json(exl::test::fixture("refs/tokenizer_cases.json"));
  CHECK_EQ(tok->vocab_size(), refs["vocab"]["size"].get<int>());
  for (auto it = refs["vocab"]["special"].begin(); it != refs["vocab"]["special"].end(); ++it) {
    CHECK(tok->piece_to_id(it.key()) == std::optional<std::int32_t>(it.value().get<std::int32_t>()));
    CHECK(tok->is_special(it.value().get<std::int32_t>()));
  }
  CHECK(!tok->is_special(256));
  CHECK(tok->bos_id() == std::optional<std::int32_t>(8184));
  CHECK(tok->eos_ids() == std::vector<std::int32_t>{8185});
  CHECK(tok->pad_id() == std::optional<std::int32_t>(8188));
  CHECK(tok->add_bos_by_default());
  CHECK(tok->chat_template().find("<|im_start|>") != std::string::npos);
  CHECK_EQ(tok->piece(256), std::string("\xC4\xA0t"));  // "Ġt"
  CHECK(tok->piece(999999).empty());
  CHECK(!tok->piece_to_id("no such piece").has_value());
}

EXL_TEST(tokenizer, fixture_prompts) {
  auto tok = fixture_tokenizer();
  auto refs = read_json(exl::test::fixture("refs/prompts.json"));
  CHECK_EQ(refs["prompts"].size(), std::size_t(4));
  for (const auto& p : refs["prompts"]) {
    auto ids = tok->encode(p["text"].get<std::string>(), true, p["add_bos"].get<bool>());
    CHECK_MSG(ids == ids_of(p["ids"]), p["name"].get<std::string>() << ": " << show(ids));
  }
}

EXL_TEST(tokenizer, fixture_heldout_roundtrip) {
  // Byte-level BPE is lossless: decode(encode(text)) == text on the held-out corpora.
  auto tok = fixture_tokenizer();
  for (const char* f : {"text/heldout_wiki_raw.utf8", "text/heldout_tiny_raw.utf8"}) {
    std::string text = read_text(exl::test::fixture(f));
    auto ids = tok->encode(text, false, false);
    CHECK(!ids.empty());
    CHECK(tok->decode(ids) == text);
  }
}

EXL_TEST(tokenizer, config_control_ids) {
  // Control ids per spec §10.3, from in-memory config texts.
  std::string tj = read_text(exl::test::fixture("tokenizer/tokenizer.json"));
  auto t1 = exl::Tokenizer::from_json(tj, R"({"bos_token": {"content": "<|im_start|>"}, "add_bos_token": false,
      "chat_template": [{"name": "tool_use", "template": "x"}, {"name": "default", "template": "T"}]})",
      R"({"bos_token_id": 8186, "eos_token_id": [8187, 8185], "pad_token_id": null})",
      R"({"eos_token_id": [8185, 8189]})");
  CHECK(t1->bos_id() == std::optional<std::int32_t>(8186));
  CHECK(t1->eos_ids() == (std::vector<std::int32_t>{8187, 8185, 8189}));
  CHECK(t1->pad_id() == std::optional<std::int32_t>(8187));  // EOS, since it differs from BOS
  CHECK(!t1->add_bos_by_default());
  CHECK_EQ(t1->chat_template(), std::string("T"));
  CHECK(t1->encode("hi", false, true).front() == 8186);
  CHECK_THROWS_ERROR(exl::Tokenizer::from_json(tj, "", R"({"eos_token_id": "x"})"), exl::ErrorKind::config,
                     "eos_token_id");
  CHECK_THROWS_ERROR(exl::Tokenizer::from_json(tj, "{", ""), exl::ErrorKind::config, "tokenizer_config.json");
}

EXL_TEST(tokenizer, encode_invalid_utf8_input) {
  // Invalid input bytes are treated as U+FFFD rather than failing or crashing.
  auto tok = fixture_tokenizer();
  auto ids = tok->encode("ab\xff\xfe" "cd", false, false);
  CHECK_EQ(tok->decode(ids), std::string("ab\xEF\xBF\xBD\xEF\xBF\xBD" "cd"));
}
