package fusion

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// qdqConvGraph is x -> Q -> DQ -> Conv2D (int8 weights per output channel,
// int32 bias of scale x_scale*w_scale unless badBias) -> Q -> DQ -> output.
func qdqConvGraph(t *testing.T, badBias bool) *ir.Graph {
	b := testkit.New(t, "qdq")
	r := rand.New(rand.NewSource(7))
	x := b.Input("x", 1, 3, 6, 6)
	xs, xz := b.Scalar(0.02), b.Const("xz", &ir.Tensor{DType: ir.Uint8, Shape: []int64{}, Data: []byte{128}})
	xq := b.Node("xq", "QuantizeLinear", nil, x, xs, xz)
	xd := b.Node("xd", "DequantizeLinear", nil, xq, xs, xz)
	w := ir.NewTensor(ir.Int8, []int64{4, 3, 3, 3})
	r.Read(w.Data)
	ws := ir.Float32Tensor([]int64{4}, 0.01, 0.02, 0.005, 0.03)
	wd := b.Node("wd", "DequantizeLinear", ir.Attrs{"axis": ir.IntAttr(0)}, b.Const("w", w), b.Const("ws", ws), b.Const("wz", ir.NewTensor(ir.Int8, []int64{4})))
	bq := ir.NewTensor(ir.Int32, []int64{4})
	copy(bq.I32(), []int32{300, -120, 0, 4000})
	bs := ir.NewTensor(ir.Float32, []int64{4})
	for c := range bs.F32() {
		bs.F32()[c] = float32(0.02) * ws.F32()[c]
	}
	if badBias {
		bs.F32()[2] *= 1.5
	}
	bd := b.Node("bd", "DequantizeLinear", ir.Attrs{"axis": ir.IntAttr(0)}, b.Const("bq", bq), b.Const("bs", bs))
	y := b.Node("conv", "Conv2D", convAttrs, xd, wd, bd)
	ys, yz := b.Scalar(0.05), b.Const("yz", &ir.Tensor{DType: ir.Uint8, Shape: []int64{}, Data: []byte{100}})
	yq := b.Node("yq", "QuantizeLinear", nil, y, ys, yz)
	return b.Output(b.Node("yd", "DequantizeLinear", nil, yq, ys, yz))
}

// TestQDQFusionConv: the QDQ conv becomes one QLinearConv whose outputs are
// within one quantization step (0.05) of the float conv's requantized ones
// (the float conv rounds differently at exact halves only); a bias whose
// scale is not x_scale*w_scale keeps the float conv.
func TestQDQFusionConv(t *testing.T) {
	g := qdqConvGraph(t, false)
	in := randInputs(g, 5)
	want := execute(t, testkit.CloneGraph(g), in)
	res, _, err := RunAnf(g, AnfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ops := topOps(g); !slices.Contains(ops, "QLinearConv") || slices.Contains(ops, "Conv2D") {
		t.Fatalf("ops %v", ops)
	}
	if r := anfRecord(res, "QDQFusion"); !r.Changed || r.Note != "1 QLinearConv, 0 QLinearMatMul" {
		t.Errorf("record %+v", r)
	}
	got := execute(t, g, in)
	for i, w := range want[0].F32() {
		if d := math.Abs(float64(w - got[0].F32()[i])); d > 0.05+1e-6 {
			t.Fatalf("y[%d] = %v, want %v", i, got[0].F32()[i], w)
		}
	}
	g = qdqConvGraph(t, true)
	if _, _, err := RunAnf(g, AnfOptions{}); err != nil {
		t.Fatal(err)
	}
	if ops := topOps(g); slices.Contains(ops, "QLinearConv") || !slices.Contains(ops, "Conv2D") {
		t.Fatalf("bias of another scale: ops %v", ops)
	}
}
