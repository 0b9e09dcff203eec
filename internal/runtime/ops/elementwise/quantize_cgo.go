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

// gk_dequantize8_f32: y[i] = (float)(x[i] - zp) * scale for uint8 (sg 0) or
// int8 (sg 1) x: one float32 multiply of an exact integer, as the Go loop.
GK_ISA_BODY void gk_dequantize8_f32_body(float *y, const uint8_t *x, long n, int sg, int zp, float scale) {
	if (sg) {
		const int8_t *xs = (const int8_t *)x;
		for (long i = 0; i < n; i++) y[i] = (float)((int)xs[i] - zp) * scale;
	} else {
		for (long i = 0; i < n; i++) y[i] = (float)((int)x[i] - zp) * scale;
	}
}
GK_ISA_VARIANTS(gk_ew_isa(), gk_dequantize8_f32, (float *y, const uint8_t *x, long n, int sg, int zp, float scale),
	(y, x, n, sg, zp, scale))

// gk_minmax_f32: the smallest and largest of x[0..n) and 0 (the range
// DynamicQuantizeLinear quantizes), in lanes; any NaN makes both NaN, as
// the Go loop's min/max builtins do. GCC vector types, not a loop over lane
// arrays: with the NaN flag gcc kept that loop scalar (a tenth of a
// quantize_dynamic model's time); each lane still keeps v < lo ? v : lo
// (and v > hi ? v : hi), so the result is the scalar loop's, zero signs
// included. One width per level (16 lanes AVX-512, 8 AVX2, 4 SSE2): a
// vector compare wider than the registers is lowered element by element.
#define GK_MINMAX(W, TARGET)                                                              \
	typedef float gk_mm_vf##W __attribute__((vector_size(4 * W)));                      \
	typedef int32_t gk_mm_vi##W __attribute__((vector_size(4 * W)));                    \
	TARGET static void gk_minmax_f32_w##W(const float *x, long n, float *lo_out, float *hi_out) { \
		gk_mm_vf##W lo = {0}, hi = {0};                                                   \
		gk_mm_vi##W nanv = {0};                                                           \
		long i = 0;                                                                       \
		for (; i + W <= n; i += W) {                                                      \
			gk_mm_vf##W v;                                                                \
			__builtin_memcpy(&v, x + i, sizeof v);                                        \
			gk_mm_vi##W lt = v < lo, gt = v > hi;                                         \
			lo = (gk_mm_vf##W)(((gk_mm_vi##W)v & lt) | ((gk_mm_vi##W)lo & ~lt));          \
			hi = (gk_mm_vf##W)(((gk_mm_vi##W)v & gt) | ((gk_mm_vi##W)hi & ~gt));          \
			nanv |= v != v;                                                               \
		}                                                                                 \
		float l = lo[0], h = hi[0];                                                       \
		int nan = nanv[0] != 0;                                                           \
		for (int j = 1; j < W; j++) {                                                     \
			l = lo[j] < l ? lo[j] : l;                                                    \
			h = hi[j] > h ? hi[j] : h;                                                    \
			nan |= nanv[j] != 0;                                                          \
		}                                                                                 \
		for (; i < n; i++) {                                                              \
			float v = x[i];                                                               \
			l = v < l ? v : l;                                                            \
			h = v > h ? v : h;                                                            \
			nan |= v != v;                                                                \
		}                                                                                 \
		if (nan) l = h = __builtin_nanf("");                                              \
		*lo_out = l;                                                                      \
		*hi_out = h;                                                                      \
	}
GK_MINMAX(16, __attribute__((target("avx512f"))))
GK_MINMAX(8, __attribute__((target("avx2"))))
GK_MINMAX(4, )
static void gk_minmax_f32(const float *x, long n, float *lo_out, float *hi_out) {
	switch (gk_ew_isa()) {
	case GK_ISA_AVX512: gk_minmax_f32_w16(x, n, lo_out, hi_out); break;
	case GK_ISA_AVX2: gk_minmax_f32_w8(x, n, lo_out, hi_out); break;
	default: gk_minmax_f32_w4(x, n, lo_out, hi_out); break;
	}
}
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

// dequantize8Run dequantizes the 8-bit x (int8 when signed) into y per tensor.
func dequantize8Run(y []float32, x []byte, signed bool, zp int, scale float32) {
	if len(x) == 0 {
		return
	}
	sg := 0
	if signed {
		sg = 1
	}
	C.gk_dequantize8_f32(fp(y), (*C.uint8_t)(unsafe.Pointer(&x[0])), C.long(len(x)), C.int(sg), C.int(zp), C.float(scale))
}

// minMaxRun returns min(0, xs...) and max(0, xs...) (NaN if any is NaN).
func minMaxRun(xs []float32) (lo, hi float32) {
	if len(xs) == 0 {
		return 0, 0
	}
	var l, h C.float
	C.gk_minmax_f32(fp(xs), C.long(len(xs)), &l, &h)
	return float32(l), float32(h)
}
