# Model file formats: safetensors, tensor store, config.json, EXL2 layers (real fixtures), and
# corrupted inputs that must give typed errors.
exl_add_test_suite(format
  ${CMAKE_CURRENT_LIST_DIR}/test_format_fixtures.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_format_config.cpp)
exl_add_test_suite(format_bad_input
  ${CMAKE_CURRENT_LIST_DIR}/test_format_bad_input.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_format_bad_exl2.cpp)
