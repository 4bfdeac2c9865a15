# Each area registers its suites in its own file (kept apart so parallel work does not collide).
foreach(part format tokenizer template model runtime generate cli plan convert gguf synth hub exl3 families moe)
  include(${CMAKE_CURRENT_LIST_DIR}/${part}.cmake OPTIONAL)
endforeach()
