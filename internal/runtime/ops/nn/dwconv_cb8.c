// The channel-blocked depthwise kernel (dwconv_cb16.c) at the AVX2 level:
// groups of 8 planes, 8x8 transposes, blocks of at most 4 outputs (16 ymm
// registers), the activation (act256) on the output vectors.
#include <string.h>
#include <immintrin.h>
#include "gk_actvec.h"
#include "dwconv_rows.h"

#define CB_AVX2 __attribute__((target("avx2,fma")))

// cb_tr8 transposes the 8x8 block r in place (r[i] lane j <-> r[j] lane i).
CB_AVX2 static inline __attribute__((always_inline)) void cb_tr8(__m256 *r) {
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x20);
        r[j + 4] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x31);
    }
}

// cb_lanes8 is the mask of the first n lanes for maskload/maskstore.
CB_AVX2 static inline __attribute__((always_inline)) __m256i cb_lanes8(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#define CB_L 8
#define CB_V __m256
#define CB_FN CB_AVX2
#define CB_SYM(name) name##8
#define CB_ENTRY dw_cb8_f32
#define CB_LOAD(p) _mm256_load_ps(p)
#define CB_STORE(p, v) _mm256_store_ps(p, v)
#define CB_STOREU(p, v) _mm256_storeu_ps(p, v)
#define CB_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define CB_LOADN(p, n) ((n) == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, cb_lanes8(n)))
#define CB_STOREN(p, n, v) ((n) == 8 ? _mm256_storeu_ps(p, v) : _mm256_maskstore_ps(p, cb_lanes8(n), v))
#define CB_TR(r) cb_tr8(r)
#define CB_ACT(v, act) act256(v, act)
#include "dwconv_cb_body.h" // a .h: go build rehashes headers, not .inc files

// dw_cb8_ok: every square 3x3, 5x5 and 7x7 shape of mobilenet_v2 and
// efficientnet_b0 (outputs 7x7 to 112x112) ran faster than on the row
// kernel (BenchmarkDepthwiseS1/S2 at GKCONV_CPU_ISA=avx2, 1 thread, Zen 5):
// 5x5 1.3-4x (672 channels 14 -> 7: 190 -> 48-65 us), 3x3 on 7x7 to 28x28
// 1.8-5x (576 channels 14 -> 7: 119-137 -> 21-22 us), 3x3 on 56x56 and
// 112x112 1.1-1.6x (96 channels 112 -> 56: 339-359 -> 218-222 us).
int dw_cb8_ok(int K, int S, int OH, int OW) {
    if (K != 3 && K != 5 && K != 7) return 0;
    if (S != 1 && S != 2) return 0;
    return OH <= 112 && OW <= 112;
}
