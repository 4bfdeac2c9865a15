// Shared by the model-family suites of both backends (test_families.cpp, test_cuda_families.cpp):
// a family fixture loaded on a backend with its cache, and all-position logits against
// transformers' (family_refs.h).
#pragma once
#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "exl/backend.h"
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

}  // namespace exl::test
