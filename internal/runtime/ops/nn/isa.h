#ifndef GKCONV_NN_ISA_H
#define GKCONV_NN_ISA_H
// The instruction-set level of this package's C code (cpuisa.Level): the
// best the CPU has unless GKCONV_CPU_ISA forces a lower one; isa.go sets it.
#include "gk_isa.h"

int gk_nn_isa(void);
void gk_nn_set_isa(int level);

// GK_SWITCH_MR12 calls F(R) with R the constant equal to mr (12 down to 1, 1
// for anything else), so a micro-kernel inlined with a constant row count
// keeps its accumulators in registers.
#define GK_SWITCH_MR12(mr, F)                                                                                   \
    switch (mr) {                                                                                               \
    case 12: F(12); break;                                                                                      \
    case 11: F(11); break;                                                                                      \
    case 10: F(10); break;                                                                                      \
    case 9: F(9); break;                                                                                        \
    case 8: F(8); break;                                                                                        \
    case 7: F(7); break;                                                                                        \
    case 6: F(6); break;                                                                                        \
    case 5: F(5); break;                                                                                        \
    case 4: F(4); break;                                                                                        \
    case 3: F(3); break;                                                                                        \
    case 2: F(2); break;                                                                                        \
    default: F(1); break;                                                                                       \
    }
#endif
