// Corrupted EXL2 layers, built from the real ref-xs-4.0bpw converter output: every spec §2.10
// rule violation gives a typed exl::Error naming the file and the tensor.
#include <cstdint>
#include <cstring>
#include <string>

#include "exl/error.h"
#include "exl/exl2_layer.h"
#include "exl/tensor_store.h"
#include "exl_test.h"
#include "test_format_support.h"

namespace {

using exl::ErrorKind;
using exl::test::StFile;
using exl::test::TempDir;

const std::string P = "model.layers.0.self_attn.q_proj";  // 256 -> 256

StFile source() { return StFile::read(exl::test::fixture("models/exl2/ref-xs-4.0bpw/output.safetensors")); }

// Writes the file into a fresh folder and loads layer P from it.
exl::LinearTensors load(const StFile& f, int in = 256, int out = 256) {
  TempDir dir;
  f.write(dir / "output.safetensors");
  const auto store = exl::TensorStore::open_dir(dir.path());
  auto l = exl::load_linear(store, P, in, out);
  l.exl2.reset();  // the store closes here; only the outcome matters to these tests
  return l;
}

}  // namespace

EXL_TEST(format_bad_input, exl2_unmodified_copy_loads) {
  const auto l = load(source());
  CHECK(l.kind == exl::LinearKind::exl2);
}

EXL_TEST(format_bad_input, exl2_q_invperm_not_a_permutation) {
  StFile f = source();
  f.set<std::int32_t>(P + ".q_invperm", 1, f.get<std::int32_t>(P + ".q_invperm", 0));
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, "output.safetensors: " + P + ".q_invperm");
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, "appears twice (not a permutation)");
  f = source();
  f.set<std::int32_t>(P + ".q_invperm", 7, 256);
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, "outside 0..255");
  f.set<std::int32_t>(P + ".q_invperm", 7, -1);
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, P + ".q_invperm");
}

EXL_TEST(format_bad_input, exl2_increasing_bit_widths) {
  StFile f = source();
  const std::string qg = P + ".q_groups";
  CHECK(f.header[qg]["shape"][0].get<int>() >= 4);  // at least two groups
  f.set<std::int16_t>(qg, 0, 2);
  f.set<std::int16_t>(qg, 2, 3);
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, "output.safetensors: " + qg);
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, "group 1: bit width 3 follows 2");
  f = source();
  f.set<std::int16_t>(qg, 0, 7);
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, "bit width 7 is not 2, 3, 4, 5, 6 or 8");
}

EXL_TEST(format_bad_input, exl2_packed_offsets) {
  const std::string qg = P + ".q_groups";
  StFile f = source();
  f.set<std::int16_t>(qg, 1, 1);
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, "first packed row offset is 1");
  f = source();
  f.set<std::int16_t>(qg, 3, 0);
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, "strictly increasing");
  f = source();
  f.set<std::int16_t>(qg, 3, std::int16_t(f.get<std::int16_t>(qg, 3) + 1));  // one packed row more in group 0
  CHECK_THROWS_ERROR(load(f), ErrorKind::format, qg);
}

EXL_TEST(format_bad_input, exl2_shapes_and_dtypes) {
  StFile f = source();
  auto& qw = f.header[P + ".q_weight"];
  const std::int64_t rows = qw["shape"][0];
  qw["shape"] = {rows * 2, 128};
  CHECK_THROWS_ERROR(load(f), ErrorKind::shape, P + ".q_weight: has 128 columns, expected 256");

  f = source();
  auto& qs = f.header[P + ".q_scale"];
  const std::int64_t groups = qs["shape"][0];
  qs["shape"] = {groups * 2, 16};
  CHECK_THROWS_ERROR(load(f), ErrorKind::shape, P + ".q_scale: shape is");

  f = source();
  f.header[P + ".q_scale_max"]["dtype"] = "I16";
  CHECK_THROWS_ERROR(load(f), ErrorKind::shape, P + ".q_scale_max: dtype is I16, expected F16");

  f = source();
  f.header[P + ".q_groups"]["dtype"] = "F16";
  CHECK_THROWS_ERROR(load(f), ErrorKind::shape, P + ".q_groups");

  // The layer's expected width differs from the file (e.g. a config for another model).
  CHECK_THROWS_ERROR(load(source(), 256, 512), ErrorKind::shape, P + ".q_weight");
  CHECK_THROWS_ERROR(load(source(), 288, 256), ErrorKind::shape, P + ".q_invperm");
}

EXL_TEST(format_bad_input, exl2_missing_tensors) {
  StFile f = source();
  f.header.erase(P + ".q_scale");
  CHECK_THROWS_ERROR(load(f), ErrorKind::missing_tensor, P + ".q_scale");
  f = source();
  for (const char* part : {".q_weight", ".q_scale", ".q_scale_max", ".q_groups", ".q_invperm"}) f.header.erase(P + part);
  CHECK_THROWS_ERROR(load(f), ErrorKind::missing_tensor, P + ".q_weight (EXL2)");
}

EXL_TEST(format_bad_input, exl2_bias) {
  StFile f = source();
  const std::uint64_t end = f.data.size();
  f.data.append(512, '\0');
  f.header[P + ".bias"] = {{"dtype", "F16"}, {"shape", {256}}, {"data_offsets", {end, end + 512}}};
  {
    TempDir dir;
    f.write(dir / "output.safetensors");
    const auto store = exl::TensorStore::open_dir(dir.path());
    const auto l = exl::load_linear(store, P, 256, 256);
    CHECK(l.bias != nullptr);
    CHECK(l.exl2->bias == l.bias);
  }
  f.header[P + ".bias"] = {{"dtype", "F16"}, {"shape", {128, 2}}, {"data_offsets", {end, end + 512}}};
  CHECK_THROWS_ERROR(load(f), ErrorKind::shape, P + ".bias: shape is [128,2]");
  f.header[P + ".bias"] = {{"dtype", "F32"}, {"shape", {128}}, {"data_offsets", {end, end + 512}}};
  CHECK_THROWS_ERROR(load(f), ErrorKind::shape, P + ".bias: dtype is F32");
  // Data the file leaves misaligned for its element type (writers that do not pad the header, as
  // ExLlamaV3's) is read from an aligned copy of the same bytes.
  f.data.append(2, '\0');
  for (std::size_t i = 0; i < 512; ++i) f.data[end + 1 + i] = char(i * 7 + 1);
  f.header[P + ".bias"] = {{"dtype", "F16"}, {"shape", {256}}, {"data_offsets", {end + 1, end + 513}}};
  {
    TempDir dir;
    f.write(dir / "output.safetensors");
    const auto store = exl::TensorStore::open_dir(dir.path());
    const auto l = exl::load_linear(store, P, 256, 256);
    CHECK(l.bias != nullptr);
    const exl::TensorInfo& b = store.get(P + ".bias");
    CHECK(reinterpret_cast<std::uintptr_t>(b.data) % 2 == 0);
    CHECK(std::memcmp(b.data, f.data.data() + end + 1, 512) == 0);
  }
}
