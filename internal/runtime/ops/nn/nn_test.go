package nn

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func f32(shape []int64, v ...float32) *ir.Tensor { return ir.Float32Tensor(shape, v...) }

func run(t *testing.T, op string, attrs ir.Attrs, in []*ir.Tensor, outs ...*ir.Tensor) {
	t.Helper()
	f, ok := opkernel.Lookup(op)
	if !ok {
		t.Fatalf("%s not registered", op)
	}
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	if err := f(&opkernel.Ctx{Threads: 2}, &ir.Node{Name: "t", Op: op, Attrs: attrs}, in, outs); err != nil {
		t.Fatal(err)
	}
}

func expect(t *testing.T, got *ir.Tensor, want ...float64) {
	t.Helper()
	g, _ := got.Float64s()
	if len(g) != len(want) {
		t.Fatalf("got %d elements %v, want %v", len(g), g, want)
	}
	for i := range g {
		if math.Abs(g[i]-want[i]) > 1e-5+1e-5*math.Abs(want[i]) {
			t.Fatalf("element %d: got %v, want %v", i, g, want)
		}
	}
}

func TestMatMul(t *testing.T) {
	cases := []struct {
		name     string
		a, b     *ir.Tensor
		attrs    ir.Attrs
		outShape []int64
		want     []float64
	}{
		{"1d x 1d", f32([]int64{3}, 1, 2, 3), f32([]int64{3}, 4, 5, 6), nil, []int64{}, []float64{32}},
		{"2d", f32([]int64{2, 2}, 1, 2, 3, 4), f32([]int64{2, 2}, 5, 6, 7, 8), nil, []int64{2, 2}, []float64{19, 22, 43, 50}},
		{"transpose_a", f32([]int64{2, 2}, 1, 3, 2, 4), f32([]int64{2, 2}, 5, 6, 7, 8),
			ir.Attrs{"transpose_a": ir.IntAttr(1)}, []int64{2, 2}, []float64{19, 22, 43, 50}},
		{"transpose_b", f32([]int64{2, 2}, 1, 2, 3, 4), f32([]int64{2, 2}, 5, 7, 6, 8),
			ir.Attrs{"transpose_b": ir.IntAttr(1)}, []int64{2, 2}, []float64{19, 22, 43, 50}},
		{"1d x 2d", f32([]int64{2}, 1, 1), f32([]int64{2, 3}, 1, 2, 3, 4, 5, 6), nil, []int64{3}, []float64{5, 7, 9}},
		{"2d x 1d", f32([]int64{2, 3}, 1, 2, 3, 4, 5, 6), f32([]int64{3}, 1, 0, 1), nil, []int64{2}, []float64{4, 10}},
		// batch [2] x no batch: folded into one GEMM
		{"batch x shared", f32([]int64{2, 1, 2}, 1, 2, 3, 4), f32([]int64{2, 2}, 1, 0, 0, 1), nil, []int64{2, 1, 2}, []float64{1, 2, 3, 4}},
		// batch dims [2,1] x [1,2] broadcast to [2,2]
		{"broadcast batch", f32([]int64{2, 1, 1, 1}, 1, 2), f32([]int64{1, 2, 1, 1}, 10, 20), nil, []int64{2, 2, 1, 1}, []float64{10, 20, 20, 40}},
		{"k = 0", f32([]int64{2, 0}), f32([]int64{0, 2}), nil, []int64{2, 2}, []float64{0, 0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y := ir.NewTensor(ir.Float32, c.outShape)
			for i := range y.F32() {
				y.F32()[i] = float32(math.NaN())
			}
			run(t, "MatMul", c.attrs, []*ir.Tensor{c.a, c.b}, y)
			expect(t, y, c.want...)
		})
	}
	t.Run("int32", func(t *testing.T) {
		a := ir.NewTensor(ir.Int32, []int64{2, 2})
		copy(a.I32(), []int32{1, 2, 3, 4})
		y := ir.NewTensor(ir.Int32, []int64{2, 2})
		run(t, "MatMul", nil, []*ir.Tensor{a, a}, y)
		expect(t, y, 7, 10, 15, 22)
	})
	t.Run("float64", func(t *testing.T) {
		a := ir.NewTensor(ir.Float64, []int64{1, 2})
		copy(a.F64(), []float64{1, 2})
		b := ir.NewTensor(ir.Float64, []int64{2, 1})
		copy(b.F64(), []float64{3, 4})
		y := ir.NewTensor(ir.Float64, []int64{1, 1})
		run(t, "MatMul", nil, []*ir.Tensor{a, b}, y)
		expect(t, y, 11)
	})
	t.Run("bias", func(t *testing.T) { // a folded bias Add: [2,2]x[2,3] + [1,3]
		y := ir.NewTensor(ir.Float32, []int64{2, 3})
		run(t, "MatMul", nil, []*ir.Tensor{f32([]int64{2, 2}, 1, 2, 3, 4), f32([]int64{2, 3}, 1, 0, 1, 0, 1, 1),
			f32([]int64{1, 3}, 10, 20, 30)}, y)
		expect(t, y, 11, 22, 33, 13, 24, 37)
		f, _ := opkernel.Lookup("MatMul")
		i32 := ir.NewTensor(ir.Int32, []int64{2, 2})
		err := f(&opkernel.Ctx{Threads: 1}, &ir.Node{Name: "t", Op: "MatMul", Attrs: ir.Attrs{}},
			[]*ir.Tensor{i32, i32, ir.NewTensor(ir.Int32, []int64{2})}, []*ir.Tensor{ir.NewTensor(ir.Int32, []int64{2, 2})})
		if _, ok := err.(*opkernel.Unsupported); !ok {
			t.Errorf("int32 bias: got %v, want Unsupported", err)
		}
		err = f(&opkernel.Ctx{Threads: 1}, &ir.Node{Name: "t", Op: "MatMul", Attrs: ir.Attrs{}},
			[]*ir.Tensor{f32([]int64{2, 2}), f32([]int64{2, 3}), f32([]int64{2})}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{2, 3})})
		if err == nil {
			t.Error("bias of 2 values for 3 columns accepted")
		}
	})
	t.Run("bad shapes", func(t *testing.T) {
		f, _ := opkernel.Lookup("MatMul")
		err := f(&opkernel.Ctx{Threads: 1}, &ir.Node{Name: "t", Op: "MatMul", Attrs: ir.Attrs{}},
			[]*ir.Tensor{f32([]int64{2, 3}), f32([]int64{2, 3})}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{2, 3})})
		if err == nil {
			t.Fatal("inner dims 3 vs 2 accepted")
		}
	})
}

func TestConvSmall(t *testing.T) {
	// 1x1x3x3 input 0..8, 2x2 kernel of ones, bias 1: sums of 2x2 windows + 1
	x := f32([]int64{1, 1, 3, 3}, 0, 1, 2, 3, 4, 5, 6, 7, 8)
	w := f32([]int64{1, 1, 2, 2}, 1, 1, 1, 1)
	y := ir.NewTensor(ir.Float32, []int64{1, 1, 2, 2})
	run(t, "Conv2D", nil, []*ir.Tensor{x, w, f32([]int64{1}, 1)}, y)
	expect(t, y, 9, 13, 21, 25)
	// SAME_UPPER with stride 2 on 3x3: out 2x2, total pad 1 at the end
	y = ir.NewTensor(ir.Float32, []int64{1, 1, 2, 2})
	run(t, "Conv2D", ir.Attrs{"auto_pad": ir.StringAttr("SAME_UPPER"), "strides": ir.IntsAttr(2, 2)}, []*ir.Tensor{x, w}, y)
	expect(t, y, 8, 7, 13, 8)
	// depthwise 3x3 pad 1 on 2 channels, kernel picks the centre tap times c+1
	x2 := f32([]int64{1, 2, 2, 2}, 1, 2, 3, 4, 5, 6, 7, 8)
	w2 := f32([]int64{2, 1, 3, 3}, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0)
	y2 := ir.NewTensor(ir.Float32, []int64{1, 2, 2, 2})
	run(t, "Conv2D", ir.Attrs{"group": ir.IntAttr(2), "pads": ir.IntsAttr(1, 1, 1, 1)}, []*ir.Tensor{x2, w2}, y2)
	expect(t, y2, 1, 2, 3, 4, 10, 12, 14, 16)
}

// TestConvMatchesDirect checks the float32 fast paths (im2col+GEMM,
// pointwise GEMM, depthwise kernel) against the plain loop in float64.
func TestConvMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	type cfg struct {
		sp, k, s, d, p []int64
		c, m, group    int64
		bias           bool
	}
	cfgs := []cfg{
		{[]int64{9, 10}, []int64{3, 3}, []int64{1, 1}, []int64{1, 1}, []int64{1, 1, 1, 1}, 4, 6, 1, true},
		{[]int64{9, 10}, []int64{1, 1}, []int64{1, 1}, []int64{1, 1}, []int64{0, 0, 0, 0}, 5, 7, 1, true},
		{[]int64{9, 10}, []int64{1, 1}, []int64{2, 2}, []int64{1, 1}, []int64{0, 0, 0, 0}, 5, 7, 1, false},
		{[]int64{11, 12}, []int64{3, 3}, []int64{1, 1}, []int64{1, 1}, []int64{1, 1, 1, 1}, 6, 6, 6, true},
		{[]int64{11, 12}, []int64{3, 3}, []int64{2, 2}, []int64{1, 1}, []int64{1, 1, 1, 1}, 6, 6, 6, true},
		{[]int64{11, 12}, []int64{3, 3}, []int64{1, 1}, []int64{2, 2}, []int64{2, 2, 2, 2}, 3, 3, 3, false},
		{[]int64{11, 12}, []int64{5, 5}, []int64{2, 1}, []int64{1, 1}, []int64{2, 1, 2, 3}, 4, 4, 4, true},
		{[]int64{11, 12}, []int64{3, 2}, []int64{3, 2}, []int64{1, 2}, []int64{0, 1, 2, 0}, 4, 6, 2, true},
		{[]int64{11, 12}, []int64{3, 3}, []int64{1, 1}, []int64{1, 1}, []int64{0, 0, 0, 0}, 2, 4, 2, false},
		{[]int64{40, 41}, []int64{3, 3}, []int64{1, 1}, []int64{1, 1}, []int64{1, 1, 1, 1}, 8, 20, 1, true},  // tiles unfolded in the loop
		{[]int64{40, 41}, []int64{3, 3}, []int64{2, 2}, []int64{1, 1}, []int64{1, 0, 1, 0}, 8, 40, 1, false}, // strided, unfolded per tile
		{[]int64{30, 30}, []int64{1, 1}, []int64{1, 1}, []int64{1, 1}, []int64{0, 0, 0, 0}, 8, 24, 1, true},  // pointwise, several tiles
		{[]int64{13}, []int64{3}, []int64{2}, []int64{2}, []int64{1, 2}, 4, 4, 1, true},
		{[]int64{5, 6, 7}, []int64{2, 3, 3}, []int64{1, 2, 1}, []int64{1, 1, 2}, []int64{1, 0, 1, 0, 1, 2}, 2, 3, 1, true},
		{[]int64{5, 6, 7}, []int64{3, 3, 3}, []int64{1, 1, 1}, []int64{1, 1, 1}, []int64{1, 1, 1, 1, 1, 1}, 3, 3, 3, true},
	}
	for i, c := range cfgs {
		nb := int64(2)
		xs := append([]int64{nb, c.c}, c.sp...)
		ws := append([]int64{c.m, c.c / c.group}, c.k...)
		x, w, b := randTensor(rng, xs...), randTensor(rng, ws...), randTensor(rng, c.m)
		attrs := ir.Attrs{"strides": ir.IntsAttr(c.s...), "dilations": ir.IntsAttr(c.d...), "pads": ir.IntsAttr(c.p...), "group": ir.IntAttr(c.group)}
		node := &ir.Node{Name: "t", Op: "Conv2D", Attrs: attrs}
		g, err := windowAttrs(node, x.Shape[2:], w.Shape[2:], false)
		if err != nil {
			t.Fatal(err)
		}
		ys := []int64{nb, c.m}
		for j := 3 - g.rank; j < 3; j++ {
			ys = append(ys, int64(g.out[j]))
		}
		in := []*ir.Tensor{x, w}
		var b64 []float64
		if c.bias {
			in = append(in, b)
			b64, _ = b.Float64s()
		}
		y := ir.NewTensor(ir.Float32, ys)
		for j := range y.F32() {
			y.F32()[j] = float32(math.NaN())
		}
		run(t, "Conv2D", attrs, in, y)
		x64, _ := x.Float64s()
		w64, _ := w.Float64s()
		ref := make([]float64, y.NumElements())
		convDirect(&opkernel.Ctx{Threads: 1}, g, int(nb), int(c.c), int(c.m), int(c.group), x64, w64, b64, ref)
		got, _ := y.Float64s()
		for j := range ref {
			if math.Abs(got[j]-ref[j]) > 1e-4+1e-4*math.Abs(ref[j]) {
				t.Fatalf("config %d (%+v): element %d got %g want %g", i, c, j, got[j], ref[j])
			}
		}
	}
}

func TestConvTranspose(t *testing.T) {
	// 1-D: x [1,1,3] = 1,2,3, kernel [1,1,2] = 1,1, stride 2: every input
	// copied to two outputs
	x := f32([]int64{1, 1, 3}, 1, 2, 3)
	w := f32([]int64{1, 1, 2}, 1, 1)
	y := ir.NewTensor(ir.Float32, []int64{1, 1, 6})
	run(t, "Conv2DTranspose", ir.Attrs{"strides": ir.IntsAttr(2)}, []*ir.Tensor{x, w}, y)
	expect(t, y, 1, 1, 2, 2, 3, 3)
	// stride 1 overlaps add up; pads trim one at each end; bias 10
	y = ir.NewTensor(ir.Float32, []int64{1, 1, 2})
	run(t, "Conv2DTranspose", ir.Attrs{"pads": ir.IntsAttr(1, 1)}, []*ir.Tensor{x, w, f32([]int64{1}, 10)}, y)
	// full output 1,3,5,3 -> trimmed 3,5
	expect(t, y, 13, 15)
	// output_shape larger than the natural size: the extra is zero (+bias)
	y = ir.NewTensor(ir.Float32, []int64{1, 1, 5})
	run(t, "Conv2DTranspose", ir.Attrs{"output_shape": ir.IntsAttr(5)}, []*ir.Tensor{x, w}, y)
	expect(t, y, 1, 3, 5, 3, 0)
	// float64 path
	x64 := ir.NewTensor(ir.Float64, []int64{1, 1, 3})
	copy(x64.F64(), []float64{1, 2, 3})
	w64 := ir.NewTensor(ir.Float64, []int64{1, 1, 2})
	copy(w64.F64(), []float64{1, 1})
	y64 := ir.NewTensor(ir.Float64, []int64{1, 1, 4})
	run(t, "Conv2DTranspose", nil, []*ir.Tensor{x64, w64}, y64)
	expect(t, y64, 1, 3, 5, 3)
}

func TestPools(t *testing.T) {
	x := f32([]int64{1, 1, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	y := ir.NewTensor(ir.Float32, []int64{1, 1, 2, 2})
	run(t, "AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2)}, []*ir.Tensor{x}, y)
	expect(t, y, 3, 4, 6, 7)
	// pads 1 with stride 2: corners see one input element each
	y = ir.NewTensor(ir.Float32, []int64{1, 1, 2, 2})
	run(t, "AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "strides": ir.IntsAttr(2, 2), "pads": ir.IntsAttr(1, 1, 1, 1)}, []*ir.Tensor{x}, y)
	expect(t, y, 1, 2.5, 5.5, 7)
	y = ir.NewTensor(ir.Float32, []int64{1, 1, 2, 2})
	run(t, "AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "strides": ir.IntsAttr(2, 2), "pads": ir.IntsAttr(1, 1, 1, 1),
		"count_include_pad": ir.IntAttr(1)}, []*ir.Tensor{x}, y)
	expect(t, y, 0.25, 1.25, 2.75, 7)
	// ceil_mode: 3 -> 2 windows with stride 2, the last one partial
	y = ir.NewTensor(ir.Float32, []int64{1, 1, 2, 2})
	run(t, "AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "strides": ir.IntsAttr(2, 2), "ceil_mode": ir.IntAttr(1)}, []*ir.Tensor{x}, y)
	expect(t, y, 3, 4.5, 7.5, 9)

	y = ir.NewTensor(ir.Float32, []int64{1, 1, 2, 2})
	idx := ir.NewTensor(ir.Int64, []int64{1, 1, 2, 2})
	x2 := f32([]int64{1, 1, 3, 3}, 9, 1, 2, 3, 4, 8, 5, 7, 6)
	run(t, "MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2)}, []*ir.Tensor{x2}, y, idx)
	expect(t, y, 9, 8, 7, 8)
	expect(t, idx, 0, 5, 7, 5)
	run(t, "MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "storage_order": ir.IntAttr(1)}, []*ir.Tensor{x2}, y, idx)
	expect(t, idx, 0, 7, 5, 7)
	// uint8
	xu := ir.NewTensor(ir.Uint8, []int64{1, 1, 1, 4})
	copy(xu.U8(), []uint8{3, 200, 7, 1})
	yu := ir.NewTensor(ir.Uint8, []int64{1, 1, 1, 2})
	run(t, "MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(1, 2), "strides": ir.IntsAttr(1, 2)}, []*ir.Tensor{xu}, yu)
	expect(t, yu, 200, 7)
}

func TestNorms(t *testing.T) {
	x := f32([]int64{1, 2, 2}, 1, 2, 3, 5)
	y := ir.NewTensor(ir.Float32, []int64{1, 2, 2})
	// channel 0: (x-1)/sqrt(4)*2+1 ; channel 1: (x-0)/1*1+0
	run(t, "BatchNorm", ir.Attrs{"epsilon": ir.FloatAttr(0)},
		[]*ir.Tensor{x, f32([]int64{2}, 2, 1), f32([]int64{2}, 1, 0), f32([]int64{2}, 1, 0), f32([]int64{2}, 4, 1)}, y)
	expect(t, y, 1, 2, 3, 5)

	// instance norm over [1,3] per channel: mean 2 var 1 ; [3,5]: mean 4 var 1
	x2 := f32([]int64{1, 2, 2}, 1, 3, 3, 5)
	run(t, "InstanceNorm", ir.Attrs{"epsilon": ir.FloatAttr(0)}, []*ir.Tensor{x2, f32([]int64{2}, 1, 2), f32([]int64{2}, 0, 1)}, y)
	expect(t, y, -1, 1, -1, 3)

	// layer norm over the last axis with Mean and InvStdDev outputs; B broadcast from [1]
	x3 := f32([]int64{2, 2}, 1, 3, 2, 2)
	mean := ir.NewTensor(ir.Float32, []int64{2, 1})
	inv := ir.NewTensor(ir.Float32, []int64{2, 1})
	y3 := ir.NewTensor(ir.Float32, []int64{2, 2})
	run(t, "LayerNorm", ir.Attrs{"epsilon": ir.FloatAttr(0.25)}, []*ir.Tensor{x3, f32([]int64{2}, 1, 2), f32([]int64{1}, 10)}, y3, mean, inv)
	// row 0: mean 2, var 1 -> inv 1/sqrt(1.25)
	s := 1 / math.Sqrt(1.25)
	expect(t, y3, 10-s, 10+2*s, 10, 10)
	expect(t, mean, 2, 2)
	expect(t, inv, s, 2)
	// axis 0 normalises everything
	y4 := ir.NewTensor(ir.Float32, []int64{2, 2})
	run(t, "LayerNorm", ir.Attrs{"axis": ir.IntAttr(0), "epsilon": ir.FloatAttr(0)}, []*ir.Tensor{f32([]int64{2, 2}, 0, 0, 2, 2), f32([]int64{1}, 1)}, y4)
	expect(t, y4, -1, -1, 1, 1)
}

func TestEinsum(t *testing.T) {
	m := f32([]int64{2, 2}, 1, 2, 3, 4)
	cases := []struct {
		eq    string
		in    []*ir.Tensor
		shape []int64
		want  []float64
	}{
		{"ii->", []*ir.Tensor{m}, []int64{}, []float64{5}},
		{"ii->i", []*ir.Tensor{m}, []int64{2}, []float64{1, 4}},
		{"ij->ji", []*ir.Tensor{m}, []int64{2, 2}, []float64{1, 3, 2, 4}},
		{"ij", []*ir.Tensor{m}, []int64{2, 2}, []float64{1, 2, 3, 4}},
		{"ji", []*ir.Tensor{m}, []int64{2, 2}, []float64{1, 3, 2, 4}}, // implicit: output "ij"
		{"ij->", []*ir.Tensor{m}, []int64{}, []float64{10}},
		{"ij,jk->ik", []*ir.Tensor{m, m}, []int64{2, 2}, []float64{7, 10, 15, 22}},
		{"ij,jk", []*ir.Tensor{m, m}, []int64{2, 2}, []float64{7, 10, 15, 22}},
		{"ij,kj->ik", []*ir.Tensor{m, m}, []int64{2, 2}, []float64{5, 11, 11, 25}},
		{"ij,ij->i", []*ir.Tensor{m, m}, []int64{2}, []float64{5, 25}},
		{"i,j->ij", []*ir.Tensor{f32([]int64{2}, 1, 2), f32([]int64{2}, 3, 4)}, []int64{2, 2}, []float64{3, 4, 6, 8}},
		{"...j,j->...", []*ir.Tensor{m, f32([]int64{2}, 1, 1)}, []int64{2}, []float64{3, 7}},
		{"bij,bjk->bik", []*ir.Tensor{f32([]int64{2, 1, 2}, 1, 2, 3, 4), f32([]int64{2, 2, 1}, 1, 1, 2, 0)}, []int64{2, 1, 1}, []float64{3, 6}},
		{"ij,jk,kl->il", []*ir.Tensor{m, m, m}, []int64{2, 2}, []float64{37, 54, 81, 118}},
	}
	for _, c := range cases {
		t.Run(c.eq, func(t *testing.T) {
			y := ir.NewTensor(ir.Float32, c.shape)
			run(t, "Einsum", ir.Attrs{"equation": ir.StringAttr(c.eq)}, c.in, y)
			expect(t, y, c.want...)
		})
	}
	// mismatched label sizes are an error, not a wrong answer
	f, _ := opkernel.Lookup("Einsum")
	err := f(&opkernel.Ctx{Threads: 1}, &ir.Node{Name: "t", Op: "Einsum", Attrs: ir.Attrs{"equation": ir.StringAttr("ij,j->i")}},
		[]*ir.Tensor{m, f32([]int64{3}, 1, 2, 3)}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{2})})
	if err == nil {
		t.Fatal("size mismatch accepted")
	}
}

func TestResize(t *testing.T) {
	x := f32([]int64{1, 1, 2, 2}, 1, 2, 3, 4)
	y := ir.NewTensor(ir.Float32, []int64{1, 1, 4, 4})
	scales := f32([]int64{4}, 1, 1, 2, 2)
	run(t, "Resize", ir.Attrs{"mode": ir.StringAttr("nearest")}, []*ir.Tensor{x, nil, scales}, y)
	expect(t, y, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4)
	// linear align_corners on 1x2 -> 1x3: 1, 1.5, 2
	x1 := f32([]int64{1, 2}, 1, 2)
	y1 := ir.NewTensor(ir.Float32, []int64{1, 3})
	run(t, "Resize", ir.Attrs{"mode": ir.StringAttr("linear"), "coordinate_transformation_mode": ir.StringAttr("align_corners")},
		[]*ir.Tensor{x1, nil, nil, ir.Int64Tensor([]int64{2}, 1, 3)}, y1)
	expect(t, y1, 1, 1.5, 2)
	// half_pixel linear 2 -> 4: coordinates -0.25, 0.25, 0.75, 1.25 (edges clamp)
	y2 := ir.NewTensor(ir.Float32, []int64{1, 4})
	run(t, "Resize", ir.Attrs{"mode": ir.StringAttr("linear"), "axes": ir.IntsAttr(1)},
		[]*ir.Tensor{x1, nil, f32([]int64{1}, 2)}, y2)
	expect(t, y2, 1, 1.25, 1.75, 2)
	// tf_crop_and_resize outside the roi gives extrapolation_value
	y3 := ir.NewTensor(ir.Float32, []int64{1, 3})
	run(t, "Resize", ir.Attrs{"mode": ir.StringAttr("linear"), "coordinate_transformation_mode": ir.StringAttr("tf_crop_and_resize"),
		"extrapolation_value": ir.FloatAttr(-7), "axes": ir.IntsAttr(1)},
		[]*ir.Tensor{x1, f32([]int64{2}, 0, 2), nil, ir.Int64Tensor([]int64{1}, 3)}, y3)
	expect(t, y3, 1, 2, -7)
	// int64 nearest is bit-exact
	xi := ir.Int64Tensor([]int64{2}, 1<<60+1, 5)
	yi := ir.NewTensor(ir.Int64, []int64{4})
	run(t, "Resize", nil, []*ir.Tensor{xi, nil, f32([]int64{1}, 2)}, yi)
	if got := yi.I64(); got[0] != 1<<60+1 || got[1] != 1<<60+1 || got[3] != 5 {
		t.Fatalf("int64 nearest: %v", got)
	}
}

func TestFloat16(t *testing.T) {
	a := ir.NewTensor(ir.Float16, []int64{2})
	a.U16()[0], a.U16()[1] = ir.F32ToF16(1.5), ir.F32ToF16(2)
	y := ir.NewTensor(ir.Float16, []int64{})
	run(t, "MatMul", nil, []*ir.Tensor{a, a}, y)
	if got := ir.F16ToF32(y.U16()[0]); got != 6.25 {
		t.Fatalf("float16 dot: %v", got)
	}
}

// TestResizeFollowsORTAlignCorners: onnxruntime 1.30's values for the two
// backend tests whose reference it disagrees with (align_corners divides by
// the output length there, by scale*input length in the ONNX reference).
func TestResizeFollowsORTAlignCorners(t *testing.T) {
	ac := func(mode string) ir.Attrs {
		return ir.Attrs{"mode": ir.StringAttr(mode), "coordinate_transformation_mode": ir.StringAttr("align_corners")}
	}
	y := ir.NewTensor(ir.Float32, []int64{1, 1, 1, 2})
	run(t, "Resize", ac("linear"), []*ir.Tensor{f32([]int64{1, 1, 2, 4}, 1, 2, 3, 4, 5, 6, 7, 8), nil,
		f32([]int64{4}, 1, 1, 0.6, 0.6)}, y)
	expect(t, y, 1, 4)
	x := ir.NewTensor(ir.Float32, []int64{1, 1, 4, 4})
	for i := range x.F32() {
		x.F32()[i] = float32(i + 1)
	}
	y = ir.NewTensor(ir.Float32, []int64{1, 1, 3, 3})
	run(t, "Resize", ac("cubic"), []*ir.Tensor{x, nil, f32([]int64{4}, 1, 1, 0.8, 0.8)}, y)
	expect(t, y, 1, 2.5, 4, 7, 8.5, 10, 13, 14.5, 16)
}

// TestResizeNearestThreads: nearest Resize split across threads (ranges of
// rows, each from its own first row's coordinates) gives the serial result
// on upscaled, downscaled and odd geometries.
func TestResizeNearestThreads(t *testing.T) {
	f, _ := opkernel.Lookup("Resize")
	for _, g := range []struct{ in, out []int64 }{
		{[]int64{1, 16, 24, 32}, []int64{1, 16, 48, 64}}, {[]int64{2, 7, 33, 17}, []int64{2, 7, 70, 51}},
		{[]int64{1, 5, 300, 9}, []int64{1, 5, 150, 4}}, {[]int64{3, 1000, 20}, []int64{3, 1500, 20}},
	} {
		x := ir.NewTensor(ir.Float32, g.in)
		for i := range x.F32() {
			x.F32()[i] = float32(i)
		}
		sizes := ir.Int64Tensor([]int64{int64(len(g.out))}, g.out...)
		n := &ir.Node{Name: "t", Op: "Resize", Attrs: ir.Attrs{"mode": ir.StringAttr("nearest")}}
		var ys []*ir.Tensor
		for _, threads := range []int{1, 2, 4} {
			y := ir.NewTensor(ir.Float32, g.out)
			if err := f(&opkernel.Ctx{Threads: threads}, n, []*ir.Tensor{x, nil, nil, sizes}, []*ir.Tensor{y}); err != nil {
				t.Fatal(err)
			}
			ys = append(ys, y)
		}
		for k := 1; k < len(ys); k++ {
			for i, v := range ys[0].F32() {
				if ys[k].F32()[i] != v {
					t.Fatalf("%v -> %v, run %d: element %d = %g, serial %g", g.in, g.out, k, i, ys[k].F32()[i], v)
				}
			}
		}
	}
}
