// Fast CPU EXL2 matmul against the reference on random layers: every bit width and mixes,
// group sizes 32/64/128 with partial groups, padded columns, m from 1 (decode) to 40 (tile +
// GEMM path), SIMD and portable paths, 1 and several threads, with and without the
// tile-contiguous copy of the packed weights (bit-identical), and on CPUs with AVX-512 the
// AVX-512 kernels against the AVX2 ones (bit-identical).
// Tolerances: the CPU kernel multiplies integer (q - z) by the activations and applies the fp16
// scale once per group (like the GPU kernel, spec §2.7), so it does not round each weight to
// fp16 as the reference's dequantized matrix does. Against the exact product computed here in
// double from the unrounded (q - z) * scale: relative L2 <= 1e-5, max abs <= 2e-5 * (1 + max).
// Against exl2_matmul_ref (fp16 weight rounding, <= 2^-11 relative per weight): relative L2
// <= 2e-3.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "compare.h"
#include "exl/kernels/cpu_features.h"
#include "exl/kernels/exl2.h"
#include "exl2_random.h"
#include "exl_test.h"

using namespace exl;

namespace {

// y = x * W in double with W[perm[j]][c] = (q[j][c] - z) * scale(g, c), no fp16 rounding of W.
std::vector<float> exact_product(const test::Exl2RandomLayer& L, const std::vector<float>& x, int m) {
  const Exl2Weight w = L.view();
  const std::vector<Exl2Group> groups = exl2_groups(w);
  std::vector<double> acc(std::size_t(m) * w.n, 0.0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const float mq = round_to_half(half_to_float(L.scale_max[g]) / 256.0f);
    for (int c = 0; c < w.n; ++c) {
      const int code = L.codes[g * w.n_pad + c];
      const double scale = round_to_half(float((code + 1) * (code + 1)) * mq);
      for (int i = 0; i < groups[g].rows; ++i) {
        const int j = groups[g].first_row + i;
        const double wv = double(int(L.q[std::size_t(j) * w.n_pad + c]) - (1 << (groups[g].bits - 1))) * scale;
        for (int r = 0; r < m; ++r) acc[std::size_t(r) * w.n + c] += wv * x[std::size_t(r) * w.k + L.perm[j]];
      }
    }
  }
  return std::vector<float>(acc.begin(), acc.end());
}

void check_layer(const test::Exl2RandomLayer& L, int m, std::uint32_t seed) {
  CHECK_MSG(L.ok, L.error);
  const Exl2Weight w = L.view();
  const std::vector<float> x = test::random_floats(seed, std::size_t(m) * w.k);
  std::vector<float> ref(std::size_t(m) * w.n), out(std::size_t(m) * w.n, 12345.0f);
  exl2_matmul_ref(w, x.data(), m, ref.data());
  const std::vector<float> exact = exact_product(L, x, m);
  // The tile-contiguous copy (Exl2Weight::q_tiled) must give the same bits as q_weight.
  std::vector<std::uint32_t> tiled(std::size_t(w.n_pad) * std::size_t(w.q_rows), 0xdeadbeefu);
  exl2_tile_cpu(w, tiled.data());
  Exl2Weight wt = w;
  wt.q_tiled = tiled.data();
  std::vector<float> out_t(out.size());
  for (bool simd : {true, false}) {
    for (int threads : {1, 3}) {
      test::CpuConfig cfg(simd, threads);
      std::fill(out.begin(), out.end(), 12345.0f);
      exl2_matmul_cpu(w, x.data(), m, out.data());
      std::fill(out_t.begin(), out_t.end(), 54321.0f);
      exl2_matmul_cpu(wt, x.data(), m, out_t.data());
      CHECK_MSG(std::memcmp(out_t.data(), out.data(), out.size() * sizeof(float)) == 0,
                "tiled copy differs: k=" << w.k << " n=" << w.n << " m=" << m << " simd=" << simd);
      if (simd && cpu_has_avx512()) {
        // The AVX-512 kernels give the AVX2 kernels' bits (both layouts).
        std::vector<float> out_2(out.size(), 999.0f), out_t2(out.size(), 998.0f);
        set_cpu_avx512_enabled(false);
        exl2_matmul_cpu(w, x.data(), m, out_2.data());
        exl2_matmul_cpu(wt, x.data(), m, out_t2.data());
        set_cpu_avx512_enabled(true);
        CHECK_MSG(std::memcmp(out_2.data(), out.data(), out.size() * sizeof(float)) == 0 &&
                      std::memcmp(out_t2.data(), out.data(), out.size() * sizeof(float)) == 0,
                  "AVX-512 differs from AVX2: k=" << w.k << " n=" << w.n << " m=" << m);
      }
      const test::Diff dr = test::compare(out.data(), ref.data(), out.size());
      CHECK_MSG(dr.ref_max > 0.0, "reference output is all zero");
      CHECK_MSG(dr.rel_l2 <= 2e-3, "vs reference: rel_l2=" << dr.rel_l2);
      const test::Diff d = test::compare(out.data(), exact.data(), out.size());
      CHECK_MSG(d.rel_l2 <= 1e-5 && d.max_abs <= 2e-5 * (1.0 + d.ref_max),
                "k=" << w.k << " n=" << w.n << " m=" << m << " simd=" << simd << " threads=" << threads
                     << " rel_l2=" << d.rel_l2 << " max_abs=" << d.max_abs);
    }
  }
}

}  // namespace

EXL_TEST(exl2_cpu, single_width_layers) {
  std::uint32_t seed = 1;
  for (int b : {2, 3, 4, 5, 6, 8})
    for (int m : {1, 2, 3, 4, 9})
      {
        check_layer(test::make_exl2_layer(seed, 72, {{b, 224, 64}}), m, seed + 1000);
        ++seed;
      }
}

EXL_TEST(exl2_cpu, mixed_widths_random_shapes) {
  std::mt19937 rng(77);
  for (int iter = 0; iter < 24; ++iter) {
    const int k = 32 * (1 + int(rng() % 20));
    const int n = 1 + int(rng() % 130);
    const int ms[] = {1, 2, 3, 5, 8, 13, 40};
    const int m = ms[iter % 7];
    check_layer(test::make_exl2_layer(rng(), n, test::random_exl2_regions(rng, k)), m, rng());
  }
}

EXL_TEST(exl2_cpu, all_widths_in_one_layer_large_m) {
  const test::Exl2RandomLayer L = test::make_exl2_layer(
      5, 100, {{8, 64, 32}, {6, 96, 32}, {5, 128, 128}, {4, 320, 128}, {3, 64, 64}, {2, 96, 64}});
  for (int m : {1, 7, 33}) check_layer(L, m, 1000 + m);
}
