#ifndef GKCONV_NN_CONV_ACT_H
#define GKCONV_NN_CONV_ACT_H
// act_rows_f32 applies a fused activation (MindSpore ActivationType: 1 RELU,
// 3 RELU6; anything else leaves y alone) to the first n floats of each of
// rows rows of y (row stride ld), in place. The convolution calls it on each
// output tile right after the tile is written, while it is still in cache.
void act_rows_f32(float *y, int rows, long n, long ld, int act);
#endif
