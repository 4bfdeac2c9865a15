// Sampler stages against an independent computation on random logits: the filtered
// distributions, chi-square of 100 000 draws, penalties, bias/ban/mask, seed reproducibility.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "exl/error.h"
#include "exl/generator.h"
#include "exl_test.h"

namespace {

using exl::Candidate;
using exl::Sampler;
using exl::SamplerSettings;

std::vector<float> random_logits(int n, std::uint32_t seed, float scale = 2.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> l(static_cast<std::size_t>(n));
  for (auto& x : l) x = d(g);
  return l;
}

// Independent reference: full sort, textbook definitions, in the documented order.
std::vector<double> reference(const std::vector<float>& logits, const SamplerSettings& s) {
  const std::size_t n = logits.size();
  std::vector<double> p(n);
  double mx = *std::max_element(logits.begin(), logits.end()), tot = 0;
  for (std::size_t i = 0; i < n; ++i) tot += p[i] = std::exp((logits[i] - mx) / s.temperature);
  for (auto& x : p) x /= tot;
  auto order = [&] {
    std::vector<std::size_t> o(n);
    std::iota(o.begin(), o.end(), 0);
    std::stable_sort(o.begin(), o.end(), [&](auto a, auto b) { return p[a] > p[b]; });
    return o;
  };
  auto norm = [&] {
    const double t = std::accumulate(p.begin(), p.end(), 0.0);
    for (auto& x : p) x /= t;
  };
  if (s.top_k > 0) {
    const auto o = order();
    for (std::size_t r = std::size_t(s.top_k); r < n; ++r) p[o[r]] = 0;
    norm();
  }
  if (s.top_p < 1) {
    const auto o = order();
    double cum = 0;
    std::size_t r = 0;
    for (; r < n; ++r) {
      cum += p[o[r]];
      if (cum >= s.top_p) break;
    }
    for (std::size_t j = r + 1; j < n; ++j) p[o[j]] = 0;
    norm();
  }
  if (s.min_p > 0) {
    const double f = *std::max_element(p.begin(), p.end()) * s.min_p;
    for (auto& x : p)
      if (x < f) x = 0;
    norm();
  }
  if (s.typical > 0 && s.typical < 1) {
    double h = 0;
    for (double x : p)
      if (x > 0) h -= x * std::log(x);
    std::vector<std::size_t> o;
    for (std::size_t i = 0; i < n; ++i)
      if (p[i] > 0) o.push_back(i);
    std::stable_sort(o.begin(), o.end(),
                     [&](auto a, auto b) { return std::abs(-std::log(p[a]) - h) < std::abs(-std::log(p[b]) - h); });
    double cum = 0;
    std::size_t r = 0;
    for (; r < o.size(); ++r) {
      cum += p[o[r]];
      if (cum >= s.typical) break;
    }
    for (std::size_t j = r + 1; j < o.size(); ++j) p[o[j]] = 0;
    norm();
  }
  return p;
}

// Chi-square goodness of fit of `draws` samples against `expect`; fails when p < 0.001
// (critical value from the Wilson-Hilferty approximation, z = 3.0902).
void check_chi_square(Sampler& smp, const std::vector<float>& logits, const std::vector<double>& expect, int draws) {
  std::vector<int> count(expect.size());
  for (int i = 0; i < draws; ++i) ++count[std::size_t(smp.sample(logits))];
  double chi = 0;
  int bins = 0;
  for (std::size_t i = 0; i < expect.size(); ++i) {
    if (expect[i] == 0) {
      CHECK_MSG(count[i] == 0, "token " + std::to_string(i) + " drawn although filtered out");
      continue;
    }
    const double e = expect[i] * draws;
    chi += (count[i] - e) * (count[i] - e) / e;
    ++bins;
  }
  const double df = std::max(1, bins - 1);
  const double crit = df * std::pow(1 - 2 / (9 * df) + 3.0902 * std::sqrt(2 / (9 * df)), 3);
  CHECK_MSG(chi < crit, "chi-square " + std::to_string(chi) + " >= " + std::to_string(crit) + " (df " +
                            std::to_string(df) + ")");
}

void check_filter(SamplerSettings s, std::uint32_t logit_seed) {
  const auto logits = random_logits(24, logit_seed);
  const auto expect = reference(logits, s);
  Sampler smp(s);
  std::vector<Candidate> dist;
  smp.distribution(logits, {}, dist);
  std::vector<double> got(logits.size());
  for (const auto& c : dist) got[std::size_t(c.id)] = c.p;
  for (std::size_t i = 0; i < got.size(); ++i)
    CHECK_MSG(std::abs(got[i] - expect[i]) < 1e-5,
              "token " + std::to_string(i) + ": " + std::to_string(got[i]) + " vs " + std::to_string(expect[i]));
  check_chi_square(smp, logits, expect, 100000);
}

}  // namespace

EXL_TEST(sampler, temperature) {
  SamplerSettings s;
  s.temperature = 0.7f;
  s.seed = 1;
  check_filter(s, 11);
}

EXL_TEST(sampler, top_k) {
  SamplerSettings s;
  s.top_k = 5;
  s.seed = 2;
  check_filter(s, 12);
}

EXL_TEST(sampler, top_p) {
  SamplerSettings s;
  s.top_p = 0.8f;
  s.temperature = 1.3f;
  s.seed = 3;
  check_filter(s, 13);
}

EXL_TEST(sampler, min_p) {
  SamplerSettings s;
  s.min_p = 0.1f;
  s.seed = 4;
  check_filter(s, 14);
}

EXL_TEST(sampler, typical) {
  SamplerSettings s;
  s.typical = 0.6f;
  s.seed = 5;
  check_filter(s, 15);
}

EXL_TEST(sampler, combined_filters) {
  SamplerSettings s;
  s.temperature = 0.9f;
  s.top_k = 12;
  s.top_p = 0.9f;
  s.min_p = 0.02f;
  s.typical = 0.95f;
  s.seed = 6;
  check_filter(s, 16);
}

EXL_TEST(sampler, top_p_large_vocab_partial_selection) {
  // 50 000 flat-ish logits: the nucleus is larger than the first partial-sort block.
  const auto logits = random_logits(50000, 21, 0.5f);
  SamplerSettings s;
  s.top_p = 0.5f;
  const auto expect = reference(logits, s);
  Sampler smp(s);
  std::vector<Candidate> dist;
  smp.distribution(logits, {}, dist);
  std::size_t kept = 0;
  for (double e : expect) kept += e > 0;
  CHECK(kept > 1000);
  CHECK_EQ(dist.size(), kept);
  for (const auto& c : dist) CHECK(std::abs(c.p - expect[std::size_t(c.id)]) < 1e-6);
}

EXL_TEST(sampler, penalties_match_hand_computation) {
  std::vector<float> l = {2.0f, -1.0f, 0.5f, 3.0f, -2.0f, 1.0f};
  SamplerSettings s;
  s.repetition_penalty = 1.5f;
  s.frequency_penalty = 0.25f;
  s.presence_penalty = 0.1f;
  s.penalty_range = 4;
  const std::vector<std::int32_t> ctx = {3, 0, 1, 1, 4, 1};  // window: 1, 1, 4, 1 (token 0 and 3 outside)
  Sampler smp(s);
  std::vector<float> out;
  const auto a = smp.adjust(l, ctx, out);
  CHECK_NEAR(a[0], 2.0f, 1e-6);
  CHECK_NEAR(a[3], 3.0f, 1e-6);
  CHECK_NEAR(a[1], -1.0f * 1.5f - 0.1f - 3 * 0.25f, 1e-6);
  CHECK_NEAR(a[4], -2.0f * 1.5f - 0.1f - 0.25f, 1e-6);
  CHECK_NEAR(a[2], 0.5f, 1e-6);
  s.penalty_range = -1;  // whole context
  Sampler all(s);
  const auto b = all.adjust(l, ctx, out);
  CHECK_NEAR(b[0], 2.0f / 1.5f - 0.1f - 0.25f, 1e-6);
  CHECK_NEAR(b[3], 3.0f / 1.5f - 0.1f - 0.25f, 1e-6);
  // Greedy after penalties: 3 -> 1.65 still wins over 5 (1.0, unseen); with rep 4, 3 -> 0.4 and 5 wins.
  s.greedy = true;
  Sampler g(s);
  CHECK_EQ(g.sample(l, ctx), 3);
  s.repetition_penalty = 4.0f;
  Sampler g2(s);
  CHECK_EQ(g2.sample(l, ctx), 5);
}

EXL_TEST(sampler, bias_ban_and_vocab_mask) {
  const auto logits = random_logits(16, 31);
  const int best = int(exl::argmax(logits));
  SamplerSettings s;
  s.greedy = true;
  s.banned_tokens = {best};
  Sampler ban(s);
  const int second = ban.sample(logits);
  CHECK(second != best);
  s.banned_tokens.clear();
  s.logit_bias = {{7, 100.0f}};
  CHECK_EQ(Sampler(s).sample(logits), 7);
  s.logit_bias = {{7, 100.0f}};
  s.vocab_limit = 7;  // 7 is beyond the tokenizer vocabulary: masked despite the bias
  const int m = Sampler(s).sample(logits);
  CHECK(m < 7);
  // Sampled: banned and masked ids never appear.
  SamplerSettings t;
  t.temperature = 2.0f;
  t.banned_tokens = {0, 1};
  t.vocab_limit = 12;
  Sampler smp(t);
  for (int i = 0; i < 20000; ++i) {
    const int id = smp.sample(logits);
    CHECK(id >= 2 && id < 12);
  }
  s.logit_bias = {{16, 1.0f}};
  CHECK_THROWS_ERROR(Sampler(s).sample(logits), exl::ErrorKind::invalid_argument, "beyond the vocabulary");
}

EXL_TEST(sampler, seed_reproduces_and_differs) {
  const auto logits = random_logits(64, 41, 1.0f);
  SamplerSettings s;
  s.top_k = 40;
  s.top_p = 0.95f;
  s.seed = 1234;
  Sampler a(s), b(s);
  s.seed = 1235;
  Sampler c(s);
  std::vector<int> ra, rb, rc;
  for (int i = 0; i < 200; ++i) {
    ra.push_back(a.sample(logits));
    rb.push_back(b.sample(logits));
    rc.push_back(c.sample(logits));
  }
  CHECK(ra == rb);
  CHECK(ra != rc);
}

EXL_TEST(sampler, bad_settings_throw) {
  auto bad = [](auto edit) {
    SamplerSettings s;
    edit(s);
    CHECK_THROWS_ERROR(Sampler{s}, exl::ErrorKind::invalid_argument, "sampler setting");
  };
  bad([](SamplerSettings& s) { s.temperature = -1; });
  bad([](SamplerSettings& s) { s.top_p = 0; });
  bad([](SamplerSettings& s) { s.min_p = 1.5f; });
  bad([](SamplerSettings& s) { s.typical = -0.1f; });
  bad([](SamplerSettings& s) { s.repetition_penalty = 0; });
  bad([](SamplerSettings& s) { s.penalty_range = -2; });
  bad([](SamplerSettings& s) { s.top_k = -1; });
  bad([](SamplerSettings& s) { s.banned_tokens = {-3}; });
}
