package cpu

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestRowLaneReductions covers the lane-blocked row loop: a row length that
// is neither a multiple of the lane block nor of the flush chunk, every
// laneable reduction next to a non-laneable one (ReduceProd) in one pass,
// and enough rows to run in parallel.
func TestRowLaneReductions(t *testing.T) {
	const rows, cols = 40, 1100 // 17 blocks of 64 + 12, two flush chunks
	b := testkit.New(t, "lanes")
	x := b.Input("", rows, cols)
	red := func(op string) *ir.Value { return b.Op(op, keep(1), x, b.Ints(-1)) }
	ops := []string{"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceProd"}
	var outs []*ir.Value
	for _, op := range ops {
		outs = append(outs, red(op))
	}
	// A second pass over the row, with a per-element output.
	mx := outs[2]
	d := b.Op("Sub", nil, x, mx)
	outs = append(outs, b.Op("ReduceSum", keep(1), b.Op("Mul", nil, d, d), b.Ints(-1)), d)
	n := b.GraphKernel("lanes", outs...)
	build(t, t.TempDir(), n)
	src := n.Attrs.String(ir.GKKernelSource, "")
	if !strings.Contains(src, "row-wise") || !strings.Contains(src, "[jl]") || !strings.Contains(src, "__builtin_prefetch") {
		t.Fatalf("expected a lane-blocked row-wise kernel with prefetch:\n%s", src)
	}
	xi := randTensor(rand.New(rand.NewSource(11)), x.Shape, 0.9, 1.1)
	xs := xi.F32()
	want := make([][]float64, len(outs))
	var wd []float64
	for r := 0; r < rows; r++ {
		row := xs[r*cols : (r+1)*cols]
		sum, sq, l1, prod := 0.0, 0.0, 0.0, 1.0
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, f := range row {
			v := float64(f)
			sum += v
			sq += v * v
			l1 += math.Abs(v)
			prod *= v
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		var dd float64
		for _, f := range row {
			e := float64(f) - float64(float32(hi))
			dd += e * e
			wd = append(wd, e)
		}
		for i, v := range []float64{sum, sum / cols, hi, lo, sq, l1, math.Sqrt(sq), math.Log(sum), prod, dd} {
			want[i] = append(want[i], v)
		}
	}
	for _, threads := range []int{1, 2} {
		got := runKernel(t, n, threads, xi)
		for i, op := range append(ops, "sum((x-max)^2)") {
			checkClose(t, op, got[i].F32(), want[i], 1e-5)
		}
		checkClose(t, "x-max", got[len(got)-1].F32(), wd, 1e-6, 1)
	}
}

// TestRowLaneMultiDim reduces two trailing dims: the lane blocks run inside
// a loop over the outer reduced dim.
func TestRowLaneMultiDim(t *testing.T) {
	b := testkit.New(t, "lanes2d")
	x := b.Input("", 3, 5, 200)
	s := b.Op("ReduceSum", keep(0), x, b.Ints(1, 2))
	m := b.Op("ReduceMax", keep(0), x, b.Ints(1, 2))
	n := b.GraphKernel("lanes2d", s, m)
	build(t, t.TempDir(), n)
	xi := randTensor(rand.New(rand.NewSource(12)), x.Shape, -2, 3)
	var ws, wm []float64
	for r := 0; r < 3; r++ {
		sum, hi := 0.0, math.Inf(-1)
		for _, f := range xi.F32()[r*1000 : (r+1)*1000] {
			sum += float64(f)
			hi = math.Max(hi, float64(f))
		}
		ws, wm = append(ws, sum), append(wm, hi)
	}
	got := runKernel(t, n, 1, xi)
	checkClose(t, "sum", got[0].F32(), ws, 1e-5, 100) // terms of size ~1 cancel in a sum of ~500
	checkClose(t, "max", got[1].F32(), wm, 0)
}

// TestRowSumAccuracy sums long rows with a large common offset, where a
// float running sum loses digits: lanes flushed into doubles must not.
func TestRowSumAccuracy(t *testing.T) {
	const rows, cols = 4, 1 << 18
	b := testkit.New(t, "acc")
	x := b.Input("", rows, cols)
	n := b.GraphKernel("acc", b.Op("ReduceMean", keep(1), x, b.Ints(-1)))
	build(t, t.TempDir(), n)
	xi := randTensor(rand.New(rand.NewSource(13)), x.Shape, 1000, 1001)
	var want []float64
	for r := 0; r < rows; r++ {
		var s float64
		for _, f := range xi.F32()[r*cols : (r+1)*cols] {
			s += float64(f)
		}
		want = append(want, s/cols)
	}
	got := runKernel(t, n, 1, xi)
	checkClose(t, "mean", got[0].F32(), want, 1e-7) // within float32 rounding of the mean
}

// TestSoftmaxOutputRowBuffer checks the row buffer that lives in an output
// row: exp(x-max) is kept in out0's row while out1 (the same exp values)
// and out0 (exp/sum) are both written, in either output order.
func TestSoftmaxOutputRowBuffer(t *testing.T) {
	const rows, cols = 9, 300
	for _, expFirst := range []bool{false, true} {
		b := testkit.New(t, "sm2")
		x := b.Input("", rows, cols)
		m := b.Op("ReduceMax", keep(1), x, b.Ints(-1))
		e := b.Op("Exp", nil, b.Op("Sub", nil, x, m))
		s := b.Op("ReduceSum", keep(1), e, b.Ints(-1))
		y := b.Op("RealDiv", nil, e, s)
		outs := []*ir.Value{y, e}
		if expFirst {
			outs = []*ir.Value{e, y}
		}
		n := b.GraphKernel("sm2", outs...)
		build(t, t.TempDir(), n)
		if src := n.Attrs.String(ir.GKKernelSource, ""); !strings.Contains(src, "float *const rb0 = out0 + row") {
			t.Fatalf("exp(x-max) should be buffered in an output row:\n%s", src)
		}
		xi := randTensor(rand.New(rand.NewSource(14)), x.Shape, -8, 8)
		wy := softmaxRef(xi.F32(), rows, cols)
		var we []float64
		for r := 0; r < rows; r++ {
			row := xi.F32()[r*cols : (r+1)*cols]
			hi := math.Inf(-1)
			for _, f := range row {
				hi = math.Max(hi, float64(f))
			}
			for _, f := range row {
				we = append(we, math.Exp(float64(f)-hi))
			}
		}
		got := runKernel(t, n, 1, xi)
		gy, ge := got[0], got[1]
		if expFirst {
			gy, ge = ge, gy
		}
		checkClose(t, "softmax", gy.F32(), wy, 1e-5)
		checkClose(t, "exp", ge.F32(), we, 1e-6)
	}
}

// TestRowHalfInputs runs a lane-blocked LayerNorm-like body on float16 data
// (two cache lines per block to prefetch, float compute).
func TestRowHalfInputs(t *testing.T) {
	const rows, cols = 6, 130
	b := testkit.New(t, "half_ln")
	x := b.InputOf("", ir.Float16, rows, cols)
	mean := b.Op("ReduceMean", keep(1), x, b.Ints(-1))
	d := b.Op("Sub", nil, x, mean)
	n := b.GraphKernel("half_ln", d, mean)
	build(t, t.TempDir(), n)
	xi := ir.NewTensor(ir.Float16, x.Shape)
	r := rand.New(rand.NewSource(15))
	var wd, wm []float64
	for i := range xi.U16() {
		xi.U16()[i] = ir.F32ToF16(float32(r.Float64()*4 - 1))
	}
	for i := 0; i < rows; i++ {
		var s float64
		for _, h := range xi.U16()[i*cols : (i+1)*cols] {
			s += float64(ir.F16ToF32(h))
		}
		mh := float64(ir.F16ToF32(ir.F32ToF16(float32(s / cols))))
		wm = append(wm, mh)
		for _, h := range xi.U16()[i*cols : (i+1)*cols] {
			wd = append(wd, float64(ir.F16ToF32(ir.F32ToF16(float32(float64(ir.F16ToF32(h))-s/cols)))))
		}
	}
	got := runKernel(t, n, 1, xi)
	half := func(t *ir.Tensor) (f []float32) {
		for _, h := range t.U16() {
			f = append(f, ir.F16ToF32(h))
		}
		return f
	}
	checkClose(t, "x-mean f16", half(got[0]), wd, 1e-3, 1)
	checkClose(t, "mean f16", half(got[1]), wm, 1e-3)
}
