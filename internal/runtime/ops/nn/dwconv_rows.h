#ifndef GKCONV_NN_DWCONV_ROWS_H
#define GKCONV_NN_DWCONV_ROWS_H
// dw_rows_ok says whether dw_rows_f32 takes a depthwise kernel shape.
int dw_rows_ok(int KH, int KW, int SH, int SW, int DH, int DW);
// dw_rows_floats is how many floats of scratch (pad) dw_rows_f32 needs.
long dw_rows_floats(int H, int W, int K, int S, int OH, int OW);
// dw_legacy set makes dwconv_f32 take its previous stride-1 paths (benchmarks).
extern int dw_legacy;
void dw_rows_f32(const float *x, const float *w, const float *bias, float *y, int NC, int C,
                 int H, int W, int K, int S, int PH, int PW, int OH, int OW, int c0, int act, float *pad);
// dw_cb16_ok says whether dw_cb16_f32 takes a depthwise shape (square
// kernel K of 3, 5 or 7, stride S of 1 or 2, dilation 1, small planes); dw_cb16_floats
// is the scratch it needs. dw_cb16_f32 (AVX-512 only) does the first
// NC/16*16 planes and returns how many it did.
int dw_cb16_ok(int K, int S, int OH, int OW);
long dw_cb16_floats(int W, int PW, int K, int S, int OH, int OW);
int dw_cb16_f32(const float *x, const float *w, const float *bias, float *y, int NC, int C, int H, int W,
                int K, int S, int PH, int PW, int OH, int OW, int c0, int act, float *pad);
// dw_cb8_ok and dw_cb8_f32 are the same at the AVX2 level, 8 planes at a
// time (pad sized by dw_cb16_floats too).
int dw_cb8_ok(int K, int S, int OH, int OW);
int dw_cb8_f32(const float *x, const float *w, const float *bias, float *y, int NC, int C, int H, int W,
               int K, int S, int PH, int PW, int OH, int OW, int c0, int act, float *pad);
#endif
