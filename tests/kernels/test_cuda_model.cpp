// The CUDA backend end to end against the fixtures (same checks and tolerances as the CPU
// backend's: tests/engine/model_checks.h).
#include <chrono>
#include <cstdio>
#include <thread>

#include "exl/backend.h"
#include "exl/gpu_power.h"
#include "exl_test.h"
#include "../engine/model_checks.h"
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
