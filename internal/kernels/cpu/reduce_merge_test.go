package cpu

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestGeneralReduceKeepsRows: a general-path reduction over the last axis of
// a contiguous input (here through a Reshape) must keep one accumulator per
// row. The accumulator's access used to be left out of the loop-merge plan
// when the innermost loop reduces, so the kept and reduced dims merged into
// one loop that summed every row into the first slot.
func TestGeneralReduceKeepsRows(t *testing.T) {
	b := testkit.New(t, "rows")
	x := b.Input("", 3, 7, 31)
	r := b.Op("Reshape", nil, x, b.Ints(21, 31))
	s := b.Op("ReduceSum", keep(1), r, b.Ints(1))  // [21,1]
	m := b.Op("ReduceMax", keep(1), r, b.Ints(-1)) // [21,1]
	n := b.GraphKernel("rows", s, m)
	build(t, t.TempDir(), n)
	if strings.Contains(n.Attrs.String(ir.GKKernelSource, ""), "row-wise") {
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
		b := testkit.New(t, "nan")
		x := b.Input("", c.shape...)
		n := b.GraphKernel("nan", b.Op(c.op, keep(1), b.Op("Sqrt", nil, x), b.Ints(c.axis)))
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

// TestSoftmaxRowMaxSkipsNaNTest: a softmax's row max drops the per-element
// NaN test (its NaN reaches every output through the row sum anyway), and
// a row holding a NaN still comes out all NaN; a ReduceMax whose Sub is
// also an output keeps the test.
func TestSoftmaxRowMaxSkipsNaNTest(t *testing.T) {
	n := softmaxBody(t, 4, 300)
	build(t, t.TempDir(), n)
	if src := kernelBody(n); strings.Contains(src, "!=") {
		t.Errorf("softmax kernel still tests for NaN:\n%s", src)
	}
	xi := randTensor(rand.New(rand.NewSource(9)), []int64{4, 300}, -3, 3)
	xi.F32()[1*300+17] = float32(math.NaN())
	got := runKernel(t, n, 2, xi)[0].F32()
	want := softmaxRef(xi.F32(), 4, 300)
	for i, g := range got {
		if row := i / 300; row == 1 {
			if !math.IsNaN(float64(g)) {
				t.Fatalf("row 1 (with a NaN) element %d = %g, want NaN", i, g)
			}
		} else if math.Abs(float64(g)-want[i]) > 1e-6 {
			t.Fatalf("element %d = %g, want %g", i, g, want[i])
		}
	}

	b := testkit.New(t, "shifted")
	x := b.Input("", 4, 300)
	m := b.Op("ReduceMax", keep(1), x, b.Ints(-1))
	d := b.Op("Sub", nil, x, m) // an output: its NaN must not depend on the row sum
	e := b.Op("Exp", nil, d)
	s := b.Op("ReduceSum", keep(1), e, b.Ints(-1))
	k := b.GraphKernel("shifted", b.Op("RealDiv", nil, e, s), d)
	build(t, t.TempDir(), k)
	if src := kernelBody(k); !strings.Contains(src, "!=") {
		t.Errorf("a ReduceMax whose Sub is an output lost its NaN test")
	}
}

// kernelBody is the generated kernel function, without the shared header.
func kernelBody(n *ir.Node) string {
	src := n.Attrs.String(ir.GKKernelSource, "")
	return src[max(0, strings.LastIndex(src, "(void **args)")):]
}
