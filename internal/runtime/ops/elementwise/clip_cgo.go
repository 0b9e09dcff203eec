//go:build cgo

package elementwise

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../../cpuisa
#include "gk_isa.h"

int gk_ew_isa(void); // fast_cgo.go

// gk_clip_f32: d[i] = min(max(s[i], lo), hi) with NaN passing through (as the
// Go loop: NaN < lo and NaN > hi are both false). The ternaries are the
// operand order of x86 max/min, so gcc vectorises them without -ffast-math.
// d == s (in place) is allowed; partial overlap is not.
GK_ISA_BODY void gk_clip_f32_body(float *d, const float *s, long n, float lo, float hi) {
	if (d == s) {
		for (long i = 0; i < n; i++) {
			float x = d[i];
			x = lo > x ? lo : x;
			d[i] = hi < x ? hi : x;
		}
		return;
	}
	float *__restrict dd = d;
	const float *__restrict ss = s;
	for (long i = 0; i < n; i++) {
		float x = ss[i];
		x = lo > x ? lo : x;
		dd[i] = hi < x ? hi : x;
	}
}
GK_ISA_VARIANTS(gk_ew_isa(), gk_clip_f32, (float *d, const float *s, long n, float lo, float hi),
	(d, s, n, lo, hi))
*/
import "C"

// f32Clip clamps s into d (same length; d may be s).
func f32Clip(d, s []float32, lo, hi float32) {
	if len(d) == 0 {
		return
	}
	C.gk_clip_f32(fp(d), fp(s), C.long(len(d)), C.float(lo), C.float(hi))
}
