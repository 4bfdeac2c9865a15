# Tokenizer suites: fixture tokenizer (byte-level BPE, HF reference), generated SentencePiece-style
# and GPT-2-style reference data (tests/data/tokenizer), malformed tokenizer.json, streaming.
exl_add_test_suite(tokenizer
  ${CMAKE_CURRENT_LIST_DIR}/test_tokenizer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_tokenizer_stream.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_tokenizer_generated.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_tokenizer_bad_input.cpp)
target_compile_definitions(exl_testcases PRIVATE
  EXL_TOKENIZER_TEST_DATA="${CMAKE_SOURCE_DIR}/tests/data/tokenizer")
