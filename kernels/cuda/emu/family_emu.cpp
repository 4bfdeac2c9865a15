// family.cu compiled for the CUDA emulator (emu.h).
#include "family.cu"
