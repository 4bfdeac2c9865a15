exl_add_test_suite(half ${CMAKE_CURRENT_LIST_DIR}/test_half.cpp)
foreach(part cpu cuda emu)
  include(${CMAKE_CURRENT_LIST_DIR}/${part}.cmake OPTIONAL)
endforeach()
# EXL3: reference decoder (bit-exact against ExLlamaV3's data in tests/data/exl3) and the fast CPU form.
exl_add_test_suite(exl3_ref ${CMAKE_CURRENT_LIST_DIR}/test_exl3_ref.cpp)
exl_add_test_suite(exl3_cpu ${CMAKE_CURRENT_LIST_DIR}/test_exl3_cpu.cpp)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_exl3_ref.cpp PROPERTIES
  COMPILE_DEFINITIONS "EXL_EXL3_TEST_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/exl3\"")
