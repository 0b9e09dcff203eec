//go:build cgo

package tensorops

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../../cpuisa
#include <stdint.h>
#include <string.h>
#include "gk_isa.h"

GK_ISA_LEVEL(gk_tr)

typedef uint32_t gk_v8u __attribute__((vector_size(32)));
typedef int32_t gk_v8i __attribute__((vector_size(32)));

// gk_transpose32: dst[i*ldo + k] = src[k*ldi + i] for i < rows, k < cols,
// for 4-byte elements, in 8x8 blocks transposed in registers (three rounds
// of two-input shuffles, which gcc turns into unpack/shuffle/permute
// instructions at each ISA level); the block edges element by element.
GK_ISA_BODY void gk_transpose32_body(uint32_t *dst, const uint32_t *src, long rows, long cols, long ldi, long ldo) {
	const gk_v8i lo1 = {0, 8, 1, 9, 4, 12, 5, 13}, hi1 = {2, 10, 3, 11, 6, 14, 7, 15};
	const gk_v8i lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
	const gk_v8i lo3 = {0, 1, 2, 3, 8, 9, 10, 11}, hi3 = {4, 5, 6, 7, 12, 13, 14, 15};
	long i = 0;
	for (; i + 8 <= rows; i += 8) {
		long k = 0;
		for (; k + 8 <= cols; k += 8) {
			gk_v8u r[8], t[8], u[8], o[8];
			for (int j = 0; j < 8; j++) memcpy(&r[j], src + (k + j) * ldi + i, 32);
			for (int j = 0; j < 8; j += 2) {
				t[j] = __builtin_shuffle(r[j], r[j + 1], lo1);
				t[j + 1] = __builtin_shuffle(r[j], r[j + 1], hi1);
			}
			for (int j = 0; j < 8; j += 4) {
				u[j] = __builtin_shuffle(t[j], t[j + 2], lo2);
				u[j + 1] = __builtin_shuffle(t[j], t[j + 2], hi2);
				u[j + 2] = __builtin_shuffle(t[j + 1], t[j + 3], lo2);
				u[j + 3] = __builtin_shuffle(t[j + 1], t[j + 3], hi2);
			}
			for (int j = 0; j < 4; j++) {
				o[j] = __builtin_shuffle(u[j], u[j + 4], lo3);
				o[j + 4] = __builtin_shuffle(u[j], u[j + 4], hi3);
			}
			// o[j] is input column i + j: output row i + j
			for (int j = 0; j < 8; j++) memcpy(dst + (i + j) * ldo + k, &o[j], 32);
		}
		for (; k < cols; k++)
			for (int j = 0; j < 8; j++) dst[(i + j) * ldo + k] = src[k * ldi + i + j];
	}
	for (; i < rows; i++)
		for (long k = 0; k < cols; k++) dst[i * ldo + k] = src[k * ldi + i];
}
GK_ISA_VARIANTS(gk_tr_isa(), gk_transpose32, (uint32_t *dst, const uint32_t *src, long rows, long cols, long ldi, long ldo),
	(dst, src, rows, cols, ldi, ldo))
*/
import "C"

import (
	"unsafe"

	"gkconv/internal/runtime/cpuisa"
)

func init() { cpuisa.Register(func(l cpuisa.Level) { C.gk_tr_set_isa(C.int(l)) }) }

// transposeInC: transposeBlock32 takes 4-byte elements.
const transposeInC = true

// transposeBlock32 is transposeBlock for 4-byte elements in C; false when the
// element type is not 4 bytes.
func transposeBlock32[T any](dst, src []T, i0, i1, k0, k1, ldi, ldo int) bool {
	var z T
	if unsafe.Sizeof(z) != 4 || i1 <= i0 || k1 <= k0 {
		return false
	}
	d := unsafe.Pointer(&dst[i0*ldo+k0])
	s := unsafe.Pointer(&src[k0*ldi+i0])
	C.gk_transpose32((*C.uint32_t)(d), (*C.uint32_t)(s), C.long(i1-i0), C.long(k1-k0), C.long(ldi), C.long(ldo))
	return true
}
