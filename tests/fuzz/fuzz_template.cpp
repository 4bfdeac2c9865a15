// libFuzzer target for the chat-template interpreter: arbitrary bytes are compiled as a template
// and, when they parse, rendered against a small conversation. Any exl::Error is an expected
// outcome; crashes, sanitizer reports, hangs and other exceptions are findings.
#include <cstddef>
#include <cstdint>
#include <string>

#include "exl/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;
  std::string src(reinterpret_cast<const char*>(data), size);
  static const nlohmann::ordered_json ctx = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "Be brief."},
                 {"role": "user", "content": "Hi \u00e9 <b>"},
                 {"role": "assistant", "content": "Hello", "tool_calls": [{"type": "function",
                   "function": {"name": "f", "arguments": {"a": 1, "b": [1.5, null, true]}}}]}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})");
  exl::ChatTemplateOptions options;
  options.max_steps = 200000;            // keep each input fast
  options.max_output_bytes = 1 << 20;
  options.max_call_depth = 40;
  try {
    exl::ChatTemplate tpl(src, options);
    (void)tpl.render(ctx);
  } catch (const exl::Error&) {
  }
  return 0;
}
