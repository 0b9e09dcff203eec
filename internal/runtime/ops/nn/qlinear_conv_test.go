package nn

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
)

// TestQLinearConvEpilogueExact: QLinearConv with the requantization in the
// kernels' tile epilogue (gk_qepi's qout form) against a plain reference:
// int64 window sums + B, the multiplier x_scale*w_scale/y_scale in float32,
// float32(acc)*mult rounded half to even, + y_zero_point, saturated. Every
// ISA level; shapes that reach each path (the unfold-and-GEMM of small
// planes, the blocked unfold of >= 512 positions, the direct VNNI conv of
// rows >= 16 wide, the depthwise kernel): channels off 4, 6 and 16,
// padding, stride 2, dilation, groups, depthwise, 1x1; uint8 and int8 x
// and y, per-tensor and per-channel w scales and zero points, with and
// without B; one and two threads.
func TestQLinearConvEpilogueExact(t *testing.T) {
	type cfg struct {
		c, m, h, w, kh, kw, s, d, group int64
		pad                             int64
		xdt, ydt                        ir.DType
		perCh, bias                     bool
	}
	r := rand.New(rand.NewSource(34))
	defer cpuisa.Reset()
	cases := []cfg{
		{5, 7, 9, 11, 3, 3, 1, 1, 1, 1, ir.Uint8, ir.Uint8, true, true},
		{13, 19, 40, 30, 3, 3, 1, 1, 1, 1, ir.Uint8, ir.Uint8, true, true},   // blocked, m off 6
		{20, 33, 34, 36, 3, 3, 2, 1, 1, 1, ir.Uint8, ir.Int8, false, true},   // stride 2
		{17, 10, 24, 48, 1, 1, 1, 1, 1, 0, ir.Int8, ir.Uint8, true, false},   // 1x1
		{12, 18, 30, 40, 3, 3, 1, 2, 3, 2, ir.Uint8, ir.Uint8, true, true},   // groups, dilation
		{8, 8, 33, 35, 3, 3, 2, 1, 8, 1, ir.Uint8, ir.Uint8, true, true},     // depthwise
		{3, 22, 45, 47, 7, 7, 2, 1, 1, 3, ir.Uint8, ir.Uint8, true, true},    // a stem
		{64, 70, 14, 14, 3, 3, 1, 1, 1, 1, ir.Int8, ir.Int8, true, true},     // deep, small plane
		{9, 40, 20, 64, 3, 3, 1, 1, 1, 1, ir.Uint8, ir.Uint8, false, false},  // wide rows
		{32, 20, 10, 40, 3, 3, 1, 1, 1, 1, ir.Uint8, ir.Int8, true, true},    // deep, wide rows (AMX GEMM)
		{6, 6, 40, 70, 3, 3, 1, 1, 6, 1, ir.Int8, ir.Uint8, false, true},     // depthwise, wide stride 1
		{8, 8, 70, 66, 3, 3, 2, 1, 8, 1, ir.Uint8, ir.Int8, true, true},      // depthwise, stride 2 past the float path's planes
		{4, 4, 20, 21, 17, 17, 1, 1, 4, 8, ir.Uint8, ir.Uint8, true, true},   // depthwise of 289 taps
		{16, 16, 45, 37, 3, 3, 1, 1, 16, 1, ir.Int8, ir.Int8, true, true},    // depthwise VNNI, odd output rows, a 5-column tail
		{16, 16, 61, 83, 3, 3, 2, 1, 16, 1, ir.Uint8, ir.Uint8, true, false}, // depthwise VNNI stride 2, odd sides
		{3, 3, 30, 30, 3, 3, 1, 1, 3, 0, ir.Uint8, ir.Int8, true, true},      // depthwise VNNI without padding
		{5, 5, 14, 14, 3, 3, 1, 1, 5, 1, ir.Uint8, ir.Uint8, true, true},     // depthwise, a small plane
		{7, 7, 15, 15, 3, 3, 2, 1, 7, 1, ir.Int8, ir.Uint8, true, true},      // depthwise, a small plane, stride 2
		{8, 8, 24, 26, 3, 3, 2, 1, 8, 1, ir.Uint8, ir.Int8, true, true},      // depthwise VNNI, a 12x13 plane, stride 2
		{130, 20, 9, 21, 1, 1, 1, 1, 1, 0, ir.Int8, ir.Uint8, true, true},    // deep 1x1: x's rows packed as they are
		{6, 9, 9, 21, 1, 1, 1, 1, 1, 0, ir.Uint8, ir.Uint8, false, false},    // shallow 1x1, small plane
	}
	defer allowInt8AMX(true)
	// AVX-512 twice: AMX tiles where the CPU has them, then the VNNI kernels
	for li, lv := range []cpuisa.Level{cpuisa.AVX512, cpuisa.AVX512, cpuisa.AVX2, cpuisa.Portable} {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("skip %s: %v", lv, err)
			continue
		}
		allowInt8AMX(li == 0)
		for _, c := range cases {
			for _, wk := range convWeights {
				for _, threads := range []int{1, 2} {
					prepared := threads == 2 // the weight packed (and on AVX2 split) at load
					x, w := randQ(r, c.xdt, 1, c.c, c.h, c.w), wk.gen(r, ir.Int8, c.m, c.c/c.group, c.kh, c.kw)
					xz := randQ(r, c.xdt)
					nw := int64(1)
					if c.perCh {
						nw = c.m
					}
					wz := randQ(r, ir.Int8, nw)
					if wk.name == "bell" && c.perCh { // symmetric, as quantizers write them
						clear(wz.Data)
					}
					ws := ir.NewTensor(ir.Float32, []int64{nw})
					for i := range ws.F32() {
						ws.F32()[i] = 0.002 + 0.004*r.Float32()
					}
					xs, ys := ir.Float32Tensor(nil, 0.03+0.02*r.Float32()), ir.Float32Tensor(nil, 0.2+0.5*r.Float32())
					yz := randQ(r, c.ydt)
					in := []*ir.Tensor{x, xs, xz, w, ws, wz, ys, yz}
					var bias *ir.Tensor
					if c.bias {
						bias = ir.NewTensor(ir.Int32, []int64{c.m})
						for i := range bias.I32() {
							bias.I32()[i] = int32(r.Intn(40001) - 20000)
						}
						in = append(in, bias)
					}
					oh := (c.h+2*c.pad-c.d*(c.kh-1)-1)/c.s + 1
					ow := (c.w+2*c.pad-c.d*(c.kw-1)-1)/c.s + 1
					y := ir.NewTensor(c.ydt, []int64{1, c.m, oh, ow})
					n := &ir.Node{Name: "qc", Op: "QLinearConv", Attrs: ir.Attrs{"group": ir.IntAttr(c.group), "strides": ir.IntsAttr(c.s, c.s),
						"dilations": ir.IntsAttr(c.d, c.d), "pads": ir.IntsAttr(c.pad, c.pad, c.pad, c.pad)}}
					var pa *qpackedA
					if prepared {
						pa = packedConvWeight(opkernel.NewPrep(), w)
					}
					if err := qconv(&opkernel.Ctx{Threads: threads}, n, in, []*ir.Tensor{y}, true, pa, nil); err != nil {
						t.Fatal(err)
					}
					lo, hi := 0.0, 255.0
					if c.ydt == ir.Int8 {
						lo, hi = -128, 127
					}
					cg, mg := c.c/c.group, c.m/c.group
					for o := int64(0); o < c.m; o++ {
						g, wi := o/mg, int64(0)
						if c.perCh {
							wi = o
						}
						mult := xs.F32()[0] * ws.F32()[wi] / ys.F32()[0]
						for i := int64(0); i < oh; i++ {
							for j := int64(0); j < ow; j++ {
								var acc int64
								if bias != nil {
									acc = int64(bias.I32()[o])
								}
								for ic := int64(0); ic < cg; ic++ {
									for a := int64(0); a < c.kh; a++ {
										for e := int64(0); e < c.kw; e++ {
											ih, iw := i*c.s-c.pad+a*c.d, j*c.s-c.pad+e*c.d
											if ih < 0 || ih >= c.h || iw < 0 || iw >= c.w {
												continue
											}
											acc += (qval(x, int(((g*cg+ic)*c.h+ih)*c.w+iw)) - qval(xz, 0)) * (qval(w, int(((o*cg+ic)*c.kh+a)*c.kw+e)) - qval(wz, int(wi)))
										}
									}
								}
								want := math.Max(lo, math.Min(hi, math.RoundToEven(float64(float32(acc)*mult))+float64(qval(yz, 0))))
								if got := float64(qval(y, int((o*oh+i)*ow+j))); got != want {
									t.Fatalf("%s %+v %s weights, threads %d, prepared %v: y[%d][%d][%d] = %v, want %v (acc %d)", lv, c, wk.name, threads, prepared, o, i, j, got, want, acc)
								}
							}
						}
					}
				}
			}
		}
	}
}
