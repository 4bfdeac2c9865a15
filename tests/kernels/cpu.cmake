# CPU kernel test suites (reference oracle and fast CPU kernels).
exl_add_test_suite(exl2_ref ${CMAKE_CURRENT_LIST_DIR}/test_exl2_ref.cpp)
