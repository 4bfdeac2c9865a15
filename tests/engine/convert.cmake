# The converter's suites (engine/src/convert): writer, quantizer, bit accounting, optimizer,
# and end-to-end conversions of the fixture models on the CPU.
if(NOT TARGET exl_convert)
  add_subdirectory(${CMAKE_SOURCE_DIR}/engine/src/convert ${CMAKE_BINARY_DIR}/engine/src/convert)
endif()
target_link_libraries(exl_testcases PUBLIC exl_convert)
# The GPU cases compare the internal block maths (block_math.h) through the test GPU helpers.
target_include_directories(exl_testcases PRIVATE ${CMAKE_SOURCE_DIR}/engine/src/convert ${CMAKE_SOURCE_DIR}/tests/kernels)
exl_add_test_suite(convert
  ${CMAKE_CURRENT_LIST_DIR}/test_convert_writer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_convert_quant.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_convert_e2e.cpp)
# EXL3: the quantizer's units (exl3_quantizer, also under ASan) and ref-xs end to end (convert_exl3, about
# two minutes on 2 cores: the tile encoder does 150 tiles/s there).
exl_add_test_suite(exl3_quantizer ${CMAKE_CURRENT_LIST_DIR}/test_convert_exl3.cpp)
add_test(NAME convert_exl3 COMMAND exl_tests --filter convert_exl3)
set_tests_properties(convert_exl3 PROPERTIES SKIP_REGULAR_EXPRESSION "\n0 passed, 0 failed, [1-9]")
