#ifndef GKCONV_NN_CONV_ACT_H
#define GKCONV_NN_CONV_ACT_H
// epi_rows_f32 is the convolution epilogue on the first n floats of each of
// rows rows of y (row stride ld), in place: it adds the residual z (the same
// layout as y; NULL: none), then applies a fused activation (MindSpore
// ActivationType: 1 RELU, 2 SIGMOID, 3 RELU6, 10 TANH, 12 HSWISH, 18 SWISH;
// anything else: none). The convolution calls it on each output tile right
// after the tile is written, while it is still in cache.
void epi_rows_f32(float *y, const float *z, int rows, long n, long ld, int act);
// epi_prelu_planes_f32: PRelu (planes first.., slope per plane % c) or, slope NULL,
// LeakyRelu (leaky_alpha) in place on planes planes of n floats, bit for
// bit as the separate ops (conv_act.c).
void epi_prelu_planes_f32(float *y, const float *slope, long c, long first, long planes, long n, double leaky_alpha);
#endif
