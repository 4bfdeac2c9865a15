// convert_math.cu compiled for the CUDA emulator (emu.h).
#include "convert_math.cu"
