// The EXL2 converter on the model families (tests/data/families): each tiny model converted on
// the CPU (its calibration forward with the family's norms, q/k norms, GeGLU, soft-caps, windows
// and per-layer RoPE; fused projections written split), then run by the CPU backend. Its logits
// against transformers' fp32 logits of the 16-bit model: the relative L2 error per position stays
// within a bound measured for each bitrate (see the table below), and at 8 bpw the top-1 of
// every position whose reference gap exceeds 0.5 is kept.
#include <filesystem>

#include "exl/backend.h"
#include "exl/convert.h"
#include "exl/generator.h"
#include "exl/model.h"
#include "family_refs.h"

namespace fs = std::filesystem;
using namespace exl;
using namespace exl::test;

namespace {

// The family model with a tokenizer beside it (calibration text needs one; ids past the tiny
// vocabulary become 0).
fs::path with_tokenizer(const TempDir& tmp, const std::string& name) {
  const fs::path dir = tmp / (name + "-fp16");
  fs::create_directories(dir);
  for (const char* f : {"config.json", "generation_config.json", "model.safetensors"})
    fs::copy_file(fs::path(family_dir(name)) / f, dir / f);
  fs::copy_file(fixture("models/hf/ref-xs/tokenizer.json"), dir / "tokenizer.json");
  return dir;
}

// Worst and mean relative L2 over the positions of every prompt, and top-1 agreement where the
// reference is decided.
struct QuantError {
  double worst = 0, mean = 0;
  int top1_kept = 0, top1_decided = 0;
};

QuantError quantized_error(const fs::path& dir, const std::string& name) {
  QuantError e;
  int n = 0;
  for (const FamilyPrompt& p : read_family_refs(name)) {
    auto model = Model::open(dir);
    CHECK(model->summary().format == "exl2");
    auto be = make_cpu_backend({});
    be->load(model);
    be->allocate_cache({p.context, CacheType::fp32});
    std::vector<float> logits;
    prefill(*be, p.ids, 2048, LogitsWanted::all, logits);
    CHECK_EQ(logits.size(), p.logits.data.size());
    if (logits.size() != p.logits.data.size()) return e;
    for (int t = 0; t < p.logits.rows; ++t) {
      std::span<const float> o(logits.data() + std::size_t(t) * std::size_t(p.logits.cols), std::size_t(p.logits.cols));
      const double rel = relative_l2(p.logits.row(t), o);
      e.worst = std::max(e.worst, rel);
      e.mean += rel;
      ++n;
      if (top1_top2_gap(p.logits.row(t)) > 0.5f) {
        ++e.top1_decided;
        e.top1_kept += top1(o) == top1(p.logits.row(t));
      }
    }
  }
  e.mean /= std::max(1, n);
  return e;
}

void convert_and_check(const std::string& name, double bits, double worst_max, double mean_max) {
  TempDir tmp("exl_family_convert");
  ConvertOptions o;
  o.input_dir = with_tokenizer(tmp, name);
  o.output_dir = tmp / (name + "-exl2");
  o.bits = bits;
  o.head_bits = 8;
  o.rows = 4;
  o.length = 64;  // longer than every window of the family models
  o.checkpoint_seconds = 1e9;
  const ConvertResult r = convert_model(o);
  CHECK_MSG(std::fabs(r.decoder_bpw - bits) < 0.6, name << ": decoder bpw " << r.decoder_bpw);
  const QuantError e = quantized_error(o.output_dir, name);
  if (options().verbose)
    std::printf("  %s %.1f bpw (%.2f): relative L2 worst %.4f mean %.4f, top-1 %d/%d\n", name.c_str(), bits,
                r.decoder_bpw, e.worst, e.mean, e.top1_kept, e.top1_decided);
  CHECK_MSG(e.worst <= worst_max && e.mean <= mean_max,
            name << " at " << bits << " bpw: relative L2 worst " << e.worst << ", mean " << e.mean);
  if (bits >= 8.0) CHECK_MSG(e.top1_kept == e.top1_decided, name << ": top-1 " << e.top1_kept << "/" << e.top1_decided);
}

}  // namespace

// Bounds: the measured error (exl_tests --filter family_convert -v) with about 1.5x margin.
EXL_TEST(family_convert, qwen3_6bpw) { convert_and_check("qwen3", 6.0, 0.2, 0.14); }
EXL_TEST(family_convert, gemma2_8bpw) { convert_and_check("gemma2", 8.0, 0.05, 0.032); }
EXL_TEST(family_convert, gemma3_4bpw) { convert_and_check("gemma3", 4.0, 0.9, 0.6); }
EXL_TEST(family_convert, phi3_8bpw) { convert_and_check("phi3", 8.0, 0.09, 0.058); }
// The Llama computation (Mistral with a window) of the same width at 4 bpw: the yardstick for gemma3_4bpw.
EXL_TEST(family_convert, mistral_4bpw) { convert_and_check("mistral_swa", 4.0, 0.9, 0.6); }
