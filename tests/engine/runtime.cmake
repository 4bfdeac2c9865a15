exl_add_test_suite(cache_cpu ${CMAKE_CURRENT_LIST_DIR}/test_cache_cpu.cpp)
