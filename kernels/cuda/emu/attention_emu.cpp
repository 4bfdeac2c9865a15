// attention.cu compiled for the CUDA emulator (emu.h).
#include "attention.cu"
