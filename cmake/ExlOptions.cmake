# Project options, all prefixed EXL_.
option(EXL_ENABLE_CUDA   "Build the exl_cuda backend module (needs the CUDA toolkit)" ON)
option(EXL_BUILD_GUI     "Build the Qt Quick desktop app (exl-studio) and the ui library" ON)
option(EXL_BUILD_SERVER  "Build the OpenAI-compatible server library" ON)
option(EXL_BUILD_TESTS   "Build the tests" ON)
option(EXL_BUILD_FUZZERS "Build libFuzzer targets (needs clang)" OFF)
option(EXL_SANITIZE      "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(EXL_NATIVE        "Tune CPU kernels for the build machine (-march=native)" OFF)
option(EXL_WARNINGS_AS_ERRORS "Treat compiler warnings as errors" OFF)
set(EXL_FIXTURES_DIR "${CMAKE_SOURCE_DIR}/../shared/fixtures" CACHE PATH
    "Reference fixtures (models, logits, tokenizer cases); overridable at run time with EXL_FIXTURES")
