#ifndef GKCONV_NN_NORM_H
#define GKCONV_NN_NORM_H
// gk_scale_shift_planes: planes [p0, p1) of inner floats, plane p scaled
// by a[p % c] and shifted by b[p % c] (norm.c).
void gk_scale_shift_planes(const float *x, float *y, long p0, long p1, long c, long inner, const float *a,
                           const float *b);
#endif
