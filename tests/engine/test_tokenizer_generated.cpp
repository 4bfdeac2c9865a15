// Reference data generated with the HF `tokenizers` Python package (tests/data/tokenizer,
// see its README): SentencePiece-style BPE with byte fallback and a GPT-2-style byte-level BPE.
#include "test_tokenizer_support.h"
#include "tokenizer/pipeline.h"

using namespace exl::test::tokenizer_support;

namespace {

void check_generated(const std::string& name) {
  const auto dir = data_dir() / name;
  if (!std::filesystem::exists(dir / "tokenizer.json")) SKIP("no generated data in " + dir.string());
  auto tok = exl::Tokenizer::from_dir(dir);
  auto refs = read_json(dir / "expected.json");
  for (const auto& c : refs["cases"]) {
    const std::string text = c["text"];
    auto ids = tok->encode(text, true, false);
    CHECK_MSG(ids == ids_of(c["ids"]), name << " ids of '" << text << "': " << show(ids) << " vs " << c["ids"].dump());
    auto plain = tok->encode(text, false, false);
    CHECK_MSG(plain == ids_of(c["ids_special_as_text"]),
              name << " special-as-text ids of '" << text << "': " << show(plain) << " vs " << c["ids_special_as_text"].dump());
    CHECK_MSG(tok->decode(ids, false) == c["decode"].get<std::string>(),
              name << " decode of '" << text << "': '" << tok->decode(ids, false) << "' vs '" << c["decode"].get<std::string>() << "'");
    CHECK_MSG(tok->decode(ids, true) == c["decode_skip_special"].get<std::string>(),
              name << " decode_skip_special of '" << text << "': '" << tok->decode(ids, true) << "'");
    exl::StreamDecoder sd(tok, false);
    std::string streamed;
    for (auto id : ids) streamed += sd.push(id);
    streamed += sd.flush();
    CHECK_MSG(streamed == c["decode"].get<std::string>(), name << " stream of '" << text << "': '" << streamed << "'");
  }
  for (const auto& s : refs["single_token_decode"]) {
    std::vector<std::int32_t> one{s["id"].get<std::int32_t>()};
    CHECK_MSG(tok->decode(one, false) == s["text"].get<std::string>(), name << " single id " << one[0]);
  }
}

}  // namespace

EXL_TEST(tokenizer, generated_sentencepiece_bpe) { check_generated("spm_bpe"); }
EXL_TEST(tokenizer, generated_spm_metaspace) { check_generated("spm_metaspace"); }
EXL_TEST(tokenizer, generated_gpt2_bytelevel) { check_generated("gpt2_bytelevel"); }

EXL_TEST(tokenizer, generated_pre_tokenizers) {
  // Every Split behaviour (with and without invert), Digits, Punctuation, Whitespace(Split),
  // BertPreTokenizer, ByteLevel, Metaspace prepend schemes and Sequence, against HF
  // pre_tokenize_str (tests/data/tokenizer/pre_tokenizers.json).
  auto refs = read_json(data_dir() / "pre_tokenizers.json");
  exl::tok::JsonCtx ctx{"pre_tokenizers.json"};
  for (const auto& cfg : refs["configs"]) {
    auto pre = exl::tok::parse_pre_tokenizer(ctx, cfg["config"], "pre_tokenizer");
    CHECK(pre != nullptr);
    for (const auto& c : cfg["cases"]) {
      std::vector<exl::tok::Piece> pieces{{c["text"].get<std::string>(), true}};
      pre->apply(pieces);
      std::vector<std::string> got;
      for (const auto& p : pieces) got.push_back(p.text);
      CHECK_MSG(got == c["pieces"].get<std::vector<std::string>>(),
                cfg["config"].dump() << " on '" << c["text"].get<std::string>() << "': got " << nlohmann::json(got).dump());
    }
  }
}
