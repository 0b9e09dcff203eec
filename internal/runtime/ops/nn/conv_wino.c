// Winograd F(4x4, 3x3) and F(2x2, 3x3) convolution (conv_wino.go). One
// task covers a band of output tile rows (o = 4 or 2 output rows each) and
// a group of output channels of one image (below for o = 4; o = 2 has 4x4
// input tiles, 16 transformed values and 2x2 output tiles):
//  1. the band's input rows, zero padded, are copied channel-last into a
//     patch [rows*4+2][tw*4+2][cp], so every 6x6 input tile is 36 channel
//     vectors;
//  2. input transform V = B^T d B per tile, 16 channels at a time, into
//     V[36][T][cp] (T tiles of the band, row = tile);
//  3. 36 GEMMs O[xi][T][mg] = V[xi][T][cp] x U[xi][cp][mg] (U = G g G^T,
//     transformed once per weight tensor, in panels of nr channels);
//  4. output transform A^T o A per tile, 16 channels at a time, into a
//     pixel-major tile [pixels][mg], which tile_to_nchw_f32 writes into NCHW
//     adding bias and residual and applying the activation in one pass.
#include <immintrin.h>
#include <string.h>

#include "conv_act.h"
#include "conv_packed_tile.h"
#include "conv_wino.h"
#include "isa.h"

#define INLINE static inline __attribute__((always_inline))
#define AVX512 __attribute__((target("avx512f,fma")))
#define AVX2 __attribute__((target("avx2,fma")))

typedef float v16 __attribute__((vector_size(64), aligned(4)));

int wino_nr(void) {
    int l = gk_nn_isa();
    return l >= GK_ISA_AVX512 ? 32 : l >= GK_ISA_AVX2 ? 16 : 0;
}

// Rows of B^T for F(4, 3): the 6 transformed values of d0..d5.
#define BT6(d0, d1, d2, d3, d4, d5, o)                                                                                 \
    do {                                                                                                               \
        (o)[0] = 4.0f * (d0) - 5.0f * (d2) + (d4);                                                                     \
        (o)[1] = -4.0f * ((d1) + (d2)) + (d3) + (d4);                                                                  \
        (o)[2] = 4.0f * ((d1) - (d2)) - (d3) + (d4);                                                                   \
        (o)[3] = 2.0f * ((d3) - (d1)) - (d2) + (d4);                                                                   \
        (o)[4] = 2.0f * ((d1) - (d3)) - (d2) + (d4);                                                                   \
        (o)[5] = 4.0f * (d1) - 5.0f * (d3) + (d5);                                                                     \
    } while (0)

// Rows of A^T for F(4, 3): the 4 outputs of m0..m5.
#define AT6(m0, m1, m2, m3, m4, m5, o)                                                                                 \
    do {                                                                                                               \
        __typeof__(m1) s12 = (m1) + (m2), d12 = (m1) - (m2), s34 = (m3) + (m4), d34 = (m3) - (m4);                    \
        (o)[0] = (m0) + s12 + s34;                                                                                     \
        (o)[1] = d12 + 2.0f * d34;                                                                                     \
        (o)[2] = s12 + 4.0f * s34;                                                                                     \
        (o)[3] = d12 + 8.0f * d34 + (m5);                                                                              \
    } while (0)

// Rows of B^T for F(2, 3): the 4 transformed values of d0..d3.
#define BT4(d0, d1, d2, d3, o)                                                                                         \
    do {                                                                                                               \
        (o)[0] = (d0) - (d2);                                                                                          \
        (o)[1] = (d1) + (d2);                                                                                          \
        (o)[2] = (d2) - (d1);                                                                                          \
        (o)[3] = (d1) - (d3);                                                                                          \
    } while (0)

// Rows of A^T for F(2, 3): the 2 outputs of m0..m3.
#define AT4(m0, m1, m2, m3, o)                                                                                         \
    do {                                                                                                               \
        (o)[0] = (m0) + (m1) + (m2);                                                                                   \
        (o)[1] = (m1) - (m2) - (m3);                                                                                   \
    } while (0)

// patch[ph][pw][c] = x[c][ih0+ph][iw0+pw] (0 outside the image and for c >= C).
GK_ISA_BODY void wino_patch_body(const float *x, int C, int H, int W, int ih0, int iw0, int PH, int PW, int cp,
                                 float *patch) {
    long plane = (long)H * W;
    for (int ph = 0; ph < PH; ph++) {
        int ih = ih0 + ph;
        float *dst = patch + (long)ph * PW * cp;
        if (ih < 0 || ih >= H) {
            memset(dst, 0, sizeof(float) * (size_t)PW * cp);
            continue;
        }
        int pw0 = iw0 < 0 ? -iw0 : 0;           // first pw inside the image
        int pw1 = W - iw0 < PW ? W - iw0 : PW; // one past the last
        if (pw1 < pw0) pw1 = pw0;
        memset(dst, 0, sizeof(float) * (size_t)pw0 * cp);
        memset(dst + (long)pw1 * cp, 0, sizeof(float) * (size_t)(PW - pw1) * cp);
        for (int c0 = 0; c0 < cp; c0 += 16) {
            int n = C - c0 < 16 ? C - c0 : 16;
            if (n < 0) n = 0;
            const float *src = x + (long)c0 * plane + (long)ih * W + iw0;
            for (int pw = pw0; pw < pw1; pw++) {
                float *d = dst + (long)pw * cp + c0;
                int l = 0;
                for (; l < n; l++) d[l] = src[(long)l * plane + pw];
                for (; l < 16; l++) d[l] = 0;
            }
        }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), wino_patch, (const float *x, int C, int H, int W, int ih0, int iw0, int PH, int PW, int cp,
                float *patch), (x, C, H, W, ih0, iw0, PH, PW, cp, patch))

// bt applies B^T to the column d[0..n-1]: F(4, 3)'s when n = 6, F(2, 3)'s
// when n = 4; at applies A^T (n -> n-2 outputs).
INLINE void bt(const int n, const v16 *d, v16 *o) {
    if (n == 6) BT6(d[0], d[1], d[2], d[3], d[4], d[5], o);
    else BT4(d[0], d[1], d[2], d[3], o);
}
INLINE void at(const int n, const v16 *m, v16 *o) {
    if (n == 6) AT6(m[0], m[1], m[2], m[3], m[4], m[5], o);
    else AT4(m[0], m[1], m[2], m[3], o);
}

// wino_in_tiles: V[xi][t][c] = (B^T d B)[xi] for the T tiles of the patch
// (tile t at tile row t/tw, column t%tw; n x n input tiles n-2 apart).
INLINE void wino_in_tiles(const int n, const float *patch, int PW, int cp, int T, int tw, float *V) {
    const int o = n - 2;
    long xs = (long)T * cp; // stride of xi in V
    for (int t = 0; t < T; t++) {
        const float *base = patch + ((long)(t / tw) * o * PW + (long)(t % tw) * o) * cp;
        float *vt = V + (long)t * cp;
        for (int c = 0; c < cp; c += 16) {
            v16 tmp[6][6];
            for (int j = 0; j < n; j++) {
                const float *col = base + (long)j * cp + c;
                long rs = (long)PW * cp;
                v16 d[6], r[6];
                for (int i = 0; i < n; i++) d[i] = *(const v16 *)(col + i * rs);
                bt(n, d, r);
                for (int i = 0; i < n; i++) tmp[i][j] = r[i];
            }
            for (int i = 0; i < n; i++) {
                v16 r[6];
                bt(n, tmp[i], r);
                for (int k = 0; k < n; k++) *(v16 *)(vt + (i * n + k) * xs + c) = r[k];
            }
        }
    }
}
GK_ISA_BODY void wino_in_body(const float *patch, int PW, int cp, int T, int tw, float *V) {
    wino_in_tiles(6, patch, PW, cp, T, tw, V);
}
GK_ISA_VARIANTS_FMA(gk_nn_isa(), wino_in, (const float *patch, int PW, int cp, int T, int tw, float *V),
                    (patch, PW, cp, T, tw, V))
GK_ISA_BODY void wino_in2_body(const float *patch, int PW, int cp, int T, int tw, float *V) {
    wino_in_tiles(4, patch, PW, cp, T, tw, V);
}
GK_ISA_VARIANTS_FMA(gk_nn_isa(), wino_in2, (const float *patch, int PW, int cp, int T, int tw, float *V),
                    (patch, PW, cp, T, tw, V))

// wino_out_tiles is the output transform of the T tiles: O[xi][t][0:mg]
// (row stride ldo) -> the pixel tile yt[(oh-oh0)*OW + ow][mg] for the valid
// pixels (oh < OH); n-2 x n-2 output tiles.
INLINE void wino_out_tiles(const int n, const float *O, long ldo, int T, int tw, int mg, int OW, int rows_valid,
                           float *yt) {
    const int o = n - 2;
    long xs = (long)T * ldo;
    for (int t = 0; t < T; t++) {
        int r = t / tw, q = t % tw;
        const float *ot = O + (long)t * ldo;
        for (int c = 0; c < mg; c += 16) {
            v16 tmp[4][6];
            for (int k = 0; k < n; k++) {
                const float *col = ot + (long)k * xs + c;
                v16 m[6], a4[4];
                for (int i = 0; i < n; i++) m[i] = *(const v16 *)(col + i * n * xs);
                at(n, m, a4);
                for (int a = 0; a < o; a++) tmp[a][k] = a4[a];
            }
            int nc = mg - c < 16 ? mg - c : 16;
            for (int a = 0; a < o; a++) {
                int oh = o * r + a;
                if (oh >= rows_valid) break;
                v16 b4[4];
                at(n, tmp[a], b4);
                for (int b = 0; b < o; b++) {
                    int ow = o * q + b;
                    if (ow >= OW) break;
                    float *d = yt + ((long)oh * OW + ow) * mg + c;
                    if (nc == 16) {
                        *(v16 *)d = b4[b];
                    } else {
                        float s[16];
                        memcpy(s, &b4[b], sizeof s);
                        memcpy(d, s, sizeof(float) * (size_t)nc);
                    }
                }
            }
        }
    }
}
GK_ISA_BODY void wino_out_body(const float *O, long ldo, int T, int tw, int mg, int OW, int rows_valid, float *yt) {
    wino_out_tiles(6, O, ldo, T, tw, mg, OW, rows_valid, yt);
}
GK_ISA_VARIANTS_FMA(gk_nn_isa(), wino_out,
                    (const float *O, long ldo, int T, int tw, int mg, int OW, int rows_valid, float *yt),
                    (O, ldo, T, tw, mg, OW, rows_valid, yt))
GK_ISA_BODY void wino_out2_body(const float *O, long ldo, int T, int tw, int mg, int OW, int rows_valid, float *yt) {
    wino_out_tiles(4, O, ldo, T, tw, mg, OW, rows_valid, yt);
}
GK_ISA_VARIANTS_FMA(gk_nn_isa(), wino_out2,
                    (const float *O, long ldo, int T, int tw, int mg, int OW, int rows_valid, float *yt),
                    (O, ldo, T, tw, mg, OW, rows_valid, yt))

// GEMM micro-kernels: c[mr][nr] = a[mr][k] (row stride lda) x b[k][nr]
// (one packed weight panel), rows = tiles.
// GEMM_ROWS(gemm, uk, MR, target) defines gemm: c[T][nr] = a[T][k] x b, the
// rows in blocks of MR by uk (a row count that is a constant each time, so
// the accumulators stay in registers).
#define UK_CASE(uk, n)                                                                                                 \
    case n: uk(n, k, ar, lda, b, cr, ldc); break;
#define GEMM_ROWS(gemm, uk, MR, target)                                                                                \
    static target void gemm(int T, int k, const float *a, long lda, const float *b, float *c, long ldc) {            \
        for (int r0 = 0; r0 < T; r0 += MR) {                                                                           \
            const float *ar = a + r0 * lda;                                                                            \
            float *cr = c + r0 * ldc;                                                                                  \
            switch (T - r0 < MR ? T - r0 : MR) {                                                                       \
                UK_CASE(uk, 12) UK_CASE(uk, 11) UK_CASE(uk, 10) UK_CASE(uk, 9) UK_CASE(uk, 8)                          \
                UK_CASE(uk, 7) UK_CASE(uk, 6) UK_CASE(uk, 5) UK_CASE(uk, 4) UK_CASE(uk, 3) UK_CASE(uk, 2)              \
                default : uk(1, k, ar, lda, b, cr, ldc);                                                               \
            }                                                                                                          \
        }                                                                                                              \
    }

// UKR(uk, vec, MR, target) defines the micro-kernel uk for the vector type
// vec (half a panel: the panel is two vectors wide), up to MR rows; b[0:2]
// stay in registers and each a element is broadcast once per k step.
#define UKR(uk, vec, target)                                                                                           \
    INLINE target void uk(const int mr, int k, const float *a, long lda, const float *b, float *c, long ldc) {       \
        enum { W = sizeof(vec) / sizeof(float) };                                                                      \
        vec c0[12], c1[12];                                                                                            \
        _Pragma("GCC unroll 12") for (int r = 0; r < mr; r++) c0[r] = c1[r] = (vec){0};                               \
        for (int p = 0; p < k; p++) {                                                                                  \
            vec b0 = *(const vec *)b, b1 = *(const vec *)(b + W);                                                     \
            __asm__("" : "+v"(b0), "+v"(b1));                                                                          \
            _Pragma("GCC unroll 12") for (int r = 0; r < mr; r++) {                                                   \
                vec av = (vec){0} + a[r * lda + p];                                                                    \
                c0[r] = av * b0 + c0[r];                                                                               \
                c1[r] = av * b1 + c1[r];                                                                               \
            }                                                                                                          \
            b += 2 * W;                                                                                                \
        }                                                                                                              \
        _Pragma("GCC unroll 12") for (int r = 0; r < mr; r++) {                                                       \
            *(vec *)(c + r * ldc) = c0[r];                                                                             \
            *(vec *)(c + r * ldc + W) = c1[r];                                                                         \
        }                                                                                                              \
    }

typedef float v8 __attribute__((vector_size(32), aligned(4)));
UKR(uk512, v16, AVX512)
GEMM_ROWS(gemm512, uk512, 12, AVX512) // 12 rows x 32: 24 of the 32 zmm accumulate
UKR(uk256, v8, AVX2)
GEMM_ROWS(gemm256, uk256, 6, AVX2) // 6 rows x 16: 12 of the 16 ymm accumulate

// o is the output tile side (4 or 2); the input tile side is o + 2.
static void wino_dims(int o, int cp, int OW, int rows, int mg, int nr, int *tw, int *T, int *PW, int *PH, int *mgp) {
    *tw = (OW + o - 1) / o;
    *T = rows * *tw;
    *PW = *tw * o + 2;
    *PH = rows * o + 2;
    *mgp = (mg + nr - 1) / nr * nr;
    (void)cp;
}

long wino_scratch_floats(int o, int cp, int OW, int rows, int mg, int nr) {
    int tw, T, PW, PH, mgp;
    wino_dims(o, cp, OW, rows, mg, nr, &tw, &T, &PW, &PH, &mgp);
    const long X = (long)(o + 2) * (o + 2);
    return (long)PH * PW * cp + X * T * cp + X * T * mgp + (long)rows * o * OW * mg + 64;
}

void wino_task(int o, const float *x, int C, int H, int W, int pad_t, int pad_l, int OH, int OW, int tr0, int rows,
               const float *u, int cp, int mp, int nr, int m0, int mg, float *y, const float *bias, const float *z,
               int act, float *scratch) {
    int tw, T, PW, PH, mgp;
    wino_dims(o, cp, OW, rows, mg, nr, &tw, &T, &PW, &PH, &mgp);
    const int X = (o + 2) * (o + 2);
    float *patch = scratch, *V = patch + (long)PH * PW * cp, *O = V + (long)X * T * cp, *yt = O + (long)X * T * mgp;
    int oh0 = tr0 * o, rows_valid = OH - oh0 < rows * o ? OH - oh0 : rows * o;
    wino_patch(x, C, H, W, oh0 - pad_t, -pad_l, PH, PW, cp, patch);
    if (o == 2) wino_in2(patch, PW, cp, T, tw, V);
    else wino_in(patch, PW, cp, T, tw, V);
    int panels = mp / nr, p0 = m0 / nr, pn = mgp / nr;
    int avx512 = nr == 32;
    for (int xi = 0; xi < X; xi++) {
        const float *a = V + (long)xi * T * cp;
        float *o = O + (long)xi * T * mgp;
        for (int p = 0; p < pn; p++) {
            const float *b = u + ((long)xi * panels + p0 + p) * cp * nr;
            if (avx512) gemm512(T, cp, a, cp, b, o + p * nr, mgp);
            else gemm256(T, cp, a, cp, b, o + p * nr, mgp);
        }
    }
    if (o == 2) wino_out2(O, mgp, T, tw, mg, OW, rows_valid, yt);
    else wino_out(O, mgp, T, tw, mg, OW, rows_valid, yt);
    long outVol = (long)OH * OW;
    tile_to_nchw_f32(yt, mg, y + m0 * outVol, bias ? bias + m0 : 0, z ? z + m0 * outVol : 0, rows_valid * OW, mg, outVol,
                     (long)oh0 * OW, act);
}
