# libFuzzer target for the chat-template interpreter (fuzz preset, clang). The interpreter's
# sources are compiled straight into the target so they carry the fuzzer instrumentation.
if(EXL_BUILD_FUZZERS)
  file(GLOB exl_template_fuzz_sources ${CMAKE_SOURCE_DIR}/engine/src/template/*.cpp)
  add_executable(fuzz_template ${CMAKE_CURRENT_LIST_DIR}/fuzz_template.cpp
                               ${exl_template_fuzz_sources}
                               ${CMAKE_SOURCE_DIR}/engine/src/core/error.cpp)
  target_include_directories(fuzz_template PRIVATE ${CMAKE_SOURCE_DIR}/engine/include
                                                   ${CMAKE_SOURCE_DIR}/engine/src)
  target_link_libraries(fuzz_template PRIVATE nlohmann_json::nlohmann_json)
  target_compile_options(fuzz_template PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer)
  target_link_options(fuzz_template PRIVATE -fsanitize=fuzzer,address,undefined)
endif()
