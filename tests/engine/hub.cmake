# The Hugging Face Hub client's engine API with an in-memory transport (engine/src/hub); the protocol
# checks against the Hub test server are in tests/hub.
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
target_link_libraries(exl_testcases PUBLIC exl_hub OpenSSL::Crypto)
exl_add_test_suite(hub ${CMAKE_CURRENT_LIST_DIR}/test_hub.cpp)
