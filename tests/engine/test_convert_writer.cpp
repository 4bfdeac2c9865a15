// Converter: the safetensors writer (round trip through our reader, shards, atomicity, errors)
// and the bit accounting of §7.6 against the worked example and the fixture models.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <nlohmann/json.hpp>

#include "exl/convert.h"
#include "exl/error.h"
#include "exl/kernels/exl2.h"
#include "exl/safetensors_writer.h"
#include "exl/tensor_store.h"
#include "exl_test.h"

namespace fs = std::filesystem;
using namespace exl;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("exl_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::vector<TensorData> sample_tensors() {
  std::mt19937 rng(7);
  std::vector<TensorData> ts;
  std::vector<half_bits> h(3 * 5);
  for (auto& v : h) v = float_to_half(std::uniform_real_distribution<float>(-2, 2)(rng));
  ts.push_back(make_tensor("b.weight", DType::f16, {3, 5}, h.data(), h.size()));  // 30 bytes: next needs padding
  std::vector<std::int32_t> iv(7);
  for (auto& v : iv) v = std::int32_t(rng());
  ts.push_back(make_tensor("a.q_weight", DType::i32, {7}, iv.data(), iv.size()));
  std::vector<std::int16_t> sv = {4, 0, 3, 4, -1};
  ts.push_back(make_tensor("c.q_groups", DType::i16, {5}, sv.data(), sv.size()));
  std::vector<float> fv = {1.5f, -0.25f};
  ts.push_back(make_tensor("d.scale", DType::f32, {1, 2}, fv.data(), fv.size()));
  return ts;
}

void check_same(const TensorInfo& got, const TensorData& want) {
  CHECK(got.dtype == want.dtype);
  CHECK(got.shape == want.shape);
  CHECK_EQ(got.nbytes, want.bytes.size());
  CHECK(std::memcmp(got.data, want.bytes.data(), want.bytes.size()) == 0);
}

}  // namespace

EXL_TEST(convert, writer_round_trip) {
  const fs::path dir = fresh_dir("writer");
  const auto ts = sample_tensors();
  write_safetensors(dir / "x.safetensors", ts);
  auto f = SafetensorsFile::open(dir / "x.safetensors");
  CHECK_EQ(f->tensors().size(), ts.size());
  CHECK_EQ(f->metadata().at("format"), std::string("pt"));
  for (const TensorData& t : ts) {
    const TensorInfo* got = nullptr;
    for (const auto& i : f->tensors())
      if (i.name == t.name) got = &i;
    CHECK_MSG(got, t.name);
    check_same(*got, t);
  }
  // The header length is a multiple of 8; the data section is covered exactly, with no holes (the
  // `safetensors` library rejects a file with gaps between tensors), and every tensor starts at a
  // multiple of its element size.
  std::ifstream in(dir / "x.safetensors", std::ios::binary);
  std::uint64_t hlen = 0;
  in.read(reinterpret_cast<char*>(&hlen), 8);
  CHECK_EQ(hlen % 8, 0u);
  std::string header(hlen, ' ');
  in.read(header.data(), std::streamsize(hlen));
  const auto j = nlohmann::json::parse(header);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const TensorData& t : ts) {
    const std::uint64_t b = j[t.name]["data_offsets"][0].get<std::uint64_t>();
    CHECK_MSG(b % dtype_size(t.dtype) == 0, t.name << " at " << b);
    ranges.emplace_back(b, j[t.name]["data_offsets"][1].get<std::uint64_t>());
  }
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t end = 0;
  for (const auto& [b, e] : ranges) {
    CHECK_EQ(b, end);
    end = e;
  }
  CHECK_EQ(fs::file_size(dir / "x.safetensors"), 8 + hlen + end);
  // No temporary file remains.
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  CHECK_EQ(files, 1);
  fs::remove_all(dir);
}

EXL_TEST(convert, writer_shards_and_errors) {
  const fs::path dir = fresh_dir("shards");
  const auto ts = sample_tensors();
  const auto files = write_safetensors_shards(dir, ts, 32);  // 30 + 28 + 10 + 8 bytes -> 3 shards
  CHECK_EQ(files.size(), 3u);
  CHECK_EQ(files[0].filename().string(), std::string("output-00001-of-00003.safetensors"));
  CHECK_EQ(files[2].filename().string(), std::string("output-00003-of-00003.safetensors"));
  const TensorStore store = TensorStore::open_dir(dir);
  for (const TensorData& t : ts) check_same(store.get(t.name), t);
  const fs::path one = fresh_dir("one");
  CHECK_EQ(write_safetensors_shards(one, ts, 0).front().filename().string(), std::string("output.safetensors"));
  CHECK_THROWS_ERROR(write_safetensors_shards(one, ts, 16), ErrorKind::invalid_argument, "b.weight");
  auto dup = ts;
  dup.push_back(ts[0]);
  CHECK_THROWS_ERROR(write_safetensors(one / "dup.safetensors", dup), ErrorKind::invalid_argument, "duplicate");
  auto bad = ts;
  bad[1].shape = {8};
  CHECK_THROWS_ERROR(write_safetensors(one / "bad.safetensors", bad), ErrorKind::invalid_argument, "a.q_weight");
  CHECK(!fs::exists(one / "bad.safetensors"));
  CHECK_THROWS_ERROR(write_safetensors("/nonexistent_dir_exl/x.safetensors", ts), ErrorKind::io, "nonexistent");
  fs::remove_all(dir);
  fs::remove_all(one);
}

EXL_TEST(convert, bits_worked_example) {
  // §7.6: 4096 x 4096, 100 % 4-bit in groups of 128.
  const QuantOption o{{{4, 1.0, 128}}};
  CHECK_EQ(linear_total_bits(o, 4096, 4096), std::uint64_t(67765760));
  CHECK_NEAR(double(linear_total_bits(o, 4096, 4096)) / (4096.0 * 4096.0), 4.0392, 1e-4);
  // ExLlamaV2's log for ref-xs q_proj (256 x 256): "1:4b_128g s4  4.16 bpw", "0.05:3b_64g/0.95:2b_64g 2.44 bpw".
  CHECK_NEAR(double(linear_total_bits(o, 256, 256)) / 65536.0, 4.16, 0.005);
  const QuantOption low{{{3, 0.05, 64}, {2, 0.95, 64}}};
  CHECK_NEAR(double(linear_total_bits(low, 256, 256)) / 65536.0, 2.44, 0.005);
  CHECK_EQ(low.describe(), std::string("0.05:3b_64g/0.95:2b_64g s4"));
}

// Every option in ExLlamaV2's measurement of ref-s has the total_bits our formula gives, and the
// bits stored in ref-s-4.0bpw recompute to its decoder bpw.
EXL_TEST(convert, bits_match_fixture_models) {
  const fs::path dir = exl::test::fixture("models/exl2/ref-s-4.0bpw");
  const Measurement m = read_measurement(dir / "measurement.json");
  CHECK_EQ(m.blocks.size(), 12u);
  const int H = 384, Q = 6 * 64, KV = 2 * 64, I = 1024;
  auto dims = [&](const std::string& p) -> std::pair<int, int> {
    if (p == "q_proj") return {H, Q};
    if (p == "k_proj" || p == "v_proj") return {H, KV};
    if (p == "o_proj") return {Q, H};
    if (p == "down_proj") return {I, H};
    return {H, I};
  };
  int checked = 0;
  for (const MeasuredBlock& b : m.blocks) {
    CHECK_EQ(b.options.size(), b.key.ends_with("self_attn") ? 19u : 17u);
    for (std::size_t i = 0; i < b.options.size(); ++i) {
      const MeasuredOption& o = b.options[i];
      std::uint64_t bits = 0;
      for (const auto& [p, q] : o.option) bits += linear_total_bits(q, dims(p).first, dims(p).second);
      CHECK_MSG(bits == o.total_bits, b.key << " option " << i << ": " << bits << " vs " << o.total_bits);
      // Our tables list the same options in the same order.
      const auto& table = b.key.ends_with("self_attn") ? attention_options() : mlp_options();
      for (std::size_t p = 0; p < o.option.size(); ++p)
        CHECK(group_layout(table[i][p].second, dims(o.option[p].first).first).bits ==
              group_layout(o.option[p].second, dims(o.option[p].first).first).bits);
      ++checked;
    }
  }
  CHECK_EQ(checked, 6 * 36);
  // Recompute bits from the stored tensors.
  const TensorStore st = TensorStore::open_dir(dir);
  std::uint64_t bits = 0, numel = 0;
  for (const std::string& name : st.names()) {
    if (!name.ends_with(".q_groups") || name.starts_with("lm_head")) continue;
    const std::string p = name.substr(0, name.size() - 9);
    const TensorInfo& g = st.get(name);
    const TensorInfo& qw = st.get(p + ".q_weight");
    const int k = int(st.get(p + ".q_invperm").numel()), n = int(qw.shape[1]);
    GroupLayout lay;
    const int G = int(g.numel() / 2);
    for (int i = 0; i < G; ++i) {
      const int b = g.as<std::int16_t>()[2 * i];
      const int start = g.as<std::int16_t>()[2 * i + 1];
      const int end = i + 1 < G ? g.as<std::int16_t>()[2 * i + 3] : int(qw.shape[0]);
      lay.bits.push_back(b);
      lay.rows.push_back((end - start) * 32 / b);
    }
    const std::uint64_t stored = 32 * std::uint64_t(qw.numel()) + 32 * std::uint64_t(st.get(p + ".q_scale").numel()) +
                                 16 * std::uint64_t(G) + 32 * std::uint64_t(G) + 32 * std::uint64_t(k);
    CHECK_EQ(linear_total_bits(lay, k, n), stored);
    bits += stored;
    numel += std::uint64_t(k) * std::uint64_t(n);
  }
  const double bpw = double(bits) / double(numel);
  CHECK_MSG(bpw <= 4.0 && bpw > 3.9, "ref-s-4.0bpw decoder bpw " << bpw);
}
