package nn

import (
	"math"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"gkconv/internal/runtime/ops/opstest"
)

// TestLossNormBackend runs the backend tests of the family's ops this
// package implements (the suite's NLL, SCE, RMSNorm, ... tests), with
// NaN-filled outputs on 1 and 3 threads.
func TestLossNormBackend(t *testing.T) {
	cases := opstest.Select(opstest.Manifest(t), opstest.Filter{Ops: opstest.OpSet(
		"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "RMSNormalization", "RotaryEmbedding",
		"LpPool", "LpNormalization", "GroupNormalization", "LRN", "MatrixDeterminant", "MeanVarianceNormalization")})
	opstest.RunAll(t, cases, opstest.Check{Threads: []int{1, 3}})
}

// runErr runs op and returns its error.
func runErr(op string, attrs ir.Attrs, in []*ir.Tensor, outs ...*ir.Tensor) error {
	f, _ := opkernel.Lookup(op)
	return f(&opkernel.Ctx{Threads: 3}, &ir.Node{Name: "t", Op: op, Attrs: attrs}, in, outs)
}

func TestNLLLoss(t *testing.T) {
	x := f32([]int64{2, 3}, -1, -2, -3, -0.5, -1.5, -2.5)
	w := f32([]int64{3}, 1, 2, 3)
	tgt := ir.Int64Tensor([]int64{2}, 2, 0)
	for _, tc := range []struct {
		name  string
		attrs ir.Attrs
		tgt   *ir.Tensor
		w     *ir.Tensor
		shape []int64
		want  []float64
	}{
		{"none", ir.Attrs{"reduction": ir.StringAttr("none")}, tgt, w, []int64{2}, []float64{9, 0.5}},
		{"sum", ir.Attrs{"reduction": ir.StringAttr("sum")}, tgt, w, []int64{}, []float64{9.5}},
		{"mean weighted", nil, tgt, w, []int64{}, []float64{9.5 / 4}},
		{"mean unweighted", nil, tgt, nil, []int64{}, []float64{(3 + 0.5) / 2}},
		{"ignored", ir.Attrs{"ignore_index": ir.IntAttr(2)}, tgt, w, []int64{}, []float64{0.5}},
		// a negative ignore_index is never used as a class
		{"negative ignore", ir.Attrs{"reduction": ir.StringAttr("none"), "ignore_index": ir.IntAttr(-1)},
			ir.Int64Tensor([]int64{2}, -1, 0), w, []int64{2}, []float64{0, 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []*ir.Tensor{x, tc.tgt}
			if tc.w != nil {
				in = append(in, tc.w)
			}
			attrs := tc.attrs
			if attrs == nil {
				attrs = ir.Attrs{}
			}
			y := ir.NewTensor(ir.Float32, tc.shape)
			run(t, "NegativeLogLikelihoodLoss", attrs, in, y)
			expect(t, y, tc.want...)
		})
	}
	// N-d: input [1, 2, 2], int32 target [1, 2].
	tgt32 := ir.NewTensor(ir.Int32, []int64{1, 2})
	copy(tgt32.I32(), []int32{1, 0})
	y := ir.NewTensor(ir.Float64, []int64{1, 2})
	x64 := ir.NewTensor(ir.Float64, []int64{1, 2, 2})
	copy(x64.F64(), []float64{-1, -2, -3, -4})
	run(t, "NegativeLogLikelihoodLoss", ir.Attrs{"reduction": ir.StringAttr("none")}, []*ir.Tensor{x64, tgt32}, y)
	expect(t, y, 3, 2)
	// a class outside [0, C) that is not ignored is an error
	if err := runErr("NegativeLogLikelihoodLoss", ir.Attrs{}, []*ir.Tensor{x, ir.Int64Tensor([]int64{2}, 3, 0)}, ir.NewTensor(ir.Float32, []int64{})); err == nil {
		t.Error("target 3 of 3 classes: no error")
	}
	// empty batch, reduction sum: 0
	y0 := ir.NewTensor(ir.Float32, []int64{})
	run(t, "NegativeLogLikelihoodLoss", ir.Attrs{"reduction": ir.StringAttr("sum")},
		[]*ir.Tensor{ir.NewTensor(ir.Float32, []int64{0, 3}), ir.NewTensor(ir.Int64, []int64{0})}, y0)
	expect(t, y0, 0)
}

func TestSoftmaxCrossEntropyLoss(t *testing.T) {
	x := f32([]int64{2, 2}, 0, 0, 1, 3)
	lse := 3 + math.Log1p(math.Exp(-2))
	tgt := ir.Int64Tensor([]int64{2}, 1, 0)
	loss, lp := ir.NewTensor(ir.Float32, []int64{}), ir.NewTensor(ir.Float32, []int64{2, 2})
	run(t, "SoftmaxCrossEntropyLoss", ir.Attrs{}, []*ir.Tensor{x, tgt}, loss, lp)
	expect(t, lp, -math.Ln2, -math.Ln2, 1-lse, 3-lse)
	expect(t, loss, (math.Ln2+lse-1)/2)
	// float16 scores, weights, ignore_index, reduction none; no log_prob output
	h := ir.NewTensor(ir.Float16, []int64{2, 2})
	opkernel.F32ToHalf(h, []float32{0, 0, 1, 3})
	lh := ir.NewTensor(ir.Float16, []int64{2})
	run(t, "SoftmaxCrossEntropyLoss", ir.Attrs{"reduction": ir.StringAttr("none"), "ignore_index": ir.IntAttr(1)},
		[]*ir.Tensor{h, tgt, f32([]int64{2}, 2, 5)}, lh)
	expect16(t, lh, 0, 2*(lse-1))
}

// expect16 compares a float16 tensor at float16 precision.
func expect16(t *testing.T, got *ir.Tensor, want ...float64) {
	t.Helper()
	g, _ := got.Float64s()
	for i := range want {
		if math.Abs(g[i]-want[i]) > 2e-3*(1+math.Abs(want[i])) {
			t.Fatalf("element %d: got %v, want %v", i, g, want)
		}
	}
}

func TestRMSNormalization(t *testing.T) {
	x := f32([]int64{2, 2}, 3, 4, 0, 0)
	y := ir.NewTensor(ir.Float32, []int64{2, 2})
	r := math.Sqrt(12.5 + 1e-5)
	run(t, "RMSNormalization", ir.Attrs{"axis": ir.IntAttr(-1)}, []*ir.Tensor{x, f32([]int64{2}, 1, 2)}, y)
	expect(t, y, 3/r, 8/r, 0, 0)
	// axis 0: one statistic over the whole tensor; scale [2] broadcasts over rows
	run(t, "RMSNormalization", ir.Attrs{"axis": ir.IntAttr(-2), "epsilon": ir.FloatAttr(0)}, []*ir.Tensor{x, f32([]int64{2}, 1, 2)}, y)
	expect(t, y, 1.2, 3.2, 0, 0)
	// float16 through float32
	h, yh := ir.NewTensor(ir.Float16, []int64{2, 2}), ir.NewTensor(ir.Float16, []int64{2, 2})
	opkernel.F32ToHalf(h, []float32{3, 4, 0, 0})
	run(t, "RMSNormalization", ir.Attrs{"axis": ir.IntAttr(0), "epsilon": ir.FloatAttr(0)}, []*ir.Tensor{h, f32([]int64{2}, 1, 2)}, yh)
	expect16(t, yh, 1.2, 3.2, 0, 0)
	// float64 and empty rows
	x64 := ir.NewTensor(ir.Float64, []int64{0, 3})
	run(t, "RMSNormalization", ir.Attrs{}, []*ir.Tensor{x64, f32([]int64{3}, 1, 1, 1)}, ir.NewTensor(ir.Float64, []int64{0, 3}))
	if err := runErr("RMSNormalization", ir.Attrs{"axis": ir.IntAttr(2)}, []*ir.Tensor{x, f32([]int64{1}, 1)}, y); err == nil {
		t.Error("axis 2 of rank 2: no error")
	}
}

func TestGroupNormalization(t *testing.T) {
	x := f32([]int64{1, 4, 2}, 0, 2, 4, 6, 1, 1, 1, 1)
	s := 1 / math.Sqrt(5+1e-5)
	want := []float64{-3 * s, -1 * s, 1 * s, 3 * s, 1, 1, 1, 1}
	perChannel := ir.NewTensor(ir.Float32, []int64{1, 4, 2})
	run(t, "GroupNormalization", ir.Attrs{"num_groups": ir.IntAttr(2)},
		[]*ir.Tensor{x, f32([]int64{4}, 1, 1, 2, 2), f32([]int64{4}, 0, 0, 1, 1)}, perChannel)
	expect(t, perChannel, want...)
	// opset 18: one scale and bias per group
	perGroup := ir.NewTensor(ir.Float32, []int64{1, 4, 2})
	run(t, "GroupNormalization", ir.Attrs{"num_groups": ir.IntAttr(2)},
		[]*ir.Tensor{x, f32([]int64{2}, 1, 2), f32([]int64{2}, 0, 1)}, perGroup)
	expect(t, perGroup, want...)
	if err := runErr("GroupNormalization", ir.Attrs{"num_groups": ir.IntAttr(3)},
		[]*ir.Tensor{x, f32([]int64{4}, 1, 1, 1, 1), f32([]int64{4}, 0, 0, 0, 0)}, perGroup); err == nil {
		t.Error("3 groups of 4 channels: no error")
	}
}

func TestMeanVarianceNormalization(t *testing.T) {
	y := ir.NewTensor(ir.Float32, []int64{1, 1, 1, 4})
	run(t, "MeanVarianceNormalization", ir.Attrs{}, []*ir.Tensor{f32([]int64{1, 1, 1, 4}, 1, 2, 3, 4)}, y)
	s := 1 / (math.Sqrt(1.25) + 1e-9)
	expect(t, y, -1.5*s, -0.5*s, 0.5*s, 1.5*s)
	// negative axes; a constant row gives 0
	y2 := ir.NewTensor(ir.Float32, []int64{2, 2})
	run(t, "MeanVarianceNormalization", ir.Attrs{"axes": ir.IntsAttr(-1)}, []*ir.Tensor{f32([]int64{2, 2}, 1, 3, 5, 5)}, y2)
	expect(t, y2, -1, 1, 0, 0)
}

func TestLRN(t *testing.T) {
	x := f32([]int64{1, 3, 1, 1}, 1, 2, 3)
	y := ir.NewTensor(ir.Float32, []int64{1, 3, 1, 1})
	// size 2: channels [c, c+1] (floor((size-1)/2) before, ceil after)
	run(t, "LRN", ir.Attrs{"size": ir.IntAttr(2), "alpha": ir.FloatAttr(1), "beta": ir.FloatAttr(1), "bias": ir.FloatAttr(1)}, []*ir.Tensor{x}, y)
	expect(t, y, 1/3.5, 2/7.5, 3/5.5)
	// size 3: [c-1, c+1], defaults alpha 1e-4, beta 0.75, bias 1
	run(t, "LRN", ir.Attrs{"size": ir.IntAttr(3)}, []*ir.Tensor{x}, y)
	a := 1e-4 / 3
	expect(t, y, 1/math.Pow(1+a*5, 0.75), 2/math.Pow(1+a*14, 0.75), 3/math.Pow(1+a*13, 0.75))
}

func TestLpNormalizationKernel(t *testing.T) {
	y := ir.NewTensor(ir.Float32, []int64{2, 2})
	run(t, "LpNormalization", ir.Attrs{"axis": ir.IntAttr(0), "p": ir.IntAttr(1)}, []*ir.Tensor{f32([]int64{2, 2}, 1, 0, -3, 0)}, y)
	expect(t, y, 0.25, 0, -0.75, 0) // a zero norm gives 0
	run(t, "LpNormalization", ir.Attrs{}, []*ir.Tensor{f32([]int64{2, 2}, 3, 4, 0, 2)}, y)
	expect(t, y, 0.6, 0.8, 0, 1)
}

func TestLpPool(t *testing.T) {
	y := ir.NewTensor(ir.Float32, []int64{1, 1, 4})
	run(t, "LpPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2), "pads": ir.IntsAttr(1, 1), "p": ir.IntAttr(3)},
		[]*ir.Tensor{f32([]int64{1, 1, 3}, 1, -2, 2)}, y)
	expect(t, y, 1, math.Cbrt(9), math.Cbrt(16), 2)
	// LpPool-1 gave p as a float
	run(t, "LpPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2), "pads": ir.IntsAttr(1, 1), "p": ir.FloatAttr(3)},
		[]*ir.Tensor{f32([]int64{1, 1, 3}, 1, -2, 2)}, y)
	expect(t, y, 1, math.Cbrt(9), math.Cbrt(16), 2)
	// p 2 (default), 2-D, strides, float64
	x := ir.NewTensor(ir.Float64, []int64{1, 1, 2, 3})
	copy(x.F64(), []float64{3, 4, 0, 1, 2, 2})
	y2 := ir.NewTensor(ir.Float64, []int64{1, 1, 1, 2})
	run(t, "LpPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "strides": ir.IntsAttr(1, 1)}, []*ir.Tensor{x}, y2)
	expect(t, y2, math.Sqrt(9+16+1+4), math.Sqrt(16+4+4))
}

func TestDet(t *testing.T) {
	y := ir.NewTensor(ir.Float32, []int64{4})
	x := f32([]int64{4, 2, 2},
		1, 2, 3, 4, // -2
		0, 1, 1, 0, // a row swap: -1
		1, 2, 2, 4, // singular
		2, 0, 0, 0.5)
	run(t, "MatrixDeterminant", nil, []*ir.Tensor{x}, y)
	expect(t, y, -2, -1, 0, 1)
	y3 := ir.NewTensor(ir.Float64, []int64{})
	x3 := ir.NewTensor(ir.Float64, []int64{3, 3})
	copy(x3.F64(), []float64{0, 2, 1, 3, 0, 0, 1, 1, 4})
	run(t, "MatrixDeterminant", nil, []*ir.Tensor{x3}, y3)
	expect(t, y3, -21)
	// no matrices; a 0x0 matrix has determinant 1
	run(t, "MatrixDeterminant", nil, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{0, 2, 2})}, ir.NewTensor(ir.Float32, []int64{0}))
	y0 := ir.NewTensor(ir.Float32, []int64{})
	run(t, "MatrixDeterminant", nil, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{0, 0})}, y0)
	expect(t, y0, 1)
}

func TestRotaryEmbedding(t *testing.T) {
	x4 := f32([]int64{1, 1, 1, 4}, 1, 2, 3, 4)
	cos, sin := f32([]int64{1, 1, 2}, 0, 1), f32([]int64{1, 1, 2}, 1, 0)
	y := ir.NewTensor(ir.Float32, []int64{1, 1, 1, 4})
	// halves: pairs (0, 2) rotated by 90 degrees, (1, 3) by 0
	run(t, "RotaryEmbedding", nil, []*ir.Tensor{x4, cos, sin}, y)
	expect(t, y, -3, 2, 1, 4)
	// interleaved: pairs (0, 1) and (2, 3)
	run(t, "RotaryEmbedding", ir.Attrs{"interleaved": ir.IntAttr(1)}, []*ir.Tensor{x4, cos, sin}, y)
	expect(t, y, -2, 1, 3, 4)
	// rotary_embedding_dim 2: channels 2, 3 pass through
	c1, s1 := f32([]int64{1, 1, 1}, 0), f32([]int64{1, 1, 1}, 1)
	run(t, "RotaryEmbedding", ir.Attrs{"rotary_embedding_dim": ir.IntAttr(2)}, []*ir.Tensor{x4, c1, s1}, y)
	expect(t, y, -2, 1, 3, 4)
	// 3-D input [B, S, H*D] with 2 heads, position_ids picking row 2 of the caches
	x3 := f32([]int64{1, 1, 4}, 1, 2, 3, 4)
	cp, sp := f32([]int64{3, 1}, 1, 1, 0), f32([]int64{3, 1}, 0, 0, 1)
	y3 := ir.NewTensor(ir.Float32, []int64{1, 1, 4})
	run(t, "RotaryEmbedding", ir.Attrs{"num_heads": ir.IntAttr(2)}, []*ir.Tensor{x3, cp, sp, ir.Int64Tensor([]int64{1, 1}, 2)}, y3)
	expect(t, y3, -2, 1, -4, 3)
	if err := runErr("RotaryEmbedding", ir.Attrs{"num_heads": ir.IntAttr(2)}, []*ir.Tensor{x3, cp, sp, ir.Int64Tensor([]int64{1, 1}, 3)}, y3); err == nil {
		t.Error("position id 3 of 3 cache rows: no error")
	}
}
