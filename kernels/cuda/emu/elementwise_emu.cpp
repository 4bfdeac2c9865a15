// elementwise.cu compiled for the CUDA emulator (emu.h).
#include "elementwise.cu"
