// Epilogue of the convolution paths (conv.go, conv_packed.go): the residual
// and the fused activation, on one output tile while it is in cache.
// No FP traps are enabled in this process: saying so lets GCC turn the
// selects below into blends, so the activation loops vectorise.
#pragma GCC optimize("no-trapping-math")
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "gk_actvec.h"
#include "conv_act.h"
#include "isa.h"
#include <math.h>
#include "gk_ort_math.h"

// sigmoid and x*sigmoid(x) as onnxruntime computes them (logistic_512 in
// gk_actvec.h, one element); fmaf is one instruction in the FMA variants.
static inline float epi_sigmoid(float x) { return gk_ort_logistic(x); }
static inline float epi_swish(float x) { return x * epi_sigmoid(x); }

// tanh as the runtime's Tanh op and onnxruntime compute it (gk_ort_tanh,
// gk_ort_math.h), so Conv+Tanh fused gives the bits of the two ops; in the
// generic clones its fmaf is libm's (correctly rounded: the same bits),
// the AVX-512 and AVX2 levels run tanh_rows_fma's FMA clones.
static inline float epi_tanh(float x) { return gk_ort_tanh(x); }

// x*relu6(x+3)/6, as ONNX HardSwish and MindSpore's HSWISH.
static inline float epi_hswish(float x) {
    float v = x + 3.0f;
    v = v < 0.0f ? 0.0f : v;
    v = v > 6.0f ? 6.0f : v;
    return x * v / 6.0f;
}

#define AVX512 __attribute__((target("avx512f")))

// logistic_rows_512 is epi_rows_f32 for SIGMOID (2) and SWISH (18) at
// the AVX-512 level (logistic_512, gk_actvec.h). The generic clone took 0.21 ns
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
// gk_actvec.h): 0.63-0.66 -> 0.47 ns per element (swish, 64K floats in L2,
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

// tanh_rows_fma is epi_rows_f32's TANH with FMA enabled, so gk_ort_tanh's
// fmaf compiles to vfmadd and the loop vectorises (in the plain avx512f
// and avx2 clones fmaf is a libm call per step). It is only gk_ort_tanh's
// explicit fmaf and its own products: fp-contract is off here so nothing
// else is fused.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#define TANH_ROWS_BODY                                                   \
    for (int j = 0; j < rows; j++) {                                     \
        float *r = y + (long)j * ld;                                     \
        if (z) {                                                         \
            const float *zr = z + (long)j * ld;                          \
            for (long i = 0; i < n; i++) r[i] += zr[i];                  \
        }                                                                \
        for (long i = 0; i < n; i++) r[i] = gk_ort_tanh(r[i]);           \
    }
static __attribute__((target("avx512f,fma"))) void tanh_rows_fma512(float *y, const float *z, int rows, long n, long ld) {
    TANH_ROWS_BODY
}
static __attribute__((target("avx2,fma"))) void tanh_rows_fma256(float *y, const float *z, int rows, long n, long ld) {
    TANH_ROWS_BODY
}
#undef TANH_ROWS_BODY
#pragma GCC pop_options

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
    if (act == 10 && gk_nn_isa() >= GK_ISA_AVX2) {
        if (gk_nn_isa() >= GK_ISA_AVX512) tanh_rows_fma512(y, z, rows, n, ld);
        else tanh_rows_fma256(y, z, rows, n, ld);
        return;
    }
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

// epi_prelu_planes_f32 applies PRelu in place to planes planes of n floats
// (planes first.. of an [N, C, H, W] output: plane q is channel q % c),
// the slope of plane q being slope[q % c] (c = 1: one slope for all): y < 0 ? y*s : y, the
// separate PRelu op's expression (elementwise's B_PRELU), so a Conv with
// its PRelu bound in at load time gives the op's bits; NaN and -0 stay as
// they are. leaky_alpha is used instead when slope is NULL: LeakyRelu's
// (float)(alpha*(double)y) for y < 0, as the runtime's LeakyRelu op
// (elementwise's X_LEAKY) computes it.
GK_ISA_BODY void epi_prelu_planes_f32_body(float *y, const float *slope, long c, long first, long planes, long n, double leaky_alpha) {
    for (long p = 0; p < planes; p++) {
        float *r = y + p * n;
        if (slope) {
            const float s = slope[(first + p) % c];
            for (long i = 0; i < n; i++) { float v = r[i]; r[i] = v < 0 ? v * s : v; }
        } else {
            for (long i = 0; i < n; i++) { float v = r[i]; r[i] = v < 0 ? (float)(leaky_alpha * (double)v) : v; }
        }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), epi_prelu_planes_f32, (float *y, const float *slope, long c, long first, long planes, long n, double leaky_alpha),
                (y, slope, c, first, planes, n, leaky_alpha))
