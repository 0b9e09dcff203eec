// Epilogue of the convolution paths (conv.go, conv_packed.go): the residual
// and the fused activation, on one output tile while it is in cache.
// No FP traps are enabled in this process: saying so lets GCC turn the
// selects below into blends, so the activation loops vectorise.
#pragma GCC optimize("no-trapping-math")
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "actvec.h"
#include "conv_act.h"
#include "isa.h"
#include <math.h>
#include "gk_ort_math.h"

// epi_exp is expf without a libm call, branch-free so the row loops below
// vectorise: x = n*ln2 + r, |r| <= ln2/2 (ln2 in two parts, so r is exact
// to a few ulp), e^r by Cephes' degree-7 minimax polynomial (about 1 ulp),
// times 2^n built in the exponent bits. 2^n is applied as 2^(n-1) * 2 so n
// = 128 (x just under the overflow threshold) stays representable; x above
// the threshold gives +inf, x below -87 gives 0 (e^-87 is about FLT_MIN, so
// the absolute error is below 1.2e-38), NaN stays NaN.
static inline float epi_exp(float x) {
    const float hi = 88.72283935546875f, lo = -87.0f;
    float c = x > hi ? hi : x;
    c = c < lo ? lo : c;
    const float shifter = 12582912.0f; // 1.5*2^23: adding it rounds to an integer
    float t = c * GK_EXP_LOG2E + shifter;
    float n = t - shifter;
    int32_t ti;
    memcpy(&ti, &t, 4);
    int32_t ni = ti - 0x4B400000; // n as an integer, in [-126, 128]
    float r = c - n * GK_EXP_LN2_HI;
    r = r - n * GK_EXP_LN2_LO;
    float p = GK_EXP_P0;
    p = p * r + GK_EXP_P1;
    p = p * r + GK_EXP_P2;
    p = p * r + GK_EXP_P3;
    p = p * r + GK_EXP_P4;
    p = p * r + GK_EXP_P5;
    float e = (p * r) * r + r + 1.0f;
    uint32_t sb = (uint32_t)(ni + 126) << 23;
    float s;
    memcpy(&s, &sb, 4);
    e = e * s * 2.0f;
    e = x > hi ? __builtin_inff() : e;
    return x < lo ? 0.0f : e;
}

// sigmoid and x*sigmoid(x) as onnxruntime computes them (logistic_512 in
// actvec.h, one element); fmaf is one instruction in the FMA variants.
static inline float epi_sigmoid(float x) { return gk_ort_logistic(x); }
static inline float epi_swish(float x) { return x * epi_sigmoid(x); }

// tanh: Cephes' odd polynomial below |x| = 0.625 (where 1 - 2/(e^2x+1)
// would cancel), else 1 - 2/(e^2|x|+1) with x's sign (e^2|x| = inf: 1).
static inline float epi_tanh(float x) {
    float a = x < 0.0f ? -x : x;
    float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    float small = x + x * z * p;
    float big = 1.0f - 2.0f / (epi_exp(a + a) + 1.0f);
    big = x < 0.0f ? -big : big;
    return a < 0.625f ? small : big;
}

// x*relu6(x+3)/6, as ONNX HardSwish and MindSpore's HSWISH.
static inline float epi_hswish(float x) {
    float v = x + 3.0f;
    v = v < 0.0f ? 0.0f : v;
    v = v > 6.0f ? 6.0f : v;
    return x * v / 6.0f;
}

#define AVX512 __attribute__((target("avx512f")))

// logistic_rows_512 is epi_rows_f32 for SIGMOID (2) and SWISH (18) at
// the AVX-512 level (logistic_512, actvec.h). The generic clone took 0.21 ns
// per element here, this 0.16 (swish, 64K random floats in L2, AMD Zen 5),
// with the same maximum relative error against double precision (2.6e-7).
static AVX512 void logistic_rows_512(float *y, const float *z, int rows, long n, long ld, int swish) {
    for (int j = 0; j < rows; j++) {
        float *r = y + (long)j * ld;
        const float *zr = z ? z + (long)j * ld : 0;
        long i = 0;
        // two vectors per step: the polynomial is one long dependency chain
        // (0.19 -> 0.16 ns per element; more per step gained nothing)
        for (; i + 32 <= n; i += 32) {
            __m512 x0 = _mm512_loadu_ps(r + i), x1 = _mm512_loadu_ps(r + i + 16);
            if (zr) x0 = _mm512_add_ps(x0, _mm512_loadu_ps(zr + i)), x1 = _mm512_add_ps(x1, _mm512_loadu_ps(zr + i + 16));
            _mm512_storeu_ps(r + i, logistic_512(x0, swish));
            _mm512_storeu_ps(r + i + 16, logistic_512(x1, swish));
        }
        for (; i < n; i += 16) {
            __mmask16 m = n - i >= 16 ? 0xFFFF : (__mmask16)((1u << (n - i)) - 1);
            __m512 x = _mm512_maskz_loadu_ps(m, r + i);
            if (zr) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, zr + i));
            _mm512_mask_storeu_ps(r + i, m, logistic_512(x, swish));
        }
    }
}

// logistic_rows_256 is logistic_rows_512 at the AVX2 level (logistic_256,
// actvec.h): 0.63-0.66 -> 0.47 ns per element (swish, 64K floats in L2,
// Zen 5) against the generic clone, whose one long chain per vector left
// the divider waiting.
static __attribute__((target("avx2,fma"))) void logistic_rows_256(float *y, const float *z, int rows, long n, long ld, int swish) {
    for (int j = 0; j < rows; j++) {
        float *r = y + (long)j * ld;
        const float *zr = z ? z + (long)j * ld : 0;
        long i = 0;
        for (; i + 16 <= n; i += 16) {
            __m256 x0 = _mm256_loadu_ps(r + i), x1 = _mm256_loadu_ps(r + i + 8);
            if (zr) x0 = _mm256_add_ps(x0, _mm256_loadu_ps(zr + i)), x1 = _mm256_add_ps(x1, _mm256_loadu_ps(zr + i + 8));
            _mm256_storeu_ps(r + i, logistic_256(x0, swish));
            _mm256_storeu_ps(r + i + 8, logistic_256(x1, swish));
        }
        for (; i < n; i++) {
            float v = r[i] + (zr ? zr[i] : 0.0f);
            r[i] = swish ? epi_swish(v) : epi_sigmoid(v);
        }
    }
}

// x < 0 ? 0 : x keeps NaN as NaN, as the runtime's ReLU (Go's max) does.
// The variant follows the package's ISA level (GKCONV_CPU_ISA can force
// AVX2), not only the CPU.
GK_ISA_BODY void epi_rows_f32_body(float *y, const float *z, int rows, long n, long ld, int act) {
    // Rows that follow each other are one row: a 1x1 conv on a 1x1 plane
    // (the squeeze-excite convs) hands over its output channels as rows of
    // one element, and a masked vector logistic per element took ~25 ns
    // (48 -> 1152 with SIGMOID, in cache, AVX-512: 30 -> 5.7 us;
    // efficientnet_b0's sixteen, 1 thread, sum of per-node medians: 0.26 ->
    // 0.08 ms).
    if (ld == n && rows > 1) n *= rows, rows = 1;
    if ((act == 2 || act == 18) && gk_nn_isa() >= GK_ISA_AVX512) {
        logistic_rows_512(y, z, rows, n, ld, act == 18);
        return;
    }
    if ((act == 2 || act == 18) && gk_nn_isa() >= GK_ISA_AVX2) {
        logistic_rows_256(y, z, rows, n, ld, act == 18);
        return;
    }
    for (int j = 0; j < rows; j++) {
        float *r = y + (long)j * ld;
        if (z) {
            const float *zr = z + (long)j * ld;
            for (long i = 0; i < n; i++) r[i] += zr[i];
        }
        switch (act) {
        case 1:
            for (long i = 0; i < n; i++) r[i] = r[i] < 0.0f ? 0.0f : r[i];
            break;
        case 3:
            for (long i = 0; i < n; i++) {
                float v = r[i] < 0.0f ? 0.0f : r[i];
                r[i] = v > 6.0f ? 6.0f : v;
            }
            break;
        case 2:
            for (long i = 0; i < n; i++) r[i] = epi_sigmoid(r[i]);
            break;
        case 10:
            for (long i = 0; i < n; i++) r[i] = epi_tanh(r[i]);
            break;
        case 12:
            for (long i = 0; i < n; i++) r[i] = epi_hswish(r[i]);
            break;
        case 18:
            for (long i = 0; i < n; i++) r[i] = epi_swish(r[i]);
            break;
        }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), epi_rows_f32, (float *y, const float *z, int rows, long n, long ld, int act),
                (y, z, rows, n, ld, act))
