#include "exl/gpu_power.h"

#include <dlfcn.h>

namespace exl {
namespace {

// The few NVML entry points used (nvml.h, stable C ABI); status 0 is NVML_SUCCESS.
using nvml_init_fn = int (*)();                                     // nvmlInit_v2
using nvml_shutdown_fn = int (*)();                                 // nvmlShutdown
using nvml_handle_fn = int (*)(unsigned int, void**);               // nvmlDeviceGetHandleByIndex_v2
using nvml_power_fn = int (*)(void*, unsigned int*);                // nvmlDeviceGetPowerUsage (mW)
using nvml_energy_fn = int (*)(void*, unsigned long long*);         // nvmlDeviceGetTotalEnergyConsumption (mJ)
using nvml_error_fn = const char* (*)(int);                         // nvmlErrorString

}  // namespace

struct GpuPowerMonitor::Impl {
  void* lib = nullptr;
  void* device = nullptr;
  nvml_shutdown_fn shutdown = nullptr;
  nvml_power_fn power = nullptr;
  nvml_energy_fn energy = nullptr;
  bool initialised = false;
  ~Impl() {
    if (initialised && shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

GpuPowerMonitor::GpuPowerMonitor(int device) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!m.lib) {
    why_ = "NVML (libnvidia-ml.so.1, part of the NVIDIA driver) is not installed";
    return;
  }
  const auto init = reinterpret_cast<nvml_init_fn>(dlsym(m.lib, "nvmlInit_v2"));
  const auto handle = reinterpret_cast<nvml_handle_fn>(dlsym(m.lib, "nvmlDeviceGetHandleByIndex_v2"));
  const auto error = reinterpret_cast<nvml_error_fn>(dlsym(m.lib, "nvmlErrorString"));
  m.shutdown = reinterpret_cast<nvml_shutdown_fn>(dlsym(m.lib, "nvmlShutdown"));
  m.power = reinterpret_cast<nvml_power_fn>(dlsym(m.lib, "nvmlDeviceGetPowerUsage"));
  m.energy = reinterpret_cast<nvml_energy_fn>(dlsym(m.lib, "nvmlDeviceGetTotalEnergyConsumption"));
  if (!init || !handle || !m.power) {
    why_ = "NVML lacks the power functions";
    return;
  }
  const auto say = [&](const char* what, int st) {
    why_ = std::string(what) + ": " + (error ? error(st) : ("NVML error " + std::to_string(st)));
  };
  if (const int st = init(); st != 0) {
    say("NVML did not start", st);
    return;
  }
  m.initialised = true;
  if (device < 0) {
    why_ = "no GPU index";
    return;
  }
  if (const int st = handle(unsigned(device), &m.device); st != 0) {
    say("no NVML device", st);
    return;
  }
  unsigned int mw = 0;
  if (const int st = m.power(m.device, &mw); st != 0) {
    say("the GPU reports no power draw", st);
    return;
  }
  available_ = true;
}

GpuPowerMonitor::~GpuPowerMonitor() = default;

GpuPowerReading GpuPowerMonitor::read() const {
  GpuPowerReading r;
  if (!available_) return r;
  unsigned int mw = 0;
  if (impl_->power(impl_->device, &mw) != 0) return r;
  r.available = true;
  r.watts = double(mw) / 1000.0;
  unsigned long long mj = 0;
  if (impl_->energy && impl_->energy(impl_->device, &mj) == 0) r.energy_joules = double(mj) / 1000.0;
  return r;
}

}  // namespace exl
