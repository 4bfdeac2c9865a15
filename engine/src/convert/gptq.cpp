// AdaptiveGPTQ for one linear layer (spec §7.5): act-order, damping 0.12, upper Cholesky factor
// of the inverse Hessian, per-group scale search (97 multipliers, error norm 3.5), column sweep
// with error feedback and the lazy batch update. The scale used for rounding is the exact fp16
// value the runtime computes (§2.6), so dequantizing the packed layer reproduces `dequant`.
#include <algorithm>
#include <cmath>
#include <numeric>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "exl/convert.h"
#include "exl/error.h"
#include "exl/kernels/cpu_features.h"
#include "exl/kernels/threads.h"

namespace exl {
namespace {

// In-place lower Cholesky factor of a [k, k] symmetric matrix; false if not positive definite.
bool cholesky_lower(std::vector<double>& a, int k) {
  for (int j = 0; j < k; ++j) {
    double* rj = a.data() + std::size_t(j) * k;
    double d = rj[j];
    for (int p = 0; p < j; ++p) d -= rj[p] * rj[p];
    if (!(d > 0.0) || !std::isfinite(d)) return false;
    const double l = std::sqrt(d);
    rj[j] = l;
    parallel_for(k - j - 1, 64, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = j + 1 + b; i < j + 1 + e; ++i) {
        double* ri = a.data() + std::size_t(i) * k;
        double s = ri[j];
        for (int p = 0; p < j; ++p) s -= ri[p] * rj[p];
        ri[j] = s / l;
      }
    });
  }
  for (int i = 0; i < k; ++i)
    for (int j = i + 1; j < k; ++j) a[std::size_t(i) * k + j] = 0.0;
  return true;
}

// H^-1 from its lower Cholesky factor L (H = L L^T): H^-1 = L^-T L^-1. L^-1 is kept transposed
// (row c = column c of L^-1) so that every inner product below runs over contiguous memory; the
// sums are formed in the same order as over the column-major form.
std::vector<double> inverse_from_cholesky(const std::vector<double>& l, int k) {
  std::vector<double> inv_t(std::size_t(k) * k, 0.0);  // inv_t[c][i] = (L^-1)[i][c], i >= c
  parallel_for(k, 16, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t c = b; c < e; ++c) {
      double* col = inv_t.data() + std::size_t(c) * k;
      for (int i = int(c); i < k; ++i) {
        double s = (i == c) ? 1.0 : 0.0;
        const double* li = l.data() + std::size_t(i) * k;
        for (int p = int(c); p < i; ++p) s -= li[p] * col[p];
        col[i] = s / li[i];
      }
    }
  });
  std::vector<double> h(std::size_t(k) * k, 0.0);  // (L^-1)^T L^-1
  parallel_for(k, 8, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const double* ci = inv_t.data() + std::size_t(i) * k;
      for (int j = int(i); j < k; ++j) {
        const double* cj = inv_t.data() + std::size_t(j) * k;
        double s = 0.0;
        for (int p = j; p < k; ++p) s += ci[p] * cj[p];
        h[std::size_t(i) * k + j] = s;
        h[std::size_t(j) * k + i] = s;
      }
    }
  });
  return h;
}

inline float pow35(float x) { return x * x * x * std::sqrt(x); }

// A group's per-column scale codes (1..16, quadratic in the column's absolute maximum relative to
// the group's largest) and their unscaled steps; returns the group's largest step. `x` is
// [rows, np], columns contiguous.
float scale_codes(const float* x, int rows, int np, int* code, float* sigma, int maxq) {
  float M = 0.0f;
  for (int c = 0; c < np; ++c) {
    float xmax = 0.0f;
    for (int j = 0; j < rows; ++j) xmax = std::max(xmax, std::fabs(x[std::size_t(j) * np + c]));
    sigma[c] = (xmax + 1e-12f) / (float(maxq) / 2.0f);
    M = std::max(M, sigma[c]);
  }
  for (int c = 0; c < np; ++c) {
    code[c] = std::clamp(int(std::nearbyint(16.0f * std::sqrt(sigma[c] / M))), 1, 16);
    sigma[c] = float(code[c] * code[c]) / 256.0f * M;
  }
  return M;
}

constexpr int k_multipliers = 97;
inline float multiplier(int i) { return 0.70f + 0.50f * float(i) / 96.0f; }

#if defined(__x86_64__)
// perr[i] += the norm-3.5 error of every row under multiplier i, for the multipliers of 8-lane
// vectors [vb, ve) (lane i of vector v is multiplier 8v + i). Each lane performs the portable
// loop's operations in its order (no contraction into FMAs), so the sums are bit-identical.
__attribute__((target("avx2"), optimize("fp-contract=off"))) void multiplier_errors_avx2(
    const float* x, int rows, int np, const float* sigma, int z, int maxq, const float* ps, int vb, int ve,
    double* perr) {
  const __m256 lo = _mm256_set1_ps(float(-z)), hi = _mm256_set1_ps(float(maxq - z));
  const __m256 sign = _mm256_set1_ps(-0.0f);
  alignas(32) float racc_out[8];
  for (int v = vb; v < ve; ++v) {
    const __m256 p = _mm256_loadu_ps(ps + 8 * v);
    for (int j = 0; j < rows; ++j) {
      const float* row = x + std::size_t(j) * np;
      __m256 racc = _mm256_setzero_ps();
      for (int c = 0; c < np; ++c) {
        const __m256 xv = _mm256_set1_ps(row[c]);
        const __m256 s = _mm256_mul_ps(_mm256_set1_ps(sigma[c]), p);
        __m256 q = _mm256_round_ps(_mm256_div_ps(xv, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);
        const __m256 d = _mm256_andnot_ps(sign, _mm256_sub_ps(_mm256_mul_ps(q, s), xv));
        racc = _mm256_add_ps(racc, _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(d, d), d), _mm256_sqrt_ps(d)));
      }
      _mm256_store_ps(racc_out, racc);
      for (int i = 0; i < 8 && 8 * v + i < k_multipliers; ++i) perr[8 * v + i] += racc_out[i];
    }
  }
}
#endif

// The multiplier of the steps (0.70 ... 1.20 in 97 steps) with the least error under norm 3.5.
float search_multiplier(const float* x, int rows, int np, const float* sigma, int z, int maxq) {
  std::vector<double> perr(k_multipliers, 0.0);
#if defined(__x86_64__)
  if (cpu_simd_active()) {
    constexpr int vectors = (k_multipliers + 7) / 8;
    float ps[8 * vectors];
    for (int i = 0; i < 8 * vectors; ++i) ps[i] = multiplier(std::min(i, k_multipliers - 1));
    parallel_for(vectors, 1, [&](std::int64_t vb, std::int64_t ve) {
      multiplier_errors_avx2(x, rows, np, sigma, z, maxq, ps, int(vb), int(ve), perr.data());
    });
  } else
#endif
  parallel_for(k_multipliers, 4, [&](std::int64_t pb, std::int64_t pe) {
    for (std::int64_t i = pb; i < pe; ++i) {
      const float p = multiplier(int(i));
      double acc = 0.0;
      for (int j = 0; j < rows; ++j) {
        const float* row = x + std::size_t(j) * np;
        float racc = 0.0f;
        for (int c = 0; c < np; ++c) {
          const float s = sigma[c] * p;
          const float qv = std::clamp(std::nearbyint(row[c] / s), float(-z), float(maxq - z));
          racc += pow35(std::fabs(qv * s - row[c]));
        }
        acc += racc;
      }
      perr[std::size_t(i)] = acc;
    }
  });
  const int best = int(std::min_element(perr.begin(), perr.end()) - perr.begin());
  return multiplier(best);
}

// The scales the runtime will compute (§2.6) from the stored maximum and codes; returns the
// stored maximum.
half_bits runtime_scales(float M, float p, const int* code, int np, float* scale) {
  const half_bits smax = float_to_half(M * p);
  const float m = round_to_half(half_to_float(smax) * (1.0f / 256.0f));
  for (int c = 0; c < np; ++c) scale[c] = round_to_half(float(code[c] * code[c]) * m);
  return smax;
}

}  // namespace

PreparedHessian prepare_hessian(std::vector<double> h, int k, const std::string& what) {
  if (k <= 0 || h.size() != std::size_t(k) * k)
    throw Error(ErrorKind::internal, "Hessian size does not match in_features", {}, what);
  PreparedHessian out;
  out.k = k;
  out.perm.resize(std::size_t(k));
  std::iota(out.perm.begin(), out.perm.end(), 0);
  std::stable_sort(out.perm.begin(), out.perm.end(),
                   [&](int a, int b) { return h[std::size_t(a) * k + a] > h[std::size_t(b) * k + b]; });
  std::vector<double> hp(std::size_t(k) * k);
  double mean_diag = 0.0;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) hp[std::size_t(i) * k + j] = h[std::size_t(out.perm[i]) * k + out.perm[j]];
    mean_diag += hp[std::size_t(i) * k + i];
  }
  mean_diag /= k;
  const double damp = std::max(0.12 * mean_diag, 1e-5);
  for (int attempt = 0; attempt < 10; ++attempt) {
    for (int i = 0; i < k; ++i) hp[std::size_t(i) * k + i] += damp;
    std::vector<double> l = hp;
    if (!cholesky_lower(l, k)) continue;
    std::vector<double> hinv = inverse_from_cholesky(l, k);
    if (!cholesky_lower(hinv, k)) continue;  // hinv = Lh Lh^T, U = Lh^T
    out.u.assign(std::size_t(k) * k, 0.0f);
    for (int i = 0; i < k; ++i)
      for (int j = i; j < k; ++j) out.u[std::size_t(i) * k + j] = float(hinv[std::size_t(j) * k + i]);
    return out;
  }
  throw Error(ErrorKind::internal, "the Hessian is not positive definite even after damping", {}, what);
}

QuantizedLinear gptq_quantize(const float* w, int n, int k, const PreparedHessian& h, const QuantOption& option,
                              bool rtn) {
  if (h.k != k) throw Error(ErrorKind::internal, "Hessian and weight disagree on in_features");
  QuantizedLinear r;
  r.k = k;
  r.n = n;
  r.n_pad = (n + 31) / 32 * 32;
  const int np = r.n_pad;
  r.layout = group_layout(option, k);
  r.perm = h.perm;
  r.total_bits = linear_total_bits(r.layout, k, n);
  const int G = r.layout.groups();
  r.q.assign(std::size_t(k) * np, 0);
  r.codes.assign(std::size_t(G) * np, 0);
  r.scale_max.assign(std::size_t(G), 0);

  std::vector<float> W(std::size_t(k) * np, 0.0f);  // [k, n_pad], stored row order
  for (int j = 0; j < k; ++j)
    for (int c = 0; c < n; ++c) W[std::size_t(j) * np + c] = w[std::size_t(c) * k + h.perm[j]];
  std::vector<float> deq(std::size_t(k) * np, 0.0f);
  std::vector<float> err;
  std::vector<float> sigma(np), scale(np);
  std::vector<int> code(np);

  int a = 0;
  for (int g = 0; g < G; ++g) {
    const int rows = r.layout.rows[g], b = r.layout.bits[g], e = a + rows;
    const int maxq = (1 << b) - 1, z = 1 << (b - 1);
    // Scale search on the current (error-compensated) rows.
    const float M = scale_codes(W.data() + std::size_t(a) * np, rows, np, code.data(), sigma.data(), maxq);
    const float pbest = search_multiplier(W.data() + std::size_t(a) * np, rows, np, sigma.data(), z, maxq);
    r.scale_max[std::size_t(g)] = runtime_scales(M, pbest, code.data(), np, scale.data());
    for (int c = 0; c < np; ++c) r.codes[std::size_t(g) * np + c] = std::uint8_t(code[c] - 1);
    // Column sweep with error feedback inside the group.
    err.assign(std::size_t(rows) * np, 0.0f);
    for (int j = a; j < e; ++j) {
      float* row = W.data() + std::size_t(j) * np;
      float* erow = err.data() + std::size_t(j - a) * np;
      const float ujj = rtn ? 1.0f : h.u[std::size_t(j) * k + j];
      for (int c = 0; c < np; ++c) {
        int q = z;
        if (scale[c] > 0.0f) q = std::clamp(int(std::nearbyint(row[c] / scale[c])) + z, 0, maxq);
        const float wq = round_to_half(float(q - z) * scale[c]);
        r.q[std::size_t(j) * np + c] = std::uint8_t(q);
        deq[std::size_t(j) * np + c] = wq;
        erow[c] = (row[c] - wq) / ujj;
      }
      if (rtn) continue;
      for (int jj = j + 1; jj < e; ++jj) {
        const float u = h.u[std::size_t(j) * k + jj];
        float* dst = W.data() + std::size_t(jj) * np;
        for (int c = 0; c < np; ++c) dst[c] -= u * erow[c];
      }
    }
    // Lazy batch update of the rows after the group.
    if (!rtn && e < k) {
      parallel_for(k - e, 16, [&](std::int64_t jb, std::int64_t je) {
        for (std::int64_t jj = e + jb; jj < e + je; ++jj) {
          float* dst = W.data() + std::size_t(jj) * np;
          for (int j = a; j < e; ++j) {
            const float u = h.u[std::size_t(j) * k + jj];
            const float* erow = err.data() + std::size_t(j - a) * np;
            for (int c = 0; c < np; ++c) dst[c] -= u * erow[c];
          }
        }
      });
    }
    a = e;
  }
  r.dequant.assign(std::size_t(n) * k, 0.0f);
  for (int j = 0; j < k; ++j)
    for (int c = 0; c < n; ++c) r.dequant[std::size_t(c) * k + h.perm[j]] = deq[std::size_t(j) * np + c];
  return r;
}

RtnErrorEstimate::RtnErrorEstimate(const float* w, int n, int k, int column_step) : w_(w), n_(n), k_(k) {
  for (int c = 0; c < n; c += std::max(1, column_step)) cols_.push_back(c);
  for (int c : cols_)
    for (int j = 0; j < k; ++j) energy_ += double(w[std::size_t(c) * k + j]) * w[std::size_t(c) * k + j];
}

double RtnErrorEstimate::group_error(int row, int rows, int bits) {
  const auto key = std::make_tuple(row, rows, bits);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const int maxq = (1 << bits) - 1, z = 1 << (bits - 1);
  const int ns = int(cols_.size());
  // The group's rows, all columns (the scale codes depend on every column's maximum).
  std::vector<float> x(std::size_t(rows) * n_);
  for (int j = 0; j < rows; ++j)
    for (int c = 0; c < n_; ++c) x[std::size_t(j) * n_ + c] = w_[std::size_t(c) * k_ + row + j];
  std::vector<int> code(static_cast<std::size_t>(n_));
  std::vector<float> sigma(static_cast<std::size_t>(n_));
  const float M = scale_codes(x.data(), rows, n_, code.data(), sigma.data(), maxq);
  // The search and the error over the sampled columns only.
  std::vector<float> xs(static_cast<std::size_t>(rows) * ns), ss(static_cast<std::size_t>(ns)), scale(static_cast<std::size_t>(ns));
  std::vector<int> cs(static_cast<std::size_t>(ns));
  for (int i = 0; i < ns; ++i) {
    ss[std::size_t(i)] = sigma[std::size_t(cols_[std::size_t(i)])];
    cs[std::size_t(i)] = code[std::size_t(cols_[std::size_t(i)])];
    for (int j = 0; j < rows; ++j) xs[std::size_t(j) * ns + i] = x[std::size_t(j) * n_ + cols_[std::size_t(i)]];
  }
  const float p = search_multiplier(xs.data(), rows, ns, ss.data(), z, maxq);
  runtime_scales(M, p, cs.data(), ns, scale.data());
  double err = 0.0;
  for (int j = 0; j < rows; ++j)
    for (int i = 0; i < ns; ++i) {
      const float v = xs[std::size_t(j) * ns + i], s = scale[std::size_t(i)];
      const int q = s > 0.0f ? std::clamp(int(std::nearbyint(v / s)) + z, 0, maxq) : z;
      const double d = double(round_to_half(float(q - z) * s)) - v;
      err += d * d;
    }
  memo_.emplace(key, err);
  return err;
}

double RtnErrorEstimate::relative_error(const GroupLayout& layout) {
  double err = 0.0;
  int row = 0;
  for (int g = 0; g < layout.groups(); ++g) {
    err += group_error(row, layout.rows[std::size_t(g)], layout.bits[std::size_t(g)]);
    row += layout.rows[std::size_t(g)];
  }
  return energy_ > 0.0 ? err / energy_ : 0.0;
}

}  // namespace exl
