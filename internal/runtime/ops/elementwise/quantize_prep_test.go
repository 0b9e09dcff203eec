package elementwise

import (
	"slices"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// The load-time DequantizeLinear of a constant weight gives what the op
// computes each run, and is not used when an input is not constant.
func TestPrepareDequantizeConst(t *testing.T) {
	w := ir.NewTensor(ir.Int8, []int64{3, 4})
	for i := range w.Data {
		w.Data[i] = byte(int8(i*37 - 100))
	}
	s := ir.NewTensor(ir.Float32, []int64{3})
	copy(s.F32(), []float32{0.5, 0.25, 2})
	z := ir.NewTensor(ir.Int8, []int64{3})
	copy(z.Data, []byte{1, 0, 0xff})
	mk := func(konst bool) *ir.Node {
		g := ir.NewGraph("g")
		vals := []*ir.Value{{Name: "w", DType: ir.Int8, Shape: w.Shape}, {Name: "s", DType: ir.Float32, Shape: s.Shape}, {Name: "z", DType: ir.Int8, Shape: z.Shape}}
		if konst {
			vals[0].Const, vals[1].Const, vals[2].Const = w, s, z
		}
		n := ir.NewNode("dq", "DequantizeLinear", vals, ir.Attrs{"axis": ir.IntAttr(0)})
		n.Outputs = []*ir.Value{{Name: "y", Producer: n}}
		g.Nodes = append(g.Nodes, n)
		if err := ir.InferNode(n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := mk(true)
	want := ir.NewTensor(ir.Float32, []int64{3, 4})
	if err := dequantizeLinear(opkernel.DefaultCtx(), n, []*ir.Tensor{w, s, z}, []*ir.Tensor{want}); err != nil {
		t.Fatal(err)
	}
	f, err := prepareDequantize(opkernel.NewPrep(), n)
	if err != nil || f == nil {
		t.Fatalf("prepare: %v, %v", f, err)
	}
	got := ir.NewTensor(ir.Float32, []int64{3, 4})
	if err := f(opkernel.DefaultCtx(), n, nil, []*ir.Tensor{got}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.F32(), want.F32()) {
		t.Fatalf("prepared %v, op %v", got.F32(), want.F32())
	}
	if f, _ := prepareDequantize(opkernel.NewPrep(), mk(false)); f != nil {
		t.Fatal("prepared a DequantizeLinear with a non-constant input")
	}
}
