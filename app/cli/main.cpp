#include <cstdio>
int main() { std::puts("exl: under construction"); return 0; }
