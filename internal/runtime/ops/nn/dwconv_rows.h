#ifndef GKCONV_NN_DWCONV_ROWS_H
#define GKCONV_NN_DWCONV_ROWS_H
// dw_rows_ok says whether dw_rows_f32 takes a depthwise kernel shape.
int dw_rows_ok(int KH, int KW, int SH, int SW, int DH, int DW);
// dw_rows_floats is how many floats of scratch (pad) dw_rows_f32 needs.
long dw_rows_floats(int H, int W, int K, int S, int OH, int OW);
void dw_rows_f32(const float *x, const float *w, const float *bias, float *y, int NC, int C,
                 int H, int W, int K, int S, int PH, int PW, int OH, int OW, int c0, int act, float *pad);
#endif
