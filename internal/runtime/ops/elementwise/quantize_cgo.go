//go:build cgo

package elementwise

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../../cpuisa
#include <stdint.h>
#include "gk_isa.h"

int gk_ew_isa(void); // fast_cgo.go

// gk_quantize8_f32: y[i] = saturate(round_half_even(x[i] / scale)) + zp as
// a byte (uint8 or int8 two's complement), with flo = lo - zp and fhi =
// hi - zp; NaN gives fnan + zp. The division is a true division and
// __builtin_rintf rounds in the default mode (to nearest, ties to even),
// exactly as quantize8's Go loop. The ternaries keep NaN in v (both
// comparisons false) until the last select.
GK_ISA_BODY void gk_quantize8_f32_body(uint8_t *y, const float *x, long n, float scale, float flo, float fhi,
	float fnan, int zp) {
	for (long i = 0; i < n; i++) {
		float v = __builtin_rintf(x[i] / scale);
		float c = v < flo ? flo : v;
		c = c > fhi ? fhi : c;
		c = v != v ? fnan : c;
		y[i] = (uint8_t)((int)c + zp);
	}
}
GK_ISA_VARIANTS(gk_ew_isa(), gk_quantize8_f32, (uint8_t *y, const float *x, long n, float scale, float flo,
	float fhi, float fnan, int zp),
	(y, x, n, scale, flo, fhi, fnan, zp))
*/
import "C"

import "unsafe"

// quantize8Run quantizes xs into y (same length) per tensor; flo, fhi are
// the saturation bounds less the zero point, fnan NaN's value (less zp).
func quantize8Run(y []byte, xs []float32, scale, flo, fhi, fnan float32, zp int) {
	if len(xs) == 0 {
		return
	}
	C.gk_quantize8_f32((*C.uint8_t)(unsafe.Pointer(&y[0])), fp(xs), C.long(len(xs)), C.float(scale),
		C.float(flo), C.float(fhi), C.float(fnan), C.int(zp))
}
