// exl synth --format exl3 (engine/src/synth/synth_plan_exl3.cpp and the writer's EXL3 linears):
// bit rates over the real presets, the written folder against the EXL3 loader's checklist
// (trellis shapes, sign/scale vectors, codebook markers, quantization_config), a CPU forward,
// and the errors.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "exl/backend.h"
#include "exl/error.h"
#include "exl/generator.h"
#include "exl/model.h"
#include "exl/plan.h"
#include "exl/synth.h"
#include "exl/tensor_store.h"
#include "exl_test.h"

namespace fs = std::filesystem;
using namespace exl;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("exl_test_synth3_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

synth::SynthResult write3(const std::string& preset, double bpw, int head_bits, const fs::path& dir, std::uint64_t seed = 1) {
  synth::SynthOptions o;
  o.preset = preset;
  o.bpw = bpw;
  o.head_bits = head_bits;
  o.output_dir = dir;
  o.seed = seed;
  o.format = synth::SynthFormat::exl3;
  return synth::synth_model(o);
}

// The trellis average as ExLlamaV3's `bits` counts it: K·k·n over the decoder linears.
double nominal_bits(const synth::SynthPlan& p) {
  double bits = 0, weights = 0;
  for (const synth::LinearPlan& l : p.decoder) {
    bits += 0.5 * l.exl3_bits2 * double(l.k) * double(l.n);
    weights += double(l.k) * double(l.n);
  }
  return bits / weights;
}

}  // namespace

EXL_TEST(synth_exl3, plan_hits_bpw_for_every_preset) {
  for (const std::string name : {"tinyllama-1.1b", "llama3.2-1b", "llama3-8b", "mistral-7b", "qwen2.5-7b", "qwen3-8b"}) {
    const ModelConfig c = plan::preset_config(name);
    for (int step = 0; step <= 32; ++step) {
      const double t = std::min(8.0, 1.6 + 0.2 * step);
      const synth::SynthPlan p = synth::plan_synth_exl3(c, t, 6);
      CHECK_EQ(p.decoder.size(), std::size_t(7) * std::size_t(c.num_layers));
      CHECK_MSG(std::fabs(nominal_bits(p) - t) <= 0.02, name << " at " << t << ": " << nominal_bits(p));
      CHECK_NEAR(p.nominal_bpw, nominal_bits(p), 1e-9);
      CHECK_MSG(p.decoder_bpw > nominal_bits(p) && p.decoder_bpw < nominal_bits(p) + 0.1, name << " " << p.decoder_bpw);
      std::set<int> rates;
      for (const synth::LinearPlan& l : p.decoder) {
        CHECK_MSG(l.exl3_bits2 % 2 == 0 && l.exl3_bits2 >= 2 && l.exl3_bits2 <= 16, l.prefix << " " << l.exl3_bits2);
        // Within one bit of the request: no extreme rates on the small projections.
        CHECK_MSG(std::fabs(0.5 * l.exl3_bits2 - t) < 1.0 + 0.36, l.prefix << " " << l.exl3_bits2 << " at " << t);
        rates.insert(l.exl3_bits2);
      }
      if (t > 1.7 && t < 7.9) CHECK_MSG(rates.size() >= 2, name << " at " << t << ": one rate only");
      CHECK_EQ(p.head.exl3_bits2, 12);
    }
    CHECK_EQ(synth::plan_synth_exl3(c, 4.0, 16).head.exl3_bits2, 0);  // FP16 head
  }
}

EXL_TEST(synth_exl3, tiny_models_load_and_run) {
  struct Case { std::string preset; double bpw; int head; };
  for (const Case& cs : {Case{"test-tiny", 2.5, 6}, Case{"test-tiny", 4.0, 8}, Case{"test-tiny-qwen2", 3.0, 16}}) {
    const fs::path dir = fresh_dir("tiny");
    const synth::SynthResult r = write3(cs.preset, cs.bpw, cs.head, dir);
    CHECK(fs::exists(dir / "config.json") && !fs::exists(dir.string() + ".partial"));
    auto model = Model::open(dir);
    const ModelConfig& c = model->config();
    const ModelSummary s = model->summary();
    CHECK(s.quantized);
    CHECK_NEAR(s.average_bpw, r.decoder_bpw, 1e-6);
    const auto cfg = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    const auto& q = cfg["quantization_config"];
    CHECK(q["quant_method"] == "exl3" && q["codebook"] == "mul1" && q["head_bits"] == cs.head);
    // `bits` as ExLlamaV3 writes it: the allocated trellis average to 2 decimals (a 2-layer model
    // lands within a fraction of a bit of the request).
    const synth::SynthPlan plan = synth::plan_synth_exl3(c, cs.bpw, cs.head);
    CHECK_NEAR(double(q["bits"]), std::round(plan.nominal_bpw * 100.0) / 100.0, 1e-12);
    CHECK_NEAR(plan.nominal_bpw, cs.bpw, 0.5);
    CHECK(c.quantization && c.quantization->method == "exl3");
    // Every linear: trellis [k/16][n/16][16 K], suh [k], svh [n] (padded to 128), the mul1 marker.
    const TensorStore st = TensorStore::open_dir(dir);
    auto check_linear = [&](const std::string& p, int k, int n, bool bias) {
      const TensorInfo& tr = st.get(p + ".trellis");
      const std::int64_t kp = (k + 127) / 128 * 128, np = (n + 127) / 128 * 128;
      CHECK_MSG(tr.dtype == DType::i16 && tr.shape.size() == 3 && tr.shape[0] == kp / 16 && tr.shape[1] == np / 16, p);
      const std::int64_t words = tr.shape[2];
      CHECK_MSG(words % 16 == 0 && words >= 16 && words <= 128, p << " " << words);
      CHECK_MSG(st.get(p + ".suh").shape == std::vector<std::int64_t>{kp}, p);
      CHECK_MSG(st.get(p + ".svh").shape == std::vector<std::int64_t>{np}, p);
      const TensorInfo& m = st.get(p + ".mul1");
      CHECK_MSG(m.dtype == DType::i32 && m.shape.empty() && m.nbytes == 4, p);
      std::uint32_t mv = 0;
      std::memcpy(&mv, m.data, 4);
      CHECK_EQ(mv, 0x83DCD12Du);
      CHECK_MSG((st.find(p + ".bias") != nullptr) == bias, p);
      CHECK_MSG(st.find(p + ".mcg") == nullptr && st.find(p + ".weight") == nullptr, p);
    };
    const int h = c.hidden_size, qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
    for (int i = 0; i < c.num_layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".";
      check_linear(p + "self_attn.q_proj", h, qd, c.attention_bias);
      check_linear(p + "self_attn.k_proj", h, kvd, c.attention_bias);
      check_linear(p + "self_attn.v_proj", h, kvd, c.attention_bias);
      check_linear(p + "self_attn.o_proj", qd, h, false);
      check_linear(p + "mlp.gate_proj", h, c.intermediate_size, false);
      check_linear(p + "mlp.up_proj", h, c.intermediate_size, false);
      check_linear(p + "mlp.down_proj", c.intermediate_size, h, false);
    }
    if (cs.head == 16) {
      const TensorInfo& w = st.get("lm_head.weight");
      CHECK(w.dtype == DType::f16 && (w.shape == std::vector<std::int64_t>{c.vocab_size, h}));
      CHECK(st.find("lm_head.trellis") == nullptr);
    } else {
      check_linear("lm_head", h, c.vocab_size, false);  // vocabulary 500, padded to 512
      CHECK_EQ(st.get("lm_head.trellis").shape[2], std::int64_t(16 * cs.head));
    }
    // A CPU forward: finite logits of O(1) spread (the scales keep activations bounded).
    auto b = make_backend("cpu", {});
    b->load(model);
    b->allocate_cache({64, CacheType::fp16});
    const auto ids = model->tokenizer()->encode("hello synthetic world", false, true);
    std::vector<float> logits;
    prefill(*b, ids, 2048, LogitsWanted::all, logits);
    CHECK_EQ(logits.size(), ids.size() * std::size_t(b->vocab_size()));
    float spread = 0;
    for (float v : logits) {
      CHECK_MSG(std::isfinite(v), "non-finite logit");
      spread = std::max(spread, std::fabs(v));
    }
    CHECK_MSG(spread > 0.01f && spread < 100.0f, "logit spread " << spread);
    fs::remove_all(dir);
  }
}

EXL_TEST(synth_exl3, same_seed_same_bytes_other_seed_other_words) {
  const fs::path a = fresh_dir("a"), b = fresh_dir("b"), d = fresh_dir("d");
  write3("test-tiny", 3.0, 6, a, 7);
  write3("test-tiny", 3.0, 6, b, 7);
  write3("test-tiny", 3.0, 6, d, 8);
  auto bytes = [](const fs::path& p) {
    std::ifstream in(p / "output.safetensors", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(bytes(a) == bytes(b));
  CHECK(bytes(a) != bytes(d));
  for (const auto& p : {a, b, d}) fs::remove_all(p);
}

EXL_TEST(synth_exl3, bad_arguments) {
  const ModelConfig c = plan::preset_config("test-tiny");
  CHECK_THROWS_ERROR(synth::plan_synth_exl3(c, 1.5, 6), ErrorKind::invalid_argument, "between 1.6 and 8.0");
  CHECK_THROWS_ERROR(synth::plan_synth_exl3(c, 8.5, 6), ErrorKind::invalid_argument, "got 8.5");
  CHECK_THROWS_ERROR(synth::plan_synth_exl3(c, 4.0, 9), ErrorKind::invalid_argument, "head bits");
  CHECK_THROWS_ERROR(synth::plan_synth_exl3(c, 4.0, 0), ErrorKind::invalid_argument, "got 0");
  // A shape off ExLlamaV3's 128-blocks: test-tiny with an intermediate size of 500.
  ModelConfig odd = c;
  odd.intermediate_size = 500;
  CHECK_THROWS_ERROR(synth::plan_synth_exl3(odd, 4.0, 6), ErrorKind::config, "got 500");
  // Nothing left behind on failure.
  const fs::path dir = fresh_dir("bad");
  CHECK_THROWS_ERROR(write3("test-tiny", 0.5, 6, dir), ErrorKind::invalid_argument, "bpw");
  CHECK(!fs::exists(dir) && !fs::exists(dir.string() + ".partial"));
}
