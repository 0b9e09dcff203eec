package kernels

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

// TestGeneralReduceKeepsRows: a general-path reduction over the last axis of
// a contiguous input (here through a Reshape) must keep one accumulator per
// row. The accumulator's access used to be left out of the loop-merge plan
// when the innermost loop reduces, so the kept and reduced dims merged into
// one loop that summed every row into the first slot.
func TestGeneralReduceKeepsRows(t *testing.T) {
	b := newBody(t, "rows")
	x := b.input(ir.Float32, 3, 7, 31)
	r := b.op("Reshape", nil, x, b.ints(21, 31))
	s := b.op("ReduceSum", keep(1), r, b.ints(1))  // [21,1]
	m := b.op("ReduceMax", keep(1), r, b.ints(-1)) // [21,1]
	n := b.node("rows", s, m)
	build(t, t.TempDir(), n)
	if strings.Contains(n.Attrs.String(AttrKernelSource, ""), "row-wise") {
		t.Log("body took the row-wise path; the general path is what this test is for")
	}
	xi := randTensor(rand.New(rand.NewSource(3)), x.Shape, -1, 1)
	var ws, wm []float64
	for i := 0; i < 21; i++ {
		sum, mx := 0.0, math.Inf(-1)
		for _, v := range xi.F32()[i*31 : i*31+31] {
			sum += float64(v)
			mx = math.Max(mx, float64(v))
		}
		ws, wm = append(ws, sum), append(wm, mx)
	}
	got := runKernel(t, n, 2, xi)
	checkClose(t, "sum", got[0].F32(), ws, 1e-5, 1)
	checkClose(t, "max", got[1].F32(), wm, 1e-6)
}

// TestReduceMaxMinNaN: ReduceMax/ReduceMin keep a NaN, as the op library
// and ONNX do, in the row-wise lanes (rows of 700: lane partials and their
// pairwise merge) and in the general path (axis 0).
func TestReduceMaxMinNaN(t *testing.T) {
	for _, c := range []struct {
		op    string
		shape []int64
		axis  int64
	}{{"ReduceMax", []int64{5, 700}, -1}, {"ReduceMin", []int64{5, 700}, -1}, {"ReduceMax", []int64{9, 6}, 0}, {"ReduceMin", []int64{9, 6}, 0}} {
		b := newBody(t, "nan")
		x := b.input(ir.Float32, c.shape...)
		n := b.node("nan", b.op(c.op, keep(1), b.op("Sqrt", nil, x), b.ints(c.axis)))
		build(t, t.TempDir(), n)
		xi := randTensor(rand.New(rand.NewSource(5)), x.Shape, -0.2, 2) // about one NaN in 11
		rows, cols := int(c.shape[0]), int(c.shape[1])
		f := xi.F32()
		for i := range f { // the last row (or column) has no NaN
			if (c.axis != 0 && i/cols == rows-1) || (c.axis == 0 && i%cols == cols-1) {
				f[i] = float32(math.Abs(float64(f[i])))
			}
		}
		got := runKernel(t, n, 2, xi)[0].F32()
		outer, inner, stride := rows, cols, 1 // reduce over cols by default
		if c.axis == 0 {
			outer, inner, stride = cols, rows, cols
		}
		for o := 0; o < outer; o++ {
			want := math.Inf(1)
			if c.op == "ReduceMax" {
				want = math.Inf(-1)
			}
			for i := 0; i < inner; i++ {
				idx := o*cols + i
				if c.axis == 0 {
					idx = i*stride + o
				}
				v := math.Sqrt(float64(f[idx]))
				if math.IsNaN(v) || math.IsNaN(want) {
					want = math.NaN()
				} else if (c.op == "ReduceMax") == (v > want) {
					want = v
				}
			}
			if g := float64(got[o]); math.IsNaN(g) != math.IsNaN(want) || (!math.IsNaN(want) && math.Abs(g-want) > 1e-6) {
				t.Fatalf("%s axis %d, slot %d: got %g, want %g", c.op, c.axis, o, g, want)
			}
		}
	}
}
