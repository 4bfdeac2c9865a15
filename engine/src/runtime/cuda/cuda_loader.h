// Finds, opens and checks the exl_cuda module once per process (thread-safe).
#pragma once
#include <string>

#include "module_api.h"

namespace exl::cuda_loader {

// The table, or nullptr with the reason in *why (module not found, dlopen error, ABI or build
// id mismatch, no device).
const exl_cuda_api* api(std::string* why = nullptr);

// The libexl_cuda.so found (empty when none was), whether or not it could be used.
std::string module_path();

// Throws exl::Error(device) naming the failed call and the module's message when status != OK.
void check(int status, const char* call);

}  // namespace exl::cuda_loader
