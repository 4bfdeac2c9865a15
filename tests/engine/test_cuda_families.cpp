// Model families on the CUDA backend against HF transformers (tests/data/families, issue 47), the
// GPU twin of test_families.cpp: Qwen3 (q/k norms), Gemma 2 ((1 + w) and sandwich norms, GeGLU,
// scaled embeddings, query_pre_attn_scalar, attention and final soft-caps, windows on alternate
// layers), Gemma 3 (local layers with their own RoPE), Phi-3 (fused projections, partial rotary,
// LongRoPE past the original context) and Mistral with a sliding window. For each prompt (a short
// one and one longer than every window), with the fp16 cache (the module has no fp32 one): every
// position's logits within relative L2 k_rel_max (2e-3, below) and top-1 equal unless transformers'
// top-1/top-2 gap is under 1e-3, for the prompt in one chunk, in chunks of 7 (the
// short-chunk form, the window across chunk boundaries) on the paged cache, and for the long prompt
// in chunks of 7 on the contiguous cache; greedy continuations decoded token by token (CUDA
// graphs) equal transformers' up to the first step whose margin is under 0.02, and the same tokens
// verified as one drafted block (speculative decoding's step).
#include <algorithm>
#include <filesystem>

#include "exl/backend.h"
#include "exl/convert.h"
#include "exl/cuda.h"
#include "exl/generator.h"
#include "exl/model.h"
#include "family_checks.h"
#include "model_checks.h"

using namespace exl;
using namespace exl::test;

namespace {

FamilyRun open_family(const std::string& name, int context, bool paged) {
  CacheOptions c{context, CacheType::fp16};
  c.paged = paged;
  return exl::test::open_family(name, make_cuda_backend({}), c);
}

// The bound: the module's projections take fp16 inputs (RMSNorm's output, the attention output,
// the gated product), where the CPU backend keeps fp32 (its FP16-cache bound is 1e-3). Measured on
// the emulator (exact fp32 products): worst 1.6e-3 (Phi-3's long prompt), and 1.25e-3 on Mistral's
// short prompt, where nothing beyond Llama is active (shorter than the window): that floor is the
// fp16 inputs', not a family feature's.
constexpr double k_rel_max = 2e-3;

void check_cuda_family(const std::string& name) {
  const auto refs = read_family_refs(name);
  CHECK(!refs.empty());
  for (const FamilyPrompt& p : refs) {
    const bool longest = &p == &refs.back();
    {
      const std::string what = name + " cuda fp16 cache";
      FamilyRun r = open_family(name, p.context, true);
      std::vector<float> logits;
      prefill(*r.backend, p.ids, 2048, LogitsWanted::all, logits);
      compare_family_logits(what, p, logits, k_rel_max);
      check_logit_block(name, p.name, p.logits, logits);
      r.backend->truncate_cache(0);
      prefill(*r.backend, p.ids, 7, LogitsWanted::all, logits);
      compare_family_logits(what + " chunks of 7", p, logits, k_rel_max);
    }
    if (longest) {  // the contiguous cache (no page table), the window across chunks
      FamilyRun r = open_family(name, p.context, false);
      std::vector<float> logits;
      prefill(*r.backend, p.ids, 7, LogitsWanted::all, logits);
      compare_family_logits(name + " cuda fp16 cache (contiguous) chunks of 7", p, logits, k_rel_max);
    }
    // Greedy, one decode step at a time through the cache (the captured decode graph), up to the
    // first near-tie; then those tokens again as one drafted block (speculative verification: all
    // rows' logits of a short chunk), whose every row must pick the next of them.
    FamilyRun r = open_family(name, p.context, true);
    std::vector<float> logits;
    prefill(*r.backend, p.ids, 2048, LogitsWanted::last, logits);
    std::vector<std::int32_t> accepted;
    for (std::size_t i = 0; i < p.greedy.size(); ++i) {
      const int ours = top1(logits);
      CHECK_MSG(ours == p.greedy[i], name << " " << p.name << " greedy step " << i << ": " << ours << " vs " << p.greedy[i]);
      if (ours != p.greedy[i] || p.greedy_margins[i] < 0.02f) break;
      const std::int32_t id = p.greedy[i];
      accepted.push_back(id);
      r.backend->forward(std::span<const std::int32_t>(&id, 1), LogitsWanted::last, logits);
    }
    if (accepted.size() < 2) continue;
    accepted.resize(std::min<std::size_t>(accepted.size(), 8));
    r.backend->truncate_cache(int(p.ids.size()));
    r.backend->forward(accepted, LogitsWanted::all, logits);
    for (std::size_t i = 0; i + 1 < accepted.size(); ++i) {
      std::span<const float> row(logits.data() + i * std::size_t(r.backend->vocab_size()), std::size_t(r.backend->vocab_size()));
      CHECK_MSG(top1(row) == accepted[i + 1], name << " " << p.name << " drafted block row " << i << ": " << top1(row)
                                                   << " vs " << accepted[i + 1]);
    }
  }
}

}  // namespace

EXL_GPU_TEST(cuda_families, qwen3) { check_cuda_family("qwen3"); }
EXL_GPU_TEST(cuda_families, gemma2) { check_cuda_family("gemma2"); }
EXL_GPU_TEST(cuda_families, gemma3) { check_cuda_family("gemma3"); }
EXL_GPU_TEST(cuda_families, phi3) { check_cuda_family("phi3"); }
EXL_GPU_TEST(cuda_families, mistral_sliding_window) { check_cuda_family("mistral_swa"); }

// Qwen3's q/k head norms on the fused EXL2 path (every linear and the head EXL2; the path of
// chunks up to 16 tokens and of decode): the tiny Qwen3 converted to EXL2 on the CPU (6 bpw, head
// 8), its logits on the GPU for the prompt in chunks of 7 and one token at a time (the captured
// decode graph) against the CPU backend's on the same model, within the FP16 models' bound.
EXL_GPU_TEST(cuda_families, qwen3_exl2_fused_path) {
  namespace fs = std::filesystem;
  TempDir tmp("exl_cuda_qwen3_exl2");
  const fs::path src = tmp / "qwen3-fp16";
  fs::create_directories(src);
  for (const char* f : {"config.json", "generation_config.json", "model.safetensors"})
    fs::copy_file(fs::path(family_dir("qwen3")) / f, src / f);
  fs::copy_file(fixture("models/hf/ref-xs/tokenizer.json"), src / "tokenizer.json");  // calibration text
  ConvertOptions o;
  o.input_dir = src;
  o.output_dir = tmp / "qwen3-exl2";
  o.bits = 6.0;
  o.head_bits = 8;
  o.rows = 4;
  o.length = 64;
  o.checkpoint_seconds = 1e9;
  convert_model(o);
  const std::string dir = o.output_dir.string();
  CHECK_EQ(Model::open(dir)->summary().format, std::string("exl2"));
  for (const FamilyPrompt& p : read_family_refs("qwen3")) {
    FamilyPrompt q = p;  // the reference: the CPU backend on the EXL2 model
    {
      FamilyRun cpu = open_model_in(dir, make_cpu_backend({}), {p.context, CacheType::fp16});
      prefill(*cpu.backend, p.ids, 2048, LogitsWanted::all, q.logits.data);
    }
    CacheOptions c{p.context, CacheType::fp16};
    c.paged = true;
    FamilyRun r = open_model_in(dir, make_cuda_backend({}), c);
    std::vector<float> logits;
    prefill(*r.backend, p.ids, 7, LogitsWanted::all, logits);
    compare_family_logits("qwen3 exl2 cuda chunks of 7", q, logits, k_rel_max);
    r.backend->truncate_cache(0);
    std::vector<float> all, row;
    for (std::int32_t id : p.ids) {
      r.backend->forward(std::span<const std::int32_t>(&id, 1), LogitsWanted::last, row);
      all.insert(all.end(), row.begin(), row.end());
    }
    compare_family_logits("qwen3 exl2 cuda one token at a time", q, all, k_rel_max);
  }
}

// Nothing is refused any more: every family loads and takes a cache longer than its windows and
// (Phi-3) its original context.
EXL_GPU_TEST(cuda_families, nothing_refused) {
  for (const char* name : {"qwen3", "gemma2", "gemma3", "phi3", "mistral_swa"}) {
    FamilyRun r = open_family(name, 128, true);
    CHECK_EQ(r.backend->cache_capacity(), 128);
  }
}
