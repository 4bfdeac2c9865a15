// Rotary position embedding (spec §4.4): inverse-frequency tables for none / linear / llama3 / YaRN
// (with NTK alpha) and the reference rotation. Tables are evaluated in double and stored as fp32;
// the rotation computes each angle in double, rounds cos/sin (times mscale) to float and rotates
// in fp32. x layout: [tokens, heads, head_dim].
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "exl/kernels/rope.h"

namespace exl {

namespace {

constexpr double k_pi = 3.14159265358979323846;

void llama3_adjust(const RopeParams& p, std::vector<double>& f) {
  const double l_orig = double(p.original_max_position);
  const double low = p.low_freq_factor, high = p.high_freq_factor, factor = p.factor;
  const double low_wavelen = l_orig / low;
  const double high_wavelen = l_orig / high;
  for (double& fi : f) {
    const double wavelen = 2.0 * k_pi / fi;
    if (wavelen < high_wavelen) continue;
    if (wavelen > low_wavelen) {
      fi = fi / factor;
    } else {
      const double s = (l_orig / wavelen - low) / (high - low);
      fi = (1.0 - s) * fi / factor + s * fi;
    }
  }
}

// YaRN with ExLlamaV2's quirk: L in corr() is the configured max_seq_len.
float yarn_adjust(const RopeParams& p, double base, std::vector<double>& f) {
  const int d = p.head_dim;
  const double len = double(p.max_seq_len);
  auto corr = [&](double r) { return double(d) * std::log(len / (2.0 * k_pi * r)) / (2.0 * std::log(base)); };
  const double lo = std::max(std::floor(corr(p.yarn_beta_fast)), 0.0);
  double hi = std::min(std::ceil(corr(p.yarn_beta_slow)), double(d - 1));
  if (hi == lo) hi += 0.001;
  for (int i = 0; i < d / 2; ++i) {
    const double ramp = std::clamp((double(i) - lo) / (hi - lo), 0.0, 1.0);
    const double pos_freq = std::pow(base, 2.0 * i / double(d));
    f[i] = ramp / (pos_freq * double(p.factor)) + (1.0 - ramp) / pos_freq;
  }
  return float(0.1 * std::log(double(p.factor)) + 1.0);
}


// LongRoPE: inv_freq[i] = 1 / (factor[i] * base^(2i/d)), cos/sin times the attention factor.
float longrope_adjust(const RopeParams& p, std::vector<double>& f) {
  const auto& ext = p.longrope_use_long ? p.longrope_long : p.longrope_short;
  for (std::size_t i = 0; i < f.size() && i < ext.size(); ++i) f[i] /= double(ext[i]);
  if (p.attention_factor > 0.0f) return p.attention_factor;
  const double orig = double(p.original_max_position);
  const double factor = orig > 0 ? double(p.max_seq_len) / orig : 1.0;
  if (factor <= 1.0) return 1.0f;
  return float(std::sqrt(1.0 + std::log(factor) / std::log(orig)));
}

}  // namespace

RopeTable rope_table(const RopeParams& p) {
  RopeTable t;
  const int d = p.rotary_dim > 0 && p.rotary_dim < p.head_dim ? p.rotary_dim : p.head_dim;
  if (d < 2) return t;
  double base = p.theta;
  if (p.alpha != 1.0f) base *= std::pow(double(p.alpha), double(d) / double(d - 2));
  std::vector<double> f(std::size_t(d / 2));
  for (int i = 0; i < d / 2; ++i) f[i] = 1.0 / std::pow(base, 2.0 * i / double(d));
  switch (p.scaling) {
    case RopeScaling::none: break;
    case RopeScaling::linear: t.position_divisor = p.factor; break;
    case RopeScaling::llama3: llama3_adjust(p, f); break;
    case RopeScaling::yarn:
      if (p.max_seq_len > p.original_max_position) t.mscale = yarn_adjust(p, base, f);
      break;
    case RopeScaling::longrope: t.mscale = longrope_adjust(p, f); break;
  }
  t.inv_freq.assign(f.begin(), f.end());
  return t;
}

void rope_apply_ref(float* x, int tokens, int heads, int head_dim, const std::int32_t* positions,
                    const RopeTable& table, RopeStyle style) {
  const int half = rope_half(table, head_dim);
  for (int t = 0; t < tokens; ++t) {
    const double pos = double(positions[t]) / double(table.position_divisor);
    for (int i = 0; i < half; ++i) {
      const double angle = double(float(pos * double(table.inv_freq[i])));
      const float c = float(std::cos(angle) * table.mscale);
      const float s = float(std::sin(angle) * table.mscale);
      for (int h = 0; h < heads; ++h) {
        float* v = x + (std::int64_t(t) * heads + h) * head_dim;
        const int a = style == RopeStyle::neox ? i : 2 * i;
        const int b = style == RopeStyle::neox ? i + half : 2 * i + 1;
        const float xa = v[a], xb = v[b];
        v[a] = xa * c - xb * s;
        v[b] = xb * c + xa * s;
      }
    }
  }
}

}  // namespace exl
