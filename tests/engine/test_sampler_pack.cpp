// The CPU side of device sampling: DeviceSamplerPacker (penalty window as distinct ids with
// counts, banned ids, bias sorted stably) and the per-id rule the device applies
// (module_api.h exl_cuda_sampler) reproducing Sampler::adjust bit for bit.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "exl/error.h"
#include "exl_test.h"
#include "runtime/cuda/device_sampler_pack.h"

using exl::DeviceSamplerPack;
using exl::DeviceSamplerPacker;
using exl::SamplerSettings;

namespace {

// Stages 1-4 as the device applies them from a pack.
std::vector<float> apply_pack(std::vector<float> l, const DeviceSamplerPack& p) {
  const int vocab = int(l.size());
  const int limit = p.vocab_limit > 0 && p.vocab_limit < vocab ? p.vocab_limit : vocab;
  for (std::size_t j = 0; j < p.penalty_ids.size(); ++j) {
    float& x = l[std::size_t(p.penalty_ids[j])];
    x = x > 0.0f ? x / p.repetition_penalty : x * p.repetition_penalty;
    x -= p.presence_penalty;
    for (int c = p.penalty_counts[j]; c > 0; --c) x -= p.frequency_penalty;
  }
  for (std::int32_t id : p.banned) l[std::size_t(id)] = -std::numeric_limits<float>::infinity();
  for (std::size_t j = 0; j < p.bias_ids.size(); ++j) l[std::size_t(p.bias_ids[j])] += p.bias_values[j];
  for (int i = limit; i < vocab; ++i) l[std::size_t(i)] = -std::numeric_limits<float>::infinity();
  return l;
}

}  // namespace

EXL_TEST(sampler, device_pack_penalty_window) {
  SamplerSettings s;
  s.repetition_penalty = 1.2f;
  DeviceSamplerPacker pk;
  DeviceSamplerPack p;
  const std::vector<std::int32_t> ctx = {5, 3, 5, 9, 5, 3, 77, -1};
  pk.pack(s, ctx, 50, p);  // 77 and -1 are outside the vocabulary
  CHECK((p.penalty_ids == std::vector<std::int32_t>{3, 5, 9}));
  CHECK((p.penalty_counts == std::vector<std::int32_t>{2, 3, 1}));
  s.penalty_range = 4;  // 5, 3, 77, -1
  pk.pack(s, ctx, 50, p);
  CHECK((p.penalty_ids == std::vector<std::int32_t>{3, 5}));
  CHECK((p.penalty_counts == std::vector<std::int32_t>{1, 1}));
  s.penalty_range = 0;
  pk.pack(s, ctx, 50, p);
  CHECK(p.penalty_ids.empty());
  SamplerSettings off;  // no penalty set: no list
  pk.pack(off, ctx, 50, p);
  CHECK(p.penalty_ids.empty() && !p.greedy);
  off.top_k = 1;
  pk.pack(off, ctx, 50, p);
  CHECK(p.greedy);
}

EXL_TEST(sampler, device_pack_ban_and_bias) {
  SamplerSettings s;
  s.banned_tokens = {4, 60, 2};
  s.logit_bias = {{9, 1.0f}, {2, 2.0f}, {9, 3.0f}, {2, 4.0f}};
  DeviceSamplerPacker pk;
  DeviceSamplerPack p;
  pk.pack(s, {}, 50, p);
  CHECK((p.banned == std::vector<std::int32_t>{4, 2}));
  CHECK((p.bias_ids == std::vector<std::int32_t>{2, 2, 9, 9}));
  CHECK((p.bias_values == std::vector<float>{2.0f, 4.0f, 1.0f, 3.0f}));
  s.logit_bias.push_back({50, 1.0f});
  bool threw = false;
  try {
    pk.pack(s, {}, 50, p);
  } catch (const exl::Error& e) {
    threw = e.kind() == exl::ErrorKind::invalid_argument;
  }
  CHECK(threw);
}

EXL_TEST(sampler, device_pack_rule_equals_host_adjust) {
  std::mt19937 g(404);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  DeviceSamplerPacker pk;
  DeviceSamplerPack p;
  std::vector<float> host_out;
  for (int trial = 0; trial < 300; ++trial) {
    const int vocab = 50 + int(u(g) * 3000);
    std::vector<float> logits(static_cast<std::size_t>(vocab));
    for (auto& x : logits) x = 8.0f * u(g) - 4.0f;
    SamplerSettings s;
    s.repetition_penalty = 0.7f + u(g);
    s.frequency_penalty = u(g) - 0.5f;
    s.presence_penalty = u(g) - 0.5f;
    s.penalty_range = u(g) < 0.5f ? -1 : int(u(g) * 200);
    for (int i = int(u(g) * 10); i > 0; --i) s.banned_tokens.push_back(std::int32_t(u(g) * vocab * 1.1f));
    for (int i = int(u(g) * 10); i > 0; --i) s.logit_bias.emplace_back(std::int32_t(u(g) * (vocab - 1)), 4.0f * u(g) - 2.0f);
    if (!s.logit_bias.empty()) s.logit_bias.push_back({s.logit_bias[0].first, 0.37f});
    if (u(g) < 0.3f) s.vocab_limit = int(u(g) * vocab);
    std::vector<std::int32_t> ctx(std::size_t(u(g) * 500));
    for (auto& id : ctx) id = std::int32_t(u(g) < 0.3f ? u(g) * 20 : u(g) * vocab);
    exl::Sampler host(s);
    const std::span<const float> want = host.adjust(logits, ctx, host_out);
    pk.pack(s, ctx, vocab, p);
    const std::vector<float> got = apply_pack(logits, p);
    for (int i = 0; i < vocab; ++i) {
      const float a = want[std::size_t(i)], b = got[std::size_t(i)];
      CHECK_MSG(std::memcmp(&a, &b, sizeof a) == 0, "trial " << trial << " id " << i << ": " << b << " vs " << a);
    }
  }
}

EXL_TEST(sampler, device_sampler_switch) {
  CHECK(exl::device_sampler_enabled(nullptr));
  CHECK(exl::device_sampler_enabled("1"));
  CHECK(!exl::device_sampler_enabled("0"));
}
