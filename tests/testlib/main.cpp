// ctest driver: runs the registered Qt-free cases (GPU cases are skipped with a message).
#include "exl_test.h"

int main(int argc, char** argv) { return exl::test::main_entry(argc, argv); }
