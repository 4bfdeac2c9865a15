# fuzz_tokenizer: the input is a tokenizer.json; when it loads, a few strings are encoded, decoded
# and stream-decoded. The tokenizer sources are compiled into the target so that they carry the
# sanitizer instrumentation.
#   cmake --preset fuzz -B build/fuzz-tok && cmake --build build/fuzz-tok --target fuzz_tokenizer
#   build/fuzz-tok/tests/fuzz/fuzz_tokenizer -dict=tests/data/tokenizer/fuzz.dict corpus/ tests/data/tokenizer/fuzz_seeds/
add_executable(fuzz_tokenizer
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_tokenizer.cpp
  ${EXL_TOKENIZER_SOURCES}
  ${CMAKE_SOURCE_DIR}/engine/src/core/error.cpp)
target_include_directories(fuzz_tokenizer PRIVATE ${CMAKE_SOURCE_DIR}/engine/include ${CMAKE_SOURCE_DIR}/engine/src)
target_link_libraries(fuzz_tokenizer PRIVATE nlohmann_json::nlohmann_json PkgConfig::PCRE2 Threads::Threads)
pkg_check_modules(EXL_FUZZ_ICU QUIET IMPORTED_TARGET icu-uc)
if(EXL_FUZZ_ICU_FOUND)
  target_compile_definitions(fuzz_tokenizer PRIVATE EXL_TOKENIZER_HAVE_ICU=1)
  target_link_libraries(fuzz_tokenizer PRIVATE PkgConfig::EXL_FUZZ_ICU)
endif()
target_compile_options(fuzz_tokenizer PRIVATE
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
target_link_options(fuzz_tokenizer PRIVATE -fsanitize=fuzzer,address,undefined)
exl_target_defaults(fuzz_tokenizer)
