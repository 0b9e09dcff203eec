// Float32 hot loops of the nn package: im2col/col2im for convolutions and the
// direct depthwise convolution. Compiled with -O3; target_clones lets gcc
// build AVX-512, AVX2 and baseline versions and pick one at load time, so
// the binary still runs on CPUs without AVX-512.
#include <string.h>
#include "kernels.h"

#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

// im2col_f32 fills col[(c*KD+kd)*KH+kh)*KW+kw][(od*OH+oh)*OW+ow] for the
// channels [0, C) of x (C x D x H x W); taps in the padding read as zero.
CLONES void im2col_f32(const float *x, float *col, int C, int D, int H, int W,
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
                    } else {
                        for (int ow = lo; ow < hi; ow++) d[ow] = src[ow * SW];
                    }
                    for (int ow = hi; ow < OW; ow++) d[ow] = 0;
                }
            }
        }
    }
}

// col2im_f32 is the adjoint of im2col_f32: it adds every column entry into
// y (C x D x H x W), skipping taps that fall into the padding.
CLONES void col2im_f32(const float *col, float *y, int C, int D, int H, int W,
                       int KD, int KH, int KW, int SD, int SH, int SW,
                       int PD, int PH, int PW, int DD, int DH, int DW,
                       int OD, int OH, int OW) {
    const long ovol = (long)OD * OH * OW;
    for (int c = 0; c < C; c++) {
        float *yc = y + (long)c * D * H * W;
        for (int kd = 0; kd < KD; kd++)
        for (int kh = 0; kh < KH; kh++)
        for (int kw = 0; kw < KW; kw++) {
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

// dwconv_f32 is the direct depthwise 2-D convolution of NC channel planes
// (channel index c0+i mod C): y[c] (OH x OW) = bias[c] + x[c] (H x W)
// correlated with w[c] (KH x KW). Each plane is first copied into a
// zero-padded scratch plane so the inner loops need no bounds checks; pad
// is a caller-provided buffer of HP x WP floats (the extent the taps reach,
// computed below).
CLONES void dwconv_f32(const float *x, const float *w, const float *bias, float *y,
                       int NC, int C, int H, int W, int KH, int KW, int SH, int SW,
                       int PH, int PW, int DH, int DW, int OH, int OW, int c0, float *pad) {
    // padded plane: rows/cols reachable by any tap of any output
    const int HP = (OH - 1) * SH + (KH - 1) * DH + 1;
    const int WP = (OW - 1) * SW + (KW - 1) * DW + 1;
    const int direct = PH == 0 && PW == 0 && HP <= H && WP <= W;
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
        }
    }
}
