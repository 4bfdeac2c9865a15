// Tokenizers and chat templates of the model families (tests/data/tokenizer_families, made with
// HF tokenizers 0.23.3 and transformers 5.25.0; see make_reference.py there): Gemma's
// SentencePiece-style tokenizer.json (Replace normalizer without a prepended ▁, byte fallback,
// no Strip in the decoder), Phi-3's Llama-style one with rstrip added tokens, Phi-4-mini's
// byte-level BPE behind an o200k-style regex. Every case's ids (special tokens parsed and as
// text), decodings, streamed decoding; and the families' chat templates rendered and tokenized
// as transformers' apply_chat_template does.
#include <filesystem>

#include "exl/chat_prompt.h"
#include "exl/generator.h"
#include "test_tokenizer_support.h"

using namespace exl;
using namespace exl::test::tokenizer_support;

namespace {

void check_family_tokenizer(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(EXL_TOKENIZER_FAMILIES_DATA) / name;
  auto tok = Tokenizer::from_dir(dir);
  const auto refs = read_json(dir / "expected.json");
  int cases = 0;
  for (const auto& c : refs["cases"]) {
    const std::string text = c["text"];
    const auto ids = tok->encode(text, true, false);
    CHECK_MSG(ids == ids_of(c["ids"]), name << " ids of '" << text << "': " << show(ids) << " vs " << c["ids"].dump());
    const auto plain = tok->encode(text, false, false);
    CHECK_MSG(plain == ids_of(c["ids_special_as_text"]), name << " special-as-text ids of '" << text << "'");
    CHECK_MSG(tok->decode(ids, false) == c["decode"].get<std::string>(), name << " decode of '" << text << "'");
    CHECK_MSG(tok->decode(ids, true) == c["decode_skip_special"].get<std::string>(),
              name << " decode_skip_special of '" << text << "'");
    StreamDecoder sd(tok, false);
    std::string streamed;
    for (auto id : ids) streamed += sd.push(id);
    streamed += sd.flush();
    CHECK_MSG(streamed == c["decode"].get<std::string>(), name << " stream of '" << text << "'");
    ++cases;
  }
  CHECK(cases > 30);
  for (const auto& s : refs["single_token_decode"]) {
    const std::vector<std::int32_t> one{s["id"].get<std::int32_t>()};
    CHECK_MSG(tok->decode(one, false) == s["text"].get<std::string>(), name << " single id " << one[0]);
  }
  int chats = 0;
  const ChatPrompt prompt(tok);
  for (const auto& c : refs["chats"]) {
    const nlohmann::ordered_json messages = nlohmann::ordered_json::parse(c["messages"].dump());
    const bool gen = c["add_generation_prompt"];
    const std::string text = prompt.text(messages, gen);
    CHECK_MSG(text == c["text"].get<std::string>(), name << " chat text: '" << text << "' vs '" << c["text"].get<std::string>() << "'");
    const auto ids = prompt.ids(messages, gen);
    CHECK_MSG(ids == ids_of(c["ids"]), name << " chat ids " << show(ids) << " vs " << c["ids"].dump());
    ++chats;
  }
  CHECK_EQ(chats, 4);
}

}  // namespace

EXL_TEST(family_tokenizers, gemma) { check_family_tokenizer("gemma_spm"); }
EXL_TEST(family_tokenizers, phi3) { check_family_tokenizer("phi3_spm"); }
EXL_TEST(family_tokenizers, phi4_mini) { check_family_tokenizer("phi4_bytelevel"); }
