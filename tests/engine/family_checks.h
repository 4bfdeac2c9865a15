// Shared by the model-family suites (test_families.cpp, test_cuda_families.cpp, test_moe.cpp, the
// synth suites): a family fixture loaded on a backend with its cache, all-position logits and
// greedy steps against transformers' (family_refs.h), a synthesized model's prefill.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "exl/backend.h"
#include "exl/generator.h"
#include "exl/model.h"
#include "family_refs.h"

namespace exl::test {

struct FamilyRun {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Backend> backend;
};

// The model in folder `dir` on `backend`.
inline FamilyRun open_model_in(const std::string& dir, std::unique_ptr<Backend> backend, const CacheOptions& cache) {
  FamilyRun r;
  r.model = Model::open(dir);
  r.backend = std::move(backend);
  r.backend->load(r.model);
  r.backend->allocate_cache(cache);
  return r;
}

#ifdef EXL_FAMILIES_TEST_DATA
inline FamilyRun open_family(const std::string& name, std::unique_ptr<Backend> backend, const CacheOptions& cache) {
  return open_model_in(family_dir(name), std::move(backend), cache);
}
#endif

// Every position's logits within rel_max (relative L2) of the reference and, with check_top1,
// the same top-1 where the reference's top two are 1e-3 apart or more.
inline void compare_family_logits(const std::string& what, const FamilyPrompt& p, const std::vector<float>& ours,
                                  double rel_max, bool check_top1 = true) {
  const LogitBlock& ref = p.logits;
  CHECK_EQ(int(ours.size()), ref.rows * ref.cols);
  if (int(ours.size()) != ref.rows * ref.cols) return;
  double worst = 0;
  for (int t = 0; t < ref.rows; ++t) {
    std::span<const float> o(ours.data() + std::size_t(t) * std::size_t(ref.cols), std::size_t(ref.cols));
    const double rel = relative_l2(ref.row(t), o);
    worst = std::max(worst, rel);
    CHECK_MSG(rel <= rel_max, what << " " << p.name << " position " << t << ": relative L2 " << rel);
    if (check_top1 && top1_top2_gap(ref.row(t)) >= 1e-3f)
      CHECK_MSG(top1(o) == top1(ref.row(t)), what << " " << p.name << " position " << t << ": top-1 differs");
  }
  if (options().verbose) std::printf("  %s %s: worst relative L2 %.2e\n", what.c_str(), p.name.c_str(), worst);
}

// transformers' greedy continuation of p, one decode step at a time through b's cache (already
// holding nothing): equal up to the first step whose reference top-1/top-2 margin is below 0.02.
inline void check_greedy_steps(const std::string& what, const FamilyPrompt& p, Backend& b) {
  std::vector<float> logits;
  prefill(b, p.ids, 2048, LogitsWanted::last, logits);
  for (std::size_t i = 0; i < p.greedy.size(); ++i) {
    const int ours = top1(logits);
    CHECK_MSG(ours == p.greedy[i], what << " " << p.name << " greedy step " << i << ": " << ours << " vs " << p.greedy[i]);
    if (ours != p.greedy[i] || p.greedy_margins[i] < 0.02f) break;
    const std::int32_t id = p.greedy[i];
    b.forward(std::span<const std::int32_t>(&id, 1), LogitsWanted::last, logits);
  }
}

// A synthesized model runs on the CPU: the prefill logits of `tokens` ids (below 480) are finite and
// not flat.
inline void check_synth_prefill(const std::shared_ptr<const Model>& model, int vocab, int tokens, const std::string& what) {
  auto b = make_cpu_backend({});
  b->load(model);
  b->allocate_cache({64, CacheType::fp16});
  std::vector<std::int32_t> ids(static_cast<std::size_t>(tokens));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = std::int32_t((i * 37 + 11) % 480);
  std::vector<float> logits;
  prefill(*b, ids, 2048, LogitsWanted::all, logits);
  CHECK_EQ(logits.size(), ids.size() * std::size_t(vocab));
  float spread = 0;
  bool finite = true;
  for (float v : logits) {
    finite = finite && std::isfinite(v);
    spread = std::max(spread, std::fabs(v));
  }
  CHECK_MSG(finite && spread > 0.01f, what << ": logits not finite or flat");
}

}  // namespace exl::test
