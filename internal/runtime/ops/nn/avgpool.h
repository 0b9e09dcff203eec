#ifndef GKCONV_NN_AVGPOOL_H
#define GKCONV_NN_AVGPOOL_H
void avgpool2d_f32(const float *x, float *y, int NC, int H, int W, int KH, int KW, int SH, int SW,
                   int PH, int PW, int PEH, int PEW, int DH, int DW, int OH, int OW, int count_pad,
                   float *acc, int *wlo, int *whi, int *wcnt);
#endif
