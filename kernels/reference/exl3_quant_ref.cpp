// Reference EXL3 tile encoder (spec ../shared/spec/EXL3.md §5.7) and tile packer (§5.8), written
// out the plain way: the Viterbi search over all 65536 states per position exactly as the spec's
// pseudo-code (same loop order, same strict '<' tie rule, the second-to-last-step quirk, the
// argmin_1024 reduction), single-threaded, with every fp16 operation computed exactly:
//
//  * w[t] = RN16(seq[t]): one float -> fp16 rounding.
//  * dh = RN16(dec(s) - w[t]): both operands are fp16 numbers (exponents 2^-24 .. 2^15), so their
//    difference is exact in double (at most 40 significant bits); then one correct rounding.
//  * first step: c = RN16(dh * dh): the square of an 11-bit number is exact in double.
//  * later steps: c = RN16(dh * dh + prev), ExLlamaV3's fp16 fused multiply-add, one rounding of
//    the exact value. The sum is taken as hi + lo with TwoSum (hi = RN64(x), lo = x - hi exactly)
//    and the fp16 rounding looks at lo where hi is exactly an fp16 midpoint, so the result is the
//    correctly rounded one by construction. (The double sum alone would do too: it is inexact only
//    when dh^2 has bits below prev's ulp in double, i.e. dh^2 < 2^-29 prev, and then both the
//    exact sum and its double rounding lie strictly between the fp16 midpoints around prev.)
//
// Costs are kept as doubles holding fp16 values (every one exactly representable), compared with
// strict '<' as the spec does; +inf costs (fp16 overflow, inputs far outside the codebook's range)
// follow the same rules. NaN targets are outside the contract (the spec does not define them).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "exl/kernels/exl3.h"
#include "exl/kernels/exl3_quant.h"

namespace exl {

namespace detail {

// argmin_1024 of spec §5.7: ExLlamaV3's block reduction (512 threads, two strided scans each,
// warp shuffle-down trees), copied literally because the tree does not always return the lowest
// index among equal minima. Shared with the fast CPU encoder (kernels/cpu/exl3_quant_cpu.cpp).
// Spec ambiguity settled here: a slot starts as (+inf, -1) and takes a cost only when strictly
// smaller, so when every cost is +inf (or NaN) the reduction ends at index -1, which ExLlamaV3
// would then use out of bounds; we return 0 in that case (spec Appendix B.14: untested there).
int exl3_argmin_1024(const float* c, int E) {
  float mv[1024];
  int iv[1024];
  for (int v = 0; v < 1024; ++v) {
    mv[v] = std::numeric_limits<float>::infinity();
    iv[v] = -1;
    for (int e = v; e < E; e += 1024)
      if (c[e] < mv[v]) {
        mv[v] = c[e];
        iv[v] = e;
      }
  }
  // One warp's shuffle-down tree over 32 (value, index) pairs; lane 0's pair is the result.
  auto reduce32 = [](float* vals, int* idx) {
    for (int off = 16; off >= 1; off /= 2) {
      float nv[32];
      int ni[32];
      for (int l = 0; l < 32; ++l) {
        nv[l] = vals[l];
        ni[l] = idx[l];
        if (l + off < 32 && vals[l + off] < vals[l]) {
          nv[l] = vals[l + off];
          ni[l] = idx[l + off];
        }
      }
      std::memcpy(vals, nv, sizeof nv);
      std::memcpy(idx, ni, sizeof ni);
    }
  };
  float cv[32];
  int ci[32];
  for (int half = 0; half < 2; ++half)  // A[0..15] from slots 0..511, then B[0..15] from 512..1023
    for (int w = 0; w < 16; ++w) {
      float vals[32];
      int idx[32];
      for (int l = 0; l < 32; ++l) {
        vals[l] = mv[512 * half + 32 * w + l];
        idx[l] = iv[512 * half + 32 * w + l];
      }
      reduce32(vals, idx);
      cv[16 * half + w] = vals[0];
      ci[16 * half + w] = idx[0];
    }
  reduce32(cv, ci);
  return ci[0] < 0 ? 0 : ci[0];
}

}  // namespace detail

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();

// 2^e as a double (-1022 <= e <= 1023).
double pow2(int e) {
  const std::uint64_t bits = std::uint64_t(1023 + e) << 52;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// RN16 of the exact real hi + lo (|lo| <= half an ulp of hi, as TwoSum leaves it), as the fp16
// value in a double: IEEE binary16 round to nearest, ties to even, subnormals (quantum 2^-24) and
// overflow to inf as IEEE does it (a value rounding, with unbounded exponent, above 65504).
// The general form: scale by the fp16 quantum of hi's binade, split into integer and fraction.
double round_to_half_general(double hi, double lo) {
  if (std::isnan(hi)) return hi;
  if (std::isinf(hi)) return hi;
  if (hi == 0.0) return hi;  // then lo == 0 too
  const bool neg = hi < 0.0;
  const double a = neg ? -hi : hi;
  const double l = neg ? -lo : lo;  // the value is +-(a + l)
  if (a >= 131072.0) return neg ? -k_inf : k_inf;
  // The fp16 quantum of a's binade: 2^(floor(log2 a) - 10) for normal fp16 values, 2^-24 below.
  std::uint64_t bits;
  std::memcpy(&bits, &a, 8);
  const int ex = int((bits >> 52) & 0x7FF) - 1023;  // a is a normal double (>= 2^-48 here)
  const int qe = ex >= -14 ? ex - 10 : -24;
  const double y = a * pow2(-qe);            // exact: a power-of-two scaling
  const std::int64_t ni = std::int64_t(y);   // floor (y >= 0, y < 2^12)
  double n = double(ni);
  const double f = y - n;                    // exact
  // Only when a is exactly a midpoint (f == 0.5) can lo decide; otherwise |lo| is far below the
  // distance to the midpoint and cannot move a across it (a and the midpoints are doubles). At a
  // binade boundary (a = 2^k, lo < 0) the value is just below 2^k and still rounds to it.
  if (f > 0.5 || (f == 0.5 && (l > 0.0 || (l == 0.0 && (ni & 1) != 0)))) n += 1.0;
  double r = n * pow2(qe);  // exact
  if (r > 65504.0) r = k_inf;
  return neg ? -r : r;
}

// The same, with the common case (2^-14 <= |hi| < 65504: an fp16-normal result, no overflow)
// done on the double's bit pattern: keep the implicit bit and 10 fraction bits, round the 42
// dropped bits to nearest (a carry moves into the exponent), break an exact tie with lo's sign,
// else to even. (This is the reference's hot spot; bitwise operators keep it free of branches
// whose outcome is a coin flip.)
inline double round_to_half_exact(double hi, double lo = 0.0) {
  std::uint64_t b;
  std::memcpy(&b, &hi, 8);
  const std::uint64_t sign = b & (std::uint64_t(1) << 63), m = b & ~(std::uint64_t(1) << 63);
  constexpr std::uint64_t k_min = std::uint64_t(1023 - 14) << 52;         // 2^-14
  constexpr std::uint64_t k_max = (std::uint64_t(1023 + 15) << 52) | (std::uint64_t(0x3FF) << 42);  // 65504
  if (m < k_min || m >= k_max) return round_to_half_general(hi, lo);
  constexpr std::uint64_t k_drop = (std::uint64_t(1) << 42) - 1, k_half = std::uint64_t(1) << 41;
  const std::uint64_t low = m & k_drop;
  const double l = sign ? -lo : lo;
  const std::uint64_t up = std::uint64_t(low > k_half) |
                           (std::uint64_t(low == k_half) & (std::uint64_t(l > 0.0) | (std::uint64_t(l == 0.0) & ((m >> 42) & 1))));
  const std::uint64_t r = sign | ((m & ~k_drop) + (up << 42));
  double d;
  std::memcpy(&d, &r, 8);
  return d;
}

// Exact sum hi + lo = a + b (Knuth's TwoSum; both finite).
void two_sum(double a, double b, double& hi, double& lo) {
  hi = a + b;
  const double bb = hi - a;
  lo = (a - (hi - bb)) + (b - bb);
}

struct RefEncoder {
  int K, E;
  std::vector<float> dec;              // [65536] fp16 codebook values
  double w[256];                       // RN16(seq[t])
  std::vector<std::uint16_t> back;     // [256][E] in-edge of the best state ending in each out-edge
  std::vector<double> cost_a, cost_b;  // double-buffered costs per out-edge

  // One step of the spec: costs per out-edge at position t, back pointers into back[t].
  void step(int t, const double* prev, int pre_state, double* cost) {
    std::uint16_t* bk = back.data() + std::size_t(t) * E;
    for (int e = 0; e < E; ++e) {
      bool have = false;
      double best_c = 0.0;
      int best_p = 0;
      for (int hi = 0; hi < (1 << K); ++hi) {
        const int s = (hi << (16 - K)) | e;
        const int p = s >> K;
        const double dh = round_to_half_exact(double(dec[s]) - w[t]);
        double c;
        if (!prev) {
          c = round_to_half_exact(dh * dh);
          if (pre_state >= 0 && p != pre_state) c = k_inf;
        } else {
          const double sq = dh * dh;
          if (std::isinf(sq) || std::isinf(prev[p])) {
            c = k_inf;
          } else {
            double h, l;
            two_sum(sq, prev[p], h, l);
            c = round_to_half_exact(h, l);
          }
        }
        if (!have || c < best_c) {
          have = true;
          best_c = c;
          best_p = p;
        }
      }
      cost[e] = best_c;
      bk[e] = std::uint16_t(best_p);
    }
  }

  // pass(roll, pre_state) of the spec; returns the costs of step i = 254 (C254) in c254.
  void pass(int roll, int pre_state, std::vector<float>* c254) {
    double* bufs[2] = {cost_a.data(), cost_b.data()};
    const double* prev = nullptr;
    for (int i = 0; i < 256; ++i) {
      const int t = (i + roll) % 256;
      double* cur = bufs[i & 1];
      step(t, prev, i == 0 ? pre_state : -1, cur);
      if (i == 254 && c254)
        for (int e = 0; e < E; ++e) (*c254)[std::size_t(e)] = float(cur[e]);  // fp16 values: exact
      prev = cur;
    }
  }
};

}  // namespace

void exl3_encode_tile_ref(const float* seq, int K, Exl3Codebook cb, std::uint16_t* states, float* values) {
  RefEncoder enc;
  enc.K = K;
  enc.E = 65536 >> K;
  enc.dec.resize(65536);
  for (std::uint32_t s = 0; s < 65536; ++s) enc.dec[s] = half_to_float(exl3_decode_state(s, cb));
  for (int t = 0; t < 256; ++t) enc.w[t] = half_to_float(float_to_half(seq[t]));
  enc.back.assign(std::size_t(256) * enc.E, 0);
  enc.cost_a.assign(std::size_t(enc.E), 0.0);
  enc.cost_b.assign(std::size_t(enc.E), 0.0);

  // Pass 1 (positions 128..255, 0..127) picks the out-edge of position 255.
  std::vector<float> c254(std::size_t(enc.E));
  enc.pass(128, -1, &c254);
  int e = detail::exl3_argmin_1024(c254.data(), enc.E);  // [quirk] costs of step i = 254
  for (int i = 255; i >= 0; --i) {
    const int t = (i + 128) % 256;
    e = enc.back[std::size_t(t) * enc.E + std::size_t(e)];
    if (t == 0) break;
  }
  const int end_state = e;

  // Pass 2 (positions 0..255), position 0 forced to follow end_state; walk back from end_state.
  enc.pass(0, end_state, nullptr);
  e = end_state;
  for (int t = 255; t >= 0; --t) {
    const int p = enc.back[std::size_t(t) * enc.E + std::size_t(e)];
    const std::uint16_t st = std::uint16_t((p << K) | e);
    states[t] = st;
    if (values) values[t] = enc.dec[st];
    e = p;
  }
}

void exl3_pack_tile(const std::uint16_t* states, int K, std::uint16_t* words) {
  // bits = concatenation of the K low bits of each state, MSB first; stream word j holds bits
  // 16j .. 16j+15 (the first in bit 15); stored with each pair of words swapped.
  const int nwords = 16 * K;
  std::vector<std::uint16_t> s(std::size_t(nwords), 0);
  std::int64_t bit = 0;
  for (int t = 0; t < 256; ++t) {
    const std::uint32_t v = states[t] & ((1u << K) - 1u);
    for (int b = K - 1; b >= 0; --b, ++bit)
      if ((v >> b) & 1u) s[std::size_t(bit / 16)] |= std::uint16_t(1u << (15 - bit % 16));
  }
  for (int q = 0; q < nwords / 2; ++q) {
    words[2 * q] = s[std::size_t(2 * q + 1)];
    words[2 * q + 1] = s[std::size_t(2 * q)];
  }
}

}  // namespace exl
