package nn

import (
	"fmt"
	"math"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
)

// onnxruntime 1.30's float32 ConvTranspose (CPU, ORT_DISABLE_ALL, one-node
// models) as the FNV-1a 64 hash of its output's bits (little-endian, in
// order) and its first values: overlapping taps (kernel 3, stride 2, pads,
// output_padding), batch 2, groups, no bias, and 128 input channels (one
// MLAS K block). x[i] = ((i*37)%101-50)/7.3, w[i] = ((i*53)%89-44)/31.7,
// b[j] = (j-1)/3. MLAS's product is one fused multiply-add chain per
// element; OpenBLAS's Haswell kernels (GKCONV_CPU_ISA=avx2) rounded it
// otherwise, so this runs at every ISA level.
var convTransposeOrtBits = []struct {
	x, w  []int64
	attrs ir.Attrs
	bias  bool
	y     []int64
	hash  uint64
	first []uint32
}{
	{[]int64{1, 5, 6, 7}, []int64{5, 3, 3, 3}, ir.Attrs{"strides": ir.IntsAttr(2, 2), "pads": ir.IntsAttr(1, 1, 1, 1),
		"output_padding": ir.IntsAttr(1, 1)}, true, []int64{1, 3, 12, 14}, 0xa3bbae9a7a3488d2, []uint32{0x3f9d0378, 0xc199d81f, 0x402b6eca}},
	{[]int64{2, 20, 4, 5}, []int64{20, 4, 2, 2}, ir.Attrs{"strides": ir.IntsAttr(2, 2)}, true, []int64{2, 4, 8, 10},
		0x866139c18d0ce74e, []uint32{0x418bcc8f, 0x3f62a1e0, 0x411342fb}},
	{[]int64{1, 6, 5, 5}, []int64{6, 2, 3, 3}, ir.Attrs{"strides": ir.IntsAttr(1, 1), "group": ir.IntAttr(2)}, false,
		[]int64{1, 4, 7, 7}, 0x467082dd45dba414, []uint32{0x40dea297, 0x40bd4f1a, 0xc097f903}},
	{[]int64{1, 128, 3, 4}, []int64{128, 2, 3, 3}, ir.Attrs{"strides": ir.IntsAttr(2, 2), "pads": ir.IntsAttr(1, 0, 1, 0)}, true,
		[]int64{1, 2, 5, 9}, 0xa5af31d5b4eb5c92, []uint32{0xc0c13330, 0x41b58f7b, 0xc1189abf}},
}

func patternTensor(shape []int64, a, m, c int, d float32) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		t.F32()[i] = float32((i*a)%m-c) / d
	}
	return t
}

func fnvBits(v []float32) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, f := range v {
		u := math.Float32bits(f)
		for k := 0; k < 4; k++ {
			h ^= uint64(u>>(8*k)) & 0xff
			h *= 0x100000001b3
		}
	}
	return h
}

func TestConvTransposeBitsOfOnnxruntime(t *testing.T) {
	defer cpuisa.Force(cpuisa.Detected())
	for _, lv := range []cpuisa.Level{cpuisa.Portable, cpuisa.AVX2, cpuisa.AVX512} {
		if err := cpuisa.Force(lv); err != nil {
			continue
		}
		for _, c := range convTransposeOrtBits {
			x, w := patternTensor(c.x, 37, 101, 50, 7.3), patternTensor(c.w, 53, 89, 44, 31.7)
			in := []*ir.Tensor{x, w}
			if c.bias {
				m := c.y[1]
				b := ir.NewTensor(ir.Float32, []int64{m})
				for j := range b.F32() {
					b.F32()[j] = float32(j-1) / 3
				}
				in = append(in, b)
			}
			attrs := ir.Attrs{"kernel_shape": ir.IntsAttr(c.w[2:]...)}
			for k, v := range c.attrs {
				attrs[k] = v
			}
			for _, threads := range []int{1, 2} {
				y := ir.NewTensor(ir.Float32, c.y)
				f, _ := opkernel.Lookup("Conv2DTranspose")
				if err := f(&opkernel.Ctx{Threads: threads}, &ir.Node{Name: "t", Op: "Conv2DTranspose", Attrs: attrs}, in, []*ir.Tensor{y}); err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%v x%v w%v threads %d", lv, c.x, c.w, threads)
				for i, want := range c.first {
					if g := math.Float32bits(y.F32()[i]); g != want {
						t.Errorf("%s: y[%d] = %#08x, onnxruntime %#08x", name, i, g, want)
					}
				}
				if h := fnvBits(y.F32()); h != c.hash {
					t.Errorf("%s: output hash %#016x, onnxruntime's %#016x", name, h, c.hash)
				}
			}
		}
	}
}
