// GPU power draw and energy from NVML (libnvidia-ml.so.1, opened at run time: nothing links
// against it), for the app's telemetry: watts now and the energy counter, from which the energy
// of a reply (joules per token) follows. Where the driver or the GPU does not provide a reading
// the monitor says why and every reading is unavailable; nothing throws.
#pragma once
#include <memory>
#include <string>

namespace exl {

struct GpuPowerReading {
  bool available = false;
  double watts = 0.0;         // board power now (nvmlDeviceGetPowerUsage)
  double energy_joules = -1;  // energy since the driver loaded; -1 where the GPU has no counter
};

class GpuPowerMonitor {
 public:
  // `device`: the NVML index (the same as CUDA's with CUDA_DEVICE_ORDER=PCI_BUS_ID; on a machine
  // with one GPU they agree).
  explicit GpuPowerMonitor(int device = 0);
  ~GpuPowerMonitor();
  GpuPowerMonitor(const GpuPowerMonitor&) = delete;
  GpuPowerMonitor& operator=(const GpuPowerMonitor&) = delete;

  bool available() const { return available_; }
  const std::string& why_not() const { return why_; }  // empty when available
  GpuPowerReading read() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool available_ = false;
  std::string why_;
};

}  // namespace exl
