# Model families on the CPU against HF transformers' outputs kept in tests/data/families (issue 47).
exl_add_test_suite(families ${CMAKE_CURRENT_LIST_DIR}/test_families.cpp)
exl_add_test_suite(family_config ${CMAKE_CURRENT_LIST_DIR}/test_family_config.cpp)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_families.cpp PROPERTIES
  COMPILE_DEFINITIONS "EXL_FAMILIES_TEST_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/families\"")
# The converter on the family models (needs the converter library and the fixtures' tokenizer).
if(TARGET exl_convert)
  exl_add_test_suite(family_convert ${CMAKE_CURRENT_LIST_DIR}/test_family_convert.cpp)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_family_convert.cpp PROPERTIES
    COMPILE_DEFINITIONS "EXL_FAMILIES_TEST_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/families\"")
endif()
# exl synth presets and the planner on the families.
if(TARGET exl_synth AND TARGET exl_plan)
  exl_add_test_suite(family_synth ${CMAKE_CURRENT_LIST_DIR}/test_family_synth.cpp)
endif()
# The families' tokenizers and chat templates (tests/data/tokenizer_families).
exl_add_test_suite(family_tokenizers ${CMAKE_CURRENT_LIST_DIR}/test_family_tokenizers.cpp)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_family_tokenizers.cpp PROPERTIES
  COMPILE_DEFINITIONS "EXL_TOKENIZER_FAMILIES_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/tokenizer_families\"")
