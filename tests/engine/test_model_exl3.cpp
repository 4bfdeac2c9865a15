// EXL3 models on the CPU backend against ExLlamaV3 1.6.5's own outputs (tests/data/exl3, made with
// EXL3_INT8_GEMV=0 on the GPU): logits of every reference model and prompt, greedy continuations,
// perplexity; and the quantized KV caches and chunked prefill working unchanged on an EXL3 model.
#include <algorithm>
#include <vector>

#include "exl/generator.h"
#include "exl/model.h"
#include "exl/perplexity.h"
#include "exl3_checks.h"
#include "exl3_twin.h"
#include "exl_test.h"
#include "refs.h"

using namespace exl;
using namespace exl::test;

EXL_TEST(model_exl3, logits_every_model) {
  for (const std::string& m : exl3_model_names()) check_exl3_logits("cpu", m);
}

EXL_TEST(generate_exl3, greedy_every_model) {
  for (const std::string& m : exl3_model_names()) check_exl3_greedy("cpu", m);
}

EXL_TEST(ppl_exl3, every_model) {
  for (const std::string& m : exl3_model_names()) check_exl3_ppl("cpu", m);
}

// Every KV cache type on an EXL3 model (the random model of exl3_twin.h): the quantized stores
// stay close to the FP16 store's logits, and chunked prefill equals one-shot prefill.
EXL_TEST(model_exl3, cache_types_and_chunked_prefill) {
  const auto model = Model::open(exl3_twin().exl3);
  auto ids = read_json("refs/prompts.json")["long_prompt"]["ids"].get<std::vector<std::int32_t>>();
  ids.resize(48);
  auto last_logits = [&](CacheType c, int chunk) {
    auto b = make_backend("cpu", BackendOptions{});
    b->load(model);
    b->allocate_cache({512, c});
    std::vector<float> logits;
    prefill(*b, ids, chunk, LogitsWanted::last, logits);
    return logits;
  };
  const auto base = last_logits(CacheType::fp16, 2048);
  const auto chunked = last_logits(CacheType::fp16, 16);
  CHECK_MSG(max_abs_diff(base, chunked) <= 1e-3, "chunked prefill differs by " << max_abs_diff(base, chunked));
  struct Want { CacheType type; double kl; };
  for (const Want& w : {Want{CacheType::fp32, 1e-6}, Want{CacheType::fp8, 5e-3}, Want{CacheType::q8, 1e-3}, Want{CacheType::q6, 5e-3}, Want{CacheType::q4, 2e-2}}) {
    const auto l = last_logits(w.type, 2048);
    CHECK_EQ(top1(l), top1(base));
    CHECK_MSG(kl_divergence(base, l) <= w.kl, "cache type " << int(w.type) << ": KL " << kl_divergence(base, l));
  }
}

// A random EXL3 model (every rate 1.5 .. 8 and codebook across its layers) against its exact dense
// twin (exl3_twin.h): the EXL3 path differs only by the fp16 rounding of the activations ExLlamaV3
// also applies (x, x * suh, the input transform), so logits agree to well under the EXL2 bounds.
EXL_TEST(model_exl3, random_model_equals_dense_twin) {
  const Exl3Twin& tw = exl3_twin();
  auto run = [&](const std::filesystem::path& dir, const std::vector<std::int32_t>& ids) {
    auto b = make_backend("cpu", BackendOptions{});
    b->load(Model::open(dir));
    b->allocate_cache({512, CacheType::fp32});
    std::vector<float> logits;
    prefill(*b, ids, 2048, LogitsWanted::all, logits);
    return logits;
  };
  for (const Prompt& p : read_prompts()) {
    const auto q = run(tw.exl3, p.ids), d = run(tw.dense, p.ids);
    CHECK_EQ(q.size(), d.size());
    const std::size_t V = 8192;
    double worst = 0, kl = 0, spread = 0;
    for (std::size_t t = 0; t < q.size() / V; ++t) {
      std::span<const float> a(d.data() + t * V, V), b(q.data() + t * V, V);
      worst = std::max(worst, max_abs_diff(a, b));
      kl += kl_divergence(a, b);
      spread = std::max(spread, double(*std::max_element(a.begin(), a.end()) - *std::min_element(a.begin(), a.end())));
      if (top1_top2_gap(a) >= 0.02f) CHECK_MSG(top1(a) == top1(b), p.name << " position " << t);
    }
    kl /= double(q.size() / V);
    if (options().verbose) std::printf("  twin %s: max |dlogit| %.4f (logit spread %.2f), mean KL %.2e\n", p.name.c_str(), worst, spread, kl);
    CHECK_MSG(spread > 1.0, "the random model's logits are degenerate");
    CHECK_MSG(worst <= 0.05 && kl <= 1e-5, p.name << ": max |dlogit| " << worst << ", mean KL " << kl);
  }
}

// Greedy generation and perplexity run on an EXL3 model and agree with the dense twin.
EXL_TEST(generate_exl3, random_model_greedy_and_ppl_equal_dense_twin) {
  const Exl3Twin& tw = exl3_twin();
  const auto ids = read_json("refs/ppl_ids.json")["wiki"].get<std::vector<std::int32_t>>();
  std::vector<std::int32_t> gen[2];
  double ppl[2];
  int i = 0;
  for (const auto& dir : {tw.exl3, tw.dense}) {
    auto b = make_backend("cpu", BackendOptions{});
    b->load(Model::open(dir));
    b->allocate_cache({512, CacheType::fp16});
    GenerateOptions o;
    o.max_new_tokens = 16;
    o.ignore_eos = true;
    o.sampler.greedy = true;
    gen[i] = generate(*b, nullptr, read_prompts()[0].ids, o).ids;
    ppl[i] = perplexity(*b, std::span<const std::int32_t>(ids.data(), 256), 128, 2048).ppl;
    ++i;
  }
  CHECK_EQ(gen[0].size(), std::size_t(16));
  std::size_t same = 0;
  while (same < gen[0].size() && gen[0][same] == gen[1][same]) ++same;
  CHECK_MSG(same >= 8, "greedy continuations agree for " << same << " of 16 tokens");
  CHECK_MSG(std::fabs(ppl[0] - ppl[1]) / ppl[1] <= 0.002, "ppl " << ppl[0] << " vs dense twin " << ppl[1]);
}
