// exl/cuda.h in a build without the CUDA module's loader (EXL_ENABLE_CUDA=OFF): no device, and
// every entry point says why, so that code written against the header (the app's fit calculator
// and GPU split) builds and runs on the CPU alone.
#include "exl/cuda.h"
#include "exl/error.h"

namespace exl {
namespace {
constexpr const char* kWhy = "this build has no CUDA backend";
}

bool cuda_available(std::string* why) {
  if (why) *why = kWhy;
  return false;
}

std::vector<CudaDeviceInfo> cuda_devices() { throw Error(ErrorKind::device, kWhy); }

CudaDeviceRates cuda_device_rates(int) { throw Error(ErrorKind::device, kWhy); }

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions&) { throw Error(ErrorKind::device, kWhy); }

const void* cuda_module_api() { return nullptr; }

}  // namespace exl
