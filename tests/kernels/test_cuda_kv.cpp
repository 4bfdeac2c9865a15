// The CUDA module's quantized KV cache (kernels/cuda/kv_cache.cu) against the CPU store
// (kernels/reference/kv_quant_ref.cpp): the same rows written in the same chunks give the same
// bytes and scales, for FP8, Q8, Q4 and mixed K/V widths, over shapes with one, two or more tokens
// per 512-element block (partly covered blocks are re-quantized); and attention over the stores
// (decode kernels for chunks below 32 tokens, tensor-core prefill above) matches
// attention_kvstore_ref. The same again with paged stores (pages of 256 positions in reverse order
// behind spare pages): the same output and, read back through the page table, the same bytes.
#include <cmath>
#include <cstring>

#include "compare.h"
#include "exl/kernels/attention.h"
#include "exl/kernels/kv_quant.h"
#include "test_cuda_support.h"

using namespace exl;
using namespace exl::test;

EXL_GPU_TEST(cuda_kernels, kv_cache_stores_and_attention) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(41);
  struct Shape { int t, past, nh, nkv, d; std::vector<int> chunks; };
  const std::vector<Shape> shapes = {
      {1, 0, 4, 1, 64, {}},                  // row 64: 8 tokens per block, first token
      {1, 37, 8, 2, 64, {5, 1, 31}},         // row 128: 4 tokens per block, odd lengths
      {1, 255, 4, 4, 64, {200, 55}},         // row 256: 2 tokens per block, the new token completes one
      {1, 600, 32, 8, 128, {512, 88}},       // row 1024: 2 blocks per token (llama3-8b's shape)
      {3, 301, 28, 4, 128, {1, 300}},        // row 512
      {7, 100, 8, 8, 64, {64, 36}},          // verification-sized chunk
      {9, 1000, 32, 4, 64, {1000}},          // row 256
      {40, 200, 16, 2, 128, {100, 100}},     // 32 tokens or more: the tensor-core prefill
      {64, 0, 8, 1, 64, {}},
      {100, 77, 32, 8, 128, {77}},
  };
  const std::pair<int, int> formats[] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {3, 4}, {1, 4}, {4, 1}};
  for (const Shape& s : shapes) {
    for (auto [kf, vf] : formats) {
      const int ctx = s.past + s.t, row = s.nkv * s.d;
      const HalfData q = random_half(rng, std::size_t(s.t) * s.nh * s.d, -1.0f, 1.0f);
      const HalfData k = random_half(rng, std::size_t(ctx) * row, -2.0f, 2.0f);
      const HalfData v = random_half(rng, std::size_t(ctx) * row, -1.0f, 1.0f);
      const float scale = 1.0f / std::sqrt(float(s.d)) * 2.0f;
      // CPU: the same chunks, then the step's rows.
      KvStore ck(cpu_format(kf), ctx, row), cv(cpu_format(vf), ctx, row);
      int p = 0;
      for (int c : s.chunks) {
        write_kv(ck, cv, k.f.data(), v.f.data(), row, p, c);
        p += c;
      }
      AttentionParams ap;
      ap.tokens = s.t; ap.past = s.past; ap.n_heads = s.nh; ap.n_kv_heads = s.nkv; ap.head_dim = s.d; ap.scale = scale;
      std::vector<float> ref(q.f.size());
      attention_kvstore_ref(ap, q.f.data(), ck, cv, k.f.data() + std::size_t(s.past) * row,
                            v.f.data() + std::size_t(s.past) * row, ref.data());
      write_kv(ck, cv, k.f.data(), v.f.data(), row, s.past, s.t);
      // GPU.
      std::vector<float> got(q.f.size(), NAN);
      std::vector<std::uint8_t> kd(ck.data_bytes()), vd(cv.data_bytes());
      std::vector<std::uint16_t> ksc(ck.scale_count()), vsc(cv.scale_count());
      CUDA_OK(api.test_kv_cache(0, kf, vf, q.h.data(), k.h.data(), v.h.data(), s.t, s.past, s.nh, s.nkv, s.d, scale,
                                s.chunks.data(), int(s.chunks.size()), got.data(), kd.data(),
                                ksc.empty() ? nullptr : ksc.data(), vd.data(), vsc.empty() ? nullptr : vsc.data(),
                                nullptr, 0));
      const std::string what = "t " + std::to_string(s.t) + " past " + std::to_string(s.past) + " nh " +
                               std::to_string(s.nh) + " nkv " + std::to_string(s.nkv) + " d " + std::to_string(s.d) +
                               " K " + kv_format_name(cpu_format(kf)) + " V " + kv_format_name(cpu_format(vf));
      // Stores: byte for byte.
      auto first_diff = [](const auto& a, const void* b, std::size_t n) {
        const auto* pa = reinterpret_cast<const std::uint8_t*>(a.data());
        const auto* pb = static_cast<const std::uint8_t*>(b);
        for (std::size_t i = 0; i < n; ++i)
          if (pa[i] != pb[i]) return long(i);
        return -1L;
      };
      const long dk = first_diff(kd, ck.raw(), kd.size()), dv = first_diff(vd, cv.raw(), vd.size());
      CHECK_MSG(dk < 0, what << ": K store differs from the CPU store at byte " << dk);
      CHECK_MSG(dv < 0, what << ": V store differs from the CPU store at byte " << dv);
      const long sk = first_diff(ksc, ck.scale_data(), ksc.size() * 2), sv = first_diff(vsc, cv.scale_data(), vsc.size() * 2);
      CHECK_MSG(sk < 0, what << ": K scales differ at byte " << sk);
      CHECK_MSG(sv < 0, what << ": V scales differ at byte " << sv);
      // Attention: the rotated-domain arithmetic and the fp16 output differ from the reference's
      // fp16 dequantization in the last bits only.
      const Diff df = compare(got.data(), ref.data(), ref.size());
      if (options().verbose) std::printf("  %s: max_abs %.2e rel_l2 %.2e\n", what.c_str(), df.max_abs, df.rel_l2);
      CHECK_MSG(df.max_abs <= 4e-3 && df.rel_l2 <= 2e-3, what << ": max_abs " << df.max_abs << " rel_l2 " << df.rel_l2);
      // Paged: logical page i in store page n - 1 - i of n = pages + 2 (none where it would be contiguous).
      const int pages = (ctx + 255) / 256, store_pages = pages + 2;
      std::vector<std::int32_t> table(static_cast<std::size_t>(pages));
      for (int i = 0; i < pages; ++i) table[std::size_t(i)] = store_pages - 1 - i;
      std::vector<float> got_p(q.f.size(), NAN);
      std::vector<std::uint8_t> kd_p(kd.size()), vd_p(vd.size());
      std::vector<std::uint16_t> ksc_p(ksc.size()), vsc_p(vsc.size());
      CUDA_OK(api.test_kv_cache(0, kf, vf, q.h.data(), k.h.data(), v.h.data(), s.t, s.past, s.nh, s.nkv, s.d, scale,
                                s.chunks.data(), int(s.chunks.size()), got_p.data(), kd_p.data(),
                                ksc_p.empty() ? nullptr : ksc_p.data(), vd_p.data(),
                                vsc_p.empty() ? nullptr : vsc_p.data(), table.data(), store_pages));
      CHECK_MSG(std::memcmp(got_p.data(), got.data(), got.size() * sizeof(float)) == 0,
                what << ": paged attention output differs from the contiguous one");
      CHECK_MSG(kd_p == kd && vd_p == vd, what << ": paged K/V bytes differ from the contiguous stores'");
      CHECK_MSG(ksc_p == ksc && vsc_p == vsc, what << ": paged scales differ from the contiguous stores'");
    }
  }
}
