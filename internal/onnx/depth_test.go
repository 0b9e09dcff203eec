package onnx

import (
	"errors"
	"io"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	ob "gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
)

// deepChain encodes a model whose graphs are nested depth levels below the
// main graph, each level a node whose graph attribute holds the next. The
// bytes are built from the inside out, without recursion, and backwards
// into one buffer (every nested graph is the last field of its message, so
// each level is a prefix), which is reversed at the end: building a
// 1,000,000-deep chain is linear.
//
// full: every level is a valid If (named if_<level>, else_branch a leaf,
// then_branch the next level, typed outputs), the innermost body an
// Identity of the main graph's x. Otherwise each level is an unnamed If
// with only its nested graph in attribute "b" (as field g or, with
// graphsField, as field graphs): the smallest bytes per level.
func deepChain(t testing.TB, depth int, full, graphsField bool) []byte {
	t.Helper()
	marshal := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	vi := func(name string) *onnxpb.ValueInfoProto { return ob.ValueInfo(name, ob.Float, 2) }
	levelName := func(prefix string, k int) string { return prefix + itoa(int64(k)) }

	buf := make([]byte, 0, 32*depth) // the bytes so far, reversed
	pushRev := func(b []byte) {
		n := len(buf)
		buf = append(buf, b...)
		slices.Reverse(buf[n:])
	}
	// The innermost graph.
	if full {
		pushRev(marshal(&onnxpb.GraphProto{
			Name:   proto.String(levelName("body_", depth)),
			Output: []*onnxpb.ValueInfoProto{vi(levelName("y_", depth))},
			Node: []*onnxpb.NodeProto{{Name: proto.String("id"), OpType: proto.String("Identity"),
				Input: []string{"x"}, Output: []string{levelName("y_", depth)}}},
		}))
	}
	var leaf []byte // the else_branch of every full level
	if full {
		leaf = marshal(&onnxpb.AttributeProto{Name: proto.String("else_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(),
			G: &onnxpb.GraphProto{Name: proto.String("leaf"), Output: []*onnxpb.ValueInfoProto{vi("leaf_y")},
				Node: []*onnxpb.NodeProto{{OpType: proto.String("Identity"), Input: []string{"x"}, Output: []string{"leaf_y"}}}}})
	}
	// The heads of a minimal level are the same at every level.
	graphField, attrType := protowire.Number(attrG), onnxpb.AttributeProto_GRAPH
	if graphsField {
		graphField, attrType = attrGraphs, onnxpb.AttributeProto_GRAPHS
	}
	minNode := marshal(&onnxpb.NodeProto{OpType: proto.String("If")})
	minAttr := marshal(&onnxpb.AttributeProto{Name: proto.String("b"), Type: attrType.Enum()})
	var prefix, attr, node []byte // scratch, reused
	for k := depth - 1; k >= 0; k-- {
		inner := len(buf) // the graph of level k+1
		graphHead, nodeHead, attrHead := []byte(nil), minNode, minAttr
		if full {
			g := &onnxpb.GraphProto{Name: proto.String(levelName("body_", k)), Output: []*onnxpb.ValueInfoProto{vi(levelName("y_", k))}}
			if k == 0 {
				g.Name = proto.String("main")
				g.Input = []*onnxpb.ValueInfoProto{ob.ValueInfo("c", ob.Bool), vi("x")}
			}
			graphHead = marshal(g)
			nodeHead = marshal(&onnxpb.NodeProto{Name: proto.String(levelName("if_", k)), OpType: proto.String("If"),
				Input: []string{"c"}, Output: []string{levelName("y_", k)}})
			nodeHead = protowire.AppendTag(nodeHead, nodeAttribute, protowire.BytesType)
			nodeHead = protowire.AppendBytes(nodeHead, leaf)
			attrHead = marshal(&onnxpb.AttributeProto{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum()})
		}
		attr = append(attr[:0], attrHead...)
		attr = protowire.AppendVarint(protowire.AppendTag(attr, graphField, protowire.BytesType), uint64(inner))
		attrLen := len(attr) + inner
		node = append(node[:0], nodeHead...)
		node = protowire.AppendVarint(protowire.AppendTag(node, nodeAttribute, protowire.BytesType), uint64(attrLen))
		nodeLen := len(node) + attrLen
		prefix = append(prefix[:0], graphHead...)
		prefix = protowire.AppendVarint(protowire.AppendTag(prefix, graphNode, protowire.BytesType), uint64(nodeLen))
		prefix = append(prefix, node...)
		prefix = append(prefix, attr...)
		pushRev(prefix)
	}
	head := marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}}})
	head = protowire.AppendVarint(protowire.AppendTag(head, modelGraph, protowire.BytesType), uint64(len(buf)))
	pushRev(head)
	slices.Reverse(buf)
	return buf
}

// ifDepth is the number of If bodies nested in one another below g,
// following then_branch.
func ifDepth(g *ir.Graph) int {
	d := 0
	for {
		var next *ir.Graph
		for _, n := range g.Nodes {
			if n.Op == "If" {
				next = n.Attrs.Graph("then_branch")
			}
		}
		if next == nil {
			return d
		}
		g, d = next, d+1
	}
}

// checkDepthError: err is the one short depth error, naming the file and
// where the chain went one level too deep.
func checkDepthError(t *testing.T, err error, where string) {
	t.Helper()
	if err == nil {
		t.Errorf("a model nested too deep was accepted (%s)", where)
		return
	}
	var de *ir.DepthError
	msg := err.Error()
	want := "deep.onnx: graphs nested more than 64 deep (" + where + ")"
	if !errors.As(err, &de) || msg != want {
		t.Errorf("err = %.300q (%d bytes), want %q", msg, len(msg), want)
	}
}

// TestDeepNestingMillion: a model nested 1,000,000 graphs deep (node ->
// graph attribute -> graph -> node ...) is refused with one short error
// once the decoder passes ir.MaxGraphDepth, not read until the goroutine's
// stack overflows (a fatal error, not even a panic), and without reading
// the rest of the chain.
func TestDeepNestingMillion(t *testing.T) {
	const depth = 1_000_000
	for _, graphs := range []bool{false, true} {
		data := deepChain(t, depth, false, graphs)
		_, err := Parse(data, "", Options{Name: "deep.onnx"})
		checkDepthError(t, err, "node If_0 attribute b")
	}
}

// TestDeepNestingRefused: If bodies nested one past the limit, and far
// past it (3000 deep once took 16 s, quadratic in the depth, and then
// failed only in the MindIR writer with a 2.5 KB error), are refused by the
// reader with the same short error.
func TestDeepNestingRefused(t *testing.T) {
	for _, depth := range []int{ir.MaxGraphDepth + 1, 3000} {
		_, err := Parse(deepChain(t, depth, true, false), "", Options{Name: "deep.onnx"})
		checkDepthError(t, err, "node if_64 attribute else_branch") // its first graph attribute
	}
}

// TestDeepNestingAtLimit: If bodies nested exactly ir.MaxGraphDepth deep
// read, infer and are written by the MindIR writer (the limits agree), also
// once fusion has put a graph kernel in the deepest body (its body one
// level below the limit).
func TestDeepNestingAtLimit(t *testing.T) {
	m, err := Parse(deepChain(t, ir.MaxGraphDepth, true, false), "", Options{Name: "deep.onnx"})
	if err != nil {
		t.Fatalf("%.500s", err)
	}
	g := m.Graph
	if d := ifDepth(g); d != ir.MaxGraphDepth {
		t.Fatalf("read %d nested If bodies, want %d", d, ir.MaxGraphDepth)
	}
	if err := ir.InferShapes(g); err != nil {
		t.Fatalf("%.500s", err)
	}
	if s := g.Outputs[0].Shape; !slices.Equal(s, []int64{2}) {
		t.Errorf("output shape %v, want [2]", s)
	}
	if err := mindir.Write(io.Discard, g, mindir.WriteOptions{}); err != nil {
		t.Fatalf("MindIR writer: %.500s", err)
	}
	// What fusion makes of the deepest body: its Identity in a kernel.
	deepest := g
	for range ir.MaxGraphDepth {
		deepest = deepest.Nodes[0].Attrs.Graph("then_branch")
	}
	id := deepest.Nodes[0]
	body := ir.NewGraph("fused_body")
	a := &ir.Value{Name: "a", DType: ir.Float32, Shape: []int64{2}}
	body.Inputs = []*ir.Value{a}
	r := body.AddNode("relu", "ReLU", []*ir.Value{a}, "r")
	neg := body.AddNode("neg", "Neg", []*ir.Value{r.Outputs[0]}, "n")
	body.Outputs = []*ir.Value{neg.Outputs[0]}
	k := deepest.AddNode("fused", ir.OpGraphKernel, []*ir.Value{id.Outputs[0]}, "k")
	k.Outputs[0].DType, k.Outputs[0].Shape = ir.Float32, []int64{2}
	k.Attrs = ir.Attrs{"kernel_name": ir.StringAttr("Fused_ReLU_Neg_kernel"), "process": ir.StringAttr("cpu")}
	k.Body = body
	deepest.Outputs = []*ir.Value{k.Outputs[0]}
	if err := ir.CheckGraphDepth(g); err != nil {
		t.Fatal(err)
	}
	if err := mindir.Write(io.Discard, g, mindir.WriteOptions{}); err != nil {
		t.Fatalf("MindIR writer, with a kernel in the deepest body: %.500s", err)
	}
}
