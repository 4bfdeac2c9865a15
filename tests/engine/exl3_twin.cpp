#include "exl3_twin.h"

#include <cmath>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "exl/kernels/exl3.h"
#include "exl/kernels/half.h"
#include "exl/safetensors_writer.h"
#include "exl/tensor_store.h"
#include "exl_test.h"
#include "test_format_support.h"

namespace exl::test {
namespace {

struct LayerSpec {
  int bits2;
  Exl3Codebook cb;
};

// Unnormalized 128-point Walsh-Hadamard transform (natural order) of v[0], v[stride], ... in double.
void fwht128(double* v, std::size_t stride) {
  for (int len = 1; len < 128; len *= 2)
    for (int i = 0; i < 128; i += 2 * len)
      for (int j = i; j < i + len; ++j) {
        const double a = v[std::size_t(j) * stride], b = v[std::size_t(j + len) * stride];
        v[std::size_t(j) * stride] = a + b;
        v[std::size_t(j + len) * stride] = a - b;
      }
}

// W = diag(suh) H W-hat H diag(svh) / 128 (H per 128-block on both sides), in double, returned in
// HF layout [n][k] as fp32.
std::vector<float> exact_weight(const Exl3Weight& w) {
  std::vector<half_bits> what(std::size_t(w.k) * w.n);
  exl3_reconstruct_cpu(w, what.data());  // equal to exl3_reconstruct_ref (exl3_cpu tests)
  std::vector<double> u(what.size());
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = half_to_float(what[i]);
  for (int c = 0; c < w.n; ++c)
    for (int a0 = 0; a0 < w.k; a0 += 128) fwht128(u.data() + std::size_t(a0) * w.n + c, std::size_t(w.n));
  for (int a = 0; a < w.k; ++a)
    for (int b0 = 0; b0 < w.n; b0 += 128) fwht128(u.data() + std::size_t(a) * w.n + b0, 1);
  std::vector<float> out(u.size());
  for (int b = 0; b < w.n; ++b)
    for (int a = 0; a < w.k; ++a)
      out[std::size_t(b) * w.k + a] =
          float(u[std::size_t(a) * w.n + b] / 128.0 * half_to_float(w.suh[a]) * half_to_float(w.svh[b]));
  return out;
}

}  // namespace

namespace {

Exl3Twin make_twin(const std::filesystem::path& root) {
  const auto hf = fixture("models/hf/ref-s");
  Exl3Twin tw{root / "exl3", root / "dense"};
  std::filesystem::create_directories(tw.exl3);
  std::filesystem::create_directories(tw.dense);
  const TensorStore src = TensorStore::open_dir(hf);
  std::vector<TensorData> common;
  for (const std::string& name : src.names()) {
    if (name.find("_proj") != std::string::npos || name == "lm_head.weight") continue;
    const TensorInfo& t = src.get(name);
    common.push_back(make_tensor(name, t.dtype, t.shape, t.data, t.nbytes));
  }
  std::vector<TensorData> q = common, d = common;
  std::mt19937 rng(4545);
  const LayerSpec specs[] = {{4, Exl3Codebook::mul1}, {5, Exl3Codebook::mul1}, {6, Exl3Codebook::mcg},
                             {8, Exl3Codebook::inst3}, {3, Exl3Codebook::mul1}, {12, Exl3Codebook::mul1}};
  struct Lin { std::string name; int k, n; };
  std::vector<std::pair<Lin, LayerSpec>> lins;
  for (int l = 0; l < 6; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const LayerSpec s = specs[l];
    for (const Lin& li : {Lin{p + "self_attn.q_proj", 384, 384}, Lin{p + "self_attn.k_proj", 384, 128},
                          Lin{p + "self_attn.v_proj", 384, 128}, Lin{p + "self_attn.o_proj", 384, 384},
                          Lin{p + "mlp.gate_proj", 384, 1024}, Lin{p + "mlp.up_proj", 384, 1024},
                          Lin{p + "mlp.down_proj", 1024, 384}})
      lins.push_back({li, s});
  }
  lins.push_back({Lin{"lm_head", 384, 8192}, LayerSpec{16, Exl3Codebook::mul1}});
  for (const auto& [li, s] : lins) {
    const int k = li.k, n = li.n;
    Exl3Weight w;
    w.k = k;
    w.n = n;
    w.bits2 = s.bits2;
    w.codebook = s.cb;
    std::vector<std::uint16_t> tr(std::size_t(k / 16) * (n / 16) * w.tile_words());
    for (auto& v : tr) v = std::uint16_t(rng());
    // Scales so that W's entries are about 0.7 / sqrt(k) (the codebooks have unit-ish spread).
    const float mag = std::sqrt(0.7f / std::sqrt(float(k)));
    std::uniform_real_distribution<float> jitter(0.7f, 1.3f);
    std::vector<half_bits> suh(static_cast<std::size_t>(k)), svh(static_cast<std::size_t>(n));
    for (auto& v : suh) v = float_to_half((rng() & 1 ? -mag : mag) * jitter(rng));
    for (auto& v : svh) v = float_to_half((rng() & 1 ? -mag : mag) * jitter(rng));
    const bool legacy = li.name == "model.layers.2.self_attn.k_proj";  // packed sign words, unit scales
    if (legacy) {  // unit input signs (what packed words can hold); the output side carries both scales
      for (auto& v : suh) v = (v & 0x8000) ? 0xBC00 : 0x3C00;
      for (auto& v : svh) v = float_to_half(half_to_float(v) * mag);
    }
    w.trellis = tr.data();
    w.suh = suh.data();
    w.svh = svh.data();
    const std::int64_t tiles[3] = {k / 16, n / 16, w.tile_words()};
    q.push_back(make_tensor(li.name + ".trellis", DType::i16, {tiles[0], tiles[1], tiles[2]}, tr.data(), tr.size()));
    if (legacy) {
      // su (input signs, unit magnitude) as packed words; svh kept unpacked with scales.
      std::vector<std::uint16_t> su(std::size_t(k / 16), 0);
      for (int i = 0; i < k; ++i)
        if (suh[std::size_t(i)] & 0x8000) su[std::size_t(i / 16)] |= std::uint16_t(1u << (i % 16));
      q.push_back(make_tensor(li.name + ".su", DType::i16, {k / 16}, su.data(), su.size()));
    } else {
      q.push_back(make_tensor(li.name + ".suh", DType::f16, {k}, suh.data(), suh.size()));
    }
    q.push_back(make_tensor(li.name + ".svh", DType::f16, {n}, svh.data(), svh.size()));
    if (s.cb != Exl3Codebook::inst3) {
      const std::uint32_t m = s.cb == Exl3Codebook::mcg ? 0xCBAC1FEDu : 0x83DCD12Du;
      q.push_back(make_tensor(li.name + (s.cb == Exl3Codebook::mcg ? ".mcg" : ".mul1"), DType::i32, {}, &m, 1));
    }
    const std::vector<float> dense = exact_weight(w);
    d.push_back(make_tensor(li.name + ".weight", DType::f32, {n, k}, dense.data(), dense.size()));
  }
  write_safetensors(tw.exl3 / "model.safetensors", q);
  write_safetensors(tw.dense / "model.safetensors", d);
  auto cfg = nlohmann::json::parse(read_bytes(hf / "config.json"));
  write_bytes(tw.dense / "config.json", cfg.dump(1));
  cfg["quantization_config"] = {{"quant_method", "exl3"}, {"bits", 0}, {"head_bits", 8}, {"codebook", "mul1"}};
  write_bytes(tw.exl3 / "config.json", cfg.dump(1));
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
    for (const auto& dir : {tw.exl3, tw.dense}) std::filesystem::copy_file(hf / f, dir / f);
  return tw;
}

}  // namespace

const Exl3Twin& exl3_twin() {
  static std::mutex mu;
  static std::unique_ptr<TempDir> dir;
  static Exl3Twin twin;
  std::lock_guard<std::mutex> lock(mu);
  if (!dir) {
    fixture("models/hf/ref-s");  // skips without fixtures
    auto d = std::make_unique<TempDir>("exl3_twin");
    twin = make_twin(d->path());
    dir = std::move(d);
  }
  return twin;
}

}  // namespace exl::test
