// Channel-blocked depthwise convolution (AVX-512) for small planes.
//
// A plane of 7x7 to 28x28 outputs leaves the row kernel (dwconv_rows.c)
// mostly overhead: short rows, partial vectors, and at stride 2 an even/odd
// split of every input row. dw_cb16_f32 instead takes 16 planes at a time and transposes
// them (16x16 in registers) into a zero-padded channel-last buffer, one
// vector of 16 channels per input position; every tap of an output is then
// one full-vector FMA with that tap's 16 weights, with no padding checks and
// no lane waste whatever the plane width. The outputs, also one vector per
// position, get the fused activation and are transposed back into the 16
// output planes. (onnxruntime's NCHWc layout computes depthwise this way.)
#include <string.h>
#include <immintrin.h>
#include "act512.h"
#include "dwconv_rows.h"

#define CB_AVX512 __attribute__((target("avx512f,fma")))
#define CB_INL static inline __attribute__((always_inline))

// cb_tr16 transposes the 16x16 block r in place (r[i] lane j <-> r[j] lane i).
CB_AVX512 CB_INL void cb_tr16(__m512 *r) {
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        u[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 16; i += 8) {
        for (int j = 0; j < 4; j++) {
            t[i + j] = _mm512_shuffle_f32x4(u[i + j], u[i + j + 4], 0x88);
            t[i + j + 4] = _mm512_shuffle_f32x4(u[i + j], u[i + j + 4], 0xdd);
        }
    }
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
    }
}

// cb_geom is the padded buffer's extent: HP rows (those the taps reach) of
// WB positions, WB >= both the columns the taps reach and PW + W, so the
// 16-position stores of a row (zero past its end) stay in its row or reach
// the next row before that row is filled.
static void cb_geom(int K, int S, int W, int PW, int OH, int OW, int *HP, int *WB) {
    *HP = (OH - 1) * S + K;
    *WB = (OW - 1) * S + K;
    if (PW + W > *WB) *WB = PW + W;
}

long dw_cb16_floats(int W, int PW, int K, int S, int OH, int OW) {
    int HP, WB;
    cb_geom(K, S, W, PW, OH, OW, &HP, &WB);
    // padded input with 16 positions of slack, outputs rounded up to 16
    // positions, weights + bias, alignment
    return 16L * ((long)HP * WB + 16) + 16L * ((OH * OW + 15) / 16 * 16) + 16L * (K * K + 1) + 16;
}

// dw_cb16_ok: at stride 2, measured (BenchmarkDepthwiseS2, 1 thread) 2-3.5x
// faster than the row kernel for 5x5 planes of up to 28x28 outputs and than
// the AVX-512 3x3 plane kernel for 7x7 outputs; 3x3 planes of 14x14 outputs
// 1.3x faster at 1 and 2 threads (mobilenet_v2's 192 channels 28 -> 14:
// 33-38 -> 24-26 us), of 28x28 no faster (their 9 taps do not pay for the
// transposes), so those stay. At stride 1 (BenchmarkDepthwiseS1, 1 thread,
// AVX-512, Zen 5): 5x5 planes of 7x7 to 28x28 1.8-2.1x faster than the row
// kernel (efficientnet_b0's 672 channels on 14x14: 0.17 -> 0.084 ms);
// 3x3 planes of 14x14 1.05-1.17x faster than the flat 3x3 kernel, of 7x7
// 3-5% slower and of 28x28 no faster, so those stay.
int dw_cb16_ok(int K, int S, int OH, int OW) {
    if (K != 3 && K != 5 && K != 7) return 0;
    if (S == 2) return OH <= (K == 3 ? 14 : 28) && OW <= (K == 3 ? 14 : 28);
    if (S != 1) return 0;
    if (K == 3) return OW > 7 && OW <= 14 && OH <= 14;
    return OH <= 28 && OW <= 28;
}

// CB_BLOCK computes NB (<= 4) adjacent outputs of output row oh from column ow.
#define CB_BLOCK(NB)                                                                                \
    {                                                                                               \
        __m512 acc[NB];                                                                             \
        for (int j = 0; j < NB; j++) acc[j] = bv;                                                   \
        for (int kh = 0; kh < K; kh++) {                                                            \
            const float *row = buf + 16L * ((long)(oh * S + kh) * WP + ow * S);                     \
            for (int kw = 0; kw < K; kw++) {                                                        \
                const __m512 wv = _mm512_load_ps(wt + 16 * (kh * K + kw));                          \
                for (int j = 0; j < NB; j++)                                                        \
                    acc[j] = _mm512_fmadd_ps(_mm512_load_ps(row + 16 * (j * S + kw)), wv, acc[j]);  \
            }                                                                                       \
        }                                                                                           \
        for (int j = 0; j < NB; j++) {                                                              \
            _mm512_store_ps(out + 16L * (oh * OW + ow + j), acc[j]);                                    \
        }                                                                                           \
    }

// CB_BLOCK1 computes NB (<= 8) adjacent outputs of output row oh from
// column ow at stride 1: the NB + K - 1 input positions of each kernel row
// are loaded once and each serves every output of the block it reaches
// (NB*K FMAs for NB + 2K - 1 loads, where CB_BLOCK loads one input per FMA).
#define CB_BLOCK1(NB)                                                                               \
    {                                                                                               \
        __m512 acc[NB];                                                                             \
        for (int j = 0; j < NB; j++) acc[j] = bv;                                                   \
        _Pragma("GCC unroll 7") for (int kh = 0; kh < K; kh++) {                                    \
            const float *row = buf + 16L * ((long)(oh + kh) * WP + ow);                             \
            __m512 in[NB + K - 1];                                                                  \
            _Pragma("GCC unroll 16") for (int i = 0; i < NB + K - 1; i++) in[i] = _mm512_load_ps(row + 16 * i); \
            _Pragma("GCC unroll 7") for (int kw = 0; kw < K; kw++) {                                \
                const __m512 wv = _mm512_load_ps(wt + 16 * (kh * K + kw));                          \
                _Pragma("GCC unroll 8") for (int j = 0; j < NB; j++) acc[j] = _mm512_fmadd_ps(in[j + kw], wv, acc[j]); \
            }                                                                                       \
        }                                                                                           \
        for (int j = 0; j < NB; j++) {                                                              \
            _mm512_store_ps(out + 16L * (oh * OW + ow + j), acc[j]);                                    \
        }                                                                                           \
    }

CB_AVX512 CB_INL void cb_group(const float *x, const float *w, const float *bias, float *y, int C,
                               int H, int W, int K, int S, int PH, int PW, int OH, int OW, int c0,
                               int act, float *buf, float *out, float *wt) {
    int HP, WP;
    cb_geom(K, S, W, PW, OH, OW, &HP, &WP);
    const long HW = (long)H * W, OHW = (long)OH * OW;
    // weights and bias, channel-last
    for (int i = 0; i < 16; i++) {
        const int c = (c0 + i) % C;
        for (int t = 0; t < K * K; t++) wt[16 * t + i] = w[(long)c * K * K + t];
        wt[16 * K * K + i] = bias ? bias[c] : 0.0f;
    }
    // input rows, 16 columns x 16 planes per transpose, into the padded
    // buffer (zero outside the input since dw_cb16_f32 cleared it: the
    // masked-off lanes store zeros)
    for (int h = 0; h < H; h++) {
        const int ph = h + PH;
        if (ph < 0 || ph >= HP) continue;
        for (int w0 = 0; w0 < W; w0 += 16) {
            const int n = W - w0 < 16 ? W - w0 : 16;
            const __mmask16 m = (__mmask16)((1u << n) - 1);
            __m512 r[16];
            _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) r[i] = _mm512_maskz_loadu_ps(m, x + i * HW + (long)h * W + w0);
            cb_tr16(r);
            float *d = buf + 16L * ((long)ph * WP + PW + w0);
            _Pragma("GCC unroll 16") for (int j = 0; j < 16; j++) _mm512_storeu_ps(d + 16 * j, r[j]);
        }
    }
    const __m512 bv = _mm512_load_ps(wt + 16 * K * K);
    for (int oh = 0; oh < OH; oh++) {
        int ow = 0;
        if (S == 1) {
            for (; ow + 8 <= OW; ow += 8) CB_BLOCK1(8)
            for (; ow + 4 <= OW; ow += 4) CB_BLOCK1(4)
            for (; ow < OW; ow++) CB_BLOCK1(1)
            continue;
        }
        for (; ow + 4 <= OW; ow += 4) CB_BLOCK(4)
        for (; ow < OW; ow++) CB_BLOCK(1)
    }
    // outputs back to the 16 planes
    for (long p0 = 0; p0 < OHW; p0 += 16) {
        const int n = OHW - p0 < 16 ? (int)(OHW - p0) : 16;
        const __mmask16 m = (__mmask16)((1u << n) - 1);
        __m512 r[16];
        _Pragma("GCC unroll 16") for (int j = 0; j < 16; j++) r[j] = act512(_mm512_load_ps(out + 16 * (p0 + j)), act);
        cb_tr16(r);
        _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) _mm512_mask_storeu_ps(y + i * OHW + p0, m, r[i]);
    }
}

#define CB_CASE(KK, SS)                                                                             \
    case KK * 10 + SS:                                                                              \
        cb_group(xg, w, bias, yg, C, H, W, KK, SS, PH, PW, OH, OW, (c0 + g) % C, act, buf, out, wt); \
        break;

// dw_cb16_f32 is dwconv_f32 for the first NC/16*16 of NC planes when
// dw_cb16_ok holds, on an AVX-512 CPU; pad holds dw_cb16_floats(...) floats.
// It returns how many planes it did.
CB_AVX512 int dw_cb16_f32(const float *x, const float *w, const float *bias, float *y, int NC, int C,
                          int H, int W, int K, int S, int PH, int PW, int OH, int OW, int c0, int act,
                          float *pad) {
    int HP, WP;
    cb_geom(K, S, W, PW, OH, OW, &HP, &WP);
    float *buf = (float *)(((unsigned long)pad + 63) & ~63UL); // 64-byte aligned
    float *out = buf + 16L * ((long)HP * WP + 16);
    float *wt = out + 16L * ((OH * OW + 15) / 16 * 16);
    const long HW = (long)H * W, OHW = (long)OH * OW;
    if (NC < 16) return 0;
    memset(buf, 0, sizeof(float) * 16L * ((long)HP * WP + 16));
    int g = 0;
    for (; g + 16 <= NC; g += 16) {
        const float *xg = x + g * HW;
        float *yg = y + g * OHW;
        switch (K * 10 + S) {
            CB_CASE(3, 1)
            CB_CASE(5, 1)
            CB_CASE(7, 1)
            CB_CASE(3, 2)
            CB_CASE(5, 2)
            CB_CASE(7, 2)
        }
    }
    return g;
}
