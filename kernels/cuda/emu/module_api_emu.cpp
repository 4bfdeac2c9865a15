// module_api.cpp compiled for the CUDA emulator (emu.h).
#include "module_api.cpp"
