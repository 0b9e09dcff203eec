#ifndef GKCONV_NN_CONV_STEM_H
#define GKCONV_NN_CONV_STEM_H
// Direct convolution for few input channels (conv_stem.c).
#define STEM_MAX_KW 16
#define STEM_ACT_RELU 1
#define STEM_ACT_RELU6 3
// STEM_BLOCK is the output channels per block of the packed weights:
// conv_pack_w(w, wp, m, C*KH*KW, STEM_BLOCK) (conv_packed_gemm.h).
#define STEM_BLOCK 8
// conv_stem_buf_floats is the size of the input band buffer for band output
// rows.
long conv_stem_buf_floats(int C, int KH, int KW, int SH, int SW, int DH, int DW, int OW, int band);
// conv_fill_phases copies input rows [ih0, ih0+rows) of the C channels of
// x[C][H][W] into buf[C][rows][SW][wq], split by column phase: phase p of a
// row holds the columns p - PW, p - PW + SW, ... (0 outside the row). Rows
// outside the image are left alone. The variant follows gk_nn_isa().
void conv_fill_phases(const float *x, float *buf, int C, int H, int W, int PW, int SW, int ih0, int rows,
                      int wq);
// conv_stem_supported: the kernel width and stride this path takes.
int conv_stem_supported(int KW, int SW);
// conv_stem_f32 computes output rows [oh0, oh1) of all M channels of one
// image: y[M][OH][OW] = act(conv(x[C][H][W], w) + bias + z) (bias and z, the
// residual laid out as y, may be NULL; act as epi_rows_f32's), with wp from
// conv_pack_w and buf of conv_stem_buf_floats(..., oh1-oh0) floats.
// Returns -1 without touching y below the AVX2 level or for an unsupported
// kernel width or stride, else 0.
int conv_stem_f32(const float *x, const float *wp, const float *bias, const float *z, float *y, int C, int H, int W,
                  int M, int KH, int KW, int SH, int SW, int PH, int PW, int DH, int DW, int OH, int OW, int oh0,
                  int oh1, int act, float *buf);
#endif
