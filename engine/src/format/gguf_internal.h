// Internal pieces of the GGUF importer shared between its source files.
#pragma once
#include <optional>
#include <string>

#include "exl/gguf.h"

namespace exl {

struct GgufSpecialIds {
  std::optional<std::int64_t> bos, eos, eot, pad, unk;
};
GgufSpecialIds gguf_special_ids(const GgufFile& f);

// tokenizer.json and tokenizer_config.json (with the chat template) from tokenizer.ggml.* metadata.
// Throws Error(unsupported) for tokenizer models other than gpt2 and llama.
void gguf_build_tokenizer(const GgufFile& f, std::string& tokenizer_json, std::string& tokenizer_config_json);

}  // namespace exl
