# Sampler, stop strings and speculative decoding (issue 5).
exl_add_test_suite(sampler ${CMAKE_CURRENT_LIST_DIR}/test_sampler.cpp ${CMAKE_CURRENT_LIST_DIR}/test_sampler_pack.cpp)
exl_add_test_suite(stop_strings ${CMAKE_CURRENT_LIST_DIR}/test_stop_strings.cpp)
exl_add_test_suite(speculative ${CMAKE_CURRENT_LIST_DIR}/test_speculative.cpp
                   ${CMAKE_CURRENT_LIST_DIR}/test_speculative_fixtures.cpp)
