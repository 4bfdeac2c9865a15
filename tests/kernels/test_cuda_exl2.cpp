// EXL2 kernels of the CUDA module against kernels/reference: reconstruct bit-exact with
// exl2_dequant_ref, the fused small-M kernel and reconstruct + cuBLAS against exl2_matmul_ref,
// on random valid layers (mixed bit widths, partial groups, act-order, padded widths). The
// backend repacks the weights at load, so these also check the repack of every width; the
// fused kernel is tested alone, as a fused three-layer launch and with the SiLU gather.
#include <cmath>
#include <cstring>

#include "compare.h"
#include "exl/kernels/exl2.h"
#include "exl2_random.h"
#include "test_cuda_support.h"

using namespace exl;
using namespace exl::test;

namespace {

struct LayerCase {
  int k, n;
};
// n not a multiple of 64 or 128 (40, 96, 200, 1000, 4136), k with groups cut short by the regions.
const LayerCase k_cases[] = {{32, 32},    {64, 40},     {128, 96},    {256, 200},  {512, 512},
                             {1024, 384}, {2048, 1000}, {4096, 4096}, {160, 4136}, {1184, 72}};

Exl2RandomLayer layer_for(std::mt19937& rng, const LayerCase& c, std::uint32_t seed) {
  Exl2RandomLayer L = make_exl2_layer(seed, c.n, random_exl2_regions(rng, c.k));
  CHECK_MSG(L.ok, L.error);
  return L;
}

}  // namespace

EXL_GPU_TEST(cuda_kernels, exl2_reconstruct_bit_exact) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(11);
  for (int rep = 0; rep < 3; ++rep) {
    for (const LayerCase& c : k_cases) {
      const Exl2RandomLayer L = layer_for(rng, c, std::uint32_t(rng()));
      const Exl2Weight w = L.view();
      std::vector<half_bits> ref(std::size_t(w.k) * w.n_pad), got(ref.size(), 0xffff);
      exl2_dequant_ref(w, ref.data());
      const exl_cuda_exl2 cw = to_c(w);
      CUDA_OK(api.test_exl2_reconstruct(0, &cw, got.data()));
      std::size_t bad = 0, first = 0;
      for (std::size_t i = 0; i < ref.size(); ++i)
        if (ref[i] != got[i] && !bad++) first = i;
      CHECK_MSG(bad == 0, bad << " of " << ref.size() << " values differ (k " << c.k << ", n " << c.n << "), first at "
                              << first << ": " << got[first] << " vs " << ref[first]);
    }
  }
}

EXL_GPU_TEST(cuda_kernels, exl2_matmul_fused_and_cublas) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(12);
  for (const LayerCase& c : k_cases) {
    const Exl2RandomLayer L = layer_for(rng, c, std::uint32_t(rng()));
    const Exl2Weight w = L.view();
    const exl_cuda_exl2 cw = to_c(w);
    for (int m : {1, 2, 3, 4, 5, 6, 7, 8, 13, 16, 17, 40}) {
      const HalfData x = random_half(rng, std::size_t(m) * w.k, -1.0f, 1.0f);
      std::vector<float> ref(std::size_t(m) * w.n);
      exl2_matmul_ref(w, x.f.data(), m, ref.data());
      for (int mode : {0, 1, 2, 6, 8}) {  // 8: as 2 into exact accumulators
        if (mode != 1 && m > 16) continue;
        std::vector<float> got(ref.size(), NAN);
        CUDA_OK(api.test_exl2_matmul(0, &cw, x.h.data(), m, got.data(), mode));
        const Diff d = compare(got.data(), ref.data(), ref.size());
        // cuBLAS path: bit-exact fp16 weights, fp32 compute: only the summation order differs.
        // Fused path: exact (q - z) * x summed in fp32, scaled once per 32-row unit, so the
        // weights are never rounded to fp16 as in the reference (spec §2.7 last paragraph):
        // about 2^-12 relative per term.
        const double tol_rel = mode == 1 ? 2e-5 : 5e-4;  // modes 2, 8: mean of three fused results
        CHECK_MSG(d.rel_l2 <= tol_rel && d.max_abs <= 10 * tol_rel * (d.ref_max + 1e-3),
                  "mode " << mode << " k " << c.k << " n " << c.n << " m " << m << ": rel_l2 " << d.rel_l2
                          << " max_abs " << d.max_abs << " ref_max " << d.ref_max);
      }
    }
  }
}

// The down projection's form: x = fp16(silu(gate) * up) gathered inside the kernel.
EXL_GPU_TEST(cuda_kernels, exl2_matmul_silu_gather) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(15);
  for (const LayerCase& c : {LayerCase{256, 200}, LayerCase{1024, 384}, LayerCase{2048, 1000}}) {
    const Exl2RandomLayer L = layer_for(rng, c, std::uint32_t(rng()));
    const Exl2Weight w = L.view();
    const exl_cuda_exl2 cw = to_c(w);
    for (int m : {1, 3, 8}) {
      const HalfData x = random_half(rng, std::size_t(m) * w.k, -6.0f, 6.0f);
      std::vector<float> xs(x.f.size());
      for (std::size_t i = 0; i < xs.size(); ++i)
        xs[i] = half_to_float(float_to_half(x.f[i] / (1.0f + std::exp(-x.f[i]))));
      std::vector<float> ref(std::size_t(m) * w.n), got(ref.size(), NAN);
      exl2_matmul_ref(w, xs.data(), m, ref.data());
      for (int mode : {3, 7, 9, 10}) {  // 7: input in stored row order, read contiguously; 9: exact accumulators; 10: both
        std::fill(got.begin(), got.end(), NAN);
        CUDA_OK(api.test_exl2_matmul(0, &cw, x.h.data(), m, got.data(), mode));
        const Diff d = compare(got.data(), ref.data(), ref.size());
        CHECK_MSG(d.rel_l2 <= 5e-4, "silu mode " << mode << " k " << c.k << " n " << c.n << " m " << m << ": rel_l2 "
                                                 << d.rel_l2);
      }
    }
  }
}

// The q/k/v and gate/up form of the decode step: RMSNorm folded into the gather (residual fp32,
// norm weights gathered through the permutation), against rms_norm then exl2_matmul_ref.
EXL_GPU_TEST(cuda_kernels, exl2_matmul_norm_gather) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(16);
  for (const LayerCase& c : {LayerCase{256, 200}, LayerCase{1024, 384}, LayerCase{2048, 1000}, LayerCase{4096, 4096},
                             LayerCase{8192, 256}, LayerCase{9216, 128}}) {
    const Exl2RandomLayer L = layer_for(rng, c, std::uint32_t(rng()));
    const Exl2Weight w = L.view();
    const exl_cuda_exl2 cw = to_c(w);
    for (int m : {1, 2, 5, 8, 11}) {
      const HalfData x = random_half(rng, std::size_t(m) * w.k, -4.0f, 4.0f);
      std::vector<float> xs(x.f.size());
      for (int r = 0; r < m; ++r) {
        const float* xr = x.f.data() + std::size_t(r) * w.k;
        double ss = 0.0;
        for (int i = 0; i < w.k; ++i) ss += double(xr[i]) * xr[i];
        const float inv = float(1.0 / std::sqrt(ss / w.k + double(EXL_CUDA_TEST_NORM_EPS)));
        for (int i = 0; i < w.k; ++i)
          xs[std::size_t(r) * w.k + i] = half_to_float(float_to_half(xr[i] * inv * exl_cuda_test_norm_weight(i)));
      }
      std::vector<float> ref(std::size_t(m) * w.n), got(ref.size(), NAN);
      exl2_matmul_ref(w, xs.data(), m, ref.data());
      for (int mode : {4, 5}) {  // 5: rms_norm writes the stored row order, the GEMV reads it contiguously
        std::fill(got.begin(), got.end(), NAN);
        CUDA_OK(api.test_exl2_matmul(0, &cw, x.h.data(), m, got.data(), mode));
        const Diff d = compare(got.data(), ref.data(), ref.size());
        CHECK_MSG(d.rel_l2 <= 5e-4, "norm mode " << mode << " k " << c.k << " n " << c.n << " m " << m << ": rel_l2 "
                                                 << d.rel_l2);
      }
    }
  }
}

EXL_GPU_TEST(cuda_kernels, exl2_every_single_width) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(13);
  for (int bits : {2, 3, 4, 5, 6, 8}) {
    for (int gs : {32, 64, 128}) {
      const Exl2RandomLayer L = make_exl2_layer(std::uint32_t(rng()), 136 + 8 * bits, {{bits, 416, gs}});
      CHECK_MSG(L.ok, L.error);
      const Exl2Weight w = L.view();
      const exl_cuda_exl2 cw = to_c(w);
      std::vector<half_bits> ref(std::size_t(w.k) * w.n_pad), got(ref.size(), 0xffff);
      exl2_dequant_ref(w, ref.data());
      CUDA_OK(api.test_exl2_reconstruct(0, &cw, got.data()));
      CHECK_MSG(std::memcmp(ref.data(), got.data(), ref.size() * 2) == 0, "reconstruct differs at " << bits << " bits");
      for (int m : {1, 3, 8}) {
        const HalfData x = random_half(rng, std::size_t(m) * w.k, -2.0f, 2.0f);
        std::vector<float> yr(std::size_t(m) * w.n), yg(yr.size(), NAN);
        exl2_matmul_ref(w, x.f.data(), m, yr.data());
        CUDA_OK(api.test_exl2_matmul(0, &cw, x.h.data(), m, yg.data(), 0));
        const Diff d = compare(yg.data(), yr.data(), yr.size());
        CHECK_MSG(d.rel_l2 <= 5e-4 && d.max_abs <= 5e-3 * (d.ref_max + 1e-3),
                  bits << " bits, group " << gs << ", m " << m << ": rel_l2 " << d.rel_l2 << " max_abs " << d.max_abs);
      }
    }
  }
}

// Split K sums its partials in a fixed order (no float atomics), or into exact accumulators
// (integer atomics): the same launch repeats its result bit for bit, whichever block of a tile
// finishes last. k = 4096 and 14336 are always split
// (a block holds at most 120 units' rows); several shapes, row counts and input forms.
EXL_GPU_TEST(cuda_kernels, exl2_matmul_repeats_bit_for_bit) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(15);
  for (const LayerCase c : {LayerCase{4096, 4096}, LayerCase{14336, 512}, LayerCase{4096, 1000}}) {
    const Exl2RandomLayer L = layer_for(rng, c, std::uint32_t(rng()));
    const exl_cuda_exl2 cw = to_c(L.view());
    for (int m : {1, 3, 8, 13}) {
      const HalfData x = random_half(rng, std::size_t(m) * c.k, -1.0f, 1.0f);
      for (int mode : {0, 3, 4, 8, 9, 10}) {  // 8, 9, 10: exact accumulators (integer atomics)
        std::vector<float> first(std::size_t(m) * c.n, NAN);
        CUDA_OK(api.test_exl2_matmul(0, &cw, x.h.data(), m, first.data(), mode));
        for (int rep = 0; rep < 6; ++rep) {
          std::vector<float> again(first.size(), NAN);
          CUDA_OK(api.test_exl2_matmul(0, &cw, x.h.data(), m, again.data(), mode));
          std::size_t bad = 0;
          for (std::size_t i = 0; i < first.size(); ++i) bad += std::memcmp(&first[i], &again[i], 4) != 0;
          CHECK_MSG(bad == 0, bad << " of " << first.size() << " outputs changed on repeat " << rep << " (k " << c.k
                                  << ", n " << c.n << ", m " << m << ", mode " << mode << ")");
        }
      }
    }
  }
}

EXL_GPU_TEST(cuda_kernels, exl2_bad_layer_is_an_error) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(14);
  const Exl2RandomLayer L = make_exl2_layer(1, 64, {{4, 128, 64}});
  exl_cuda_exl2 cw = to_c(L.view());
  cw.k = 96;  // groups cover 128 rows
  std::vector<half_bits> out(std::size_t(128) * 64);
  const int st = api.test_exl2_reconstruct(0, &cw, out.data());
  CHECK_EQ(st, int(EXL_CUDA_ERR_INVALID));
  CHECK(std::string(api.last_error()).find("rows") != std::string::npos);
}
