// Fast CPU dense linear layer and embedding against the references on random inputs.
// Tolerance: identical widened weights on both sides, fp32 vs double accumulation, so
// relative L2 <= 2e-6 and max abs <= 2e-5 * (1 + max |ref|) for every weight dtype.
#include <cstdint>
#include <random>
#include <vector>

#include "compare.h"
#include "exl/kernels/linear.h"
#include "exl2_random.h"
#include "exl_test.h"

using namespace exl;

namespace {

std::vector<std::uint16_t> to16(const std::vector<float>& v, DType dt) {
  std::vector<std::uint16_t> o(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) o[i] = dt == DType::f16 ? float_to_half(v[i]) : float_to_bf16(v[i]);
  return o;
}

}  // namespace

EXL_TEST(linear_cpu, matches_reference_all_dtypes) {
  std::mt19937 rng(3);
  const int shapes[][3] = {{1, 64, 32}, {1, 200, 17}, {3, 37, 50}, {4, 128, 64}, {5, 256, 33}, {17, 96, 40}, {2, 7, 3}};
  for (const auto& s : shapes) {
    const int m = s[0], k = s[1], n = s[2];
    const std::vector<float> x = test::random_floats(rng(), std::size_t(m) * k);
    const std::vector<float> wf = test::random_floats(rng(), std::size_t(n) * k, -0.5f, 0.5f);
    const std::vector<float> bias = test::random_floats(rng(), std::size_t(n));
    for (DType dt : {DType::f32, DType::f16, DType::bf16}) {
      const std::vector<std::uint16_t> w16 = to16(wf, dt);
      const void* w = dt == DType::f32 ? static_cast<const void*>(wf.data()) : w16.data();
      for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
        std::vector<float> ref(std::size_t(m) * n), out(std::size_t(m) * n);
        linear_ref(x.data(), m, k, w, dt, n, b, ref.data());
        for (bool simd : {true, false}) {
          test::CpuConfig cfg(simd, 2);
          linear_cpu(x.data(), m, k, w, dt, n, b, out.data());
          const test::Diff d = test::compare(out.data(), ref.data(), out.size());
          CHECK_MSG(d.rel_l2 <= 2e-6 && d.max_abs <= 2e-5 * (1.0 + d.ref_max),
                    "m=" << m << " k=" << k << " n=" << n << " dtype=" << int(dt) << " simd=" << simd
                         << " rel_l2=" << d.rel_l2);
        }
      }
    }
  }
}

EXL_TEST(linear_cpu, reference_known_values) {
  const float x[2] = {1.0f, 2.0f};
  const float w[6] = {1.0f, 0.5f, -1.0f, 3.0f, 0.25f, 0.25f};  // [n=3, k=2]
  const float bias[3] = {0.5f, 0.0f, -1.0f};
  float y[3];
  linear_ref(x, 1, 2, w, DType::f32, 3, bias, y);
  CHECK_EQ(y[0], 2.5f);
  CHECK_EQ(y[1], 5.0f);
  CHECK_EQ(y[2], -0.25f);
}

EXL_TEST(linear_cpu, embedding_matches_reference) {
  const int vocab = 50, dim = 24;
  const std::vector<float> tf = test::random_floats(8, std::size_t(vocab) * dim);
  const std::int32_t ids[6] = {0, 49, 7, -1, 50, 7};
  for (DType dt : {DType::f32, DType::f16, DType::bf16}) {
    const std::vector<std::uint16_t> t16 = to16(tf, dt);
    const void* t = dt == DType::f32 ? static_cast<const void*>(tf.data()) : t16.data();
    std::vector<float> ref(6 * dim), out(6 * dim, 9.0f);
    embedding_ref(t, dt, vocab, dim, ids, 6, ref.data());
    embedding_cpu(t, dt, vocab, dim, ids, 6, out.data());
    for (std::size_t i = 0; i < ref.size(); ++i) CHECK_EQ(out[i], ref[i]);
    CHECK_EQ(ref[dim * 1 + 3], dt == DType::f32 ? tf[49 * dim + 3] : out[dim * 1 + 3]);
    CHECK_EQ(ref[dim * 3], 0.0f);  // id -1
    CHECK_EQ(ref[dim * 4 + 5], 0.0f);  // id == vocab
    if (dt == DType::f16) CHECK_EQ(ref[2 * dim + 1], half_to_float(float_to_half(tf[7 * dim + 1])));
  }
}
