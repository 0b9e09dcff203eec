#ifndef GKCONV_NN_ISA_H
#define GKCONV_NN_ISA_H
// The instruction-set level of this package's C code (cpuisa.Level): the
// best the CPU has unless GKCONV_CPU_ISA forces a lower one; isa.go sets it.
#include "gk_isa.h"

int gk_nn_isa(void);
void gk_nn_set_isa(int level);
#endif
