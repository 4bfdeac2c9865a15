# GGUF reader: dequantization of every ggml type against gguf.quants.dequantize references,
# metadata round trip, corrupted files, and the llama mapping / tokenizer of the import.
set(EXL_GGUF_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/test_gguf.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_gguf_bad.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_gguf_import.cpp)
set_source_files_properties(${EXL_GGUF_TEST_SOURCES} PROPERTIES
  COMPILE_DEFINITIONS "EXL_GGUF_TEST_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/gguf\"")
exl_add_test_suite(gguf ${EXL_GGUF_TEST_SOURCES})
add_test(NAME gguf_bad COMMAND exl_tests --filter gguf_bad)
add_test(NAME gguf_import COMMAND exl_tests --filter gguf_import)
