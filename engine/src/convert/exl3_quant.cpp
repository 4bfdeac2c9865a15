// EXL3 quantization of one linear layer (spec EXL3 §5.4–§5.9) and the bit allocation (§5.10).
//
// A linear y = x W (W input-major [k, n], zero-padded to multiples of 128) is stored as
// W = diag(su) Hb W-hat Hb diag(sv), Hb the block-diagonal 128-point Hadamard transform scaled by
// 1/sqrt(128) and W-hat a matrix of trellis-coded 16x16 tiles. The quantizer:
//  1. finalizes the layer's input Hessian H (averaged x^T x of the calibration activations):
//     regularized by 2.5 % of its mean diagonal, rotated into the quantization basis
//     (Hb S H S Hb, S a random sign vector) and factored H = (I + L) D (I + L)^T with L strictly
//     block-lower-triangular in 16-row blocks (block LDL);
//  2. regularizes the weight: output scales sv (sign x column RMS), the output rotation, input
//     scales su (sign x row RMS / the codebook's RMS), the input rotation, and one global scale
//     found by encoding sampled tiles at a few candidate scales;
//  3. LDLQ: 16-row blocks from the last input feature to the first, each block's tiles encoded by
//     the Viterbi tile encoder (exl3_encode_tiles_cpu) after adding the L-weighted quantization
//     error of the rows below it (the error feedback that makes the result aware of H).
// Without calibration data (or with a degenerate Hessian) step 1 is skipped and LDLQ runs
// without feedback.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>

#include "convert_internal.h"
#include "exl/error.h"
#include "exl/kernels/exl3_quant.h"
#include "exl/kernels/threads.h"

namespace exl::convert_detail {
namespace {

constexpr double kSigmaReg = 0.025;
constexpr double kCodebookScale = 1.24371088;  // RMS of the codebooks' values (spec §5.5)

int pad128(int v) { return (v + 127) / 128 * 128; }

// Hb X for X [rows, cols] row-major, rows a multiple of 128: the Sylvester butterfly over each
// block of 128 rows, whole rows at a time.
void hadamard_rows(float* x, int rows, int cols) {
  const float s = float(1.0 / std::sqrt(128.0));
  parallel_for(cols, 64, [&](std::int64_t c0, std::int64_t c1) {
    for (int r0 = 0; r0 < rows; r0 += 128) {
      for (int h = 1; h < 128; h *= 2)
        for (int i = 0; i < 128; i += 2 * h)
          for (int j = i; j < i + h; ++j) {
            float* a = x + std::size_t(r0 + j) * std::size_t(cols);
            float* b = a + std::size_t(h) * std::size_t(cols);
            for (std::int64_t c = c0; c < c1; ++c) {
              const float u = a[c], v = b[c];
              a[c] = u + v;
              b[c] = u - v;
            }
          }
      for (int r = r0; r < r0 + 128; ++r) {
        float* a = x + std::size_t(r) * std::size_t(cols);
        for (std::int64_t c = c0; c < c1; ++c) a[c] *= s;
      }
    }
  });
}

// X Hb for X [rows, cols], cols a multiple of 128: the butterfly along each row's 128-chunks.
template <typename T>
void hadamard_cols(T* x, int rows, int cols) {
  const T s = T(1.0 / std::sqrt(128.0));
  parallel_for(rows, 8, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      for (int c0 = 0; c0 < cols; c0 += 128) {
        T* v = x + std::size_t(r) * std::size_t(cols) + std::size_t(c0);
        for (int h = 1; h < 128; h *= 2)
          for (int i = 0; i < 128; i += 2 * h)
            for (int j = i; j < i + h; ++j) {
              const T u = v[j], w = v[j + h];
              v[j] = u + w;
              v[j + h] = u - w;
            }
        for (int j = 0; j < 128; ++j) v[j] *= s;
      }
  });
}

std::vector<float> random_signs(std::mt19937_64& rng, int n) {
  std::vector<float> signs(static_cast<std::size_t>(n));
  for (float& v : signs) v = (rng() >> 63) ? -1.0f : 1.0f;
  return signs;
}

// Cholesky H = C C^T (C lower, row-major, double), left-looking by columns with the rows below
// the diagonal in parallel. False when H is not positive definite.
bool cholesky(const std::vector<double>& h, int k, std::vector<double>& c) {
  c.assign(std::size_t(k) * std::size_t(k), 0.0);
  for (int j = 0; j < k; ++j) {
    const double* cj = &c[std::size_t(j) * std::size_t(k)];
    double d = h[std::size_t(j) * std::size_t(k) + std::size_t(j)];
    for (int p = 0; p < j; ++p) d -= cj[p] * cj[p];
    if (!(d > 0.0) || !std::isfinite(d)) return false;
    const double djj = std::sqrt(d);
    c[std::size_t(j) * std::size_t(k) + std::size_t(j)] = djj;
    parallel_for(k - j - 1, 32, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t ii = b; ii < e; ++ii) {
        const int i = j + 1 + int(ii);
        double* ci = &c[std::size_t(i) * std::size_t(k)];
        double s = h[std::size_t(i) * std::size_t(k) + std::size_t(j)];
        for (int p = 0; p < j; ++p) s -= ci[p] * cj[p];
        ci[j] = s / djj;
      }
    });
  }
  return true;
}

// The block LDL factor of §5.4: H = (I + L) D (I + L)^T, L [k, k] strictly lower in 16x16 blocks
// (its diagonal blocks are zero). Damps H further when the factorization fails.
std::vector<float> block_ldl(std::vector<double>& h, int k, const std::string& what) {
  std::vector<double> c;
  for (int attempt = 0;; ++attempt) {
    if (cholesky(h, k, c)) break;
    if (attempt == 10)
      throw Error(ErrorKind::internal, "the Hessian is not positive definite even after damping", {}, what);
    double mean = 0.0;
    for (int i = 0; i < k; ++i) mean += h[std::size_t(i) * std::size_t(k) + std::size_t(i)];
    mean /= double(k);
    for (int i = 0; i < k; ++i) h[std::size_t(i) * std::size_t(k) + std::size_t(i)] += 2.0 * kSigmaReg * mean;
  }
  // Each 16-column block of C times the inverse of its (lower-triangular) diagonal block.
  std::vector<float> l(std::size_t(k) * std::size_t(k), 0.0f);
  parallel_for(k / 16, 1, [&](std::int64_t b0, std::int64_t b1) {
    double inv[16][16];
    for (std::int64_t blk = b0; blk < b1; ++blk) {
      const int o = int(blk) * 16;
      // inv = D^-1 by forward substitution (D lower triangular).
      for (int col = 0; col < 16; ++col)
        for (int r = 0; r < 16; ++r) {
          double s = r == col ? 1.0 : 0.0;
          for (int p = 0; p < r; ++p) s -= c[std::size_t(o + r) * std::size_t(k) + std::size_t(o + p)] * inv[p][col];
          inv[r][col] = s / c[std::size_t(o + r) * std::size_t(k) + std::size_t(o + r)];
        }
      for (int i = o + 16; i < k; ++i)
        for (int col = 0; col < 16; ++col) {
          double s = 0.0;
          for (int p = 0; p < 16; ++p) s += c[std::size_t(i) * std::size_t(k) + std::size_t(o + p)] * inv[p][col];
          l[std::size_t(i) * std::size_t(k) + std::size_t(o + col)] = float(s);
        }
    }
  });
  return l;
}

// Sequence-ordered values of tile (ti, tj) of a row-major [rows, cols] matrix, times `scale`.
void gather_tile(const float* m, int cols, int ti, int tj, float scale, float* seq) {
  for (int t = 0; t < 256; ++t)
    seq[t] = m[std::size_t(16 * ti + exl3_pos_row(t)) * std::size_t(cols) + std::size_t(16 * tj + exl3_pos_col(t))] * scale;
}

// The global scale of §5.5: the scale of the weights (before encoding) that minimizes the
// encoder's mean squared error on a sample of tiles (the diagonal band, the highest- and the
// lowest-energy tiles), coarse then fine, with a parabolic refinement.
double global_scale(const float* w, int kp, int np, int K, Exl3Codebook cb) {
  const int tk = kp / 16, tn = np / 16, D = std::max(tk, tn);
  std::vector<std::pair<int, int>> tiles;
  for (int a = 0; a < D; ++a)
    for (int wd = 0; wd < 3; ++wd) tiles.emplace_back(a % tk, (a + wd) % tn);
  const int X = std::min(std::max(8, 3 * D / 16), (tk * tn + 1) / 2);
  std::vector<std::pair<double, int>> energy(std::size_t(tk) * std::size_t(tn));
  parallel_for(std::int64_t(energy.size()), 16, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const int ti = int(i) / tn, tj = int(i) % tn;
      double s = 0.0;
      for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) {
          const double v = w[std::size_t(16 * ti + r) * std::size_t(np) + std::size_t(16 * tj + c)];
          s += v * v;
        }
      energy[std::size_t(i)] = {s, int(i)};
    }
  });
  std::stable_sort(energy.begin(), energy.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (int i = 0; i < X; ++i) tiles.emplace_back(energy[std::size_t(i)].second / tn, energy[std::size_t(i)].second % tn);
  for (int i = 0; i < X; ++i) {
    const int idx = energy[energy.size() - 1 - std::size_t(i)].second;
    tiles.emplace_back(idx / tn, idx % tn);
  }
  std::vector<float> seq, ref;
  std::vector<float> values;
  std::vector<std::uint16_t> states;
  auto mse = [&](const std::vector<std::pair<int, int>>& set, double s) {
    const int n = int(set.size());
    seq.resize(std::size_t(n) * 256);
    ref.resize(seq.size());
    values.resize(seq.size());
    states.resize(seq.size());
    for (int i = 0; i < n; ++i) {
      gather_tile(w, np, set[std::size_t(i)].first, set[std::size_t(i)].second, 1.0f, &ref[std::size_t(i) * 256]);
      for (int t = 0; t < 256; ++t) seq[std::size_t(i) * 256 + std::size_t(t)] = float(ref[std::size_t(i) * 256 + std::size_t(t)] * s);
    }
    exl3_encode_tiles_cpu(seq.data(), n, K, cb, states.data(), values.data());
    double e = 0.0;
    for (std::size_t i = 0; i < seq.size(); ++i) {
      const double d = double(values[i]) / s - double(ref[i]);
      e += d * d;
    }
    return e / double(seq.size());
  };
  std::vector<std::pair<int, int>> every3;
  for (std::size_t i = 0; i < tiles.size(); i += 3) every3.push_back(tiles[i]);
  double c = 0.1, best = INFINITY;
  for (int i = 0; i < 10; ++i) {
    const double s = 0.1 + 0.2 * i, e = mse(every3, s);
    if (e < best) {
      best = e;
      c = s;
    }
  }
  double y[5];
  int b = 0;
  for (int i = 0; i < 5; ++i) {
    y[i] = mse(tiles, c + 0.075 * (i - 2));
    if (y[i] < y[b]) b = i;
  }
  double off = 0.0;
  if (b > 0 && b < 4) {
    const double den = y[b - 1] - 2.0 * y[b] + y[b + 1];
    if (den > 0.0) off = std::clamp(0.5 * (y[b - 1] - y[b + 1]) / den, -0.5, 0.5);
  }
  return std::max(c + 0.075 * (b - 2) + 0.075 * off, 0.01);
}

}  // namespace

OutScales parse_out_scales(const std::string& s) {
  if (s == "always") return OutScales::always;
  if (s == "never") return OutScales::never;
  if (s == "auto") return OutScales::automatic;
  throw Error(ErrorKind::invalid_argument, "unknown out_scales mode '" + s + "' (always, never or auto)", {},
              "--out_scales");
}
const char* out_scales_name(OutScales m) {
  switch (m) {
    case OutScales::always: return "always";
    case OutScales::never: return "never";
    case OutScales::automatic: return "auto";
  }
  return "always";
}

Exl3QuantizedLinear exl3_quantize_linear(const float* w, int n, int k, const std::vector<double>* hessian,
                                         const Exl3LinearOptions& o, const std::string& what) {
  if (o.K < 1 || o.K > 8) throw Error(ErrorKind::invalid_argument, "EXL3 bits per weight must be 1..8", {}, what);
  Exl3QuantizedLinear q;
  q.k = k;
  q.n = n;
  q.kp = pad128(k);
  q.np = pad128(n);
  q.K = o.K;
  q.codebook = o.codebook;
  const int kp = q.kp, np = q.np;
  const std::size_t KP = std::size_t(kp), NP = std::size_t(np);
  std::mt19937_64 rng(o.seed);

  // 1. The Hessian: regularized, rotated, factored (or the fallback without one).
  std::vector<double> hdiag(KP, 0.0);
  std::vector<double> h;
  bool fallback = hessian == nullptr || hessian->empty();
  double d = 0.0;
  if (!fallback) {
    h.assign(KP * KP, 0.0);
    for (int i = 0; i < k; ++i)
      std::memcpy(&h[std::size_t(i) * KP], &(*hessian)[std::size_t(i) * std::size_t(k)], sizeof(double) * std::size_t(k));
    for (int i = 0; i < kp; ++i) d += h[std::size_t(i) * KP + std::size_t(i)];
    d /= double(kp);
    fallback = !std::isfinite(d) || d < 1e-20;
  }
  const std::vector<float> su_sign = random_signs(rng, kp);
  const std::vector<float> sv_sign = random_signs(rng, np);
  std::vector<float> l;
  if (!fallback) {
    for (int i = 0; i < kp; ++i) {
      h[std::size_t(i) * KP + std::size_t(i)] += kSigmaReg * d;
      hdiag[std::size_t(i)] = h[std::size_t(i) * KP + std::size_t(i)];
    }
    for (int i = 0; i < kp; ++i)
      for (int j = 0; j < kp; ++j) h[std::size_t(i) * KP + std::size_t(j)] *= double(su_sign[std::size_t(i)] * su_sign[std::size_t(j)]);
    hadamard_cols(h.data(), kp, kp);  // H Hb
    // Hb (H Hb) = (Hb^T-symmetric) the same butterfly on the transpose, H symmetric again after it.
    for (int i = 0; i < kp; ++i)
      for (int j = i + 1; j < kp; ++j) std::swap(h[std::size_t(i) * KP + std::size_t(j)], h[std::size_t(j) * KP + std::size_t(i)]);
    hadamard_cols(h.data(), kp, kp);
    std::vector<double> hrot = h;  // kept for the proxy error
    l = block_ldl(h, kp, what);
    h = std::move(hrot);
  }
  q.fallback = fallback;

  // 2. Regularize the weight: W [kp, np] input-major.
  std::vector<float> wr(KP * NP, 0.0f);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < k; ++i) wr[std::size_t(i) * NP + std::size_t(j)] = w[std::size_t(j) * std::size_t(k) + std::size_t(i)];
  std::vector<double> colrms(NP, 0.0);
  for (int i = 0; i < kp; ++i)
    for (int j = 0; j < np; ++j) {
      const double v = wr[std::size_t(i) * NP + std::size_t(j)];
      colrms[std::size_t(j)] += v * v;
    }
  double mu = 0.0;
  for (double& c : colrms) {
    c = std::sqrt(c / double(kp));
    mu += c;
  }
  mu /= double(np);
  if (mu > 1e-30)
    for (double& c : colrms) c /= mu;
  bool apply = o.out_scales != OutScales::never;
  if (o.out_scales == OutScales::automatic) {
    if (fallback) {
      apply = false;
    } else {
      std::vector<double> s(KP);
      for (int i = 0; i < kp; ++i) s[std::size_t(i)] = std::sqrt(std::max(0.0, hdiag[std::size_t(i)]));
      std::sort(s.begin(), s.end(), std::greater<>());
      const double top = std::accumulate(s.begin(), s.begin() + kp / 50, 0.0);
      const double all = std::accumulate(s.begin(), s.end(), 0.0);
      apply = all > 0.0 && top / all < 0.15;
    }
  }
  if (mu <= 1e-30 && o.out_scales != OutScales::automatic) apply = true;
  std::vector<double> sv(NP);
  std::vector<bool> zero_col(NP);
  for (int j = 0; j < np; ++j) {
    zero_col[std::size_t(j)] = colrms[std::size_t(j)] < 1e-30;
    const double c = zero_col[std::size_t(j)] ? 0.1 : colrms[std::size_t(j)];
    sv[std::size_t(j)] = apply ? double(sv_sign[std::size_t(j)]) * c + 1e-10 : double(sv_sign[std::size_t(j)]);
  }
  for (int i = 0; i < kp; ++i)
    for (int j = 0; j < np; ++j) wr[std::size_t(i) * NP + std::size_t(j)] = float(wr[std::size_t(i) * NP + std::size_t(j)] / sv[std::size_t(j)]);
  for (int j = 0; j < np; ++j)
    if (zero_col[std::size_t(j)]) sv[std::size_t(j)] = 0.0;
  hadamard_cols(wr.data(), kp, np);  // W Hb
  std::vector<double> su(KP);
  for (int i = 0; i < kp; ++i) {
    double s = 0.0;
    for (int j = 0; j < np; ++j) s += double(wr[std::size_t(i) * NP + std::size_t(j)]) * wr[std::size_t(i) * NP + std::size_t(j)];
    double rms = std::sqrt(s / double(np));
    if (rms < 1e-30) rms = 0.1;
    su[std::size_t(i)] = double(su_sign[std::size_t(i)]) * rms / -kCodebookScale + 1e-10;
    for (int j = 0; j < np; ++j) wr[std::size_t(i) * NP + std::size_t(j)] = float(wr[std::size_t(i) * NP + std::size_t(j)] / su[std::size_t(i)]);
  }
  hadamard_rows(wr.data(), kp, np);  // Hb W
  const double g = global_scale(wr.data(), kp, np, o.K, o.codebook);
  for (float& v : wr) v = float(v * g);
  for (double& s : su) s /= g;
  q.scale = g;

  // 3. LDLQ over 128-row spans and 16-row blocks, bottom to top.
  const int tn = np / 16;
  std::vector<float> wq(KP * NP, 0.0f), err(KP * NP, 0.0f), prod(fallback ? 0 : KP * NP, 0.0f);
  std::vector<std::uint16_t> states(KP * NP);
  std::vector<float> target(16 * NP), seq(16 * NP), vals(16 * NP);
  std::vector<std::uint16_t> st(16 * NP);
  for (int j = kp; j > 0; j -= 128) {
    const int i0 = j - 128;
    for (int bj = 128; bj > 0; bj -= 16) {
      const int a = i0 + bj - 16, b = i0 + bj;
      std::memcpy(target.data(), &wr[std::size_t(a) * NP], sizeof(float) * 16 * NP);
      if (!fallback) {
        parallel_for(16, 1, [&](std::int64_t r0, std::int64_t r1) {
          for (std::int64_t r = r0; r < r1; ++r) {
            float* t = &target[std::size_t(r) * NP];
            const float* p = &prod[std::size_t(a + int(r)) * NP];
            for (int c = 0; c < np; ++c) t[c] += p[c];
            for (int s = b; s < j; ++s) {
              const float lv = l[std::size_t(s) * KP + std::size_t(a + int(r))];
              const float* e = &err[std::size_t(s) * NP];
              for (int c = 0; c < np; ++c) t[c] += lv * e[c];
            }
          }
        });
      }
      for (int tj = 0; tj < tn; ++tj) gather_tile(target.data(), np, 0, tj, 1.0f, &seq[std::size_t(tj) * 256]);
      exl3_encode_tiles_cpu(seq.data(), tn, o.K, o.codebook, st.data(), vals.data());
      for (int tj = 0; tj < tn; ++tj)
        for (int t = 0; t < 256; ++t) {
          const std::size_t row = std::size_t(a + exl3_pos_row(t)), col = std::size_t(16 * tj + exl3_pos_col(t));
          wq[row * NP + col] = vals[std::size_t(tj) * 256 + std::size_t(t)];
          states[(std::size_t(a / 16) * std::size_t(tn) + std::size_t(tj)) * 256 + std::size_t(t)] = st[std::size_t(tj) * 256 + std::size_t(t)];
        }
      for (int r = a; r < b; ++r)
        for (int c = 0; c < np; ++c) err[std::size_t(r) * NP + std::size_t(c)] = wr[std::size_t(r) * NP + std::size_t(c)] - wq[std::size_t(r) * NP + std::size_t(c)];
    }
    if (!fallback && i0 > 0) {  // the span's error into every row above it
      parallel_for(i0, 4, [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r) {
          float* p = &prod[std::size_t(r) * NP];
          for (int s = i0; s < j; ++s) {
            const float lv = l[std::size_t(s) * KP + std::size_t(r)];
            if (lv == 0.0f) continue;
            const float* e = &err[std::size_t(s) * NP];
            for (int c = 0; c < np; ++c) p[c] += lv * e[c];
          }
        }
      });
    }
  }

  // Proxy error trace(E^T H E) / trace(W^T H W) (the MSE ratio without a Hessian).
  {
    double num = 0.0, den = 0.0;
    if (fallback) {
      for (std::size_t i = 0; i < wr.size(); ++i) {
        num += double(err[i]) * err[i];
        den += double(wr[i]) * wr[i];
      }
    } else {
      std::vector<double> nums(KP, 0.0), dens(KP, 0.0);
      parallel_for(kp, 4, [&](std::int64_t r0, std::int64_t r1) {
        std::vector<double> he(NP), hw(NP);
        for (std::int64_t r = r0; r < r1; ++r) {
          std::fill(he.begin(), he.end(), 0.0);
          std::fill(hw.begin(), hw.end(), 0.0);
          for (int s = 0; s < kp; ++s) {
            const double hv = h[std::size_t(r) * KP + std::size_t(s)];
            const float* e = &err[std::size_t(s) * NP];
            const float* x = &wr[std::size_t(s) * NP];
            for (int c = 0; c < np; ++c) {
              he[std::size_t(c)] += hv * e[c];
              hw[std::size_t(c)] += hv * x[c];
            }
          }
          for (int c = 0; c < np; ++c) {
            nums[std::size_t(r)] += he[std::size_t(c)] * err[std::size_t(r) * NP + std::size_t(c)];
            dens[std::size_t(r)] += hw[std::size_t(c)] * wr[std::size_t(r) * NP + std::size_t(c)];
          }
        }
      });
      num = std::accumulate(nums.begin(), nums.end(), 0.0);
      den = std::accumulate(dens.begin(), dens.end(), 0.0);
    }
    q.proxy_error = den > 0.0 ? num / den : 0.0;
  }

  // Outputs: the packed tiles, the fp16 scales, and the effective weight the runtime computes.
  const int words = 16 * o.K;
  q.trellis.resize(std::size_t(kp / 16) * std::size_t(tn) * std::size_t(words));
  parallel_for(std::int64_t(kp / 16) * tn, 64, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t tile = b; tile < e; ++tile)
      exl3_pack_tile(&states[std::size_t(tile) * 256], o.K, &q.trellis[std::size_t(tile) * std::size_t(words)]);
  });
  q.suh.resize(KP);
  q.svh.resize(NP);
  for (int i = 0; i < kp; ++i) q.suh[std::size_t(i)] = float_to_half(float(su[std::size_t(i)]));
  for (int j = 0; j < np; ++j) q.svh[std::size_t(j)] = float_to_half(float(sv[std::size_t(j)]));
  hadamard_rows(wq.data(), kp, np);
  hadamard_cols(wq.data(), kp, np);
  q.dequant.assign(std::size_t(n) * std::size_t(k), 0.0f);
  for (int i = 0; i < k; ++i) {
    const float a = half_to_float(q.suh[std::size_t(i)]);
    for (int j = 0; j < n; ++j)
      q.dequant[std::size_t(j) * std::size_t(k) + std::size_t(i)] =
          a * wq[std::size_t(i) * NP + std::size_t(j)] * half_to_float(q.svh[std::size_t(j)]);
  }
  return q;
}

void append_exl3_tensors(const std::string& prefix, const Exl3QuantizedLinear& q, const std::vector<float>& bias,
                         std::vector<TensorData>& out) {
  out.push_back(make_tensor(prefix + ".trellis", DType::i16, {q.kp / 16, q.np / 16, 16 * q.K}, q.trellis.data(),
                            q.trellis.size()));
  out.push_back(make_tensor(prefix + ".suh", DType::f16, {q.kp}, q.suh.data(), q.suh.size()));
  out.push_back(make_tensor(prefix + ".svh", DType::f16, {q.np}, q.svh.data(), q.svh.size()));
  if (q.codebook == Exl3Codebook::mul1) {
    const std::uint32_t marker = 0x83DCD12Du;
    out.push_back(make_tensor(prefix + ".mul1", DType::i32, {}, &marker, 1));
  } else if (q.codebook == Exl3Codebook::mcg) {
    const std::uint32_t marker = 0xCBAC1FEDu;
    out.push_back(make_tensor(prefix + ".mcg", DType::i32, {}, &marker, 1));
  }
  if (!bias.empty()) {
    std::vector<half_bits> b(std::size_t(q.np), 0);
    for (std::size_t i = 0; i < bias.size(); ++i) b[i] = float_to_half(bias[i]);
    out.push_back(make_tensor(prefix + ".bias", DType::f16, {q.np}, b.data(), b.size()));
  }
}

Exl3Allocation exl3_allocate(const std::vector<Exl3AllocItem>& items, double bpw, int head_bits, bool hq) {
  Exl3Allocation a;
  a.K.assign(items.size(), 0);
  const int base = int(std::floor(bpw));
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].head) {
      a.K[i] = head_bits;
      continue;
    }
    a.K[i] = base;
    sum += items[i].numel;
  }
  const std::uint64_t budget = std::uint64_t(std::floor(bpw * double(sum)));
  std::uint64_t used = std::uint64_t(base) * sum;
  // The groups in first-seen order, with their sort key (-priority, distance from the ends of
  // the layer stack, layer, insertion index).
  struct Group {
    std::string name;
    std::vector<std::size_t> members;
    int priority = 0;
    std::string stack;
    int layer = -1;
  };
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;
  std::map<std::string, int> stack_max;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].head) continue;
    auto [it, fresh] = index.emplace(items[i].group, groups.size());
    if (fresh) {
      Group g;
      g.name = items[i].group;
      // The first ".<number>." splits the key into the stack and the layer.
      for (std::size_t p = 0; p < g.name.size(); ++p) {
        if (g.name[p] != '.') continue;
        std::size_t q = p + 1;
        while (q < g.name.size() && std::isdigit(static_cast<unsigned char>(g.name[q]))) ++q;
        if (q > p + 1 && q < g.name.size() && g.name[q] == '.') {
          g.stack = g.name.substr(0, p);
          g.layer = std::stoi(g.name.substr(p + 1, q - p - 1));
          break;
        }
      }
      if (g.layer >= 0) stack_max[g.stack] = std::max(stack_max[g.stack], g.layer);
      groups.push_back(std::move(g));
    }
    Group& g = groups[it->second];
    g.members.push_back(i);
    g.priority = std::max(g.priority, items[i].priority);
  }
  std::vector<std::size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  auto dist = [&](const Group& g) { return g.layer < 0 ? 0 : std::min(g.layer, stack_max[g.stack] - g.layer); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const Group &a1 = groups[x], &b1 = groups[y];
    if (a1.priority != b1.priority) return a1.priority > b1.priority;
    if (dist(a1) != dist(b1)) return dist(a1) < dist(b1);
    if (a1.layer != b1.layer) return a1.layer < b1.layer;
    return x < y;
  });
  for (bool changed = true; changed && used < budget;) {
    changed = false;
    for (std::size_t gi : order) {
      std::uint64_t cost = 0;
      for (std::size_t m : groups[gi].members) cost += std::uint64_t(std::min(8, a.K[m] + 1) - a.K[m]) * items[m].numel;
      if (cost > 0 && used + cost <= budget) {
        for (std::size_t m : groups[gi].members) a.K[m] = std::min(8, a.K[m] + 1);
        used += cost;
        changed = true;
      }
    }
  }
  if (hq)
    for (std::size_t i = 0; i < items.size(); ++i)
      if (!items[i].head) a.K[i] = std::max(a.K[i], std::min(base + items[i].select_hq_bits, 8));
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (!items[i].head) bits += std::uint64_t(a.K[i]) * items[i].numel;
  a.bits = sum ? std::round(double(bits) / double(sum) * 100.0) / 100.0 : 0.0;
  return a;
}

}  // namespace exl::convert_detail
