// Chooses a backend from a device string ("cpu", "cuda[:N]", "auto").
#include "exl/backend.h"
#include "exl/error.h"

#if __has_include("exl/cuda.h") && defined(EXL_HAVE_CUDA_LOADER)
#include "exl/cuda.h"
#define EXL_FACTORY_HAS_CUDA 1
#endif

namespace exl {

std::unique_ptr<Backend> make_backend(const std::string& device, const BackendOptions& options, std::string* note) {
  if (!options.split.empty() && device != "cuda" && device.rfind("cuda:", 0) != 0 && device != "auto")
    throw Error(ErrorKind::invalid_argument, "a layer split runs on the CUDA backend, not on '" + device + "'");
  if (device == "cpu") {
    if (note) *note = "device: cpu";
    return make_cpu_backend(options);
  }
  const bool want_cuda = device == "cuda" || device.rfind("cuda:", 0) == 0;
  if (!want_cuda && device != "auto")
    throw Error(ErrorKind::invalid_argument, "unknown device '" + device + "' (cpu, cuda, cuda:N, auto)");
  BackendOptions o = options;
  if (device.rfind("cuda:", 0) == 0) {
    try {
      o.device = std::stoi(device.substr(5));
    } catch (const std::exception&) {
      throw Error(ErrorKind::invalid_argument, "bad device ordinal in '" + device + "'");
    }
  }
#ifdef EXL_FACTORY_HAS_CUDA
  std::string why;
  if (cuda_available(&why)) {
    std::unique_ptr<Backend> b = make_cuda_backend(o);
    if (note) *note = "device: " + b->name();
    return b;
  }
#else
  const std::string why = "this build has no CUDA backend";
#endif
  if (want_cuda || !options.split.empty()) throw Error(ErrorKind::device, "CUDA backend unavailable: " + why);
  if (note) *note = "device: cpu (no usable GPU: " + why + ")";
  return make_cpu_backend(options);
}

std::string draft_device(const Backend& target) {
  const MemoryStats m = target.memory();
  if (m.devices.empty()) return target.name();
  const DeviceMemoryStats* best = &m.devices.front();
  for (const DeviceMemoryStats& d : m.devices)
    if (d.device_free > best->device_free) best = &d;
  return "cuda:" + std::to_string(best->device);
}

}  // namespace exl
