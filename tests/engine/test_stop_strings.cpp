// Stop strings across token boundaries with the fixtures' tokenizer: the matched text is never
// emitted, text that might start a stop string is held back until resolved.
#include <string>

#include "exl/generator.h"
#include "exl_test.h"

namespace {

std::shared_ptr<const exl::Tokenizer> tokenizer() {
  return exl::Tokenizer::from_dir(exl::test::fixture("tokenizer"));
}

struct Streamed {
  std::string text;
  std::vector<std::string> pieces;
  bool stopped = false;
};

Streamed run(const std::shared_ptr<const exl::Tokenizer>& tok, const std::string& text,
             std::vector<std::string> stops) {
  exl::TextStream ts(tok, std::move(stops));
  Streamed s;
  for (std::int32_t id : tok->encode(text)) {
    s.pieces.push_back(ts.push(id));
    s.text += s.pieces.back();
    if (ts.stopped()) break;
  }
  s.stopped = ts.stopped();
  if (!s.stopped) s.text += ts.flush();
  return s;
}

}  // namespace

EXL_TEST(stop_strings, partial_match_tail) {
  CHECK_EQ(exl::partial_match_tail("hello wor", "world"), std::size_t(3));
  CHECK_EQ(exl::partial_match_tail("hello", "world"), std::size_t(0));
  CHECK_EQ(exl::partial_match_tail("ab", "abc"), std::size_t(2));
  CHECK_EQ(exl::partial_match_tail("abc", "abc"), std::size_t(0));  // a full match is not partial
  CHECK_EQ(exl::partial_match_tail("", "abc"), std::size_t(0));
}

EXL_TEST(stop_strings, split_across_tokens_is_caught) {
  const auto tok = tokenizer();
  const std::string before = "Once upon a time there was a little girl.";
  const std::string stop = "\nUser:";
  const std::string text = before + stop + " tell me more";
  // The stop string spans several tokens of this tokenizer.
  const auto stop_ids = tok->encode(stop);
  CHECK(stop_ids.size() >= 2);
  const Streamed s = run(tok, text, {stop});
  CHECK(s.stopped);
  CHECK_EQ(s.text, before);
  // The piece emitted with the token that completed the match adds nothing past `before`.
  for (const auto& p : s.pieces) CHECK(p.find('\n') == std::string::npos);
}

EXL_TEST(stop_strings, held_text_is_released_when_resolved) {
  const auto tok = tokenizer();
  const std::string text = "She said THE ENDLESS road was long.";
  const Streamed s = run(tok, text, {"THE END."});
  CHECK(!s.stopped);
  CHECK_EQ(s.text, text);
  // While "THE END" could still become the stop string, its text was held: some piece is empty
  // or shorter than its token, and the text emitted before "LESS" never contained "THE END".
  std::string so_far;
  bool held = false;
  for (const auto& p : s.pieces) {
    if (so_far.find("She said") != std::string::npos && so_far.find("THE") == std::string::npos && p.empty())
      held = true;
    so_far += p;
  }
  CHECK(held);
}

EXL_TEST(stop_strings, earliest_stop_string_wins_and_multiple_strings) {
  const auto tok = tokenizer();
  const Streamed s = run(tok, "one two three four five", {"four", "two thr"});
  CHECK(s.stopped);
  CHECK_EQ(s.text, std::string("one "));
  const Streamed t = run(tok, "no stop here at all", {"zebra", "\n\n"});
  CHECK(!t.stopped);
  CHECK_EQ(t.text, std::string("no stop here at all"));
}

EXL_TEST(stop_strings, stop_in_the_middle_of_a_token) {
  const auto tok = tokenizer();
  // "stop" inside a longer word: the text up to the match is emitted, the rest is not.
  const Streamed s = run(tok, "the unstoppable train", {"stop"});
  CHECK(s.stopped);
  CHECK_EQ(s.text, std::string("the un"));
}
