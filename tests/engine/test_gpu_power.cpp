// GpuPowerMonitor (NVML through dlopen): where NVML and a GPU answer, a positive power draw and an
// energy counter that does not run backwards; elsewhere (CI, this machine without a driver) no
// reading and a reason. The GPU case (cuda_model.gpu_power_reads, tests/kernels/test_cuda_model.cpp)
// runs in `exl selftest --device cuda`.
#include "exl/gpu_power.h"
#include "exl_test.h"

using namespace exl;

EXL_TEST(gpu_power, reading_or_reason) {
  GpuPowerMonitor m(0);
  const GpuPowerReading r = m.read();
  if (!m.available()) {
    CHECK(!m.why_not().empty());
    CHECK(!r.available);
    CHECK_EQ(r.watts, 0.0);
    GpuPowerMonitor bad(-1);
    CHECK(!bad.available());
    // Without a device every state reading is unknown (not zero, which would read as "idle").
    const GpuStateReading st = bad.state();
    CHECK_EQ(st.utilization_percent, -1);
    CHECK_EQ(st.sm_clock_mhz, -1);
    CHECK(!st.clock_reasons_known);
    CHECK_EQ(st.other_processes, -1);
    return;
  }
  CHECK(m.why_not().empty());
  CHECK(r.available);
  CHECK(r.watts > 0.0);
}
