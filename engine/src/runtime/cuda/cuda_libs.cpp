// dlopen-based probes of the NVIDIA driver and cuBLAS (see cuda_libs.h). No CUDA headers: the
// few entry points used are declared here with their documented C signatures.
#include "cuda_libs.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#ifndef EXL_CUDA_MAJOR
#define EXL_CUDA_MAJOR 13
#endif

namespace exl::cuda_libs {
namespace {

using cu_driver_get_version_fn = int (*)(int*);             // cuDriverGetVersion
using nvml_init_fn = int (*)();                              // nvmlInit_v2
using nvml_driver_version_fn = int (*)(char*, unsigned int); // nvmlSystemGetDriverVersion
using nvml_shutdown_fn = int (*)();                          // nvmlShutdown
using cublas_get_property_fn = int (*)(int, int*);           // cublasGetProperty(MAJOR=0, MINOR=1, PATCH=2)

// Driver series that first supports each CUDA major version (NVIDIA's release notes).
const char* driver_series_for(int cuda_major) {
  switch (cuda_major) {
    case 11: return "450";
    case 12: return "525";
    case 13: return "580";
    default: return "a recent";
  }
}

std::string loaded_path(void* handle) {
  link_map* map = nullptr;
  if (handle && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) return map->l_name;
  return {};
}

// The CUDA toolkit's library folders, most specific first.
std::vector<std::string> toolkit_dirs() {
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char* v = std::getenv(var); v && *v) {
      dirs.push_back(std::string(v) + "/lib64");
      dirs.push_back(std::string(v) + "/targets/x86_64-linux/lib");
    }
  const std::string major = std::to_string(EXL_CUDA_MAJOR);
  dirs.push_back("/usr/local/cuda-" + major + "/lib64");
  glob_t g{};
  if (glob(("/usr/local/cuda-" + major + ".*/lib64").c_str(), 0, nullptr, &g) == 0)
    for (size_t i = g.gl_pathc; i-- > 0;) dirs.push_back(g.gl_pathv[i]);  // newest minor first
  globfree(&g);
  dirs.push_back("/usr/local/cuda/lib64");
  dirs.push_back("/usr/local/cuda/targets/x86_64-linux/lib");
  dirs.push_back("/opt/cuda/lib64");
  std::vector<std::string> unique;
  for (const std::string& d : dirs)
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
  return unique;
}

// dlopen by soname (LD_LIBRARY_PATH, ld.so.cache, default paths), then in the toolkit folders.
void* open_lib(const std::string& soname, int flags, std::string* tried) {
  if (void* h = dlopen(soname.c_str(), flags)) return h;
  if (tried) *tried = "the library path";
  for (const std::string& dir : toolkit_dirs()) {
    const std::string p = dir + "/" + soname;
    if (void* h = dlopen(p.c_str(), flags)) return h;
    if (tried) *tried += ", " + dir;
  }
  return nullptr;
}

Cublas load_cublas_once() {
  Cublas c;
  const std::string major = std::to_string(EXL_CUDA_MAJOR);
  const std::string lt = "libcublasLt.so." + major, blas = "libcublas.so." + major;
  std::string tried;
  // cuBLASLt first: libcublas needs it, and a toolkit folder outside the loader path is only
  // found this way.
  void* hlt = open_lib(lt, RTLD_NOW | RTLD_GLOBAL, &tried);
  void* h = hlt ? open_lib(blas, RTLD_NOW | RTLD_GLOBAL, &tried) : nullptr;
  if (!h) {
    c.problem = "cuBLAS " + major + " not found (" + (hlt ? blas : lt) + "; looked in " + tried +
                "). Install NVIDIA's cuBLAS for CUDA " + major + " (the CUDA toolkit " + major +
                ", or the package libcublas-" + major + "-0 from NVIDIA's CUDA repository) and make its folder known "
                "to the loader (ldconfig or LD_LIBRARY_PATH)";
    return c;
  }
  c.found = true;
  c.path = loaded_path(h);
  if (auto get = reinterpret_cast<cublas_get_property_fn>(dlsym(h, "cublasGetProperty"))) {
    int v[3] = {0, 0, 0};
    if (get(0, &v[0]) == 0 && get(1, &v[1]) == 0 && get(2, &v[2]) == 0)
      c.version = std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]);
  }
  return c;  // kept loaded for the module
}

}  // namespace

int cuda_major() { return EXL_CUDA_MAJOR; }

std::string cuda_version_string(int v) {
  if (v <= 0) return {};
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

Driver probe_driver() {
  Driver d;
  const int need = EXL_CUDA_MAJOR * 1000;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    d.problem = std::string("no NVIDIA driver (libcuda.so.1 not found). Install the NVIDIA driver, ") +
                driver_series_for(EXL_CUDA_MAJOR) + " series or newer, for CUDA " + cuda_version_string(need);
    return d;
  }
  d.found = true;
  if (auto get = reinterpret_cast<cu_driver_get_version_fn>(dlsym(h, "cuDriverGetVersion")))
    if (get(&d.cuda_version) != 0) d.cuda_version = 0;
  dlclose(h);
  if (void* n = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    auto init = reinterpret_cast<nvml_init_fn>(dlsym(n, "nvmlInit_v2"));
    auto version = reinterpret_cast<nvml_driver_version_fn>(dlsym(n, "nvmlSystemGetDriverVersion"));
    auto shutdown = reinterpret_cast<nvml_shutdown_fn>(dlsym(n, "nvmlShutdown"));
    if (init && version && shutdown && init() == 0) {
      char buf[96] = {};
      if (version(buf, sizeof(buf)) == 0) d.version = buf;
      shutdown();
    }
    dlclose(n);
  }
  if (d.cuda_version > 0 && d.cuda_version < need)
    d.problem = "the NVIDIA driver" + (d.version.empty() ? std::string() : " " + d.version) + " supports CUDA " +
                cuda_version_string(d.cuda_version) + ", this build needs CUDA " + cuda_version_string(need) +
                ". Update the NVIDIA driver to the " + driver_series_for(EXL_CUDA_MAJOR) + " series or newer";
  return d;
}

Cublas load_cublas() {
  static std::once_flag once;
  static Cublas c;
  std::call_once(once, [] { c = load_cublas_once(); });
  return c;
}

}  // namespace exl::cuda_libs
