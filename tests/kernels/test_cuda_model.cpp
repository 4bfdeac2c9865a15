// The CUDA backend end to end against the fixtures (same checks and tolerances as the CPU
// backend's: tests/engine/model_checks.h).
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <thread>

#include "exl/backend.h"
#include "exl/cuda.h"
#include "exl/error.h"
#include "exl/generator.h"
#include "exl/gpu_power.h"
#include "exl/model.h"
#include "exl_test.h"
#include "../engine/model_checks.h"
#include "../engine/refs.h"
#include "../engine/exl3_checks.h"
#include "../engine/prefix_checks.h"

using exl::CacheType;
using exl::GpuPowerMonitor;
using exl::GpuPowerReading;
using namespace exl::test;

EXL_GPU_TEST(cuda_model, hf_ref_s_fp16_cache) { check_hf_logits("cuda", "ref-s", CacheType::fp16, 1e-3); }
EXL_GPU_TEST(cuda_model, logits_ref_s_3_0) { check_exl2_logits("cuda", "ref-s-3.0bpw"); }
EXL_GPU_TEST(cuda_model, logits_ref_s_4_0) { check_exl2_logits("cuda", "ref-s-4.0bpw"); }
EXL_GPU_TEST(cuda_model, logits_ref_s_6_0) { check_exl2_logits("cuda", "ref-s-6.0bpw"); }
EXL_GPU_TEST(cuda_model, logits_ref_xs_4_0) { check_exl2_logits("cuda", "ref-xs-4.0bpw"); }
EXL_GPU_TEST(cuda_model, long_prompt_single_forward) { check_long_prompt("cuda"); }
EXL_GPU_TEST(cuda_model, greedy_ref_s_4_0) { check_exl2_greedy("cuda", "ref-s-4.0bpw"); }
EXL_GPU_TEST(cuda_model, greedy_ref_xs_4_0) { check_exl2_greedy("cuda", "ref-xs-4.0bpw"); }
EXL_GPU_TEST(cuda_model, ppl_ref_s_4_0) { check_exl2_ppl("cuda", "ref-s-4.0bpw"); }
// EXL3: the CUDA backend against ExLlamaV3 1.6.5's own outputs (tests/data/exl3, or EXL_EXL3_DATA),
// same tolerances as the CPU backend's model_exl3 / generate_exl3 / ppl_exl3.
EXL_GPU_TEST(cuda_model, exl3ref_logits_every_model) {
  for (const std::string& m : exl3_model_names()) check_exl3_logits("cuda", m);
}
EXL_GPU_TEST(cuda_model, exl3ref_greedy_every_model) {
  for (const std::string& m : exl3_model_names()) check_exl3_greedy("cuda", m);
}
EXL_GPU_TEST(cuda_model, exl3ref_ppl_every_model) {
  for (const std::string& m : exl3_model_names()) check_exl3_ppl("cuda", m);
}

// The paged cache on the device (page tables read by RoPE's cache write, the quantized stores'
// writes and every attention kernel; copy on write by page): the CPU backend's checks.
EXL_GPU_TEST(cuda_model, paged_logits_equal_contiguous) {
  check_paged_logits_equal_contiguous("cuda", {CacheType::fp16, CacheType::fp8, CacheType::q8, CacheType::q6,
                                               CacheType::q4});
}
EXL_GPU_TEST(cuda_model, conversation_fp16_prefills_only_new_tokens) { check_conversation("cuda", CacheType::fp16); }
EXL_GPU_TEST(cuda_model, conversation_q8_prefills_only_new_tokens) { check_conversation("cuda", CacheType::q8); }
EXL_GPU_TEST(cuda_model, conversation_q4_prefills_only_new_tokens) { check_conversation("cuda", CacheType::q4, false); }
EXL_GPU_TEST(cuda_model, earlier_conversations_stay_cached) { check_earlier_conversations_stay_cached("cuda"); }
EXL_GPU_TEST(cuda_model, cancelled_generations_leave_a_consistent_cache) { check_cancelled_generations("cuda", 1000); }
EXL_GPU_TEST(cuda_model, prompt_longer_than_context_is_a_clear_error) { check_prompt_longer_than_context("cuda"); }

// NVML power through GpuPowerMonitor (the app's power and energy-per-reply readout).
EXL_GPU_TEST(cuda_model, gpu_power_reads) {

  GpuPowerMonitor m(0);
  CHECK_MSG(m.available(), "no power reading on the GPU machine: " << m.why_not());
  const GpuPowerReading a = m.read();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const GpuPowerReading b = m.read();
  std::printf("  power %.1f W, energy counter %.1f J\n", a.watts, a.energy_joules);
  CHECK(a.watts > 1.0 && a.watts < 5000.0);
  if (a.energy_joules >= 0) CHECK(b.energy_joules >= a.energy_joules);
  GpuPowerMonitor missing(4096);
  CHECK(!missing.available());
  CHECK(!missing.why_not().empty());
  // The state behind the app's "likely reason" hint, and every GPU's memory for the per-GPU meters.
  const exl::GpuStateReading st = m.state();
  std::printf("  utilisation %d %%, SM clock %d of %d MHz, clock reasons %s 0x%llx, other processes %d\n",
              st.utilization_percent, st.sm_clock_mhz, st.sm_clock_max_mhz, st.clock_reasons_known ? "known" : "unknown",
              static_cast<unsigned long long>(st.clock_reasons), st.other_processes);
  CHECK(st.utilization_percent >= 0 && st.utilization_percent <= 100);
  CHECK(st.sm_clock_mhz > 0 && st.sm_clock_max_mhz >= st.sm_clock_mhz);
  CHECK(st.clock_reasons_known);
  CHECK(st.other_processes >= 0);
  const std::vector<exl::GpuMemoryInfo> gpus = m.devices();
  CHECK(!gpus.empty());
  for (const exl::GpuMemoryInfo& g : gpus) {
    std::printf("  GPU %d %s: %.2f of %.2f GiB used\n", g.index, g.name.c_str(), g.used_bytes / 1073741824.0,
                g.total_bytes / 1073741824.0);
    CHECK(!g.name.empty());
    CHECK(g.total_bytes > 0 && g.used_bytes > 0 && g.used_bytes <= g.total_bytes);
  }
}

// Layer split (issue 13) on one GPU: the model's layers in two or three segments on device 0, each
// with its own stream, memory budget and graphs, the hidden state handed over device to device or
// through pinned host memory. Every logit equals the one-device run's bit for bit: prompt chunks
// (all positions), decode steps (the captured graph of every segment), sampling on the device, a
// paged cache reused across sequences; memory() lists each segment.
namespace {

struct SplitRun {
  std::shared_ptr<const exl::Model> model;
  std::unique_ptr<exl::Backend> backend;
};

SplitRun split_run(const std::string& folder, std::vector<exl::LayerSegment> split, bool via_host) {
  SplitRun r;
  r.model = exl::Model::open(fixture("models/" + folder));
  exl::BackendOptions o;
  o.max_chunk_size = 64;  // the 100+-token prompts run in several chunks
  o.split = std::move(split);
  o.split_via_host = via_host;
  r.backend = exl::make_backend("cuda", o);
  r.backend->load(r.model);
  exl::CacheOptions c;
  c.max_seq_len = 512;
  r.backend->allocate_cache(c);
  return r;
}

// Everything one run produces, in order: all prompt logits, then 12 greedy decode steps' logits,
// then 12 ids sampled on the device (temperature 0.8, seed 7), for each fixture prompt.
struct Trace {
  std::vector<float> logits;
  std::vector<std::int32_t> ids;
};

// How many logits of two traces are not the same bits (over their common length).
std::size_t logits_differ(const Trace& got, const Trace& want) {
  std::size_t differ = 0;
  for (std::size_t i = 0; i < std::min(got.logits.size(), want.logits.size()); ++i)
    differ += got.logits[i] != want.logits[i];
  return differ;
}

Trace trace(exl::Backend& b) {
  Trace t;
  std::vector<float> l;
  for (const Prompt& p : read_prompts()) {
    b.reuse_prefix(p.ids, 0);
    exl::prefill(b, p.ids, 64, exl::LogitsWanted::all, l);
    t.logits.insert(t.logits.end(), l.begin(), l.end());
    std::vector<std::int32_t> ctx = p.ids;
    for (int i = 0; i < 12; ++i) {
      const std::int32_t next = top1(std::span<const float>(l.data() + l.size() - std::size_t(b.vocab_size()),
                                                            std::size_t(b.vocab_size())));
      ctx.push_back(next);
      b.forward(std::span<const std::int32_t>(&ctx.back(), 1), exl::LogitsWanted::last, l);
      t.logits.insert(t.logits.end(), l.begin(), l.end());
    }
    exl::SamplerSettings ss;
    ss.temperature = 0.8f;
    ss.seed = 7;
    exl::Sampler sampler(ss);
    for (int i = 0; i < 12; ++i) {
      ctx.push_back(b.forward_sample(std::span<const std::int32_t>(&ctx.back(), 1), sampler, ctx));
      t.ids.push_back(ctx.back());
    }
    // The prompt again: its pages are reused from the cache (prefix reuse across sequences).
    const int reused = b.reuse_prefix(p.ids, int(p.ids.size()) - 1);
    CHECK_MSG(reused > 0, "prompt " << p.name << ": no cached prefix reused");
    exl::prefill(b, std::span<const std::int32_t>(p.ids).subspan(std::size_t(reused)), 64, exl::LogitsWanted::last, l);
    t.logits.insert(t.logits.end(), l.begin(), l.end());
  }
  return t;
}

void check_split_equals_one_device(const std::string& folder) {
  SplitRun one = split_run(folder, {}, false);
  const Trace want = trace(*one.backend);
  const exl::MemoryStats m1 = one.backend->memory();
  CHECK_EQ(int(m1.devices.size()), 1);
  const int layers = one.model->config().num_layers;
  struct Case {
    std::vector<exl::LayerSegment> split;
    bool via_host;
  };
  std::vector<Case> cases = {
      {{{0, layers / 2}, {0, 0}}, false},
      {{{0, layers / 2}, {0, 0}}, true},
  };
  if (layers >= 3) cases.push_back({{{0, 1}, {0, layers - 2}, {0, 1}}, false});
  for (const Case& c : cases) {
    SplitRun r = split_run(folder, c.split, c.via_host);
    const Trace got = trace(*r.backend);
    const std::string what = folder + " in " + std::to_string(c.split.size()) + " segments" + (c.via_host ? " via host" : "");
    CHECK_EQ(r.backend->name(), std::string(c.split.size() == 2 ? "cuda:0+cuda:0" : "cuda:0+cuda:0+cuda:0"));
    CHECK_EQ(got.logits.size(), want.logits.size());
    const std::size_t differ = logits_differ(got, want);
    CHECK_MSG(differ == 0, what << ": " << differ << " of " << want.logits.size() << " logits differ");
    CHECK_MSG(got.ids == want.ids, what << ": device sampling chose other ids");
    const exl::MemoryStats m = r.backend->memory();
    CHECK_EQ(m.devices.size(), c.split.size());
    int next = 0;
    for (const exl::DeviceMemoryStats& d : m.devices) {
      CHECK_EQ(d.device, 0);
      CHECK_EQ(d.first_layer, next);
      CHECK(d.layers > 0 && d.weights_bytes > 0 && d.cache_bytes > 0);
      next += d.layers;
    }
    CHECK_EQ(next, layers);
    // The embedding and head sit once, on the first and last segment: the weights add up.
    CHECK_EQ(m.weights_bytes, m1.weights_bytes);
    CHECK_EQ(m.cache_bytes, m1.cache_bytes);
  }
}

}  // namespace

EXL_GPU_TEST(cuda_model, layer_split_exl2_equals_one_device) { check_split_equals_one_device("exl2/ref-s-4.0bpw"); }

// Two physical GPUs (issue #13; skipped on a one-GPU machine): half the layers on GPU 1, the hidden
// state peer to peer (or through pinned host memory), bit-identical to GPU 0 alone.
EXL_GPU_TEST(cuda_model, layer_split_over_two_gpus_equals_one_device) {
  if (exl::cuda_devices().size() < 2) SKIP("needs two GPUs (this machine has one)");
  const std::string folder = "exl2/ref-s-4.0bpw";
  SplitRun one = split_run(folder, {}, false);
  const Trace want = trace(*one.backend);
  const int layers = one.model->config().num_layers;
  for (bool via_host : {false, true}) {
    SplitRun r = split_run(folder, {{0, layers / 2}, {1, 0}}, via_host);
    CHECK_EQ(r.backend->name(), std::string("cuda:0+cuda:1"));
    const Trace got = trace(*r.backend);
    CHECK_MSG(got.logits == want.logits, "two GPUs" << (via_host ? " via host" : "") << ": logits differ");
    CHECK_MSG(got.ids == want.ids, "two GPUs: device sampling chose other ids");
    const exl::MemoryStats m = r.backend->memory();
    CHECK_EQ(m.devices.size(), std::size_t(2));
    CHECK_EQ(m.devices[1].device, 1);
    CHECK(m.device_total > m.devices[0].device_total);  // two devices' memory
    CHECK_EQ(exl::draft_device(*r.backend).rfind("cuda:", 0), std::size_t(0));
  }
}
EXL_GPU_TEST(cuda_model, layer_split_fp16_equals_one_device) { check_split_equals_one_device("hf/ref-xs"); }

// One token's RoPE and new K/V row done by the decode attention kernel (AttentionShape::rope, the
// default) against a rope_qkv_cache launch before it (EXL_CUDA_ROPE_FOLD=0): the same arithmetic,
// so the same logits bit for bit and the same sampled ids, over prompts, greedy decode steps and
// prefix reuse (trace), on an EXL2 model (the fused decode step) and an FP16 one (the general form).
EXL_GPU_TEST(cuda_model, rope_in_attention_equals_rope_launch) {
  for (const std::string folder : {"exl2/ref-s-4.0bpw", "hf/ref-xs"}) {
    ::setenv("EXL_CUDA_ROPE_FOLD", "0", 1);
    SplitRun sep = split_run(folder, {}, false);
    ::unsetenv("EXL_CUDA_ROPE_FOLD");
    const Trace want = trace(*sep.backend);
    SplitRun folded = split_run(folder, {}, false);
    const Trace got = trace(*folded.backend);
    CHECK_EQ(got.logits.size(), want.logits.size());
    const std::size_t differ = logits_differ(got, want);
    std::printf("  %s: %zu of %zu logits differ\n", folder.c_str(), differ, want.logits.size());
    CHECK_MSG(differ == 0, folder << ": RoPE in the attention kernel changes " << differ << " logits");
    CHECK_MSG(got.ids == want.ids, folder << ": device sampling chose other ids");
  }
}

// Prefill chunks (64 tokens here) reconstruct each EXL2 linear on a side stream beside the previous
// linear's GEMM (DequantPipe, two buffers): the same kernels and GEMMs as reconstructing each just
// before its GEMM on the one stream, so every logit must be the same bits. A missing wait between the
// streams shows here as other logits.
EXL_GPU_TEST(cuda_model, prefill_reconstruct_beside_gemm_equals_inline) {
  ::setenv("EXL_CUDA_DQ_OVERLAP", "0", 1);
  SplitRun inline_run = split_run("exl2/ref-s-4.0bpw", {}, false);
  ::unsetenv("EXL_CUDA_DQ_OVERLAP");
  const Trace want = trace(*inline_run.backend);
  SplitRun side = split_run("exl2/ref-s-4.0bpw", {}, false);
  const Trace got = trace(*side.backend);
  CHECK_EQ(got.logits.size(), want.logits.size());
  const std::size_t differ = logits_differ(got, want);
  std::printf("  %zu of %zu logits differ\n", differ, want.logits.size());
  CHECK_MSG(differ == 0, "the side-stream reconstruct changes " << differ << " logits");
  CHECK_MSG(got.ids == want.ids, "device sampling chose other ids");
}

// A split that does not place the model's layers, a segment without layers, a device that is not
// there: clear errors, no crash.
EXL_GPU_TEST(cuda_model, layer_split_bad_requests_are_clear_errors) {
  auto model = exl::Model::open(fixture("models/exl2/ref-s-4.0bpw"));
  const int layers = model->config().num_layers;
  auto fails = [&](std::vector<exl::LayerSegment> split, const std::string& needle) {
    exl::BackendOptions o;
    o.split = std::move(split);
    try {
      auto b = exl::make_backend("cuda", o);
      b->load(model);
      b->allocate_cache({256, CacheType::fp16});
      CHECK_MSG(false, "no error (expected '" << needle << "')");
    } catch (const exl::Error& e) {
      CHECK_MSG(std::string(e.what()).find(needle) != std::string::npos, e.what());
    }
  };
  fails({{0, layers}, {0, 2}}, "layers");
  fails({{0, 2}, {0, 2}}, "layers");
  fails({{0, 0}, {0, 0}}, "only the last may be 0");
  fails({{0, 1}, {4096, 0}}, "CUDA device 4096 does not exist");
  exl::BackendOptions o;
  o.split = {{0, 1}, {0, 0}};
  try {
    (void)exl::make_backend("cpu", o);
    CHECK_MSG(false, "a split on the CPU backend was accepted");
  } catch (const exl::Error& e) {
    CHECK_MSG(std::string(e.what()).find("CUDA") != std::string::npos, e.what());
  }
}
