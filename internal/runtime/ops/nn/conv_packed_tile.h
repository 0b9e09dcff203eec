#ifndef GKCONV_NN_CONV_PACKED_TILE_H
#define GKCONV_NN_CONV_PACKED_TILE_H
// im2col_tile_f32 unfolds output pixels [p0, p0+mt) of a 2-D conv into
// col[C*KH*KW][ld] (row = (c, kh, kw), the weight order; column = pixel).
void im2col_tile_f32(const float *x, float *col, int C, int H, int W, int KH, int KW,
                     int SH, int SW, int PH, int PW, int DH, int DW, int OW, int p0, int mt, int ld);
// tile_to_nchw_f32 writes the [mt][m] GEMM tile (row = pixel, row stride
// ldt >= m) into y[m][ldy]
// at columns [p0, p0+mt), adding bias[m] when bias is not NULL and the
// residual z (laid out as y) when z is not NULL in the same pass, then
// applying the fused activation act (epi_rows_f32's codes; 0 none) 16
// channels at a time.
void tile_to_nchw_f32(const float *tile, int ldt, float *y, const float *bias, const float *z, int mt, int m, long ldy, long p0,
                      int act);
#endif
