// The CUDA backend end to end against the fixtures (same checks and tolerances as the CPU
// backend's: tests/engine/model_checks.h).
#include <chrono>
#include <cstdio>
#include <thread>

#include "exl/backend.h"
#include "exl/gpu_power.h"
#include "exl_test.h"
#include "../engine/model_checks.h"

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
}
