// Opens libexl_cuda.so with dlopen (platform detail kept in this file), checks its ABI version
// and build id, installs the engine's log sink, and exposes cuda_available().
#include "cuda_loader.h"
#include "cuda_libs.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "exl/cuda.h"
#include "exl/error.h"
#include "exl/log.h"

#ifndef EXL_CUDA_BUILD_ID
#define EXL_CUDA_BUILD_ID "unknown"
#endif
#ifndef EXL_CUDA_MODULE_BUILD_PATH
#define EXL_CUDA_MODULE_BUILD_PATH ""
#endif

namespace exl::cuda_loader {
namespace {

namespace fs = std::filesystem;

struct State {
  const exl_cuda_api* api = nullptr;
  std::string why;
  std::string path;  // the module found (opened or not)
};

fs::path executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  buf[n] = 0;
  return fs::path(buf).parent_path();
}

void log_from_module(void*, int level, const char* message) {
  log(LogLevel(level < 0 ? 0 : level > 3 ? 3 : level), message ? message : "");
}

State open_module() {
  State st;
  std::vector<fs::path> candidates;
  // EXL_CUDA_EMU_MODULE: the module built for the CUDA emulator (kernels/cuda/emu), which runs
  // the kernels on the CPU: tests of the GPU code on machines without a GPU. It needs neither
  // the driver nor cuBLAS.
  const char* emu = std::getenv("EXL_CUDA_EMU_MODULE");
  const bool emulator = emu && *emu;
  if (emulator) candidates.emplace_back(emu);
  if (const char* env = std::getenv("EXL_CUDA_MODULE"); !emulator && env && *env) candidates.emplace_back(env);
  const fs::path exe = executable_dir();
  if (!exe.empty() && !emulator) {
    candidates.push_back(exe / "libexl_cuda.so");
    candidates.push_back(exe / ".." / "lib" / "exl-studio" / "libexl_cuda.so");
  }
  if (*EXL_CUDA_MODULE_BUILD_PATH && !emulator) candidates.emplace_back(EXL_CUDA_MODULE_BUILD_PATH);
  std::string tried;
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (!fs::exists(p, ec)) { tried += " " + p.string(); continue; }
    st.path = p.lexically_normal().string();
    // cuBLAS first, from the loader path or the CUDA toolkit's folders: without it the module
    // cannot open, and dlerror() alone would not say how to get it.
    const cuda_libs::Cublas cublas = emulator ? cuda_libs::Cublas{true, {}, {}, {}} : cuda_libs::load_cublas();
    if (!cublas.found) {
      st.why = cublas.problem;
      return st;
    }
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      st.why = std::string("cannot open ") + p.string() + ": " + dlerror();
      return st;
    }
    auto get = reinterpret_cast<exl_cuda_get_api_fn>(dlsym(h, "exl_cuda_get_api"));
    if (!get) {
      st.why = p.string() + " is not an exl_cuda module (no exl_cuda_get_api)";
      return st;
    }
    const exl_cuda_api* api = get(EXL_CUDA_ABI_VERSION);
    if (!api || api->abi_version != EXL_CUDA_ABI_VERSION || api->struct_size < sizeof(exl_cuda_api)) {
      st.why = p.string() + " has another ABI version than this program (" + std::to_string(EXL_CUDA_ABI_VERSION) + ")";
      return st;
    }
    if (std::string(api->build_id) != EXL_CUDA_BUILD_ID) {
      st.why = p.string() + " comes from another build (" + api->build_id + ", expected " EXL_CUDA_BUILD_ID ")";
      return st;
    }
    api->set_log(&log_from_module, nullptr);
    if (const cuda_libs::Driver driver = emulator ? cuda_libs::Driver{} : cuda_libs::probe_driver();
        !driver.problem.empty()) {
      st.why = driver.problem;
      return st;
    }
    int count = 0;
    if (const int s = api->device_count(&count); s != EXL_CUDA_OK) {
      st.why = std::string("CUDA unusable: ") + api->last_error();
      return st;
    }
    if (count == 0) {
      st.why = "no CUDA device";
      return st;
    }
    st.api = api;
    return st;
  }
  st.why = "CUDA module libexl_cuda.so not found (looked at" + tried + ")";
  return st;
}

const State& state() {
  static const State s = open_module();
  return s;
}

}  // namespace

std::string module_path() { return state().path; }

const exl_cuda_api* api(std::string* why) {
  const State& s = state();
  if (!s.api && why) *why = s.why;
  return s.api;
}

void check(int status, const char* call) {
  if (status == EXL_CUDA_OK) return;
  const exl_cuda_api* a = state().api;
  const std::string msg = std::string(call) + ": " + (a ? a->last_error() : "CUDA module unavailable");
  if (status == EXL_CUDA_ERR_OUT_OF_MEMORY) throw Error(ErrorKind::out_of_memory, msg);
  if (status == EXL_CUDA_ERR_INVALID) throw Error(ErrorKind::invalid_argument, msg);
  if (status == EXL_CUDA_ERR_UNSUPPORTED) throw Error(ErrorKind::unsupported, msg);
  throw Error(ErrorKind::device, msg);
}

}  // namespace exl::cuda_loader

namespace exl {

bool cuda_available(std::string* why) { return cuda_loader::api(why) != nullptr; }

const void* cuda_module_api() { return cuda_loader::api(); }

std::vector<CudaDeviceInfo> cuda_devices() {
  std::string why;
  const exl_cuda_api* a = cuda_loader::api(&why);
  if (!a) throw Error(ErrorKind::device, "CUDA backend unavailable: " + why);
  int count = 0;
  cuda_loader::check(a->device_count(&count), "device_count");
  std::vector<CudaDeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    exl_cuda_device_info d{};
    cuda_loader::check(a->device_info(i, &d), "device_info");
    out.push_back(CudaDeviceInfo{i, d.name, d.cc_major, d.cc_minor, d.sm_count, d.total_bytes, d.free_bytes,
                                 d.peak_bandwidth_gbs});
  }
  return out;
}

}  // namespace exl
