// The planner's terms against hand-computed values (spec §5.5, §6.4, §7.6, §8.6) and the fixture
// EXL2 models' weight bytes against an independent sum over their safetensors headers.
#include <map>
#include <memory>

#include "exl/error.h"
#include "exl/kernels/exl3_splits.h"
#include "exl/plan.h"
#include "exl/tensor_store.h"
#include "exl_test.h"

using namespace exl;
using namespace exl::plan;

namespace {

std::uint64_t sum_device(const ModelShape& s) {
  std::uint64_t b = s.head.device;
  for (const ModuleBytes& l : s.layers) b += l.device;
  return b;
}

bool ends_with(const std::string& s, const std::string& x) {
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

const char* kFixtures[] = {"models/exl2/ref-s-3.0bpw", "models/exl2/ref-s-4.0bpw", "models/exl2/ref-s-6.0bpw",
                           "models/exl2/ref-xs-4.0bpw"};

}  // namespace

EXL_TEST(plan, bpw_worked_example_7_6) {
  // 4096 x 4096, 100 % 4-bit, groups of 128: 67108864 + 512 + 1024 + 524288 + 131072 bits.
  CHECK_EQ(exl2_linear_bits(4096, 4096, {{4, 1.0, 128}}, false), std::uint64_t(67765760));
  CHECK_NEAR(exl2_linear_bpw(4096, 4096, {{4, 1.0, 128}}, false), 4.0392, 5e-5);
  // Head table of §7.3 (4096 x 128256).
  CHECK_NEAR(exl2_linear_bpw(4096, 128256, head_option(6), false), 6.344, 5e-4);
  CHECK_NEAR(exl2_linear_bpw(4096, 128256, head_option(8), false), 8.032, 5e-4);
  CHECK_NEAR(exl2_linear_bpw(4096, 32000, head_option(4), false), 4.439, 5e-4);
  CHECK_THROWS_ERROR(head_option(7), ErrorKind::invalid_argument, "head bits");
}

EXL_TEST(plan, whatif_llama3_8b_weights_8_6) {
  // §8.6: 6.98 G decoder params at 4.0 bpw, head 6 bits; ExLlamaV2 layout keeps the embedding on the host.
  const ModelShape s = shape_from_config(preset_config("llama3-8b"), 4.0, 6, Layout::exllamav2);
  CHECK_EQ(s.layers.size(), std::size_t(32));
  // per layer: 218103808 weights * 4 / 8 + two fp16 norms of 4096
  for (const ModuleBytes& l : s.layers) CHECK_EQ(l.device, std::uint64_t(109051904 + 2 * 8192));
  // head: 15 %·8b/g128 + 85 %·6b/g128 over 4096 x 128256 = 3332736512 bits, plus the final norm
  CHECK_NEAR(double(s.head.device), 3332736512.0 / 8 + 8192, 2.0);
  CHECK_EQ(s.embedding.device, std::uint64_t(128256) * 4096 * 2);
  CHECK_EQ(s.linear_params, std::int64_t(218103808) * 32 + std::int64_t(4096) * 128256);
}

EXL_TEST(plan, cache_bytes_per_token_6_4) {
  struct Row { const char* preset; double d; };
  for (const Row r : {Row{"llama3-8b", 1024}, Row{"mistral-7b", 1024}, Row{"qwen2.5-7b", 512}, Row{"tinyllama-1.1b", 256}}) {
    const ModelConfig c = preset_config(r.preset);
    CHECK_EQ(cache_bytes_per_token_layer(c, parse_cache("fp32")), 8 * r.d);
    CHECK_EQ(cache_bytes_per_token_layer(c, parse_cache("fp16")), 4 * r.d);
    CHECK_EQ(cache_bytes_per_token_layer(c, parse_cache("fp8")), 2 * r.d);
    CHECK_EQ(cache_bytes_per_token_layer(c, parse_cache("q8")), 2.125 * r.d);
    CHECK_EQ(cache_bytes_per_token_layer(c, parse_cache("q6")), 1.625 * r.d);
    CHECK_EQ(cache_bytes_per_token_layer(c, parse_cache("k8v4")), 1.625 * r.d);
    CHECK_EQ(cache_bytes_per_token_layer(c, parse_cache("q4")), 1.125 * r.d);
  }
  CHECK_THROWS_ERROR(parse_cache("q5"), ErrorKind::invalid_argument, "cache type");
  CHECK_THROWS_ERROR(parse_cache("k8v5"), ErrorKind::invalid_argument, "cache type");
  // §6.4 example: Llama-3-8B, 8192 tokens: FP16 1.07 GB; Q4 0.30 GB + 0.034 GB temp pair.
  PlanOptions o;
  o.layout = Layout::exllamav2;
  o.context = 8192;
  o.gpus = {find_gpu("H200")};
  const ModelShape s = shape_from_config(preset_config("llama3-8b"), 4.0, 6, o.layout);
  CHECK_EQ(make_plan(s, o).devices[0].parts.cache, std::uint64_t(1073741824));
  CHECK_EQ(make_plan(s, o).devices[0].parts.cache_temp, std::uint64_t(0));
  o.cache = parse_cache("q4");
  const Plan q4 = make_plan(s, o);
  CHECK_EQ(q4.devices[0].parts.cache, std::uint64_t(301989888));
  CHECK_EQ(q4.devices[0].parts.cache_temp, std::uint64_t(33554432));
  // Pages of 256 tokens in both layouts (the engine's paged cache allocates whole pages; a page is
  // whole q_blocks, §6.3: TinyLlama kv_dim 256 -> q_block 2 tokens).
  CHECK_EQ(cache_tokens(preset_config("tinyllama-1.1b"), parse_cache("q4"), 1001, Layout::engine), std::int64_t(1024));
  CHECK_EQ(cache_tokens(preset_config("tinyllama-1.1b"), parse_cache("q4"), 1024, Layout::engine), std::int64_t(1024));
  CHECK_EQ(cache_tokens(preset_config("tinyllama-1.1b"), parse_cache("fp16"), 1025, Layout::engine), std::int64_t(1280));
  CHECK_EQ(cache_tokens(preset_config("tinyllama-1.1b"), parse_cache("fp16"), 1001, Layout::exllamav2), std::int64_t(1024));
}

EXL_TEST(plan, scratch_engine_and_exllamav2) {
  PlanOptions o;
  o.context = 8192;
  o.gpus = {find_gpu("RTX 4090")};
  const ModelShape e = shape_from_config(preset_config("llama3-8b"), 4.0, 6, Layout::engine);
  // CudaBackend::allocate_scratch with C = 2048 tokens, 8192-token cache.
  const std::uint64_t expect = 33554432ull + 58720256 + 2048ull * (4096 + 2 * 1024) * 4 + 2 * 16777216 + 2 * 117440512 +
                               523ull * 128256 * 4 + 2 * 117440512 + 34078720 + 16 + 8192 +
                               16777216 + 262144 + 8 * 4 +  // GEMV split-K workspace, decode split counters
                               256 + 8 * (8192 + 64) + 12 * 65536 + 2 * 128256 * 4 +    // device sampler
                               128256 * 8 + 126 * 32 + 64 + 9 * 2048 * 8 + 126 * (1024 * 8 + 16) + 16 +
                               // the fused path's int64 accumulators: 2 x 16 rows of q|k|v, gate|up; residual
                               2 * 16 * (4096 + 2 * 1024) * 8 + 2 * 16 * 14336 * 2 * 8 + 16 * 4096 * 8;
  CHECK_EQ(scratch_bytes(e, o, 8192), expect);
  // A device of a layer split without the head: no logits rows, no device sampler.
  const std::uint64_t head_part =
      523ull * 128256 * 4 + 256 + 8 * (8192 + 64) + 12 * 65536 + 2 * 128256 * 4 + 128256 * 8 + 126 * 32 + 64 +
      9 * 2048 * 8 + 126 * (1024 * 8 + 16) + 16;
  CHECK_EQ(head_scratch_bytes(e, o, 8192), head_part);
  CHECK_EQ(scratch_bytes(e, o, 8192, nullptr, false), expect - head_part);
  // §5.5: dominated by the head's temp_dq 2 * 4096 * 128256.
  o.layout = Layout::exllamav2;
  const ModelShape x = shape_from_config(preset_config("llama3-8b"), 4.0, 6, Layout::exllamav2);
  CHECK_EQ(scratch_bytes(x, o, 8192), std::uint64_t(2) * 4096 * 128256);
  // Short chunks: no reconstruct buffers in the engine.
  o.layout = Layout::engine;
  o.max_chunk = 16;
  std::vector<std::uint64_t> b;
  scratch_bytes(e, o, 8192, &b);
  CHECK_EQ(b.at(6), std::uint64_t(0));
  CHECK_EQ(b.at(7), std::uint64_t(0));
}

EXL_TEST(plan, fixture_weights_equal_headers) {
  for (const char* rel : kFixtures) {
    const auto dir = exl::test::fixture(rel);
    // Independent: every shard's tensor list.
    std::uint64_t headers = 0, embedding = 0, engine_delta = 0, head_elems = 0;
    bool has_head = false;
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
      if (f.path().extension() != ".safetensors") continue;
      const auto file = SafetensorsFile::open(f.path());
      for (const TensorInfo& t : file->tensors()) {
        headers += t.nbytes;
        if (t.name == "model.embed_tokens.weight") { embedding = t.nbytes; head_elems = std::uint64_t(t.numel()); }
        if (t.name.rfind("lm_head.", 0) == 0) has_head = true;
        if (ends_with(t.name, ".q_groups") || ends_with(t.name, ".q_perm")) engine_delta -= t.nbytes;
        if (ends_with(t.name, ".q_invperm")) engine_delta += std::uint64_t(t.numel()) / 32 * 8;
        // q_weight [q_rows, n_pad] and q_scale [groups, n_pad / 8] widen to 64-column tiles
        if (ends_with(t.name, ".q_weight") && t.shape[1] % 64)
          engine_delta += std::uint64_t(t.shape[0]) * std::uint64_t(64 - t.shape[1] % 64) * 4;
        if (ends_with(t.name, ".q_scale") && (t.shape[1] * 8) % 64)
          engine_delta += std::uint64_t(t.shape[0]) * std::uint64_t((64 - (t.shape[1] * 8) % 64) / 8) * 4;
        if (ends_with(t.name, ".bias")) engine_delta += std::uint64_t(t.numel()) * 4 - t.nbytes;
        if (ends_with(t.name, ".weight") && t.dtype != DType::f16) engine_delta += std::uint64_t(t.numel()) * 2 - t.nbytes;
      }
    }
    CHECK_MSG(headers > 0 && embedding > 0, rel);
    const std::uint64_t tied = has_head ? 0 : head_elems * 2;
    const ModelShape x = shape_from_folder(dir, Layout::exllamav2);
    CHECK_EQ(x.header_bytes, headers);
    CHECK_MSG(sum_device(x) == headers - embedding + tied, rel << ": " << sum_device(x) << " vs " << headers - embedding);
    const ModelShape e = shape_from_folder(dir, Layout::engine);
    const std::uint64_t inv_freq = std::uint64_t(e.config.head_dim / 2) * 4;
    CHECK_MSG(sum_device(e) + e.embedding.device == headers + engine_delta + tied + inv_freq,
              rel << ": " << sum_device(e) + e.embedding.device << " vs " << headers + engine_delta + tied + inv_freq);
    CHECK(e.exact);
    CHECK(e.config.quantization.has_value());
  }
}

EXL_TEST(plan, throughput_bound_hand_computed) {
  PlanOptions o;
  o.layout = Layout::exllamav2;
  o.context = 8192;
  GpuSpec g;
  g.name = "test";
  g.memory_mib = 81920;
  g.bandwidth_gbs = 1000;
  g.fp16_tflops = 100;
  o.gpus = {g};
  const ModelShape s = shape_from_config(preset_config("llama3-8b"), 4.0, 6, o.layout);
  const double weights = 32.0 * (109051904 + 16384) + (3332736512.0 / 8 + 8192) + 8192;  // + one embedding row
  const Plan p = make_plan(s, o);
  CHECK_NEAR(double(p.line.front().bytes_per_token), weights, 2.0);
  CHECK_NEAR(p.decode_bound_empty, 1e12 / weights, 1e-6 * 1e12 / weights);
  const double full = weights + 32.0 * 8192 * 4096;  // FP16 cache read to position 8192
  CHECK_NEAR(double(p.bytes_per_token), full, 2.0);
  CHECK_NEAR(p.decode_bound_tokens_per_s, 1e12 / full, 1e-6 * 1e12 / full);
  CHECK_EQ(p.line.size(), std::size_t(33));
  CHECK_EQ(p.line.back().position, std::int64_t(8192));
  for (std::size_t i = 1; i < p.line.size(); ++i) CHECK(p.line[i].tokens_per_s < p.line[i - 1].tokens_per_s);
  // prefill: 2 FLOP per linear weight at 100 TFLOPS
  CHECK_NEAR(p.prefill_bound_tokens_per_s, 100e12 / (2.0 * double(s.linear_params)), 1e-3);
  CHECK_NEAR(decode_bound(1000, 1000000000, 2), 2000.0, 1e-9);
  // speculative: a = 0.5, K = 2: (1 - 0.125) / 0.5 = 1.75 tokens per (2 * 1 ms + 10 ms)
  CHECK_NEAR(speculative_bound(0.010, 0.001, 2, 0.5), 1.75 / 0.012, 1e-9);
  CHECK_NEAR(speculative_bound(0.010, 0.001, 3, 1.0), 4.0 / 0.013, 1e-9);
}

// Device allocation rounding as measured on the H200 (bench/RESULTS.md, session 7): allocations
// below the 2 MiB granule are packed (cost their size), larger ones round up to it; each layer's
// K and V stores, and a quantized store's scales, are separate allocations.
EXL_TEST(plan, allocation_rounding_hand_computed) {
  auto rounding = [](int ctx, const char* cache) {
    PlanOptions o;
    o.layout = Layout::engine;
    o.context = ctx;
    o.cache = parse_cache(cache);
    GpuSpec g;
    g.name = "test";
    g.memory_mib = 81920;
    g.bandwidth_gbs = 1000;
    o.gpus = {g};
    const ModelShape s = shape_from_config(preset_config("tinyllama-1.1b"), 4.0, 6, o.layout);
    return double(make_plan(s, o).devices.at(0).parts.rounding);
  };
  constexpr double MiB = 1048576.0;
  // tinyllama: K or V of one layer = ctx * 256 * 2 bytes. 2048 -> 1 MiB (packed), 4096 -> 2 MiB
  // (exact), 6144 -> 3 MiB (rounds to 4 MiB: 1 MiB for each of 2 x 22 stores). The scratch
  // buffers that follow the context (partials, sampler window) stay below the granule or move by
  // less than 64 KiB.
  const double r2048 = rounding(2048, "fp16"), r4096 = rounding(4096, "fp16"), r6144 = rounding(6144, "fp16");
  CHECK_NEAR(r2048, r4096, 64 * 1024.0);
  CHECK_NEAR(r6144 - r4096, 44 * MiB, 64 * 1024.0);
  // Q4 at 32768: data 4 MiB per store (exact), scales 512 KiB (packed): no more than FP16's exact 16 MiB.
  CHECK_NEAR(rounding(32768, "q4"), rounding(32768, "fp16"), 64 * 1024.0);
  // Q4 at 12288: data 1.5 MiB (packed), scales 96 KiB (packed); FP16: 6 MiB (exact).
  CHECK_NEAR(rounding(12288, "q4"), rounding(12288, "fp16"), 64 * 1024.0);
  // FP8 at 24576: 6 MiB per store, exact; at 20480: 5 MiB, rounds to 6: 44 MiB.
  CHECK_NEAR(rounding(20480, "fp8") - rounding(24576, "fp8"), 44 * MiB, 64 * 1024.0);
}

// The cache a backend allocates, as the planner counts it: the type, or separate key/value widths.
EXL_TEST(plan, cache_spec_from_backend_options) {
  CacheOptions o;
  o.type = CacheType::q6;
  CacheSpec c = cache_spec(o);
  CHECK_EQ(c.k_bits, 8);
  CHECK_EQ(c.v_bits, 4);
  CHECK(c.quantized());
  o.type = CacheType::fp16;
  o.k_bits = 8;  // K8 with FP16 values
  c = cache_spec(o);
  CHECK_EQ(c.k_bits, 8);
  CHECK_EQ(c.v_bits, 16);
  CHECK_EQ(c.name, std::string("k8v16"));
  o.type = CacheType::fp8;
  o.k_bits = 0;
  o.v_bits = 4;
  c = cache_spec(o);
  CHECK(!c.fp8);
  CHECK_EQ(c.k_bits, 8);
  CHECK_EQ(c.v_bits, 4);
  o.v_bits = 0;
  CHECK(cache_spec(o).fp8);
}

// EXL3 what-if (test-tiny: hidden 256, 2 layers, 4 heads / 2 KV heads of 64, MLP 512, vocab 500):
// each linear's trellis is k x n (padded to 128) at the bpw, plus fp16 suh [k] and svh [n].
EXL_TEST(plan, whatif_exl3_hand_computed) {
  const ModelConfig c = preset_config("test-tiny");
  const ModelShape s = shape_from_config(c, 3.0, 6, Layout::engine, QuantFormat::exl3);
  // (k, n): q, k, v, o, gate, up, down
  const std::uint64_t kn[7][2] = {{256, 256}, {256, 128}, {256, 128}, {256, 256}, {256, 512}, {256, 512}, {512, 256}};
  std::uint64_t layer = 2 * 256 * 2;  // two fp16 norms
  for (const auto& l : kn) layer += l[0] * l[1] * 3 / 8 + (l[0] + l[1]) * 2;
  CHECK_EQ(s.layers.size(), std::size_t(2));
  CHECK_EQ(s.layers[0].device, layer);
  CHECK_EQ(s.layers[0].exl3.size(), std::size_t(7));
  // head: 256 x 500 padded to 512 columns at 6 bits, suh/svh, final norm, RoPE frequencies
  CHECK_EQ(s.head.device, std::uint64_t(256 * 512 * 6 / 8 + (256 + 512) * 2 + 256 * 2 + 32 * 4));
  CHECK_EQ(s.linear_params, std::int64_t(2 * (256 * 256 * 2 + 256 * 128 * 2 + 256 * 512 * 3) + 256 * 500));
  // The format follows quantization_config.quant_method when not given.
  ModelConfig q = c;
  q.quantization = QuantizationConfig{};
  q.quantization->method = "exl3";
  CHECK_EQ(shape_from_config(q, 3.0, 6, Layout::engine).layers[0].device, layer);
  q.quantization->method = "exl2";
  CHECK(shape_from_config(q, 3.0, 6, Layout::engine).layers[0].exl3.empty());
  // EXL3 allows 1.0 .. 8.0 bpw (EXL2: 2 .. 8.5).
  CHECK_EQ(shape_from_config(c, 1.6, 2, Layout::engine, QuantFormat::exl3).decoder_bpw, 1.6);
  bool threw = false;
  try {
    shape_from_config(c, 8.5, 6, Layout::engine, QuantFormat::exl3);
  } catch (const Error& e) {
    threw = std::string(e.what()).find("EXL3 bpw") != std::string::npos;
  }
  CHECK(threw);
  // The GPU scratch adds the EXL3 buffers: transformed input (exl3_pass_rows rows of the widest k,
  // fp16) and products (as many rows of the widest n, fp32; the GEMV's 8 rows x splits need less),
  // then the decode GEMV's tickets (one 4-byte counter per 128 columns); decode's grouped launches
  // hold a layer's one-row products and tickets side by side (every linear of the layer).
  PlanOptions o;
  o.context = 2048;
  o.sm_count = 132;
  ModelShape plain = s;
  for (ModuleBytes& m : plain.layers) m.exl3.clear();
  plain.head.exl3.clear();
  const std::uint64_t dq = 2 * 512 * 256 * 2;  // two W-hat buffers of the largest linear (down)
  const std::uint64_t head_z = std::uint64_t(exl3_gemv_splits(256, 512, 132)) * 512;
  std::uint64_t side_z = 0, side_tickets = 0;  // q, k, v, o, gate, up, down as (k, n), padded
  for (auto [k, n] : {std::pair{256, 256}, {256, 128}, {256, 128}, {256, 256}, {256, 512}, {256, 512}, {512, 256}}) {
    side_z += std::uint64_t(exl3_gemv_splits(k, n, 132)) * std::uint64_t(n);
    side_tickets += std::uint64_t(n / 128);
  }
  CHECK_EQ(side_tickets, 16u);
  CHECK_EQ(scratch_bytes(s, o, 2048) - scratch_bytes(plain, o, 2048),
           dq + exl3_pass_rows * 512 * 2 +
               std::max({std::uint64_t(exl3_pass_rows) * 512, head_z, side_z}) * 4 + side_tickets * 4);
}
