// Finds, opens and checks the exl_cuda module once per process (thread-safe).
#pragma once
#include <string>

#include "module_api.h"

namespace exl::cuda_loader {

// The table, or nullptr with the reason in *why (module not found, dlopen error, ABI or build
// id mismatch, no device).
const exl_cuda_api* api(std::string* why = nullptr);

// Throws exl::Error(device) naming the failed call and the module's message when status != OK.
void check(int status, const char* call);

}  // namespace exl::cuda_loader
