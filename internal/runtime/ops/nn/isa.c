// The level of this package's dispatching C code (isa.h).
#include "isa.h"

GK_ISA_LEVEL(gk_nn)
