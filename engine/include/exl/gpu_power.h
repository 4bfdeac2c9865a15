// GPU power draw and energy from NVML (libnvidia-ml.so.1, opened at run time: nothing links
// against it), for the app's telemetry: watts now and the energy counter, from which the energy
// of a reply (joules per token) follows; and what the app shows when decoding falls short of the
// bandwidth bound: utilisation, SM clock, the reasons the driver gives for lower clocks, other
// processes on the GPU, and the memory of every GPU of the machine. Where the driver or the GPU
// does not provide a reading the monitor says why and that reading is unavailable; nothing throws.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace exl {

struct GpuPowerReading {
  bool available = false;
  double watts = 0.0;         // board power now (nvmlDeviceGetPowerUsage)
  double energy_joules = -1;  // energy since the driver loaded; -1 where the GPU has no counter
};

// Why the driver runs the clocks below their maximum (nvmlClocksEventReasons bits).
namespace gpu_clock_reason {
constexpr std::uint64_t idle = 0x1;
constexpr std::uint64_t application_clocks = 0x2;  // application clocks set below the maximum
constexpr std::uint64_t power_cap = 0x4;           // software power cap (the board's power limit)
constexpr std::uint64_t hw_slowdown = 0x8;         // hardware slowdown (temperature or power supply)
constexpr std::uint64_t sync_boost = 0x10;
constexpr std::uint64_t sw_thermal = 0x20;         // software thermal slowdown
constexpr std::uint64_t hw_thermal = 0x40;         // hardware thermal slowdown
constexpr std::uint64_t hw_power_brake = 0x80;     // external power brake
}  // namespace gpu_clock_reason

// The GPU's state for the "why slower than the bound" hint; -1 / false where unknown.
struct GpuStateReading {
  int utilization_percent = -1;  // share of the last sample period in which a kernel ran
  int sm_clock_mhz = -1, sm_clock_max_mhz = -1;
  bool clock_reasons_known = false;
  std::uint64_t clock_reasons = 0;  // gpu_clock_reason bits
  int other_processes = -1;         // compute processes on this GPU other than this one
};

struct GpuMemoryInfo {
  int index = 0;  // NVML index
  std::string name;
  std::uint64_t total_bytes = 0, used_bytes = 0;
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
  GpuStateReading state() const;
  // Every GPU NVML sees (empty without NVML), this monitor's device included.
  std::vector<GpuMemoryInfo> devices() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool available_ = false;
  std::string why_;
};

}  // namespace exl
