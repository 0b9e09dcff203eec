//go:build cgo

package elementwise

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../../cpuisa
#include <immintrin.h>
#include <stdint.h>
#include "gk_isa.h"

int gk_ew_isa(void); // fast_cgo.go

// Scalar float16 <-> float32 with ir.F16ToF32/F32ToF16's values (round to
// nearest even, overflow to inf, every NaN to sign | 0x7e00).
static inline float gk_h2f_1(uint16_t h) {
	uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
	if (e == 0) {
		if (m == 0) u = s;
		else { e = 113; while (!(m & 0x400)) { m <<= 1; e--; } m &= 0x3ff; u = s | (e << 23) | (m << 13); }
	} else if (e == 31) u = s | 0x7f800000u | (m << 13);
	else u = s | ((e + 112) << 23) | (m << 13);
	float f; __builtin_memcpy(&f, &u, 4); return f;
}
static inline uint16_t gk_f2h_1(float x) {
	uint32_t b; __builtin_memcpy(&b, &x, 4);
	uint16_t s = (b >> 16) & 0x8000; int32_t e = (int32_t)((b >> 23) & 0xff) - 112; uint32_t m = b & 0x7fffff;
	if (((b >> 23) & 0xff) == 0xff) return s | (m ? 0x7e00 : 0x7c00);
	if (e >= 31) return s | 0x7c00;
	if (e <= 0) { if (e < -10) return s; m |= 0x800000; uint32_t sh = 14 - e, r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
		if (rem > half || (rem == half && (r & 1))) r++; return s | r; }
	uint32_t r = ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
	return s | r;
}

// F16C's vcvtph2ps is exact but quiets NaNs; vcvtps2ph with round-to-nearest-even gives the
// scalar's values except NaN payloads, which are redone by the scalar.
__attribute__((target("avx2,f16c"))) static void gk_h2f_f16c(float *d, const uint16_t *s, long n) {
	long i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i)));
		_mm256_storeu_ps(d + i, x);
		if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) // keep signalling payloads
			for (int j = 0; j < 8; j++) d[i + j] = gk_h2f_1(s[i + j]);
	}
	for (; i < n; i++) d[i] = gk_h2f_1(s[i]);
}
__attribute__((target("avx2,f16c"))) static void gk_f2h_f16c(uint16_t *d, const float *s, long n) {
	long i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 x = _mm256_loadu_ps(s + i);
		_mm_storeu_si128((__m128i *)(d + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
		if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
			for (int j = 0; j < 8; j++) d[i + j] = gk_f2h_1(s[i + j]);
	}
	for (; i < n; i++) d[i] = gk_f2h_1(s[i]);
}

void gk_h2f(float *d, const uint16_t *s, long n) {
	if (gk_ew_isa() >= GK_ISA_AVX2) { gk_h2f_f16c(d, s, n); return; }
	for (long i = 0; i < n; i++) d[i] = gk_h2f_1(s[i]);
}
void gk_f2h(uint16_t *d, const float *s, long n) {
	if (gk_ew_isa() >= GK_ISA_AVX2) { gk_f2h_f16c(d, s, n); return; }
	for (long i = 0; i < n; i++) d[i] = gk_f2h_1(s[i]);
}
*/
import "C"

import (
	"unsafe"

	"gkconv/internal/runtime/opkernel"
)

func init() {
	opkernel.FastF16ToF32 = func(d []float32, s []uint16) {
		if len(d) > 0 {
			C.gk_h2f((*C.float)(unsafe.Pointer(&d[0])), (*C.uint16_t)(unsafe.Pointer(&s[0])), C.long(len(d)))
		}
	}
	opkernel.FastF32ToF16 = func(d []uint16, s []float32) {
		if len(d) > 0 {
			C.gk_f2h((*C.uint16_t)(unsafe.Pointer(&d[0])), (*C.float)(unsafe.Pointer(&s[0])), C.long(len(d)))
		}
	}
}
