// The CUDA module's non-EXL2 kernels against kernels/reference on random inputs of many shapes:
// RMSNorm, RoPE (every scaling variant's table), attention (decode and chunked prefill, GQA,
// fp16 cache), SiLU-gated product, embedding, dense fp16 linear (cuBLAS); plus the VRAM budget.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "compare.h"
#include "exl/kernels/attention.h"
#include "exl/kernels/linear.h"
#include "exl/kernels/ops.h"
#include "exl/kernels/rope.h"
#include "test_cuda_support.h"

using namespace exl;
using namespace exl::test;

EXL_GPU_TEST(cuda_kernels, rms_norm) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(21);
  for (int dim : {64, 256, 384, 1000, 1002, 4096}) {  // 1002: the scalar form (not a multiple of 4)
    for (int rows : {1, 3, 17}) {
      const HalfData x = random_half(rng, std::size_t(rows) * dim, -3.0f, 3.0f);
      const HalfData w = random_half(rng, std::size_t(dim), 0.5f, 1.5f);
      std::vector<float> ref(x.f.size());
      rms_norm_ref(x.f.data(), rows, dim, w.h.data(), DType::f16, 1e-5f, ref.data());
      std::vector<half_bits> got(ref.size(), 0xffff);
      CUDA_OK(api.test_rms_norm(0, x.f.data(), rows, dim, w.h.data(), 1e-5f, got.data()));
      for (std::size_t i = 0; i < ref.size(); ++i)
        CHECK_MSG(std::fabs(half_to_float(got[i]) - ref[i]) <= 1e-3 * std::fabs(ref[i]) + 1e-5,
                  "dim " << dim << " i " << i << ": " << half_to_float(got[i]) << " vs " << ref[i]);
    }
  }
}

EXL_GPU_TEST(cuda_kernels, rope_all_scalings) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(22);
  for (RopeScaling sc : {RopeScaling::none, RopeScaling::linear, RopeScaling::llama3, RopeScaling::yarn}) {
    for (RopeStyle style : {RopeStyle::neox, RopeStyle::gptj}) {
      for (int d : {64, 128}) {
        RopeParams p;
        p.head_dim = d; p.theta = 500000.0f; p.scaling = sc; p.style = style; p.factor = 4.0f;
        p.original_max_position = 8192; p.max_seq_len = 65536;
        const RopeTable t = rope_table(p);
        const int tokens = 5, heads = 3, past = int(rng() % 40000);
        const HalfData x = random_half(rng, std::size_t(tokens) * heads * d, -2.0f, 2.0f);
        std::vector<float> ref = x.f, got = x.f;
        std::vector<std::int32_t> pos(tokens);
        for (int i = 0; i < tokens; ++i) pos[std::size_t(i)] = past + i;
        rope_apply_ref(ref.data(), tokens, heads, d, pos.data(), t, style);
        CUDA_OK(api.test_rope(0, got.data(), tokens, heads, d, past, t.inv_freq.data(), t.mscale, t.position_divisor,
                              style == RopeStyle::gptj ? 1 : 0));
        const Diff df = compare(got.data(), ref.data(), ref.size());
        CHECK_MSG(df.max_abs <= 2e-6 * (df.ref_max + 1.0), "rope scaling " << int(sc) << " d " << d << ": max_abs " << df.max_abs);
      }
    }
  }
}

EXL_GPU_TEST(cuda_kernels, attention_decode_and_prefill) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(23);
  struct Shape { int t, past, nh, nkv, d; };
  const Shape shapes[] = {{1, 0, 4, 1, 64},    {1, 37, 6, 2, 64},   {1, 1000, 32, 8, 128}, {1, 3000, 8, 8, 128},
                          {7, 0, 6, 2, 64},    {16, 100, 4, 4, 128}, {64, 200, 8, 2, 64},  {33, 5, 16, 2, 256},
                          // decode (split over the keys on the device, any grid) at past 0, 1, 100, 2047, 8000
                          {1, 0, 32, 8, 128},  {1, 1, 32, 8, 128},  {1, 100, 32, 8, 128}, {1, 2047, 32, 8, 128},
                          {1, 8000, 32, 8, 128}, {1, 8000, 32, 4, 64}, {1, 2047, 16, 2, 256}, {1, 100, 8, 1, 64},
                          {1, 8000, 4, 4, 128}, {1, 2047, 64, 8, 128},
                          // odd lengths take the fused decode step (RoPE, cache write, ticket merge)
                          {1, 8001, 32, 8, 128}, {1, 4097, 32, 4, 64}, {1, 63, 8, 1, 64}, {1, 3, 28, 4, 128},
                          {1, 30001, 32, 8, 128},
                          // 2 .. 31 tokens (speculative verification, short chunks): the decode
                          // kernels, one query token each, any grid
                          {2, 512, 32, 8, 128}, {9, 3000, 32, 8, 128}, {5, 0, 8, 8, 64}, {31, 200, 16, 2, 256},
                          {3, 8000, 32, 4, 64}, {17, 1, 28, 4, 128},
                          // 32 tokens or more, head_dim 64/128: flash attention on tensor cores (row
                          // tiles of 128, key tiles of 64; partial tiles, GQA, long past)
                          {32, 0, 8, 1, 64}, {100, 0, 32, 8, 128}, {129, 0, 16, 16, 64}, {300, 700, 8, 2, 128},
                          {512, 37, 4, 1, 128}, {65, 4000, 12, 4, 64}};
  for (const Shape& s : shapes) {
    const int ctx = s.past + s.t;
    const HalfData q = random_half(rng, std::size_t(s.t) * s.nh * s.d, -1.0f, 1.0f);
    const HalfData k = random_half(rng, std::size_t(ctx) * s.nkv * s.d, -1.0f, 1.0f);
    const HalfData v = random_half(rng, std::size_t(ctx) * s.nkv * s.d, -1.0f, 1.0f);
    AttentionParams p;
    p.tokens = s.t; p.past = s.past; p.n_heads = s.nh; p.n_kv_heads = s.nkv; p.head_dim = s.d;
    p.scale = 1.0f / std::sqrt(float(s.d)) * 2.0f;  // sharper softmax than 1/sqrt(d)
    p.cache_dtype = DType::f16;
    std::vector<float> ref(q.f.size()), got(q.f.size(), NAN);
    attention_ref(p, q.f.data(), k.h.data(), v.h.data(), ref.data());
    CUDA_OK(api.test_attention(0, q.h.data(), k.h.data(), v.h.data(), s.t, s.past, s.nh, s.nkv, s.d, p.scale, got.data()));
    const Diff df = compare(got.data(), ref.data(), ref.size());
    // The tensor-core kernels (prefill, and decode for head_dim 64/128 in every other call of the
    // entry) round the softmax weights to fp16 for P.V (relative 2^-11 each).
    const bool tc = s.d <= 128;
    const double max_abs = tc ? 1e-3 : 2e-4, max_rel = tc ? 5e-4 : 1e-4;
    CHECK_MSG(df.max_abs <= max_abs && df.rel_l2 <= max_rel, "t " << s.t << " past " << s.past << " nh " << s.nh << " nkv "
                                                             << s.nkv << " d " << s.d << ": max_abs " << df.max_abs
                                                             << " rel_l2 " << df.rel_l2);
  }
}

// Exact accumulators (int64 fixed point, 32 fraction bits): the first kernel's conversion, a bias
// added, the read-back; the same integer arithmetic on the host gives every bit.
EXL_GPU_TEST(cuda_kernels, exact_accumulators_round_trip) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(25);
  auto to_exact = [](float v) {
    v = std::min(std::max(v, -33554432.0f), 33554432.0f);  // +-2^25
    return std::llrint(double(v) * 4294967296.0);
  };
  const int rows = 3, n = 777;
  std::vector<float> x(static_cast<std::size_t>(rows) * n), bias(static_cast<std::size_t>(n));
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-30, 17);
  for (float& v : x) v = std::ldexp(mant(rng), expo(rng));
  for (float& v : bias) v = std::ldexp(mant(rng), expo(rng) / 2);
  x[0] = 0.0f; x[1] = 1e9f; x[2] = -1e9f; x[3] = 65504.0f; x[4] = -3.0e-10f;  // zero, clamped, fp16 max, below 2^-32
  for (bool with_bias : {false, true}) {
    std::vector<float> got(x.size(), NAN);
    CUDA_OK(api.test_exact_acc(0, x.data(), rows, n, with_bias ? bias.data() : nullptr, got.data()));
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const long long q = to_exact(x[i]) + (with_bias ? to_exact(bias[i % std::size_t(n)]) : 0ll);
      const float want = float(q) * (1.0f / 4294967296.0f);
      if (std::memcmp(&want, &got[i], 4) != 0 && !bad++) first = i;
    }
    CHECK_MSG(bad == 0, bad << " of " << x.size() << " values differ (bias " << with_bias << "), first at " << first
                            << ": " << got[first] << " for " << x[first]);
  }
  std::vector<float> got(x.size());
  CUDA_OK(api.test_exact_acc(0, x.data(), rows, n, nullptr, got.data()));
  CHECK(got[1] == 33554432.0f && got[2] == -33554432.0f && got[3] == 65504.0f && got[0] == 0.0f);
  // What the format keeps: 2^-32 absolute, so a value of 2^-8 or more round-trips to the last bit.
  for (std::size_t i = 5; i < x.size(); ++i)
    if (std::fabs(x[i]) >= 0.00390625f)
      CHECK_MSG(got[i] == x[i], "round trip of " << x[i] << " gave " << got[i]);
}

EXL_GPU_TEST(cuda_kernels, silu_mul_and_embedding) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(24);
  for (std::int64_t n : {1, 33, 1000, 100000}) {
    const HalfData g = random_half(rng, std::size_t(n), -8.0f, 8.0f), u = random_half(rng, std::size_t(n), -4.0f, 4.0f);
    std::vector<float> ref(static_cast<std::size_t>(n));
    silu_mul_ref(g.f.data(), u.f.data(), n, ref.data());
    std::vector<half_bits> got(static_cast<std::size_t>(n), half_bits(0xffff));
    CUDA_OK(api.test_silu_mul(0, g.f.data(), u.f.data(), n, got.data()));
    for (std::size_t i = 0; i < ref.size(); ++i)
      CHECK_MSG(std::fabs(half_to_float(got[i]) - ref[i]) <= 1e-3 * std::fabs(ref[i]) + 1e-6, "silu_mul i " << i);
  }
  const int vocab = 300, dim = 96;
  const HalfData table = random_half(rng, std::size_t(vocab) * dim, -1.0f, 1.0f);
  std::vector<std::int32_t> ids = {0, 299, 5, 5, 123};
  std::vector<float> ref(ids.size() * dim), got(ref.size(), NAN);
  embedding_ref(table.h.data(), DType::f16, vocab, dim, ids.data(), int(ids.size()), ref.data());
  CUDA_OK(api.test_embedding(0, table.h.data(), vocab, dim, ids.data(), int(ids.size()), got.data()));
  CHECK(ref == got);
}

EXL_GPU_TEST(cuda_kernels, dense_linear_cublas) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(25);
  for (int m : {1, 4, 37}) {
    for (int k : {64, 384, 2048}) {
      const int n = 8192 / (k / 64) + 13;
      const HalfData x = random_half(rng, std::size_t(m) * k, -1.0f, 1.0f);
      const HalfData w = random_half(rng, std::size_t(n) * k, -0.1f, 0.1f);
      std::vector<float> ref(std::size_t(m) * n), got(ref.size(), NAN);
      linear_ref(x.f.data(), m, k, w.h.data(), DType::f16, n, nullptr, ref.data());
      CUDA_OK(api.test_dense_linear(0, x.h.data(), m, k, w.h.data(), n, got.data()));
      const Diff d = compare(got.data(), ref.data(), ref.size());
      CHECK_MSG(d.rel_l2 <= 2e-5, "m " << m << " k " << k << ": rel_l2 " << d.rel_l2);
    }
  }
}

EXL_GPU_TEST(cuda_kernels, vram_budget_refuses_and_releases) {
  const exl_cuda_api& api = cuda_api();
  exl_cuda_device_info before{};
  CUDA_OK(api.device_info(0, &before));
  exl_cuda_options o{};
  o.device = 0; o.max_chunk = 64; o.vram_limit = 64ull << 20;  // cuBLAS and GEMV workspaces fit, a model does not
  exl_cuda_backend* b = nullptr;
  CUDA_OK(api.create(&o, &b));
  std::vector<exl_cuda_layer> layers(2);
  std::vector<std::int16_t> groups = {4, 0};
  std::vector<float> inv(64, 1.0f);
  for (exl_cuda_layer& l : layers)
    for (exl_cuda_linear* p : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) {
      p->kind = 1; p->in_features = 4096; p->out_features = 4096;
      p->exl2 = exl_cuda_exl2{nullptr, nullptr, nullptr, groups.data(), nullptr, 4096, 4096, 4096, 1, 512};
    }
  exl_cuda_model m{};
  m.vocab = 1000; m.hidden = 4096; m.num_layers = 2; m.num_heads = 32; m.num_kv_heads = 8; m.head_dim = 128;
  m.intermediate = 4096; m.rms_eps = 1e-5f; m.rope_inv_freq = inv.data(); m.rope_mscale = 1; m.rope_position_divisor = 1;
  m.layers = layers.data(); m.synthetic_seed = 7;
  m.head.kind = 0; m.head.in_features = 4096; m.head.out_features = 1000;
  const int st = api.load(b, &m, nullptr, nullptr);
  const std::string msg = api.last_error();
  api.destroy(b);
  CHECK_EQ(st, int(EXL_CUDA_ERR_OUT_OF_MEMORY));
  CHECK_MSG(msg.find("budget") != std::string::npos, msg);
  exl_cuda_device_info after{};
  CUDA_OK(api.device_info(0, &after));
  const double diff_mib = (double(before.free_bytes) - double(after.free_bytes)) / 1048576.0;
  CHECK_MSG(diff_mib < 64.0, "device memory not returned: " << diff_mib << " MiB");
}
