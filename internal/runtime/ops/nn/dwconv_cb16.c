// Channel-blocked depthwise convolution for small planes, AVX-512 (this
// file) and AVX2 (dwconv_cb8.c), both from dwconv_cb_body.h.
//
// A plane of 7x7 to 28x28 outputs leaves the row kernel (dwconv_rows.c)
// mostly overhead: short rows, partial vectors, and at stride 2 an even/odd
// split of every input row. dw_cb16_f32 instead takes 16 planes at a time
// and transposes them (16x16 in registers) into a zero-padded channel-last
// buffer, one vector of 16 channels per input position; every tap of an
// output is then one full-vector FMA with that tap's 16 weights, with no
// padding checks and no lane waste whatever the plane width. The outputs,
// also one vector per position, get the fused activation and are
// transposed back into the 16 output planes. (onnxruntime's NCHWc layout
// computes depthwise this way.)
#include <string.h>
#include <immintrin.h>
#include "gk_actvec.h"
#include "dwconv_rows.h"

#define CB_AVX512 __attribute__((target("avx512f,fma")))

// cb_tr16 transposes the 16x16 block r in place (r[i] lane j <-> r[j] lane i).
CB_AVX512 static inline __attribute__((always_inline)) void cb_tr16(__m512 *r) {
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

#define CB_L 16
#define CB_V __m512
#define CB_FN CB_AVX512
#define CB_SYM(name) name##16
#define CB_ENTRY dw_cb16_f32
#define CB_LOAD(p) _mm512_load_ps(p)
#define CB_STORE(p, v) _mm512_store_ps(p, v)
#define CB_STOREU(p, v) _mm512_storeu_ps(p, v)
#define CB_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define CB_LOADN(p, n) _mm512_maskz_loadu_ps((__mmask16)((1u << (n)) - 1), p)
#define CB_STOREN(p, n, v) _mm512_mask_storeu_ps(p, (__mmask16)((1u << (n)) - 1), v)
#define CB_TR(r) cb_tr16(r)
#define CB_ACT(v, act) act512(v, act)
#include "dwconv_cb_body.h" // a .h: go build rehashes headers, not .inc files

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

