//go:build cgo

package elementwise

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../../cpuisa
#cgo LDFLAGS: -lm
// fp-contract off (cgo refuses the flag): every product rounded before the
// sum it feeds, as in the Go reference (floatUnary); no errno from sqrt so
// the loops vectorise; no-trapping-math so a guarded product is
// if-converted (see fast_cgo.go).
#pragma GCC optimize("fp-contract=off", "no-math-errno", "no-trapping-math")
#include <math.h>
#include <immintrin.h>
#include "gk_isa.h"

GK_ISA_LEVEL(gk_ux)

// The float32 unary ops whose result is fixed by IEEE arithmetic: computed
// here in float32 where one float32 operation is the correctly rounded
// result of floatUnary's float64 formula (abs, neg, sqrt, 1/x, x*x, floor,
// ceil, round-half-even, compares), in double where the formula has two
// roundings (rsqrt, softsign, hard swish, the products with a float64
// alpha). So each value is bit for bit floatUnary's, at vector speed.
enum { X_ABS, X_NEG, X_SQRT, X_RSQRT, X_SQUARE, X_RECIP, X_FLOOR, X_CEIL, X_ROUND,
       X_RELU6, X_SIGN, X_SOFTSIGN, X_HSWISH, X_LEAKY, X_THRESH, X_HSIGMOID, X_CUBE };

GK_ISA_BODY void gk_unary_exact_f32_body(int op, float *d, const float *s, long n, double a, double b) {
	switch (op) {
	case X_ABS: for (long i = 0; i < n; i++) d[i] = fabsf(s[i]); break;
	case X_NEG: for (long i = 0; i < n; i++) d[i] = -s[i]; break;
	case X_SQRT: for (long i = 0; i < n; i++) d[i] = sqrtf(s[i]); break;
	case X_RSQRT: for (long i = 0; i < n; i++) d[i] = (float)(1.0 / sqrt((double)s[i])); break;
	case X_SQUARE: for (long i = 0; i < n; i++) d[i] = s[i] * s[i]; break;
	case X_RECIP: for (long i = 0; i < n; i++) d[i] = 1.0f / s[i]; break;
	case X_FLOOR: for (long i = 0; i < n; i++) d[i] = floorf(s[i]); break;
	case X_CEIL: for (long i = 0; i < n; i++) d[i] = ceilf(s[i]); break;
	case X_ROUND: for (long i = 0; i < n; i++) d[i] = rintf(s[i]); break;
	// relu64 keeps -0 and NaN; math.Min(v, 6) keeps NaN.
	case X_RELU6: for (long i = 0; i < n; i++) { float v = s[i]; v = v < 0 ? 0.0f : v; d[i] = v > 6 ? 6.0f : v; } break;
	case X_SIGN: for (long i = 0; i < n; i++) { float v = s[i]; d[i] = v > 0 ? 1.0f : (v < 0 ? -1.0f : v); } break;
	// onnxruntime's float32 Softsign (ortSoftsign): x * (1 / (1 + |x|)) in
	// float32, each operation rounded, as its Eigen functor computes it (and
	// the fused kernels' expression).
	case X_SOFTSIGN: for (long i = 0; i < n; i++) { float v = s[i]; d[i] = v * (1.0f / (1.0f + fabsf(v))); } break;
	// x * max(0, min(1, x/6 + 0.5)) with math.Min/Max's NaN propagation;
	// x * (1.0/6) for x/6 (a vector multiply, not a division): the same
	// float32 result for all 2^32 inputs (compared one by one).
	case X_HSWISH: for (long i = 0; i < n; i++) { double v = s[i], t = v * (1.0 / 6) + 0.5;
		t = t > 1 ? 1.0 : t; t = t < 0 ? 0.0 : t; d[i] = (float)(v * t); } break;
	case X_LEAKY: for (long i = 0; i < n; i++) { float v = s[i]; d[i] = v < 0 ? (float)(a * (double)v) : v; } break;
	// (double)v > a as a float compare, so the loop vectorises: v >= t for t
	// the least float above a (none above +inf: all zero; NaN a: t NaN, no
	// v passes, as no v exceeds NaN).
	case X_THRESH: {
		float t = (float)a;
		if ((double)t <= a) t = nextafterf(t, INFINITY);
		if (a >= INFINITY) { for (long i = 0; i < n; i++) d[i] = 0.0f; break; }
		for (long i = 0; i < n; i++) { float v = s[i]; d[i] = v >= t ? v : 0.0f; }
	} break;
	// onnxruntime's float32 HardSigmoid (ortHardSigmoid): alpha*x rounded,
	// plus beta rounded, then Go's min/max (NaN kept; max(0, -0) is +0).
	case X_HSIGMOID: { float fa = (float)a, fb = (float)b;
		for (long i = 0; i < n; i++) { float v = fa * s[i]; v = v + fb;
			v = v < 1 ? v : (v != v ? v : 1.0f); d[i] = v > 0 ? v : (v != v ? v : 0.0f); } } break;
	// Pow(x, 3): x*x is exact in double, one rounding of the product by x
	// and one to float32, as math.Pow's square-and-multiply on the same
	// mantissas: its bits.
	case X_CUBE: for (long i = 0; i < n; i++) { double v = s[i]; d[i] = (float)(v * v * v); } break;
	}
}
GK_ISA_VARIANTS(gk_ux_isa(), gk_unary_exact_f32, (int op, float *d, const float *s, long n, double a, double b),
	(op, d, s, n, a, b))

// Sqrt by intrinsics: gcc 12 keeps sqrtf's errno path (a compare and a call
// per element, so no vector loop) even under the no-math-errno pragma, and
// cgo refuses -fno-math-errno. The vector square roots are correctly
// rounded, as sqrtf is: the same bits.
__attribute__((target("avx512f"))) static void gk_sqrt_avx512(float *d, const float *s, long n) {
	long i = 0;
	for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, _mm512_sqrt_ps(_mm512_loadu_ps(s + i)));
	for (; i < n; i++) _mm_store_ss(d + i, _mm_sqrt_ss(_mm_load_ss(s + i)));
}
__attribute__((target("avx2"))) static void gk_sqrt_avx2(float *d, const float *s, long n) {
	long i = 0;
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_sqrt_ps(_mm256_loadu_ps(s + i)));
	for (; i < n; i++) _mm_store_ss(d + i, _mm_sqrt_ss(_mm_load_ss(s + i)));
}
static void gk_sqrt_base(float *d, const float *s, long n) {
	long i = 0;
	for (; i + 4 <= n; i += 4) _mm_storeu_ps(d + i, _mm_sqrt_ps(_mm_loadu_ps(s + i)));
	for (; i < n; i++) _mm_store_ss(d + i, _mm_sqrt_ss(_mm_load_ss(s + i)));
}
void gk_sqrt_f32(float *d, const float *s, long n) {
	switch (gk_ux_isa()) {
	case GK_ISA_AVX512: gk_sqrt_avx512(d, s, n); break;
	case GK_ISA_AVX2: gk_sqrt_avx2(d, s, n); break;
	default: gk_sqrt_base(d, s, n);
	}
}
*/
import "C"

import (
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
)

func init() { cpuisa.Register(func(l cpuisa.Level) { C.gk_ux_set_isa(C.int(l)) }) }

const (
	xAbs = iota
	xNeg
	xSqrt
	xRsqrt
	xSquare
	xRecip
	xFloor
	xCeil
	xRound
	xReLU6
	xSign
	xSoftsign
	xHSwish
	xLeaky
	xThresh
	xHSigmoid
	xCube
)

var exactUnaryCodes = map[string]int{
	"Abs": xAbs, "Neg": xNeg, "Sqrt": xSqrt, "Rsqrt": xRsqrt, "Square": xSquare, "Reciprocal": xRecip,
	"Floor": xFloor, "Ceil": xCeil, "Round": xRound, "ReLU6": xReLU6, "Sign": xSign, "Softsign": xSoftsign,
	"HSwish": xHSwish, "LeakyReLU": xLeaky, "ThresholdedReLU": xThresh, "HSigmoid": xHSigmoid,
}

// exactUnaryF32 returns the C loop of n's op when it has one and size
// elements are worth a cgo call: bit for bit floatUnary's value
// (ortHardSigmoid's for HSigmoid, ortSoftsign's for Softsign), at vector
// speed.
func exactUnaryF32(n *ir.Node, size int) (func(d, s []float32), bool) {
	code, ok := exactUnaryCodes[n.Op]
	if !ok || size < cMin {
		return nil, false
	}
	var a, b float64
	switch n.Op {
	case "LeakyReLU":
		a = n.Attrs.Float("alpha", 0.01)
	case "ThresholdedReLU":
		a = n.Attrs.Float("alpha", 1)
	case "HSigmoid":
		a, b = n.Attrs.Float("alpha", 0.2), n.Attrs.Float("beta", 0.5)
	}
	if code == xSqrt {
		return func(d, s []float32) {
			if len(d) > 0 {
				C.gk_sqrt_f32((*C.float)(unsafe.Pointer(unsafe.SliceData(d))), (*C.float)(unsafe.Pointer(unsafe.SliceData(s))), C.long(len(d)))
			}
		}, true
	}
	return func(d, s []float32) {
		if len(d) == 0 {
			return
		}
		C.gk_unary_exact_f32(C.int(code), (*C.float)(unsafe.Pointer(unsafe.SliceData(d))),
			(*C.float)(unsafe.Pointer(unsafe.SliceData(s))), C.long(len(d)), C.double(a), C.double(b))
	}, true
}

// cubeF32 is Pow(x, 3) over float32, arith's opPow bits; false when the
// C path does not pay (few elements).
func cubeF32(ctx *opkernel.Ctx, d, s []float32) bool {
	if len(d) < cMin {
		return false
	}
	opkernel.ParallelFor(ctx, len(d), grain/4, func(lo, hi int) {
		C.gk_unary_exact_f32(C.int(xCube), (*C.float)(unsafe.Pointer(&d[lo])),
			(*C.float)(unsafe.Pointer(&s[lo])), C.long(hi-lo), 0, 0)
	})
	return true
}
