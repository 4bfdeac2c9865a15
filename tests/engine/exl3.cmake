# EXL3 (issue 45): loading and validation of the reference models converted by ExLlamaV3
# (tests/data/exl3), corrupted copies, and the CPU backend against ExLlamaV3's outputs.
target_sources(exl_testcases PRIVATE ${CMAKE_CURRENT_LIST_DIR}/exl3_checks.cpp ${CMAKE_CURRENT_LIST_DIR}/exl3_twin.cpp)
exl_add_test_suite(format_exl3 ${CMAKE_CURRENT_LIST_DIR}/test_format_exl3.cpp)
exl_add_test_suite(model_exl3 ${CMAKE_CURRENT_LIST_DIR}/test_model_exl3.cpp)
add_test(NAME generate_exl3 COMMAND exl_tests --filter generate_exl3)
add_test(NAME ppl_exl3 COMMAND exl_tests --filter ppl_exl3)
set_tests_properties(generate_exl3 ppl_exl3 PROPERTIES SKIP_REGULAR_EXPRESSION "\n0 passed, 0 failed, [1-9]")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/exl3_checks.cpp PROPERTIES
  COMPILE_DEFINITIONS "EXL_EXL3_TEST_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/exl3\"")
