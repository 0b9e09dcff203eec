#ifndef GKCONV_NN_IM2COL_DWCONV_H
#define GKCONV_NN_IM2COL_DWCONV_H
void im2col_f32(const float *x, float *col, int C, int D, int H, int W,
                int KD, int KH, int KW, int SD, int SH, int SW,
                int PD, int PH, int PW, int DD, int DH, int DW,
                int OD, int OH, int OW);
void col2im_f32(const float *col, float *y, int C, int D, int H, int W,
                int KD, int KH, int KW, int SD, int SH, int SW,
                int PD, int PH, int PW, int DD, int DH, int DW,
                int OD, int OH, int OW);
void dwconv_f32(const float *x, const float *w, const float *bias, float *y,
                int NC, int C, int H, int W, int KH, int KW, int SH, int SW,
                int PH, int PW, int DH, int DW, int OH, int OW, int c0, int act, float *pad);
void maxpool2d_f32(const float *x, float *y, int NC, int H, int W, int KH, int KW,
                   int SH, int SW, int PH, int PW, int DH, int DW, int OH, int OW, int oh0, int oh1, float *tmp);
long dw_mask_floats(int OH, int OW);
void fill_rows_f32(float *y, const float *b, int m, long n, long ld);
#endif
