// Float32 hot loops of the nn package: im2col/col2im for convolutions, the
// direct depthwise convolution and the max-pool rows. Compiled with -O3; GK_ISA_VARIANTS (isa.h)
// builds AVX-512, AVX2 and baseline versions and runs the one of the level
// in use (the CPU's best unless GKCONV_CPU_ISA forces a lower one), so the
// binary still runs on CPUs without AVX-512.
#include <string.h>
#include <immintrin.h>
#include "im2col_dwconv.h"
#include "gk_actvec.h"
#include "conv_act.h"
#include "dwconv_rows.h"
#include "isa.h"

// im2col_f32 fills col[(c*KD+kd)*KH+kh)*KW+kw][(od*OH+oh)*OW+ow] for the
// channels [0, C) of x (C x D x H x W); taps in the padding read as zero.
GK_ISA_BODY void im2col_f32_body(const float *x, float *col, int C, int D, int H, int W,
                                 int KD, int KH, int KW, int SD, int SH, int SW,
                                 int PD, int PH, int PW, int DD, int DH, int DW,
                                 int OD, int OH, int OW) {
    const long ovol = (long)OD * OH * OW;
    for (int c = 0; c < C; c++) {
        const float *xc = x + (long)c * D * H * W;
        for (int kd = 0; kd < KD; kd++)
        for (int kh = 0; kh < KH; kh++)
        for (int kw = 0; kw < KW; kw++) {
            float *dst = col + ((((long)c * KD + kd) * KH + kh) * KW + kw) * ovol;
            // output columns whose input column is inside [0, W)
            int off = kw * DW - PW;
            int lo = 0, hi = OW;
            while (lo < OW && lo * SW + off < 0) lo++;
            while (hi > lo && (hi - 1) * SW + off >= W) hi--;
            for (int od = 0; od < OD; od++) {
                int id = od * SD - PD + kd * DD;
                for (int oh = 0; oh < OH; oh++) {
                    int ih = oh * SH - PH + kh * DH;
                    float *d = dst + ((long)od * OH + oh) * OW;
                    if (id < 0 || id >= D || ih < 0 || ih >= H) {
                        memset(d, 0, sizeof(float) * OW);
                        continue;
                    }
                    const float *src = xc + ((long)id * H + ih) * W + off;
                    for (int ow = 0; ow < lo; ow++) d[ow] = 0;
                    if (SW == 1) {
                        memcpy(d + lo, src + lo, sizeof(float) * (hi - lo));
                    } else if (SW == 2) { // constant stride: gcc vectorises it with permutes
                        for (int ow = lo; ow < hi; ow++) d[ow] = src[2 * ow];
                    } else {
                        for (int ow = lo; ow < hi; ow++) d[ow] = src[ow * SW];
                    }
                    for (int ow = hi; ow < OW; ow++) d[ow] = 0;
                }
            }
        }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), im2col_f32, (const float *x, float *col, int C, int D, int H, int W, int KD, int KH,
                int KW, int SD, int SH, int SW, int PD, int PH, int PW, int DD, int DH, int DW, int OD,
                int OH, int OW),
                (x, col, C, D, H, W, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW, OD, OH, OW))

// col2im_f32 is the adjoint of im2col_f32: it adds every column entry into
// y (C x D x H x W), skipping taps that fall into the padding.
GK_ISA_BODY void col2im_f32_body(const float *col, float *y, int C, int D, int H, int W,
                                 int KD, int KH, int KW, int SD, int SH, int SW,
                                 int PD, int PH, int PW, int DD, int DH, int DW,
                                 int OD, int OH, int OW) {
    const long ovol = (long)OD * OH * OW;
    // A 2-wide stride-2 kernel without padding (the 2x upsampling
    // ConvTranspose of decoders) folds its two taps of a row in one
    // interleaving pass: y[2w] += tap0[w], y[2w+1] += tap1[w].
    const int pair = KW == 2 && SW == 2 && DW == 1 && PW == 0 && 2 * OW == W;
    for (int c = 0; c < C; c++) {
        float *yc = y + (long)c * D * H * W;
        for (int kd = 0; kd < KD; kd++)
        for (int kh = 0; kh < KH; kh++)
        for (int kw = 0; kw < KW; kw++) {
            if (pair) {
                const float *s0 = col + ((((long)c * KD + kd) * KH + kh) * KW) * ovol, *s1 = s0 + ovol;
                for (int od = 0; od < OD; od++) {
                    int id = od * SD - PD + kd * DD;
                    if (id < 0 || id >= D) continue;
                    for (int oh = 0; oh < OH; oh++) {
                        int ih = oh * SH - PH + kh * DH;
                        if (ih < 0 || ih >= H) continue;
                        const long so = ((long)od * OH + oh) * OW;
                        float *d = yc + ((long)id * H + ih) * W;
                        for (int ow = 0; ow < OW; ow++) {
                            d[2 * ow] += s0[so + ow];
                            d[2 * ow + 1] += s1[so + ow];
                        }
                    }
                }
                break; // both taps done
            }
            const float *src = col + ((((long)c * KD + kd) * KH + kh) * KW + kw) * ovol;
            int off = kw * DW - PW;
            int lo = 0, hi = OW;
            while (lo < OW && lo * SW + off < 0) lo++;
            while (hi > lo && (hi - 1) * SW + off >= W) hi--;
            for (int od = 0; od < OD; od++) {
                int id = od * SD - PD + kd * DD;
                if (id < 0 || id >= D) continue;
                for (int oh = 0; oh < OH; oh++) {
                    int ih = oh * SH - PH + kh * DH;
                    if (ih < 0 || ih >= H) continue;
                    const float *s = src + ((long)od * OH + oh) * OW;
                    float *d = yc + ((long)id * H + ih) * W + off;
                    if (SW == 1) {
                        for (int ow = lo; ow < hi; ow++) d[ow] += s[ow];
                    } else {
                        for (int ow = lo; ow < hi; ow++) d[ow * SW] += s[ow];
                    }
                }
            }
        }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), col2im_f32, (const float *col, float *y, int C, int D, int H, int W, int KD, int KH,
                int KW, int SD, int SH, int SW, int PD, int PH, int PW, int DD, int DH, int DW, int OD,
                int OH, int OW),
                (col, y, C, D, H, W, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW, OD, OH, OW))

// act_row applies the fused activation (1 RELU, 3 RELU6) to one output row
// as act_rows_f32 does, while it is in L1.
static inline void act_row(float *o, int n, int act) {
    if (act == 1) {
        for (int i = 0; i < n; i++) o[i] = o[i] < 0.0f ? 0.0f : o[i];
    } else if (act == 3) {
        for (int i = 0; i < n; i++) {
            const float v = o[i] < 0.0f ? 0.0f : o[i];
            o[i] = v > 6.0f ? 6.0f : v;
        }
    }
}

// dw3x3_row computes one output row of a 3x3 depthwise kernel from three
// zero-padded input rows (no bounds checks: the caller padded the plane).
static inline void dw3x3_row(float *restrict o, const float *restrict r0, const float *restrict r1,
                             const float *restrict r2, const float *restrict k, float b,
                             int S, int D, int OW) {
    const float k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4], k5 = k[5], k6 = k[6], k7 = k[7], k8 = k[8];
    if (S == 1 && D == 1) {
        for (int i = 0; i < OW; i++)
            o[i] = b + k0 * r0[i] + k1 * r0[i + 1] + k2 * r0[i + 2]
                     + k3 * r1[i] + k4 * r1[i + 1] + k5 * r1[i + 2]
                     + k6 * r2[i] + k7 * r2[i + 1] + k8 * r2[i + 2];
    } else if (S == 2 && D == 1) {
        for (int i = 0; i < OW; i++)
            o[i] = b + k0 * r0[2 * i] + k1 * r0[2 * i + 1] + k2 * r0[2 * i + 2]
                     + k3 * r1[2 * i] + k4 * r1[2 * i + 1] + k5 * r1[2 * i + 2]
                     + k6 * r2[2 * i] + k7 * r2[2 * i + 1] + k8 * r2[2 * i + 2];
    } else {
        for (int i = 0; i < OW; i++) {
            const int j = i * S;
            o[i] = b + k0 * r0[j] + k1 * r0[j + D] + k2 * r0[j + 2 * D]
                     + k3 * r1[j] + k4 * r1[j + D] + k5 * r1[j + 2 * D]
                     + k6 * r2[j] + k7 * r2[j + D] + k8 * r2[j + 2 * D];
        }
    }
}

// colmask selects the lanes l of a 16-float load at column c whose column
// c+l lies in [0, W); masked-off lanes are not read (no fault) and load as 0.
__attribute__((target("avx512f"))) static inline __mmask16 colmask(int c, int W) {
    unsigned m = 0xFFFF;
    if (c < 0) m = c <= -16 ? 0 : m & (0xFFFFu << -c);
    if (c + 16 > W) m = W - c <= 0 ? 0 : m & ((1u << (W - c)) - 1);
    return (__mmask16)m;
}

#define AVX512 __attribute__((target("avx512f")))
#define AINLINE __attribute__((always_inline)) inline

#define LDU(r, c) _mm512_loadu_ps((const char *)(r) + 4L * (c))
#define LDK(r, c, m) _mm512_maskz_loadu_ps((m), (const char *)(r) + 4L * (c))

// DW3_WEIGHTS broadcasts the plane's nine weights wc and its bias b.
#define DW3_WEIGHTS                                                                                 \
    const __m512 k0 = _mm512_set1_ps(wc[0]), k1 = _mm512_set1_ps(wc[1]), k2 = _mm512_set1_ps(wc[2]); \
    const __m512 k3 = _mm512_set1_ps(wc[3]), k4 = _mm512_set1_ps(wc[4]), k5 = _mm512_set1_ps(wc[5]); \
    const __m512 k6 = _mm512_set1_ps(wc[6]), k7 = _mm512_set1_ps(wc[7]), k8 = _mm512_set1_ps(wc[8]); \
    const __m512 bias = _mm512_set1_ps(b);

// DW3_TAPS accumulates the nine taps into the chains a0..a2 from the loads
// of each row at columns c, c+1 and c+2.
#define DW3_TAPS(x00, x01, x02, y00, y01, y02, z00, z01, z02) \
    a0 = _mm512_fmadd_ps(k0, x00, bias);                      \
    a1 = _mm512_mul_ps(k1, x01);                              \
    a2 = _mm512_mul_ps(k2, x02);                              \
    a0 = _mm512_fmadd_ps(k3, y00, a0);                        \
    a1 = _mm512_fmadd_ps(k4, y01, a1);                        \
    a2 = _mm512_fmadd_ps(k5, y02, a2);                        \
    a0 = _mm512_fmadd_ps(k6, z00, a0);                        \
    a1 = _mm512_fmadd_ps(k7, z01, a1);                        \
    a2 = _mm512_fmadd_ps(k8, z02, a2);

// dw3s1_plane_avx512 is one 3x3 depthwise plane (dilation 1, stride 1)
// with AVX-512, 16 output columns at a time, reading x directly: padding
// taps are masked-off loads (they read nothing and load as 0) or the zero
// row z (W floats), so no padded copy is made. Column offsets may be
// negative, hence char arithmetic. The column masks depend only on the
// column block, so they are computed once per plane into cm (4 per block of
// 16 output columns), not per row. ("Same" padding takes dw3s1_flat_avx512.)
AVX512 static void dw3s1_plane_avx512(const float *xc, const float *wc, float b, float *yc, int H, int W,
                                      int PH, int PW, int OH, int OW, const float *z, __mmask16 *cm, int act) {
    DW3_WEIGHTS
    for (int i = 0, t = 0; i < OW; i += 16, t += 4) {
        const int c = i - PW;
        cm[t] = colmask(c, W), cm[t + 1] = colmask(c + 1, W), cm[t + 2] = colmask(c + 2, W);
        cm[t + 3] = c >= 0 && c + 18 <= W;
    }
    for (int oh = 0; oh < OH; oh++) {
        const int ih = oh - PH;
        const float *r0 = ih >= 0 && ih < H ? xc + (long)ih * W : z;
        const float *r1 = ih + 1 >= 0 && ih + 1 < H ? xc + (long)(ih + 1) * W : z;
        const float *r2 = ih + 2 >= 0 && ih + 2 < H ? xc + (long)(ih + 2) * W : z;
        float *o = yc + (long)oh * OW;
        for (int i = 0, t = 0; i < OW; i += 16, t += 4) {
            const int c = i - PW;
            __m512 a0, a1, a2;
            if (cm[t + 3]) {
                DW3_TAPS(LDU(r0, c), LDU(r0, c + 1), LDU(r0, c + 2), LDU(r1, c), LDU(r1, c + 1), LDU(r1, c + 2),
                         LDU(r2, c), LDU(r2, c + 1), LDU(r2, c + 2))
            } else {
                const __mmask16 m0 = cm[t], m1 = cm[t + 1], m2 = cm[t + 2];
                DW3_TAPS(LDK(r0, c, m0), LDK(r0, c + 1, m1), LDK(r0, c + 2, m2), LDK(r1, c, m0), LDK(r1, c + 1, m1),
                         LDK(r1, c + 2, m2), LDK(r2, c, m0), LDK(r2, c + 1, m1), LDK(r2, c + 2, m2))
            }
            const __m512 sum = act512(_mm512_add_ps(_mm512_add_ps(a0, a1), a2), act);
            if (i + 16 <= OW) _mm512_storeu_ps(o + i, sum);
            else _mm512_mask_storeu_ps(o + i, (__mmask16)((1u << (OW - i)) - 1), sum);
        }
    }
}

// DW3S2_ROW adds the three taps of one input row r (weights ka, kb, kc) to
// the chains a0..a2 for the 16 outputs whose first tap is column c, from
// columns c..c+31 (p, loaded by the previous block, and q) and c+32..c+47
// (the next block's p, loaded here with mask ln): the even columns are tap
// 0, the odd ones tap 1, and the even ones shifted down one lane with column
// c+32 last are tap 2. Two loads per row and block, where loading at c and
// c+2 took four, all of them split across cache lines.
#define DW3S2_ROW(r, p, ka, kb, kc, LQ, LN)                                                         \
    {                                                                                               \
        const __m512 q = LQ, pn = LN;                                                               \
        const __m512 e = _mm512_permutex2var_ps(p, even, q);                                        \
        a0 = _mm512_fmadd_ps(ka, e, a0);                                                            \
        a1 = _mm512_fmadd_ps(kb, _mm512_permutex2var_ps(p, odd, q), a1);                            \
        a2 = _mm512_fmadd_ps(kc, _mm512_permutex2var_ps(e, next, pn), a2);                          \
        p = pn;                                                                                     \
    }

// dw3s2_plane_avx512 is dw3s1_plane_avx512 for stride 2, with DW3S2_ROW's
// loads. cm holds the masks of columns c..c+15 and c+16..c+31 of each block
// of 16 output columns, then those of the columns after the last block.
AVX512 static void dw3s2_plane_avx512(const float *xc, const float *wc, float b, float *yc, int H, int W,
                                      int PH, int PW, int OH, int OW, const float *z, __mmask16 *cm, int act) {
    DW3_WEIGHTS
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512i next = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    for (int i = 0, t = 0; i < OW + 16; i += 16, t += 2) { // every block and the one after the last
        const int c = i * 2 - PW;
        cm[t] = colmask(c, W);
        cm[t + 1] = colmask(c + 16, W);
    }
    for (int oh = 0; oh < OH; oh++) {
        const int ih = oh * 2 - PH;
        const float *r0 = ih >= 0 && ih < H ? xc + (long)ih * W : z;
        const float *r1 = ih + 1 >= 0 && ih + 1 < H ? xc + (long)(ih + 1) * W : z;
        const float *r2 = ih + 2 >= 0 && ih + 2 < H ? xc + (long)(ih + 2) * W : z;
        float *o = yc + (long)oh * OW;
        // The two input rows the next output row adds are prefetched, a
        // block ahead: the input was just written by the previous op and is
        // in L2 or L3, and the hardware prefetcher leaves these loads
        // waiting (mobilenet_v2's 144 planes 56x56 -> 28x28 with the input
        // rewritten before each call: 287-311 -> 174-176 us, copy included).
        const char *n3 = (const char *)(ih + 3 >= 0 && ih + 3 < H ? xc + (long)(ih + 3) * W : z);
        const char *n4 = (const char *)(ih + 4 >= 0 && ih + 4 < H ? xc + (long)(ih + 4) * W : z);
        // The block loop prefetches from column 31 on; the first two lines
        // of those rows are taken here, or each output row began with
        // masked loads that missed the cache (perf: a quarter of this
        // kernel's samples; mobilenet_v2's 96 planes 112 -> 56, 1 thread,
        // min of 4 per-node medians: 0.166 -> 0.155 ms, 144 planes 56 -> 28
        // 0.067 -> 0.051; efficientnet_b0's 96 planes 112 -> 56 with SiLU
        // 0.299 -> 0.259).
        _mm_prefetch(n3, _MM_HINT_T0);
        _mm_prefetch(n3 + 64, _MM_HINT_T0);
        _mm_prefetch(n4, _MM_HINT_T0);
        _mm_prefetch(n4 + 64, _MM_HINT_T0);
        __m512 p0 = LDK(r0, -PW, cm[0]), p1 = LDK(r1, -PW, cm[0]), p2 = LDK(r2, -PW, cm[0]);
        for (int i = 0, t = 0; i < OW; i += 16, t += 2) {
            const int c = i * 2 - PW;
            __m512 a0 = bias, a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps();
            _mm_prefetch(n3 + 4L * (c + 32), _MM_HINT_T0);
            _mm_prefetch(n3 + 4L * (c + 48), _MM_HINT_T0);
            _mm_prefetch(n4 + 4L * (c + 32), _MM_HINT_T0);
            _mm_prefetch(n4 + 4L * (c + 48), _MM_HINT_T0);
            if (c >= 0 && c + 48 <= W) { // masked loads of data not yet in cache are slow on AMD
                DW3S2_ROW(r0, p0, k0, k1, k2, LDU(r0, c + 16), LDU(r0, c + 32))
                DW3S2_ROW(r1, p1, k3, k4, k5, LDU(r1, c + 16), LDU(r1, c + 32))
                DW3S2_ROW(r2, p2, k6, k7, k8, LDU(r2, c + 16), LDU(r2, c + 32))
            } else {
                const __mmask16 l1 = cm[t + 1], ln = cm[t + 2];
                DW3S2_ROW(r0, p0, k0, k1, k2, LDK(r0, c + 16, l1), LDK(r0, c + 32, ln))
                DW3S2_ROW(r1, p1, k3, k4, k5, LDK(r1, c + 16, l1), LDK(r1, c + 32, ln))
                DW3S2_ROW(r2, p2, k6, k7, k8, LDK(r2, c + 16, l1), LDK(r2, c + 32, ln))
            }
            const __m512 sum = act512(_mm512_add_ps(_mm512_add_ps(a0, a1), a2), act);
            if (i + 16 <= OW) _mm512_storeu_ps(o + i, sum);
            else _mm512_mask_storeu_ps(o + i, (__mmask16)((1u << (OW - i)) - 1), sum);
        }
    }
}

// DW3F_SETUP loads plane i's weights, bias and pointers for dw3s1_flat_avx512.
#define DW3F_SETUP(i, nc)                                                                           \
    const int ch##i = (c0 + (nc)) % C;                                                               \
    const float *wc##i = w + (long)ch##i * 9;                                                        \
    const float *xc##i = x + (long)(nc) * HW;                                                       \
    float *yc##i = y + (long)(nc) * HW;                                                             \
    const __m512 k0##i = _mm512_set1_ps(wc##i[0]), k1##i = _mm512_set1_ps(wc##i[1]);                \
    const __m512 k2##i = _mm512_set1_ps(wc##i[2]), k3##i = _mm512_set1_ps(wc##i[3]);                \
    const __m512 k4##i = _mm512_set1_ps(wc##i[4]), k5##i = _mm512_set1_ps(wc##i[5]);                \
    const __m512 k6##i = _mm512_set1_ps(wc##i[6]), k7##i = _mm512_set1_ps(wc##i[7]);                \
    const __m512 k8##i = _mm512_set1_ps(wc##i[8]);                                                  \
    const __m512 bv##i = _mm512_set1_ps(bias ? bias[ch##i] : 0.0f);

// DW3F_BLOCK computes block b of plane i from the masks q0..q9.
#define DW3F_BLOCK(i)                                                                               \
    {                                                                                               \
        const float *p = xc##i + 16 * b;                                                            \
        _mm_prefetch((const char *)(p + W + pfd), _MM_HINT_T0);                                  \
        __m512 a0 = _mm512_fmadd_ps(k0##i, LDK(p, -W - 1, q0), bv##i);                              \
        __m512 a1 = _mm512_mul_ps(k1##i, LDK(p, -W, q1));                                           \
        __m512 a2 = _mm512_mul_ps(k2##i, LDK(p, -W + 1, q2));                                       \
        a0 = _mm512_fmadd_ps(k3##i, LDK(p, -1, q3), a0);                                            \
        a1 = _mm512_fmadd_ps(k4##i, LDK(p, 0, q4), a1);                                             \
        a2 = _mm512_fmadd_ps(k5##i, LDK(p, 1, q5), a2);                                             \
        a0 = _mm512_fmadd_ps(k6##i, LDK(p, W - 1, q6), a0);                                         \
        a1 = _mm512_fmadd_ps(k7##i, LDK(p, W, q7), a1);                                             \
        a2 = _mm512_fmadd_ps(k8##i, LDK(p, W + 1, q8), a2);                                         \
        const __m512 sum = act512(_mm512_add_ps(_mm512_add_ps(a0, a1), a2), act);                   \
        if (q9 == 0xFFFF) _mm512_storeu_ps(yc##i + 16 * b, sum);                                    \
        else _mm512_mask_storeu_ps(yc##i + 16 * b, q9, sum);                                        \
    }

// dw3s1_flat_avx512 is the 3x3 depthwise convolution with stride 1,
// dilation 1 and "same" padding of 1 (OH = H, OW = W) of NC planes. It walks
// each plane as one flat vector of H*W outputs, 16 at a time whatever W is,
// so small planes (7x7, 14x14) pay no per-row overhead: tap (kh, kw) of
// output j is input j + (kh-1)*W + (kw-1), and the lanes whose tap falls in
// the padding (a neighbouring row's end, or outside the plane) are masked
// off. The masks depend only on the block, so m (10 per block of 16, the
// tenth the lanes inside the plane) is filled once for all planes.
AVX512 static void dw3s1_flat_avx512(const float *x, const float *w, const float *bias, float *y,
                                     int NC, int C, int c0, int H, int W, __mmask16 *m, int act) {
    const long HW = (long)H * W;
    const long nb = (HW + 15) / 16;
    for (long b = 0; b < nb; b++) {
        const long j0 = 16 * b;
        unsigned in = 0xFFFF, r0 = 0xFFFF, r2 = 0xFFFF, cl = 0xFFFF, cr = 0xFFFF;
        if (j0 + 16 > HW) in = (1u << (HW - j0)) - 1;
        if (j0 < W) r0 = W - j0 >= 16 ? 0 : 0xFFFFu << (W - j0);
        const long e2 = HW - W; // outputs j >= e2 have no row below
        if (j0 + 16 > e2) r2 = e2 <= j0 ? 0 : (1u << (e2 - j0)) - 1;
        for (long p = (j0 + W - 1) / W * W; p < j0 + 16; p += W) cl &= ~(1u << (p - j0)); // column 0
        for (long p = (j0 + W) / W * W - 1; p < j0 + 16; p += W) cr &= ~(1u << (p - j0));  // column W-1
        r0 &= in;
        __mmask16 *mb = m + 10 * b;
        mb[0] = r0 & cl; mb[1] = r0; mb[2] = r0 & cr;
        mb[3] = in & cl; mb[4] = in; mb[5] = in & cr;
        mb[6] = r2 & cl; mb[7] = r2; mb[8] = r2 & cr;
        mb[9] = in;
    }
    // The lead row (the one below) is prefetched pfd floats ahead: the
    // input was just written by the previous op, and on its own the
    // hardware prefetcher leaves these loads waiting (input rewritten
    // before each call, 1 thread, AVX-512: 32 planes 112x112 346 -> 213-238
    // us, 144 planes 56x56 380 -> 296-306, 192 planes 28x28 82 -> 74-79;
    // 7x7 planes equal).
    const long pfd = W < 16 ? 32 : W > 64 ? 128 : 2 * W;
    // two planes at a time share the mask loads and give two independent chains
    int nc = 0;
    for (; nc + 2 <= NC; nc += 2) {
        DW3F_SETUP(0, nc)
        DW3F_SETUP(1, nc + 1)
        for (long b = 0; b < nb; b++) {
            const __mmask16 *mb = m + 10 * b;
            const __mmask16 q0 = mb[0], q1 = mb[1], q2 = mb[2], q3 = mb[3], q4 = mb[4];
            const __mmask16 q5 = mb[5], q6 = mb[6], q7 = mb[7], q8 = mb[8], q9 = mb[9];
            DW3F_BLOCK(0)
            DW3F_BLOCK(1)
        }
    }
    for (; nc < NC; nc++) {
        DW3F_SETUP(0, nc)
        for (long b = 0; b < nb; b++) {
            const __mmask16 *mb = m + 10 * b;
            const __mmask16 q0 = mb[0], q1 = mb[1], q2 = mb[2], q3 = mb[3], q4 = mb[4];
            const __mmask16 q5 = mb[5], q6 = mb[6], q7 = mb[7], q8 = mb[8], q9 = mb[9];
            DW3F_BLOCK(0)
        }
    }
}

// dw_cb_lanes is how many planes at a time dwconv_f32 gives the
// channel-blocked kernel (16: dw_cb16_f32 at the AVX-512 level, 8:
// dw_cb8_f32 at AVX2), 0 when it takes none of NC planes.
static int dw_cb_lanes(int NC, int KH, int KW, int SH, int SW, int DH, int DW, int OH, int OW) {
    const int isa = gk_nn_isa();
    const int L = isa >= GK_ISA_AVX512 ? 16 : isa >= GK_ISA_AVX2 ? 8 : 0;
    if (L == 0 || NC < L || KH != KW || SH != SW || DH != 1 || DW != 1 || (SH == 1 && dw_legacy)) return 0;
    return (L == 16 ? dw_cb16_ok(KH, SH, OH, OW) : dw_cb8_ok(KH, SH, OH, OW)) ? L : 0;
}

// dw3_avx512_takes says whether dwconv_f32 gives planes to its AVX-512 3x3 kernels.
static int dw3_avx512_takes(int KH, int KW, int SH, int SW, int DH, int DW) {
    return KH == 3 && KW == 3 && DH == 1 && DW == 1 && SH == SW && (SW == 1 || SW == 2) &&
           gk_nn_isa() >= GK_ISA_AVX512;
}

// dwconv_f32 is the direct depthwise 2-D convolution of NC channel planes
// (channel index c0+i mod C): y[c] (OH x OW) = bias[c] + x[c] (H x W)
// correlated with w[c] (KH x KW), then the fused activation act (one of
// epi_rows_f32's) applied while the output is in registers or in cache.
// Planes in groups of 16 (8) take the channel-blocked kernel where
// dw_cb_lanes says so (pad of dw_cb16_floats). 3x3 kernels with dilation 1
// and stride 1 or 2 take the AVX-512 path at that level; it uses pad as the
// zero row (W + 48 floats) followed by the
// lane masks, for which pad must hold dw_mask_floats(OH, OW) more floats.
// Other square 3x3, 5x5 and 7x7 kernels with dilation 1 and stride 1 or 2
// take dw_rows_f32 (dwconv_rows.c; pad of dw_rows_floats). The rest copy
// each plane into a zero-padded scratch plane so the inner loops need no
// bounds checks: pad of HP x WP floats (the extent the taps reach, below).
GK_ISA_BODY void dwconv_f32_body(const float *x, const float *w, const float *bias, float *y,
                                 int NC, int C, int H, int W, int KH, int KW, int SH, int SW,
                                 int PH, int PW, int DH, int DW, int OH, int OW, int c0, int act,
                                 float *pad) {
    // Every kernel below applies RELU and RELU6 in registers; the AVX-512
    // 3x3 ones and the channel-blocked ones also SIGMOID and SWISH
    // (gk_gk_actvec.h). Other activations, and those on the other kernels, go
    // over groups of planes of about 256 KB right after the group is
    // computed.
    const int inreg = act == 0 || act == 1 || act == 3 ||
                      (act512_ok(act) && (dw3_avx512_takes(KH, KW, SH, SW, DH, DW) ||
                                          dw_cb_lanes(NC, KH, KW, SH, SW, DH, DW, OH, OW)));
    if (!inreg) {
        const long OHW = (long)OH * OW;
        long step = (64L << 10) / (OHW > 0 ? OHW : 1);
        step = step > 16 ? step - step % 16 : step < 1 ? 1 : step;
        for (long p = 0; p < NC; p += step) {
            const int n = NC - p < step ? (int)(NC - p) : (int)step;
            dwconv_f32_body(x + p * H * W, w, bias, y + p * OHW, n, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW,
                            OH, OW, (int)((c0 + p) % C), 0, pad);
            epi_rows_f32(y + p * OHW, 0, 1, n * OHW, n * OHW, act);
        }
        return;
    }
    // padded plane: rows/cols reachable by any tap of any output
    const int HP = (OH - 1) * SH + (KH - 1) * DH + 1;
    const int WP = (OW - 1) * SW + (KW - 1) * DW + 1;
    const int direct = PH == 0 && PW == 0 && HP <= H && WP <= W;
    const int lanes = dw_cb_lanes(NC, KH, KW, SH, SW, DH, DW, OH, OW);
    if (lanes) {
        // groups of 16 (8) small planes: channel-blocked (dwconv_cb16.c, dwconv_cb8.c)
        const int done = (lanes == 16 ? dw_cb16_f32 : dw_cb8_f32)(x, w, bias, y, NC, C, H, W, KH, SH, PH, PW,
                                                                  OH, OW, c0, act, pad);
        x += (long)done * H * W, y += (long)done * OH * OW, NC -= done, c0 = (c0 + done) % C;
        if (NC == 0) return;
        if (!dw3_avx512_takes(KH, KW, SH, SW, DH, DW) && !(act == 0 || act == 1 || act == 3)) {
            // the last planes go to a kernel that does not apply act
            dwconv_f32_body(x, w, bias, y, NC, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, c0, act, pad);
            return;
        }
    }
    if (dw3_avx512_takes(KH, KW, SH, SW, DH, DW)) {
        __mmask16 *masks = (__mmask16 *)(pad + W + 48);
        if (SW == 1 && PH == 1 && PW == 1 && OH == H && OW == W) {
            dw3s1_flat_avx512(x, w, bias, y, NC, C, c0, H, W, masks, act);
            return;
        }
        memset(pad, 0, sizeof(float) * (W + 48)); // the zero row
        for (int nc = 0; nc < NC; nc++) {
            int c = (c0 + nc) % C;
            (SW == 1 ? dw3s1_plane_avx512 : dw3s2_plane_avx512)(x + (long)nc * H * W, w + (long)c * 9,
                bias ? bias[c] : 0.0f, y + (long)nc * OH * OW, H, W, PH, PW, OH, OW, pad, masks, act);
        }
        return;
    }
    if (dw_rows_ok(KH, KW, SH, SW, DH, DW)) {
        dw_rows_f32(x, w, bias, y, NC, C, H, W, KH, SH, PH, PW, OH, OW, c0, act, pad);
        return;
    }
    for (int nc = 0; nc < NC; nc++) {
        int c = (c0 + nc) % C;
        const float *xc = x + (long)nc * H * W;
        const float *wc = w + (long)c * KH * KW;
        float *yc = y + (long)nc * OH * OW;
        float b = bias ? bias[c] : 0.0f;
        const float *p = xc;
        int ld = W;
        if (!direct) {
            memset(pad, 0, sizeof(float) * (long)HP * WP);
            for (int h = 0; h < H; h++) {
                int ph = h + PH;
                if (ph >= HP) break;
                int w0 = PW, n = W;
                if (w0 + n > WP) n = WP - w0;
                if (n > 0) memcpy(pad + (long)ph * WP + w0, xc + (long)h * W, sizeof(float) * n);
            }
            p = pad;
            ld = WP;
        }
        for (int oh = 0; oh < OH; oh++) {
            float *o = yc + (long)oh * OW;
            const float *r = p + (long)oh * SH * ld;
            if (KH == 3 && KW == 3) {
                dw3x3_row(o, r, r + (long)DH * ld, r + 2L * DH * ld, wc, b, SW, DW, OW);
                act_row(o, OW, act);
                continue;
            }
            for (int ow = 0; ow < OW; ow++) o[ow] = b;
            for (int kh = 0; kh < KH; kh++) {
                const float *rr = r + (long)kh * DH * ld;
                for (int kw = 0; kw < KW; kw++) {
                    const float wv = wc[kh * KW + kw];
                    const float *s = rr + kw * DW;
                    if (SW == 1) {
                        for (int ow = 0; ow < OW; ow++) o[ow] += wv * s[ow];
                    } else {
                        for (int ow = 0; ow < OW; ow++) o[ow] += wv * s[ow * SW];
                    }
                }
            }
            act_row(o, OW, act);
        }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), dwconv_f32, (const float *x, const float *w, const float *bias, float *y, int NC, int C,
                int H, int W, int KH, int KW, int SH, int SW, int PH, int PW, int DH, int DW, int OH,
                int OW, int c0, int act, float *pad),
                (x, w, bias, y, NC, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, c0, act, pad))

// mp_edge is one output column of mp_row whose window is clipped by the row ends.
static inline float mp_edge(const float *tmp, const float *first, int j, int W, int KW, int DW) {
    float m = -__builtin_inff(), f = -__builtin_inff();
    int seen = 0;
    for (int kw = 0; kw < KW; kw++) {
        const int iw = j + kw * DW;
        if (iw < 0 || iw >= W) continue;
        if (!seen) { f = first[iw]; seen = 1; }
        m = tmp[iw] > m ? tmp[iw] : m;
    }
    return f != f ? f : m;
}

// mp_row computes one output row of a 2-D max pool from tmp, the NaN-ignoring
// column maxima of the window's rows, and first, the window's first input row
// (for the NaN rule of maxpool2d_f32). Columns [lo, hi) have every tap inside
// the row; the others clip their window.
static inline void mp_row(float *restrict o, const float *restrict tmp, const float *restrict first,
                          int W, int KW, int SW, int PW, int DW, int OW, int lo, int hi) {
    for (int i = 0; i < lo; i++) o[i] = mp_edge(tmp, first, i * SW - PW, W, KW, DW);
    // interior: the fixed-shape cases give gcc constant strides
    if (KW == 3 && SW == 2 && DW == 1) {
        for (int i = lo; i < hi; i++) {
            const int j = 2 * i - PW;
            float m = tmp[j];
            m = tmp[j + 1] > m ? tmp[j + 1] : m;
            m = tmp[j + 2] > m ? tmp[j + 2] : m;
            const float f = first[j];
            o[i] = f != f ? f : m;
        }
    } else if (KW == 2 && SW == 1 && DW == 1) { // 2x2 stride-1 (SAME) pools of detectors
        for (int i = lo; i < hi; i++) {
            const int j = i - PW;
            const float m = tmp[j + 1] > tmp[j] ? tmp[j + 1] : tmp[j];
            const float f = first[j];
            o[i] = f != f ? f : m;
        }
    } else if (KW == 3 && SW == 1 && DW == 1) {
        for (int i = lo; i < hi; i++) {
            const int j = i - PW;
            float m = tmp[j];
            m = tmp[j + 1] > m ? tmp[j + 1] : m;
            m = tmp[j + 2] > m ? tmp[j + 2] : m;
            const float f = first[j];
            o[i] = f != f ? f : m;
        }
    } else {
        for (int i = lo; i < hi; i++) {
            const int j = i * SW - PW;
            float m = tmp[j];
            for (int kw = 1; kw < KW; kw++) {
                const float v = tmp[j + kw * DW];
                m = v > m ? v : m;
            }
            const float f = first[j];
            o[i] = f != f ? f : m;
        }
    }
    for (int i = hi; i < OW; i++) o[i] = mp_edge(tmp, first, i * SW - PW, W, KW, DW);
}

// maxpool2d_f32 is the 2-D max pool of NC planes (H x W -> OH x OW), output
// rows [oh0, oh1) of each. It matches the reference loop exactly, NaN
// included: the result is NaN when the window's first in-bounds tap is NaN,
// else the maximum of its non-NaN taps (-inf for an empty window). A
// vertical pass takes the NaN-ignoring maximum over the window's rows into
// tmp (W floats, caller-provided), so the horizontal pass reads one
// contiguous row.
GK_ISA_BODY void maxpool2d_f32_body(const float *x, float *y, int NC, int H, int W, int KH, int KW,
                                    int SH, int SW, int PH, int PW, int DH, int DW, int OH, int OW, int oh0,
                                    int oh1, float *tmp) {
    int lo = 0, hi = OW;
    while (lo < OW && lo * SW - PW < 0) lo++;
    while (hi > lo && (hi - 1) * SW - PW + (KW - 1) * DW >= W) hi--;
    for (int nc = 0; nc < NC; nc++) {
        const float *xc = x + (long)nc * H * W;
        float *yc = y + (long)nc * OH * OW;
        for (int oh = oh0; oh < oh1; oh++) {
            float *o = yc + (long)oh * OW;
            const int base = oh * SH - PH;
            int h0 = 0, h1 = KH;
            while (h0 < h1 && base + h0 * DH < 0) h0++;
            while (h1 > h0 && base + (h1 - 1) * DH >= H) h1--;
            if (h0 == h1) {
                for (int i = 0; i < OW; i++) o[i] = -__builtin_inff();
                continue;
            }
            const float *first = xc + (long)(base + h0 * DH) * W;
            if (h1 - h0 == 3) { // the common 3-row window in one pass over tmp
                const float *r0 = first, *r1 = first + (long)DH * W, *r2 = first + 2L * DH * W;
                for (int i = 0; i < W; i++) {
                    float m = -__builtin_inff();
                    m = r0[i] > m ? r0[i] : m;
                    m = r1[i] > m ? r1[i] : m;
                    tmp[i] = r2[i] > m ? r2[i] : m;
                }
            } else if (h1 - h0 == 2) {
                const float *r0 = first, *r1 = first + (long)DH * W;
                for (int i = 0; i < W; i++) {
                    float m = -__builtin_inff();
                    m = r0[i] > m ? r0[i] : m;
                    tmp[i] = r1[i] > m ? r1[i] : m;
                }
            } else {
                for (int i = 0; i < W; i++) tmp[i] = -__builtin_inff();
                for (int kh = h0; kh < h1; kh++) {
                    const float *r = xc + (long)(base + kh * DH) * W;
                    for (int i = 0; i < W; i++) tmp[i] = r[i] > tmp[i] ? r[i] : tmp[i];
                }
            }
            mp_row(o, tmp, first, W, KW, SW, PW, DW, OW, lo, hi);
        }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), maxpool2d_f32, (const float *x, float *y, int NC, int H, int W, int KH, int KW, int SH,
                int SW, int PH, int PW, int DH, int DW, int OH, int OW, int oh0, int oh1, float *tmp),
                (x, y, NC, H, W, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, oh0, oh1, tmp))

// dw_mask_floats is how many floats of dwconv_f32's pad the AVX-512 lane
// masks take after the zero row: 10 per 16 outputs of the flat stride-1
// kernel or at most 4 per 16 output columns of the plane kernels (4 at
// stride 1, 2 plus 2 after the last block at stride 2; 16 bits each).
long dw_mask_floats(int OH, int OW) {
    const long flat = 10 * (((long)OH * OW + 15) / 16), rows = 4 * (((long)OW + 15) / 16);
    return ((flat > rows ? flat : rows) + 1) / 2 + 16;
}

// fill_rows_f32 sets the first n floats of row j (stride ld) of y to b[j]
// for j in [0, m): the bias the convolution GEMM then accumulates onto (beta = 1).
GK_ISA_BODY void fill_rows_f32_body(float *y, const float *b, int m, long n, long ld) {
    for (int j = 0; j < m; j++) {
        float *r = y + (long)j * ld;
        const float v = b[j];
        for (long i = 0; i < n; i++) r[i] = v;
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), fill_rows_f32, (float *y, const float *b, int m, long n, long ld),
                (y, b, m, n, ld))
