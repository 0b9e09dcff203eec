#ifndef GKCONV_NN_AVGPOOL_H
#define GKCONV_NN_AVGPOOL_H
void avgpool2d_f32(const float *x, float *y, int NC, int H, int W, int KH, int KW, int SH, int SW,
                   int PH, int PW, int PEH, int PEW, int DH, int DW, int OH, int OW, int count_pad,
                   float *acc, int *wlo, int *whi, int *wcnt);
// gk_global_means_f32: y[p] = the mean of plane p of x (nc planes of plane
// values) in MlasPoolGlobalKernel's order (globalpool.go), eight planes at
// a time.
void gk_global_means_f32(const float *x, float *y, long nc, long plane);
#endif
