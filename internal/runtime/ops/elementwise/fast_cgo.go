//go:build cgo

package elementwise

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../../cpuisa
#cgo LDFLAGS: -lm
// fp-contract off (cgo refuses the flag): a product is rounded before the
// sum it feeds, as in the Go fallbacks and onnxruntime's kernels; fmaf
// where a kernel wants one. no-trapping-math: nothing here reads FP
// exception flags, and without it gcc will not if-convert a guarded
// multiply (PRelu's x < 0 ? x*y : x stayed a branchy scalar loop on AVX2
// and SSE2); values are unchanged.
#pragma GCC optimize("fp-contract=off", "no-trapping-math")
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include "gk_isa.h"
#include "gk_ort_math.h"
#include "gk_actvec.h"

// The kernels are compiled three times (GK_ISA_VARIANTS) and run at the
// package's level, gk_ew_isa: the CPU's best unless GKCONV_CPU_ISA forces a
// lower one. The binary runs on CPUs without AVX-512.
GK_ISA_LEVEL(gk_ew)

enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_SQDIFF, B_PRELU };

#define BIN_LOOPS(EXPR) \
	if (sa && sb) { for (long i = 0; i < n; i++) { float x = a[i], y = b[i]; d[i] = (EXPR); } } \
	else if (sb) { float x = a[0]; for (long i = 0; i < n; i++) { float y = b[i]; d[i] = (EXPR); } } \
	else if (sa) { float y = b[0]; for (long i = 0; i < n; i++) { float x = a[i]; d[i] = (EXPR); } } \
	else { float x = a[0], y = b[0]; float v = (EXPR); for (long i = 0; i < n; i++) d[i] = v; }

// sa, sb: 1 when the operand advances with i, 0 when it is a broadcast scalar.
GK_ISA_BODY void gk_binary_f32_body(int op, float *d, const float *a, int sa, const float *b, int sb, long n) {
	switch (op) {
	case B_ADD: BIN_LOOPS(x + y) break;
	case B_SUB: BIN_LOOPS(x - y) break;
	case B_MUL: BIN_LOOPS(x * y) break;
	case B_DIV: BIN_LOOPS(x / y) break;
	// NaN propagates as ONNX Max/Min do.
	case B_MAX: BIN_LOOPS((x != x || x > y) ? x : y) break;
	case B_MIN: BIN_LOOPS((x != x || x < y) ? x : y) break;
	case B_SQDIFF: BIN_LOOPS((x - y) * (x - y)) break;
	// x < 0 keeps NaN and -0 as they are (arith's opPReLU).
	case B_PRELU: BIN_LOOPS(x < 0 ? x * y : x) break;
	}
}
GK_ISA_VARIANTS(gk_ew_isa(), gk_binary_f32, (int op, float *d, const float *a, int sa,
	const float *b, int sb, long n),
	(op, d, a, sa, b, sb, n))

// gk_binary_rows_f32: rows rows of n elements; the full operand advances
// with the output, the other holds one value per row (an [N,C,H,W] tensor
// against an [N,C,1,1] one: squeeze-excite's channel scale). aFull says
// which operand is the full one. One call covers every row, so the per-row
// cost is a loop iteration, not a cgo call.
GK_ISA_BODY void gk_binary_rows_f32_body(int op, float *d, const float *a, const float *b, int aFull, long rows, long n) {
	for (long r = 0; r < rows; r++) {
		if (aFull) gk_binary_f32_body(op, d + r * n, a + r * n, 1, b + r, 0, n);
		else gk_binary_f32_body(op, d + r * n, a + r, 0, b + r * n, 1, n);
	}
}
GK_ISA_VARIANTS(gk_ew_isa(), gk_binary_rows_f32, (int op, float *d, const float *a, const float *b, int aFull,
	long rows, long n),
	(op, d, a, b, aFull, rows, n))

// gk_exp: e^x, branch-free so it vectorises, with its fused multiply-adds
// written as fmaf: one vfmadd in the FMA variants (the loops calling it are
// GK_ISA_VARIANTS_FMA), libm's correctly rounded fmaf in the portable one,
// so every ISA level gives the same bits (fp-contract is off: nothing else
// is fused). x = n ln2 + r with n = round(x log2e) (the 1.5*2^23 shifter)
// and r from ln2 in two parts by FMA, |r| <= ln2/2; e^r = 1 + r + r^2 P(r)
// with Cephes' degree-5 P; 2^n applied as two factors 2^(n>>1) 2^(n-(n>>1))
// so that n = 128 and the subnormal results (x down to -103.97) come out
// with one rounding. x is clamped to [-104, 89]: beyond them the result is
// 0 or +inf. NaN passes the clamps and the arithmetic. Within 1.5 ulps of
// the float64 exp over every normal result, subnormal ones within 1 ulp
// of their own spacing (TestTanhExpAccuracy).
static inline float gk_exp(float x) {
	float c = x < -104.0f ? -104.0f : x;
	c = c > 89.0f ? 89.0f : c;
	const float shifter = 12582912.0f;
	const float n = fmaf(c, 1.44269504088896341f, shifter) - shifter;
	// ln2 = 0.693147182464599609375 (its float) - 1.9046542999577e-9
	float r = fmaf(n, -0.693147182464599609375f, c);
	r = fmaf(n, 1.9046542999577e-9f, r);
	float p = fmaf(1.9875691500E-4f, r, 1.3981999507E-3f);
	p = fmaf(p, r, 8.3334519073E-3f);
	p = fmaf(p, r, 4.1665795894E-2f);
	p = fmaf(p, r, 1.6666665459E-1f);
	p = fmaf(p, r, 5.0000001201E-1f);
	const float y = fmaf(p, r * r, r) + 1.0f;
	const int32_t k = (int32_t)n, k1 = k >> 1, k2 = k - k1;
	union { uint32_t u; float f; } s1, s2;
	s1.u = (uint32_t)(k1 + 127) << 23;
	s2.u = (uint32_t)(k2 + 127) << 23;
	return y * s1.f * s2.f;
}

// GK_EXP_POLY is gk_exp's reduction and polynomial on vectors V of one
// intrinsic family P (_mm512, _mm256) from the clamped c: n and e^r.
#define GK_EXP_POLY(P, V, c, n, y)                                                                  \
	const V n = P##_sub_ps(P##_fmadd_ps(c, P##_set1_ps(1.44269504088896341f), P##_set1_ps(12582912.0f)), \
		P##_set1_ps(12582912.0f));                                                                \
	V r_ = P##_fmadd_ps(n, P##_set1_ps(-0.693147182464599609375f), c);                              \
	r_ = P##_fmadd_ps(n, P##_set1_ps(1.9046542999577e-9f), r_);                                     \
	V p_ = P##_fmadd_ps(P##_set1_ps(1.9875691500E-4f), r_, P##_set1_ps(1.3981999507E-3f));         \
	p_ = P##_fmadd_ps(p_, r_, P##_set1_ps(8.3334519073E-3f));                                       \
	p_ = P##_fmadd_ps(p_, r_, P##_set1_ps(4.1665795894E-2f));                                       \
	p_ = P##_fmadd_ps(p_, r_, P##_set1_ps(1.6666665459E-1f));                                       \
	p_ = P##_fmadd_ps(p_, r_, P##_set1_ps(5.0000001201E-1f));                                       \
	const V y = P##_add_ps(P##_fmadd_ps(p_, P##_mul_ps(r_, r_), r_), P##_set1_ps(1.0f));

// gk_exp16 is gk_exp on 16 lanes with the same bits (all 2^32 inputs
// compared): the clamps as max/min with x the second operand, so NaN passes
// as there, and 2^n by vscalefps, one rounding as the two factors give.
// gcc's vectorisation of gk_exp ran twice as slow on Zen 5 (the clamps as
// compare+blend pairs, the factors as integer shifts): 0.20 against
// 0.10 ms for 802816 elements.
__attribute__((target("avx512f,fma"))) static inline __m512 gk_exp16(__m512 x) {
	const __m512 c = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
	GK_EXP_POLY(_mm512, __m512, c, n, y)
	return _mm512_scalef_ps(y, n);
}

// GK_MAP2 applies F (V -> V, W lanes of intrinsic family P) to s[i..] into
// d[i..] two vectors at a time while 2W remain: the two chains overlap
// (20% faster than one vector a time for gk_exp16 and gk_exp8 on Zen 5).
#define GK_MAP2(P, V, W, F)                                                                        \
	for (; i + 2 * (W) <= n; i += 2 * (W)) {                                                        \
		const V a_ = F(P##_loadu_ps(s + i)), b_ = F(P##_loadu_ps(s + i + (W)));                     \
		P##_storeu_ps(d + i, a_);                                                                   \
		P##_storeu_ps(d + i + (W), b_);                                                             \
	}

// GK_MAP16 is d[i] = F(s[i]) over [0, n) with 16-lane F: GK_MAP2, then
// the rest (under 32) through lane masks.
#define GK_MAP16(F)                                                                                \
	long i = 0;                                                                                     \
	GK_MAP2(_mm512, __m512, 16, F)                                                                  \
	for (; i < n; i += 16) {                                                                        \
		const __mmask16 m = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);               \
		_mm512_mask_storeu_ps(d + i, m, F(_mm512_maskz_loadu_ps(m, s + i)));                        \
	}

__attribute__((target("avx512f,fma"))) static void gk_exp_f32_avx512(float *d, const float *s, long n) {
	GK_MAP16(gk_exp16)
}

// GK_ORT_ERF is gk_ort_erf on vectors V of intrinsic family P (integer
// ops P##_..._##SI), the same bits (all 2^32 inputs compared, for both
// widths): the clamps as vminps/vmaxps in MLAS's operand order, the two
// polynomials for every lane, SPLIT(a, r, small, b) declaring small
// (r where a < 0.921875, else 0) and b (a elsewhere, else 0). 1.2x gcc's
// vectorisation of gk_ort_erf on Zen 5 at AVX-512.
#define GK_ORT_ERF(P, V, SI, SPLIT, x)                                                              \
	const V ab_ = P##_castsi##SI##_ps(P##_and_si##SI(P##_castps_si##SI(x), P##_set1_epi32(0x7fffffff))); \
	const V sign_ = P##_castsi##SI##_ps(P##_and_si##SI(P##_castps_si##SI(x),                           \
		P##_set1_epi32((int)0x80000000u)));                                                         \
	const V a = P##_min_ps(ab_, P##_set1_ps(3.925f));                                                 \
	const V sq_ = P##_mul_ps(a, a);                                                                   \
	V r = P##_fmadd_ps(P##_set1_ps(-5.99104969e-4f), sq_, P##_set1_ps(4.99339588e-3f));              \
	r = P##_fmadd_ps(r, sq_, P##_set1_ps(-2.67667342e-2f));                                          \
	r = P##_fmadd_ps(r, sq_, P##_set1_ps(1.12818025e-1f));                                           \
	r = P##_fmadd_ps(r, sq_, P##_set1_ps(-3.76124859e-1f));                                          \
	r = P##_fmadd_ps(r, sq_, P##_set1_ps(1.28379151e-1f));                                           \
	r = P##_fmadd_ps(r, a, a);                                                                        \
	SPLIT(a, r, small, b)                                                                             \
	V q_ = P##_fmadd_ps(P##_set1_ps(1.72948930e-5f), b, P##_set1_ps(-3.83208680e-4f));               \
	q_ = P##_fmadd_ps(q_, b, P##_set1_ps(3.88393435e-3f));                                           \
	q_ = P##_fmadd_ps(q_, b, P##_set1_ps(-2.42545605e-2f));                                          \
	q_ = P##_fmadd_ps(q_, b, P##_set1_ps(1.06777847e-1f));                                           \
	q_ = P##_fmadd_ps(q_, b, P##_set1_ps(6.34846687e-1f));                                           \
	q_ = P##_fmadd_ps(q_, b, P##_set1_ps(1.28717512e-1f));                                           \
	q_ = P##_fmadd_ps(q_, b, b);                                                                      \
	q_ = P##_max_ps(P##_sub_ps(P##_setzero_ps(), q_), P##_set1_ps(-88.3762626647949f));              \
	const V t_ = P##_sub_ps(P##_fmadd_ps(P##_set1_ps(1.44269504088896341f), q_, P##_set1_ps(1.25829120e+7f)), \
		P##_set1_ps(1.25829120e+7f));                                                               \
	V f_ = P##_fmadd_ps(P##_set1_ps(-6.93145752e-1f), t_, q_);                                        \
	f_ = P##_fmadd_ps(t_, P##_set1_ps(-1.42860677e-6f), f_);                                          \
	V y_ = P##_fmadd_ps(P##_set1_ps(1.38319808e-3f), f_, P##_set1_ps(8.37550033e-3f));               \
	y_ = P##_fmadd_ps(y_, f_, P##_set1_ps(4.16689515e-2f));                                           \
	y_ = P##_fmadd_ps(y_, f_, P##_set1_ps(1.66664466e-1f));                                           \
	y_ = P##_fmadd_ps(y_, f_, P##_set1_ps(4.99999851e-1f));                                           \
	y_ = P##_fmadd_ps(y_, f_, P##_set1_ps(1.0f));                                                     \
	y_ = P##_fmadd_ps(y_, f_, P##_set1_ps(1.0f));                                                     \
	const V p2_ = P##_castsi##SI##_ps(P##_slli_epi32(                                                \
		P##_add_epi32(P##_cvttps_epi32(t_), P##_set1_epi32(127)), 23));                             \
	y_ = P##_sub_ps(P##_set1_ps(1.0f), P##_mul_ps(y_, p2_));                                          \
	return P##_castsi##SI##_ps(P##_or_si##SI(P##_or_si##SI(P##_castps_si##SI(y_),                    \
		P##_castps_si##SI(small)), P##_castps_si##SI(sign_)));

#define GK_ERF_SPLIT16(a, r, small, b)                                                              \
	const __mmask16 big_ = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.921875f), _CMP_GE_OQ);              \
	const __m512 small = _mm512_maskz_mov_ps((__mmask16)~big_, r), b = _mm512_maskz_mov_ps(big_, a);
#define GK_ERF_SPLIT8(a, r, small, b)                                                               \
	const __m256 big_ = _mm256_cmp_ps(a, _mm256_set1_ps(0.921875f), _CMP_GE_OQ);                      \
	const __m256 small = _mm256_andnot_ps(big_, r), b = _mm256_and_ps(big_, a);

__attribute__((target("avx512f,fma"))) static inline __m512 gk_ort_erf16(__m512 x) {
	GK_ORT_ERF(_mm512, __m512, 512, GK_ERF_SPLIT16, x)
}
__attribute__((target("avx2,fma"))) static inline __m256 gk_ort_erf8(__m256 x) {
	GK_ORT_ERF(_mm256, __m256, 256, GK_ERF_SPLIT8, x)
}

__attribute__((target("avx2,fma"))) static void gk_erf_f32_avx2(float *d, const float *s, long n) {
	long i = 0;
	GK_MAP2(_mm256, __m256, 8, gk_ort_erf8)
	for (; i < n; i++) d[i] = gk_ort_erf(s[i]);
}

__attribute__((target("avx512f,fma"))) static void gk_erf_f32_avx512(float *d, const float *s, long n) {
	GK_MAP16(gk_ort_erf16)
}

// Sigmoid as logistic_512/logistic_256 (gk_actvec.h, the conv epilogue's):
// gk_ort_logistic's bits (all 2^32 inputs compared), 2.3x gcc's
// vectorisation of it on Zen 5 at AVX-512.
__attribute__((target("avx512f,fma"))) static inline __m512 gk_logistic16(__m512 x) { return logistic_512(x, 0); }
__attribute__((target("avx2,fma"))) static inline __m256 gk_logistic8(__m256 x) { return logistic_256(x, 0); }
__attribute__((target("avx512f,fma"))) static void gk_sigmoid_f32_avx512(float *d, const float *s, long n) {
	GK_MAP16(gk_logistic16)
}
__attribute__((target("avx2,fma"))) static void gk_sigmoid_f32_avx2(float *d, const float *s, long n) {
	long i = 0;
	GK_MAP2(_mm256, __m256, 8, gk_logistic8)
	for (; i < n; i++) d[i] = gk_ort_logistic(s[i]);
}

// gk_exp8 is gk_exp on 8 AVX2 lanes with the same bits (all 2^32 inputs
// compared): the clamps as gk_exp16's, 2^n as gk_exp's two factors.
// 1.4x gcc's vectorisation of gk_exp (Zen 5 forced to AVX2).
__attribute__((target("avx2,fma"))) static inline __m256 gk_exp8(__m256 x) {
	const __m256 c = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-104.0f), x));
	GK_EXP_POLY(_mm256, __m256, c, n, y)
	const __m256i k = _mm256_cvttps_epi32(n), k1 = _mm256_srai_epi32(k, 1), k2 = _mm256_sub_epi32(k, k1);
	const __m256i bias = _mm256_set1_epi32(127);
	const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
	const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
	return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
}

__attribute__((target("avx2,fma"))) static void gk_exp_f32_avx2(float *d, const float *s, long n) {
	long i = 0;
	GK_MAP2(_mm256, __m256, 8, gk_exp8)
	for (; i < n; i++) d[i] = gk_exp(s[i]);
}

// gk_log: Cephes logf, branch-free so it vectorises (0.83 ulps at most from
// the float64 log over every positive float32; TestLogMishAccuracy): x = m 2^e with m in [sqrt(1/2),
// sqrt(2)), log(1 + z) for z = m - 1 by a degree-9 polynomial, e ln2 added
// in two parts. Subnormals are scaled by 2^23 first; log(0) = -inf, log of
// a negative number NaN, log(inf) = inf.
static inline float gk_log(float x) {
	union { uint32_t u; float f; } v, m;
	const int sub = x < 1.17549435e-38f;
	v.f = sub ? x * 8388608.0f : x;
	int e = (int)((v.u >> 23) & 0xff) - 127 - (sub ? 23 : 0);
	m.u = (v.u & 0x007fffffu) | 0x3f800000u;
	const int big = m.f > 1.41421356237f;
	float z = (big ? m.f * 0.5f : m.f) - 1.0f;
	e += big;
	float z2 = z * z;
	float p = 7.0376836292E-2f;
	p = p * z - 1.1514610310E-1f;
	p = p * z + 1.1676998740E-1f;
	p = p * z - 1.2420140846E-1f;
	p = p * z + 1.4249322787E-1f;
	p = p * z - 1.6668057665E-1f;
	p = p * z + 2.0000714765E-1f;
	p = p * z - 2.4999993993E-1f;
	p = p * z + 3.3333331174E-1f;
	const float fe = (float)e;
	float y = z * z2 * p;
	y = y + fe * -2.12194440e-4f;
	y = y - 0.5f * z2;
	float r = z + y;
	r = r + fe * 0.693359375f;
	r = x == INFINITY ? x : r;
	r = x == 0.0f ? -INFINITY : r;
	r = x < 0.0f ? NAN : r;
	return x != x ? x : r;
}

// gk_mish: x tanh(softplus(x)) = x n / (n + 2) with n = e^x (e^x + 2)
// (tanh(log(1 + e^x)) without the log); x itself above 20, where that is
// x to float32 precision and n would overflow. Within 4.5 ulps of the
// float64 formula (every 7th float32 checked).
static inline float gk_mish(float x) {
	float e = gk_exp(x > 20.0f ? 20.0f : x);
	float n = e * (e + 2.0f);
	float r = x * (n / (n + 2.0f));
	return x > 20.0f ? x : r;
}

// gk_sincos: Cephes sinf/cosf, branch-free so it vectorises, for |x| <=
// 8192 (the three-part pi/4 reduction's range; larger arguments go to libm
// in a second pass, gk_trig_fixup). cos selects the other polynomial and
// sign pattern: j is the octant of |x|. Within 1.31 ulps of the float64
// functions, or 2^-24 absolute near their zeros (every third float32 of the
// range checked once in C).
static inline float gk_sincos(float x, int cosine) {
	const float ax = x < 0 ? -x : x;
	int j = (int)(ax * 1.27323954473516f);
	j = (j + 1) & ~1;
	const float y = (float)j;
	const float z = ((ax - y * 0.78515625f) - y * 2.4187564849853515625e-4f) - y * 3.77489497744594108e-8f;
	const float z2 = z * z;
	const float ps = ((-1.9515295891E-4f * z2 + 8.3321608736E-3f) * z2 - 1.6666654611E-1f) * z2 * z + z;
	const float pc = ((2.443315711809948E-5f * z2 - 1.388731625493765E-3f) * z2 + 4.166664568298827E-2f) * z2 * z2 - 0.5f * z2 + 1.0f;
	j &= 7;
	int neg = j > 3;
	j = neg ? j - 4 : j;
	const int other = j == 1 || j == 2; // the quadrants where sin takes cos's polynomial and back
	float r;
	if (cosine) {
		neg ^= j > 1;
		r = other ? ps : pc;
	} else {
		neg ^= x < 0;
		r = other ? pc : ps;
	}
	return neg ? -r : r;
}

// gk_trig_fixup recomputes the elements of d whose argument is outside
// gk_sincos's range (|x| > 8192, infinities, NaN) with libm in double.
static void gk_trig_fixup(float *d, const float *s, long n, int cosine) {
	for (long i = 0; i < n; i++) {
		const float x = s[i];
		if (!(x <= 8192.0f && x >= -8192.0f)) d[i] = cosine ? (float)cos((double)x) : (float)sin((double)x);
	}
}

static inline float gk_tanh(float x) {
	float ax = x < 0 ? -x : x;
	// Small |x|: odd polynomial (Cephes tanhf); large: 1 - 2/(e^2x + 1).
	float z = x * x;
	float p = -5.70498872745E-3f;
	p = p * z + 2.06390887954E-2f;
	p = p * z - 5.37397155531E-2f;
	p = p * z + 1.33314422036E-1f;
	p = p * z - 3.33332819422E-1f;
	float small = x + x * z * p;
	float e = gk_exp(2.0f * ax);
	float big = 1.0f - 2.0f / (e + 1.0f);
	big = x < 0 ? -big : big;
	return ax < 0.625f ? small : big;
}

// gk_erfc_pos: erfc(a) for a >= 0 with relative error about 1.2e-7
// (Numerical Recipes erfcc), so GeLU's negative tail stays accurate.
static inline float gk_erfc_pos(float a) {
	float t = 1.0f / (1.0f + 0.5f * a);
	float p = t * (-0.82215223f + t * 0.17087277f);
	p = t * (1.48851587f + p);
	p = t * (-1.13520398f + p);
	p = t * (0.27886807f + p);
	p = t * (-0.18628806f + p);
	p = t * (0.09678418f + p);
	p = t * (0.37409196f + p);
	p = t * (1.00002368f + p);
	return t * gk_exp(-a * a - 1.26551223f + p);
}


// gk_gelu: 0.5 x (1 + erf(x/sqrt2)) written with erfc so 1 + erf(u) for
// negative u does not cancel.
static inline float gk_gelu(float x) {
	float u = x * 0.70710678118654752f;
	float c = gk_erfc_pos(u < 0 ? -u : u);
	return x < 0 ? 0.5f * x * c : 0.5f * x * (2.0f - c);
}

enum { U_RELU, U_SIGMOID, U_TANH, U_EXP, U_ERF, U_GELU, U_GELU_TANH, U_LOG, U_MISH, U_SIN, U_COS };

GK_ISA_BODY void gk_unary_f32_body(int op, float *d, const float *s, long n) {
	switch (op) {
	case U_RELU: for (long i = 0; i < n; i++) { float x = s[i]; d[i] = x > 0 ? x : (x != x ? x : 0.0f); } break;
	case U_SIGMOID:
		if (gk_ew_isa() == GK_ISA_AVX512) gk_sigmoid_f32_avx512(d, s, n);
		else if (gk_ew_isa() == GK_ISA_AVX2) gk_sigmoid_f32_avx2(d, s, n);
		else for (long i = 0; i < n; i++) d[i] = gk_ort_logistic(s[i]);
		break;
	// onnxruntime's rational Tanh (gk_ort_math.h): its bits, one division
	// and no exponential
	case U_TANH: for (long i = 0; i < n; i++) d[i] = gk_ort_tanh(s[i]); break;
	case U_EXP:
		if (gk_ew_isa() == GK_ISA_AVX512) gk_exp_f32_avx512(d, s, n);
		else if (gk_ew_isa() == GK_ISA_AVX2) gk_exp_f32_avx2(d, s, n);
		else for (long i = 0; i < n; i++) d[i] = gk_exp(s[i]);
		break;
	case U_ERF:
		if (gk_ew_isa() == GK_ISA_AVX512) gk_erf_f32_avx512(d, s, n);
		else if (gk_ew_isa() == GK_ISA_AVX2) gk_erf_f32_avx2(d, s, n);
		else for (long i = 0; i < n; i++) d[i] = gk_ort_erf(s[i]);
		break;
	case U_GELU: for (long i = 0; i < n; i++) d[i] = gk_gelu(s[i]); break;
	case U_LOG: for (long i = 0; i < n; i++) d[i] = gk_log(s[i]); break;
	case U_MISH: for (long i = 0; i < n; i++) d[i] = gk_mish(s[i]); break;
	case U_SIN: for (long i = 0; i < n; i++) d[i] = gk_sincos(s[i], 0); gk_trig_fixup(d, s, n, 0); break;
	case U_COS: for (long i = 0; i < n; i++) d[i] = gk_sincos(s[i], 1); gk_trig_fixup(d, s, n, 1); break;
	case U_GELU_TANH: for (long i = 0; i < n; i++) { float x = s[i];
		d[i] = 0.5f * x * (1.0f + gk_tanh(0.79788456080286536f * (x + 0.044715f * x * x * x))); } break;
	}
}
// FMA in the AVX2 variant too: erf and the logistic are fmaf chains
GK_ISA_VARIANTS_FMA(gk_ew_isa(), gk_unary_f32, (int op, float *d, const float *s, long n),
	(op, d, s, n))

// The exponential units with attributes, in float32 on gk_exp as
// onnxruntime's Eigen functors write them (exp(x) - 1, not expm1): Elu
// (alpha), Selu (alpha, gamma), Celu (alpha).
enum { UP_ELU, UP_SELU, UP_CELU };

GK_ISA_BODY void gk_unary_param_f32_body(int op, float *d, const float *s, long n, float a, float b) {
	switch (op) {
	case UP_ELU: for (long i = 0; i < n; i++) { float x = s[i]; float e = a * (gk_exp(x) - 1.0f); d[i] = x < 0 ? e : x; } break;
	case UP_SELU: for (long i = 0; i < n; i++) { float x = s[i]; float e = b * (a * gk_exp(x) - a); d[i] = x > 0 ? b * x : e; } break;
	case UP_CELU: { const float inv = 1.0f / a; for (long i = 0; i < n; i++) { float x = s[i];
		float e = a * (gk_exp(x * inv) - 1.0f); float p = x > 0 ? x : 0.0f; d[i] = x != x ? x : p + (e < 0 ? e : 0.0f); } } break;
	}
}
GK_ISA_VARIANTS_FMA(gk_ew_isa(), gk_unary_param_f32, (int op, float *d, const float *s, long n, float a, float b),
	(op, d, s, n, a, b))

// Float32 sums in onnxruntime's order (see ort_sum.go): each row of n
// elements starting at element offset off0 + r*n of its tensor is summed
// as Eigen's redux does with 4-float packets, two accumulators
// (gk_ort_sum_row_f32, shared with the fused kernels); mean divides by n.
GK_ISA_BODY void gk_sum_rows_f32_body(float *d, const float *s, long rows, long n, long off0, int mean) {
	for (long r = 0; r < rows; r++) {
		float res = gk_ort_sum_row_f32(s + r * n, n, off0 + r * n);
		d[r] = mean ? res / (float)n : res;
	}
}
GK_ISA_VARIANTS(gk_ew_isa(), gk_sum_rows_f32, (float *d, const float *s, long rows, long n,
	long off0, int mean),
	(d, s, rows, n, off0, mean))

// Sums over the middle dim of [outer, k, inner], accumulating in double
// (onnxruntime's order here is not matched yet: see ort_sum.go); mean
// divides by k.
GK_ISA_BODY void gk_sum_mid_f32_body(float *d, const float *s, long outer, long k, long inner, double *acc, int mean) {
	for (long o = 0; o < outer; o++) {
		for (long j = 0; j < inner; j++) acc[j] = 0;
		const float *x = s + o * k * inner;
		for (long r = 0; r < k; r++, x += inner)
			for (long j = 0; j < inner; j++) acc[j] += x[j];
		for (long j = 0; j < inner; j++) d[o * inner + j] = (float)(mean ? acc[j] / (double)k : acc[j]);
	}
}
GK_ISA_VARIANTS(gk_ew_isa(), gk_sum_mid_f32, (float *d, const float *s, long outer, long k,
	long inner, double *acc, int mean),
	(d, s, outer, k, inner, acc, mean))

// gk_softmax_sums_avx512 is the portable loops' max and exp sums (and the
// exps into y unless logsm) on 16-lane vectors: the same lanes, order and
// bits (vmaxps(x, m) is x > m ? x : m), gk_exp16 for gk_exp.
__attribute__((target("avx512f,fma"))) static void gk_softmax_sums_avx512(float *y, const float *x, long n,
	int logsm, float *m, float *acc) {
	__m512 mv = _mm512_set1_ps(-INFINITY);
	long i = 0;
	for (; i + 16 <= n; i += 16) mv = _mm512_max_ps(_mm512_loadu_ps(x + i), mv);
	_mm512_storeu_ps(m, mv);
	for (; i < n; i++) m[0] = x[i] > m[0] ? x[i] : m[0];
	float mx = m[0];
	for (int j = 1; j < 16; j++) mx = m[j] > mx ? m[j] : mx;
	if (mx == -INFINITY) mx = 0;
	m[0] = mx;
	const __m512 mxv = _mm512_set1_ps(mx);
	__m512 av = _mm512_setzero_ps();
	for (i = 0; i + 16 <= n; i += 16) {
		const __m512 e = gk_exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), mxv));
		if (!logsm) _mm512_storeu_ps(y + i, e);
		av = _mm512_add_ps(av, e);
	}
	_mm512_storeu_ps(acc, av);
	for (; i < n; i++) {
		const float e = gk_exp(x[i] - mx);
		if (!logsm) y[i] = e;
		acc[0] += e;
	}
}

// gk_arg_block_f32 is argRows on one block of w <= 256 positions of float32
// rows inner apart: the best value and index of each position over the k
// rows, with argRows' comparisons (mode 0 >, 1 >=, 2 <, 3 <=) as selects,
// so it vectorises (the Go loop branched on the data: 1.6x onnxruntime's
// ArgMax over 64 channels of 112x112).
GK_ISA_BODY void gk_arg_block_f32_body(int64_t *d, const float *s, long k, long inner, int w, int mode) {
	float bv[256];
	int32_t bi[256];
	for (int j = 0; j < w; j++) bv[j] = s[j], bi[j] = 0;
	for (long i = 1; i < k; i++) {
		const float *row = s + i * inner;
		const int32_t ii = (int32_t)i;
#define ARG_LOOP(CMP) for (int j = 0; j < w; j++) { const float v = row[j]; const int m = v CMP bv[j]; \
		bv[j] = m ? v : bv[j]; bi[j] = m ? ii : bi[j]; }
		switch (mode) {
		case 0: ARG_LOOP(>) break;
		case 1: ARG_LOOP(>=) break;
		case 2: ARG_LOOP(<) break;
		default: ARG_LOOP(<=) break;
		}
#undef ARG_LOOP
	}
	for (int j = 0; j < w; j++) d[j] = bi[j];
}
GK_ISA_VARIANTS(gk_ew_isa(), gk_arg_block_f32, (int64_t *d, const float *s, long k, long inner, int w, int mode),
	(d, s, k, inner, w, mode))

GK_ISA_BODY void gk_softmax_rows_f32_body(float *d, const float *s, long rows, long n, int logsm) {
	for (long r = 0; r < rows; r++) {
		const float *x = s + r * n;
		float *y = d + r * n;
		float m[16];
		float acc[16] = {0};
		long i = 0;
		float mx;
		if (gk_ew_isa() == GK_ISA_AVX512) {
			gk_softmax_sums_avx512(y, x, n, logsm, m, acc);
			mx = m[0];
			goto normalise;
		}
		for (int j = 0; j < 16; j++) m[j] = -INFINITY;
		for (; i + 16 <= n; i += 16)
			for (int j = 0; j < 16; j++) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
		for (; i < n; i++) m[0] = x[i] > m[0] ? x[i] : m[0];
		mx = m[0];
		for (int j = 1; j < 16; j++) mx = m[j] > mx ? m[j] : mx;
		if (mx == -INFINITY) mx = 0; // all -inf: avoid inf-inf
		i = 0;
		if (gk_ew_isa() == GK_ISA_AVX2) {
			// the exps first, into y, on gk_exp8 (the same values), then
			// the same lane sums (logsm overwrites y below)
			for (long j = 0; j < n; j++) y[j] = x[j] - mx;
			gk_exp_f32_avx2(y, y, n);
			for (; i + 16 <= n; i += 16)
				for (int j = 0; j < 16; j++) acc[j] += y[i + j];
			for (; i < n; i++) acc[0] += y[i];
		} else if (logsm) {
			for (; i + 16 <= n; i += 16)
				for (int j = 0; j < 16; j++) acc[j] += gk_exp(x[i + j] - mx);
			for (; i < n; i++) acc[0] += gk_exp(x[i] - mx);
		} else {
			for (; i + 16 <= n; i += 16)
				for (int j = 0; j < 16; j++) { float e = gk_exp(x[i + j] - mx); y[i + j] = e; acc[j] += e; }
			for (; i < n; i++) { float e = gk_exp(x[i] - mx); y[i] = e; acc[0] += e; }
		}
	normalise:;
		double sum = 0;
		for (int j = 0; j < 16; j++) sum += acc[j];
		if (logsm) {
			// (x - max) - log(sum), not x - (max + log(sum)): the latter
			// rounds at the magnitude of max (ONNX's test_logsoftmax_large_number,
			// values near 10000: 2.4e-4 off).
			float lse = (float)log(sum);
			for (i = 0; i < n; i++) y[i] = (x[i] - mx) - lse;
		} else {
			float inv = (float)(1.0 / sum);
			for (i = 0; i < n; i++) y[i] *= inv;
		}
	}
}
// FMA variants: gk_exp's fmaf is one instruction there
GK_ISA_VARIANTS_FMA(gk_ew_isa(), gk_softmax_rows_f32, (float *d, const float *s, long rows, long n,
	int logsm),
	(d, s, rows, n, logsm))
*/
import "C"

import (
	"unsafe"

	"gkconv/internal/runtime/cpuisa"
)

func init() { cpuisa.Register(func(l cpuisa.Level) { C.gk_ew_set_isa(C.int(l)) }) }

// cMin is the length below which the cgo call overhead outweighs C's speed.
const cMin = 64

func fp(s []float32) *C.float { return (*C.float)(unsafe.Pointer(unsafe.SliceData(s))) }

func f32Binary(op int, d, a []float32, sa int, b []float32, sb int) {
	if len(d) < cMin {
		goBinaryF32(op, d, a, sa, b, sb)
		return
	}
	C.gk_binary_f32(C.int(op), fp(d), fp(a), C.int(sa), fp(b), C.int(sb), C.long(len(d)))
}

// f32BinaryRows is f32Binary over rows rows of n elements where one operand
// (a when aFull, else b) is full and the other has one value per row.
func f32BinaryRows(op int, d, a, b []float32, aFull bool, rows, n int) {
	if rows*n < cMin {
		goBinaryRowsF32(op, d, a, b, aFull, rows, n)
		return
	}
	full := 0
	if aFull {
		full = 1
	}
	C.gk_binary_rows_f32(C.int(op), fp(d), fp(a), fp(b), C.int(full), C.long(rows), C.long(n))
}

func f32Unary(op int, d, s []float32) {
	if len(d) < cMin {
		goUnaryF32(op, d, s)
		return
	}
	C.gk_unary_f32(C.int(op), fp(d), fp(s), C.long(len(d)))
}

func f32UnaryParam(op int, d, s []float32, a, b float32) {
	if len(d) < cMin {
		goUnaryParamF32(op, d, s, a, b)
		return
	}
	C.gk_unary_param_f32(C.int(op), fp(d), fp(s), C.long(len(d)), C.float(a), C.float(b))
}

func f32SumRows(d, s []float32, rows, n, off0 int, mean bool) {
	if rows*n < cMin {
		goSumRowsF32(d, s, rows, n, off0, mean)
		return
	}
	C.gk_sum_rows_f32(fp(d), fp(s), C.long(rows), C.long(n), C.long(off0), cBool(mean))
}

func f32SumMid(d, s []float32, outer, k, inner int, mean bool) {
	acc := make([]float64, inner)
	C.gk_sum_mid_f32(fp(d), fp(s), C.long(outer), C.long(k), C.long(inner),
		(*C.double)(unsafe.Pointer(unsafe.SliceData(acc))), cBool(mean))
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// f32ArgBlock is argRows' block in C (gk_arg_block_f32); it reports
// whether it ran (the !cgo build keeps the Go loop).
func f32ArgBlock(d []int64, s []float32, k, inner, w int, isMax, last bool) bool {
	mode := 0
	if !isMax {
		mode = 2
	}
	if last {
		mode++
	}
	_ = d[w-1]
	_ = s[(k-1)*inner+w-1]
	C.gk_arg_block_f32((*C.int64_t)(unsafe.Pointer(&d[0])), fp(s), C.long(k), C.long(inner), C.int(w), C.int(mode))
	return true
}

func f32SoftmaxRows(d, s []float32, rows, n int, logsm bool) {
	l := 0
	if logsm {
		l = 1
	}
	C.gk_softmax_rows_f32(fp(d), fp(s), C.long(rows), C.long(n), C.int(l))
}
