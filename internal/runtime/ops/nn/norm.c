// The per-channel affine map of BatchNormalization in inference mode
// (norm.go): y = x * a[c] + b[c], a multiply then an add, each rounded as
// the Go loop it replaced rounded them (no contraction into a fused
// multiply-add), so the results are unchanged; vectorised per ISA level
// (the Go loop ran at 16 GB/s, well under the memory's bandwidth).
#pragma GCC optimize("fp-contract=off")
#include "isa.h"
#include "norm.h"

GK_ISA_BODY void gk_scale_shift_planes_body(const float *x, float *y, long p0, long p1, long c, long inner,
                                            const float *a, const float *b) {
    for (long p = p0; p < p1; p++) {
        const float av = a[p % c], bv = b[p % c];
        const float *xs = x + p * inner;
        float *ys = y + p * inner;
        for (long i = 0; i < inner; i++) {
            const float t = xs[i] * av;
            ys[i] = t + bv;
        }
    }
}
GK_ISA_VARIANTS(gk_nn_isa(), gk_scale_shift_planes,
                (const float *x, float *y, long p0, long p1, long c, long inner, const float *a, const float *b),
                (x, y, p0, p1, c, inner, a, b))
