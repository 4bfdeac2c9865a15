// EXL3 kernels of the CUDA module against kernels/reference (exl3_ref.cpp), on random layers of
// every codebook and bit rate: reconstruct and the input transform bit for bit, the linear (GEMV
// and reconstruct + cuBLAS, rows in several passes, padded features, added into y) within fp32
// summation-order tolerances; and the CUDA backend on a random EXL3 model against the CPU backend
// and the model's exact dense twin (tests/engine/exl3_twin.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>

#include "compare.h"
#include "exl/backend.h"
#include "exl/cuda.h"
#include "exl/generator.h"
#include "exl/kernels/exl3.h"
#include "exl/model.h"
#include "exl/plan.h"
#include "exl3_random.h"
#include "test_cuda_support.h"
#include "../engine/exl3_twin.h"
#include "../engine/refs.h"
#include "exl_test.h"

using namespace exl;
using namespace exl::test;

namespace {

exl_cuda_exl3 to_c(const Exl3Weight& w) {
  return exl_cuda_exl3{w.trellis, w.suh, w.svh, w.k, w.n, w.bits2, int(w.codebook)};
}

struct Shape {
  int k, n;
};
const Shape k_shapes[] = {{128, 128}, {256, 384}, {384, 128}, {128, 1024}};

const Exl3Codebook k_codebooks[] = {Exl3Codebook::inst3, Exl3Codebook::mcg, Exl3Codebook::mul1};

}  // namespace

EXL_GPU_TEST(cuda_kernels, exl3_reconstruct_bit_exact) {
  const exl_cuda_api& api = cuda_api();
  std::uint32_t seed = 100;
  for (Exl3Codebook cb : k_codebooks)
    for (int bits2 : exl3_all_bits2(cb)) {
      const Shape s = k_shapes[seed % 4];
      const Exl3RandomLayer L(s.k, s.n, bits2, cb, ++seed);
      std::vector<half_bits> ref(std::size_t(s.k) * s.n), got(ref.size(), 0);
      exl3_reconstruct_ref(L.w, ref.data());
      const exl_cuda_exl3 cw = to_c(L.w);
      CUDA_OK(api.test_exl3_reconstruct(0, &cw, got.data()));
      std::size_t bad = 0, first = 0;
      for (std::size_t i = 0; i < ref.size(); ++i)
        if (ref[i] != got[i] && !bad++) first = i;
      CHECK_MSG(bad == 0, exl3_codebook_name(cb) << " bits2 " << bits2 << ": " << bad << " of " << ref.size()
                                                 << " values differ, first at " << first << ": " << got[first] << " vs "
                                                 << ref[first]);
    }
}

EXL_GPU_TEST(cuda_kernels, exl3_input_transform_bit_exact) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(7);
  for (int in : {128, 256, 200, 70}) {
    const int k = (in + 127) / 128 * 128;
    const Exl3RandomLayer L(k, 128, 4, Exl3Codebook::mul1, std::uint32_t(rng()));
    for (int m : {1, 3, 17}) {
      const HalfData x = random_half(rng, std::size_t(m) * in, -4.0f, 4.0f);
      std::vector<half_bits> xp(std::size_t(m) * k, 0), ref(xp.size()), got(xp.size(), 0);
      for (int r = 0; r < m; ++r) std::copy_n(x.h.begin() + std::ptrdiff_t(r) * in, in, xp.begin() + std::ptrdiff_t(r) * k);
      exl3_had128_fp16_ref(xp.data(), m, k, L.w.suh, ref.data());
      const exl_cuda_exl3 cw = to_c(L.w);
      CUDA_OK(api.test_exl3_input(0, &cw, x.h.data(), m, in, got.data()));
      std::size_t bad = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) bad += ref[i] != got[i];
      CHECK_MSG(bad == 0, "in " << in << " m " << m << ": " << bad << " of " << ref.size() << " values differ");
    }
  }
}

EXL_GPU_TEST(cuda_kernels, exl3_matmul_gemv_and_cublas) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(8);
  struct Case {
    int k, n, in, out;
  };
  // Padded features (in < k, out < n) as on models whose widths are not multiples of 128.
  const Case cases[] = {{128, 128, 128, 128}, {256, 384, 256, 384}, {384, 256, 330, 200}, {128, 1024, 96, 1000}};
  int idx = 0;
  for (const Case& c : cases)
    for (Exl3Codebook cb : k_codebooks) {
      const std::vector<int> rates = exl3_all_bits2(cb);
      const int bits2 = rates[std::size_t(idx++) % rates.size()];
      const Exl3RandomLayer L(c.k, c.n, bits2, cb, std::uint32_t(rng()));
      const exl_cuda_exl3 cw = to_c(L.w);
      for (int m : {1, 2, 5, 8, 9, 70}) {
        const HalfData x = random_half(rng, std::size_t(m) * c.in, -1.0f, 1.0f);
        std::vector<float> xp(std::size_t(m) * c.k, 0.0f), full(std::size_t(m) * c.n), ref(std::size_t(m) * c.out);
        for (int r = 0; r < m; ++r)
          std::copy_n(x.f.begin() + std::ptrdiff_t(r) * c.in, c.in, xp.begin() + std::ptrdiff_t(r) * c.k);
        exl3_matmul_ref(L.w, xp.data(), m, full.data());
        for (int r = 0; r < m; ++r)
          std::copy_n(full.begin() + std::ptrdiff_t(r) * c.n, c.out, ref.begin() + std::ptrdiff_t(r) * c.out);
        for (int mode : {0, 1, 2}) {
          std::vector<float> base(ref.size(), 0.0f);
          if (mode == 2)
            for (float& v : base) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
          std::vector<float> got = base;
          CUDA_OK(api.test_exl3_matmul(0, &cw, x.h.data(), m, c.in, c.out, got.data(), mode));
          for (std::size_t i = 0; i < got.size(); ++i) got[i] -= base[i];
          const Diff d = compare(got.data(), ref.data(), ref.size());
          // Exact fp16 products summed in fp32 (the reference sums in double): only the order
          // of the sums differs.
          CHECK_MSG(d.rel_l2 <= 2e-5 && d.max_abs <= 2e-4 * (d.ref_max + 1e-3),
                    exl3_codebook_name(cb) << " bits2 " << bits2 << " mode " << mode << " k " << c.k << " n " << c.n
                                           << " m " << m << ": rel_l2 " << d.rel_l2 << " max_abs " << d.max_abs
                                           << " ref_max " << d.ref_max);
        }
      }
    }
  // Every rate of every codebook (the GEMV is compiled per rate), one row and a few rows.
  for (Exl3Codebook cb : k_codebooks)
    for (int bits2 : exl3_all_bits2(cb)) {
      const Exl3RandomLayer L(256, 128, bits2, cb, std::uint32_t(rng()));
      const exl_cuda_exl3 cw = to_c(L.w);
      for (int m : {1, 3}) {
        const HalfData x = random_half(rng, std::size_t(m) * 256, -1.0f, 1.0f);
        std::vector<float> ref(std::size_t(m) * 128), got(ref.size(), 0.0f);
        exl3_matmul_ref(L.w, x.f.data(), m, ref.data());
        CUDA_OK(api.test_exl3_matmul(0, &cw, x.h.data(), m, 256, 128, got.data(), 0));
        const Diff d = compare(got.data(), ref.data(), ref.size());
        CHECK_MSG(d.rel_l2 <= 2e-5 && d.max_abs <= 2e-4 * (d.ref_max + 1e-3),
                  exl3_codebook_name(cb) << " bits2 " << bits2 << " m " << m << ": rel_l2 " << d.rel_l2);
      }
    }
}

// Decode's grouped launch (q, k, v or gate, up over one input; the input's RMSNorm or activation
// formed inside the GEMV) against the separate launches it replaces (the norm or activation kernel,
// then each layer's fused GEMV and output transform): the same bits, for every input form, groups
// of one to three layers of different widths, padded inputs, with the output transforms as their
// own launch and folded into the GEMV.
EXL_GPU_TEST(cuda_kernels, exl3_group_equals_separate_launches) {
  const exl_cuda_api& api = cuda_api();
  std::mt19937 rng(11);
  struct Case {
    int k, in, count;
    int n[3];
  };
  const Case cases[] = {{256, 256, 3, {256, 128, 128}}, {384, 332, 2, {512, 512, 0}}, {128, 128, 1, {1024, 0, 0}},
                        {1024, 1024, 3, {384, 128, 256}}};
  int idx = 0;
  for (const Case& c : cases) {
    const Exl3Codebook cb = k_codebooks[std::size_t(idx) % 3];
    const std::vector<int> rates = exl3_all_bits2(cb);
    const int bits2 = rates[std::size_t(idx * 5) % rates.size()];
    ++idx;
    std::vector<std::unique_ptr<Exl3RandomLayer>> layers;
    std::vector<exl_cuda_exl3> cw;
    std::size_t ny = 0;
    for (int e = 0; e < c.count; ++e) {
      layers.push_back(std::make_unique<Exl3RandomLayer>(c.k, c.n[e], bits2, cb, std::uint32_t(rng())));
      ny += std::size_t(c.n[e]);
    }
    for (const auto& L : layers) cw.push_back(to_c(L->w));
    std::uniform_real_distribution<float> u(-2.0f, 2.0f), wd(0.5f, 1.5f);
    std::vector<float> x(std::size_t(c.in)), x2(x.size()), w32(x.size());
    std::vector<half_bits> w16(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = u(rng);
      x2[i] = u(rng);
      w16[i] = float_to_half(wd(rng));
      w32[i] = wd(rng);
    }
    for (int mode = 0; mode <= 4; ++mode)
      for (int fold : {0, 2}) {
        const void* nw = mode == 1 ? static_cast<const void*>(w16.data()) : static_cast<const void*>(w32.data());
        std::vector<float> grouped(ny, 0.0f), separate(ny, 1.0f);
        CUDA_OK(api.test_exl3_group(0, cw.data(), c.count, mode, x.data(), x2.data(), nw, c.in, 1e-5f, 1 | fold,
                                    grouped.data()));
        CUDA_OK(api.test_exl3_group(0, cw.data(), c.count, mode, x.data(), x2.data(), nw, c.in, 1e-5f, fold,
                                    separate.data()));
        std::size_t bad = 0, first = 0;
        for (std::size_t i = 0; i < ny; ++i)
          if (std::memcmp(&grouped[i], &separate[i], 4) != 0 && !bad++) first = i;
        CHECK_MSG(bad == 0, exl3_codebook_name(cb) << " bits2 " << bits2 << " k " << c.k << " count " << c.count
                                                   << " mode " << mode << " fold " << fold << ": " << bad << " of " << ny
                                                   << " outputs differ, first at " << first << ": " << grouped[first]
                                                   << " vs " << separate[first]);
        double norm = 0.0;
        for (float v : separate) norm += double(v) * v;
        CHECK_MSG(std::isfinite(norm) && norm > 0.0, "mode " << mode << ": outputs not finite or all zero");
      }
  }
}

// A random EXL3 model (every rate and codebook across its layers) on the device: the prefill
// (cuBLAS on W-hat), the decode steps (the GEMV) and a one-token-at-a-time prefill all agree with
// the CPU backend's EXL3 path, and with the model's exact dense twin as closely as the CPU does.
EXL_GPU_TEST(cuda_model, exl3_random_model_matches_cpu_and_dense_twin) {
  cuda_api();
  const Exl3Twin& tw = exl3_twin();
  const auto model = Model::open(tw.exl3);
  auto run = [&](const std::string& device, const std::filesystem::path& dir, const std::vector<std::int32_t>& ids,
                 int chunk) {
    auto b = make_backend(device, BackendOptions{});
    b->load(dir == tw.exl3 ? model : Model::open(dir));
    b->allocate_cache({512, CacheType::fp16});  // the CUDA backend's widest store
    std::vector<float> logits;
    prefill(*b, ids, chunk, LogitsWanted::all, logits);
    return logits;
  };
  const std::size_t V = 8192;
  bool first = true;
  for (const Prompt& p : read_prompts()) {
    const auto cpu = run("cpu", tw.exl3, p.ids, 2048), dense = run("cpu", tw.dense, p.ids, 2048);
    // Every prompt in one chunk (cuBLAS on W-hat past 16 rows); the first also one token at a time (the GEMV).
    for (int chunk : first ? std::vector<int>{2048, 1} : std::vector<int>{2048}) {
      const auto gpu = run("cuda", tw.exl3, p.ids, chunk);
      CHECK_EQ(gpu.size(), cpu.size());
      double worst_cpu = 0, worst_dense = 0;
      for (std::size_t t = 0; t < gpu.size() / V; ++t) {
        std::span<const float> c(cpu.data() + t * V, V), g(gpu.data() + t * V, V), d(dense.data() + t * V, V);
        worst_cpu = std::max(worst_cpu, max_abs_diff(c, g));
        worst_dense = std::max(worst_dense, max_abs_diff(d, g));
        if (top1_top2_gap(c) >= 0.02f) CHECK_MSG(top1(c) == top1(g), p.name << " chunk " << chunk << " position " << t);
      }
      if (options().verbose)
        std::printf("  %s chunk %d: max |dlogit| vs CPU %.4f, vs dense twin %.4f\n", p.name.c_str(), chunk, worst_cpu,
                    worst_dense);
      CHECK_MSG(worst_cpu <= 0.02, p.name << " chunk " << chunk << ": max |dlogit| vs the CPU backend " << worst_cpu);
      CHECK_MSG(worst_dense <= 0.05, p.name << " chunk " << chunk << ": max |dlogit| vs the dense twin " << worst_dense);
    }
    first = false;
  }
  // Greedy decoding (the decode step, CUDA graphs) equals the CPU backend's up to near-ties.
  std::vector<std::int32_t> gen[2];
  int i = 0;
  for (const char* device : {"cpu", "cuda"}) {
    auto b = make_backend(device, BackendOptions{});
    b->load(model);
    b->allocate_cache({512, CacheType::fp16});
    GenerateOptions o;
    o.max_new_tokens = 16;
    o.ignore_eos = true;
    o.sampler.greedy = true;
    gen[i++] = generate(*b, nullptr, read_prompts()[0].ids, o).ids;
  }
  std::size_t same = 0;
  while (same < gen[0].size() && same < gen[1].size() && gen[0][same] == gen[1][same]) ++same;
  CHECK_MSG(same >= 8, "greedy continuations agree for " << same << " of 16 tokens");
}

// The planner counts what the CUDA backend allocates for an EXL3 model: the weights as the
// safetensors headers give them (trellis as stored, suh/svh in fp16) and the scratch with the EXL3
// buffers (transformed input, products, W-hat for prefill). The backend's total beyond the
// planner's weights, cache and scratch (the cuBLAS workspace and the small tables the planner
// books elsewhere) is the same as for the EXL2 fixture of the same shape, less the EXL2-only
// o input order (int32 per attention feature and layer).
EXL_GPU_TEST(cuda_model, exl3_planner_counts_what_the_backend_allocates) {
  cuda_api();
  const Exl3Twin& tw = exl3_twin();
  const auto exl2_dir = fixture("models/exl2/ref-s-4.0bpw");
  const plan::ModelShape shape = plan::shape_from_folder(tw.exl3, plan::Layout::engine);
  std::size_t exl3_linears = 0;
  for (const plan::ModuleBytes& l : shape.layers) exl3_linears += l.exl3.size();
  CHECK_MSG(exl3_linears == shape.layers.size() * 7, "EXL3 linears seen by the planner: " << exl3_linears);
  struct Gap {
    std::int64_t weights = 0, rest = 0;
  };
  auto gap = [&](const std::filesystem::path& dir, int ctx) {
    const plan::ModelShape sh = plan::shape_from_folder(dir, plan::Layout::engine);
    auto b = make_backend("cuda", BackendOptions{});
    b->load(Model::open(dir));
    b->allocate_cache({ctx, CacheType::fp16});
    const MemoryStats mem = b->memory();
    plan::PlanOptions o;
    o.context = ctx;
    o.sm_count = cuda_devices().at(0).sm_count;
    o.max_chunk = BackendOptions{}.max_chunk_size;
    std::uint64_t weights = sh.embedding.device + sh.head.device;
    for (const plan::ModuleBytes& l : sh.layers) weights += l.device;
    const std::uint64_t scratch = plan::scratch_bytes(sh, o, ctx);
    const std::uint64_t cache = std::uint64_t(plan::cache_tokens(sh.config, plan::parse_cache("fp16"), ctx, o.layout) *
                                              plan::cache_bytes_per_token_layer(sh.config, plan::parse_cache("fp16"))) *
                                std::uint64_t(sh.config.num_layers);
    if (options().verbose)
      std::printf("  %s ctx %d: weights %llu planned %llu; cache %llu planned %llu; scratch %llu planned %llu\n",
                  dir.filename().c_str(), ctx, (unsigned long long)mem.weights_bytes, (unsigned long long)weights,
                  (unsigned long long)mem.cache_bytes, (unsigned long long)cache, (unsigned long long)mem.scratch_bytes,
                  (unsigned long long)scratch);
    CHECK_EQ(mem.cache_bytes, cache);
    return Gap{std::int64_t(mem.weights_bytes) - std::int64_t(weights),
               std::int64_t(mem.weights_bytes + mem.scratch_bytes) - std::int64_t(weights + scratch)};
  };
  for (int ctx : {512, 2048}) {
    const Gap g3 = gap(tw.exl3, ctx), g2 = gap(exl2_dir, ctx);
    const std::int64_t o_pos = std::int64_t(shape.config.num_layers) * shape.config.num_heads * shape.config.head_dim * 4;
    // The planner books the RoPE frequencies with the weights; the backend with the scratch.
    CHECK_EQ(g3.weights, -std::int64_t(shape.config.head_dim / 2) * 4);
    CHECK_MSG(g3.rest == g2.rest - o_pos, "ctx " << ctx << ": beyond the plan EXL3 " << g3.rest << ", EXL2 " << g2.rest
                                                 << " (less o order " << o_pos << ")");
  }
}
