package mindir

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/testkit"
)

func histogram(g *ir.Graph) map[string]int {
	m := map[string]int{}
	for _, n := range g.Nodes {
		m[n.Op]++
	}
	return m
}

func TestMnist(t *testing.T) {
	dir := sharedDir(t, "corpus/mindir")
	path := filepath.Join(dir, "mnist.mindir")
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g := m.Graph
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"Conv2D": 2, "ReLU": 4, "MaxPool": 2, "Flatten": 1, "MatMul": 3, "BiasAdd": 3}
	if got := histogram(g); !mapsEqual(got, want) {
		t.Errorf("ops %v, want %v (Load/UpdateState/Depend/MakeTuple removed)", got, want)
	}
	if g.Meta["producer_name"] != "MindSpore" || g.Meta["model_version"] != "2.2.10.20231214" || g.Meta["ir_version"] != "0.1.1" {
		t.Errorf("meta %v", g.Meta)
	}

	// Compare with the dump: parameters, input, total raw bytes.
	dump, err := os.ReadFile(filepath.Join(dir, "mnist.dump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	paramRe := regexp.MustCompile(`(?m)^\s+param (\S+):FLOAT\[([0-9,]+)\]$`)
	consts := map[string]*ir.Value{}
	for _, c := range g.Consts {
		consts[c.Name] = c
	}
	params := paramRe.FindAllStringSubmatch(string(dump), -1)
	if len(params) != 8 || len(g.Consts) != 8 {
		t.Fatalf("dump lists %d params, graph has %d consts", len(params), len(g.Consts))
	}
	total := 0
	for _, p := range params {
		c, ok := consts[p[1]]
		if !ok {
			t.Errorf("parameter %s missing", p[1])
			continue
		}
		var shape []int64
		n := int64(1)
		for _, d := range strings.Split(p[2], ",") {
			v, _ := strconv.ParseInt(d, 10, 64)
			shape = append(shape, v)
			n *= v
		}
		if c.DType != ir.Float32 || !equalInts(c.Shape, shape) || int64(len(c.Const.Data)) != n*4 {
			t.Errorf("%s: %v with %d bytes, want float32%v", p[1], c, len(c.Const.Data), shape)
		}
		// weights alias the mapping instead of being copied
		start := uintptr(unsafe.Pointer(&m.data[0]))
		if p := uintptr(unsafe.Pointer(&c.Const.Data[0])); p < start || p >= start+uintptr(len(m.data)) {
			t.Errorf("%s: data is a copy, not a view of the file", c.Name)
		}
		total += len(c.Const.Data)
	}
	if !strings.Contains(string(dump), "("+strconv.Itoa(total)+" bytes raw)") {
		t.Errorf("raw bytes %d do not match the dump", total)
	}
	in := g.Inputs
	if len(in) != 1 || in[0].Name != "206_135___main___mnist_construct_22:x" || !equalInts(in[0].Shape, []int64{1, 1, 32, 32}) {
		t.Errorf("inputs %v", in)
	}
	if len(g.Outputs) != 1 || g.Outputs[0].Name != "206_135___main___mnist_construct_22:x:36" ||
		!equalInts(g.Outputs[0].Shape, []int64{1, 10}) || g.Outputs[0].Producer.Op != "BiasAdd" {
		t.Errorf("outputs %v", g.Outputs)
	}
	for _, n := range g.Nodes {
		if len(n.Provenance) != 2 || n.Provenance[0] == "" || !strings.HasPrefix(n.Provenance[1], "Default/") {
			t.Errorf("%s: provenance %q", n, n.Provenance)
		}
		switch n.Op {
		case "Conv2D":
			if !equalInts(n.Attrs.Ints("pads", nil), []int64{0, 0, 0, 0}) || !equalInts(n.Attrs.Ints("strides", nil), []int64{1, 1}) ||
				!equalInts(n.Attrs.Ints("kernel_shape", nil), []int64{5, 5}) || n.Attrs.Int("group", 0) != 1 {
				t.Errorf("%s attrs %v", n, n.Attrs)
			}
		case "MaxPool":
			if !equalInts(n.Attrs.Ints("kernel_shape", nil), []int64{2, 2}) || !equalInts(n.Attrs.Ints("strides", nil), []int64{2, 2}) {
				t.Errorf("%s attrs %v", n, n.Attrs)
			}
		case "MatMul":
			if n.Attrs.Int("transpose_b", 0) != 1 || n.Attrs.Int("transpose_a", 0) != 0 {
				t.Errorf("%s attrs %v", n, n.Attrs)
			}
		case "BiasAdd":
			if n.Attrs.String("format", "") != "NCHW" {
				t.Errorf("%s attrs %v", n, n.Attrs)
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// corpusExpect gives, per file of mindspore-tests/index.tsv, the IR ops the
// reader must produce, or the error it must give.
var corpusExpect = map[string]struct {
	ops         map[string]int
	unsupported []string // primitives named in the UnsupportedError
	encrypted   bool
	// decomposed: the reader spells some primitives out in several IR ops
	// (MindSpore's LSTM as ONNX LSTMs plus its weight reordering), and each
	// write renames some lifted constants (those of the StridedSlice and
	// Squeeze lifts), so the round trip compares the ops only.
	decomposed bool
}{
	"relu.mindir":                             {ops: map[string]int{"ReLU": 1}},
	"add_no_encrpty.mindir":                   {ops: map[string]int{"Add": 1}},
	"add_encrpty_key_0123456789ABCDEF.mindir": {encrypted: true},
	"ori_net.mindir":                          {ops: map[string]int{"Conv2D": 2, "ReLU": 4, "MaxPool": 2, "Reshape": 1, "MatMul": 3}},
	// MindSpore 1.6 LSTM net: MindSpore's LSTM lifts into ONNX's (lower_recurrent.go).
	"old_version_mindir_2.mindir": {ops: map[string]int{"Add": 1, "BiasAdd": 1, "Concat": 2, "Gather": 3, "LSTM": 1, "MatMul": 1,
		"Reshape": 12, "Slice": 6, "Squeeze": 3, "Tanh": 1, "Transpose": 3, "Unsqueeze": 2}, decomposed: true},
	// CeLU with alpha computed at run time (ScalarAdd) is decomposed.
	"test_ops_celu_cast_float_fp32_cnode_to_fp64.mindir": {ops: map[string]int{
		"Add": 2, "Cast": 1, "Maximum": 1, "RealDiv": 1, "Exp": 1, "Sub": 1, "Mul": 1, "Minimum": 1}},
	// MindSpore's NonZero ([count, rank]) is read as ONNX's NonZero then a Transpose.
	"test_ops_celu_cast_float_fp32_cnode_to_fp64_v2.mindir": {ops: map[string]int{
		"Add": 1, "Cast": 1, "Exp": 1, "Gather": 1, "Maximum": 1, "Minimum": 1, "Mul": 2, "NonZero": 1, "RealDiv": 1,
		"Shape": 1, "Sub": 1, "Transpose": 1}},
	"test_ops_celu_cast_float_fp32_parameter_node_to_fp64.mindir": {ops: map[string]int{
		"Add": 1, "Cast": 1, "Maximum": 1, "RealDiv": 1, "Exp": 1, "Sub": 1, "Mul": 1, "Minimum": 1}},
	"test_ops_celu_cast_float_fp32_value_node_to_fp64.mindir":           {ops: map[string]int{"CeLU": 1}},
	"test_ops_log_cast_primitive_attribute_fp32_to_fp64.mindir":         {ops: map[string]int{"Log": 1}},
	"test_ops_upsample_cast_tuple_float_fp32_value_node_to_fp64.mindir": {ops: map[string]int{"Resize": 1}},
}

func TestMindSporeCorpus(t *testing.T) {
	dir := sharedDir(t, "corpus/mindir/mindspore-tests")
	f, err := os.Open(filepath.Join(dir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	seen := 0
	for sc.Scan() {
		name, _, _ := strings.Cut(sc.Text(), "\t")
		exp, ok := corpusExpect[name]
		if !ok {
			t.Errorf("%s: listed in index.tsv but has no expectation here", name)
			continue
		}
		seen++
		t.Run(name, func(t *testing.T) {
			m, err := Open(filepath.Join(dir, name))
			switch {
			case exp.encrypted:
				if err == nil || !errors.Is(err, ErrEncrypted) || !strings.Contains(err.Error(), name) {
					t.Fatalf("want a clear encryption error naming the file, got %v", err)
				}
				return
			case exp.unsupported != nil:
				var ue *UnsupportedError
				if !errors.As(err, &ue) {
					t.Fatalf("want UnsupportedError, got %v", err)
				}
				var ops []string
				for _, it := range ue.Items {
					ops = append(ops, it.Op)
					if it.Node == "" || !strings.Contains(err.Error(), it.Node+": "+it.Op) {
						t.Errorf("item %+v not reported as node: prim in %q", it, err)
					}
				}
				if strings.Join(ops, ",") != strings.Join(exp.unsupported, ",") {
					t.Errorf("unsupported %v, want %v", ops, exp.unsupported)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := m.Graph.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := histogram(m.Graph); !mapsEqual(got, exp.ops) {
				t.Errorf("ops %v, want %v", got, exp.ops)
			}
			// Every MindSpore file converts to something our writer and reader agree on.
			data := writeBytes(t, m.Graph, WriteOptions{})
			g2, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if exp.decomposed {
				if got := histogram(g2); !mapsEqual(got, exp.ops) {
					t.Errorf("round trip: ops %v, want %v", got, exp.ops)
				}
				return
			}
			if d := testkit.GraphDiff(m.Graph, g2); d != "" {
				t.Errorf("round trip: %s", d)
			}
		})
	}
	if seen != len(corpusExpect) {
		t.Errorf("index.tsv lists %d of the %d expected files", seen, len(corpusExpect))
	}
}

func TestCorpusDetails(t *testing.T) {
	dir := sharedDir(t, "corpus/mindir/mindspore-tests")
	open := func(name string) *ir.Graph {
		m, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m.Graph
	}
	g := open("test_ops_celu_cast_float_fp32_value_node_to_fp64.mindir")
	if a := g.Nodes[0].Attrs.Float("alpha", 0); math.Abs(a-0.99) > 1e-6 {
		t.Errorf("CeLU alpha %v, want 0.99", a)
	}
	if g.Inputs[0].DType != ir.Float64 {
		t.Errorf("input dtype %s, want float64 (MindIR DOUBLE)", g.Inputs[0].DType)
	}
	g = open("test_ops_upsample_cast_tuple_float_fp32_value_node_to_fp64.mindir")
	n := g.Nodes[0]
	sc, err := n.Inputs[2].Const.Float64s()
	if err != nil || n.Inputs[1] != nil || len(sc) != 5 || sc[2] != 0.5 || sc[3] != 1.5 || sc[4] != 2.5 ||
		n.Attrs.String("nearest_mode", "") != "floor" || n.Attrs.String("coordinate_transformation_mode", "") != "asymmetric" {
		t.Errorf("Resize %v inputs %v scales %v", n.Attrs, n.Inputs, sc)
	}
	if !equalInts(g.Outputs[0].Shape, []int64{1, 2, 1, 3, 5}) {
		t.Errorf("output %v", g.Outputs[0])
	}
	g = open("test_ops_celu_cast_float_fp32_parameter_node_to_fp64.mindir")
	if len(g.Inputs) != 2 || g.Inputs[1].DType != ir.Float32 || g.Inputs[1].Shape == nil || len(g.Inputs[1].Shape) != 0 {
		t.Errorf("scalar alpha input: %v", g.Inputs)
	}
	g = open("ori_net.mindir")
	for _, n := range g.Nodes {
		if n.Op == "Reshape" {
			if s, _ := n.Inputs[1].Const.Int64s(); !equalInts(s, []int64{1, -1}) || n.Inputs[1].DType != ir.Int64 {
				t.Errorf("Reshape shape %v", n.Inputs[1])
			}
		}
	}
}

func TestRoundTripMnist(t *testing.T) {
	m, err := Open(filepath.Join(sharedDir(t, "corpus/mindir"), "mnist.mindir"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	first := writeBytes(t, m.Graph, WriteOptions{})
	g2, err := Parse(first)
	if err != nil {
		t.Fatal(err)
	}
	if d := testkit.GraphDiff(m.Graph, g2); d != "" {
		t.Fatalf("read -> write -> read changed the graph: %s", d)
	}
	if again := writeBytes(t, g2, WriteOptions{}); !bytes.Equal(first, again) {
		t.Errorf("writing the re-read graph gives different bytes (%d vs %d)", len(first), len(again))
	}
	if again := writeBytes(t, m.Graph, WriteOptions{}); !bytes.Equal(first, again) {
		t.Errorf("two writes of one graph differ")
	}

	// The file is plain MindIR: the generated types decode it.
	var mp pb.ModelProto
	if err := proto.Unmarshal(first, &mp); err != nil {
		t.Fatal(err)
	}
	if mp.GetIrVersion() != "0.1.1" || mp.GetProducerName() != "gkconv" || !mp.GetLittleEndian() || mp.GetMindIrVersion() == 0 {
		t.Errorf("header %v %v %v %v", mp.GetIrVersion(), mp.GetProducerName(), mp.GetLittleEndian(), mp.GetMindIrVersion())
	}
	prims := map[string]*pb.PrimitiveProto{}
	for _, p := range mp.Primitives {
		prims[p.GetName()] = p
	}
	raw := 0
	for _, p := range mp.GetGraph().Parameter {
		raw += len(p.RawData)
	}
	if raw != 186360 || len(mp.GetGraph().Parameter) != 8 {
		t.Errorf("%d parameters with %d raw bytes", len(mp.GetGraph().Parameter), raw)
	}
	for _, n := range mp.GetGraph().Node {
		ref, ok := strings.CutPrefix(n.GetOpType(), "REF::")
		if !ok || prims[ref] == nil {
			t.Errorf("node %s: op_type %q does not reference a primitive", n.GetName(), n.GetOpType())
		}
	}
}

func TestGraphKernelRoundTrip(t *testing.T) {
	g := kernelGraph()
	data := writeBytes(t, g, WriteOptions{})
	g2, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if d := testkit.GraphDiff(g, g2); d != "" {
		t.Fatalf("round trip: %s", d)
	}
	k := g2.Nodes[0]
	if k.Op != "GraphKernel" || k.Body == nil || k.Attrs.Has("type") || k.Attrs.Has("graph_kernel_body") {
		t.Errorf("kernel node %v attrs %v", k, k.Attrs.Keys())
	}
	var mp pb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	if len(mp.Functions) != 1 || mp.Functions[0].GetName() != "Fused_Add_Mul_123_kernel_body" {
		t.Fatalf("functions %v", mp.Functions)
	}
	// converter_lite's layout: Custom(type="GraphKernel", attr=[name, bytes,
	// ...]), the .so as the last input, a uint8 parameter.
	var custom *pb.PrimitiveProto
	var node *pb.NodeProto
	for _, p := range mp.Primitives {
		for _, a := range p.Attribute {
			if p.GetOpType() == "Custom" && a.GetName() == "type" && string(a.S) == "GraphKernel" {
				custom = p
			}
		}
	}
	if custom == nil {
		t.Fatal("no GraphKernel Custom primitive")
	}
	for _, n := range mp.Graph.Node {
		if n.GetOpType() == "REF::"+custom.GetName() {
			node = n
		}
	}
	attrs := map[string]*pb.AttributeProto{}
	for _, a := range custom.Attribute {
		attrs[a.GetName()] = a
	}
	list := map[string][]byte{}
	if l := attrs["attr"]; l == nil || l.GetType() != pb.AttributeProto_TUPLE || len(l.Values)%2 != 0 {
		t.Fatalf("attr list %v", l)
	} else {
		for i := 0; i < len(l.Values); i += 2 {
			var b []byte
			for _, e := range l.Values[i+1].Values {
				if e.GetType() != pb.AttributeProto_UINT8 || len(e.Ints) != 1 {
					t.Fatalf("attr %s: element %v", l.Values[i].Strings[0], e)
				}
				b = append(b, byte(e.Ints[0]))
			}
			list[string(l.Values[i].Strings[0])] = b
		}
	}
	if string(attrs["type"].GetS()) != "GraphKernel" || string(list["graph_kernel_body"]) != "Fused_Add_Mul_123_kernel_body" ||
		string(list["kernel_name"]) != "Fused_Add_Mul_123_kernel" || string(list["GridDimX"]) != "-3" || list["kernel_so"] != nil {
		t.Errorf("Custom attrs %v", custom.Attribute)
	}
	last := node.Input[len(node.Input)-1]
	var so *pb.TensorProto
	for _, p := range mp.Graph.Parameter {
		if p.GetName() == last {
			so = p
		}
	}
	if so == nil || last != "Fused_Add_Mul_123_kernel.so" || so.GetDataType() != int32(ir.Uint8) || len(so.Dims) != 1 ||
		!bytes.Equal(so.RawData, g.Nodes[0].Attrs["kernel_so"].B) {
		t.Errorf("kernel binary input %q: %v", last, so.GetDims())
	}
	if !bytes.Equal(data, writeBytes(t, g2, WriteOptions{})) {
		t.Error("re-writing the read graph changes the bytes")
	}
}

func TestDeterministic(t *testing.T) {
	first := writeBytes(t, kernelGraph(), WriteOptions{})
	for i := 0; i < 10; i++ {
		if !bytes.Equal(first, writeBytes(t, kernelGraph(), WriteOptions{})) {
			t.Fatal("writes of equal graphs differ")
		}
	}
	// Two kernels with different bodies and one kernel_name get distinct functions.
	g := kernelGraph()
	k2 := g.AddNode("fused2", "GraphKernel", []*ir.Value{g.Inputs[0], g.Consts[0]}, "k2")
	k2.Attrs["kernel_name"] = ir.StringAttr("Fused_Add_Mul_123_kernel")
	k2.Body = kernelGraph().Nodes[0].Body
	g.Outputs = append(g.Outputs, k2.Outputs[0])
	data := writeBytes(t, g, WriteOptions{})
	g2, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if d := testkit.GraphDiff(g, g2); d != "" {
		t.Fatal(d)
	}
	if !bytes.Equal(data, writeBytes(t, g, WriteOptions{})) {
		t.Fatal("not deterministic with two kernels")
	}
}

func TestFP16(t *testing.T) {
	g := kernelGraph()
	big := ir.NewTensor(ir.Float32, []int64{1000})
	for i := range big.F32() {
		big.F32()[i] = float32(i) / 7
	}
	g.AddConst("big", big)
	full := writeBytes(t, g, WriteOptions{})
	half := writeBytes(t, g, WriteOptions{FP16: true})
	if len(half) > len(full)-1900 {
		t.Errorf("fp16 file %d bytes, fp32 %d", len(half), len(full))
	}
	var mp pb.ModelProto
	if err := proto.Unmarshal(half, &mp); err != nil {
		t.Fatal(err)
	}
	var w *pb.TensorProto
	for _, p := range mp.GetGraph().Parameter {
		if p.GetName() == "w" {
			w = p
		}
	}
	if w == nil || w.GetDataType() != int32(pb.TensorProto_FLOAT16) || len(w.RawData) != 8 || w.GetDocString() != fp16Marker {
		t.Fatalf("w stored as %v", w)
	}
	g2, err := Parse(half)
	if err != nil {
		t.Fatal(err)
	}
	c := g2.Consts[0]
	if c.DType != ir.Float32 {
		t.Fatalf("fp16 constant read back as %s", c.DType)
	}
	for i, v := range g.Consts[0].Const.F32() {
		if want := ir.F16ToF32(ir.F32ToF16(v)); c.Const.F32()[i] != want {
			t.Errorf("w[%d] = %v, want %v", i, c.Const.F32()[i], want)
		}
	}
	if idx := g2.Consts[1]; idx.DType != ir.Int64 {
		t.Errorf("int64 constant changed to %s", idx.DType)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.mindir")
	if err := WriteFile(path, kernelGraph(), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := testkit.GraphDiff(kernelGraph(), m.Graph); d != "" {
		t.Error(d)
	}
	m.Close()

	bad := kernelGraph()
	bad.Nodes[1].Outputs[0].Name = "x" // clashes with the input
	if err := WriteFile(filepath.Join(dir, "bad.mindir"), bad, WriteOptions{}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("want a duplicate-name error, got %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left after a failed write: %v", entries)
	}
}

// msModel builds a MindSpore-style (0.1.1, REF::) model by hand.
type msModel struct {
	mp  *pb.ModelProto
	uid int
}

func newMSModel() *msModel {
	return &msModel{mp: &pb.ModelProto{IrVersion: ptr("0.1.1"), ProducerName: ptr("MindSpore"), ModelVersion: ptr("2.2.0"),
		Graph: &pb.GraphProto{Name: ptr("net")}}}
}

func (b *msModel) input(name string, dt int32, dims ...int64) {
	b.mp.Graph.Input = append(b.mp.Graph.Input, &pb.ValueInfoProto{Name: ptr(name), Tensor: []*pb.TensorProto{{Dims: dims, DataType: ptr(dt)}}})
}

func (b *msModel) constant(name string, a *pb.AttributeProto) {
	a.Name = ptr("value")
	b.mp.Graph.Node = append(b.mp.Graph.Node, &pb.NodeProto{Name: ptr(name), Output: []string{name}, OpType: ptr("Constant"), Attribute: []*pb.AttributeProto{a}})
}

func (b *msModel) node(out, prim string, ins []string, attrs ...*pb.AttributeProto) {
	b.uid++
	ref := prim + ":" + strconv.Itoa(b.uid)
	b.mp.Primitives = append(b.mp.Primitives, &pb.PrimitiveProto{Name: ptr(ref), OpType: ptr(prim), Attribute: attrs})
	b.mp.Graph.Node = append(b.mp.Graph.Node, &pb.NodeProto{Name: ptr(out), Output: []string{out}, Input: ins, OpType: ptr("REF::" + ref), Domain: ptr("Default/" + prim)})
}

func intsA(name string, v ...int64) *pb.AttributeProto {
	a := &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_TUPLE.Enum()}
	for _, x := range v {
		a.Values = append(a.Values, &pb.AttributeProto{Ints: []int64{x}, Type: pb.AttributeProto_INT64.Enum()})
	}
	return a
}

func strA(name, s string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: ptr(name), S: []byte(s), Type: pb.AttributeProto_STRING.Enum()}
}

func intA(name string, i int64, typ pb.AttributeProto_AttributeType) *pb.AttributeProto {
	return &pb.AttributeProto{Name: ptr(name), I: ptr(i), Type: typ.Enum()}
}

func (b *msModel) output(name string) {
	b.mp.Graph.Output = append(b.mp.Graph.Output, &pb.ValueInfoProto{Name: ptr(name)})
}

func (b *msModel) bytes(t testing.TB) []byte {
	data, err := proto.Marshal(b.mp)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// synthetic is a MindSpore-style model that exercises the attribute mappings.
func synthetic(t testing.TB) []byte {
	b := newMSModel()
	b.input("x", 1, 1, 3, 8, 8)
	w := make([]byte, 4*4*3*3*3)
	b.mp.Graph.Parameter = append(b.mp.Graph.Parameter, &pb.TensorProto{Name: ptr("w"), Dims: []int64{4, 3, 3, 3}, DataType: ptr(int32(1)), RawData: w})
	b.constant("u", &pb.AttributeProto{Type: pb.AttributeProto_UMONAD.Enum()})
	b.node("wl", "Load", []string{"w", "u"})
	b.node("conv", "Conv2D", []string{"x", "wl"}, intsA("kernel_size", 3, 3), strA("pad_mode", "pad"),
		intsA("pad_list", 1, 2, 3, 4), intsA("stride", 1, 1, 2, 2), intsA("dilation", 1, 1, 1, 1),
		intA("group", 1, pb.AttributeProto_INT64), strA("format", "NCHW"))
	b.node("pool", "MaxPool", []string{"conv"}, intsA("kernel_size", 1, 1, 3, 3), intsA("strides", 1, 1, 2, 2),
		intA("pad_mode", 1, pb.AttributeProto_INT64), intA("format", 0, pb.AttributeProto_INT64))
	b.node("sm", "Softmax", []string{"pool"}, intsA("axis", 1))
	b.constant("axes", intsA("", 2, 3))
	b.node("sum", "ReduceSum", []string{"sm", "axes"}, intA("keep_dims", 1, pb.AttributeProto_BOOL))
	b.constant("perm", intsA("", 0, 2, 3, 1))
	b.node("tr", "Transpose", []string{"sum", "perm"})
	b.constant("shape", intsA("", 1, -1))
	b.node("rs", "Reshape", []string{"tr", "shape"})
	b.node("tup", "MakeTuple", []string{"rs", "rs"})
	b.node("cat", "Concat", []string{"tup"}, intA("axis", 1, pb.AttributeProto_INT64))
	b.constant("f16", &pb.AttributeProto{Type: pb.AttributeProto_TENSORS.Enum(), Tensors: []*pb.TensorProto{{DataType: ptr(int32(10))}}})
	b.node("cast", "Cast", []string{"cat", "f16"})
	b.constant("i1", intA("", 1, pb.AttributeProto_INT64))
	b.node("item", "TupleGetItem", []string{"tup", "i1"})
	b.node("us", "UpdateState", []string{"u", "tup"})
	b.node("dep", "Depend", []string{"cast", "us"})
	b.output("dep")
	b.output("item")
	return b.bytes(t)
}

func TestMindSporeMappings(t *testing.T) {
	g, err := Parse(synthetic(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	byOp := map[string]*ir.Node{}
	for _, n := range g.Nodes {
		byOp[n.Op] = n
	}
	want := map[string]int{"Conv2D": 1, "MaxPool": 1, "Softmax": 1, "ReduceSum": 1, "Transpose": 1, "Reshape": 1, "Concat": 1, "Cast": 1}
	if got := histogram(g); !mapsEqual(got, want) {
		t.Fatalf("ops %v, want %v", got, want)
	}
	conv := byOp["Conv2D"].Attrs
	if !equalInts(conv.Ints("pads", nil), []int64{1, 3, 2, 4}) || !equalInts(conv.Ints("strides", nil), []int64{2, 2}) ||
		!equalInts(conv.Ints("dilations", nil), []int64{1, 1}) || byOp["Conv2D"].Inputs[1].Name != "w" {
		t.Errorf("Conv2D %v inputs %v", conv, byOp["Conv2D"].Inputs)
	}
	pool := byOp["MaxPool"].Attrs
	if pool.String("auto_pad", "") != "SAME_UPPER" || !equalInts(pool.Ints("kernel_shape", nil), []int64{3, 3}) {
		t.Errorf("MaxPool %v", pool)
	}
	if byOp["Softmax"].Attrs.Int("axis", 0) != 1 {
		t.Errorf("Softmax %v", byOp["Softmax"].Attrs)
	}
	rsum := byOp["ReduceSum"]
	if axes, _ := rsum.Inputs[1].Const.Int64s(); !equalInts(axes, []int64{2, 3}) || rsum.Attrs.Int("keepdims", 0) != 1 {
		t.Errorf("ReduceSum %v %v", rsum.Inputs, rsum.Attrs)
	}
	if !equalInts(byOp["Transpose"].Attrs.Ints("perm", nil), []int64{0, 2, 3, 1}) || len(byOp["Transpose"].Inputs) != 1 {
		t.Errorf("Transpose %v", byOp["Transpose"])
	}
	if s := byOp["Reshape"].Inputs[1]; s.DType != ir.Int64 || !equalInts(s.Shape, []int64{2}) {
		t.Errorf("Reshape shape %v", s)
	}
	if cat := byOp["Concat"]; len(cat.Inputs) != 2 || cat.Attrs.Int("axis", 0) != 1 {
		t.Errorf("Concat %v", cat.Inputs)
	}
	if byOp["Cast"].Attrs.Int("to", 0) != int64(ir.Float16) {
		t.Errorf("Cast %v", byOp["Cast"].Attrs)
	}
	if len(g.Outputs) != 2 || g.Outputs[0] != byOp["Cast"].Outputs[0] || g.Outputs[0].Name != "dep" || g.Outputs[1] != byOp["Reshape"].Outputs[0] {
		t.Errorf("outputs %v", g.Outputs)
	}
	for _, c := range g.Consts {
		if c.Name == "perm" || c.Name == "axes" && c.Const.DType != ir.Int64 {
			t.Errorf("constant %v should be an attribute or an int64 input", c)
		}
	}
}

func TestUnsupportedListsAll(t *testing.T) {
	b := newMSModel()
	b.input("x", 1, 2)
	b.node("a", "FooOp", []string{"x"})
	b.node("b", "ReLU", []string{"a"}) // downstream of an unsupported node: not reported again
	b.node("c", "BarOp", []string{"x"})
	b.node("d", "Conv2D", []string{"x", "x"}, strA("format", "NHWC"))
	b.output("b")
	_, err := Parse(b.bytes(t))
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Items) != 3 {
		t.Fatalf("want 3 unsupported items, got %v", err)
	}
	for _, s := range []string{"a: FooOp", "c: BarOp", "d: Conv2D (format NHWC)"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q missing from %q", s, err)
		}
	}
}

func TestParseBadInput(t *testing.T) {
	good := writeBytes(t, kernelGraph(), WriteOptions{})
	cases := map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("this is not a protobuf at all \xff\xff\xff"),
		"truncated": good[:len(good)/2],
		"encrypted": {0xd8, 0x5e, 0x3a, 0x7f, 1, 2, 3},
	}
	for name, data := range cases {
		if _, err := Parse(data); err == nil {
			t.Errorf("%s: no error", name)
		} else if name == "encrypted" && !errors.Is(err, ErrEncrypted) {
			t.Errorf("encrypted: %v", err)
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.mindir")); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

func FuzzParse(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new input, which is slow on big ones.
	f.Add(writeBytes(f, kernelGraphN(16), WriteOptions{}))
	f.Add(writeBytes(f, kernelGraphN(0), WriteOptions{FP16: true}))
	f.Add(synthetic(f))
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x05, '0', '.', '1', '.', '0'})
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatal(err)
			}
			return
		}
		// A graph we accept must be one we can write.
		var buf bytes.Buffer
		_ = Write(&buf, g, WriteOptions{})
	})
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOldFormat builds a 0.1.0 file: bare op_type, attributes in the node
// with ref_attr_name, tuple constants as "scalar:Tuple[...]".
func TestOldFormat(t *testing.T) {
	mp := &pb.ModelProto{IrVersion: ptr("0.1.0"), ProducerName: ptr("MindSpore"), Graph: &pb.GraphProto{Name: ptr("old")}}
	g := mp.Graph
	g.Input = []*pb.ValueInfoProto{{Name: ptr("x"), Tensor: []*pb.TensorProto{{Dims: []int64{1, 4, 6}, DataType: ptr(int32(1))}}}}
	tupleC := func(name string, v ...int64) {
		g.Node = append(g.Node, &pb.NodeProto{Name: ptr(name), Output: []string{name}, OpType: ptr("Constant"), Attribute: []*pb.AttributeProto{{
			Name: ptr("value"), Ints: v, RefAttrName: ptr("scalar:Tuple[value1,value2,value3,],"), Type: pb.AttributeProto_INT64.Enum()}}})
	}
	scalarAttr := func(name string, v int64) *pb.AttributeProto {
		return &pb.AttributeProto{Name: ptr(name), I: ptr(v), RefAttrName: ptr("scalar:value0"), Type: pb.AttributeProto_INT64.Enum()}
	}
	shapeAttr := &pb.AttributeProto{Tensors: []*pb.TensorProto{{DataType: ptr(int32(1)), Name: ptr("shape1")}}, RefAttrName: ptr("shape:shape1,")}
	tupleC("begin", 0, 1, 0)
	tupleC("end", 1, 3, 6)
	tupleC("strides", 1, 1, 2)
	g.Node = append(g.Node, &pb.NodeProto{Name: ptr("ss"), Output: []string{"ss"}, OpType: ptr("StridedSlice"),
		Input: []string{"x", "begin", "end", "strides"},
		Attribute: []*pb.AttributeProto{shapeAttr, scalarAttr("begin_mask", 4), scalarAttr("end_mask", 4),
			scalarAttr("ellipsis_mask", 0), scalarAttr("new_axis_mask", 0), scalarAttr("shrink_axis_mask", 1)}})
	g.Node = append(g.Node, &pb.NodeProto{Name: ptr("zero"), Output: []string{"zero"}, OpType: ptr("Constant"),
		Attribute: []*pb.AttributeProto{scalarAttr("value", 0)}})
	g.Node = append(g.Node, &pb.NodeProto{Name: ptr("ed"), Output: []string{"ed"}, OpType: ptr("ExpandDims"),
		Input: []string{"ss", "zero"}, Attribute: []*pb.AttributeProto{shapeAttr}})
	g.Output = []*pb.ValueInfoProto{{Name: ptr("ed")}}
	data, err := proto.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	ig, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := histogram(ig); !mapsEqual(got, map[string]int{"Slice": 1, "Squeeze": 1, "Unsqueeze": 1}) {
		t.Fatalf("ops %v", got)
	}
	sl := ig.Nodes[0]
	ints := func(i int) []int64 { v, _ := sl.Inputs[i].Const.Int64s(); return v }
	if !equalInts(ints(1), []int64{0, 1, 0}) || !equalInts(ints(2), []int64{1, 3, math.MaxInt64}) ||
		!equalInts(ints(3), []int64{0, 1, 2}) || !equalInts(ints(4), []int64{1, 1, 2}) {
		t.Errorf("Slice starts %v ends %v axes %v steps %v", ints(1), ints(2), ints(3), ints(4))
	}
	if ax, _ := ig.Nodes[1].Inputs[1].Const.Int64s(); !equalInts(ax, []int64{0}) {
		t.Errorf("Squeeze axes %v", ax)
	}
	if ax, _ := ig.Nodes[2].Inputs[1].Const.Int64s(); !equalInts(ax, []int64{0}) || ig.Outputs[0].Name != "ed" {
		t.Errorf("Unsqueeze axes %v, outputs %v", ax, ig.Outputs)
	}
}
