// exl_cuda_bench: measures the CUDA module on synthetic EXL2 models built directly in GPU
// memory (random valid weights, real architectures' shapes): device copy bandwidth, EXL2 GEMV
// GB/s per layer shape, decode tokens/s per context against the bandwidth bound, and prefill.
// Talks to libexl_cuda.so through its C table only. Usage: exl_cuda_bench [MODULE_PATH]; EXL_BENCH
// = exl3 (the EXL3 decode and prefill at 2-5 bpw), exl3-8b (its 8B decode at 4 bits alone), exl3-8b-prefill (its 2048-token prefill alone), gemv, gemv-quick, models, decode (tinyllama and llama3-8b at context 0 only), loop (the same, 4-bit and
// 4.0 bpw mix, beside the engine's decode loop with device sampling, greedy, chat, top-p, plain, min-p, typical and top-k 1000 settings), verify (speculative verification and draft costs), llama3-8b-rows (one 2-token pass at past 512 alone), cache (llama3-8b 4.0 mix with each KV cache type), llama3-8b (its decode at context 0 alone, e.g. under ncu), llama3-8b-prefill (a
// 2048-token prefill alone) or all (default); EXL_BENCH_GS=32 builds the models in groups of 32 rows (128 by
// default; gemv-quick measures both). The first timed forward is a profiler range
// (ncu --profile-from-start off).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "module_api.h"

namespace {

struct Preset {
  const char* name;
  int vocab, hidden, layers, heads, kv_heads, head_dim, inter;
};

const exl_cuda_api* api = nullptr;
bool g_loop = false;  // EXL_BENCH=loop: also the decode loop as the engine runs it (forward_sample)

#define CHECKED(call)                                                              \
  do {                                                                             \
    if (int st_ = (call); st_ != EXL_CUDA_OK) {                                    \
      std::printf("FAILED %s: status %d: %s\n", #call, st_, api->last_error());   \
      return false;                                                                \
    }                                                                              \
  } while (0)

// q_groups for k rows: a 4.0 bpw mix (or all 4-bit) in groups of `gs` rows.
struct Groups {
  std::vector<int16_t> g;
  int q_rows = 0;
};
Groups make_groups(int k, bool mixed, int bits_all = 4, int gs = 128) {
  Groups out;
  std::vector<int> bits;
  const int n = k / gs;
  for (int i = 0; i < n; ++i) {
    int b = bits_all;
    if (mixed) b = i < n / 4 ? 5 : (i < 3 * n / 4 ? 4 : 3);
    bits.push_back(b);
  }
  for (int b : bits) {
    out.g.push_back(int16_t(b));
    out.g.push_back(int16_t(out.q_rows));
    out.q_rows += gs * b / 32;
  }
  return out;
}

struct SynthLinear {
  Groups groups;
  exl_cuda_linear lin{};
};

int g_group_rows = 128;  // EXL_BENCH_GS: the group size of the synthetic models' layers (decode, loop)
int g_exl3_bits2 = 0;    // EXL_BENCH=exl3: the models' linears are EXL3 (mul1) at this rate x 2 (head: 6 bits)

void make_linear(SynthLinear& s, int k, int n, bool mixed, int bits = 4, int gs = 0) {
  if (g_exl3_bits2) {  // random trellis words and sign x scale vectors (the module fills them)
    s.lin.kind = 2;
    s.lin.in_features = k;
    s.lin.out_features = n;
    const bool head = gs == 32;
    s.lin.exl3 = exl_cuda_exl3{nullptr, nullptr, nullptr, (k + 127) / 128 * 128, (n + 127) / 128 * 128,
                               head ? 12 : g_exl3_bits2, 2};
    return;
  }
  s.groups = make_groups(k, mixed, bits, gs > 0 ? gs : g_group_rows);
  s.lin.kind = 1;
  s.lin.in_features = k;
  s.lin.out_features = n;
  exl_cuda_exl2& e = s.lin.exl2;
  e.k = k; e.n = n; e.n_pad = (n + 31) / 32 * 32;
  e.groups = int(s.groups.g.size() / 2);
  e.q_rows = s.groups.q_rows;
  e.q_groups = s.groups.g.data();
}

double layer_bytes(const exl_cuda_linear& l) {
  if (l.kind == 2) {
    const exl_cuda_exl3& e = l.exl3;
    return double(e.k) * e.n * e.bits2 / 16.0 + 2.0 * (e.k + e.n);
  }
  const exl_cuda_exl2& e = l.exl2;
  return double(e.q_rows) * e.n_pad * 4 + double(e.groups) * e.n_pad / 2 + e.k * 4.0;
}

// rows: forwards of that many tokens at a 512-token past (a speculative verification pass of
// rows - 1 drafted tokens), timed after the decode and prefill figures.
// KV cache formats by name (module_api.h allocate_cache codes) and their bytes per element.
struct CacheKind { const char* name; int code; double bytes_per_elem; };
const CacheKind k_caches[] = {{"fp16", 1, 2.0}, {"fp8", 2, 1.0}, {"q8", 3, 1.0625}, {"q6", 3 | 4 << 8, 0.8125},
                              {"q4", 4, 0.5625}};

bool bench_model(const Preset& p, bool mixed, double copy_gbs, const std::vector<int>& contexts, int prompt,
                 const std::vector<int>& rows = {}, const CacheKind& cache = k_caches[0]) {
  std::vector<SynthLinear> lin(std::size_t(p.layers) * 7 + 1);
  std::vector<exl_cuda_layer> layers(std::size_t(p.layers));
  const int qd = p.heads * p.head_dim, kd = p.kv_heads * p.head_dim;
  double bytes = 0;
  for (int i = 0; i < p.layers; ++i) {
    SynthLinear* L = &lin[std::size_t(i) * 7];
    make_linear(L[0], p.hidden, qd, mixed); make_linear(L[1], p.hidden, kd, mixed);
    make_linear(L[2], p.hidden, kd, mixed); make_linear(L[3], qd, p.hidden, mixed);
    make_linear(L[4], p.hidden, p.inter, mixed); make_linear(L[5], p.hidden, p.inter, mixed);
    make_linear(L[6], p.inter, p.hidden, mixed);
    exl_cuda_layer& l = layers[std::size_t(i)];
    l.q = L[0].lin; l.k = L[1].lin; l.v = L[2].lin; l.o = L[3].lin; l.gate = L[4].lin; l.up = L[5].lin; l.down = L[6].lin;
    for (int j = 0; j < 7; ++j) bytes += layer_bytes(L[j].lin);
  }
  SynthLinear& head = lin.back();
  make_linear(head, p.hidden, p.vocab, false, 6, 32);
  bytes += layer_bytes(head.lin) + 2.0 * p.hidden * (2 * p.layers + 2);
  std::vector<float> inv_freq(std::size_t(p.head_dim / 2));
  for (int i = 0; i < p.head_dim / 2; ++i) inv_freq[std::size_t(i)] = 1.0f / float(std::pow(500000.0, 2.0 * i / p.head_dim));
  exl_cuda_model m{};
  m.vocab = p.vocab; m.hidden = p.hidden; m.num_layers = p.layers; m.num_heads = p.heads;
  m.num_kv_heads = p.kv_heads; m.head_dim = p.head_dim; m.intermediate = p.inter; m.rms_eps = 1e-5f;
  m.rope_inv_freq = inv_freq.data(); m.rope_mscale = 1.0f; m.rope_position_divisor = 1.0f;
  m.head = head.lin; m.layers = layers.data(); m.synthetic_seed = 1234;
  exl_cuda_options o{};
  o.device = 0; o.max_chunk = 2048; o.cuda_graphs = 1;
  // EXL_BENCH_FAST_REDUCE=1: split-K partials in fp32 atomics (exl --nondeterministic).
  const char* fast = std::getenv("EXL_BENCH_FAST_REDUCE");
  o.fast_reduce = fast && std::string(fast) == "1" ? 1 : 0;
  exl_cuda_backend* b = nullptr;
  CHECKED(api->create(&o, &b));
  int max_ctx = prompt;
  for (int c : contexts) max_ctx = std::max(max_ctx, c + 64);
  if (!rows.empty()) max_ctx = std::max(max_ctx, 512 + 64);
  bool ok = true;
  auto run = [&]() -> bool {
    CHECKED(api->load(b, &m, nullptr, nullptr));
    // EXL_BENCH_PAGED=1: the paged cache, its pages in reverse order (every page away from its
    // neighbours), as the engine's page table may scatter a long conversation.
    const char* paged = std::getenv("EXL_BENCH_PAGED");
    if (paged && std::string(paged) == "1") {
      const int pages = (max_ctx + 255) / 256;
      std::vector<std::int32_t> table(static_cast<std::size_t>(pages));
      for (int i = 0; i < pages; ++i) table[std::size_t(i)] = pages - 1 - i;
      CHECKED(api->allocate_paged_cache(b, max_ctx, pages, cache.code));
      CHECKED(api->set_cache_pages(b, table.data(), pages, 0));
      std::printf("paged cache: %d pages of 256 tokens, in reverse order\n", pages);
    } else {
      CHECKED(api->allocate_cache(b, max_ctx, cache.code));
    }
    exl_cuda_memory mem{};
    CHECKED(api->memory(b, &mem));
    const std::string fmt = g_exl3_bits2 ? "EXL3 mul1 " + std::to_string(g_exl3_bits2 / 2.0).substr(0, 4) + " bpw"
                                         : mixed ? "4.0bpw mix 5/4/3" : "4-bit";
    std::printf("\n== %s %s g%d, %s cache: weights read per token %.3f GB (module counts %.3f GB), VRAM used %.2f GiB, cache %.2f GiB\n",
                p.name, fmt.c_str(), g_group_rows, cache.name, bytes / 1e9, mem.weights_bytes / 1e9,
                (mem.device_total - mem.device_free) / 1073741824.0, mem.cache_bytes / 1073741824.0);
    for (int ctx : contexts) {
      double us = 0;
      CHECKED(api->bench_forward(b, 1, ctx, 50, &us));
      const double kv = 2.0 * p.layers * double(ctx) * kd * cache.bytes_per_elem;
      const double bound = copy_gbs * 1e9 / (bytes + kv);
      std::printf("decode ctx %6d: %8.1f us/token  %8.1f tok/s  bound %8.1f tok/s  %5.1f %%\n", ctx, us, 1e6 / us,
                  bound, 100.0 * (1e6 / us) / bound);
      if (g_loop) {
        // The engine's decode loop: one forward_sample per token (the step and the sampler in one
        // graph, only the id copied back), host time per call, with each sampling setting below.
        // (Random weights give flat rows: top-p keeps thousands of ids there; "peaked" adds a bias
        // of +12 on 16 ids, as a trained model's rows mostly are.)
        struct Setting {
          const char* name;
          float temperature, top_p, min_p, repetition_penalty;
          int top_k, penalties, biased;
          float typical = 0.0f;
        };
        static const Setting settings[] = {
            {"greedy", 0.0f, 1.0f, 0.0f, 1.0f, 0, 0, 0},
            // the app's chat defaults: temperature, top-k, top-p, min-p, a penalty over 64 ids
            {"chat", 0.8f, 0.9f, 0.05f, 1.1f, 40, 64, 0},
            {"top-p", 0.8f, 0.95f, 0.0f, 1.0f, 0, 0, 0},
            {"top-p T0.4", 0.4f, 0.9f, 0.0f, 1.0f, 0, 0, 0},
            {"top-p peaked", 0.8f, 0.95f, 0.0f, 1.0f, 0, 0, 1},
            // an OpenAI client that sends nothing: temperature 1, no filter
            {"plain T1", 1.0f, 1.0f, 0.0f, 1.0f, 0, 0, 0},
            {"min-p T0.8", 0.8f, 1.0f, 0.05f, 1.0f, 0, 0, 0},
            // the row-wide selects: typical, and a top-k above 512 (the app's slider goes to 1000)
            {"typical", 0.8f, 1.0f, 0.0f, 1.0f, 0, 0, 0, 0.9f},
            {"typical peaked", 0.8f, 1.0f, 0.0f, 1.0f, 0, 0, 1, 0.9f},
            {"top-k 1000", 0.8f, 1.0f, 0.0f, 1.0f, 1000, 0, 0},
            {"chat k1000", 0.8f, 0.9f, 0.05f, 1.1f, 1000, 64, 0},
        };
        std::vector<int32_t> pen_ids(64), pen_counts(64, 1);
        for (int i = 0; i < 64; ++i) pen_ids[std::size_t(i)] = int32_t((i * 997 + 11) % p.vocab);
        std::vector<int32_t> bias_ids(16);  // sorted ids (one per 16th of the vocabulary)
        std::vector<float> bias_vals(16, 12.0f);
        for (int i = 0; i < 16; ++i) bias_ids[std::size_t(i)] = int32_t((i * 7919 + 5) % (p.vocab / 16) + i * (p.vocab / 16));
        for (const Setting& st : settings) {
          exl_cuda_sampler s{};
          s.greedy = st.temperature == 0.0f ? 1 : 0;
          s.temperature = st.temperature == 0.0f ? 1.0f : st.temperature;
          s.top_k = st.top_k;
          s.top_p = st.top_p;
          s.min_p = st.min_p;
          s.typical = st.typical;
          s.repetition_penalty = st.repetition_penalty;
          s.penalty_ids = pen_ids.data();
          s.penalty_counts = pen_counts.data();
          s.num_penalty = st.penalties;
          if (st.biased) {
            s.bias_ids = bias_ids.data();
            s.bias_values = bias_vals.data();
            s.num_bias = 16;
          }
          CHECKED(api->truncate_cache(b, ctx));
          int32_t id = 1;
          std::vector<double> t;
          for (int g = 0; g < 45; ++g) {
            s.uniform = std::fmod(0.5 + 0.6180339887 * g, 1.0);
            exl_cuda_sample_result r{};
            const auto t0 = std::chrono::steady_clock::now();
            CHECKED(api->forward_sample(b, &id, 1, &s, &r));
            const auto t1 = std::chrono::steady_clock::now();
            if (g >= 5) t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            id = r.id >= 0 && r.id < p.vocab ? r.id : 1;
          }
          std::sort(t.begin(), t.end());
          const double med = t[t.size() / 2];
          std::printf("decode loop ctx %6d, %s sampling: %8.1f us/token  %8.1f tok/s  %5.1f %% of the bound\n", ctx,
                      st.name, med, 1e6 / med, 100.0 * (1e6 / med) / bound);
        }
        CHECKED(api->truncate_cache(b, 0));
      }
    }
    if (prompt > 0) {
      double us = 0;
      if (prompt <= 2048) {
        CHECKED(api->bench_forward(b, prompt, 0, 5, &us));
      } else {  // as the engine feeds a long prompt: chunks of max_chunk tokens, one after the other
        for (int p0 = 0; p0 < prompt; p0 += 2048) {
          double c = 0;
          CHECKED(api->bench_forward(b, std::min(2048, prompt - p0), p0, 1, &c));
          us += c;
        }
      }
      std::printf("prefill %d tokens: %.1f ms  %.0f tok/s\n", prompt, us / 1e3, prompt / (us * 1e-6));
      exl_cuda_memory after{};
      CHECKED(api->memory(b, &after));
      // The module allocates only at load and allocate_cache: what the device shows in use after
      // the prompt is the high-water mark (chunked prefill: scratch follows max_chunk, not the prompt).
      std::printf("memory after the prompt: device in use %.1f MiB (before %.1f), module weights %.1f + cache %.1f + "
                  "scratch %.1f MiB, allocations %llu -> %llu\n",
                  (after.device_total - after.device_free) / 1048576.0, (mem.device_total - mem.device_free) / 1048576.0,
                  after.weights_bytes / 1048576.0, after.cache_bytes / 1048576.0, after.scratch_bytes / 1048576.0,
                  (unsigned long long)mem.allocations, (unsigned long long)after.allocations);
    }
    for (int n : rows) {
      double us = 0;
      CHECKED(api->bench_forward(b, n, 512, 20, &us));
      std::printf("forward %d tokens at past 512: %8.1f us  (verifies %d drafted tokens)\n", n, us, n - 1);
    }
    exl_cuda_memory mem2{};
    CHECKED(api->memory(b, &mem2));
    std::printf("device allocations during generation: %llu\n",
                (unsigned long long)(mem2.allocations - mem.allocations));
    return true;
  };
  ok = run();
  api->destroy(b);
  return ok;
}

// quick: 4-bit layers of the 8B's three main shapes, one row, with and without PDL (for tuning runs).
bool bench_gemv(double copy_gbs, bool quick = false, bool large = false) {
  struct Shape { int k, n; };
  const std::vector<Shape> all = {{4096, 4096}, {4096, 1024}, {4096, 14336}, {14336, 4096}, {2048, 5632}, {4096, 128256}};
  const std::vector<Shape> few = {{4096, 4096}, {4096, 14336}, {14336, 4096}, {2048, 32000}, {4096, 128256}};
  const std::vector<Shape> big = {{8192, 8192}, {8192, 1024}, {8192, 28672}, {28672, 8192}, {8192, 128256}};  // llama3-70b
  for (const Shape& s : large ? big : quick ? few : all) {
    for (int variant : {0, 1, 2}) {  // 0: 4-bit g128, 1: 4.0 bpw mix g128, 2: 4-bit in groups of 32 rows
      const bool mixed = variant == 1;
      const int gs = variant == 2 ? 32 : 128;
      if (quick && mixed) continue;
      if (variant == 2 && (!quick || s.n > 14336)) continue;  // the group-size cost, on the layer shapes
      SynthLinear L;
      make_linear(L, s.k, s.n, mixed, 4, gs);
      // Host data for the layer: random packed words (any bits are valid values).
      std::vector<uint32_t> qw(std::size_t(L.lin.exl2.q_rows) * L.lin.exl2.n_pad);
      std::vector<uint32_t> qs(std::size_t(L.lin.exl2.groups) * L.lin.exl2.n_pad / 8);
      std::vector<uint16_t> qm(std::size_t(L.lin.exl2.groups), 0x1c00);
      std::vector<int32_t> perm(std::size_t(s.k));
      uint32_t x = 12345;
      for (auto& w : qw) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; w = x; }
      for (auto& w : qs) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; w = x; }
      for (int i = 0; i < s.k; ++i) perm[std::size_t(i)] = (i * 7919) % s.k == 0 && i ? i : i;
      L.lin.exl2.q_weight = qw.data(); L.lin.exl2.q_scale = qs.data(); L.lin.exl2.q_scale_max = qm.data();
      L.lin.exl2.q_perm = perm.data();
      for (int m : {1, 4, 8, 16}) {
        if (quick && m > 1) continue;
        for (int mode : {0, 2}) {  // 2: programmatic dependent launch between consecutive launches
          if (mode == 2 && m > 4) continue;
          double us = 0;
          CHECKED(api->bench_exl2_matmul(0, &L.lin.exl2, m, mode, 50, &us));
          const double gbs = layer_bytes(L.lin) / (us * 1e-6) / 1e9;
          std::printf("gemv k %5d n %6d %s m %2d%s: %8.2f us  %7.1f GB/s  %5.1f %% of copy\n", s.k, s.n,
                      mixed ? "mix" : gs == 32 ? "q4g32" : "q4 ", m, mode == 2 ? " pdl" : "    ", us, gbs,
                      100 * gbs / copy_gbs);
        }
      }
      if (quick) continue;
      double us = 0;
      CHECKED(api->bench_exl2_matmul(0, &L.lin.exl2, 512, 1, 10, &us));
      std::printf("reconstruct+cublas k %5d n %6d m 512: %8.2f us\n", s.k, s.n, us);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "./libexl_cuda.so";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) { std::printf("dlopen %s: %s\n", path.c_str(), dlerror()); return 1; }
  auto get = reinterpret_cast<exl_cuda_get_api_fn>(dlsym(h, "exl_cuda_get_api"));
  api = get ? get(EXL_CUDA_ABI_VERSION) : nullptr;
  if (!api) { std::printf("no compatible exl_cuda_get_api\n"); return 1; }
  exl_cuda_device_info info{};
  if (api->device_info(0, &info) != EXL_CUDA_OK) { std::printf("device_info: %s\n", api->last_error()); return 1; }
  std::printf("device: %s, cc %d.%d, %d SMs, %.1f GiB, datasheet-like bandwidth %.0f GB/s\n", info.name, info.cc_major,
              info.cc_minor, info.sm_count, info.total_bytes / 1073741824.0, info.peak_bandwidth_gbs);
  double copy = 0;
  if (api->bench_copy_bandwidth(0, 2ull << 30, &copy) != EXL_CUDA_OK) { std::printf("copy: %s\n", api->last_error()); return 1; }
  std::printf("device copy bandwidth (read + write): %.0f GB/s\n", copy);
  if (const char* g = std::getenv("EXL_BENCH_GS")) g_group_rows = std::max(32, std::atoi(g)) / 32 * 32;
  const char* what = std::getenv("EXL_BENCH");
  const std::string sel = what ? what : "all";
  bool ok = true;
  if (sel == "all" || sel == "gemv") ok &= bench_gemv(copy);
  if (sel == "gemv-quick") ok &= bench_gemv(copy, true);
  const Preset tiny{"tinyllama-1.1b", 32000, 2048, 22, 32, 4, 64, 5632};
  const Preset l8b{"llama3-8b", 128256, 4096, 32, 32, 8, 128, 14336};
  if (sel == "llama3-8b") ok &= bench_model(l8b, false, copy, {0}, 0);  // one model, for a profiler
  if (sel == "llama3-70b") {  // the 70B's GEMV shapes (one row) and its decode
    const Preset l70{"llama3-70b", 128256, 8192, 80, 64, 8, 128, 28672};
    ok &= bench_gemv(copy, true, true);
    ok &= bench_model(l70, false, copy, {0, 2048}, 512);
  }
  if (sel == "decode") {  // decode alone at context 0 (A/B comparisons of the decode step)
    ok &= bench_model(tiny, false, copy, {0}, 0);
    ok &= bench_model(l8b, false, copy, {0}, 0);
  }
  if (sel == "loop") {  // the raw step against the engine's loop (device sampling), 4-bit and 4.0 bpw mix
    g_loop = true;
    for (bool mixed : {false, true}) {
      ok &= bench_model(tiny, mixed, copy, {0}, 0);
      ok &= bench_model(l8b, mixed, copy, {0}, 0);
    }
  }
  if (sel == "exl3") {  // EXL3 decode and prefill: 2, 3, 4, 5 bpw (mul1; EXL_BENCH_EXL3_BPW=B for one rate)
    const char* one = std::getenv("EXL_BENCH_EXL3_BPW");
    for (int b2 : {8, 4, 6, 10}) {
      if (one && int(std::atof(one) * 2) != b2) continue;
      g_exl3_bits2 = b2;
      ok &= bench_model(tiny, false, copy, {0, 2048}, 512);
      ok &= bench_model(l8b, false, copy, {0, 2048}, 2048);
    }
    g_exl3_bits2 = 0;
  }
  if (sel == "exl3-8b") {  // the EXL3 llama3-8b (mul1, 4 bits) decode at context 0 alone, for a profiler
    g_exl3_bits2 = 8;
    ok &= bench_model(l8b, false, copy, {0}, 0);
    g_exl3_bits2 = 0;
  }
  if (sel == "llama3-8b-prefill") ok &= bench_model(l8b, false, copy, {}, 2048);
  if (sel == "exl3-8b-prefill") {  // the EXL3 llama3-8b (mul1, 4 bits) 2048-token prefill alone, for a profiler
    g_exl3_bits2 = 8;
    ok &= bench_model(l8b, false, copy, {}, 2048);
    g_exl3_bits2 = 0;
  }
  if (sel == "llama3-8b-rows") ok &= bench_model(l8b, false, copy, {}, 0, {2});  // one verify pass, for a profiler
  if (sel == "cache") {  // issue #4: decode and prefill with each cache type, up to 32k context
    for (const CacheKind& c : k_caches) ok &= bench_model(l8b, true, copy, {0, 2048, 32768}, 2048, {}, c);
  }
  if (sel == "cache32") {  // decode at 32768 only, one cache type (EXL_BENCH_CACHE=fp16|fp8|q8|q6|q4) or all: for a profiler
    const char* only = std::getenv("EXL_BENCH_CACHE");
    for (const CacheKind& c : k_caches)
      if (!only || std::string(only) == c.name) ok &= bench_model(l8b, true, copy, {32768}, 0, {}, c);
  }
  if (sel == "hwm") {  // issue #4: chunked prefill, memory of a 2048- and a 32768-token prompt (chunks of 2048)
    ok &= bench_model(l8b, true, copy, {}, 2048);
    ok &= bench_model(l8b, true, copy, {}, 32768);
  }
  if (sel == "verify") {  // issue #5: the cost of a target pass verifying K drafts, and of K draft steps
    const Preset l1b{"llama3.2-1b", 128256, 2048, 16, 32, 8, 64, 8192};
    ok &= bench_model(l8b, false, copy, {512}, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17});
    ok &= bench_model(l1b, false, copy, {512}, 0);
  }
  if (sel == "all" || sel == "models") {
    ok &= bench_model(tiny, false, copy, {0, 2048}, 512);
    ok &= bench_model(l8b, false, copy, {0, 2048}, 2048);
    ok &= bench_model(l8b, true, copy, {0, 2048, 32768}, 2048);
  }
  std::printf("%s\n", ok ? "bench done" : "bench had failures");
  return ok ? 0 : 1;
}
