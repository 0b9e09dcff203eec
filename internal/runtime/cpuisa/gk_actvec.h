#ifndef GKCONV_GK_ACTVEC_H
#define GKCONV_GK_ACTVEC_H
// Activations on one AVX-512 or AVX2 vector, shared by the convolution
// epilogue (ops/nn/conv_act.c), the kernels that apply them in registers
// (the depthwise kernels of im2col_dwconv.c and dwconv_cb_body.h) and the
// runtime's Sigmoid op (ops/elementwise), so every path of a level gives the
// same bits.
#include <immintrin.h>

// The exponential's constants, shared by exp_512 and exp_256: ln2 in two parts and Cephes' degree-7 minimax polynomial
// (with the 1 + r terms written out).
#define GK_EXP_LOG2E 1.44269504088896341f
#define GK_EXP_LN2_HI 0.693359375f
#define GK_EXP_LN2_LO (-2.12194440e-4f)
#define GK_EXP_P0 1.9875691500e-4f
#define GK_EXP_P1 1.3981999507e-3f
#define GK_EXP_P2 8.3334519073e-3f
#define GK_EXP_P3 4.1665795894e-2f
#define GK_EXP_P4 1.6666665459e-1f
#define GK_EXP_P5 5.0000001201e-1f

#define GK_ACT512 static inline __attribute__((target("avx512f"), always_inline))

// exp_512 is e^t for 16 lanes of t in [-100, 100] (NaN passes): Cephes'
// reduction and polynomial, with 2^n applied by vscalefps, which
// gives +inf above the overflow threshold and the correctly rounded
// (denormal, then 0) value below the normal range, and no clamps, integer
// moves or selects.
GK_ACT512 __m512 exp_512(__m512 t) {
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(GK_EXP_LOG2E)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(GK_EXP_LN2_HI), t);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(GK_EXP_LN2_LO), r);
    __m512 p = _mm512_set1_ps(GK_EXP_P0);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GK_EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GK_EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GK_EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GK_EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GK_EXP_P5));
    __m512 e = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(e, n);
}

// logistic_512 is sigmoid(x) (swish 0) or x*sigmoid(x) (swish 1) as
// onnxruntime computes them (MLAS MlasLogisticKernelFma3, then a Mul for
// swish): Eigen's rational polynomial p(t)/q(t) + 0.5 on t = x clamped to
// [-18, 18] with fused multiply-adds, clamped below at 0; NaN is kept
// (vmaxps/vminps return their second operand when either is NaN). The same
// bits as the runtime's Sigmoid and epi_sigmoid.
#define GK_LOGISTIC_CONSTS(set1) \
    const __typeof__(set1(0.0f)) a9 = set1(4.37031012579801e-11f), a7 = set1(1.15627324459942e-07f), \
        a5 = set1(6.08574864600143e-05f), a3 = set1(8.51377133304701e-03f), a1 = set1(2.48287947061529e-01f), \
        b10 = set1(6.10247389755681e-13f), b8 = set1(5.76102136993427e-09f), b6 = set1(6.29106785017040e-06f), \
        b4 = set1(1.70198817374094e-03f), b2 = set1(1.16817656904453e-01f), b0 = set1(9.93151921023180e-01f)
GK_ACT512 __m512 logistic_512(__m512 x, int swish) {
    GK_LOGISTIC_CONSTS(_mm512_set1_ps);
    __m512 t = _mm512_max_ps(_mm512_set1_ps(-18.0f), _mm512_min_ps(_mm512_set1_ps(18.0f), x));
    __m512 t2 = _mm512_mul_ps(t, t);
    __m512 p = _mm512_fmadd_ps(t2, a9, a7);
    p = _mm512_fmadd_ps(t2, p, a5);
    p = _mm512_fmadd_ps(t2, p, a3);
    p = _mm512_fmadd_ps(t2, p, a1);
    __m512 q = _mm512_fmadd_ps(t2, b10, b8);
    q = _mm512_fmadd_ps(t2, q, b6);
    q = _mm512_fmadd_ps(t2, q, b4);
    q = _mm512_fmadd_ps(t2, q, b2);
    q = _mm512_fmadd_ps(t2, q, b0);
    __m512 r = _mm512_add_ps(_mm512_div_ps(_mm512_mul_ps(t, p), q), _mm512_set1_ps(0.5f));
    r = _mm512_max_ps(_mm512_setzero_ps(), r);
    return swish ? _mm512_mul_ps(x, r) : r;
}

// act512_ok says whether act512 (and act256) apply activation act: none (0), RELU (1),
// SIGMOID (2), RELU6 (3), SWISH (18).
static inline int act512_ok(int act) { return act == 0 || act == 1 || act == 2 || act == 3 || act == 18; }

// act512 is epi_rows_f32's activation act (one act512_ok takes) on a vector,
// bit for bit: max(0, v) and min(6, v) return v when v is NaN, as
// x < 0 ? 0 : x does.
GK_ACT512 __m512 act512(__m512 v, int act) {
    if (act == 1 || act == 3) v = _mm512_max_ps(_mm512_setzero_ps(), v);
    if (act == 3) v = _mm512_min_ps(_mm512_set1_ps(6.0f), v);
    if (act == 2 || act == 18) v = logistic_512(v, act == 18);
    return v;
}

#define GK_ACT256 static inline __attribute__((target("avx2,fma"), always_inline))

// exp_256 is exp_512 at the AVX2 level: 2^n is applied as 2^(n>>1) *
// 2^(n - (n>>1)), both normal for t in [-104, 100], so the product
// overflows to +inf and underflows gradually like vscalefps.
GK_ACT256 __m256 exp_256(__m256 t) {
    __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(GK_EXP_LOG2E)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(GK_EXP_LN2_HI), t);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(GK_EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(GK_EXP_P0);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GK_EXP_P1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GK_EXP_P2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GK_EXP_P3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GK_EXP_P4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GK_EXP_P5));
    __m256 e = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i ni = _mm256_cvtps_epi32(n), k1 = _mm256_srai_epi32(ni, 1), k2 = _mm256_sub_epi32(ni, k1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(e, s1), s2);
}

// logistic_256 is logistic_512 at the AVX2 level.
GK_ACT256 __m256 logistic_256(__m256 x, int swish) {
    GK_LOGISTIC_CONSTS(_mm256_set1_ps);
    __m256 t = _mm256_max_ps(_mm256_set1_ps(-18.0f), _mm256_min_ps(_mm256_set1_ps(18.0f), x));
    __m256 t2 = _mm256_mul_ps(t, t);
    __m256 p = _mm256_fmadd_ps(t2, a9, a7);
    p = _mm256_fmadd_ps(t2, p, a5);
    p = _mm256_fmadd_ps(t2, p, a3);
    p = _mm256_fmadd_ps(t2, p, a1);
    __m256 q = _mm256_fmadd_ps(t2, b10, b8);
    q = _mm256_fmadd_ps(t2, q, b6);
    q = _mm256_fmadd_ps(t2, q, b4);
    q = _mm256_fmadd_ps(t2, q, b2);
    q = _mm256_fmadd_ps(t2, q, b0);
    __m256 r = _mm256_add_ps(_mm256_div_ps(_mm256_mul_ps(t, p), q), _mm256_set1_ps(0.5f));
    r = _mm256_max_ps(_mm256_setzero_ps(), r);
    return swish ? _mm256_mul_ps(x, r) : r;
}

// act256 is act512 at the AVX2 level.
GK_ACT256 __m256 act256(__m256 v, int act) {
    if (act == 1 || act == 3) v = _mm256_max_ps(_mm256_setzero_ps(), v);
    if (act == 3) v = _mm256_min_ps(_mm256_set1_ps(6.0f), v);
    if (act == 2 || act == 18) v = logistic_256(v, act == 18);
    return v;
}
#endif
