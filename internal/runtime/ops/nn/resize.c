// Bilinear Resize rows in onnxruntime's float32 order (resize_ort.go):
// per output element the four products c11*X11, c21*X21, c12*X12, c22*X22,
// each rounded, summed left to right. No contraction into FMAs.
#pragma GCC optimize("fp-contract=off")
#include "resize.h"

void gk_resize_bilinear_row_f32(float *out, const float *row1, const float *row2, int ow, int ch,
                                const int32_t *x1, const int32_t *x2, const float *dx1, const float *dx2,
                                float dy1, float dy2) {
    if (ch == 1) {
        for (int ox = 0; ox < ow; ox++) {
            const float c11 = dx2[ox] * dy2, c21 = dx1[ox] * dy2, c12 = dx2[ox] * dy1, c22 = dx1[ox] * dy1;
            const int a = x1[ox], b = x2[ox];
            float v = c11 * row1[a] + c21 * row1[b];
            v += c12 * row2[a];
            v += c22 * row2[b];
            out[ox] = v;
        }
        return;
    }
    for (int ox = 0; ox < ow; ox++) {
        const float c11 = dx2[ox] * dy2, c21 = dx1[ox] * dy2, c12 = dx2[ox] * dy1, c22 = dx1[ox] * dy1;
        const float *p11 = row1 + (long)x1[ox] * ch, *p21 = row1 + (long)x2[ox] * ch;
        const float *p12 = row2 + (long)x1[ox] * ch, *p22 = row2 + (long)x2[ox] * ch;
        float *o = out + (long)ox * ch;
        for (int c = 0; c < ch; c++) {
            float v = c11 * p11[c] + c21 * p21[c];
            v += c12 * p12[c];
            v += c22 * p22[c];
            o[c] = v;
        }
    }
}
