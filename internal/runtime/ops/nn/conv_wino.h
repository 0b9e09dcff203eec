#ifndef GKCONV_NN_CONV_WINO_H
#define GKCONV_NN_CONV_WINO_H
// Winograd F(4x4, 3x3) and F(2x2, 3x3) convolution (conv_wino.go): float32, 3x3 kernel,
// stride 1, dilation 1, group 1, constant weights.
//
// wino_nr is the width of the weight panels at the current ISA level (32 at
// AVX-512, 16 at AVX2; 0: no Winograd path below AVX2).
int wino_nr(void);

// wino_task computes output channels [m0, m0+mg) of output tile rows
// [tr0, tr0+rows) (o output rows each) of one image, by F(4x4, 3x3) when
// o = 4 and F(2x2, 3x3) when o = 2:
//   x      the image's input, C planes of H x W;
//   u      the transformed weights: [X][mp/nr][cp][nr] (winoPack layout;
//          X = (o+2)^2 transformed values);
//   y, z   the image's output and residual (NULL: none), M planes of OH x OW;
//   bias   NULL or M values; act the fused activation (epi_rows_f32's codes).
// scratch holds wino_scratch_floats(...) floats.
void wino_task(int o, const float *x, int C, int H, int W, int pad_t, int pad_l, int OH, int OW, int tr0, int rows,
               const float *u, int cp, int mp, int nr, int m0, int mg, float *y, const float *bias, const float *z,
               int act, float *scratch);
long wino_scratch_floats(int o, int cp, int OW, int rows, int mg, int nr);
#endif
