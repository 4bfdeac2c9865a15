// exl2_gemv.cu compiled for the CUDA emulator (emu.h).
#include "exl2_gemv.cu"
