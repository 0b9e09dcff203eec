package mindir

import (
	"bytes"
	"fmt"
	"math"

	"math/rand"

	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
	"gkconv/internal/testkit"
)

// One-node graphs of every op of lower_nn.go, written with Write and read
// back with Parse: the written primitive has converter_lite's name,
// attributes and attribute types, the read-back node is the original one
// (canonical forms) and runs bit-for-bit like it on the CPU runtime.

// nnGraph builds a one-node graph.
type nnGraph struct {
	t *testing.T
	g *ir.Graph
}

func newNNGraph(t *testing.T) *nnGraph { return &nnGraph{t: t, g: ir.NewGraph("main")} }

// in adds a graph input.
func (b *nnGraph) in(name string, dt ir.DType, shape ...int64) *ir.Value {
	if shape == nil {
		shape = []int64{} // a scalar
	}
	v := &ir.Value{Name: name, DType: dt, Shape: shape}
	b.g.Inputs = append(b.g.Inputs, v)
	return v
}

func (b *nnGraph) c(name string, t *ir.Tensor) *ir.Value { return b.g.AddConst(name, t) }

func (b *nnGraph) ints(name string, v ...int64) *ir.Value {
	return b.c(name, ir.Int64Tensor([]int64{int64(len(v))}, v...))
}

func (b *nnGraph) scalarInt(name string, v int64) *ir.Value {
	return b.c(name, ir.Int64Tensor([]int64{}, v))
}

// floats is a float32 constant filled with values derived from seed.
func (b *nnGraph) floats(name string, seed int64, shape ...int64) *ir.Value {
	t := ir.NewTensor(ir.Float32, shape)
	r := rand.New(rand.NewSource(seed))
	for i := range t.F32() {
		t.F32()[i] = float32(r.NormFloat64())
	}
	return b.c(name, t)
}

// node adds the node "n" with nout outputs, infers its types and makes its
// outputs the graph's.
func (b *nnGraph) node(op string, attrs ir.Attrs, nout int, ins ...*ir.Value) *ir.Graph {
	b.t.Helper()
	outs := make([]string, nout)
	for i := range outs {
		outs[i] = fmt.Sprintf("y%d", i)
	}
	n := b.g.AddNode("n", op, ins, outs...)
	n.Attrs = attrs
	n.Provenance = []string{"src_" + op}
	if err := ir.InferNode(n); err != nil {
		b.t.Fatalf("%s: infer: %v", op, err)
	}
	b.g.Outputs = append(b.g.Outputs, n.Outputs...)
	return b.g
}

// nnWritten is the compute node "n" of a written file: its primitive,
// attribute types ("INT64", "TUPLE:INT64", ...) and values, and input count.
type nnWritten struct {
	prim   string
	types  map[string]string
	attrs  map[string]*pb.AttributeProto
	inputs int
}

func nnAttrType(a *pb.AttributeProto) string {
	s := a.GetType().String()
	if a.GetType() == pb.AttributeProto_TUPLE || a.GetType() == pb.AttributeProto_LIST {
		s += ":"
		if len(a.Values) > 0 {
			s += a.Values[0].GetType().String()
		}
	}
	return s
}

func nnDecode(t *testing.T, data []byte) nnWritten {
	t.Helper()
	var mp pb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	prims := map[string]*pb.PrimitiveProto{}
	for _, p := range mp.Primitives {
		prims[p.GetName()] = p
	}
	for _, np := range mp.Graph.Node {
		if np.GetName() != "n" {
			continue
		}
		p := prims[strings.TrimPrefix(np.GetOpType(), "REF::")]
		if p == nil {
			t.Fatalf("node n: no primitive %s", np.GetOpType())
		}
		w := nnWritten{prim: p.GetOpType(), types: map[string]string{}, attrs: map[string]*pb.AttributeProto{}, inputs: len(np.Input)}
		for _, a := range p.Attribute {
			w.types[a.GetName()] = nnAttrType(a)
			w.attrs[a.GetName()] = a
		}
		if w.prim == "Custom" {
			if a := w.attrs["type"]; a != nil {
				w.prim = "Custom:" + string(a.S)
			}
		}
		return w
	}
	t.Fatal("no node n in the written file")
	return nnWritten{}
}

// nnTupleInts reads a TUPLE of INT64 attribute.
func nnTupleInts(a *pb.AttributeProto) []int64 {
	if a == nil {
		return nil
	}
	out := []int64{}
	for _, v := range a.Values {
		out = append(out, v.Ints...)
	}
	return out
}

// nnNormConsts names every constant after its first use ("const:node:input")
// and sorts the constants, so graphs that differ only in the names of
// constants compare equal with testkit.GraphDiff.
func nnNormConsts(g *ir.Graph) {
	named := map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		for i, in := range n.Inputs {
			if in != nil && in.Const != nil && !named[in] {
				in.Name = fmt.Sprintf("const:%s:%d", n.Name, i)
				named[in] = true
			}
		}
	}
	sort.SliceStable(g.Consts, func(i, j int) bool { return g.Consts[i].Name < g.Consts[j].Name })
}

// nnRandomInputs fills every graph input with seeded values.
func nnRandomInputs(t *testing.T, g *ir.Graph, seed int64) []*ir.Tensor {
	r := rand.New(rand.NewSource(seed))
	var ins []*ir.Tensor
	for _, v := range g.Inputs {
		if !v.ShapeKnown() {
			t.Fatalf("input %s has no static shape", v)
		}
		x := ir.NewTensor(v.DType, v.Shape)
		for i := 0; i < int(x.NumElements()); i++ {
			switch {
			case v.DType.IsFloat():
				x.PutFloat(i, r.NormFloat64())
			case v.DType == ir.Int64:
				x.I64()[i] = int64(r.Intn(3))
			case v.DType == ir.Int32:
				x.I32()[i] = int32(r.Intn(3))
			default:
				t.Fatalf("input %s: no random data for %s", v.Name, v.DType)
			}
		}
		ins = append(ins, x)
	}
	return ins
}

// nnSameRun runs both graphs on the same random inputs and requires
// bit-identical outputs.
func nnSameRun(t *testing.T, a, b *ir.Graph) {
	t.Helper()
	run := func(g *ir.Graph) []*ir.Tensor {
		s, err := runtime.NewSession(g, runtime.Options{Threads: 1})
		if err != nil {
			t.Fatalf("session: %v", err)
		}
		out, err := s.Run(nnRandomInputs(t, g, 7))
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		return out
	}
	x, y := run(a), run(b)
	if len(x) != len(y) {
		t.Fatalf("%d outputs vs %d", len(x), len(y))
	}
	for i := range x {
		if x[i].DType != y[i].DType || !slices.Equal(x[i].Shape, y[i].Shape) || !bytes.Equal(x[i].Data, y[i].Data) {
			t.Errorf("output %d: %s vs read back %s", i, x[i].Summary(8), y[i].Summary(8))
		}
	}
}

type nnCase struct {
	name string
	g    func(b *nnGraph) *ir.Graph
	prim string            // the written op_type ("Custom:gkconv.<op>" for the fallback)
	want map[string]string // every primitive attribute and its type
	nin  int               // node inputs as written (0: not checked)
	// loose: the read-back node is an equivalent form, not the same
	// attributes and inputs (only the runtime comparison applies).
	loose bool
	norun bool                            // no runtime comparison
	check func(t *testing.T, w nnWritten) // value checks
	// needs: the node inputs converter_lite's form has. Where the primitive
	// schema (what `converter check` enforces) does not allow that many,
	// alt is expected instead, or the Custom fallback when alt is nil.
	needs int
	alt   *nnCase
}

const (
	nnI64  = "INT64"
	nnI32  = "INT32"
	nnBool = "BOOL"
	nnF32T = "FLOAT"
	nnStr  = "STRING"
	nnInts = "TUPLE:INT64"
)

var (
	nnConvAttrs = map[string]string{"OriginalFormat": nnI64, "kernel_size": nnInts, "stride": nnInts, "dilation": nnInts,
		"pad_mode": nnI64, "pad": nnInts, "pad_list": nnInts, "group": nnI64, "mode": nnI64, "format": nnI64,
		"activation_type": nnI64, "in_channel": nnI64, "out_channel": nnI64, "is_depth_wise": nnBool}
	nnDeconvAttrs = map[string]string{"OriginalFormat": nnI64, "kernel_size": nnInts, "stride": nnInts, "dilation": nnInts,
		"pad_mode": nnI64, "pad": nnInts, "pad_list": nnInts, "group": nnI64, "output_paddings": nnInts, "format": nnI64,
		"activation_type": nnI64, "in_channel": nnI64, "out_channel": nnI64, "has_bias": nnBool}
	nnPoolAttrs = map[string]string{"OriginalFormat": nnI64, "kernel_size": nnInts, "strides": nnInts, "pad_mode": nnI64,
		"round_mode": nnI64, "pad": nnInts, "global": nnBool, "format": nnI64, "activation_type": nnI64, "fmk_type": nnI32}
	nnResizeAttrs = map[string]string{"OriginalFormat": nnI64, "format": nnI64, "method": nnI64,
		"coordinate_transform_mode": nnI64, "nearest_mode": nnI64}
)

func nnWith(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func nnF32(x float64) float64 { return float64(float32(x)) }

func nnWantInts(t *testing.T, w nnWritten, name string, want ...int64) {
	t.Helper()
	if got := nnTupleInts(w.attrs[name]); !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

func nnWantInt(t *testing.T, w nnWritten, name string, want int64) {
	t.Helper()
	if a := w.attrs[name]; a == nil || a.GetI() != want {
		t.Errorf("%s = %v, want %d", name, a, want)
	}
}

var nnCases = []nnCase{
	// ---- Conv2D ----
	{name: "Conv2D_bias", prim: "Conv2DFusion", want: nnConvAttrs, nin: 3, needs: 3, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 4, 7, 6)
		return b.node("Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 2), "strides": ir.IntsAttr(2, 1),
			"dilations": ir.IntsAttr(1, 2), "pads": ir.IntsAttr(1, 0, 2, 1), "group": ir.IntAttr(2)}, 1,
			x, b.floats("w", 1, 6, 2, 3, 2), b.floats("b", 2, 6))
	}},
	{name: "Conv2D", prim: "Conv2DFusion", want: nnConvAttrs, nin: 2, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 4, 7, 6)
		return b.node("Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 2), "strides": ir.IntsAttr(2, 1),
			"dilations": ir.IntsAttr(1, 2), "pads": ir.IntsAttr(1, 0, 2, 1), "group": ir.IntAttr(2)}, 1,
			x, b.floats("w", 1, 6, 2, 3, 2))
	}, check: func(t *testing.T, w nnWritten) {
		nnWantInts(t, w, "pad_list", 1, 2, 0, 1) // ONNX [t, l, b, r] -> [t, b, l, r]
		nnWantInts(t, w, "kernel_size", 3, 2)
		nnWantInts(t, w, "stride", 2, 1)
		nnWantInts(t, w, "dilation", 1, 2)
		nnWantInt(t, w, "pad_mode", 0)
		nnWantInt(t, w, "in_channel", 4)
		nnWantInt(t, w, "out_channel", 6)
	}},
	{name: "Conv2D_same_upper", prim: "Conv2DFusion", want: nnConvAttrs, nin: 2, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 3, 7, 8)
		return b.node("Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 4), "strides": ir.IntsAttr(2, 3),
			"dilations": ir.IntsAttr(1, 1), "group": ir.IntAttr(1), "auto_pad": ir.StringAttr("SAME_UPPER")}, 1,
			x, b.floats("w", 1, 5, 3, 3, 4))
	}, check: func(t *testing.T, w nnWritten) { nnWantInt(t, w, "pad_mode", 1) }},
	{name: "Conv2D_valid_depthwise", prim: "Conv2DFusion", want: nnConvAttrs, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 2, 3, 6, 5)
		return b.node("Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 3), "strides": ir.IntsAttr(1, 1),
			"dilations": ir.IntsAttr(1, 1), "group": ir.IntAttr(3), "auto_pad": ir.StringAttr("VALID")}, 1,
			x, b.floats("w", 1, 3, 1, 3, 3))
	}, check: func(t *testing.T, w nnWritten) {
		nnWantInt(t, w, "pad_mode", 2)
		if w.attrs["is_depth_wise"].GetI() != 1 {
			t.Error("is_depth_wise is not true")
		}
	}},
	{name: "Conv2D_defaults", prim: "Conv2DFusion", want: nnConvAttrs, loose: true, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 2, 5, 5)
		return b.node("Conv2D", nil, 1, x, b.floats("w", 1, 4, 2, 3, 3))
	}},
	{name: "Conv1D", prim: "Custom:gkconv.Conv2D", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 2, 8)
		return b.node("Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(3), "pads": ir.IntsAttr(1, 1)}, 1, x, b.floats("w", 1, 3, 2, 3))
	}},
	{name: "Conv2D_same_lower", prim: "Custom:gkconv.Conv2D", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 2, 6, 6)
		return b.node("Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "auto_pad": ir.StringAttr("SAME_LOWER")}, 1,
			x, b.floats("w", 1, 3, 2, 2, 2))
	}},
	// ---- Conv2DTranspose ----
	{name: "Conv2DTranspose", prim: "Conv2dTransposeFusion", want: nnDeconvAttrs, nin: 3, needs: 3, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 2, 4, 5)
		return b.node("Conv2DTranspose", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 3), "strides": ir.IntsAttr(2, 2),
			"dilations": ir.IntsAttr(1, 1), "pads": ir.IntsAttr(1, 0, 1, 1), "group": ir.IntAttr(1),
			"output_padding": ir.IntsAttr(1, 0)}, 1, x, b.floats("w", 1, 2, 3, 3, 3), b.floats("b", 2, 3))
	}, check: func(t *testing.T, w nnWritten) {
		nnWantInts(t, w, "pad_list", 1, 1, 0, 1)
		nnWantInts(t, w, "output_paddings", 1, 0)
		nnWantInt(t, w, "in_channel", 2)
		nnWantInt(t, w, "out_channel", 3)
	}},
	{name: "Conv2DTranspose_no_bias", prim: "Conv2dTransposeFusion", want: nnDeconvNoBias(), nin: 2, needs: 2, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 2, 3, 3)
		return b.node("Conv2DTranspose", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "strides": ir.IntsAttr(1, 2),
			"dilations": ir.IntsAttr(2, 1), "pads": ir.IntsAttr(0, 0, 0, 0), "group": ir.IntAttr(2)}, 1, x, b.floats("w", 1, 2, 1, 2, 2))
	}},
	{name: "Conv2DTranspose_output_shape", prim: "Custom:gkconv.Conv2DTranspose", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 2, 3, 3)
		return b.node("Conv2DTranspose", ir.Attrs{"strides": ir.IntsAttr(3, 2), "output_shape": ir.IntsAttr(10, 8)}, 1,
			x, b.floats("w", 1, 2, 3, 3, 3))
	}},
	// ---- pools ----
	{name: "MaxPool", prim: "MaxPoolFusion", want: nnPoolAttrs, nin: 1, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 2, 3, 7, 6)
		return b.node("MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 2), "strides": ir.IntsAttr(2, 1),
			"pads": ir.IntsAttr(1, 0, 1, 1)}, 1, x)
	}, check: func(t *testing.T, w nnWritten) {
		nnWantInts(t, w, "pad", 1, 1, 0, 1)
		nnWantInts(t, w, "kernel_size", 3, 2)
		nnWantInts(t, w, "strides", 2, 1)
		nnWantInt(t, w, "round_mode", 0)
	}},
	{name: "MaxPool_ceil", prim: "MaxPoolFusion", want: nnPoolAttrs, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 2, 6, 6)
		return b.node("MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 3), "strides": ir.IntsAttr(2, 2),
			"pads": ir.IntsAttr(0, 0, 0, 0), "ceil_mode": ir.IntAttr(1)}, 1, x)
	}, check: func(t *testing.T, w nnWritten) { nnWantInt(t, w, "round_mode", 1) }},
	{name: "MaxPool_same_upper", prim: "MaxPoolFusion", want: nnPoolAttrs, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 2, 5, 7)
		return b.node("MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 3), "strides": ir.IntsAttr(2, 2),
			"auto_pad": ir.StringAttr("SAME_UPPER")}, 1, x)
	}},
	// converter_lite's GlobalAveragePool: AvgPoolFusion with global=true and
	// no kernel_size; read back as the IR op, not a window
	{name: "GlobalAveragePool", prim: "AvgPoolFusion", want: map[string]string{"OriginalFormat": nnI64, "strides": nnInts,
		"pad_mode": nnI64, "round_mode": nnI64, "pad": nnInts, "global": nnBool, "format": nnI64, "activation_type": nnI64,
		"fmk_type": nnI32}, g: func(b *nnGraph) *ir.Graph {
		return b.node("GlobalAveragePool", nil, 1, b.in("x", ir.Float32, 1, 3, 5, 7))
	}, check: func(t *testing.T, w nnWritten) {
		if a := w.attrs["global"]; a == nil || a.GetI() != 1 {
			t.Errorf("global = %v, want true", a)
		}
		nnWantInts(t, w, "pad", 0, 0, 0, 0)
		nnWantInt(t, w, "pad_mode", 0)
	}},
	{name: "GlobalAveragePool_3d", prim: "Custom:gkconv.GlobalAveragePool", g: func(b *nnGraph) *ir.Graph {
		return b.node("GlobalAveragePool", nil, 1, b.in("x", ir.Float32, 1, 2, 3, 4, 5))
	}},
	{name: "AvgPool", prim: "AvgPoolFusion", want: nnWith(nnPoolAttrs, "count_include_pad", nnBool), g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 3, 6, 7)
		return b.node("AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 3), "strides": ir.IntsAttr(1, 2),
			"pads": ir.IntsAttr(1, 1, 0, 1), "count_include_pad": ir.IntAttr(0)}, 1, x)
	}},
	{name: "AvgPool_ceil_exact", prim: "AvgPoolFusion", want: nnPoolAttrs, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 1, 7, 7)
		return b.node("AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 3), "strides": ir.IntsAttr(2, 2),
			"pads": ir.IntsAttr(0, 0, 0, 0), "ceil_mode": ir.IntAttr(1)}, 1, x)
	}},
	{name: "AvgPool_count_include_pad_valid", prim: "AvgPoolFusion", want: nnWith(nnPoolAttrs, "count_include_pad", nnBool), g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 1, 5, 5)
		return b.node("AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "strides": ir.IntsAttr(1, 1),
			"pads": ir.IntsAttr(0, 0, 0, 0), "count_include_pad": ir.IntAttr(1)}, 1, x)
	}},
	{name: "AvgPool_count_include_pad_padded", prim: "Custom:gkconv.AvgPool", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 1, 5, 5)
		return b.node("AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 3), "pads": ir.IntsAttr(1, 1, 1, 1),
			"count_include_pad": ir.IntAttr(1)}, 1, x)
	}},
	{name: "AvgPool_ceil_partial_window", prim: "Custom:gkconv.AvgPool", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 1, 6, 6)
		return b.node("AvgPool", ir.Attrs{"kernel_shape": ir.IntsAttr(3, 3), "strides": ir.IntsAttr(2, 2),
			"ceil_mode": ir.IntAttr(1)}, 1, x)
	}},
	{name: "MaxPool_ceil_dropped_window", prim: "Custom:gkconv.MaxPool", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 1, 4, 4)
		return b.node("MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(1, 2), "strides": ir.IntsAttr(1, 2),
			"pads": ir.IntsAttr(0, 0, 0, 1), "ceil_mode": ir.IntAttr(1)}, 1, x)
	}},
	{name: "MaxPool_dilations", prim: "Custom:gkconv.MaxPool", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 1, 6, 6)
		return b.node("MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "dilations": ir.IntsAttr(2, 2)}, 1, x)
	}},
	{name: "MaxPool_indices", prim: "Custom:gkconv.MaxPool", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 2, 4, 4)
		return b.node("MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2), "strides": ir.IntsAttr(2, 2)}, 2, x)
	}},
	{name: "MaxPool_3d", prim: "Custom:gkconv.MaxPool", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 1, 1, 4, 4, 4)
		return b.node("MaxPool", ir.Attrs{"kernel_shape": ir.IntsAttr(2, 2, 2)}, 1, x)
	}},
	// ---- normalizations ----
	{name: "BatchNorm", prim: "FusedBatchNorm", want: map[string]string{"epsilon": nnF32T, "momentum": nnF32T}, nin: 5, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 2, 3, 4, 4)
		v := ir.Float32Tensor([]int64{3}, 0.5, 1, 2)
		return b.node("BatchNorm", ir.Attrs{"epsilon": ir.FloatAttr(nnF32(1e-3)), "momentum": ir.FloatAttr(nnF32(0.8))}, 1,
			x, b.floats("scale", 1, 3), b.floats("bias", 2, 3), b.floats("mean", 3, 3), b.c("var", v))
	}},
	{name: "BatchNorm_training_outputs", prim: "Custom:gkconv.BatchNorm", norun: true, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 2, 3, 4, 4)
		return b.node("BatchNorm", ir.Attrs{"epsilon": ir.FloatAttr(nnF32(1e-3))}, 3,
			x, b.floats("scale", 1, 3), b.floats("bias", 2, 3), b.floats("mean", 3, 3), b.floats("var", 4, 3))
	}},
	{name: "InstanceNorm", prim: "InstanceNorm", want: map[string]string{"epsilon": nnF32T}, nin: 3, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 2, 3, 4, 5)
		return b.node("InstanceNorm", ir.Attrs{"epsilon": ir.FloatAttr(nnF32(1e-4))}, 1, x, b.floats("s", 1, 3), b.floats("b", 2, 3))
	}},
	{name: "LayerNorm", prim: "LayerNormFusion", want: map[string]string{"begin_norm_axis": nnI64, "begin_params_axis": nnI64, "epsilon": nnF32T}, nin: 3, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 2, 3, 8)
		return b.node("LayerNorm", ir.Attrs{"axis": ir.IntAttr(-1), "epsilon": ir.FloatAttr(nnF32(1e-5))}, 1,
			x, b.floats("s", 1, 8), b.floats("b", 2, 8))
	}},
	{name: "LayerNorm_no_bias_axis1", prim: "LayerNormFusion", want: map[string]string{"begin_norm_axis": nnI64, "begin_params_axis": nnI64, "epsilon": nnF32T}, nin: 2, needs: 2, g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 2, 3, 4)
		return b.node("LayerNorm", ir.Attrs{"axis": ir.IntAttr(1), "epsilon": ir.FloatAttr(nnF32(1e-3))}, 1, x, b.floats("s", 1, 3, 4))
	}},
	{name: "LayerNorm_broadcast_scale", prim: "Custom:gkconv.LayerNorm", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 2, 3, 4)
		return b.node("LayerNorm", ir.Attrs{"axis": ir.IntAttr(1)}, 1, x, b.floats("s", 1, 4))
	}},
	{name: "LayerNorm_inv_std_output", prim: "Custom:gkconv.LayerNorm", g: func(b *nnGraph) *ir.Graph {
		x := b.in("x", ir.Float32, 2, 8)
		return b.node("LayerNorm", ir.Attrs{"axis": ir.IntAttr(-1)}, 3, x, b.floats("s", 1, 8))
	}},
	{name: "Softmax", prim: "Softmax", want: map[string]string{"axis": nnInts}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Softmax", ir.Attrs{"axis": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 2, 5, 3))
	}, check: func(t *testing.T, w nnWritten) { nnWantInts(t, w, "axis", 1) }},
	{name: "LogSoftmax", prim: "LogSoftmax", want: map[string]string{"axis": nnI64}, g: func(b *nnGraph) *ir.Graph {
		return b.node("LogSoftmax", ir.Attrs{"axis": ir.IntAttr(0)}, 1, b.in("x", ir.Float32, 4, 5))
	}},
	// ---- MatMul, Einsum ----
	{name: "MatMul_bias", prim: "MatMulFusion", want: map[string]string{"transpose_a": nnBool, "transpose_b": nnBool, "activation_type": nnI64}, nin: 3, needs: 3, g: func(b *nnGraph) *ir.Graph {
		a := b.in("a", ir.Float32, 2, 4, 3)
		return b.node("MatMul", ir.Attrs{"transpose_a": ir.IntAttr(1), "transpose_b": ir.IntAttr(1)}, 1,
			a, b.floats("b", 1, 5, 4), b.floats("bias", 2, 5))
	}},
	{name: "MatMul", prim: "MatMulFusion", want: map[string]string{"transpose_a": nnBool, "transpose_b": nnBool, "activation_type": nnI64}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("MatMul", ir.Attrs{"transpose_b": ir.IntAttr(1)}, 1, b.in("a", ir.Float32, 2, 4, 3), b.floats("b", 1, 5, 3))
	}, check: func(t *testing.T, w nnWritten) {
		if w.attrs["transpose_a"].GetI() != 0 || w.attrs["transpose_b"].GetI() != 1 {
			t.Errorf("transpose_a %v, transpose_b %v", w.attrs["transpose_a"], w.attrs["transpose_b"])
		}
	}},
	{name: "MatMul_vector", prim: "MatMulFusion", want: map[string]string{"transpose_a": nnBool, "transpose_b": nnBool, "activation_type": nnI64}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("MatMul", nil, 1, b.in("a", ir.Float32, 4), b.in("b", ir.Float32, 2, 4, 3))
	}},
	{name: "MatMul_extra_attrs", prim: "MatMulFusion", norun: true,
		want: map[string]string{"transpose_a": nnBool, "transpose_b": nnBool, "activation_type": nnI64, "pack_b": nnBool, "note": nnStr, "dims": nnInts},
		g: func(b *nnGraph) *ir.Graph {
			return b.node("MatMul", ir.Attrs{"pack_b": ir.IntAttr(1), "note": ir.StringAttr("x"), "dims": ir.IntsAttr(3, -1)}, 1,
				b.in("a", ir.Float32, 3, 4), b.floats("b", 1, 4, 5))
		}},
	{name: "Einsum_one", prim: "Einsum", want: map[string]string{"equation": nnStr}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Einsum", ir.Attrs{"equation": ir.StringAttr("ij->ji")}, 1, b.in("a", ir.Float32, 2, 3))
	}},
	{name: "Einsum", prim: "Einsum", want: map[string]string{"equation": nnStr}, nin: 1, needs: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Einsum", ir.Attrs{"equation": ir.StringAttr("bij,bjk->bik")}, 1, b.in("a", ir.Float32, 2, 3, 4), b.in("b", ir.Float32, 2, 4, 5))
	}},
	// ---- shape and data movement ----
	{name: "Transpose", prim: "Transpose", want: map[string]string{}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("Transpose", ir.Attrs{"perm": ir.IntsAttr(2, 0, 1)}, 1, b.in("x", ir.Float32, 2, 3, 4))
	}},
	{name: "Transpose_default", prim: "Transpose", want: map[string]string{}, nin: 2, loose: true, g: func(b *nnGraph) *ir.Graph {
		return b.node("Transpose", nil, 1, b.in("x", ir.Float32, 2, 3, 4))
	}},
	{name: "Concat_one", prim: "Concat", want: map[string]string{"axis": nnI64}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Concat", ir.Attrs{"axis": ir.IntAttr(0)}, 1, b.in("a", ir.Float32, 2, 3))
	}},
	{name: "Concat", prim: "Concat", want: map[string]string{"axis": nnI64}, nin: 1, needs: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Concat", ir.Attrs{"axis": ir.IntAttr(1)}, 1, b.in("a", ir.Float32, 2, 3), b.in("b", ir.Float32, 2, 1), b.floats("c", 1, 2, 2))
	}},
	{name: "Split_even", prim: "Split", want: map[string]string{"axis": nnI64, "output_num": nnI64}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Split", ir.Attrs{"axis": ir.IntAttr(1), "num_outputs": ir.IntAttr(3)}, 3, b.in("x", ir.Float32, 2, 6))
	}},
	{name: "Split_sizes", prim: "Split", want: map[string]string{"axis": nnI64, "output_num": nnI64, "size_splits": nnInts}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Split", ir.Attrs{"axis": ir.IntAttr(-1)}, 3, b.in("x", ir.Float32, 2, 6), b.ints("split", 1, 2, 3))
	}, check: func(t *testing.T, w nnWritten) { nnWantInts(t, w, "size_splits", 1, 2, 3) }},
	{name: "Split_uneven", prim: "Split", want: map[string]string{"axis": nnI64, "output_num": nnI64, "size_splits": nnInts}, loose: true, g: func(b *nnGraph) *ir.Graph {
		return b.node("Split", ir.Attrs{"axis": ir.IntAttr(0), "num_outputs": ir.IntAttr(3)}, 3, b.in("x", ir.Float32, 7, 2))
	}, check: func(t *testing.T, w nnWritten) { nnWantInts(t, w, "size_splits", 3, 3, 1) }},
	{name: "Split_one", prim: "Split", want: map[string]string{"axis": nnI64, "output_num": nnI64}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Split", ir.Attrs{"axis": ir.IntAttr(0), "num_outputs": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 4, 2))
	}},
	{name: "Slice", prim: "StridedSlice", want: map[string]string{"fmk_type": nnI64}, nin: 5, needs: 5, alt: &nnCase{prim: "StridedSlice", nin: 4, loose: true, want: map[string]string{"begin_mask": nnI64, "end_mask": nnI64,
		"ellipsis_mask": nnI64, "new_axis_mask": nnI64, "shrink_axis_mask": nnI64}}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Slice", nil, 1, b.in("x", ir.Float32, 4, 5, 6),
			b.ints("starts", 1, -1), b.ints("ends", 100, 0), b.ints("axes", 0, 2), b.ints("steps", 2, -2))
	}},
	{name: "Slice_no_axes_steps", prim: "StridedSlice", want: map[string]string{"fmk_type": nnI64}, nin: 5, loose: true, needs: 5, alt: &nnCase{prim: "StridedSlice", nin: 4, loose: true, want: map[string]string{"begin_mask": nnI64, "end_mask": nnI64,
		"ellipsis_mask": nnI64, "new_axis_mask": nnI64, "shrink_axis_mask": nnI64}}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Slice", nil, 1, b.in("x", ir.Float32, 4, 5, 6), b.ints("starts", 1, 2), b.ints("ends", 3, -1))
	}},
	{name: "Slice_negative_to_start", prim: "StridedSlice", want: map[string]string{"fmk_type": nnI64}, nin: 5, loose: true, needs: 5, alt: &nnCase{prim: "StridedSlice", nin: 4, loose: true, want: map[string]string{"begin_mask": nnI64, "end_mask": nnI64,
		"ellipsis_mask": nnI64, "new_axis_mask": nnI64, "shrink_axis_mask": nnI64}}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Slice", nil, 1, b.in("x", ir.Float32, 4, 5, 6),
			b.ints("starts", -1, 100, 2), b.ints("ends", math.MinInt64, -100, 3), b.ints("axes", 0, 1, -1), b.ints("steps", -1, -2, 1))
	}},
	{name: "Gather", prim: "Gather", want: map[string]string{}, nin: 3, g: func(b *nnGraph) *ir.Graph {
		idx := b.c("idx", ir.Int64Tensor([]int64{2, 3}, 0, 3, -1, 2, 1, 0))
		return b.node("Gather", ir.Attrs{"axis": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 5, 4), idx)
	}},
	{name: "GatherD", prim: "GatherD", want: map[string]string{}, nin: 3, g: func(b *nnGraph) *ir.Graph {
		idx := b.c("idx", ir.Int64Tensor([]int64{3, 2}, 0, 3, 1, 2, 2, 0))
		return b.node("GatherD", ir.Attrs{"axis": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 3, 4), idx)
	}},
	{name: "Pad_constant", prim: "PadFusion", want: map[string]string{"paddings": "TUPLE:TUPLE", "padding_mode": nnI64, "constant_value": nnF32T}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Pad", nil, 1, b.in("x", ir.Float32, 1, 2, 3, 4), b.ints("pads", 0, 0, 1, 2, 0, 1, 0, 1),
			b.c("cv", ir.Float32Tensor([]int64{}, 1.5)))
	}, check: func(t *testing.T, w nnWritten) {
		if f := w.attrs["constant_value"].GetF(); f != 1.5 {
			t.Errorf("constant_value %v, want 1.5", f)
		}
		var pairs []int64
		for _, p := range w.attrs["paddings"].Values {
			pairs = append(pairs, nnTupleInts(p)...)
		}
		if !slices.Equal(pairs, []int64{0, 0, 0, 1, 1, 0, 2, 1}) { // ONNX begins..., ends... -> (begin, end) per axis
			t.Errorf("paddings %v", pairs)
		}
	}},
	{name: "Pad_reflect", prim: "PadFusion", want: map[string]string{"paddings": "TUPLE:TUPLE", "padding_mode": nnI64, "constant_value": nnF32T}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Pad", ir.Attrs{"mode": ir.StringAttr("reflect")}, 1, b.in("x", ir.Float32, 2, 5), b.ints("pads", 1, 2, 0, 3))
	}, check: func(t *testing.T, w nnWritten) { nnWantInt(t, w, "padding_mode", 1) }},
	{name: "Pad_edge", prim: "PadFusion", want: map[string]string{"paddings": "TUPLE:TUPLE", "padding_mode": nnI64, "constant_value": nnF32T}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Pad", ir.Attrs{"mode": ir.StringAttr("edge")}, 1, b.in("x", ir.Float32, 3, 4), b.ints("pads", 1, 0, 1, 1))
	}, check: func(t *testing.T, w nnWritten) { nnWantInt(t, w, "padding_mode", 2) }},
	{name: "Pad_axes", prim: "PadFusion", want: map[string]string{"paddings": "TUPLE:TUPLE", "padding_mode": nnI64, "constant_value": nnF32T}, loose: true, g: func(b *nnGraph) *ir.Graph {
		return b.node("Pad", nil, 1, b.in("x", ir.Float32, 2, 3, 4), b.ints("pads", 1, 2, 3, 0), nil, b.ints("axes", -1, 0))
	}},
	{name: "Pad_runtime_value", prim: "Custom:gkconv.Pad", g: func(b *nnGraph) *ir.Graph {
		return b.node("Pad", nil, 1, b.in("x", ir.Float32, 3, 4), b.ints("pads", 1, 0, 0, 1), b.in("cv", ir.Float32))
	}},
	{name: "Pad_edge_wide", prim: "Custom:gkconv.Pad", g: func(b *nnGraph) *ir.Graph {
		return b.node("Pad", ir.Attrs{"mode": ir.StringAttr("edge")}, 1, b.in("x", ir.Float32, 3, 4), b.ints("pads", 2, 0, 0, 0))
	}},
	{name: "Pad_wrap", prim: "Custom:gkconv.Pad", g: func(b *nnGraph) *ir.Graph {
		return b.node("Pad", ir.Attrs{"mode": ir.StringAttr("wrap")}, 1, b.in("x", ir.Float32, 3, 4), b.ints("pads", 1, 0, 0, 0))
	}},
	{name: "Pad_negative", prim: "Custom:gkconv.Pad", g: func(b *nnGraph) *ir.Graph {
		return b.node("Pad", nil, 1, b.in("x", ir.Float32, 3, 4), b.ints("pads", -1, 0, 0, 1))
	}},
	{name: "Tile", prim: "TileFusion", want: map[string]string{}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("Tile", nil, 1, b.in("x", ir.Float32, 2, 3), b.ints("repeats", 2, 1))
	}},
	{name: "DepthToSpace", prim: "DepthToSpace", want: map[string]string{"block_size": nnI64, "mode": nnStr, "fmk_type": nnI64}, g: func(b *nnGraph) *ir.Graph {
		return b.node("DepthToSpace", ir.Attrs{"blocksize": ir.IntAttr(2), "mode": ir.StringAttr("CRD")}, 1, b.in("x", ir.Float32, 1, 8, 2, 3))
	}},
	{name: "DepthToSpace_DCR", prim: "DepthToSpace", want: map[string]string{"block_size": nnI64, "fmk_type": nnI64}, g: func(b *nnGraph) *ir.Graph {
		return b.node("DepthToSpace", ir.Attrs{"blocksize": ir.IntAttr(2)}, 1, b.in("x", ir.Float32, 1, 8, 2, 3))
	}},
	{name: "SpaceToDepth", prim: "SpaceToDepth", want: map[string]string{"block_size": nnI64, "fmk_type": nnI64}, g: func(b *nnGraph) *ir.Graph {
		return b.node("SpaceToDepth", ir.Attrs{"blocksize": ir.IntAttr(2)}, 1, b.in("x", ir.Float32, 1, 2, 4, 6))
	}},
	{name: "Reshape", prim: "Reshape", want: map[string]string{"fmk_type": nnI32, "allowzero": nnI32}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("Reshape", ir.Attrs{"allowzero": ir.IntAttr(0)}, 1, b.in("x", ir.Float32, 2, 3, 4), b.ints("shape", 0, -1))
	}},
	{name: "Reshape_plain", prim: "Reshape", want: map[string]string{"fmk_type": nnI32}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("Reshape", nil, 1, b.in("x", ir.Float32, 2, 3, 4), b.ints("shape", 4, 6))
	}},
	{name: "Flatten", prim: "Flatten", want: map[string]string{"axis": nnI64}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Flatten", ir.Attrs{"axis": ir.IntAttr(2)}, 1, b.in("x", ir.Float32, 2, 3, 4, 5))
	}},
	{name: "Flatten_default", prim: "Flatten", want: map[string]string{}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Flatten", nil, 1, b.in("x", ir.Float32, 2, 3, 4))
	}},
	{name: "Squeeze", prim: "Squeeze", want: map[string]string{"axis": nnInts}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Squeeze", nil, 1, b.in("x", ir.Float32, 2, 1, 3, 1), b.ints("axes", 1, -1))
	}, check: func(t *testing.T, w nnWritten) { nnWantInts(t, w, "axis", 1, -1) }},
	{name: "Squeeze_all", prim: "Squeeze", want: map[string]string{"axis": "TUPLE:"}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Squeeze", nil, 1, b.in("x", ir.Float32, 1, 3, 1))
	}},
	{name: "Unsqueeze", prim: "Unsqueeze", want: map[string]string{"axis": nnInts}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Unsqueeze", nil, 1, b.in("x", ir.Float32, 2, 3), b.ints("axes", 0, 3))
	}, check: func(t *testing.T, w nnWritten) { nnWantInts(t, w, "axis", 0, 3) }},
	{name: "Resize_linear_scales", prim: "Resize", want: nnResizeAttrs, nin: 2, g: func(b *nnGraph) *ir.Graph {
		sc := b.c("scales", ir.Float32Tensor([]int64{4}, 1, 1, 2, 1.5))
		return b.node("Resize", ir.Attrs{"mode": ir.StringAttr("linear"), "coordinate_transformation_mode": ir.StringAttr("align_corners")}, 1,
			b.in("x", ir.Float32, 1, 2, 3, 4), nil, sc)
	}, check: func(t *testing.T, w nnWritten) {
		nnWantInt(t, w, "method", 0)
		nnWantInt(t, w, "coordinate_transform_mode", 1)
	}},
	{name: "Resize_nearest_sizes", prim: "Resize", want: nnWith(nnResizeAttrs, "bysize", nnBool), nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("Resize", ir.Attrs{"mode": ir.StringAttr("nearest"), "coordinate_transformation_mode": ir.StringAttr("asymmetric"),
			"nearest_mode": ir.StringAttr("floor")}, 1, b.in("x", ir.Float32, 1, 2, 3, 4), nil, nil, b.ints("sizes", 1, 2, 7, 5))
	}, check: func(t *testing.T, w nnWritten) {
		nnWantInt(t, w, "method", 1)
		nnWantInt(t, w, "nearest_mode", 3)
	}},
	{name: "Resize_cubic", prim: "Resize", want: nnWith(nnResizeAttrs, "cubic_coeff", nnF32T, "exclude_outside", nnI64), g: func(b *nnGraph) *ir.Graph {
		sc := b.c("scales", ir.Float32Tensor([]int64{4}, 1, 1, 0.5, 2))
		return b.node("Resize", ir.Attrs{"mode": ir.StringAttr("cubic"), "coordinate_transformation_mode": ir.StringAttr("half_pixel"),
			"cubic_coeff_a": ir.FloatAttr(-0.5), "exclude_outside": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 1, 1, 4, 4), nil, sc)
	}},
	{name: "Resize_pytorch_half_pixel", prim: "Custom:gkconv.Resize", g: func(b *nnGraph) *ir.Graph {
		sc := b.c("scales", ir.Float32Tensor([]int64{4}, 1, 1, 2, 2))
		return b.node("Resize", ir.Attrs{"mode": ir.StringAttr("linear"), "coordinate_transformation_mode": ir.StringAttr("pytorch_half_pixel")}, 1,
			b.in("x", ir.Float32, 1, 1, 2, 2), nil, sc)
	}},
	{name: "Resize_channels", prim: "Custom:gkconv.Resize", g: func(b *nnGraph) *ir.Graph {
		sc := b.c("scales", ir.Float32Tensor([]int64{4}, 1, 2, 2, 2))
		return b.node("Resize", nil, 1, b.in("x", ir.Float32, 1, 1, 2, 2), nil, sc)
	}},
	{name: "TopK", prim: "TopKFusion", want: map[string]string{"axis": nnI64, "largest": nnI64, "sorted": nnBool}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("TopK", ir.Attrs{"axis": ir.IntAttr(1), "largest": ir.IntAttr(0), "sorted": ir.IntAttr(1)}, 2,
			b.in("x", ir.Float32, 3, 5), b.ints("k", 2))
	}},
	{name: "TopK_values_only", prim: "TopKFusion", want: map[string]string{"axis": nnI64, "largest": nnI64, "sorted": nnBool}, loose: true, norun: true, g: func(b *nnGraph) *ir.Graph {
		return b.node("TopK", ir.Attrs{"axis": ir.IntAttr(0), "largest": ir.IntAttr(1), "sorted": ir.IntAttr(1)}, 1,
			b.in("x", ir.Float32, 4, 3), b.ints("k", 3))
	}},
	{name: "CumSum", prim: "CumSum", want: map[string]string{"exclusive": nnBool, "reverse": nnBool}, nin: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("CumSum", ir.Attrs{"exclusive": ir.IntAttr(1), "reverse": ir.IntAttr(0)}, 1, b.in("x", ir.Float32, 2, 3), b.scalarInt("axis", 1))
	}},
	{name: "Range", prim: "Range", want: map[string]string{"d_type": nnI32}, nin: 3, g: func(b *nnGraph) *ir.Graph {
		return b.node("Range", nil, 1, b.scalarInt("start", 1), b.scalarInt("limit", 10), b.scalarInt("delta", 2))
	}},
	{name: "Shape", prim: "Shape", want: map[string]string{}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Shape", nil, 1, b.in("x", ir.Float32, 2, 3, 4))
	}},
	{name: "Shape_start", prim: "Custom:gkconv.Shape", g: func(b *nnGraph) *ir.Graph {
		return b.node("Shape", ir.Attrs{"start": ir.IntAttr(1)}, 1, b.in("x", ir.Float32, 2, 3, 4))
	}},
	{name: "Size", prim: "Size", want: map[string]string{}, g: func(b *nnGraph) *ir.Graph {
		return b.node("Size", nil, 1, b.in("x", ir.Float32, 2, 3, 4))
	}},
	{name: "ConstantOfShape", prim: "ConstantOfShape", want: map[string]string{"value": "TUPLE:FLOAT", "data_type": nnI64}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		v := ir.NewTensor(ir.Int32, []int64{1})
		v.I32()[0] = 7
		return b.node("ConstantOfShape", ir.Attrs{"value": ir.TensorAttr(v)}, 1, b.ints("shape", 2, 3))
	}, check: func(t *testing.T, w nnWritten) { nnWantInt(t, w, "data_type", 34) }},
	{name: "ConstantOfShape_int64_wide", prim: "Custom:gkconv.ConstantOfShape", g: func(b *nnGraph) *ir.Graph {
		v := ir.Int64Tensor([]int64{1}, 1<<40+1)
		return b.node("ConstantOfShape", ir.Attrs{"value": ir.TensorAttr(v)}, 1, b.ints("shape", 2))
	}},
	{name: "Trilu_lower_k", prim: "Tril", want: map[string]string{}, nin: 2, needs: 2,
		alt: &nnCase{prim: "Tril", want: map[string]string{"diagonal": nnI64}, nin: 1}, g: func(b *nnGraph) *ir.Graph {
			return b.node("Trilu", ir.Attrs{"upper": ir.IntAttr(0)}, 1, b.in("x", ir.Float32, 3, 4), b.scalarInt("k", 1))
		}},
	{name: "Trilu_runtime_k", prim: "Triu", want: map[string]string{}, nin: 2, needs: 2, g: func(b *nnGraph) *ir.Graph {
		return b.node("Trilu", nil, 1, b.in("x", ir.Float32, 3, 4), b.in("k", ir.Int64))
	}},
	{name: "Trilu_upper", prim: "Triu", want: map[string]string{}, nin: 1, g: func(b *nnGraph) *ir.Graph {
		return b.node("Trilu", nil, 1, b.in("x", ir.Float32, 2, 3, 4))
	}},
}

func TestNNLowerings(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range nnCases {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g(newNNGraph(t))
			covered[g.Nodes[0].Op] = true
			runNNCase(t, tc, g)
		})
	}
	for op := range lowerNNTable {
		if !covered[op] {
			t.Errorf("no case for %s", op)
		}
	}
}

// runNNCase writes g's one node, checks the primitive, its attributes and
// inputs against tc, reads it back and compares the graphs and their runs.
func runNNCase(t *testing.T, tc nnCase, g *ir.Graph) {
	t.Helper()
	if tc.needs > 0 && !schemaInputsOK(tc.prim, tc.needs) {
		if tc.alt != nil {
			tc.prim, tc.want, tc.nin, tc.loose = tc.alt.prim, tc.alt.want, tc.alt.nin, tc.loose || tc.alt.loose
		} else {
			tc.prim, tc.want, tc.nin, tc.check = "Custom:"+CustomTypePrefix+g.Nodes[0].Op, nil, 0, nil
		}
		t.Logf("the primitive schema has no %d-input form: expecting %s", tc.needs, tc.prim)
	}
	data := writeBytes(t, g, WriteOptions{})
	rep, err := checkBytes(data, tc.name)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Violations {
		t.Errorf("converter check: %s", v)
	}
	w := nnDecode(t, data)
	if w.prim != tc.prim {
		t.Fatalf("written as %s, want %s", w.prim, tc.prim)
	}
	if tc.want != nil {
		for k, typ := range tc.want {
			if got, ok := w.types[k]; !ok {
				t.Errorf("attribute %s is missing", k)
			} else if got != typ {
				t.Errorf("attribute %s is %s, want %s", k, got, typ)
			}
		}
		for k, typ := range w.types {
			if _, ok := tc.want[k]; !ok {
				t.Errorf("unexpected attribute %s (%s)", k, typ)
			}
		}
	}
	if tc.nin > 0 && w.inputs != tc.nin {
		t.Errorf("%d node inputs, want %d", w.inputs, tc.nin)
	}
	if tc.check != nil {
		tc.check(t, w)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Nodes) != 1 || back.Nodes[0].Op != g.Nodes[0].Op {
		t.Fatalf("read back as %v", back.Nodes)
	}
	if !tc.norun {
		nnSameRun(t, g, back)
	}
	if !tc.loose {
		nnNormConsts(g)
		nnNormConsts(back)
		if d := testkit.GraphDiff(g, back); d != "" {
			t.Errorf("read back differs: %s", d)
		}
	}
}

// TestNNLiftMindSporeForms reads primitives in forms MindSpore Lite writes
// that this project's writer does not: fused activations, global pooling,
// the MindSpore Tril diagonal attribute.
func TestNNLiftMindSporeForms(t *testing.T) {
	// A conv written by the writer, its activation_type then patched to RELU6.
	b := newNNGraph(t)
	g := b.node("Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(1, 1), "pads": ir.IntsAttr(0, 0, 0, 0)}, 1,
		b.in("x", ir.Float32, 1, 2, 3, 3), b.floats("w", 1, 2, 2, 1, 1))
	data := writeBytes(t, g, WriteOptions{})
	var mp pb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	for _, p := range mp.Primitives {
		for _, a := range p.Attribute {
			if a.GetName() == "activation_type" {
				a.I = ptr(int64(msActReLU6))
			}
		}
	}
	patched, err := proto.Marshal(&mp)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(patched)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, n := range back.Nodes {
		ops = append(ops, n.Op)
	}
	// RELU6 stays on the conv as its fused activation (ir.AttrActivation).
	if strings.Join(ops, ",") != "Conv2D" || back.Nodes[0].Attrs.Int(ir.AttrActivation, 0) != ir.ActReLU6 {
		t.Errorf("RELU6 Conv2DFusion read as %v (attrs %v)", ops, back.Nodes[0].Attrs)
	}
}

// TestNNLoweringCoverage writes every ONNX backend node test and reports,
// per op of lower_nn.go, how many nodes became a MindSpore primitive and
// which fell back to Custom (run with -v).
func TestNNLoweringCoverage(t *testing.T) {
	root := filepath.Join(sharedDir(t, "corpus/onnx-backend"), "node")
	dirs, _ := filepath.Glob(filepath.Join(root, "test_*"))
	total, custom := map[string]int{}, map[string][]string{}
	for _, dir := range dirs {
		m, err := onnx.Open(filepath.Join(dir, "model.onnx"), onnx.Options{})
		if err != nil {
			continue
		}
		g := m.Graph
		if _, _, err := runtime.FoldConstants(g); err != nil {
			m.Close()
			continue
		}
		g.RemoveDead()
		for _, n := range g.Nodes {
			if _, ok := lowerNNTable[n.Op]; ok {
				total[n.Op]++
			}
		}
		var buf bytes.Buffer
		if err := Write(&buf, g, WriteOptions{}); err != nil {
			t.Errorf("%s: %v", filepath.Base(dir), err)
			m.Close()
			continue
		}
		m.Close()
		var mp pb.ModelProto
		if err := proto.Unmarshal(buf.Bytes(), &mp); err != nil {
			t.Fatal(err)
		}
		for _, p := range mp.Primitives {
			if p.GetOpType() != "Custom" {
				continue
			}
			for _, a := range p.Attribute {
				if a.GetName() == "type" {
					op := strings.TrimPrefix(string(a.S), CustomTypePrefix)
					if _, ok := lowerNNTable[op]; ok {
						custom[op] = append(custom[op], strings.TrimPrefix(filepath.Base(dir), "test_"))
					}
				}
			}
		}
	}
	var ops []string
	for op := range total {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		t.Logf("%-16s %4d nodes, %4d Custom %s", op, total[op], len(custom[op]), strings.Join(custom[op], " "))
	}
}

// nnDeconvNoBias: a ConvTranspose without bias has no has_bias; this case's
// group-2, one-channel-per-group weight is depth-wise.
func nnDeconvNoBias() map[string]string {
	m := map[string]string{}
	for k, v := range nnDeconvAttrs {
		if k != "has_bias" {
			m[k] = v
		}
	}
	m["is_depth_wise"] = nnBool
	return m
}
