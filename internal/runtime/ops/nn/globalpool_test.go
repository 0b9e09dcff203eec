package nn

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// onnxruntime 1.30's GlobalAveragePool (CPU, ORT_DISABLE_ALL: MlasPool's
// global kernel) on one-node models, printed as float32 bits, for planes of
// every remainder mod 4, a single element, sizes past MLAS's 2048-element
// pooling buffer and Eigen's block sizes, and 1-D and 3-D spatial ranks.
// The input is x[i] = ((i*37)%101-50)/7.3 over the whole tensor. An
// AveragePool whose window is the whole input gives the same bits there
// (the same MLAS kernel), and so it does here.
var gapOrtBits = []struct {
	shape []int64
	want  []uint32
}{
	{[]int64{1, 3, 7, 7}, []uint32{0xbe00d2b3, 0x3d14dcc5, 0xbdabc399}},
	{[]int64{1, 2, 48, 64}, []uint32{0xbade19e0, 0xba3b08cb}},
	{[]int64{2, 3, 13, 17}, []uint32{0xbd437eb5, 0x3cf8cfcf, 0xbc8919ae, 0xbaa27db2, 0x3c6993f8, 0xbd068fba}},
	{[]int64{1, 4, 1, 1}, []uint32{0xc0db2d96, 0xbfe3f1f9, 0x40526934, 0xc0af57ac}},
	{[]int64{1, 3, 3, 5}, []uint32{0xbf62c6b9, 0x3edbc336, 0xbdcdbc35}},
	{[]int64{1, 2, 1, 3}, []uint32{0xbfe3f1f8, 0xbed26935}},
	{[]int64{1, 2, 2, 2}, []uint32{0xc02d2693, 0x3e8c4624}},
	{[]int64{1, 2, 70, 90}, []uint32{0xba1f9a13, 0xba254cf5}},
	{[]int64{1, 2, 130, 257}, []uint32{0x37097f9c, 0xb938ddbc}},
	{[]int64{1, 2, 3, 4, 5}, []uint32{0xbd879924, 0xbde07031}},
	{[]int64{1, 3, 11}, []uint32{0xbebf485d, 0x3d1906b4, 0x3ee58a0a}},
}

func ortPatternInput(shape []int64) *ir.Tensor {
	x := make([]float32, ir.NumElements(shape))
	for i := range x {
		x[i] = float32((i*37)%101-50) / float32(7.3)
	}
	return f32(shape, x...)
}

func TestGlobalAveragePoolBitsOfOnnxruntime(t *testing.T) {
	for _, c := range gapOrtBits {
		x := ortPatternInput(c.shape)
		outShape := append([]int64{c.shape[0], c.shape[1]}, make([]int64, len(c.shape)-2)...)
		for i := 2; i < len(outShape); i++ {
			outShape[i] = 1
		}
		y := ir.NewTensor(ir.Float32, outShape)
		run(t, "GlobalAveragePool", nil, []*ir.Tensor{x}, y)
		// the same window as an AveragePool
		y2 := ir.NewTensor(ir.Float32, outShape)
		run(t, "AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(c.shape[2:]...)}, []*ir.Tensor{x}, y2)
		for i, w := range c.want {
			if g := math.Float32bits(y.F32()[i]); g != w {
				t.Errorf("%v plane %d: GlobalAveragePool %#08x, onnxruntime %#08x", c.shape, i, g, w)
			}
			if g := math.Float32bits(y2.F32()[i]); g != w {
				t.Errorf("%v plane %d: whole-window AvgPool %#08x, onnxruntime %#08x", c.shape, i, g, w)
			}
		}
	}
}

// The float16 path computes in float32 and rounds once; float64 averages.
func TestGlobalAveragePoolTypes(t *testing.T) {
	x := f32([]int64{1, 2, 2, 2}, 1, 2, 3, 4, -1, -2, -3, -5)
	y := ir.NewTensor(ir.Float32, []int64{1, 2, 1, 1})
	run(t, "GlobalAveragePool", nil, []*ir.Tensor{x}, y)
	expect(t, y, 2.5, -2.75)
	x64 := ir.NewTensor(ir.Float64, []int64{1, 1, 3})
	copy(x64.F64(), []float64{1, 2, 4})
	y64 := ir.NewTensor(ir.Float64, []int64{1, 1, 1})
	run(t, "GlobalAveragePool", nil, []*ir.Tensor{x64}, y64)
	expect(t, y64, 7.0/3)
}

// TestGlobalMeansInterleaved: the eight-planes-at-a-time C sums give the
// bits of mlasGlobalMeanF32 (MLAS's order, one plane at a time) for plane
// counts around multiples of eight and planes of every remainder mod 4, at
// one and two threads.
func TestGlobalMeansInterleaved(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, nc := range []int{1, 7, 8, 9, 16, 17, 40} {
		for _, plane := range []int{1, 2, 3, 4, 5, 49, 196, 1001} {
			x := make([]float32, nc*plane)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 3)
			}
			for _, threads := range []int{1, 2} {
				y := make([]float32, nc)
				mlasGlobalMeans(&opkernel.Ctx{Threads: threads}, x, y, nc, plane)
				for p := range y {
					if w := mlasGlobalMeanF32(x[p*plane : (p+1)*plane]); math.Float32bits(y[p]) != math.Float32bits(w) {
						t.Fatalf("nc %d plane %d threads %d: plane %d mean %v, MLAS order %v", nc, plane, threads, p, y[p], w)
					}
				}
			}
		}
	}
}
