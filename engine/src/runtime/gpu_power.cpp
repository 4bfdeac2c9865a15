#include "exl/gpu_power.h"

#include <dlfcn.h>
#include <unistd.h>

namespace exl {
namespace {

// The few NVML entry points used (nvml.h, stable C ABI); status 0 is NVML_SUCCESS.
using nvml_init_fn = int (*)();                                     // nvmlInit_v2
using nvml_shutdown_fn = int (*)();                                 // nvmlShutdown
using nvml_handle_fn = int (*)(unsigned int, void**);               // nvmlDeviceGetHandleByIndex_v2
using nvml_power_fn = int (*)(void*, unsigned int*);                // nvmlDeviceGetPowerUsage (mW)
using nvml_energy_fn = int (*)(void*, unsigned long long*);         // nvmlDeviceGetTotalEnergyConsumption (mJ)
using nvml_error_fn = const char* (*)(int);                         // nvmlErrorString
using nvml_count_fn = int (*)(unsigned int*);                       // nvmlDeviceGetCount_v2
using nvml_name_fn = int (*)(void*, char*, unsigned int);           // nvmlDeviceGetName
struct NvmlMemory { unsigned long long total, free, used; };        // nvmlMemory_t
using nvml_memory_fn = int (*)(void*, NvmlMemory*);                 // nvmlDeviceGetMemoryInfo
struct NvmlUtilization { unsigned int gpu, memory; };               // nvmlUtilization_t
using nvml_util_fn = int (*)(void*, NvmlUtilization*);              // nvmlDeviceGetUtilizationRates
using nvml_clock_fn = int (*)(void*, int, unsigned int*);           // nvmlDeviceGet(Max)ClockInfo
using nvml_reasons_fn = int (*)(void*, unsigned long long*);        // nvmlDeviceGetCurrentClocksEventReasons
struct NvmlProcess { unsigned int pid; unsigned long long used; unsigned int gi, ci; };  // nvmlProcessInfo_t (v2/v3)
using nvml_procs_fn = int (*)(void*, unsigned int*, NvmlProcess*);  // nvmlDeviceGetComputeRunningProcesses_v3
constexpr int k_nvml_clock_sm = 1;                                  // NVML_CLOCK_SM
constexpr int k_nvml_insufficient_size = 7;                         // NVML_ERROR_INSUFFICIENT_SIZE

template <class F>
F symbol(void* lib, const char* name, const char* fallback = nullptr) {
  void* p = dlsym(lib, name);
  if (!p && fallback) p = dlsym(lib, fallback);
  return reinterpret_cast<F>(p);
}

}  // namespace

struct GpuPowerMonitor::Impl {
  void* lib = nullptr;
  void* device = nullptr;
  nvml_shutdown_fn shutdown = nullptr;
  nvml_power_fn power = nullptr;
  nvml_energy_fn energy = nullptr;
  nvml_memory_fn memory = nullptr;
  nvml_util_fn utilization = nullptr;
  nvml_clock_fn clock = nullptr, max_clock = nullptr;
  nvml_reasons_fn reasons = nullptr;
  nvml_procs_fn processes = nullptr;
  // Every GPU's handle and name, looked up once when NVML starts (they do not change while it runs);
  // devices() then only reads their memory.
  struct Known {
    void* handle = nullptr;
    GpuMemoryInfo info;
  };
  std::vector<Known> known;
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
  const auto count_devices = symbol<nvml_count_fn>(m.lib, "nvmlDeviceGetCount_v2");
  const auto device_name = symbol<nvml_name_fn>(m.lib, "nvmlDeviceGetName");
  m.memory = symbol<nvml_memory_fn>(m.lib, "nvmlDeviceGetMemoryInfo");
  m.utilization = symbol<nvml_util_fn>(m.lib, "nvmlDeviceGetUtilizationRates");
  m.clock = symbol<nvml_clock_fn>(m.lib, "nvmlDeviceGetClockInfo");
  m.max_clock = symbol<nvml_clock_fn>(m.lib, "nvmlDeviceGetMaxClockInfo");
  m.reasons = symbol<nvml_reasons_fn>(m.lib, "nvmlDeviceGetCurrentClocksEventReasons",
                                      "nvmlDeviceGetCurrentClocksThrottleReasons");
  m.processes = symbol<nvml_procs_fn>(m.lib, "nvmlDeviceGetComputeRunningProcesses_v3",
                                      "nvmlDeviceGetComputeRunningProcesses_v2");
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
  unsigned int count = 0;
  if (count_devices && m.memory && count_devices(&count) == 0) {
    for (unsigned int i = 0; i < count; ++i) {
      Impl::Known k;
      if (handle(i, &k.handle) != 0) continue;
      k.info.index = int(i);
      char name[96] = {};
      if (device_name && device_name(k.handle, name, sizeof name) == 0) k.info.name = name;
      m.known.push_back(std::move(k));
    }
  }
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

GpuStateReading GpuPowerMonitor::state() const {
  GpuStateReading r;
  const Impl& m = *impl_;
  if (!m.initialised || !m.device) return r;
  NvmlUtilization u{};
  if (m.utilization && m.utilization(m.device, &u) == 0) r.utilization_percent = int(u.gpu);
  unsigned int mhz = 0;
  if (m.clock && m.clock(m.device, k_nvml_clock_sm, &mhz) == 0) r.sm_clock_mhz = int(mhz);
  if (m.max_clock && m.max_clock(m.device, k_nvml_clock_sm, &mhz) == 0) r.sm_clock_max_mhz = int(mhz);
  unsigned long long bits = 0;
  if (m.reasons && m.reasons(m.device, &bits) == 0) {
    r.clock_reasons_known = true;
    r.clock_reasons = bits;
  }
  if (m.processes) {
    std::vector<NvmlProcess> procs(16);
    unsigned int n = unsigned(procs.size());
    int st = m.processes(m.device, &n, procs.data());
    if (st == k_nvml_insufficient_size) {
      procs.resize(n + 8);
      n = unsigned(procs.size());
      st = m.processes(m.device, &n, procs.data());
    }
    if (st == 0) {
      const unsigned int self = unsigned(getpid());
      r.other_processes = 0;
      for (unsigned int i = 0; i < n && i < procs.size(); ++i)
        if (procs[i].pid != self) ++r.other_processes;
    }
  }
  return r;
}

std::vector<GpuMemoryInfo> GpuPowerMonitor::devices() const {
  std::vector<GpuMemoryInfo> out;
  for (const Impl::Known& k : impl_->known) {
    NvmlMemory mem{};
    if (impl_->memory(k.handle, &mem) != 0) continue;
    GpuMemoryInfo g = k.info;
    g.total_bytes = mem.total;
    g.used_bytes = mem.used;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace exl
