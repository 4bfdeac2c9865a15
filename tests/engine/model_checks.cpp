#include "model_checks.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "exl/generator.h"
#include "exl/model.h"
#include "exl/perplexity.h"
#include "refs.h"

namespace exl::test {
namespace {

struct Loaded {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Backend> backend;
};

Loaded load(const std::string& device, const std::string& folder, CacheType cache, int ctx) {
  Loaded l;
  l.model = Model::open(fixture("models/" + folder));
  BackendOptions o;
  l.backend = make_backend(device, o);
  l.backend->load(l.model);
  l.backend->allocate_cache({ctx, cache});
  return l;
}

std::vector<float> run_all_logits(Backend& b, const std::vector<std::int32_t>& ids) {
  b.truncate_cache(0);
  std::vector<float> logits;
  prefill(b, ids, 2048, LogitsWanted::all, logits);
  return logits;
}

}  // namespace

void check_hf_logits(const std::string& device, const std::string& model, CacheType cache, double rel_l2_max) {
  auto refs = read_logit_blocks("logits_hf_" + model);
  Loaded l = load(device, "hf/" + model, cache, 512);
  for (const Prompt& p : read_prompts()) {
    const LogitBlock& ref = refs.at(p.name);
    const auto ours = run_all_logits(*l.backend, p.ids);
    CHECK_EQ(int(ours.size()), ref.rows * ref.cols);
    for (int t = 0; t < ref.rows; ++t) {
      std::span<const float> o(ours.data() + std::size_t(t) * std::size_t(ref.cols), std::size_t(ref.cols));
      const double rel = relative_l2(ref.row(t), o);
      CHECK_MSG(rel <= rel_l2_max, model << " prompt " << p.name << " position " << t << ": relative L2 " << rel);
      if (top1_top2_gap(ref.row(t)) >= 1e-3f)
        CHECK_MSG(top1(o) == top1(ref.row(t)), model << " prompt " << p.name << " position " << t << ": top-1 differs");
    }
  }
}

void check_logit_block(const std::string& model, const std::string& prompt, const LogitBlock& ref,
                       const std::vector<float>& ours) {
  CHECK_EQ(int(ours.size()), ref.rows * ref.cols);
  if (int(ours.size()) != ref.rows * ref.cols) return;
  double kl_sum = 0, max_diff = 0;
  for (int t = 0; t < ref.rows; ++t) {
    std::span<const float> o(ours.data() + std::size_t(t) * std::size_t(ref.cols), std::size_t(ref.cols));
    max_diff = std::max(max_diff, max_abs_diff(ref.row(t), o));
    kl_sum += kl_divergence(ref.row(t), o);
    if (top1_top2_gap(ref.row(t)) >= 0.02f)
      CHECK_MSG(top1(o) == top1(ref.row(t)), model << " prompt " << prompt << " position " << t << ": top-1 differs");
  }
  const double kl = kl_sum / ref.rows;
  if (options().verbose)
    std::printf("  %s %s: max |dlogit| %.4f, mean KL %.2e\n", model.c_str(), prompt.c_str(), max_diff, kl);
  CHECK_MSG(max_diff <= 0.1, model << " prompt " << prompt << ": max |dlogit| " << max_diff);
  CHECK_MSG(kl <= 1e-4, model << " prompt " << prompt << ": mean KL " << kl);
}

void check_exl2_logits(const std::string& device, const std::string& model) {
  auto refs = read_logit_blocks("logits_exl2_" + model);
  Loaded l = load(device, "exl2/" + model, CacheType::fp16, 512);
  for (const Prompt& p : read_prompts()) {
    const LogitBlock& ref = refs.at(p.name);
    const auto ours = run_all_logits(*l.backend, p.ids);
    check_logit_block(model, p.name, ref, ours);
  }
}

void check_greedy_continuations(const std::string& model, const nlohmann::json& refs, Backend& backend) {
  // EXL_TEST_GREEDY_STEPS=N: the first N steps of each continuation only (the CUDA emulator's run,
  // where a step costs seconds; every step runs the same decode path).
  const char* steps_env = std::getenv("EXL_TEST_GREEDY_STEPS");
  const std::size_t steps = steps_env && std::atoi(steps_env) > 0 ? std::size_t(std::atoi(steps_env)) : SIZE_MAX;
  for (const Prompt& p : read_prompts()) {
    const auto& r = refs[p.name];
    auto want = r["new_ids"].get<std::vector<std::int32_t>>();
    if (want.size() > steps) want.resize(steps);
    const auto margin = r["top1_top2_logit_margin"].get<std::vector<double>>();
    GenerateOptions o;
    o.max_new_tokens = int(want.size());
    o.ignore_eos = true;
    o.sampler.greedy = true;
    const GenerateResult g = generate(backend, nullptr, p.ids, o);
    CHECK_EQ(g.ids.size(), want.size());
    for (std::size_t i = 0; i < want.size() && i < g.ids.size(); ++i) {
      if (g.ids[i] == want[i]) continue;
      bool tie_before = false;
      for (std::size_t j = 0; j <= i; ++j) tie_before = tie_before || margin[j] < 0.02;
      CHECK_MSG(tie_before, model << " prompt " << p.name << ": step " << i << " gives " << g.ids[i]
                                  << ", reference " << want[i] << " (margin " << margin[i] << ")");
      break;
    }
  }
}

void check_exl2_greedy(const std::string& device, const std::string& model) {
  Loaded l = load(device, "exl2/" + model, CacheType::fp16, 512);
  check_greedy_continuations(model, read_json("refs/greedy_exl2.json")["results"][model], *l.backend);
}

void check_long_prompt(const std::string& device) {
  auto refs = read_logit_blocks("long_prompt_last_logits_exl2");
  const auto ids = read_json("refs/prompts.json")["long_prompt"]["ids"].get<std::vector<std::int32_t>>();
  Loaded l = load(device, "exl2/ref-s-4.0bpw", CacheType::fp16, 512);
  std::vector<float> logits;
  prefill(*l.backend, ids, 2048, LogitsWanted::last, logits);
  const LogitBlock& ref = refs.at("ref-s-4.0bpw/fp16_cache_single_forward");
  const double diff = max_abs_diff(ref.row(0), logits), kl = kl_divergence(ref.row(0), logits);
  CHECK_MSG(diff <= 0.1, "long prompt: max |dlogit| " << diff);
  CHECK_MSG(kl <= 1e-4, "long prompt: KL " << kl);
  CHECK_EQ(top1(logits), top1(ref.row(0)));
}

void check_exl2_ppl(const std::string& device, const std::string& model) {
  const auto ids_all = read_json("refs/ppl_ids.json");
  const auto refs = read_json("refs/ppl_exl2.json")["results"][model];
  Loaded l = load(device, "exl2/" + model, CacheType::fp16, 512);
  for (const std::string ds : {"wiki", "tiny"}) {
    const std::string key = ds + "_chunk_forward_nocache";
    if (!refs.contains(key)) continue;
    check_perplexity(model, *l.backend, ids_all[ds].get<std::vector<std::int32_t>>(), ds, refs[key]["ppl"]);
  }
}

void check_perplexity(const std::string& model, Backend& backend, const std::vector<std::int32_t>& ids,
                      const std::string& dataset, double want) {
  const PerplexityResult r = perplexity(backend, ids, 512, 2048);
  CHECK_EQ(ids.size() % 512, 0u);
  CHECK_EQ(r.n_predictions, std::int64_t(ids.size() / 512 * 511));  // 2044 for the usual 4 windows
  const double rel = std::fabs(r.ppl - want) / want;
  if (options().verbose)
    std::printf("  %s %s: ppl %.4f, reference %.4f (%.4f %%)\n", model.c_str(), dataset.c_str(), r.ppl, want, rel * 100);
  CHECK_MSG(rel <= 0.002, model << " " << dataset << ": ppl " << r.ppl << " vs reference " << want);
}

}  // namespace exl::test
