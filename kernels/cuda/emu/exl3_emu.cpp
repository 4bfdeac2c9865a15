// exl3.cu compiled for the CUDA emulator (emu.h).
#include "exl3.cu"
