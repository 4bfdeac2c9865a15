// GGUF reader: every tensor type dequantizes bit for bit like gguf.quants.dequantize (references
// written by tests/data/gguf/make_gguf_fixtures.py), metadata of every value type reads back,
// versions 2 and 3 both parse.
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "exl/error.h"
#include "exl/gguf.h"
#include "exl_test.h"

namespace {

const std::string kDir = EXL_GGUF_TEST_DATA;
const char* kTypes[] = {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
                        "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"};

std::vector<float> read_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

void check_types(const exl::GgufFile& f) {
  for (const char* name : kTypes) {
    const exl::GgufTensor* t = f.find_tensor(std::string("t.") + name);
    CHECK_MSG(t != nullptr, name);
    CHECK_EQ(exl::ggml_type_name(t->type), std::string(name));
    const std::vector<float> got = exl::gguf_dequantize(*t);
    const std::vector<float> want = read_f32(kDir + "/" + name + ".f32");
    CHECK_EQ(got.size(), want.size());
    std::size_t diff = 0;
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
      diff += std::memcmp(&got[i], &want[i], 4) != 0;
    CHECK_MSG(diff == 0, std::string(name) + ": " + std::to_string(diff) + " values differ from gguf.quants.dequantize");
  }
}

}  // namespace

EXL_TEST(gguf, dequantize_every_type_bit_exact) {
  const auto f = exl::GgufFile::open(kDir + "/types.gguf");
  CHECK_EQ(f->version(), 3u);
  CHECK_EQ(f->tensors().size(), std::size(kTypes));
  check_types(*f);
}

EXL_TEST(gguf, version2_parses) {
  const auto f = exl::GgufFile::open(kDir + "/types_v2.gguf");
  CHECK_EQ(f->version(), 2u);
  check_types(*f);
}

EXL_TEST(gguf, tensor_shapes_are_reversed_dims) {
  const auto f = exl::GgufFile::open(kDir + "/types.gguf");
  const auto* t = f->find_tensor("t.Q4_K");
  CHECK_EQ(t->dims.size(), std::size_t(2));
  CHECK_EQ(t->dims[0], 512u);
  const std::vector<std::int64_t> shape = t->shape();
  CHECK_EQ(shape.size(), std::size_t(2));
  CHECK_EQ(shape[0], 3);
  CHECK_EQ(shape[1], 512);
  CHECK_EQ(t->nbytes, std::size_t(3 * 2 * 144));
  CHECK_EQ(f->alignment(), 32u);
  CHECK_EQ(f->data_offset() % 32, 0u);
}

EXL_TEST(gguf, metadata_round_trip) {
  const auto f = exl::GgufFile::open(kDir + "/types.gguf");
  CHECK_EQ(*f->get_string("general.architecture"), std::string("llama"));
  CHECK_EQ(*f->get_int("test.u8"), 200);
  CHECK_EQ(*f->get_int("test.i8"), -100);
  CHECK_EQ(*f->get_int("test.u16"), 60000);
  CHECK_EQ(*f->get_int("test.i16"), -30000);
  CHECK_EQ(*f->get_int("test.u32"), 4000000000LL);
  CHECK_EQ(*f->get_int("test.i32"), -2000000000LL);
  CHECK_EQ(f->find("test.u64")->u, (std::uint64_t(1) << 63) + 5);
  CHECK(!f->find("test.u64")->as_int());  // does not fit int64
  CHECK_EQ(*f->get_int("test.i64"), -(std::int64_t(1) << 62));
  CHECK_EQ(*f->get_number("test.f32"), 1.5);
  CHECK_EQ(*f->get_number("test.f64"), -2.25e100);
  CHECK_EQ(*f->get_bool("test.bool"), true);
  CHECK_EQ(*f->get_string("test.string"), std::string("h\xC3\xA9llo \xE2\x96\x81 w\xC3\xB6rld"));
  const auto ints = f->get_number_array("test.array_i32");
  CHECK_EQ(ints.size(), std::size_t(3));
  CHECK_EQ(ints[1], -2.0);
  const auto strs = f->get_string_array("test.array_str");
  CHECK_EQ(strs.size(), std::size_t(3));
  CHECK_EQ(strs[1], std::string(""));
  CHECK_EQ(strs[2], std::string("ccc"));
  const exl::GgufValue* nested = f->find("test.array_nested");
  CHECK(nested && nested->type == exl::GgufValueType::array && nested->elem_type == exl::GgufValueType::array);
  CHECK_EQ(nested->arr.size(), std::size_t(2));
  CHECK_EQ(nested->arr[0].arr.size(), std::size_t(2));
  CHECK_EQ(nested->arr[0].arr[1].i, 2);
  CHECK_EQ(nested->arr[1].arr[0].i, 3);
  CHECK(!f->get_string("no.such.key"));
  CHECK_THROWS_ERROR(f->get_string("test.u8"), exl::ErrorKind::format, "test.u8");
  CHECK_THROWS_ERROR(f->get_int("test.string"), exl::ErrorKind::format, "test.string");
}

EXL_TEST(gguf, import_rejects_fixture_without_model_tensors) {
  const auto f = exl::GgufFile::open(kDir + "/types.gguf");
  CHECK_THROWS_ERROR(exl::plan_gguf_import(*f), exl::ErrorKind::format, "llama.block_count");
}
