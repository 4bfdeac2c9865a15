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
# The default-model command path (import -o, generate --chat, convert of a .gguf) through exl itself.
# (exl is defined after tests/, so no if(TARGET); the generator expression resolves it.)
add_test(NAME cli_gguf COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_gguf_check.sh $<TARGET_FILE:exl>
                               ${CMAKE_SOURCE_DIR}/tests/data/gguf/tiny_llama_spm.gguf)
# The default model's GGUF (EXL_SMOLLM2_GGUF) against HF transformers' outputs kept in tests/data/smollm2.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_gguf_smollm2.cpp PROPERTIES
  COMPILE_DEFINITIONS "EXL_SMOLLM2_TEST_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/smollm2\"")
exl_add_test_suite(gguf_smollm2 ${CMAKE_CURRENT_LIST_DIR}/test_gguf_smollm2.cpp)
