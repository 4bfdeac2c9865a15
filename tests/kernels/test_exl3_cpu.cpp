// Fast CPU EXL3 matmul (kernels/cpu/exl3_cpu*.cpp) against the reference on random layers: every
// codebook and bit rate (1..8, 1.5/2.5/3.5), k and n from 128 to 640, m from 1 (decode) to 19,
// the portable, AVX2 and (where the CPU has it) AVX-512 paths, 1 and 3 threads.
// The decoded weights are exact in every path (the same fp16 values as exl3_reconstruct_ref, which
// is bit-exact with ExLlamaV3), the transforms are the reference's; only the order of the fp32
// sums differs from the reference's double accumulation: relative L2 <= 2e-6, max abs error
// <= 1e-5 * (1 + max |y|).
#include <cstdint>
#include <vector>

#include "compare.h"
#include "exl/kernels/cpu_features.h"
#include "exl/kernels/exl3.h"
#include "exl2_random.h"
#include "exl3_random.h"
#include "exl_test.h"

using namespace exl;

namespace {

void check(const test::Exl3RandomLayer& L, int m, std::uint32_t seed) {
  const Exl3Weight& w = L.w;
  const std::vector<float> x = test::random_floats(seed, std::size_t(m) * w.k, -2.0f, 2.0f);
  std::vector<float> ref(std::size_t(m) * w.n);
  exl3_matmul_ref(w, x.data(), m, ref.data());
  struct Path { bool simd, avx512; int threads; };
  std::vector<Path> paths = {{false, false, 1}, {true, false, 3}, {true, false, 1}};
  if (cpu_has_avx512()) paths.push_back({true, true, 3});
  for (const Path& p : paths) {
    if (p.simd && !cpu_has_avx2()) continue;
    test::CpuConfig cfg(p.simd, p.threads);
    set_cpu_avx512_enabled(p.avx512);
    std::vector<float> out(ref.size(), 12345.0f);
    exl3_matmul_cpu(w, x.data(), m, out.data());
    set_cpu_avx512_enabled(true);
    const test::Diff d = test::compare(out.data(), ref.data(), out.size());
    CHECK_MSG(d.rel_l2 <= 2e-6 && d.max_abs <= 1e-5 * (1.0 + d.ref_max),
              exl3_codebook_name(w.codebook) << " bits2 " << w.bits2 << " k " << w.k << " n " << w.n << " m " << m
              << " simd " << p.simd << " avx512 " << p.avx512 << ": rel_l2 " << d.rel_l2 << " max_abs " << d.max_abs);
  }
}

}  // namespace

EXL_TEST(exl3_cpu, every_rate_and_codebook) {
  std::uint32_t seed = 1;
  for (Exl3Codebook cb : {Exl3Codebook::inst3, Exl3Codebook::mcg, Exl3Codebook::mul1})
    for (int bits2 : test::exl3_all_bits2(cb)) {
      const int m = 1 + int(seed % 4);
      test::Exl3RandomLayer L(128, 256, bits2, cb, seed);
      check(L, m, seed + 1000);
      ++seed;
    }
}

EXL_TEST(exl3_cpu, random_shapes) {
  std::mt19937 rng(77);
  const int sizes[] = {128, 256, 384, 640};
  const int ms[] = {1, 2, 3, 4, 5, 8, 9, 19};
  for (int c = 0; c < 14; ++c) {
    const Exl3Codebook cb = Exl3Codebook(rng() % 3);
    const std::vector<int> rates = test::exl3_all_bits2(cb);
    const int bits2 = rates[rng() % rates.size()];
    test::Exl3RandomLayer L(sizes[rng() % 4], sizes[rng() % 4], bits2, cb, rng());
    check(L, ms[rng() % 8], rng());
  }
}

EXL_TEST(exl3_cpu, reconstruct_equals_reference) {
  for (Exl3Codebook cb : {Exl3Codebook::inst3, Exl3Codebook::mcg, Exl3Codebook::mul1})
    for (int bits2 : test::exl3_all_bits2(cb)) {
      test::Exl3RandomLayer L(128, 384, bits2, cb, 500u + unsigned(bits2));
      std::vector<half_bits> ref(std::size_t(L.w.k) * L.w.n);
      exl3_reconstruct_ref(L.w, ref.data());
      for (bool simd : {false, true}) {
        if (simd && !cpu_has_avx2()) continue;
        for (bool avx512 : {false, true}) {
          if (avx512 && (!simd || !cpu_has_avx512())) continue;
          test::CpuConfig cfg(simd, 2);
          set_cpu_avx512_enabled(avx512);
          std::vector<half_bits> out(ref.size(), 0x7E00);
          exl3_reconstruct_cpu(L.w, out.data());
          set_cpu_avx512_enabled(true);
          CHECK_MSG(out == ref, exl3_codebook_name(cb) << " bits2 " << bits2 << " simd " << simd << " avx512 " << avx512);
        }
      }
    }
}
