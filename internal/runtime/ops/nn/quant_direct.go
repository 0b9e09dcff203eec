package nn

// The direct (no unfold) 8-bit convolutions' drivers: AVX-512 VNNI and AVX2
// (qconv_direct.c), per image and group.

/*
#cgo CFLAGS: -O3 -std=gnu11 -I${SRCDIR}/../../cpuisa
#include "qgemm.h"

static void gk_qconv_vnni_rows_e(const uint8_t *buf, int xsigned, int cg, const int *geo, int xz, int wsigned,
                                 const int32_t *wz, int M, int o0, int o1, int32_t *c, int ldc, int has_e,
                                 const float *es, int esm, const float *eb, int ebm, int erelu, uint8_t *qo,
                                 const int32_t *qc, const int32_t *qb, int qz, int qlo, int qhi, int qs) {
    gk_qepi e = {es, esm, eb, ebm, erelu, qo, qc, qb, qz, qlo, qhi, qs};
    gk_qconv_vnni_rows(buf, xsigned, cg, geo, xz, wsigned, wz, M, o0, o1, c, ldc, has_e ? &e : NULL);
}

static void gk_qconv_avx2_rows_e(const uint8_t *buf, int xsigned, int cg, const int *geo, int xz, int wsigned,
                                 const int32_t *wz, int M, const int8_t *sa, const int32_t *rowsum,
                                 const int32_t *roff, const int32_t *rk, const int16_t *rv, int o0, int o1, int32_t *c,
                                 int ldc, int has_e, const float *es, int esm, const float *eb, int ebm, int erelu,
                                 uint8_t *qo, const int32_t *qc, const int32_t *qb, int qz, int qlo, int qhi, int qs) {
    gk_qepi e = {es, esm, eb, ebm, erelu, qo, qc, qb, qz, qlo, qhi, qs};
    gk_qconv_avx2_rows(buf, xsigned, cg, geo, xz, wsigned, wz, M, sa, rowsum, roff, rk, rv, o0, o1, c, ldc,
                       has_e ? &e : NULL);
}

*/
import "C"

import (
	"unsafe"

	"gkconv/internal/runtime/opkernel"
)

// qconvDirectVNNI is the convolution without an unfold (gk_qconv_vnni_*,
// qconv_direct.c): per image and group, x laid out once as channel quads,
// then the output rows in parallel.
func qconvDirectVNNI(ctx *opkernel.Ctx, x []byte, xSigned bool, w []byte, wSigned bool, wzp []int32, xz int32,
	geo *[18]C.int, nb, c, m, group, iv, ov int, acc []int32, epi *qepi) {
	cg, mg := c/group, m/group
	xsg, wsg := cbool(xSigned), cbool(wSigned)
	size := int(C.gk_qconv_vnni_size(C.int(cg), &geo[0], C.int(mg)))
	scratch := getF32((size + 3) / 4)
	defer putF32(scratch)
	buf := (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(*scratch)))
	kvol := int(geo[4] * geo[5])
	oh := int(geo[16])
	// rows per task: about 64K multiply-adds of 4 bytes
	grain := max(1, (1<<16)/max(1, mg*cg*kvol*int(geo[17])/4))
	for bi := 0; bi < nb; bi++ {
		for gi := 0; gi < group; gi++ {
			xg := x[(bi*c+gi*cg)*iv:]
			C.gk_qconv_vnni_prep((*C.uint8_t)(unsafe.Pointer(&xg[0])), xsg, C.int(cg), &geo[0], C.int(xz),
				(*C.uint8_t)(unsafe.Pointer(&w[gi*mg*cg*kvol])), wsg, C.int(mg), buf)
			he, es, esm, eb, ebm, er := epi.rows(gi * mg).args(0)
			qo, qc, qb, qz, qlo, qhi, qs := epi.rows(gi * mg).qargs(0)
			cg0 := acc[(bi*m+gi*mg)*ov:]
			opkernel.ParallelFor(ctx, oh, grain, func(s, e int) {
				C.gk_qconv_vnni_rows_e(buf, xsg, C.int(cg), &geo[0], C.int(xz), wsg,
					(*C.int32_t)(unsafe.Pointer(&wzp[gi*mg])), C.int(mg), C.int(s), C.int(e),
					(*C.int32_t)(unsafe.Pointer(&cg0[0])), C.int(ov), he, es, esm, eb, ebm, er, qo, qc, qb, qz, qlo, qhi, qs)
			})
		}
	}
}

// qconvDirectAVX2 is the AVX2 convolution without an unfold
// (gk_qconv_avx2_rows): per image and group x laid out as for the VNNI one,
// then the output rows in parallel with the weights split at load (d).
func qconvDirectAVX2(ctx *opkernel.Ctx, x []byte, xSigned bool, wSigned bool, wzp []int32, xz int32, d *qdirectW,
	geo *[18]C.int, nb, c, m, group, iv, ov int, acc []int32, epi *qepi) {
	cg, mg := c/group, m/group
	xsg, wsg := cbool(xSigned), cbool(wSigned)
	size := int(C.gk_qconv_vnni_size(C.int(cg), &geo[0], 0))
	scratch := getF32((size + 3) / 4)
	defer putF32(scratch)
	buf := (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(*scratch)))
	kvol := int(geo[3] * geo[4] * geo[5])
	oh := int(geo[16])
	grain := max(1, (1<<16)/max(1, mg*cg*kvol*int(geo[17])/4))
	rk, rv := (*C.int32_t)(unsafe.Pointer(&d.rk[0])), (*C.int16_t)(unsafe.Pointer(&d.rv[0]))
	for bi := 0; bi < nb; bi++ {
		for gi := 0; gi < group; gi++ {
			xg := x[(bi*c+gi*cg)*iv:]
			C.gk_qconv_vnni_prep((*C.uint8_t)(unsafe.Pointer(&xg[0])), xsg, C.int(cg), &geo[0], C.int(xz), nil, wsg, 0, buf)
			C.gk_qconv_avx2_u8(buf, C.int(cg), &geo[0])
			he, es, esm, eb, ebm, er := epi.rows(gi * mg).args(0)
			qo, qc, qb, qz, qlo, qhi, qs := epi.rows(gi * mg).qargs(0)
			cg0 := acc[(bi*m+gi*mg)*ov:]
			r0 := gi * mg
			sa := (*C.int8_t)(unsafe.Pointer(&d.sa[r0*d.kp]))
			rs, ro := (*C.int32_t)(unsafe.Pointer(&d.rowsum[r0])), (*C.int32_t)(unsafe.Pointer(&d.roff[r0]))
			opkernel.ParallelFor(ctx, oh, grain, func(s, e int) {
				C.gk_qconv_avx2_rows_e(buf, xsg, C.int(cg), &geo[0], C.int(xz), wsg,
					(*C.int32_t)(unsafe.Pointer(&wzp[gi*mg])), C.int(mg), sa, rs, ro, rk, rv, C.int(s), C.int(e),
					(*C.int32_t)(unsafe.Pointer(&cg0[0])), C.int(ov), he, es, esm, eb, ebm, er, qo, qc, qb, qz, qlo, qhi, qs)
			})
		}
	}
}
