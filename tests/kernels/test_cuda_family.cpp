// The CUDA module's model-family kernels (issue 47, ABI 10) against kernels/reference on random
// inputs of many shapes: RMSNorm with fp32 weights (fp16 out, in place, added to a residual), GeGLU
// with tanh GELU, scaling and soft-capping, partial rotary RoPE through the cache-write kernel, and
// attention with soft-capped logits and sliding windows (head_dim 16 .. 256, one token to long
// chunks, fp16 and quantized stores, contiguous and paged).
#include <cmath>
#include <cstring>
#include <random>

#include "compare.h"
#include "exl/kernels/attention.h"
#include "exl/kernels/kv_quant.h"
#include "exl/kernels/ops.h"
#include "exl/kernels/rope.h"
#include "test_cuda_support.h"

using namespace exl;
using namespace exl::test;

namespace {

std::vector<float> random_floats(std::mt19937& rng, std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Resets the attention options when a case ends (also on a failed check's exception).
struct AttentionOptions {
  const exl_cuda_api& api;
  AttentionOptions(const exl_cuda_api& a, float softcap, int window) : api(a) {
    CUDA_OK(api.test_attention_options(softcap, window));
  }
  ~AttentionOptions() { api.test_attention_options(0.0f, 0); }
};


}  // namespace

EXL_GPU_TEST(cuda_kernels, family_norms_gelu_caps) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(71);
  for (int dim : {16, 32, 64, 96, 1000, 2304}) {
    for (int rows : {1, 5, 33}) {
      const std::size_t n = std::size_t(rows) * dim;
      std::vector<float> x = random_floats(rng, n, -4.0f, 4.0f);
      const std::vector<float> w = random_floats(rng, std::size_t(dim), 0.2f, 1.8f);  // (1 + w) of Gemma's norms
      std::vector<float> ref(n);
      rms_norm_ref(x.data(), rows, dim, w.data(), DType::f32, 1e-6f, ref.data());
      const std::string what = "dim " + std::to_string(dim) + " rows " + std::to_string(rows);
      // 0: fp16 out (one rounding).
      std::vector<half_bits> h(n, 0xffff);
      std::vector<float> xc = x;
      CUDA_OK(api.test_family_op(0, 0, xc.data(), nullptr, w.data(), rows, dim, 1e-6f, 0, 0, 0, h.data()));
      for (std::size_t i = 0; i < n; ++i)
        CHECK_MSG(std::fabs(half_to_float(h[i]) - ref[i]) <= 1e-3 * std::fabs(ref[i]) + 1e-6,
                  what << " fp16 i " << i << ": " << half_to_float(h[i]) << " vs " << ref[i]);
      // 1: in place (fp32).
      CUDA_OK(api.test_family_op(0, 1, xc.data(), nullptr, w.data(), rows, dim, 1e-6f, 0, 0, 0, nullptr));
      Diff df = compare(xc.data(), ref.data(), n);
      CHECK_MSG(df.max_abs <= 2e-6 * (df.ref_max + 1.0), what << " in place: max_abs " << df.max_abs);
      // 2: added to a residual.
      std::vector<float> res = random_floats(rng, n, -2.0f, 2.0f), want = res;
      for (std::size_t i = 0; i < n; ++i) want[i] += ref[i];
      xc = x;
      CUDA_OK(api.test_family_op(0, 2, xc.data(), nullptr, w.data(), rows, dim, 1e-6f, 0, 0, 0, res.data()));
      df = compare(res.data(), want.data(), n);
      CHECK_MSG(df.max_abs <= 4e-6 * (df.ref_max + 1.0), what << " residual add: max_abs " << df.max_abs);
    }
  }
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1000), std::size_t(300000)}) {
    const std::vector<float> g = random_floats(rng, n, -6.0f, 6.0f), u = random_floats(rng, n, -2.0f, 2.0f);
    std::vector<float> ref(n);
    gelu_tanh_mul_ref(g.data(), u.data(), std::int64_t(n), ref.data());
    std::vector<half_bits> h(n, 0xffff);
    std::vector<float> gc = g;
    CUDA_OK(api.test_family_op(0, 3, gc.data(), u.data(), nullptr, 1, int(n), 0, 0, 0, 0, h.data()));
    for (std::size_t i = 0; i < n; ++i)
      CHECK_MSG(std::fabs(half_to_float(h[i]) - ref[i]) <= 1e-3 * std::fabs(ref[i]) + 1e-6,
                "gelu n " << n << " i " << i << ": " << half_to_float(h[i]) << " vs " << ref[i]);
    std::vector<float> x = random_floats(rng, n, -60.0f, 60.0f), sc = x, cap = x, cref = x;
    CUDA_OK(api.test_family_op(0, 4, sc.data(), nullptr, nullptr, 1, int(n), 0, 45.254833f, 0, 0, nullptr));
    for (std::size_t i = 0; i < n; ++i) CHECK_EQ(sc[i], x[i] * 45.254833f);
    for (float c : {2.0f, 30.0f, 50.0f}) {
      cap = x;
      cref = x;
      softcap_inplace_ref(cref.data(), std::int64_t(n), c);
      CUDA_OK(api.test_family_op(0, 5, cap.data(), nullptr, nullptr, 1, int(n), 0, c, 0, 0, nullptr));
      const Diff df = compare(cap.data(), cref.data(), n);
      CHECK_MSG(df.max_abs <= 4e-6 * c, "softcap " << c << " n " << n << ": max_abs " << df.max_abs);
    }
  }
}

// Partial rotary (Phi-3: 12 of 16 dimensions rotate) and full rotary of small heads, through the
// kernel that writes the cache (q's rows rounded to fp16), with LongRoPE's attention factor.
EXL_GPU_TEST(cuda_kernels, family_rope_partial_rotary) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(72);
  struct Case { int d, rotary; float mscale; };
  for (const Case& c : {Case{16, 12, 1.19f}, Case{16, 16, 1.0f}, Case{32, 8, 1.0f}, Case{64, 48, 1.05f},
                        Case{128, 64, 1.0f}, Case{256, 256, 1.0f}}) {
    RopeParams p;
    p.head_dim = c.d;
    p.rotary_dim = c.rotary < c.d ? c.rotary : 0;
    RopeTable t = rope_table(p);
    t.mscale = c.mscale;
    const int tokens = 37, heads = 3, rh = rope_half(t, c.d);
    std::vector<float> x = random_floats(rng, std::size_t(tokens) * heads * c.d, -2.0f, 2.0f), ref = x;
    std::vector<std::int32_t> pos(tokens);
    for (int i = 0; i < tokens; ++i) pos[std::size_t(i)] = i;
    rope_apply_ref(ref.data(), tokens, heads, c.d, pos.data(), t, RopeStyle::neox);
    CUDA_OK(api.test_family_op(0, 6, x.data(), t.inv_freq.data(), nullptr, tokens, heads * c.d, 0, t.mscale, c.d, rh,
                               nullptr));
    for (std::size_t i = 0; i < x.size(); ++i)
      CHECK_MSG(std::fabs(x[i] - ref[i]) <= 1e-3 * std::fabs(ref[i]) + 2e-6,
                "d " << c.d << " rotary " << c.rotary << " i " << i << ": " << x[i] << " vs " << ref[i]);
  }
}

// Soft-capped scores and sliding windows over fp16 stores (the general form): every head_dim the
// families use, one token, short chunks and long ones, windows shorter and longer than the context.
EXL_GPU_TEST(cuda_kernels, family_attention_softcap_window) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(73);
  struct Shape { int t, past, nh, nkv, d; float softcap; int window; };
  const Shape shapes[] = {{1, 0, 4, 2, 32, 2.0f, 16},     {1, 49, 4, 2, 32, 2.0f, 16},   {1, 49, 4, 1, 32, 0.0f, 16},
                          {11, 0, 4, 2, 32, 2.0f, 16},    {50, 0, 4, 2, 32, 2.0f, 16},   {50, 0, 6, 2, 16, 0.0f, 24},
                          {1, 300, 6, 2, 16, 0.0f, 24},   {7, 60, 4, 2, 16, 0.0f, 0},    {40, 100, 4, 1, 32, 0.0f, 0},
                          {1, 1000, 8, 4, 64, 50.0f, 0},  {33, 500, 8, 2, 128, 50.0f, 4096}, {3, 700, 8, 2, 128, 0.0f, 100},
                          {1, 2047, 16, 2, 256, 50.0f, 1000}, {64, 300, 8, 8, 256, 30.0f, 64}, {5, 5, 8, 8, 64, 1.0f, 1},
                          {100, 0, 4, 4, 16, 5.0f, 7}};
  for (const Shape& s : shapes) {
    AttentionOptions opt(api, s.softcap, s.window);
    const int ctx = s.past + s.t;
    const HalfData q = random_half(rng, std::size_t(s.t) * s.nh * s.d, -1.0f, 1.0f);
    const HalfData k = random_half(rng, std::size_t(ctx) * s.nkv * s.d, -1.0f, 1.0f);
    const HalfData v = random_half(rng, std::size_t(ctx) * s.nkv * s.d, -1.0f, 1.0f);
    AttentionParams p;
    p.tokens = s.t; p.past = s.past; p.n_heads = s.nh; p.n_kv_heads = s.nkv; p.head_dim = s.d;
    p.scale = 1.0f / std::sqrt(float(s.d)) * 4.0f;  // scores past the small caps
    p.cache_dtype = DType::f16;
    p.softcap = s.softcap;
    p.window = s.window;
    std::vector<float> ref(q.f.size()), got(q.f.size(), NAN);
    attention_ref(p, q.f.data(), k.h.data(), v.h.data(), ref.data());
    CUDA_OK(api.test_attention(0, q.h.data(), k.h.data(), v.h.data(), s.t, s.past, s.nh, s.nkv, s.d, p.scale, got.data()));
    const Diff df = compare(got.data(), ref.data(), ref.size());
    CHECK_MSG(df.max_abs <= 2e-4 && df.rel_l2 <= 1e-4, "t " << s.t << " past " << s.past << " d " << s.d << " cap "
                                                           << s.softcap << " window " << s.window << ": max_abs "
                                                           << df.max_abs << " rel_l2 " << df.rel_l2);
  }
}

// The same over the quantized stores (chunks written first, the step's rows staged) and paged
// stores: against attention_kvstore_ref with the window and the cap; paged equal to contiguous.
EXL_GPU_TEST(cuda_kernels, family_kv_cache_softcap_window) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(74);
  struct Shape { int t, past, nh, nkv, d; std::vector<int> chunks; float softcap; int window; };
  const std::vector<Shape> shapes = {
      {1, 49, 4, 2, 32, {7, 42}, 2.0f, 16},     {7, 60, 4, 2, 16, {60}, 0.0f, 24},
      {1, 37, 8, 2, 64, {5, 1, 31}, 50.0f, 16}, {33, 40, 4, 2, 64, {40}, 30.0f, 20},
      {2, 300, 4, 4, 64, {256, 44}, 0.0f, 100},  // keys over two pages
  };
  const std::pair<int, int> formats[] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {3, 4}};
  for (const Shape& s : shapes) {
    AttentionOptions opt(api, s.softcap, s.window);
    for (auto [kf, vf] : formats) {
      if ((kf >= 3 || vf >= 3) && s.d % 64 != 0) continue;  // Q8/Q4 stores need head_dim % 64 == 0
      const int ctx = s.past + s.t, row = s.nkv * s.d;
      const HalfData q = random_half(rng, std::size_t(s.t) * s.nh * s.d, -1.0f, 1.0f);
      const HalfData k = random_half(rng, std::size_t(ctx) * row, -2.0f, 2.0f);
      const HalfData v = random_half(rng, std::size_t(ctx) * row, -1.0f, 1.0f);
      const float scale = 1.0f / std::sqrt(float(s.d)) * 2.0f;
      KvStore ck(cpu_format(kf), ctx, row), cv(cpu_format(vf), ctx, row);
      int p = 0;
      for (int c : s.chunks) {
        write_kv(ck, cv, k.f.data(), v.f.data(), row, p, c);
        p += c;
      }
      AttentionParams ap;
      ap.tokens = s.t; ap.past = s.past; ap.n_heads = s.nh; ap.n_kv_heads = s.nkv; ap.head_dim = s.d; ap.scale = scale;
      ap.softcap = s.softcap;
      ap.window = s.window;
      std::vector<float> ref(q.f.size());
      attention_kvstore_ref(ap, q.f.data(), ck, cv, k.f.data() + std::size_t(s.past) * row,
                            v.f.data() + std::size_t(s.past) * row, ref.data());
      write_kv(ck, cv, k.f.data(), v.f.data(), row, s.past, s.t);
      std::vector<float> got(q.f.size(), NAN), got_p(q.f.size(), NAN);
      std::vector<std::uint8_t> kd(ck.data_bytes()), vd(cv.data_bytes());
      std::vector<std::uint16_t> ksc(ck.scale_count()), vsc(cv.scale_count());
      CUDA_OK(api.test_kv_cache(0, kf, vf, q.h.data(), k.h.data(), v.h.data(), s.t, s.past, s.nh, s.nkv, s.d, scale,
                                s.chunks.data(), int(s.chunks.size()), got.data(), kd.data(),
                                ksc.empty() ? nullptr : ksc.data(), vd.data(), vsc.empty() ? nullptr : vsc.data(),
                                nullptr, 0));
      const std::string what = "t " + std::to_string(s.t) + " past " + std::to_string(s.past) + " d " +
                               std::to_string(s.d) + " cap " + std::to_string(s.softcap) + " window " +
                               std::to_string(s.window) + " K " + kv_format_name(cpu_format(kf)) + " V " +
                               kv_format_name(cpu_format(vf));
      const Diff df = compare(got.data(), ref.data(), ref.size());
      if (options().verbose) std::printf("  %s: max_abs %.2e rel_l2 %.2e\n", what.c_str(), df.max_abs, df.rel_l2);
      CHECK_MSG(df.max_abs <= 4e-3 && df.rel_l2 <= 2e-3, what << ": max_abs " << df.max_abs << " rel_l2 " << df.rel_l2);
      const int pages = (ctx + 255) / 256, store_pages = pages + 2;
      std::vector<std::int32_t> table(static_cast<std::size_t>(pages));
      for (int i = 0; i < pages; ++i) table[std::size_t(i)] = store_pages - 1 - i;
      CUDA_OK(api.test_kv_cache(0, kf, vf, q.h.data(), k.h.data(), v.h.data(), s.t, s.past, s.nh, s.nkv, s.d, scale,
                                s.chunks.data(), int(s.chunks.size()), got_p.data(), kd.data(),
                                ksc.empty() ? nullptr : ksc.data(), vd.data(), vsc.empty() ? nullptr : vsc.data(),
                                table.data(), store_pages));
      CHECK_MSG(std::memcmp(got_p.data(), got.data(), got.size() * sizeof(float)) == 0,
                what << ": paged attention output differs from the contiguous one");
    }
  }
}
