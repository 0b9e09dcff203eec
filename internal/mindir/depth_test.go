package mindir

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// ifChain is a graph of If nodes nested depth bodies deep (then_branch the
// next level, else_branch a ReLU), every level capturing the condition c and
// x; with kernel, the deepest body holds a graph kernel, as fusion leaves
// it, whose body is one level deeper still.
func ifChain(depth int, kernel bool) *ir.Graph {
	vec := func(name string) *ir.Value { return &ir.Value{Name: name, DType: ir.Float32, Shape: []int64{2}} }
	cond := func(name string) *ir.Value { return &ir.Value{Name: name, DType: ir.Bool, Shape: []int64{}} }
	leaf := func(name string, op string) *ir.Graph {
		g := ir.NewGraph(name)
		c, x := cond("c"), vec("x")
		g.Inputs = []*ir.Value{c, x}
		n := g.AddNode(op, op, []*ir.Value{x}, "y")
		n.Outputs[0].DType, n.Outputs[0].Shape = ir.Float32, []int64{2}
		g.Outputs = n.Outputs
		return g
	}
	var inner *ir.Graph // the body of the level below
	for k := depth; k >= 0; k-- {
		var g *ir.Graph
		if k == depth {
			g = leaf(fmt.Sprintf("body_%d", k), "Neg")
			if kernel {
				body := ir.NewGraph("fused_body")
				a := vec("a")
				body.Inputs = []*ir.Value{a}
				r := body.AddNode("relu", "ReLU", []*ir.Value{a}, "r")
				neg := body.AddNode("neg", "Neg", []*ir.Value{r.Outputs[0]}, "n")
				body.Outputs = []*ir.Value{neg.Outputs[0]}
				kn := g.AddNode("fused", ir.OpGraphKernel, []*ir.Value{g.Outputs[0]}, "k")
				kn.Outputs[0].DType, kn.Outputs[0].Shape = ir.Float32, []int64{2}
				kn.Attrs = ir.Attrs{"kernel_name": ir.StringAttr("Fused_ReLU_Neg_kernel"), "process": ir.StringAttr("cpu")}
				kn.Body = body
				g.Outputs = kn.Outputs
			}
		} else {
			g = ir.NewGraph(fmt.Sprintf("body_%d", k))
			if k == 0 {
				g.Name = "main"
			}
			c, x := cond("c"), vec("x")
			g.Inputs = []*ir.Value{c, x}
			n := g.AddNode(fmt.Sprintf("if_%d", k), "If", []*ir.Value{c, c, x}, "y")
			n.Outputs[0].DType, n.Outputs[0].Shape = ir.Float32, []int64{2}
			n.Attrs = ir.Attrs{"then_branch": ir.GraphAttr(inner), "else_branch": ir.GraphAttr(leaf(fmt.Sprintf("else_%d", k), "ReLU")),
				ir.CapturedInputs: ir.IntAttr(2)}
			g.Outputs = n.Outputs
		}
		inner = g
	}
	return inner
}

// ifDepth is the number of If bodies nested below g along then_branch, and
// whether the deepest holds a graph kernel with its body.
func ifDepth(g *ir.Graph) (int, bool) {
	for d := 0; ; d++ {
		var next *ir.Graph
		kernel := false
		for _, n := range g.Nodes {
			if n.Op == "If" {
				next = n.Attrs.Graph("then_branch")
			}
			kernel = kernel || n.Op == ir.OpGraphKernel && n.Body != nil
		}
		if next == nil {
			return d, kernel
		}
		g = next
	}
}

// checkDepthError: err is the short depth error naming where.
func checkDepthError(t *testing.T, err error, prefix, where string) {
	t.Helper()
	if err == nil {
		t.Errorf("graphs nested too deep were accepted (%s)", where)
		return
	}
	var de *ir.DepthError
	want := prefix + "graphs nested more than 64 deep (" + where + ")"
	if msg := err.Error(); !errors.As(err, &de) || msg != want {
		t.Errorf("err = %.300q (%d bytes), want %q", msg, len(msg), want)
	}
}

// TestWriteDepthLimit: the writer takes If bodies nested exactly
// ir.MaxGraphDepth deep, with a graph kernel's body one level below the
// deepest (what fusion makes of a model at the ONNX reader's limit), and
// the reader reads the file back; one level more is refused with one short
// error, not a prefix per level (once 2.5 KB).
func TestWriteDepthLimit(t *testing.T) {
	for _, ms := range []bool{false, true} {
		opts := WriteOptions{MindSporePrimitives: ms}
		g := ifChain(ir.MaxGraphDepth, true)
		if err := ir.InferShapes(g); err != nil {
			t.Fatalf("%.500s", err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, g, opts); err != nil {
			t.Fatalf("primitives %v: Write at the limit: %.500s", ms, err)
		}
		back, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("primitives %v: reading back: %.500s", ms, err)
		}
		if d, kernel := ifDepth(back); d != ir.MaxGraphDepth || !kernel {
			t.Errorf("primitives %v: read back %d nested bodies (kernel %v), want %d and the kernel", ms, d, kernel, ir.MaxGraphDepth)
		}

		// The first body too deep, in node and attribute order: the
		// deepest If's else_branch.
		err = Write(&bytes.Buffer{}, ifChain(ir.MaxGraphDepth+1, false), opts)
		checkDepthError(t, err, "mindir: ", "node if_64 attribute else_branch")
		err = Write(&bytes.Buffer{}, ifChain(3000, true), opts)
		checkDepthError(t, err, "mindir: ", "node if_64 attribute else_branch")
	}
}

// msIfChain is a MindIR model in MindSpore's form whose If bodies nest
// depth deep: function fn_k switches on c between fn_<k+1> and a leaf and
// calls the choice with (c, x); the deepest is a ReLU.
func msIfChain(depth int) []byte {
	vec := func(name string) *pb.ValueInfoProto { return tensorInfo(name, pb.TensorProto_FLOAT, 2) }
	cond := func(name string) *pb.ValueInfoProto {
		return &pb.ValueInfoProto{Name: s(name), Tensor: []*pb.TensorProto{{DataType: proto.Int32(int32(pb.TensorProto_BOOL))}}}
	}
	fnName := func(k int) string {
		if k == 0 {
			return "g"
		}
		return fmt.Sprintf("fn_%d", k)
	}
	relu := func(name string) *pb.GraphProto {
		return &pb.GraphProto{
			Name:   s(name),
			Input:  []*pb.ValueInfoProto{cond(name + ":c"), vec(name + ":x")},
			Node:   []*pb.NodeProto{node(name+":r", "REF::ReLU:2", name+":x")},
			Output: []*pb.ValueInfoProto{vec(name + ":r")},
		}
	}
	m := &pb.ModelProto{
		IrVersion: s("0.1.1"), ProducerName: s("MindSpore"), ModelVersion: s("2.5.0"),
		LittleEndian: proto.Bool(true), MindIrVersion: proto.Int64(1),
		Primitives: []*pb.PrimitiveProto{prim("Switch:1", "Switch"), prim("ReLU:2", "ReLU")},
	}
	m.Functions = append(m.Functions, relu("leaf"))
	for k := range depth + 1 {
		f := fnName(k)
		if k == depth {
			m.Functions = append(m.Functions, relu(f))
			continue
		}
		gp := &pb.GraphProto{
			Name:  s(f),
			Input: []*pb.ValueInfoProto{cond(f + ":c"), vec(f + ":x")},
			Node: []*pb.NodeProto{
				{Name: s(f + ":sw"), Output: []string{f + ":sw"}, OpType: s("REF::Switch:1"), Input: []string{f + ":c", fnName(k + 1), "leaf"}},
				node(f+":out", "REF::"+f+":sw", f+":c", f+":x"),
			},
			Output: []*pb.ValueInfoProto{vec(f + ":out")},
		}
		if k == 0 {
			m.Graph = gp
		} else {
			m.Functions = append(m.Functions, gp)
		}
	}
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// TestReadDepthLimit: the reader takes If bodies nested ir.MaxGraphDepth
// deep and refuses more with one short error: one level more is found once
// the graph is read (a graph kernel's body may sit there, not an If's), two
// or more stop the reading at the function two levels past the limit.
func TestReadDepthLimit(t *testing.T) {
	g, err := Parse(msIfChain(ir.MaxGraphDepth))
	if err != nil {
		t.Fatalf("%.500s", err)
	}
	if d, _ := ifDepth(g); d != ir.MaxGraphDepth {
		t.Fatalf("read %d nested bodies, want %d", d, ir.MaxGraphDepth)
	}
	if err := ir.InferShapes(g); err != nil {
		t.Fatalf("%.500s", err)
	}
	_, err = Parse(msIfChain(ir.MaxGraphDepth + 1))
	checkDepthError(t, err, "mindir: ", "node fn_64:out attribute else_branch")
	for _, depth := range []int{ir.MaxGraphDepth + 2, 1000} {
		_, err := Parse(msIfChain(depth))
		checkDepthError(t, err, "mindir: ", "function fn_66")
	}
}
