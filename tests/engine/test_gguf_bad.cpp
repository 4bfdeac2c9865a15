// Corrupted GGUF files (made from the types.gguf fixture's bytes): each gives a typed exl::Error
// naming the file and the key or tensor, never a crash.
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "exl/error.h"
#include "exl/gguf.h"
#include "exl_test.h"

namespace {

using exl::ErrorKind;

std::string fixture_bytes() {
  std::ifstream in(std::string(EXL_GGUF_TEST_DATA) + "/types.gguf", std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void parse(const std::string& b) {
  (void)exl::GgufFile::parse(reinterpret_cast<const std::byte*>(b.data()), b.size(), "bad.gguf");
}

template <class T> void put(std::string& b, std::size_t at, T v) { std::memcpy(b.data() + at, &v, sizeof(T)); }

// Byte position of the tensor info of `name` (just after its name string).
std::size_t tensor_info(const std::string& b, const std::string& name) {
  std::string key(8, '\0');
  const std::uint64_t len = name.size();
  std::memcpy(key.data(), &len, 8);
  key += name;
  const auto pos = b.find(key);
  CHECK(pos != std::string::npos);
  return pos + key.size();
}

}  // namespace

EXL_TEST(gguf_bad, unmodified_copy_parses) { parse(fixture_bytes()); }

EXL_TEST(gguf_bad, every_truncation_is_a_format_error) {
  const std::string b = fixture_bytes();
  const auto f = exl::GgufFile::parse(reinterpret_cast<const std::byte*>(b.data()), b.size(), "x");
  std::size_t end = 0;
  for (auto& t : f->tensors()) end = std::max<std::size_t>(end, f->data_offset() + t.offset + t.nbytes);
  for (std::size_t n = 0; n < end; ++n)
    CHECK_THROWS_ERROR(parse(b.substr(0, n)), ErrorKind::format, "bad.gguf");
}

EXL_TEST(gguf_bad, bad_magic) {
  std::string b = fixture_bytes();
  b[0] = 'X';
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "bad magic");
}

EXL_TEST(gguf_bad, unsupported_version) {
  std::string b = fixture_bytes();
  put<std::uint32_t>(b, 4, 4);
  CHECK_THROWS_ERROR(parse(b), ErrorKind::unsupported, "version 4");
}

EXL_TEST(gguf_bad, absurd_counts) {
  std::string b = fixture_bytes();
  put<std::uint64_t>(b, 8, std::uint64_t(1) << 40);
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "tensor count");
  b = fixture_bytes();
  put<std::uint64_t>(b, 16, std::uint64_t(1) << 40);
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "metadata count");
  b = fixture_bytes();
  put<std::uint64_t>(b, 16, 1000);  // more keys than the file holds
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "bad.gguf");
}

EXL_TEST(gguf_bad, absurd_string_length) {
  std::string b = fixture_bytes();
  put<std::uint64_t>(b, 24, std::uint64_t(1) << 50);  // first key's length
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "string length");
  b = fixture_bytes();
  put<std::uint64_t>(b, 24, 1u << 20);  // plausible but past the end
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "truncated");
}

EXL_TEST(gguf_bad, unknown_tensor_type) {
  std::string b = fixture_bytes();
  const std::size_t at = tensor_info(b, "t.Q4_K");
  put<std::uint32_t>(b, at + 4 + 16, 99);  // n_dims, 2 dims, then the type
  CHECK_THROWS_ERROR(parse(b), ErrorKind::unsupported, "t.Q4_K");
}

EXL_TEST(gguf_bad, unknown_value_type) {
  std::string b = fixture_bytes();
  const auto pos = b.find("general.architecture");
  put<std::uint32_t>(b, pos + std::strlen("general.architecture"), 77);
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "general.architecture");
}

EXL_TEST(gguf_bad, offsets_past_the_end_and_misaligned) {
  std::string b = fixture_bytes();
  const std::size_t at = tensor_info(b, "t.Q6_K");
  put<std::uint64_t>(b, at + 4 + 16 + 4, std::uint64_t(1) << 32);
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "past the end");
  b = fixture_bytes();
  put<std::uint64_t>(b, at + 4 + 16 + 4, 33);
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "not aligned");
  b = fixture_bytes();
  put<std::uint64_t>(b, at + 4 + 16 + 4, 0);  // overlaps t.F32
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "overlap");
}

EXL_TEST(gguf_bad, dims_overflow_and_bad_counts) {
  std::string b = fixture_bytes();
  const std::size_t at = tensor_info(b, "t.F32");
  put<std::uint64_t>(b, at + 4, std::uint64_t(1) << 39);
  put<std::uint64_t>(b, at + 12, std::uint64_t(1) << 39);
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "overflows");
  b = fixture_bytes();
  put<std::uint32_t>(b, at, 9);
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "dims");
  b = fixture_bytes();
  const std::size_t q = tensor_info(b, "t.Q4_K");
  put<std::uint64_t>(b, q + 4, 100);  // row not a multiple of 256
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "block size");
}

EXL_TEST(gguf_bad, missing_file_is_io_error) {
  CHECK_THROWS_ERROR(exl::GgufFile::open("/nonexistent/x.gguf"), ErrorKind::io, "x.gguf");
}

// A byte that breaks UTF-8 in a metadata key, a string value and a string array element (the
// tokenizer's tokens): each is a format error naming the item, found when the header is read,
// before the import writes the strings into JSON (found by fuzz_gguf, tests/fuzz/RESULTS.md).
EXL_TEST(gguf_bad, invalid_utf8_strings) {
  const std::string good = fixture_bytes();
  std::string b = good;
  auto pos = b.find("general.architecture");
  CHECK(pos != std::string::npos);
  b[pos + 3] = char(0xC0);  // a lead byte that is never valid
  CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "not valid UTF-8");
  for (unsigned char bad : {0x80u, 0xEDu, 0xF5u, 0xFFu}) {
    b = good;
    b[good.find("llama", pos + 20)] = char(bad);  // the value of general.architecture
    CHECK_THROWS_ERROR(parse(b), ErrorKind::format, "general.architecture");
  }
}

EXL_TEST(gguf_bad, fuzz_regression_invalid_utf8_token) {
  // The fuzzer's input: a token string with a lone continuation byte used to escape as a
  // nlohmann::json type_error from the import's tokenizer.json writer.
  std::ifstream in(std::string(EXL_GGUF_TEST_DATA) + "/fuzz_regressions/invalid_utf8_token.gguf", std::ios::binary);
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(!b.empty());
  try {
    const auto f = exl::GgufFile::parse(reinterpret_cast<const std::byte*>(b.data()), b.size(), "crash.gguf");
    (void)exl::plan_gguf_import(*f);
  } catch (const exl::Error&) {
    return;  // the expected outcome: a typed error
  }
}
