# fuzz_server_request: the server's request parser/validator on arbitrary bodies. The parser's
# source is compiled into the target so it carries the sanitizer instrumentation; it needs no HTTP
# library and no engine.
#   cmake --preset fuzz -B build/fuzz-srv && cmake --build build/fuzz-srv --target fuzz_server_request
#   build/fuzz-srv/tests/fuzz/fuzz_server_request corpus/ tests/server/fuzz_seeds/
add_executable(fuzz_server_request
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_server_request.cpp
  ${CMAKE_SOURCE_DIR}/server/src/request.cpp)
target_include_directories(fuzz_server_request PRIVATE ${CMAKE_SOURCE_DIR}/server/include)
target_link_libraries(fuzz_server_request PRIVATE nlohmann_json::nlohmann_json)
target_compile_options(fuzz_server_request PRIVATE
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
target_link_options(fuzz_server_request PRIVATE -fsanitize=fuzzer,address,undefined)
exl_target_defaults(fuzz_server_request)
