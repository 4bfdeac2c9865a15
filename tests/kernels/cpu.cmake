# CPU kernel test suites (reference oracle and fast CPU kernels).
exl_add_test_suite(exl2_ref ${CMAKE_CURRENT_LIST_DIR}/test_exl2_ref.cpp)
exl_add_test_suite(exl2_cpu ${CMAKE_CURRENT_LIST_DIR}/test_exl2_cpu.cpp)
exl_add_test_suite(linear_cpu ${CMAKE_CURRENT_LIST_DIR}/test_linear_cpu.cpp)
exl_add_test_suite(norm_rope ${CMAKE_CURRENT_LIST_DIR}/test_norm_rope.cpp)
exl_add_test_suite(attention_cpu ${CMAKE_CURRENT_LIST_DIR}/test_attention_cpu.cpp)
exl_add_test_suite(family_ops ${CMAKE_CURRENT_LIST_DIR}/test_family_ops.cpp)
exl_add_test_suite(threads ${CMAKE_CURRENT_LIST_DIR}/test_threads.cpp)
exl_add_test_suite(kv_quant ${CMAKE_CURRENT_LIST_DIR}/test_kv_quant.cpp)
