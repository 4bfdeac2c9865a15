// Host-side sampler: penalties, ban, bias, vocabulary mask, temperature, top-k, top-p, min-p,
// typical, seeded draw. The order is documented in exl/generator.h.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exl/error.h"
#include "exl/generator.h"

namespace exl {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void bad(const std::string& field, const std::string& what) {
  throw Error(ErrorKind::invalid_argument, "sampler setting " + field + " " + what);
}

void renormalise(std::vector<Candidate>& c) {
  double total = 0;
  for (const auto& x : c) total += x.p;
  const float inv = total > 0 ? float(1.0 / total) : 0.0f;
  for (auto& x : c) x.p *= inv;
}

bool by_p_desc(const Candidate& a, const Candidate& b) { return a.p > b.p || (a.p == b.p && a.id < b.id); }

// Keeps the smallest prefix (by descending p) whose mass reaches top_p; sorts only as much as needed.
void apply_top_p(std::vector<Candidate>& c, float top_p) {
  std::size_t m = std::min<std::size_t>(c.size(), 64);
  std::size_t done = 0;  // c[0, done) sorted and accumulated
  double cum = 0;
  for (;;) {
    std::partial_sort(c.begin() + std::ptrdiff_t(done), c.begin() + std::ptrdiff_t(m), c.end(), by_p_desc);
    for (std::size_t i = done; i < m; ++i) {
      cum += c[i].p;
      if (cum >= double(top_p)) {
        c.resize(i + 1);
        return;
      }
    }
    done = m;
    if (m == c.size()) return;  // rounding: the whole set
    m = std::min(c.size(), m * 4);
  }
}

void apply_typical(std::vector<Candidate>& c, float typical) {
  double h = 0;
  for (const auto& x : c)
    if (x.p > 0) h -= double(x.p) * std::log(double(x.p));
  auto score = [h](const Candidate& x) { return std::abs(-std::log(double(std::max(x.p, 1e-30f))) - h); };
  std::sort(c.begin(), c.end(), [&](const Candidate& a, const Candidate& b) {
    const double sa = score(a), sb = score(b);
    return sa < sb || (sa == sb && a.id < b.id);
  });
  double cum = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    cum += c[i].p;
    if (cum >= double(typical)) {
      c.resize(i + 1);
      return;
    }
  }
}

}  // namespace

bool SamplerSettings::has_penalties() const {
  return penalty_range != 0 && (repetition_penalty != 1.0f || frequency_penalty != 0.0f || presence_penalty != 0.0f);
}

void SamplerSettings::validate() const {
  if (!(temperature >= 0) || !std::isfinite(temperature)) bad("temperature", "must be a finite number >= 0");
  if (top_k < 0) bad("top_k", "must be >= 0");
  if (!(top_p > 0 && top_p <= 1)) bad("top_p", "must be in (0, 1]");
  if (!(min_p >= 0 && min_p <= 1)) bad("min_p", "must be in [0, 1]");
  if (!(typical >= 0 && typical <= 1)) bad("typical", "must be in [0, 1]");
  if (!(repetition_penalty > 0) || !std::isfinite(repetition_penalty)) bad("repetition_penalty", "must be > 0");
  if (!std::isfinite(frequency_penalty)) bad("frequency_penalty", "must be finite");
  if (!std::isfinite(presence_penalty)) bad("presence_penalty", "must be finite");
  if (penalty_range < -1) bad("penalty_range", "must be >= -1 (-1 = whole context)");
  if (vocab_limit < 0) bad("vocab_limit", "must be >= 0");
  for (const auto& [id, b] : logit_bias) {
    if (id < 0) bad("logit_bias", "has a negative token id " + std::to_string(id));
    if (std::isnan(b)) bad("logit_bias", "has a NaN bias for token " + std::to_string(id));
  }
  for (std::int32_t id : banned_tokens)
    if (id < 0) bad("banned_tokens", "has a negative token id " + std::to_string(id));
}

std::int32_t argmax(std::span<const float> logits) {
  std::int32_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[std::size_t(best)]) best = std::int32_t(i);
  return best;
}

Sampler::Sampler(SamplerSettings s) : s_(std::move(s)), rng_(s_.seed) { s_.validate(); }

double Sampler::next_uniform() { return double(rng_() >> 11) * 0x1.0p-53; }

std::span<const float> Sampler::adjust(std::span<const float> logits, std::span<const std::int32_t> context,
                                       std::vector<float>& out) {
  const std::size_t vocab = logits.size();
  const bool pen = s_.has_penalties() && !context.empty();
  const bool mask = s_.vocab_limit > 0 && std::size_t(s_.vocab_limit) < vocab;
  if (!pen && !mask && s_.logit_bias.empty() && s_.banned_tokens.empty()) return logits;
  out.assign(logits.begin(), logits.end());
  if (pen) {
    // 1. Penalties, newest token first over the range; distinct tokens get rep/presence once.
    seen_.resize(vocab);
    const std::size_t n = s_.penalty_range < 0 ? context.size()
                                               : std::min(context.size(), std::size_t(s_.penalty_range));
    const auto window = context.subspan(context.size() - n);
    for (auto it = window.rbegin(); it != window.rend(); ++it) {
      const std::int32_t id = *it;
      if (id < 0 || std::size_t(id) >= vocab) continue;
      float& l = out[std::size_t(id)];
      if (!seen_[std::size_t(id)]) {
        seen_[std::size_t(id)] = 1;
        l = l > 0 ? l / s_.repetition_penalty : l * s_.repetition_penalty;
        l -= s_.presence_penalty;
      }
      l -= s_.frequency_penalty;
    }
    for (std::int32_t id : window)
      if (id >= 0 && std::size_t(id) < vocab) seen_[std::size_t(id)] = 0;
  }
  // 2. Banned tokens, 3. bias, 4. vocabulary mask.
  for (std::int32_t id : s_.banned_tokens)
    if (std::size_t(id) < vocab) out[std::size_t(id)] = kNegInf;
  for (const auto& [id, b] : s_.logit_bias) {
    if (std::size_t(id) >= vocab)
      bad("logit_bias", "names token " + std::to_string(id) + " beyond the vocabulary of " + std::to_string(vocab));
    out[std::size_t(id)] += b;
  }
  if (mask) std::fill(out.begin() + s_.vocab_limit, out.end(), kNegInf);
  return out;
}

void Sampler::distribution(std::span<const float> logits, std::span<const std::int32_t> context,
                           std::vector<Candidate>& out) {
  const std::span<const float> l = adjust(logits, context, adjusted_);
  out.clear();
  if (s_.is_greedy()) {
    out.push_back({argmax(l), 1.0f});
    return;
  }
  // 6. Softmax with temperature over the finite logits, in id order.
  const float inv_t = 1.0f / s_.temperature;
  float mx = kNegInf;
  for (float v : l)
    if (std::isfinite(v)) mx = std::max(mx, v);
  if (mx == kNegInf) {  // nothing finite left: fall back to the arg-max of what is there
    out.push_back({argmax(l), 1.0f});
    return;
  }
  out.reserve(l.size());
  double total = 0;
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (!std::isfinite(l[i])) continue;
    const float p = std::exp((l[i] - mx) * inv_t);
    if (p <= 0.0f) continue;
    out.push_back({std::int32_t(i), p});
    total += p;
  }
  const float inv = float(1.0 / total);
  for (auto& c : out) c.p *= inv;
  bool id_order = true;
  // 7. top-k.
  if (s_.top_k > 0 && std::size_t(s_.top_k) < out.size()) {
    std::nth_element(out.begin(), out.begin() + (s_.top_k - 1), out.end(), by_p_desc);
    out.resize(std::size_t(s_.top_k));
    id_order = false;
    renormalise(out);
  }
  // 8. top-p.
  if (s_.top_p < 1.0f) {
    apply_top_p(out, s_.top_p);
    id_order = false;
    renormalise(out);
  }
  // 9. min-p (order-preserving).
  if (s_.min_p > 0.0f) {
    float pmax = 0;
    for (const auto& c : out) pmax = std::max(pmax, c.p);
    const float floor = pmax * s_.min_p;
    std::erase_if(out, [floor](const Candidate& c) { return c.p < floor; });
    renormalise(out);
  }
  // 10. typical.
  if (s_.typical > 0.0f && s_.typical < 1.0f) {
    apply_typical(out, s_.typical);
    id_order = false;
    renormalise(out);
  }
  if (!id_order) std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
}

std::int32_t Sampler::draw(std::span<const Candidate> dist) {
  if (dist.empty()) throw Error(ErrorKind::invalid_argument, "cannot sample from an empty distribution");
  const double u = next_uniform();  // always one uniform per draw, so streams stay aligned
  if (dist.size() == 1) return dist[0].id;
  double total = 0;
  for (const auto& c : dist) total += c.p;
  const double r = u * total;
  double cum = 0;
  for (const auto& c : dist) {
    cum += c.p;
    if (r < cum) return c.id;
  }
  for (auto it = dist.rbegin(); it != dist.rend(); ++it)
    if (it->p > 0) return it->id;
  return dist.back().id;
}

std::int32_t Sampler::sample(std::span<const float> logits, std::span<const std::int32_t> context) {
  if (s_.is_greedy()) return argmax(adjust(logits, context, adjusted_));
  distribution(logits, context, work_);
  return draw(work_);
}

std::int32_t host_forward_sample(Backend& backend, std::span<const std::int32_t> ids, Sampler& sampler,
                                 std::span<const std::int32_t> context) {
  thread_local std::vector<float> logits;
  backend.forward(ids, LogitsWanted::last, logits);
  return sampler.sample(std::span<const float>(logits.data(), std::size_t(backend.vocab_size())), context);
}

}  // namespace exl
