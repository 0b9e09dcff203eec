// Epilogue of the convolution paths (conv.go, conv_packed.go): the residual
// and the fused activation, on one output tile while it is in cache.
#include "conv_act.h"

#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

// x < 0 ? 0 : x keeps NaN as NaN, as the runtime's ReLU (Go's max) does.
CLONES void epi_rows_f32(float *y, const float *z, int rows, long n, long ld, int act) {
    for (int j = 0; j < rows; j++) {
        float *r = y + (long)j * ld;
        if (z) {
            const float *zr = z + (long)j * ld;
            for (long i = 0; i < n; i++) r[i] += zr[i];
        }
        if (act == 1) {
            for (long i = 0; i < n; i++) r[i] = r[i] < 0.0f ? 0.0f : r[i];
        } else if (act == 3) {
            for (long i = 0; i < n; i++) {
                float v = r[i] < 0.0f ? 0.0f : r[i];
                r[i] = v > 6.0f ? 6.0f : v;
            }
        }
    }
}
