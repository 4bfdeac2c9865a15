# fuzz_safetensors: SafetensorsFile::parse_header under libFuzzer + ASan + UBSan. The format
# sources are compiled into the target itself so they carry the sanitizer instrumentation.
#   cmake --preset fuzz -B build/fuzz && cmake --build build/fuzz --target fuzz_safetensors
#   build/fuzz/tests/fuzz/fuzz_safetensors -dict=tests/data/format/safetensors.dict corpus/ tests/data/format/fuzz_seeds/
add_executable(fuzz_safetensors
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_safetensors.cpp
  ${EXL_FORMAT_SOURCES}
  ${CMAKE_SOURCE_DIR}/engine/src/core/error.cpp
  ${CMAKE_SOURCE_DIR}/engine/src/core/log.cpp)
target_include_directories(fuzz_safetensors PRIVATE
  ${CMAKE_SOURCE_DIR}/engine/include ${CMAKE_SOURCE_DIR}/engine/src ${CMAKE_SOURCE_DIR}/kernels/include)
target_link_libraries(fuzz_safetensors PRIVATE nlohmann_json::nlohmann_json Threads::Threads)
target_compile_options(fuzz_safetensors PRIVATE
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
target_link_options(fuzz_safetensors PRIVATE -fsanitize=fuzzer,address,undefined)
exl_target_defaults(fuzz_safetensors)
