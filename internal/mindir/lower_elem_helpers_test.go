package mindir

// The helpers of the elementwise lowering tests (lower_elem_test.go):
// one-node graphs, reading the written primitive back, running both graphs
// and comparing them.

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/runtime"
	"gkconv/internal/testkit"
)

// elemIn is a graph input; elemConst a constant input.
func elemIn(name string, dt ir.DType, shape ...int64) *ir.Value {
	return &ir.Value{Name: name, DType: dt, Shape: shape}
}

func elemConst(name string, t *ir.Tensor) *ir.Value {
	return &ir.Value{Name: name, DType: t.DType, Shape: append([]int64{}, t.Shape...), Const: t}
}

func elemF32(shape []int64, v ...float32) *ir.Tensor { return ir.Float32Tensor(shape, v...) }

func elemI64(shape []int64, v ...int64) *ir.Tensor { return ir.Int64Tensor(shape, v...) }

func elemScalarT(dt ir.DType, v float64) *ir.Tensor {
	t := ir.NewTensor(dt, []int64{})
	if dt.IsFloat() {
		t.PutFloat(0, v)
	} else {
		putInts(t, []int64{int64(v)})
	}
	return t
}

// elemGraph builds a graph of one node of op; outputs are typed by inference.
func elemGraph(t *testing.T, op string, attrs ir.Attrs, nout int, ins ...*ir.Value) *ir.Graph {
	t.Helper()
	g := ir.NewGraph("g")
	for _, v := range ins {
		switch {
		case v == nil:
		case v.Const != nil:
			g.Consts = append(g.Consts, v)
		default:
			g.Inputs = append(g.Inputs, v)
		}
	}
	outs := make([]string, nout)
	for i := range outs {
		outs[i] = fmt.Sprintf("y%d", i)
	}
	n := g.AddNode("n", op, ins, outs...)
	if attrs != nil {
		n.Attrs = attrs
	}
	n.Provenance = []string{"n"}
	if err := ir.InferNode(n); err != nil {
		t.Fatalf("infer %s: %v", op, err)
	}
	g.Outputs = n.Outputs
	return g
}

type elemCase struct {
	name  string
	g     func(t *testing.T) *ir.Graph
	prim  string   // written primitive; "Custom" = the gkconv.<op> fallback
	attrs []string // written primitive attributes "name:TYPE", sorted (nil: not checked)
	// check inspects the written primitive node (optional).
	check func(t *testing.T, mp *pb.ModelProto, prim *pb.PrimitiveProto, node *pb.NodeProto)
	// noRun: the CPU runtime cannot run the graph (the mapping is still checked).
	noRun bool
	// looseInputs: the read-back node drops inputs that do not change the
	// result (Dropout's constant false training_mode); numbers still compared.
	looseInputs bool
}

func elemAttrSig(attrs []*pb.AttributeProto) []string {
	var s []string
	for _, a := range attrs {
		s = append(s, a.GetName()+":"+a.GetType().String())
	}
	slices.Sort(s)
	return s
}

func elemAttr(p *pb.PrimitiveProto, name string) *pb.AttributeProto {
	for _, a := range p.Attribute {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}

// elemWritten decodes a written file and returns its one compute node and
// primitive (bookkeeping nodes skipped).
func elemWritten(t *testing.T, data []byte) (*pb.ModelProto, *pb.PrimitiveProto, *pb.NodeProto) {
	t.Helper()
	var mp pb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	prims := map[string]*pb.PrimitiveProto{}
	for _, p := range mp.Primitives {
		prims[p.GetName()] = p
	}
	var found *pb.PrimitiveProto
	var node *pb.NodeProto
	for _, n := range mp.Graph.Node {
		ref, ok := strings.CutPrefix(n.GetOpType(), "REF::")
		if !ok {
			continue
		}
		p := prims[ref]
		if p == nil {
			t.Fatalf("node %s: no primitive %s", n.GetName(), ref)
		}
		if p.GetOpType() == "TupleGetItem" {
			continue
		}
		if found != nil {
			t.Fatalf("more than one compute node: %s and %s", found.GetOpType(), p.GetOpType())
		}
		found, node = p, n
	}
	if found == nil {
		t.Fatal("no compute node written")
	}
	return &mp, found, node
}

// elemParam returns the written parameter called name.
func elemParam(mp *pb.ModelProto, name string) *pb.TensorProto {
	for _, p := range mp.Graph.Parameter {
		if p.GetName() == name {
			return p
		}
	}
	return nil
}

// elemDefaults fills the ONNX defaults of the attributes an op reads, so
// that an attribute left out and one given at its default compare equal.
var elemDefaults = map[string]ir.Attrs{
	"LeakyReLU": {"alpha": ir.FloatAttr(0.01)},
	"Elu":       {"alpha": ir.FloatAttr(1)},
	"CeLU":      {"alpha": ir.FloatAttr(1)},
	"GeLU":      {"approximate": ir.StringAttr("none")},
	"HSigmoid":  {"alpha": ir.FloatAttr(0.2), "beta": ir.FloatAttr(0.5)},
	"SeLU":      {"alpha": ir.FloatAttr(elemSeluAlpha), "gamma": ir.FloatAttr(elemSeluGamma)},
	"Mod":       {"fmod": ir.IntAttr(0)},
	"Argmax":    {"axis": ir.IntAttr(0), "keepdims": ir.IntAttr(1), "select_last_index": ir.IntAttr(0)},
	"Argmin":    {"axis": ir.IntAttr(0), "keepdims": ir.IntAttr(1), "select_last_index": ir.IntAttr(0)},
	"BiasAdd":   {"format": ir.StringAttr("NCHW")},
	"Cast":      {"saturate": ir.IntAttr(1)},
}

func elemNormAttrs(op string, a ir.Attrs) ir.Attrs {
	out := ir.Attrs{}
	for k, v := range elemDefaults[op] {
		out[k] = v
	}
	if strings.HasPrefix(op, "Reduce") {
		out["keepdims"] = ir.IntAttr(1)
	}
	for k, v := range a {
		if v.Kind == ir.AttrFloat {
			v.F = float64(float32(v.F)) // MindSpore's attributes are float32
		}
		out[k] = v
	}
	for k, v := range out {
		if v.Kind == ir.AttrFloat {
			v.F = float64(float32(v.F))
			out[k] = v
		}
	}
	delete(out, "saturate") // only float8 targets read it; MindSpore has none
	// A reduction is written with noop_with_empty_axes=1 only when its axes
	// are constant and not empty, where the attribute changes nothing (the
	// other cases are the fallback, checked exactly).
	delete(out, "noop_with_empty_axes")
	return out
}

// elemRandom fills a tensor for v: floats in [-3, 3) with some exact
// halves (Round's ties), integers in [-6, 6] without 0, random bools.
func elemRandom(r *rand.Rand, v *ir.Value) *ir.Tensor {
	shape := append([]int64{}, v.Shape...)
	for i, d := range shape {
		if d < 0 {
			shape[i] = 3
		}
	}
	t := ir.NewTensor(v.DType, shape)
	n := int(t.NumElements())
	switch {
	case v.DType.IsFloat():
		for i := 0; i < n; i++ {
			x := r.Float64()*6 - 3
			if r.Intn(5) == 0 {
				x = math.Round(x*2) / 2
			}
			t.PutFloat(i, x)
		}
	case v.DType == ir.Bool:
		for i := range t.Data {
			t.Data[i] = byte(r.Intn(2))
		}
	default:
		vals := make([]int64, n)
		for i := range vals {
			for vals[i] == 0 {
				vals[i] = int64(r.Intn(13) - 6)
			}
		}
		putInts(t, vals)
	}
	return t
}

func elemRun(t *testing.T, g *ir.Graph, ins []*ir.Tensor) []*ir.Tensor {
	t.Helper()
	s, err := runtime.NewSession(g, runtime.Options{Threads: 1})
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	out, err := s.Run(ins)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

// elemSameNumbers runs both graphs on the same random inputs and compares the
// outputs bit for bit.
func elemSameNumbers(t *testing.T, orig, back *ir.Graph) {
	t.Helper()
	if len(orig.Inputs) != len(back.Inputs) {
		t.Fatalf("%d inputs read back, %d written", len(back.Inputs), len(orig.Inputs))
	}
	r := rand.New(rand.NewSource(7))
	for round := 0; round < 3; round++ {
		ins := make([]*ir.Tensor, len(orig.Inputs))
		for i, v := range orig.Inputs {
			ins[i] = elemRandom(r, v)
		}
		a, b := elemRun(t, orig, ins), elemRun(t, back, ins)
		if len(a) != len(b) {
			t.Fatalf("%d outputs vs %d", len(a), len(b))
		}
		for i := range a {
			if a[i].DType != b[i].DType || !slices.Equal(a[i].Shape, b[i].Shape) || !bytes.Equal(a[i].Data, b[i].Data) {
				t.Fatalf("output %d differs: %s vs read back %s", i, a[i].Summary(8), b[i].Summary(8))
			}
		}
	}
}

// elemSameNode checks that the read-back graph is the original node: the same
// op, the same attributes (ONNX defaults filled in), the same graph inputs
// and outputs, and equal constant inputs.
func elemSameNode(t *testing.T, orig, back *ir.Graph, looseInputs bool) {
	t.Helper()
	if d := testkit.ValuesDiff("input", orig.Inputs, back.Inputs); d != "" {
		t.Errorf("graph %s", d)
	}
	if d := testkit.ValuesDiff("output", orig.Outputs, back.Outputs); d != "" {
		t.Errorf("graph %s", d)
	}
	if len(back.Nodes) != 1 {
		var ops []string
		for _, n := range back.Nodes {
			ops = append(ops, n.Op)
		}
		t.Fatalf("read back %d nodes %v, want 1", len(back.Nodes), ops)
	}
	x, y := orig.Nodes[0], back.Nodes[0]
	if x.Op != y.Op {
		t.Fatalf("read back %s, want %s", y.Op, x.Op)
	}
	if d := testkit.AttrsDiff(elemNormAttrs(x.Op, x.Attrs), elemNormAttrs(y.Op, y.Attrs)); d != "" {
		t.Errorf("%s: %s (wrote %v, read %v)", x.Op, d, x.Attrs, y.Attrs)
	}
	xi, yi := elemTrimNil(x.Inputs), elemTrimNil(y.Inputs)
	if looseInputs {
		xi, yi = xi[:1], yi[:1]
	}
	if len(xi) != len(yi) {
		t.Fatalf("%d inputs read back, want %d", len(yi), len(xi))
	}
	for i := range xi {
		a, b := xi[i], yi[i]
		if (a == nil) != (b == nil) {
			t.Errorf("input %d: presence differs (%v vs %v)", i, a, b)
			continue
		}
		if a == nil {
			continue
		}
		if a.Const == nil {
			if b.Const != nil || a.Name != b.Name {
				t.Errorf("input %d: %v read back as %v", i, a, b)
			}
			continue
		}
		if b.Const == nil || !elemConstEqual(a.Const, b.Const) {
			t.Errorf("input %d: constant %v read back as %v", i, a.Const.Summary(8), b)
		}
	}
}

func elemTrimNil(v []*ir.Value) []*ir.Value {
	for len(v) > 0 && v[len(v)-1] == nil {
		v = v[:len(v)-1]
	}
	return v
}

// elemConstEqual compares values and shapes (numerically; an int64 and an int32
// tensor of the same numbers are equal).
func elemConstEqual(a, b *ir.Tensor) bool {
	if !slices.Equal(normShape(a.Shape), normShape(b.Shape)) || a.DType.IsFloat() != b.DType.IsFloat() {
		return false
	}
	x, err1 := a.Float64s()
	y, err2 := b.Float64s()
	return err1 == nil && err2 == nil && slices.Equal(x, y)
}
