// Bit allocation (spec §7.8). ExLlamaV2 anneals; we solve the same objective (minimise
// sum(error^eta) subject to total bits <= budget) with a multiple-choice knapsack DP over a fine
// grid of bit costs (costs rounded up, so the DP never overshoots), then refine greedily with
// exact costs. eta is chosen like ExLlamaV2: sweep 1.5..3.5, keep the eta whose solution has the
// smallest maximum per-block error, refine around it, return the minimum-energy solution there.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exl/convert.h"
#include "exl/error.h"

namespace exl {
namespace {

struct Slots {
  std::vector<std::vector<std::uint64_t>> cost;
  std::vector<std::vector<double>> error;
};

struct Solution {
  std::vector<int> choice;
  std::uint64_t cost = 0;
  double energy = 0.0;
  double max_error = 0.0;
};

double energy_of(const Slots& s, const std::vector<int>& ch, double eta) {
  double e = 0.0;
  for (std::size_t i = 0; i < ch.size(); ++i) e += std::pow(s.error[i][std::size_t(ch[i])], eta);
  return e;
}

Solution solve(const Slots& s, std::uint64_t budget, double eta) {
  const std::size_t S = s.cost.size();
  const std::uint64_t buckets = std::min<std::uint64_t>(budget, 20000);
  const double width = double(budget) / double(buckets);
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t C = std::size_t(buckets) + 1;
  std::vector<double> dp(C, inf), next(C);
  dp[0] = 0.0;
  std::vector<std::vector<std::uint8_t>> back(S, std::vector<std::uint8_t>(C, 0));
  for (std::size_t i = 0; i < S; ++i) {
    std::fill(next.begin(), next.end(), inf);
    for (std::size_t o = 0; o < s.cost[i].size(); ++o) {
      const std::size_t c = std::size_t(std::ceil(double(s.cost[i][o]) / width - 1e-9));
      const double e = std::pow(s.error[i][o], eta);
      for (std::size_t b = 0; b + c < C; ++b) {
        if (dp[b] == inf) continue;
        const double v = dp[b] + e;
        if (v < next[b + c]) {
          next[b + c] = v;
          back[i][b + c] = std::uint8_t(o);
        }
      }
    }
    dp.swap(next);
  }
  std::size_t best = 0;
  for (std::size_t b = 1; b < C; ++b)
    if (dp[b] < dp[best]) best = b;
  Solution sol;
  sol.choice.assign(S, 0);
  if (dp[best] == inf) {  // infeasible on the rounded grid: start from the cheapest choice
    for (std::size_t i = 0; i < S; ++i)
      sol.choice[i] = int(std::min_element(s.cost[i].begin(), s.cost[i].end()) - s.cost[i].begin());
  } else for (std::size_t i = S; i-- > 0;) {
    const int o = back[i][best];
    sol.choice[i] = o;
    best -= std::size_t(std::ceil(double(s.cost[i][std::size_t(o)]) / width - 1e-9));
  }
  // Greedy refinement with exact costs: take the best energy-reducing single move that fits.
  for (std::uint64_t cost = 0;;) {
    cost = 0;
    for (std::size_t i = 0; i < S; ++i) cost += s.cost[i][std::size_t(sol.choice[i])];
    double best_gain = 0.0;
    std::size_t bi = 0, bo = 0;
    for (std::size_t i = 0; i < S; ++i) {
      const std::uint64_t cur = s.cost[i][std::size_t(sol.choice[i])];
      const double ecur = std::pow(s.error[i][std::size_t(sol.choice[i])], eta);
      for (std::size_t o = 0; o < s.cost[i].size(); ++o) {
        if (cost - cur + s.cost[i][o] > budget) continue;
        const double gain = ecur - std::pow(s.error[i][o], eta);
        if (gain > best_gain + 1e-15) { best_gain = gain; bi = i; bo = o; }
      }
    }
    if (best_gain <= 0.0) break;
    sol.choice[bi] = int(bo);
  }
  for (std::size_t i = 0; i < S; ++i) {
    sol.cost += s.cost[i][std::size_t(sol.choice[i])];
    sol.max_error = std::max(sol.max_error, s.error[i][std::size_t(sol.choice[i])]);
  }
  sol.energy = energy_of(s, sol.choice, eta);
  return sol;
}

}  // namespace

OptimizerResult optimize_strategy(const Measurement& m, std::uint64_t budget_bits) {
  Slots s;
  std::uint64_t cheapest = 0;
  for (const MeasuredBlock& b : m.blocks) {
    if (b.options.empty() || b.options.size() > 255)
      throw Error(ErrorKind::invalid_argument, "block has no (or too many) measured options", {}, b.key);
    std::vector<std::uint64_t> c;
    std::vector<double> e;
    for (const MeasuredOption& o : b.options) {
      c.push_back(o.total_bits);
      e.push_back(std::max(1e-9, 1.0 - o.accuracy));
    }
    cheapest += *std::min_element(c.begin(), c.end());
    s.cost.push_back(std::move(c));
    s.error.push_back(std::move(e));
  }
  if (cheapest > budget_bits)
    throw Error(ErrorKind::invalid_argument,
                "the target bitrate is below what the option tables can reach (cheapest choice needs " +
                    std::to_string(cheapest) + " bits, budget " + std::to_string(budget_bits) + ")");
  auto better_max = [](const Solution& a, const Solution& b) {
    return a.max_error < b.max_error - 1e-12 || (std::fabs(a.max_error - b.max_error) <= 1e-12 && a.energy < b.energy);
  };
  double eta_best = 1.5;
  Solution best = solve(s, budget_bits, eta_best);
  for (int i = 1; i <= 8; ++i) {
    const double eta = 1.5 + 2.0 * i / 8.0;
    Solution sol = solve(s, budget_bits, eta);
    if (better_max(sol, best)) { best = sol; eta_best = eta; }
  }
  const double center = eta_best;
  for (int i = -2; i <= 2; ++i) {
    const double eta = center + 0.075 * i / 2.0;
    Solution sol = solve(s, budget_bits, eta);
    if (better_max(sol, best)) { best = sol; eta_best = eta; }
  }
  if (best.cost > budget_bits || best.choice.size() != m.blocks.size())
    throw Error(ErrorKind::internal, "optimizer found no solution within the budget");
  OptimizerResult r;
  r.choice = best.choice;
  r.total_bits = best.cost;
  r.max_error = best.max_error;
  return r;
}

}  // namespace exl
