// test_entries.cpp compiled for the CUDA emulator (emu.h).
#include "test_entries.cpp"
