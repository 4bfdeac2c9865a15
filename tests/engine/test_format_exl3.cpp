// EXL3 model folders. The random-weight EXL3 model of exl3_twin.h (every rate and codebook, legacy
// packed signs) loads with each layer at the rate and codebook it was written with, and corrupted
// copies of it (truncated tensor, wrong bit rate, missing sign vector, shapes off the tile grid,
// codebook markers, config fields disagreeing with the tensors) give a typed exl::Error naming the
// file and the tensor or field. With ExLlamaV3's reference models present (tests/data/exl3, made
// by bench/exl3-device.sh on a GPU machine) the real files load the same way and every tensor's W-hat
// equals ExLlamaV3's (checksums of its reconstruct kernel's output); without them those cases skip.
#include <cmath>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "exl/error.h"
#include "exl/kernels/exl3.h"
#include "exl/model.h"
#include "exl/tensor_store.h"
#include "exl3_checks.h"
#include "exl3_twin.h"
#include "exl_test.h"
#include "test_format_support.h"

using namespace exl;
using exl::test::StFile;
using exl::test::TempDir;

namespace {

const std::string P = "model.layers.0.self_attn.q_proj";  // 384 -> 384, 2 bits, mul1 in the twin

nlohmann::json manifest() {
  std::ifstream in(test::exl3_data_dir() / "refs" / "manifest.json");
  return nlohmann::json::parse(in);
}

// The checksum make_refs.py records: sum of bits[i] * (((i * 2654435761) mod 2^32) + 1) mod 2^64.
std::string checksum(const std::vector<half_bits>& v) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < v.size(); ++i) s += std::uint64_t(v[i]) * (((std::uint64_t(i) * 2654435761u) & 0xFFFFFFFFu) + 1);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(s));
  return buf;
}

// A copy of model M whose shard holding `tensor` is replaced by `edit(shard)`; returns the folder.
struct Edited {
  TempDir dir{"exl3_bad"};
  std::string shard;
};
template <class F>
std::unique_ptr<Edited> edit_shard(const std::string& tensor, F edit) {
  const auto src = test::exl3_twin().exl3;
  std::string shard;
  {
    const TensorStore store = TensorStore::open_dir(src);
    shard = std::filesystem::path(store.get(tensor).file).filename().string();
  }
  auto ed = std::make_unique<Edited>();
  ed->shard = shard;
  test::link_folder(src, ed->dir.path(), {shard});
  StFile f = StFile::read(src / shard);
  edit(f);
  f.write(ed->dir / shard);
  return ed;
}

void rename_tensor(StFile& f, const std::string& from, const std::string& to) {
  f.header[to] = f.header[from];
  f.header.erase(from);
}

// Moves `name` to a fresh byte range of `bytes` bytes at the end of the data section (zero-filled
// past its old contents) and gives it `shape`.
void relocate(StFile& f, const std::string& name, const std::vector<std::int64_t>& shape, std::size_t bytes) {
  auto& t = f.header[name];
  const std::size_t b = t["data_offsets"][0], e = t["data_offsets"][1];
  std::string blob = f.data.substr(b, e - b);
  blob.resize(bytes, '\0');
  t["shape"] = shape;
  t["data_offsets"] = {f.data.size(), f.data.size() + bytes};
  f.data += blob;
}

}  // namespace

EXL_TEST(format_exl3, random_model_loads_every_rate_and_codebook) {
  const auto model = Model::open(test::exl3_twin().exl3);
  const int bits2[] = {4, 5, 6, 8, 3, 12};
  const Exl3Codebook cbs[] = {Exl3Codebook::mul1, Exl3Codebook::mul1, Exl3Codebook::mcg,
                              Exl3Codebook::inst3, Exl3Codebook::mul1, Exl3Codebook::mul1};
  for (std::size_t i = 0; i < 6; ++i) {
    const LayerTensors& l = model->layers()[i];
    for (const LinearTensors* t : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) {
      CHECK(t->kind == LinearKind::exl3);
      CHECK_EQ(t->exl3->view.bits2, bits2[i]);
      CHECK(t->exl3->view.codebook == cbs[i]);
    }
  }
  // Layer 2's k_proj stores its input signs as legacy packed words (su): unpacked to +-1.
  const Exl3Weight& kp = model->layers()[2].k.exl3->view;
  for (int i = 0; i < kp.k; ++i) CHECK(kp.suh[i] == 0x3C00 || kp.suh[i] == 0xBC00);
  CHECK_EQ(model->head().exl3->view.bits2, 16);
  const ModelSummary s = model->summary();
  CHECK_EQ(s.format, std::string("exl3"));
  CHECK_NEAR(s.head_bpw, 8.0 + (16.0 * (384 + 8192) + 32) / (384.0 * 8192), 1e-9);  // trellis, suh/svh, marker
}

EXL_TEST(format_exl3, real_models_load_as_exl3) {
  const auto names = test::exl3_model_names();  // skips without the references
  const auto man = manifest();
  for (const std::string& name : names) {
    const auto model = Model::open(test::exl3_model_dir(name));
    const auto& tensors = man["models"][name]["tensors"];
    auto check = [&](const LinearTensors& l, const std::string& key) {
      CHECK_MSG(l.kind == LinearKind::exl3, name << " " << key);
      const auto& t = tensors.at(key);
      CHECK_MSG(std::fabs(l.exl3->bits_per_weight() - t["K"].get<double>()) < 1e-9, name << " " << key);
      CHECK_EQ(std::string(exl3_codebook_name(l.exl3->view.codebook)), t["codebook"].get<std::string>());
    };
    int n = 0;
    for (std::size_t i = 0; i < model->layers().size(); ++i) {
      const LayerTensors& l = model->layers()[i];
      const std::string p = "model.layers." + std::to_string(i) + ".";
      check(l.q, p + "self_attn.q_proj"); check(l.k, p + "self_attn.k_proj"); check(l.v, p + "self_attn.v_proj");
      check(l.o, p + "self_attn.o_proj"); check(l.gate, p + "mlp.gate_proj"); check(l.up, p + "mlp.up_proj");
      check(l.down, p + "mlp.down_proj");
      n += 7;
    }
    check(model->head(), "lm_head");
    CHECK_EQ(std::size_t(n + 1), tensors.size());
    const ModelSummary s = model->summary();
    CHECK(s.quantized);
    CHECK_EQ(s.format, std::string("exl3"));
    CHECK_EQ(model->config().quantization->method, std::string("exl3"));
    CHECK_NEAR(s.head_bpw, man["models"][name]["tensors"]["lm_head"]["K"].get<double>(), 0.2);
  }
}

// Every tensor of every reference model decodes to ExLlamaV3's W-hat, bit for bit.
EXL_TEST(format_exl3, every_tensor_reconstructs_bit_exact) {
  const auto names = test::exl3_model_names();  // skips without the references
  const auto man = manifest();
  int tensors = 0;
  for (const std::string& name : names) {
    const TensorStore store = TensorStore::open_dir(test::exl3_model_dir(name));
    for (const auto& [key, t] : man["models"][name]["tensors"].items()) {
      const TensorInfo& tr = store.get(key + ".trellis");
      const auto l = load_exl3(store, key, int(tr.shape[0]) * 16, int(tr.shape[1]) * 16);
      std::vector<half_bits> w(std::size_t(l->view.k) * l->view.n);
      exl3_reconstruct_cpu(l->view, w.data());
      CHECK_MSG(checksum(w) == t["what_checksum"].get<std::string>(), name << " " << key << ": W-hat differs from ExLlamaV3's");
      ++tensors;
    }
  }
  CHECK(tensors >= 5 * 43);
}

// The naive reference decoder on real tensors against ExLlamaV3's stored W-hat values.
EXL_TEST(format_exl3, reference_decoder_on_real_tensors) {
  for (const std::string& name : test::exl3_model_names()) {
    const TensorStore store = TensorStore::open_dir(test::exl3_model_dir(name));
    const auto refs = SafetensorsFile::open(test::exl3_data_dir() / "refs" / ("weights_" + name + ".safetensors"));
    auto ref = [&](const std::string& n) -> const TensorInfo& {
      for (const auto& t : refs->tensors())
        if (t.name == n) return t;
      test::fail(__FILE__, __LINE__, "missing " + n);
    };
    const auto kp = load_exl3(store, "model.layers.0.self_attn.k_proj", 384, 128);
    std::vector<half_bits> w(std::size_t(kp->view.k) * kp->view.n);
    exl3_reconstruct_ref(kp->view, w.data());
    CHECK(std::memcmp(w.data(), ref("what.k_proj").data, w.size() * 2) == 0);
    // The head's first 128 columns: a view of 8 tile columns.
    const auto head = load_exl3(store, "lm_head", 384, 8192);
    std::vector<std::uint16_t> sub;
    const int tw = head->view.tile_words(), tn = head->view.n / 16;
    for (int i = 0; i < head->view.k / 16; ++i)
      sub.insert(sub.end(), head->view.trellis + std::int64_t(i) * tn * tw, head->view.trellis + (std::int64_t(i) * tn + 8) * tw);
    Exl3Weight hv = head->view;
    hv.trellis = sub.data();
    hv.n = 128;
    std::vector<half_bits> hw(std::size_t(hv.k) * 128);
    exl3_reconstruct_ref(hv, hw.data());
    CHECK(std::memcmp(hw.data(), ref("what.lm_head_cols0_128").data, hw.size() * 2) == 0);
  }
}

EXL_TEST(format_exl3, missing_sign_vector) {
  auto ed = edit_shard(P + ".suh", [](StFile& f) { rename_tensor(f, P + ".suh", P + ".suh_"); });
  CHECK_THROWS_ERROR(Model::open(ed->dir.path()), ErrorKind::missing_tensor, ed->shard + ": " + P + ".suh");
  CHECK_THROWS_ERROR(Model::open(ed->dir.path()), ErrorKind::missing_tensor, "no input sign vector");
  auto e2 = edit_shard(P + ".svh", [](StFile& f) { rename_tensor(f, P + ".svh", P + ".svh_"); });
  CHECK_THROWS_ERROR(Model::open(e2->dir.path()), ErrorKind::missing_tensor, e2->shard + ": " + P + ".svh");
}

EXL_TEST(format_exl3, truncated_tensor) {
  // The trellis' byte range cut short: the safetensors header no longer matches its shape.
  auto ed = edit_shard(P + ".trellis", [](StFile& f) {
    auto& off = f.header[P + ".trellis"]["data_offsets"];
    off[1] = off[1].get<std::uint64_t>() - 64;
  });
  CHECK_THROWS_ERROR(Model::open(ed->dir.path()), ErrorKind::format, ed->shard);
  CHECK_THROWS_ERROR(Model::open(ed->dir.path()), ErrorKind::format, P + ".trellis");
  // The file itself cut short inside the data section.
  TempDir d("exl3_trunc");
  const auto src = test::exl3_twin().exl3;
  std::string shard;
  {
    const TensorStore store = TensorStore::open_dir(src);
    shard = std::filesystem::path(store.get(P + ".trellis").file).filename().string();
  }
  test::link_folder(src, d.path(), {shard});
  std::string bytes = test::read_bytes(src / shard);
  bytes.resize(bytes.size() - 100);
  test::write_bytes(d / shard, bytes);
  CHECK_THROWS_ERROR(Model::open(d.path()), ErrorKind::format, shard);
}

EXL_TEST(format_exl3, wrong_bit_rate) {
  // A tile width that is no bit rate: 9 words per 8 (4.5 bits) over a shortened byte range.
  auto ed = edit_shard(P + ".trellis", [](StFile& f) { relocate(f, P + ".trellis", {24, 24, 72}, 24ull * 24 * 72 * 2); });
  CHECK_THROWS_ERROR(Model::open(ed->dir.path()), ErrorKind::shape, ed->shard + ": " + P + ".trellis");
  CHECK_THROWS_ERROR(Model::open(ed->dir.path()), ErrorKind::shape, "tile width 72 words is no bit rate");
  // A half-integer width with a codebook that has none (the marker removed: 3INST).
  auto e2 = edit_shard(P + ".trellis", [](StFile& f) {
    relocate(f, P + ".trellis", {24, 24, 40}, 24ull * 24 * 40 * 2);
    rename_tensor(f, P + ".mul1", P + ".mul1_");
  });
  CHECK_THROWS_ERROR(Model::open(e2->dir.path()), ErrorKind::unsupported, "no bit rate of the 3inst codebook");
  // config.json's head_bits / bits disagreeing with the tensors.
  for (const char* field : {"head_bits", "bits"}) {
    TempDir d("exl3_cfg");
    const auto src = test::exl3_twin().exl3;
    test::link_folder(src, d.path(), {"config.json"});
    auto cfg = nlohmann::json::parse(test::read_bytes(src / "config.json"));
    cfg["quantization_config"][field] = 5;
    test::write_bytes(d / "config.json", cfg.dump());
    CHECK_THROWS_ERROR(Model::open(d.path()), ErrorKind::config, std::string("quantization_config.") + field);
  }
}

EXL_TEST(format_exl3, shape_off_the_tile_grid) {
  // The same bytes seen as 48 x 12 tiles: they do not cover 384 x 384.
  auto ed = edit_shard(P + ".trellis", [](StFile& f) {
    auto& s = f.header[P + ".trellis"]["shape"];
    s[0] = 48;
    s[1] = 12;
  });
  CHECK_THROWS_ERROR(Model::open(ed->dir.path()), ErrorKind::shape, ed->shard + ": " + P + ".trellis");
  CHECK_THROWS_ERROR(Model::open(ed->dir.path()), ErrorKind::shape, "do not cover 384 x 384");
  // A sign vector whose length is not the padded feature count.
  auto e2 = edit_shard(P + ".suh", [](StFile& f) {
    auto& t = f.header[P + ".suh"];
    t["shape"][0] = 376;
    t["data_offsets"][1] = t["data_offsets"][0].get<std::uint64_t>() + 376 * 2;
  });
  CHECK_THROWS_ERROR(Model::open(e2->dir.path()), ErrorKind::shape, e2->shard + ": " + P + ".suh");
}

EXL_TEST(format_exl3, codebook_markers) {
  auto ed = edit_shard(P + ".mul1", [](StFile& f) { f.set<std::int32_t>(P + ".mul1", 0, 12345); });
  CHECK_THROWS_ERROR(Model::open(ed->dir.path()), ErrorKind::unsupported, ed->shard + ": " + P + ".mul1");
  auto e2 = edit_shard(P + ".mul1", [](StFile& f) {
    f.header[P + ".mcg"] = f.header[P + ".mul1"];
    relocate(f, P + ".mcg", {}, 4);
  });
  CHECK_THROWS_ERROR(Model::open(e2->dir.path()), ErrorKind::format, "both codebook markers");
  auto e3 = edit_shard(P + ".trellis", [](StFile& f) { f.header[P + ".trellis"]["dtype"] = "F16"; });
  CHECK_THROWS_ERROR(Model::open(e3->dir.path()), ErrorKind::shape, "dtype is F16, expected I16");
}
