exl_add_test_suite(cache_cpu ${CMAKE_CURRENT_LIST_DIR}/test_cache_cpu.cpp)
# Paged KV cache: the page manager on its own, and prefix reuse through the generator (issue 4).
exl_add_test_suite(page_cache ${CMAKE_CURRENT_LIST_DIR}/test_page_cache.cpp)
exl_add_test_suite(prefix_cache ${CMAKE_CURRENT_LIST_DIR}/test_prefix_cache.cpp)
exl_add_test_suite(gpu_power ${CMAKE_CURRENT_LIST_DIR}/test_gpu_power.cpp)
