// exl synth (engine/src/synth): bit allocation over the real presets, the written folder against
// the spec's tensor checklist (§2.1-2.10, §7.10), loading and a CPU forward, and the errors; the
// same for --format exl3 (suite synth_exl3: trellis shapes, sign/scale vectors, codebook markers,
// quantization_config as ExLlamaV3 writes it).
#include <unistd.h>

#include <algorithm>
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
#include "exl/kernels/exl2.h"
#include "exl/kernels/exl2_pack.h"
#include "exl/kernels/half.h"
#include "exl/model.h"
#include "exl/plan.h"
#include "exl/synth.h"
#include "exl/tensor_store.h"
#include "exl/tokenizer.h"
#include "exl_test.h"

namespace fs = std::filesystem;
using namespace exl;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("exl_test_synth_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

synth::SynthResult write(const std::string& preset, double bpw, const fs::path& dir, std::uint64_t shard = 8192ull << 20,
                         std::uint64_t seed = 1, synth::SynthFormat format = synth::SynthFormat::exl2, int head_bits = 6) {
  synth::SynthOptions o;
  o.preset = preset;
  o.bpw = bpw;
  o.output_dir = dir;
  o.max_shard_bytes = shard;
  o.seed = seed;
  o.format = format;
  o.head_bits = head_bits;
  return synth::synth_model(o);
}

const std::vector<std::string> kRealPresets = {"tinyllama-1.1b", "llama3.2-1b", "llama3-8b",
                                               "mistral-7b",     "qwen2.5-7b",  "llama3-70b"};

// Every layout rule of §2.3 / §2.10 that a plan can break.
void check_layout(const GroupLayout& l, int k, const std::string& what) {
  CHECK_MSG(l.groups() > 0, what);
  int sum = 0;
  for (int g = 0; g < l.groups(); ++g) {
    const int b = l.bits[g], r = l.rows[g];
    CHECK_MSG(b == 2 || b == 3 || b == 4 || b == 5 || b == 6 || b == 8, what << " bits " << b);
    CHECK_MSG(g == 0 || b <= l.bits[g - 1], what << ": widths must not increase");
    CHECK_MSG(r >= 32 && r % 32 == 0, what << ": rows " << r);
    sum += r;
  }
  CHECK_MSG(sum == k, what << ": rows sum to " << sum << ", k " << k);
}

// The tensors of one EXL2 linear against the checklist (§2.1, §2.10, §2.5).
void check_linear(const TensorStore& st, const std::string& p, int k, int n, bool bias) {
  const int n_pad = (n + 31) / 32 * 32;
  const TensorInfo& qw = st.get(p + ".q_weight");
  const TensorInfo& qs = st.get(p + ".q_scale");
  const TensorInfo& qm = st.get(p + ".q_scale_max");
  const TensorInfo& qg = st.get(p + ".q_groups");
  const TensorInfo& qi = st.get(p + ".q_invperm");
  CHECK_MSG(!st.contains(p + ".q_perm"), p);
  CHECK(qw.dtype == DType::i32 && qs.dtype == DType::i32 && qm.dtype == DType::f16 && qg.dtype == DType::i16 &&
        qi.dtype == DType::i32);
  const std::int64_t groups = qm.numel();
  CHECK_MSG(qg.shape == std::vector<std::int64_t>{2 * groups}, p);
  CHECK_MSG((qs.shape == std::vector<std::int64_t>{groups, n_pad / 8}), p);
  CHECK_MSG(qw.shape.size() == 2 && qw.shape[1] == n_pad, p);
  CHECK_MSG(qi.shape == std::vector<std::int64_t>{k}, p);
  const auto* g16 = qg.as<std::int16_t>();
  int rows = 0, qrow = 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    const int b = g16[2 * g];
    CHECK_MSG(b == 2 || b == 3 || b == 4 || b == 5 || b == 6 || b == 8, p << " bits " << b);
    CHECK_MSG(g == 0 || b <= g16[2 * g - 2], p << ": widths increase");
    CHECK_MSG(g16[2 * g + 1] == qrow, p << ": packed offset of group " << g);
    const int next = g + 1 < groups ? g16[2 * g + 3] : int(qw.shape[0]);
    CHECK_MSG(next > qrow, p << ": offsets not increasing");
    const int r = (next - qrow) * 32 / b;
    CHECK_MSG(r >= 32 && r % 32 == 0 && (next - qrow) * 32 % b == 0, p << ": group rows " << r);
    rows += r;
    qrow = next;
    const float m = half_to_float(qm.as<half_bits>()[g]);
    CHECK_MSG(std::isfinite(m) && m > 0, p << ": q_scale_max " << m);
  }
  CHECK_MSG(rows == k, p << ": rows " << rows << " vs k " << k);
  std::vector<char> seen(std::size_t(k), 0);
  for (int i = 0; i < k; ++i) {
    const int v = qi.as<std::int32_t>()[i];
    CHECK_MSG(v >= 0 && v < k && !seen[std::size_t(v)], p << ": q_invperm is not a permutation");
    seen[std::size_t(v)] = 1;
  }
  if (bias) {
    const TensorInfo& b = st.get(p + ".bias");
    CHECK(b.dtype == DType::f16 && b.shape == std::vector<std::int64_t>{n_pad});
  } else {
    CHECK_MSG(!st.contains(p + ".bias"), p);
  }
  if (n_pad > n) {  // padding columns hold 2^(b-1) (dequantize to 0), §2.5
    Exl2Weight w;
    w.q_weight = qw.as<std::uint32_t>();
    w.q_scale = qs.as<std::uint32_t>();
    w.q_scale_max = qm.as<half_bits>();
    w.q_groups = g16;
    w.k = k;
    w.n = n;
    w.n_pad = n_pad;
    w.groups = int(groups);
    w.q_rows = int(qw.shape[0]);
    for (const Exl2Group& g : exl2_groups(w))
      for (int c = n; c < n_pad; ++c) CHECK_EQ(exl2_unpack_value(w, g.first_row, c), 1 << (g.bits - 1));
  }
}


// A CPU forward of a few tokens: finite logits of O(1) spread (the scales keep activations bounded).
void check_cpu_forward(const std::shared_ptr<const Model>& model) {
  const auto ids = model->tokenizer()->encode("hello synthetic world", false, true);
  auto b = make_backend("cpu", {});
  b->load(model);
  b->allocate_cache({64, CacheType::fp16});
  std::vector<float> logits;
  prefill(*b, ids, 2048, LogitsWanted::all, logits);
  CHECK_EQ(logits.size(), ids.size() * std::size_t(b->vocab_size()));
  float spread = 0;
  for (float v : logits) {
    CHECK_MSG(std::isfinite(v), "non-finite logit");
    spread = std::max(spread, std::fabs(v));
  }
  CHECK_MSG(spread > 0.01f && spread < 100.0f, "logit spread " << spread);
}

synth::SynthResult write3(const std::string& preset, double bpw, int head_bits, const fs::path& dir, std::uint64_t seed = 1) {
  return write(preset, bpw, dir, 8192ull << 20, seed, synth::SynthFormat::exl3, head_bits);
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

EXL_TEST(synth, plan_hits_bpw_for_every_preset) {
  for (const std::string& name : kRealPresets) {
    const ModelConfig c = plan::preset_config(name);
    for (double t = 2.0; t <= 8.0001; t += 0.25) {
      const synth::SynthPlan p = synth::plan_synth(c, t, 6);
      CHECK_MSG(std::fabs(p.decoder_bpw - t) <= 0.05, name << " at " << t << ": " << p.decoder_bpw);
      CHECK_EQ(p.decoder.size(), std::size_t(7) * std::size_t(c.num_layers));
    }
    const synth::SynthPlan p = synth::plan_synth(c, 4.0, 6);
    std::set<int> sizes, widths;
    std::set<std::vector<int>> distinct;
    for (const synth::LinearPlan& l : p.decoder) {
      check_layout(l.layout, l.k, l.prefix);
      for (int g = 0; g < l.layout.groups(); ++g) {
        if (g + 1 < l.layout.groups()) sizes.insert(l.layout.rows[g]);
        widths.insert(l.layout.bits[g]);
      }
      distinct.insert(l.layout.bits);
    }
    check_layout(p.head.layout, p.head.k, name + " head");
    CHECK_MSG(sizes.size() >= 2, name << ": one group size only");  // mixed groups
    CHECK_MSG(widths.size() >= 3, name << ": fewer than three widths");
    CHECK_MSG(distinct.size() >= 4, name << ": layers barely differ");
    CHECK_EQ(p.decoder[2].bias, name == "qwen2.5-7b");
  }
}

EXL_TEST(synth, plan_is_deterministic_and_seeded) {
  const ModelConfig c = plan::preset_config("tinyllama-1.1b");
  const auto a = synth::plan_synth(c, 4.0, 6, 1), b = synth::plan_synth(c, 4.0, 6, 1), d = synth::plan_synth(c, 4.0, 6, 2);
  bool differs = false;
  for (std::size_t i = 0; i < a.decoder.size(); ++i) {
    CHECK(a.decoder[i].layout.bits == b.decoder[i].layout.bits && a.decoder[i].layout.rows == b.decoder[i].layout.rows);
    differs = differs || a.decoder[i].layout.bits != d.decoder[i].layout.bits || a.decoder[i].layout.rows != d.decoder[i].layout.rows;
  }
  CHECK(differs);
}

EXL_TEST(synth, tiny_model_loads_and_passes_the_checklist) {
  for (double bpw : {2.5, 4.0, 6.0}) {
    const fs::path dir = fresh_dir("tiny");
    const synth::SynthResult r = write("test-tiny", bpw, dir);
    CHECK(fs::exists(dir / "config.json") && !fs::exists(dir.string() + ".partial"));
    CHECK_EQ(r.files.size(), std::size_t(1));
    CHECK_EQ(r.files[0].filename().string(), std::string("output.safetensors"));
    auto model = Model::open(dir);
    const ModelConfig& c = model->config();
    const ModelSummary s = model->summary();
    CHECK(s.quantized);
    CHECK_MSG(std::fabs(s.average_bpw - bpw) <= 0.05, "inspect reports " << s.average_bpw << " for " << bpw);
    CHECK_NEAR(s.average_bpw, r.decoder_bpw, 1e-9);
    // quantization_config as the converter writes it
    const auto cfg = nlohmann::json::parse(read_text(dir / "config.json"));
    const auto& q = cfg["quantization_config"];
    CHECK(q["quant_method"] == "exl2" && q["version"] == "0.2.7" && q["head_bits"] == 6);
    CHECK_NEAR(double(q["bits"]), bpw, 1e-12);
    CHECK(q["calibration"].contains("rows") && q["calibration"].contains("length") &&
          q["calibration"].contains("dataset"));
    CHECK(c.quantization && c.quantization->method == "exl2");
    // every tensor
    const TensorStore st = TensorStore::open_dir(dir);
    const int h = c.hidden_size, qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
    std::size_t expected = 3;  // embedding, final norm ... and the head's tensors below
    for (int i = 0; i < c.num_layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".";
      for (const char* nrm : {"input_layernorm.weight", "post_attention_layernorm.weight"}) {
        const TensorInfo& t = st.get(p + nrm);
        CHECK(t.dtype == DType::f16 && t.shape == std::vector<std::int64_t>{h});
      }
      check_linear(st, p + "self_attn.q_proj", h, qd, false);
      check_linear(st, p + "self_attn.k_proj", h, kvd, false);
      check_linear(st, p + "self_attn.v_proj", h, kvd, false);
      check_linear(st, p + "self_attn.o_proj", qd, h, false);
      check_linear(st, p + "mlp.gate_proj", h, c.intermediate_size, false);
      check_linear(st, p + "mlp.up_proj", h, c.intermediate_size, false);
      check_linear(st, p + "mlp.down_proj", c.intermediate_size, h, false);
      expected += 2 + 7 * 5;
    }
    check_linear(st, "lm_head", h, c.vocab_size, false);  // vocab 500: 12 padding columns
    expected += 5 - 1;
    const TensorInfo& emb = st.get("model.embed_tokens.weight");
    CHECK(emb.dtype == DType::f16 && (emb.shape == std::vector<std::int64_t>{c.vocab_size, h}));
    CHECK(st.get("model.norm.weight").dtype == DType::f16);
    CHECK_EQ(st.names().size(), expected);
    // tokenizer and a CPU forward
    CHECK(model->tokenizer() != nullptr);
    CHECK_EQ(model->tokenizer()->vocab_size(), c.vocab_size);
    const auto ids = model->tokenizer()->encode("hello synthetic world", false, true);
    CHECK(ids.size() >= 3 && ids[0] == synth::synth_bos_id(c.vocab_size));
    check_cpu_forward(model);
    fs::remove_all(dir);
  }
}

EXL_TEST(synth, qwen2_biases_tied_head_and_shards) {
  const fs::path dir = fresh_dir("qwen");
  const synth::SynthResult r = write("test-tiny-qwen2", 4.0, dir, 256u << 10);  // 256 KiB shards
  CHECK(r.files.size() > 1);
  for (std::size_t i = 0; i < r.files.size(); ++i) {
    char want[64];
    std::snprintf(want, sizeof want, "output-%05zu-of-%05zu.safetensors", i + 1, r.files.size());
    CHECK_EQ(r.files[i].filename().string(), std::string(want));
    CHECK(fs::exists(r.files[i]));
  }
  auto model = Model::open(dir);
  const ModelConfig& c = model->config();
  CHECK(c.attention_bias && !c.o_bias && c.tie_word_embeddings);
  const TensorStore st = TensorStore::open_dir(dir);
  const int h = c.hidden_size, qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
  check_linear(st, "model.layers.1.self_attn.q_proj", h, qd, true);
  check_linear(st, "model.layers.1.self_attn.k_proj", h, kvd, true);
  check_linear(st, "model.layers.1.self_attn.o_proj", qd, h, false);
  check_linear(st, "lm_head", h, c.vocab_size, false);  // the converter always writes the head
  CHECK(model->head().kind == LinearKind::exl2);
  CHECK_NEAR(c.rms_norm_eps, 1e-6, 1e-12);
  auto b = make_backend("cpu", {});
  b->load(model);
  b->allocate_cache({32, CacheType::fp16});
  std::vector<float> logits;
  const std::vector<std::int32_t> ids = {1, 2, 3, 400};
  prefill(*b, ids, 2048, LogitsWanted::last, logits);
  for (float v : logits) CHECK(std::isfinite(v));
  fs::remove_all(dir);
}

EXL_TEST(synth, same_seed_same_bytes) {
  const fs::path a = fresh_dir("seed_a"), b = fresh_dir("seed_b"), c = fresh_dir("seed_c");
  write("test-tiny", 3.0, a, 8192ull << 20, 7);
  write("test-tiny", 3.0, b, 8192ull << 20, 7);
  write("test-tiny", 3.0, c, 8192ull << 20, 8);
  CHECK(read_text(a / "output.safetensors") == read_text(b / "output.safetensors"));
  CHECK(read_text(a / "output.safetensors") != read_text(c / "output.safetensors"));
  for (const auto& d : {a, b, c}) fs::remove_all(d);
}

// Linears that read the same input share its permutation, as converted models do (the engine
// folds a shared permutation into the step's RMSNorm): q/k/v, and gate/up; others differ.
EXL_TEST(synth, shared_inputs_share_the_permutation) {
  const fs::path dir = fresh_dir("perm");
  write("test-tiny", 4.0, dir);
  const TensorStore st = TensorStore::open_dir(dir);
  auto perm = [&](const std::string& p) {
    const TensorInfo& t = st.get(p + ".q_invperm");
    const auto* v = reinterpret_cast<const std::int32_t*>(t.data);
    return std::vector<std::int32_t>(v, v + t.numel());
  };
  for (const std::string l : {"model.layers.0.", "model.layers.1."}) {
    const std::vector<std::int32_t> q = perm(l + "self_attn.q_proj");
    const std::vector<std::int32_t> g = perm(l + "mlp.gate_proj");
    CHECK(perm(l + "self_attn.k_proj") == q);
    CHECK(perm(l + "self_attn.v_proj") == q);
    CHECK(perm(l + "mlp.up_proj") == g);
    CHECK(perm(l + "self_attn.o_proj") != q);
    CHECK(perm(l + "mlp.down_proj") != g);
    CHECK(q != g);
    std::vector<std::int32_t> sorted = q;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) CHECK_EQ(sorted[i], std::int32_t(i));
  }
  CHECK(perm("model.layers.0.self_attn.q_proj") != perm("model.layers.1.self_attn.q_proj"));
  fs::remove_all(dir);
}

EXL_TEST(synth, bad_arguments) {
  const fs::path dir = fresh_dir("bad");
  CHECK_THROWS_ERROR(write("llama9-1t", 4.0, dir), ErrorKind::invalid_argument, "tinyllama-1.1b");
  CHECK_THROWS_ERROR(write("test-tiny", 1.5, dir), ErrorKind::invalid_argument, "between 2.0 and 8.0");
  CHECK_THROWS_ERROR(write("test-tiny", 8.5, dir), ErrorKind::invalid_argument, "between 2.0 and 8.0");
  CHECK_THROWS_ERROR(write("test-tiny", std::nan(""), dir), ErrorKind::invalid_argument, "between 2.0 and 8.0");
  synth::SynthOptions o;
  o.preset = "test-tiny";
  o.output_dir = dir;
  o.head_bits = 7;
  CHECK_THROWS_ERROR(synth::synth_model(o), ErrorKind::invalid_argument, "head bits");
  CHECK(!fs::exists(dir) && !fs::exists(dir.string() + ".partial"));
  // an output folder that holds files is never overwritten
  fs::create_directories(dir);
  { std::ofstream(dir / "keep.txt") << "x"; }
  CHECK_THROWS_ERROR(write("test-tiny", 4.0, dir), ErrorKind::invalid_argument, "not empty");
  CHECK(fs::exists(dir / "keep.txt"));
  // unwritable: the parent is a file
  CHECK_THROWS_ERROR(write("test-tiny", 4.0, dir / "keep.txt" / "model"), ErrorKind::io, "cannot create");
  CHECK(!fs::exists(dir / "keep.txt" / "model.partial"));
  fs::remove_all(dir);
  // an existing empty folder is fine
  fs::create_directories(dir);
  write("test-tiny", 4.0, dir);
  CHECK(fs::exists(dir / "config.json"));
  fs::remove_all(dir);
}

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
    const fs::path dir = fresh_dir("tiny3");
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
    check_cpu_forward(model);
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
  const fs::path dir = fresh_dir("bad3");
  CHECK_THROWS_ERROR(write3("test-tiny", 0.5, 6, dir), ErrorKind::invalid_argument, "bpw");
  CHECK(!fs::exists(dir) && !fs::exists(dir.string() + ".partial"));
}
