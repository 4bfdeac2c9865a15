// plan_synth: the groups of every linear of a synthetic EXL2 model. Each decoder layer gets a
// target around the requested bpw (a zero-mean cosine over the layers, so the mix differs from
// layer to layer), each linear a two-width mix (adjacent widths of 8/6/5/4/3/2) in groups of a
// preferred size (32, 64 or 128 rows, by projection and seed; down_proj may open with a 5 %
// 8-bit slice in 32-row groups as the converter's MLP options do), chosen to land closest to its
// share of the bit budget; what a linear misses is carried to the next (error diffusion), so the
// decoder's average lands on the request even for tiny models. Counting as in spec §7.6 / `exl
// inspect`: storage bits over k·n.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "exl/error.h"
#include "exl/synth.h"
#include "synth_projections.h"

namespace exl::synth {
namespace {

std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr int kWidths[] = {2, 3, 4, 5, 6, 8};

struct Candidate {
  int prefix_rows = 0;  // 8-bit rows in 32-row groups first
  int gs = 128, hi = 4, lo = 4, n_hi = 0;
  std::uint64_t bits = 0;
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Storage bits of a candidate, closed form (same sum as linear_total_bits).
std::uint64_t candidate_bits(const Candidate& c, int k, int n) {
  const std::int64_t n_pad = (n + 31) / 32 * 32;
  const std::int64_t r = k - c.prefix_rows;
  const std::int64_t hi_rows = std::min<std::int64_t>(std::int64_t(c.n_hi) * c.gs, r), lo_rows = r - hi_rows;
  const std::int64_t groups = c.prefix_rows / 32 + ceil_div(hi_rows, c.gs) + ceil_div(lo_rows, c.gs);
  const std::int64_t data = n_pad * (std::int64_t(c.prefix_rows) * 8 + hi_rows * c.hi + lo_rows * c.lo);
  return std::uint64_t(data + groups * (16 + 32 + n_pad * 4) + std::int64_t(k) * 32);
}

GroupLayout candidate_layout(const Candidate& c, int k) {
  GroupLayout l;
  auto emit = [&](int rows, int gs, int bits) {
    while (rows > 0) {
      const int r = std::min(rows, gs);
      l.bits.push_back(bits);
      l.rows.push_back(r);
      rows -= r;
    }
  };
  const int r = k - c.prefix_rows;
  const int hi_rows = std::min(c.n_hi * c.gs, r);
  emit(c.prefix_rows, 32, 8);
  emit(hi_rows, c.gs, c.hi);
  emit(r - hi_rows, c.gs, c.lo);
  return l;
}

// The candidate closest to `target` bits; candidates off the preferred group size / prefix pay a
// small penalty, so preferences hold wherever they cost (almost) nothing.
Candidate choose(int k, int n, double target, int pref_gs, bool pref_prefix) {
  const double penalty = 0.002 * double(k) * double(n);
  Candidate best;
  double best_score = 1e300;
  const int prefix_opt = (std::max(32, int(std::lround(0.05 * k / 32.0)) * 32));
  for (bool prefix : {false, true}) {
    if (prefix && prefix_opt >= k) continue;
    for (int gs : {32, 64, 128}) {
      for (int w = 0; w < 6; ++w) {
        Candidate c;
        c.prefix_rows = prefix ? prefix_opt : 0;
        c.gs = gs;
        c.lo = kWidths[w];
        c.hi = w + 1 < 6 ? kWidths[w + 1] : kWidths[w];
        if (prefix && c.hi > 8) continue;
        const int r = k - c.prefix_rows;
        const int max_hi = int(ceil_div(r, gs));
        for (c.n_hi = 0; c.n_hi <= max_hi; ++c.n_hi) {
          c.bits = candidate_bits(c, k, n);
          const double score = std::fabs(double(c.bits) - target) + (gs != pref_gs ? penalty : 0.0) +
                               (prefix != pref_prefix ? penalty : 0.0);
          if (score < best_score) {
            best_score = score;
            best = c;
          }
        }
      }
    }
  }
  return best;
}


}  // namespace

std::uint64_t LinearPlan::storage_bits() const {
  return exl3_bits2 > 0 ? exl3_storage_bits(k, n, exl3_bits2) : linear_total_bits(layout, k, n, 0);
}

SynthPlan plan_synth(const ModelConfig& c, double bpw, int head_bits, std::uint64_t seed) {
  if (!(bpw >= 2.0 && bpw <= 8.0))
    throw Error(ErrorKind::invalid_argument, "bpw must be between 2.0 and 8.0 (got " + std::to_string(bpw) + ")", "",
                "--bpw");
  QuantOption head_opt;
  try {
    head_opt = head_option(head_bits);
  } catch (const Error&) {
    throw Error(ErrorKind::invalid_argument,
                "head bits must be 2, 3, 4, 5, 6 or 8 (got " + std::to_string(head_bits) + ")", "", "--head-bits");
  }
  const int h = c.hidden_size;
  for (int i = 0; i < c.num_layers; ++i)
    for (const Proj& pr : decoder_projections(c, i))  // in_features: hidden, attention, MLP
      if (pr.k % 32 != 0) throw Error(ErrorKind::config, "EXL2 needs in_features that are multiples of 32");

  SynthPlan p;
  p.config = c;
  p.target_bpw = bpw;
  p.head_bits = head_bits;
  const int layers = c.num_layers;
  const double amp = std::clamp(std::min({0.35, bpw - 2.1, 7.95 - bpw}), 0.0, 0.35);
  double carry = 0.0, bits_sum = 0.0, weights_sum = 0.0;
  for (int i = 0; i < layers; ++i) {
    const double t = layers > 1 ? bpw + amp * std::cos(2.0 * std::numbers::pi * (i + 0.5) / layers) : bpw;
    const std::vector<Proj> projs = decoder_projections(c, i);
    for (std::size_t j = 0; j < projs.size(); ++j) {
      const Proj& pr = projs[j];
      if (pr.keep16) {  // the router: 16 bits, outside the average
        p.decoder.push_back(LinearPlan{"model.layers." + std::to_string(i) + "." + pr.name, pr.k, pr.n, pr.bias, {}, 0});
        continue;
      }
      const std::uint64_t hsh = mix64(seed * 131 + std::uint64_t(i) * 7 + std::uint64_t(j));
      static constexpr int kSizes[] = {32, 64, 128};
      int pref_gs = kSizes[hsh % 3];
      if (t < 2.6) pref_gs = 128;  // small groups cost 0.06-0.12 bpw of scales: keep low targets reachable
      const bool pref_prefix = j + 1 == projs.size() && t >= 3.0 && (hsh >> 8) % 2 == 0;
      const double target = t * double(pr.k) * double(pr.n) + carry;
      const Candidate cand = choose(pr.k, pr.n, target, pref_gs, pref_prefix);
      carry = target - double(cand.bits);
      LinearPlan lp;
      lp.prefix = "model.layers." + std::to_string(i) + "." + pr.name;
      lp.k = pr.k;
      lp.n = pr.n;
      lp.bias = pr.bias;
      lp.layout = candidate_layout(cand, pr.k);
      bits_sum += double(lp.storage_bits());
      weights_sum += double(pr.k) * double(pr.n);
      p.decoder.push_back(std::move(lp));
    }
  }
  p.decoder_bpw = bits_sum / weights_sum;
  p.head.prefix = "lm_head";
  p.head.k = h;
  p.head.n = c.vocab_size;
  p.head.layout = group_layout(head_opt, h);
  p.head_bpw = double(p.head.storage_bits()) / (double(h) * double(c.vocab_size));
  return p;
}

}  // namespace exl::synth
