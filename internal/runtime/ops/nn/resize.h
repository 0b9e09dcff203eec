#ifndef GKCONV_RESIZE_H
#define GKCONV_RESIZE_H
#include <stdint.h>

// gk_resize_bilinear_row_f32 writes one output row of ow pixels of ch
// channels (ch 1: NCHW planes) from the two source rows: x1/x2 the source
// columns, dx1/dx2 their weights, dy1/dy2 the rows' (resize.c).
void gk_resize_bilinear_row_f32(float *out, const float *row1, const float *row2, int ow, int ch,
                                const int32_t *x1, const int32_t *x2, const float *dx1, const float *dx2,
                                float dy1, float dy2);

#endif
