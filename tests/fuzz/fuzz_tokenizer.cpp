// libFuzzer target: the input is a tokenizer.json. Loading may only fail with exl::Error; when it
// loads, encoding and decoding (full and streamed) must work on a few strings and arbitrary ids
// without crashes, sanitizer reports, other exceptions or invalid UTF-8 output.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "exl/error.h"
#include "exl/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

const char* const kTexts[] = {
    "Hello, world! It's 2024.",
    "  two  spaces\n\nand\r\nlines\t",
    "<|begin_of_text|><s>[INST] hi </s><|im_end|>",
    "日本語 😀 e\xCC\x81 \xEF\xAC\x81",
    "\xff\xfe invalid \xe4\xb8",
    "",
};

void require(bool ok) {
  if (!ok) std::abort();  // a finding: the harness wants the crash report
}

void exercise(const std::shared_ptr<const exl::Tokenizer>& tok) {
  const int vocab = tok->vocab_size();
  for (const char* text : kTexts) {
    for (int mode = 0; mode < 3; ++mode) {
      auto ids = tok->encode(text, mode != 1, mode == 2);
      for (auto id : ids) require(id >= 0 && id < vocab);
      std::string full = tok->decode(ids, mode == 0);
      require(exl::tok::utf8_is_valid(full));
      exl::StreamDecoder sd(tok, mode == 0);
      std::string streamed;
      for (auto id : ids) streamed += sd.push(id);
      streamed += sd.flush();
      require(exl::tok::utf8_is_valid(streamed));
    }
  }
  std::vector<std::int32_t> ids;
  for (int k = -2; k < 40; ++k) ids.push_back(k < 20 ? k : vocab - 40 + k);
  require(exl::tok::utf8_is_valid(tok->decode(ids, false)));
  for (auto id : ids) (void)tok->piece(id), (void)tok->is_special(id);
  (void)tok->bos_id(), (void)tok->eos_ids(), (void)tok->pad_id();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    auto tok = exl::Tokenizer::from_json(input, R"({"bos_token": "<s>", "eos_token": {"content": "</s>"}})");
    exercise(tok);
  } catch (const exl::Error&) {
    // typed errors are the expected outcome for malformed input
  }
  return 0;
}
