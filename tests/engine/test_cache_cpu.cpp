// Quantized KV caches against ExLlamaV2's references, on the CPU backend (cache_cpu) and, in
// `exl selftest --device cuda`, on the GPU (cuda_cache): the long prompt's last logits after
// prefilling all but the last token (fp16/q8/q4 caches), and token-by-token perplexity with each
// cache type (on the GPU over the reference's 4 windows; on the CPU, where each window takes
// 511 single-token forwards per cache type, over its first window, which the reference gives on
// its own as chunk_mean_nll[0]).
#include <cmath>

#include "exl/backend.h"
#include "exl/generator.h"
#include "exl/model.h"
#include "exl/perplexity.h"
#include "refs.h"

using namespace exl;
using namespace exl::test;

namespace {

std::unique_ptr<Backend> open_backend(const std::string& device, CacheType cache, int ctx) {
  static std::shared_ptr<const Model> model;
  if (!model) model = Model::open(fixture("models/exl2/ref-s-4.0bpw"));
  auto b = make_backend(device, {});
  b->load(model);
  b->allocate_cache({ctx, cache});
  return b;
}

// Prefill ids[0..n-2], then forward the last id alone (how the fixtures' cache references were made).
std::vector<float> step_last_logits(const std::string& device, CacheType cache) {
  const auto ids = read_json("refs/prompts.json")["long_prompt"]["ids"].get<std::vector<std::int32_t>>();
  auto b = open_backend(device, cache, 512);
  std::vector<float> logits;
  prefill(*b, std::span<const std::int32_t>(ids.data(), ids.size() - 1), 2048, LogitsWanted::none, logits);
  b->forward(std::span<const std::int32_t>(&ids.back(), 1), LogitsWanted::last, logits);
  return logits;
}

// Token-by-token perplexity over the first `windows` windows of 512 of the wiki ids (the
// reference's 2048 ids are 4 windows; fresh cache per window).
double token_by_token_ppl(const std::string& device, CacheType cache, int windows) {
  auto ids = read_json("refs/ppl_ids.json")["wiki"].get<std::vector<std::int32_t>>();
  CHECK_EQ(ids.size(), std::size_t(4 * 512));
  ids.resize(std::size_t(windows) * 512);
  auto b = open_backend(device, cache, 512);
  return perplexity(*b, ids, 512, 2048, true).ppl;
}

// The reference's perplexity over the first `windows` windows: its "ppl" for all 4, else the
// exp of the mean of those windows' chunk_mean_nll (each window has 511 predictions).
double reference_ppl(const nlohmann::json& ref, int windows) {
  const auto nll = ref["chunk_mean_nll"].get<std::vector<double>>();
  CHECK_EQ(nll.size(), 4u);
  if (windows == 4) return ref["ppl"].get<double>();
  double sum = 0;
  for (int w = 0; w < windows; ++w) sum += nll[std::size_t(w)];
  return std::exp(sum / windows);
}

void check_step_last(const std::string& device, CacheType cache, const std::string& label, bool full_tolerance) {
  const auto refs = read_logit_blocks("long_prompt_last_logits_exl2");
  const LogitBlock& ref = refs.at("ref-s-4.0bpw/" + label);
  const auto ours = step_last_logits(device, cache);
  const double diff = max_abs_diff(ref.row(0), ours), kl = kl_divergence(ref.row(0), ours);
  if (options().verbose) std::printf("  %s: max |dlogit| %.4f, KL %.2e\n", label.c_str(), diff, kl);
  CHECK_EQ(top1(ours), top1(ref.row(0)));
  if (full_tolerance) {
    CHECK_MSG(diff <= 0.1, label << ": max |dlogit| " << diff);
    CHECK_MSG(kl <= 1e-4, label << ": KL " << kl);
  }
}

void check_token_by_token_ppl(const std::string& device, int windows) {
  const auto refs = read_json("refs/ppl_exl2.json")["results"]["ref-s-4.0bpw"];
  const double ref_fp16 = reference_ppl(refs["wiki_token_by_token_fp16_cache"], windows);
  const double ref_q8 = reference_ppl(refs["wiki_token_by_token_q8_cache"], windows);
  const double ref_q4 = reference_ppl(refs["wiki_token_by_token_q4_cache"], windows);
  const double fp16 = token_by_token_ppl(device, CacheType::fp16, windows),
               q8 = token_by_token_ppl(device, CacheType::q8, windows),
               q4 = token_by_token_ppl(device, CacheType::q4, windows),
               q6 = token_by_token_ppl(device, CacheType::q6, windows),
               fp8 = token_by_token_ppl(device, CacheType::fp8, windows);
  if (options().verbose)
    std::printf("  %s, %d window(s): fp16 %.4f (ref %.4f) q8 %.4f (ref %.4f) q6 %.4f fp8 %.4f q4 %.4f (ref %.4f)\n",
                device.c_str(), windows, fp16, ref_fp16, q8, ref_q8, q6, fp8, q4, ref_q4);
  CHECK_MSG(std::fabs(fp16 - ref_fp16) / ref_fp16 <= 0.002, "fp16 " << fp16 << " vs " << ref_fp16);
  CHECK_MSG(q8 <= ref_q8 * 1.005, "q8 " << q8 << " vs reference " << ref_q8);
  CHECK_MSG(q4 <= ref_q4 * 1.005, "q4 " << q4 << " vs reference " << ref_q4);
  // FP8 and Q6 lie between the FP16 and Q4 figures.
  CHECK_MSG(q6 >= fp16 * 0.999 && q6 <= q4, "q6 " << q6);
  CHECK_MSG(fp8 >= fp16 * 0.999 && fp8 <= q4, "fp8 " << fp8);
}

}  // namespace

EXL_TEST(cache_cpu, step_last_fp16) { check_step_last("cpu", CacheType::fp16, "fp16_cache", true); }
EXL_TEST(cache_cpu, step_last_q8) { check_step_last("cpu", CacheType::q8, "q8_cache", true); }
EXL_TEST(cache_cpu, step_last_q4) { check_step_last("cpu", CacheType::q4, "q4_cache", false); }
EXL_TEST(cache_cpu, token_by_token_perplexity) { check_token_by_token_ppl("cpu", 1); }

EXL_GPU_TEST(cuda_cache, step_last_fp16) { check_step_last("cuda", CacheType::fp16, "fp16_cache", true); }
EXL_GPU_TEST(cuda_cache, step_last_q8) { check_step_last("cuda", CacheType::q8, "q8_cache", true); }
EXL_GPU_TEST(cuda_cache, step_last_q4) { check_step_last("cuda", CacheType::q4, "q4_cache", false); }
EXL_GPU_TEST(cuda_cache, token_by_token_perplexity) { check_token_by_token_ppl("cuda", 4); }
