// libFuzzer target: the safetensors header parser on arbitrary bytes (the whole input is treated
// as a file). Any exl::Error is an accepted outcome; anything else (another exception, a crash,
// an ASan/UBSan report, a tensor whose bytes lie outside the input) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "exl/error.h"
#include "exl/tensor_store.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  std::map<std::string, std::string> metadata;
  try {
    const auto tensors = exl::SafetensorsFile::parse_header(bytes, size, "fuzz.safetensors", &metadata);
    unsigned sum = 0;
    for (const auto& t : tensors) {
      // Every accepted tensor must lie inside the input and match its dtype x shape size.
      if (t.nbytes == 0) continue;
      if (t.data < bytes || t.data + t.nbytes > bytes + size) std::abort();
      if (std::size_t(t.numel()) * exl::dtype_size(t.dtype) != t.nbytes) std::abort();
      sum += unsigned(t.data[0]) + unsigned(t.data[t.nbytes - 1]);  // ASan checks both ends
    }
    volatile unsigned sink = sum;
    (void)sink;
  } catch (const exl::Error&) {
    // Rejected input: the expected outcome for almost everything the fuzzer makes.
  }
  return 0;
}
