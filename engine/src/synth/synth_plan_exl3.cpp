// plan_synth_exl3: the trellis bit rate of every linear of a synthetic EXL3 model. Each decoder
// layer's target follows the same zero-mean cosine over the layers as the EXL2 plan, so rates
// differ from layer to layer as ExLlamaV3's allocator makes them differ; each linear takes the
// whole rate nearest its share of the budget (the floor or ceiling of the layer's target), and what it misses is carried to the next (error
// diffusion), so the trellis average lands on the request as ExLlamaV3's `bits` counts it (K·k·n
// over the budgeted linears). The storage figures (decoder_bpw) add suh/svh and the marker.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "exl/error.h"
#include "exl/synth.h"
#include "synth_projections.h"

namespace exl::synth {
namespace {

int pad128(int n) { return (n + 127) / 128 * 128; }


}  // namespace

SynthPlan plan_synth_exl3(const ModelConfig& c, double bpw, int head_bits, std::uint64_t seed) {
  (void)seed;  // the rates are a function of the shape and bpw; the seed picks the random words
  if (!(bpw >= 1.6 && bpw <= 8.0))
    throw Error(ErrorKind::invalid_argument, "EXL3 bpw must be between 1.6 and 8.0 (got " + std::to_string(bpw) + ")",
                "", "--bpw");
  if (!((head_bits >= 1 && head_bits <= 8) || head_bits == 16))
    throw Error(ErrorKind::invalid_argument,
                "EXL3 head bits must be 1 to 8, or 16 for an FP16 head (got " + std::to_string(head_bits) + ")", "",
                "--head-bits");
  const int h = c.hidden_size;
  for (int i = 0; i < c.num_layers; ++i)
    for (const Proj& pr : decoder_projections(c, i))
      for (int d : {pr.k, pr.n})
        if (d % 128 != 0 && !pr.keep16)
          throw Error(ErrorKind::config, "EXL3 synthesis needs hidden, attention and MLP sizes that are multiples of 128 (got " +
                                             std::to_string(d) + ")");
  SynthPlan p;
  p.config = c;
  p.target_bpw = bpw;
  p.head_bits = head_bits;
  const int layers = c.num_layers;
  const double amp = std::clamp(std::min({0.35, bpw - 1.0, 8.0 - bpw}), 0.0, 0.35);
  double carry = 0.0, bits_sum = 0.0, weights_sum = 0.0, nominal_sum = 0.0;
  for (int i = 0; i < layers; ++i) {
    const double t = layers > 1 ? bpw + amp * std::cos(2.0 * std::numbers::pi * (i + 0.5) / layers) : bpw;
    for (const Proj& pr : decoder_projections(c, i)) {
      if (pr.keep16) {  // the router: 16 bits, outside the average
        LinearPlan lp;
        lp.prefix = "model.layers." + std::to_string(i) + "." + pr.name;
        lp.k = pr.k;
        lp.n = pr.n;
        p.decoder.push_back(std::move(lp));
        continue;
      }
      const double kn = double(pr.k) * double(pr.n);
      const double want = t + carry / kn;
      // Only the rates next to the layer's target: small linears (k/v) cannot absorb the carry
      // without extreme rates; the large ones that follow take it.
      const int bits = std::clamp(int(std::lround(want)), std::max(1, int(std::floor(t))), std::min(8, int(std::ceil(t))));
      carry += (t - bits) * kn;
      LinearPlan lp;
      lp.prefix = "model.layers." + std::to_string(i) + "." + pr.name;
      lp.k = pr.k;
      lp.n = pr.n;
      lp.bias = pr.bias;
      lp.exl3_bits2 = 2 * bits;
      bits_sum += double(lp.storage_bits());
      nominal_sum += bits * kn;
      weights_sum += kn;
      p.decoder.push_back(std::move(lp));
    }
  }
  p.decoder_bpw = bits_sum / weights_sum;
  p.nominal_bpw = nominal_sum / weights_sum;
  p.head.prefix = "lm_head";
  p.head.k = h;
  p.head.n = c.vocab_size;
  p.head.exl3_bits2 = head_bits == 16 ? 0 : 2 * head_bits;
  p.head_bpw = head_bits == 16 ? 16.0 : double(p.head.storage_bits()) / (double(h) * double(c.vocab_size));
  return p;
}

std::uint64_t exl3_storage_bits(int k, int n, int bits2) {
  const std::uint64_t kp = std::uint64_t(pad128(k)), np = std::uint64_t(pad128(n));
  return kp * np * std::uint64_t(bits2) / 2 + 16 * (kp + np) + 32;
}

}  // namespace exl::synth
