// Converter end to end on the CPU: ref-xs (3.6M parameters) to EXL2 with a short calibration,
// then the result is loaded by exl::Model + the CPU backend and compared with the reference
// converter's ref-xs-4.0bpw: file/tensor layout, average bpw, held-out perplexity.

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "exl/backend.h"
#include "exl/convert.h"
#if defined(EXL_HAVE_CUDA_LOADER)
#include "exl/cuda.h"
#endif
#include "exl/error.h"
#include "exl/model.h"
#include "exl/perplexity.h"
#include "exl_test.h"

namespace fs = std::filesystem;
using namespace exl;

namespace {

fs::path work_dir() {
  static const exl::test::TempDir dir("exl_test_convert");  // removed when the process exits
  return dir.path();
}

ConvertOptions xs_options(double bits, const std::string& out) {
  ConvertOptions o;
  o.input_dir = exl::test::fixture("models/hf/ref-xs");
  o.output_dir = work_dir() / out;
  o.bits = bits;
  o.head_bits = 6;
  o.rows = 8;      // 8 x 256 tokens of the built-in text: short, CI-sized
  o.length = 256;
  o.measure_rows = 4;  // like ExLlamaV2, measure on fewer rows than the quantization pass uses
  return o;
}

// Converts ref-xs at 4.0 bpw with measurement (once per process); later bitrates reuse it.
const fs::path& xs_4bpw() {
  static const fs::path out = [] {
    ConvertOptions o = xs_options(4.0, "xs-4.0");
    o.measurement_out = work_dir() / "xs.measurement.json";
    convert_model(o);
    return o.output_dir;
  }();
  return out;
}

fs::path xs_with_measurement(double bits) {
  char name[32];
  std::snprintf(name, sizeof name, "xs-%.1f", bits);
  ConvertOptions o = xs_options(bits, name);
  xs_4bpw();
  o.measurement_in = work_dir() / "xs.measurement.json";
  if (!fs::exists(o.output_dir / "config.json")) convert_model(o);
  return o.output_dir;
}

// Perplexity of the model in `dir` (CPU, fp32 cache) over the first 2048 tokens of each held-out
// text, windows of 512.
std::vector<double> held_out_ppl(const fs::path& dir, std::initializer_list<const char*> texts) {
  std::ifstream in(exl::test::fixture("refs/ppl_ids.json"));
  const auto j = nlohmann::json::parse(in);
  auto model = Model::open(dir);
  auto be = make_cpu_backend({});
  be->load(model);
  be->allocate_cache({512, CacheType::fp32});
  std::vector<double> out;
  for (const char* text : texts) {
    const std::vector<std::int32_t> ids = j.at(text).get<std::vector<std::int32_t>>();
    out.push_back(perplexity(*be, std::span<const std::int32_t>(ids.data(), 2048), 512, 512).ppl);
  }
  return out;
}

double wiki_ppl(const fs::path& dir) { return held_out_ppl(dir, {"wiki"})[0]; }

// Issue #8's quality measure: the held-out wiki and tiny texts together (4 windows of 512 each, 4088
// predictions), exp of the mean of the two mean NLLs.
double both_texts_ppl(const fs::path& dir) {
  const std::vector<double> p = held_out_ppl(dir, {"wiki", "tiny"});
  return std::exp((std::log(p[0]) + std::log(p[1])) / 2.0);
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

}  // namespace

EXL_TEST(convert, e2e_ref_xs_layout_matches_exllamav2) {
  const fs::path ours = xs_4bpw();
  const fs::path ref = exl::test::fixture("models/exl2/ref-xs-4.0bpw");
  for (const char* f : {"output.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json",
                        "generation_config.json", "measurement.json"})
    CHECK_MSG(fs::exists(ours / f), f);
  const TensorStore a = TensorStore::open_dir(ours), b = TensorStore::open_dir(ref);
  CHECK(a.names() == b.names());
  for (const std::string& n : b.names()) {
    const TensorInfo& x = a.get(n);
    const TensorInfo& y = b.get(n);
    CHECK_MSG(x.dtype == y.dtype, n);
    CHECK_EQ(x.shape.size(), y.shape.size());
    const bool group_dim = n.ends_with(".q_weight") || n.ends_with(".q_scale") || n.ends_with(".q_scale_max") ||
                           n.ends_with(".q_groups");
    // Packed rows and group counts depend on the chosen option; every other extent is fixed.
    for (std::size_t d = 0; d < y.shape.size(); ++d)
      if (!(group_dim && d == 0)) CHECK_MSG(x.shape[d] == y.shape[d], n << " dim " << d);
  }
  // config.json: the source config plus quantization_config as ExLlamaV2 writes it.
  const auto ca = read_json(ours / "config.json"), cb = read_json(ref / "config.json");
  for (const auto& [k, v] : cb.items()) CHECK_MSG(ca.contains(k), k);
  const auto& q = ca.at("quantization_config");
  const auto& qr = cb.at("quantization_config");
  for (const auto& [k, v] : qr.items()) CHECK_MSG(q.contains(k) && q[k].type() == v.type(), k);
  CHECK_EQ(q["quant_method"].get<std::string>(), std::string("exl2"));
  CHECK_EQ(q["bits"].get<double>(), 4.0);
  CHECK_EQ(q["head_bits"].get<int>(), 6);
  CHECK_EQ(q["calibration"]["rows"].get<int>(), 8);
  CHECK_EQ(q["calibration"]["length"].get<int>(), 256);
  CHECK_EQ(q["calibration"]["dataset"].get<std::string>(), std::string("(default)"));
  // Our measurement reads back, 19 + 17 options per layer.
  const Measurement m = read_measurement(ours / "measurement.json");
  CHECK_EQ(m.blocks.size(), 4u);
  CHECK_EQ(m.blocks[0].options.size(), 19u);
  CHECK_EQ(m.blocks[1].options.size(), 17u);
}

EXL_TEST(convert, e2e_ref_xs_bpw_and_perplexity) {
  const fs::path ours = xs_4bpw();
  const ModelSummary s = Model::open(ours)->summary();
  CHECK(s.quantized);
  std::printf("    ref-xs 4.0 bpw: decoder %.4f bpw, head %.4f bpw\n", s.average_bpw, s.head_bpw);
  CHECK_NEAR(s.average_bpw, 4.0, 0.1);
  const double ppl = wiki_ppl(ours);
  std::printf("    ref-xs 4.0 bpw wiki ppl: ours %.3f, ExLlamaV2 16.082, HF fp16 15.646\n", ppl);
  // ExLlamaV2 calibrated on 115 x 2048 tokens; we use 8 x 256 of a 15 KB text. Its 4.0 bpw
  // costs +2.8 % over FP16; we allow our file up to 3 % above ExLlamaV2's (about double the
  // quantization loss), which still fails for a broken quantizer (RTN-like errors or a wrong
  // scale land far above).
  CHECK_MSG(ppl < 16.082 * 1.03, "ppl " << ppl);
}

EXL_TEST(convert, e2e_ref_xs_more_bits_closer_to_fp16) {
  const double fp16 = 15.646;
  const double p3 = wiki_ppl(xs_with_measurement(3.0)), p6 = wiki_ppl(xs_with_measurement(6.0));
  std::printf("    ref-xs wiki ppl: 3.0 bpw %.3f, 6.0 bpw %.3f (fp16 %.3f)\n", p3, p6, fp16);
  CHECK_MSG(std::fabs(p6 - fp16) < std::fabs(p3 - fp16), p3 << " vs " << p6);
  CHECK_MSG(std::fabs(p6 - fp16) < 0.01 * fp16, "6.0 bpw ppl " << p6);
  CHECK_NEAR(Model::open(xs_with_measurement(3.0))->summary().average_bpw, 3.0, 0.1);
  CHECK_NEAR(Model::open(xs_with_measurement(6.0))->summary().average_bpw, 6.0, 0.1);
}

// Issue #8's CPU acceptance: ref-s to 4.0 bpw with the reference converter's measurement (its
// measurement.json, as `--measurement` takes it) and its head bits: over both held-out texts, no
// more than 1 % above the reference converter's own 4.0 bpw file (both evaluated here; the
// fixture's figure for that file, from ExLlamaV2, is 35.826).
// Converts ref-s at `bits` as the reference converter's file of that bitrate was made (its head
// bits, its measurement.json) and returns (ours, theirs): both held-out texts' perplexity.
std::pair<double, double> ref_s_against_reference(double bits) {
  char name[32];
  std::snprintf(name, sizeof name, "ref-s-%.1fbpw", bits);
  const fs::path ref = exl::test::fixture(std::string("models/exl2/") + name);
  ConvertOptions o;
  o.input_dir = exl::test::fixture("models/hf/ref-s");
  o.output_dir = work_dir() / name;
  o.bits = bits;
  o.head_bits = read_json(ref / "config.json").at("quantization_config").at("head_bits").get<int>();
  o.measurement_in = ref / "measurement.json";
  const ConvertResult r = convert_model(o);
  CHECK_NEAR(r.decoder_bpw, bits, 0.05);
  const double ours = both_texts_ppl(o.output_dir), theirs = both_texts_ppl(ref);
  std::printf("    ref-s %.1f bpw, wiki + tiny ppl: ours %.4f, reference converter %.4f (%+.2f %%)\n", bits, ours,
              theirs, 100.0 * (ours / theirs - 1.0));
  return {ours, theirs};
}

EXL_TEST(convert, e2e_ref_s_4_0_within_1_percent_of_reference) {
  const auto [ours, theirs] = ref_s_against_reference(4.0);
  CHECK_NEAR(theirs, 35.826, 0.05);  // our engine reproduces ExLlamaV2's figure for its file
  CHECK_MSG(ours <= theirs * 1.01, "ours " << ours << " vs the reference converter's " << theirs);
}

// --fast: no measurement pass; the options, ranked by their rounding error on the weights, still hit the target,
// the file loads, its perplexity stays near the measured conversion's, and no measurement is
// written as if one had been made.
EXL_TEST(convert, e2e_fast_without_measurement) {
  ConvertOptions o = xs_options(4.0, "xs-fast-4.0");
  o.fast = true;
  const ConvertResult r = convert_model(o);
  CHECK_NEAR(r.decoder_bpw, 4.0, 0.05);
  CHECK(!fs::exists(o.output_dir / "measurement.json"));
  CHECK_NEAR(Model::open(o.output_dir)->summary().average_bpw, 4.0, 0.1);
  const double fast = wiki_ppl(o.output_dir), measured = wiki_ppl(xs_4bpw());
  std::printf("    ref-xs 4.0 bpw wiki ppl: fast %.3f, measured %.3f (fp16 15.646)\n", fast, measured);
  CHECK_MSG(fast < measured * 1.05, "fast " << fast << " vs measured " << measured);
  ConvertOptions om = xs_options(4.0, "xs-fast-om");
  om.fast = true;
  om.measurement_out = work_dir() / "fast.measurement.json";
  CHECK_THROWS_ERROR(convert_model(om), ErrorKind::invalid_argument, "no measurement");
}

// An interrupted conversion continues with `resume` from the state kept in the output folder:
// stopped in the measurement pass and in the quantization pass, then resumed, it writes the same
// tensors, bit for bit, as the uninterrupted conversion. A state left there without `resume`,
// or resumed with other options, is a clear error; the state is gone once the model is written.
EXL_TEST(convert, e2e_resume_after_interruption_gives_the_same_model) {
  const fs::path whole = xs_4bpw();
  const TensorStore a = TensorStore::open_dir(whole);
  for (const auto& [stage, step] : {std::pair<std::string, int>{"measure", 3}, {"quantize", 5}}) {
    ConvertOptions o = xs_options(4.0, "resume-" + stage);
    o.checkpoint_seconds = 0;  // save after every block
    std::stop_source stop;
    auto cut = [&, stage = stage, step = step](const ConvertProgress& p) {
      if (p.stage == stage && p.step >= step) stop.request_stop();
    };
    CHECK_THROWS_ERROR(convert_model(o, cut, stop.get_token()), ErrorKind::cancelled, "");
    CHECK(!fs::exists(o.output_dir / "config.json"));
    CHECK(fs::exists(o.output_dir / ".exl-resume" / "job.json"));
    CHECK_THROWS_ERROR(convert_model(o), ErrorKind::invalid_argument, "--resume");
    ConvertOptions other = o;
    other.resume = true;
    other.bits = 5.0;
    CHECK_THROWS_ERROR(convert_model(other), ErrorKind::invalid_argument, "other options");
    o.resume = true;
    std::string resumed;
    convert_model(o, [&](const ConvertProgress& p) {
      if (p.message.find("resumed after") != std::string::npos) resumed = p.message;
    });
    CHECK_MSG(!resumed.empty(), stage << ": no block was taken from the saved state");
    std::printf("    interrupted in %s: %s\n", stage.c_str(), resumed.c_str());
    CHECK(!fs::exists(o.output_dir / ".exl-resume"));
    const TensorStore b = TensorStore::open_dir(o.output_dir);
    CHECK(a.names() == b.names());
    for (const std::string& n : a.names()) {
      const TensorInfo& x = a.get(n);
      const TensorInfo& y = b.get(n);
      CHECK_MSG(x.nbytes == y.nbytes && std::memcmp(x.data, y.data, x.nbytes) == 0, stage << ": " << n << " differs");
    }
  }
}

EXL_TEST(convert, e2e_errors_and_cancel) {
  ConvertOptions o = xs_options(4.0, "cancelled");
  std::stop_source stop;
  stop.request_stop();
  CHECK_THROWS_ERROR(convert_model(o, {}, stop.get_token()), ErrorKind::cancelled, "cancelled");
  CHECK(!fs::exists(o.output_dir / "config.json"));
  CHECK(!fs::exists(o.output_dir / "output.safetensors"));
  // A --cal file too short for the rows asked for is an error (the built-in text instead gives
  // as many whole rows as it holds).
  ConvertOptions big = xs_options(4.0, "toolong");
  big.calibration_file = work_dir() / "short-cal.txt";
  {
    std::ofstream f(*big.calibration_file);
    f << "The quick brown fox jumps over the lazy dog. A short calibration text.\n";
  }
  big.rows = 4;
  CHECK_THROWS_ERROR(convert_model(big), ErrorKind::invalid_argument, "not enough calibration text");
  CHECK(!fs::exists(big.output_dir / "config.json"));
  ConvertOptions low = xs_options(1.5, "low");
  CHECK_THROWS_ERROR(convert_model(low), ErrorKind::invalid_argument, "bpw");
  ConvertOptions hb = xs_options(4.0, "hb");
  hb.head_bits = 7;
  CHECK_THROWS_ERROR(convert_model(hb), ErrorKind::invalid_argument, "head bits");
  ConvertOptions again = xs_options(4.0, "xs-4.0");  // folder already holds a model
  xs_4bpw();
  CHECK_THROWS_ERROR(convert_model(again), ErrorKind::invalid_argument, "already holds a model");
}

// ---- on a GPU (exl selftest --device cuda) ----
#if defined(EXL_HAVE_CUDA_LOADER)
namespace {

// The reference implementation's own figure for one of its files over both held-out texts
// (refs/ppl_exl2.json, 512-token chunks: the windows held_out_ppl uses), so the GPU runs need
// not carry the reference file's weights.
double reference_both_texts_ppl(const std::string& name) {
  const auto j = read_json(exl::test::fixture("refs/ppl_exl2.json")).at("results").at(name);
  return std::exp((j.at("wiki_chunk_forward_nocache").at("mean_nll").get<double>() +
                   j.at("tiny_chunk_forward_nocache").at("mean_nll").get<double>()) / 2.0);
}

}  // namespace

// The same conversion (ref-s, 4.0 bpw, the reference measurement) on the CPU and on the GPU:
// held-out perplexities within 0.5 % of each other, and the GPU's within 1 % of the reference
// converter's file.
EXL_GPU_TEST(convert, cuda_ref_s_4_0_equals_cpu_within_half_percent) {
  std::string why;
  if (!cuda_available(&why)) exl::test::skip("CUDA unavailable: " + why);
  const fs::path ref = exl::test::fixture("models/exl2/ref-s-4.0bpw");
  ConvertOptions o;
  o.input_dir = exl::test::fixture("models/hf/ref-s");
  o.bits = 4.0;
  o.head_bits = 6;
  o.measurement_in = ref / "measurement.json";
  o.output_dir = work_dir() / "ref-s-4.0-cpu";
  o.device = "cpu";
  convert_model(o);
  o.output_dir = work_dir() / "ref-s-4.0-cuda";
  o.device = "cuda";
  const ConvertResult r = convert_model(o);
  CHECK_NEAR(r.decoder_bpw, 4.0, 0.05);
  const double cpu = both_texts_ppl(work_dir() / "ref-s-4.0-cpu"), gpu = both_texts_ppl(o.output_dir),
               theirs = reference_both_texts_ppl("ref-s-4.0bpw");
  std::printf("    ref-s 4.0 bpw, wiki + tiny ppl: GPU %.4f, CPU %.4f (%+.3f %%), reference converter %.4f\n", gpu,
              cpu, 100.0 * (gpu / cpu - 1.0), theirs);
  CHECK_MSG(std::fabs(gpu / cpu - 1.0) < 0.005, "GPU " << gpu << " vs CPU " << cpu);
  CHECK_MSG(gpu <= theirs * 1.01, "GPU " << gpu << " vs the reference converter's " << theirs);
}

// A whole conversion on the GPU, measurement included (ref-s at 4.0 bpw, head 6): the measurement
// it writes reads back, the model hits the target and stays within 1 % of the reference file.
EXL_GPU_TEST(convert, cuda_ref_s_4_0_measured) {
  std::string why;
  if (!cuda_available(&why)) exl::test::skip("CUDA unavailable: " + why);
  ConvertOptions o;
  o.input_dir = exl::test::fixture("models/hf/ref-s");
  o.bits = 4.0;
  o.head_bits = 6;
  o.output_dir = work_dir() / "ref-s-4.0-cuda-measured";
  o.measurement_out = work_dir() / "ref-s-cuda.measurement.json";
  o.device = "cuda";
  const ConvertResult r = convert_model(o);
  CHECK_NEAR(r.decoder_bpw, 4.0, 0.05);
  const Measurement m = read_measurement(*o.measurement_out);
  CHECK_EQ(m.blocks.size(), std::size_t(2 * Model::open(o.input_dir)->config().num_layers));
  const double ours = both_texts_ppl(o.output_dir), theirs = reference_both_texts_ppl("ref-s-4.0bpw");
  std::printf("    ref-s 4.0 bpw measured on the GPU, wiki + tiny ppl: %.4f, reference converter %.4f (%+.2f %%)\n",
              ours, theirs, 100.0 * (ours / theirs - 1.0));
  CHECK_MSG(ours <= theirs * 1.01, "ours " << ours << " vs the reference converter's " << theirs);
}
#endif
