// Driver of the server's Qt-free test cases.
#include "exl_test.h"

int main(int argc, char** argv) { return exl::test::main_entry(argc, argv); }
