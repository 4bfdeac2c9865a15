exl_add_test_suite(half ${CMAKE_CURRENT_LIST_DIR}/test_half.cpp)
foreach(part cpu cuda emu)
  include(${CMAKE_CURRENT_LIST_DIR}/${part}.cmake OPTIONAL)
endforeach()
