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
