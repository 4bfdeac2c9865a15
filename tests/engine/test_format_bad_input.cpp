// Corrupted safetensors files, shard indexes and configs, built from real fixture bytes: each
// must give a typed exl::Error whose message names the file and the tensor or field.
#include <string>

#include "exl/error.h"
#include "exl/model_config.h"
#include "exl/tensor_store.h"
#include "exl_test.h"
#include "test_format_support.h"

namespace {

using exl::ErrorKind;
using exl::test::StFile;
using exl::test::TempDir;

const char* norm0 = "model.layers.0.input_layernorm.weight";
const char* norm1 = "model.layers.0.post_attention_layernorm.weight";

StFile ref_xs() { return StFile::read(exl::test::fixture("models/hf/ref-xs/model.safetensors")); }

// Writes `f` as model.safetensors in a fresh folder and opens that folder.
void open_written(const StFile& f) {
  TempDir dir;
  f.write(dir / "model.safetensors");
  (void)exl::TensorStore::open_dir(dir.path());
}

}  // namespace

EXL_TEST(format_bad_input, unmodified_copy_opens) {
  TempDir dir;
  ref_xs().write(dir / "model.safetensors");
  const auto store = exl::TensorStore::open_dir(dir.path());
  CHECK_EQ(store.names().size(), std::size_t(20));
}

EXL_TEST(format_bad_input, header_length_past_end_of_file) {
  TempDir dir;
  std::string bytes = ref_xs().bytes();
  bytes[5] = char(0x7f);  // length ~ 2^47
  exl::test::write_bytes(dir / "model.safetensors", bytes);
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, "model.safetensors: header length");
  exl::test::write_bytes(dir / "model.safetensors", bytes.substr(0, 5));
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, "too small");
}

EXL_TEST(format_bad_input, truncated_shard_names_file) {
  TempDir dir;
  const auto src = exl::test::fixture("models/hf/ref-s");
  const std::string shard = "model-00002-of-00003.safetensors";
  exl::test::link_folder(src, dir.path(), {shard});
  const std::string bytes = exl::test::read_bytes(src / shard);
  exl::test::write_bytes(dir / shard, bytes.substr(0, bytes.size() - 1000));
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, shard);
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, "past the data section");
  exl::test::write_bytes(dir / shard, bytes.substr(0, 100));  // cut inside the header
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, shard + ": header length");
}

EXL_TEST(format_bad_input, overlapping_offsets) {
  StFile f = ref_xs();
  f.header[norm1]["data_offsets"] = f.header[norm0]["data_offsets"];
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "overlap");
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, norm1);
  f = ref_xs();  // shifted by half a tensor
  const std::uint64_t b = f.header[norm0]["data_offsets"][0];
  f.header[norm1]["data_offsets"] = {b + 256, b + 768};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, norm0);
}

EXL_TEST(format_bad_input, out_of_range_offsets) {
  StFile f = ref_xs();
  const std::uint64_t size = f.data.size();
  f.header[norm0]["data_offsets"] = {size - 100, size + 412};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, norm0);
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "past the data section");
  f = ref_xs();
  f.header[norm0]["data_offsets"] = {600, 88};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "reversed");
  f.header[norm0]["data_offsets"] = {-2, 510};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "non-negative");
  f.header[norm0]["data_offsets"] = {0};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "two integers");
}

EXL_TEST(format_bad_input, dtype_shape_size_mismatch) {
  StFile f = ref_xs();
  f.header[norm0]["shape"] = {257};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, std::string(norm0) + ": dtype F16 x shape [257]");
  f = ref_xs();
  f.header[norm0]["dtype"] = "F32";
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "1024 bytes but data_offsets span 512");
  f = ref_xs();
  f.header[norm0]["shape"] = {-256};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, norm0);
  f.header[norm0]["shape"] = {256.0};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "non-negative integer");
  f.header[norm0]["shape"] = {std::uint64_t(1) << 62, 16};  // element count overflows
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "overflows");
}

EXL_TEST(format_bad_input, unknown_and_unsupported_dtypes) {
  StFile f = ref_xs();
  f.header[norm0]["dtype"] = "F8_E4M3";
  f.header[norm0]["shape"] = {512};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::unsupported, std::string(norm0) + ": dtype F8_E4M3");
  f.header[norm0]["dtype"] = "Q7";
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "unknown dtype 'Q7'");
  f.header[norm0].erase("dtype");
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "missing or non-string dtype");
}

EXL_TEST(format_bad_input, malformed_header_json) {
  TempDir dir;
  std::string bytes = ref_xs().bytes();
  bytes[8] = '#';
  exl::test::write_bytes(dir / "model.safetensors", bytes);
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, "malformed header JSON at byte 1");
  StFile f = ref_xs();
  f.header["__metadata__"] = {{"format", 1}};
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "__metadata__");
  f = ref_xs();
  f.header = nlohmann::json::array({1, 2});
  CHECK_THROWS_ERROR(open_written(f), ErrorKind::format, "not a JSON object");
}

EXL_TEST(format_bad_input, missing_tensor) {
  StFile f = ref_xs();
  f.header.erase(norm0);
  TempDir dir;
  f.write(dir / "model.safetensors");
  const auto store = exl::TensorStore::open_dir(dir.path());
  CHECK_THROWS_ERROR(store.get(norm0), ErrorKind::missing_tensor, norm0);
  CHECK_THROWS_ERROR(store.get(norm0), ErrorKind::missing_tensor, "model.safetensors");
}

EXL_TEST(format_bad_input, missing_shard_named_by_index) {
  TempDir dir;
  exl::test::link_folder(exl::test::fixture("models/hf/ref-s"), dir.path(), {"model-00003-of-00003.safetensors"});
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::io, "model-00003-of-00003.safetensors");
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::io, "model.safetensors.index.json");
}

EXL_TEST(format_bad_input, index_lists_tensor_not_in_its_shard) {
  TempDir dir;
  const auto src = exl::test::fixture("models/hf/ref-s");
  exl::test::link_folder(src, dir.path(), {"model.safetensors.index.json"});
  auto index = nlohmann::json::parse(exl::test::read_bytes(src / "model.safetensors.index.json"));
  index["weight_map"]["lm_head.weight"] = "model-00001-of-00003.safetensors";
  exl::test::write_bytes(dir / "model.safetensors.index.json", index.dump());
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::missing_tensor, "lm_head.weight");
  index["weight_map"]["lm_head.weight"] = "../elsewhere.safetensors";
  exl::test::write_bytes(dir / "model.safetensors.index.json", index.dump());
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, "leaves the model folder");
  exl::test::write_bytes(dir / "model.safetensors.index.json", "{\"weight_map\": [");
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, "model.safetensors.index.json");
}

EXL_TEST(format_bad_input, duplicate_tensor_across_shards) {
  TempDir dir;
  const StFile f = ref_xs();
  f.write(dir / "a.safetensors");
  f.write(dir / "b.safetensors");
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, "stored twice");
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::format, "a.safetensors");
}

EXL_TEST(format_bad_input, empty_or_missing_folder) {
  TempDir dir;
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir.path()), ErrorKind::io, "no *.safetensors");
  CHECK_THROWS_ERROR(exl::TensorStore::open_dir(dir / "absent"), ErrorKind::io, "absent");
  CHECK_THROWS_ERROR(exl::read_model_config(dir.path()), ErrorKind::io, "config.json");
}

EXL_TEST(format_bad_input, unsupported_model_type_in_config_file) {
  TempDir dir;
  const auto src = exl::test::fixture("models/hf/ref-xs");
  auto cfg = nlohmann::json::parse(exl::test::read_bytes(src / "config.json"));
  cfg["model_type"] = "gpt_neox";
  exl::test::write_bytes(dir / "config.json", cfg.dump(2));
  CHECK_THROWS_ERROR(exl::read_model_config(dir.path()), ErrorKind::unsupported, "config.json: model_type");
  CHECK_THROWS_ERROR(exl::read_model_config(dir.path()), ErrorKind::unsupported, "gpt_neox");
}

EXL_TEST(format_bad_input, malformed_config_json) {
  TempDir dir;
  const std::string text = exl::test::read_bytes(exl::test::fixture("models/hf/ref-xs/config.json"));
  exl::test::write_bytes(dir / "config.json", text.substr(0, 200));
  CHECK_THROWS_ERROR(exl::read_model_config(dir.path()), ErrorKind::config, "config.json: malformed JSON at byte");
  exl::test::write_bytes(dir / "config.json", text);
  exl::test::write_bytes(dir / "generation_config.json", "{\"eos_token_id\": [1,}");
  CHECK_THROWS_ERROR(exl::read_model_config(dir.path()), ErrorKind::config, "generation_config.json: malformed JSON");
  exl::test::write_bytes(dir / "generation_config.json", R"({"eos_token_id": [8185, 8187]})");
  const auto c = exl::read_model_config(dir.path());
  CHECK_EQ(c.eos_token_ids.size(), std::size_t(2));
  CHECK_EQ(c.eos_token_ids[1], 8187);
}
