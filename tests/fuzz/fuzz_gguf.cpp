// libFuzzer target: the GGUF reader on arbitrary bytes (the whole input is treated as a .gguf
// file), then, for a file the reader accepts, the import planner (hyperparameters, tensor names,
// tokenizer rebuild) and the dequantizer on every small tensor. Any exl::Error is an accepted
// outcome; anything else (another exception, a crash, an ASan/UBSan report, a tensor whose bytes
// lie outside the input, a dequantized count that differs from the tensor's) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "exl/error.h"
#include "exl/gguf.h"

namespace {
constexpr std::int64_t kMaxDequantElements = 1 << 16;  // keeps one execution fast
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  std::unique_ptr<exl::GgufFile> f;
  try {
    f = exl::GgufFile::parse(bytes, size, "fuzz.gguf");
  } catch (const exl::Error&) {
    return 0;  // rejected input: the expected outcome for almost everything the fuzzer makes
  }
  unsigned sum = 0;
  for (const auto& t : f->tensors()) {
    if (t.nbytes == 0) continue;
    if (t.data < bytes || t.data + t.nbytes > bytes + size) std::abort();
    sum += unsigned(t.data[0]) + unsigned(t.data[t.nbytes - 1]);  // ASan checks both ends
    if (t.numel() > kMaxDequantElements) continue;
    try {
      const std::vector<float> v = exl::gguf_dequantize(t);
      if (static_cast<std::int64_t>(v.size()) != t.numel()) std::abort();
      for (float x : v) sum += static_cast<unsigned>(x == x);
    } catch (const exl::Error&) {
    }
  }
  // Typed getters on every key must either answer or throw exl::Error.
  for (const auto& [key, value] : f->metadata()) {
    try { (void)f->get_string(key); } catch (const exl::Error&) {}
    try { (void)f->get_number(key); } catch (const exl::Error&) {}
    try { (void)f->get_string_array(key); } catch (const exl::Error&) {}
    try { (void)f->get_number_array(key); } catch (const exl::Error&) {}
  }
  try {
    const exl::GgufImportPlan plan = exl::plan_gguf_import(*f);
    sum += static_cast<unsigned>(plan.config_json.size() + plan.tokenizer_json.size());
    for (const auto& t : plan.tensors) {
      if (!t.src || t.src->numel() > kMaxDequantElements) continue;
      try {
        const std::vector<float> v = exl::load_import_tensor(t);
        std::int64_t want = 1;
        for (auto d : t.shape) want *= d;
        if (static_cast<std::int64_t>(v.size()) != want) std::abort();
      } catch (const exl::Error&) {
      }
    }
  } catch (const exl::Error&) {
  }
  volatile unsigned sink = sum;
  (void)sink;
  return 0;
}
