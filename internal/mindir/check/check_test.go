package check

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/mindir"
	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/repotest"
)

// corpusMindIR lists MindSpore-written .mindir files of ../shared, skipping
// the test when the corpus is absent.
func corpusMindIR(t *testing.T) (files []string, encrypted string) {
	t.Helper()
	root := repotest.SharedDir(t, "corpus/mindir")
	all, _ := filepath.Glob(filepath.Join(root, "*.mindir"))
	more, _ := filepath.Glob(filepath.Join(root, "mindspore-tests", "*.mindir"))
	for _, f := range append(all, more...) {
		if strings.Contains(filepath.Base(f), "encrpty_key") {
			encrypted = f
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Skipf("no .mindir files under %s", root)
	}
	return files, encrypted
}

// withSchema replaces the checker's schema lookup for one test.
func withSchema(t *testing.T, prims ...mindir.PrimSchema) {
	t.Helper()
	m := map[string]*mindir.PrimSchema{}
	for i := range prims {
		m[prims[i].Name] = &prims[i]
	}
	old := checkLookup
	checkLookup = func(name string) (*mindir.PrimSchema, bool) {
		p, ok := m[name]
		return p, ok
	}
	t.Cleanup(func() { checkLookup = old })
}

// TestCheckCorpus: every MindSpore-written file passes with zero violations,
// with the generated schema table (whatever it holds at the time).
func TestCheckCorpus(t *testing.T) {
	files, _ := corpusMindIR(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			rep, err := File(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range rep.Violations {
				t.Error(v)
			}
			if rep.Nodes == 0 || rep.Graphs == 0 {
				t.Errorf("nothing checked: %s", rep.Summary())
			}
			t.Log(rep.Summary())
		})
	}
}

// TestCheckCorpusWithSchema: the schema rules accept MindSpore's own files for
// rows written the way the generated table describes these primitives.
func TestCheckCorpusWithSchema(t *testing.T) {
	files, _ := corpusMindIR(t)
	withSchema(t,
		// op_def yaml: celu (alpha prim_init, default 1.0)
		mindir.PrimSchema{Name: "CeLU", Outputs: 1, Args: []mindir.PrimArg{
			{Name: "x", Form: mindir.FormInput, Type: "tensor"},
			{Name: "alpha", Form: mindir.FormAttr, Type: "float", MindIR: pb.AttributeProto_FLOAT, Default: "1.0"}}},
		mindir.PrimSchema{Name: "UpsampleNearest3D", Outputs: 1, Args: []mindir.PrimArg{
			{Name: "x", Form: mindir.FormInput, Type: "tensor"},
			{Name: "output_size", Form: mindir.FormInput, Type: "tuple[int]", Default: "None"},
			{Name: "scales", Form: mindir.FormInput, Type: "tuple[float]", Default: "None"}}},
		// ops/infer Conv2D: enum pad_mode/format written as STRING by MindSpore
		mindir.PrimSchema{Name: "Conv2D", Outputs: 1, Args: []mindir.PrimArg{
			{Name: "x", Form: mindir.FormInput, Type: "tensor"},
			{Name: "w", Form: mindir.FormInput, Type: "tensor"},
			{Name: "out_channel", Form: mindir.FormAttr, Type: "int", MindIR: pb.AttributeProto_INT64},
			{Name: "kernel_size", Form: mindir.FormAttr, Type: "list[int]", MindIR: pb.AttributeProto_LIST, Elem: pb.AttributeProto_INT64},
			{Name: "pad_mode", Form: mindir.FormAttr, Type: "enum:PadMode", MindIR: pb.AttributeProto_INT64, Default: "VALID"},
			{Name: "format", Form: mindir.FormAttr, Type: "enum:Format", MindIR: pb.AttributeProto_INT64, Default: "NCHW"},
			{Name: "group", Form: mindir.FormAttr, Type: "int", MindIR: pb.AttributeProto_INT64, Default: "1"}}},
		mindir.PrimSchema{Name: "MatMul", Outputs: 1, Args: []mindir.PrimArg{
			{Name: "input", Form: mindir.FormInput, Type: "tensor"},
			{Name: "mat2", Form: mindir.FormInput, Type: "tensor"},
			{Name: "transpose_a", Form: mindir.FormAttr, Type: "bool", MindIR: pb.AttributeProto_BOOL, Default: "False"},
			{Name: "transpose_b", Form: mindir.FormAttr, Type: "bool", MindIR: pb.AttributeProto_BOOL, Default: "False"}}},
		mindir.PrimSchema{Name: "Reshape", Outputs: 1, Args: []mindir.PrimArg{
			{Name: "input", Form: mindir.FormInput, Type: "tensor"},
			{Name: "shape", Form: mindir.FormInput, Type: "tuple[int]"}}},
		mindir.PrimSchema{Name: "Load", Outputs: 1, Args: []mindir.PrimArg{{Name: "variable", Form: mindir.FormInput, Type: "tensor"}}},
		mindir.PrimSchema{Name: "LSTM", Outputs: 5, Args: []mindir.PrimArg{
			{Name: "x", Form: mindir.FormInput, Type: "tensor"}, {Name: "h", Form: mindir.FormInput, Type: "tensor"},
			{Name: "c", Form: mindir.FormInput, Type: "tensor"}, {Name: "w", Form: mindir.FormInput, Type: "tensor"},
			{Name: "hidden_size", Form: mindir.FormAttr, Type: "int", MindIR: pb.AttributeProto_INT64},
			{Name: "has_bias", Form: mindir.FormAttr, Type: "bool", MindIR: pb.AttributeProto_BOOL},
			{Name: "dropout", Form: mindir.FormAttr, Type: "float", MindIR: pb.AttributeProto_FLOAT}}},
	)
	for _, f := range files {
		rep, err := File(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range rep.Violations {
			t.Errorf("%s: %s", filepath.Base(f), v)
		}
	}
}

func TestCheckEncrypted(t *testing.T) {
	_, enc := corpusMindIR(t)
	if enc == "" {
		t.Skip("the encrypted corpus file is absent")
	}
	_, err := File(enc)
	if err == nil || !strings.Contains(err.Error(), "encrypted MindIR") || !strings.Contains(err.Error(), "cannot be checked without the key") {
		t.Fatalf("want the encrypted-file error, got %v", err)
	}
}

func TestCheckUnreadable(t *testing.T) {
	dir := t.TempDir()
	good := minimalModel()
	b, err := proto.Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Bytes(b, "good")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("the minimal model is valid: %v", rep.Violations)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"text", []byte("this is not a protobuf at all\n"), "not a MindIR"},
		{"garbage", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "not a MindIR protobuf"},
		{"truncated", b[:len(b)-3], "truncated"},
		{"onnx", []byte{0x08, 0x08, 0x12, 0x07, 'p', 'y', 't', 'o', 'r', 'c', 'h'}, "looks like an ONNX model"},
		{"too deep", deepModel(t, 80), "nested deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".mindir")
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := File(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("want an error naming the file and %q, got %v", tc.want, err)
			}
			if _, err := Bytes(tc.data, tc.name); err == nil {
				t.Fatal("Bytes accepted it")
			}
		})
	}
	t.Run("fifo", func(t *testing.T) {
		p := filepath.Join(dir, "fifo.mindir")
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip(err)
		}
		_, err := File(p) // must not block
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("want a not-a-regular-file error, got %v", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		if _, err := File(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("want a not-a-regular-file error, got %v", err)
		}
	})
	t.Run("absurd size", func(t *testing.T) {
		p := filepath.Join(dir, "huge.mindir")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Truncate(3 << 30) // sparse: no disk used
		f.Close()
		if err != nil {
			t.Skip(err)
		}
		_, err = File(p)
		if err == nil || !strings.Contains(err.Error(), "2 GiB") || !strings.Contains(err.Error(), p) {
			t.Fatalf("want the size error, got %v", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		if _, err := File(filepath.Join(dir, "nope.mindir")); err == nil {
			t.Fatal("no error for a missing file")
		}
	})
}

// deepModel is a valid model whose primitive holds a TUPLE nested depth times.
func deepModel(t *testing.T, depth int) []byte {
	t.Helper()
	m := minimalModel()
	a := &pb.AttributeProto{Type: attrType(pb.AttributeProto_INT64), Ints: []int64{1}}
	for range depth {
		a = &pb.AttributeProto{Type: attrType(pb.AttributeProto_TUPLE), Values: []*pb.AttributeProto{a}}
	}
	a.Name = s("deep")
	m.Primitives[0].Attribute = append(m.Primitives[0].Attribute, a)
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ---------------------------------------------------------------------------
// Hand-built models.

func s(v string) *string { return proto.String(v) }

func attrType(t pb.AttributeProto_AttributeType) *pb.AttributeProto_AttributeType { return t.Enum() }

func tensorInfo(name string, dt pb.TensorProto_DataType, dims ...int64) *pb.ValueInfoProto {
	return &pb.ValueInfoProto{Name: s(name), Tensor: []*pb.TensorProto{{DataType: proto.Int32(int32(dt)), Dims: dims}}}
}

func shapeAttr(dims ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: s("shape"), Type: attrType(pb.AttributeProto_TENSORS),
		Tensors: []*pb.TensorProto{{DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), Dims: dims}}}
}

func prim(name, op string, attrs ...*pb.AttributeProto) *pb.PrimitiveProto {
	return &pb.PrimitiveProto{Name: s(name), OpType: s(op), Attribute: attrs, PrimType: pb.PrimitiveProto_PRIMITIVE.Enum()}
}

func node(out, op string, inputs ...string) *pb.NodeProto {
	return &pb.NodeProto{Name: s(out), Output: []string{out}, OpType: s(op), Input: inputs,
		Attribute: []*pb.AttributeProto{shapeAttr(2, 2)}}
}

// minimalModel is a valid MindSpore-style model: main graph g calls function
// f; f applies ReLU.
func minimalModel() *pb.ModelProto {
	return &pb.ModelProto{
		IrVersion:     s("0.1.1"),
		ProducerName:  s("MindSpore"),
		ModelVersion:  s("2.5.0"),
		LittleEndian:  proto.Bool(true),
		MindIrVersion: proto.Int64(1),
		Primitives:    []*pb.PrimitiveProto{prim("ReLU:1", "ReLU"), prim("Add:2", "Add")},
		Graph: &pb.GraphProto{
			Name:  s("g"),
			Input: []*pb.ValueInfoProto{tensorInfo("g:x", pb.TensorProto_FLOAT, 2, 2)},
			Parameter: []*pb.TensorProto{{Name: s("g:w"), DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), Dims: []int64{2, 2},
				RawData: make([]byte, 16)}},
			Node: []*pb.NodeProto{
				node("g:a:1", "REF::Add:2", "g:x", "g:w"),
				node("g:b:2", "REF::f", "g:a:1"),
			},
			Output: []*pb.ValueInfoProto{tensorInfo("g:b:2", pb.TensorProto_FLOAT, 2, 2)},
		},
		Functions: []*pb.GraphProto{{
			Name:   s("f"),
			Input:  []*pb.ValueInfoProto{tensorInfo("f:y", pb.TensorProto_FLOAT, 2, 2)},
			Node:   []*pb.NodeProto{node("f:r:3", "REF::ReLU:1", "f:y")},
			Output: []*pb.ValueInfoProto{tensorInfo("f:r:3", pb.TensorProto_FLOAT, 2, 2)},
		}},
	}
}

// checkModel marshals m (exercising the real decoder) and checks it.
func checkModel(t *testing.T, m *pb.ModelProto) *Report {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Bytes(b, "test.mindir")
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// expectRule asserts that rep has a violation containing every fragment,
// in Rule/Want/Got/Ref/Node/Attr, and that its Ref cites a source line.
func expectRule(t *testing.T, rep *Report, fragments ...string) {
	t.Helper()
	for _, v := range rep.Violations {
		text := v.String()
		all := true
		for _, f := range fragments {
			if !strings.Contains(text, f) {
				all = false
				break
			}
		}
		if all {
			t.Log(text)
			if !strings.Contains(v.Ref, ".cc:") && !strings.HasPrefix(v.Ref, "schema ") && !strings.HasPrefix(v.Ref, "ops::") {
				t.Errorf("violation without a source citation: %s", text)
			}
			return
		}
	}
	var got []string
	for _, v := range rep.Violations {
		got = append(got, "  "+v.String())
	}
	t.Fatalf("no violation with %q; got %d:\n%s", fragments, len(rep.Violations), strings.Join(got, "\n"))
}

func TestCheckMinimalModelPasses(t *testing.T) {
	rep := checkModel(t, minimalModel())
	if !rep.OK() {
		t.Fatalf("violations in a valid model: %v", rep.Violations)
	}
	if rep.Graphs != 2 || rep.Nodes != 3 || rep.Primitives != 2 || rep.Parameters != 1 {
		t.Errorf("counts: %s", rep.Summary())
	}
}

func TestCheckRules(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m *pb.ModelProto)
		want   []string
	}{
		{"duplicate node name across main graph and a function", func(m *pb.ModelProto) {
			m.Functions[0].Node[0].Output[0] = "g:a:1"
			m.Functions[0].Output[0].Name = s("g:a:1")
		}, []string{"f/g:a:1", "duplicate CNode name", "load_model.cc:2004"}},
		{"use of a second output", func(m *pb.ModelProto) {
			n := m.Graph.Node[0]
			n.Output = append(n.Output, "g:a:1_1")
			n.Attribute = []*pb.AttributeProto{{Name: s("shape"), Type: attrType(pb.AttributeProto_TUPLE),
				Values: []*pb.AttributeProto{shapeAttr(2, 2), shapeAttr(2, 2)}}}
			m.Graph.Node[1].Input[0] = "g:a:1_1"
		}, []string{"g/g:b:2", "input[0]", "output(1..) of a multi-output node", "TupleGetItem", "load_model.cc:1995"}},
		{"multi-output node with a tensor shape", func(m *pb.ModelProto) {
			n := m.Graph.Node[0]
			n.Output = append(n.Output, "g:a:1_1")
		}, []string{"g/g:a:1", "shape", "a TUPLE of 2 TENSORS", "TENSORS", "load_model.cc:1955"}},
		{"UINT8 attribute in s", func(m *pb.ModelProto) {
			m.Primitives[0].Attribute = append(m.Primitives[0].Attribute,
				&pb.AttributeProto{Name: s("flag"), Type: attrType(pb.AttributeProto_UINT8), S: []byte("abc")})
		}, []string{"primitives/ReLU:1", "flag", "UINT8 is read from i", "s (3 bytes)", "load_model.cc:241"}},
		{"TUPLE with data in ints", func(m *pb.ModelProto) {
			m.Primitives[1].Attribute = append(m.Primitives[1].Attribute,
				&pb.AttributeProto{Name: s("axis"), Type: attrType(pb.AttributeProto_TUPLE), Ints: []int64{1, 2}})
		}, []string{"primitives/Add:2", "axis", "loads EMPTY", "2 in ints", "load_model.cc:1628"}},
		{"TUPLE item scalar in i instead of ints", func(m *pb.ModelProto) {
			m.Primitives[1].Attribute = append(m.Primitives[1].Attribute,
				&pb.AttributeProto{Name: s("axis"), Type: attrType(pb.AttributeProto_TUPLE), Values: []*pb.AttributeProto{
					{Type: attrType(pb.AttributeProto_INT64), I: proto.Int64(3)}}})
		}, []string{"axis[0]", "read from ints(0)", "i=3", "load_model.cc:238"}},
		{"INT64 scalar in ints", func(m *pb.ModelProto) {
			m.Primitives[1].Attribute = append(m.Primitives[1].Attribute,
				&pb.AttributeProto{Name: s("axis"), Type: attrType(pb.AttributeProto_INT64), Ints: []int64{1}})
		}, []string{"axis", "INT64 scalar is read from i", "load_model.cc:241"}},
		{"TENSORS attribute with two tensors", func(m *pb.ModelProto) {
			m.Primitives[1].Attribute = append(m.Primitives[1].Attribute,
				&pb.AttributeProto{Name: s("dt"), Type: attrType(pb.AttributeProto_TENSORS), Tensors: []*pb.TensorProto{
					{DataType: proto.Int32(1)}, {DataType: proto.Int32(1)}}})
		}, []string{"dt", "exactly one tensor", "2 tensors", "load_model.cc:490"}},
		{"undefined input", func(m *pb.ModelProto) {
			m.Graph.Node[0].Input[1] = "g:nope"
		}, []string{"g/g:a:1", "input[1]", "not defined before use", "load_model.cc:1995"}},
		{"input defined later", func(m *pb.ModelProto) {
			m.Graph.Node[0].Input[0] = "g:b:2"
		}, []string{"input[0]", "defined later", "load_model.cc:1995"}},
		{"unresolved REF", func(m *pb.ModelProto) {
			m.Graph.Node[0].OpType = s("REF::Mul:9")
		}, []string{"g/g:a:1", "op_type", "REF:: op_type does not resolve", "load_model.cc:1891"}},
		{"unresolved graph output", func(m *pb.ModelProto) {
			m.Functions[0].Output[0].Name = s("f:zz")
		}, []string{"f/", "output[0]", "Miss return node", "load_model.cc:2035"}},
		{"graph without output", func(m *pb.ModelProto) {
			m.Functions[0].Output = nil
		}, []string{"f/", "has no output", "load_model.cc:2077"}},
		{"bad raw_data length", func(m *pb.ModelProto) {
			m.Graph.Parameter[0].RawData = make([]byte, 15)
		}, []string{"g/g:w", "raw_data length", "16 bytes", "15 bytes", "load_model.cc:633"}},
		{"unsupported parameter data_type", func(m *pb.ModelProto) {
			m.Graph.Parameter[0].DataType = proto.Int32(0)
		}, []string{"g/g:w", "kDefaultValueSwitchMap", "UNDEFINED", "load_model.cc:611"}},
		{"parameter without name", func(m *pb.ModelProto) {
			m.Graph.Parameter[0].Name = nil
		}, []string{"parameter[0]", "parameter has no name", "load_model.cc:819"}},
		{"duplicate primitive", func(m *pb.ModelProto) {
			m.Primitives[1].Name = s("ReLU:1")
		}, []string{"primitives/ReLU:1", "duplicate primitive name", "load_model.cc:2560"}},
		{"function without name", func(m *pb.ModelProto) {
			m.Functions[0].Name = nil
		}, []string{"function graph has no name", "load_model.cc:2249"}},
		{"function name clashes with a primitive", func(m *pb.ModelProto) {
			m.Functions[0].Name = s("ReLU:1")
		}, []string{"ReLU:1", "duplicate function graph name", "primitive", "load_model.cc:2253"}},
		{"header", func(m *pb.ModelProto) {
			m.ProducerName = nil
			m.ModelVersion = nil
			m.MindIrVersion = proto.Int64(9)
			m.LittleEndian = proto.Bool(false)
		}, []string{"producer_name is required", "load_model.cc:321"}},
		{"header mind_ir_version", func(m *pb.ModelProto) { m.MindIrVersion = proto.Int64(9) },
			[]string{"model/-: mind_ir_version", "Version_MAX", "got 9", "load_model.cc:339"}},
		{"header little_endian", func(m *pb.ModelProto) { m.LittleEndian = proto.Bool(false) },
			[]string{"little_endian", "load_model.cc:344"}},
		{"header model_version", func(m *pb.ModelProto) { m.ModelVersion = nil },
			[]string{"model_version is required", "load_model.cc:328"}},
		{"STRING scalar in strings", func(m *pb.ModelProto) {
			m.Primitives[1].Attribute = append(m.Primitives[1].Attribute,
				&pb.AttributeProto{Name: s("mode"), Type: attrType(pb.AttributeProto_STRING), Strings: [][]byte{[]byte("x")}})
		}, []string{"mode", "STRING is read from s", "load_model.cc:282"}},
		{"attribute with an unreadable type", func(m *pb.ModelProto) {
			m.Graph.Node[0].NodeAttr = append(m.Graph.Node[0].NodeAttr, &pb.AttributeProto{Name: s("u"), Type: attrType(pb.AttributeProto_UMONAD)})
		}, []string{"node_attr:u", "not supported", "load_model.cc:1333"}},
		{"shape attribute with an unreadable type", func(m *pb.ModelProto) {
			m.Graph.Node[0].Attribute[0] = &pb.AttributeProto{Name: s("shape"), Type: attrType(pb.AttributeProto_STRING)}
		}, []string{"g/g:a:1", "shape", "abstract type is not readable", "load_model.cc:717"}},
		{"Constant without value", func(m *pb.ModelProto) {
			m.Graph.Node = append([]*pb.NodeProto{{Name: s("c"), Output: []string{"c"}, OpType: s("Constant")}}, m.Graph.Node...)
		}, []string{"g/c", "no value attribute", "load_model.cc:1863"}},
		{"duplicate Constant name", func(m *pb.ModelProto) {
			c := &pb.NodeProto{Name: s("c"), Output: []string{"c"}, OpType: s("Constant"), Attribute: []*pb.AttributeProto{
				{Name: s("value"), Type: attrType(pb.AttributeProto_INT64), I: proto.Int64(1)}}}
			m.Graph.Node = append([]*pb.NodeProto{c}, m.Graph.Node...)
			m.Functions[0].Node = append([]*pb.NodeProto{c}, m.Functions[0].Node...)
		}, []string{"f/c", "defined twice", "silently rebinds"}},
		{"input tensor without data_type", func(m *pb.ModelProto) {
			m.Graph.Input[0].Tensor[0].DataType = nil
		}, []string{"g/g:x", "tensor[0]", "no data_type", "load_model.cc:1113"}},
		{"dictionary entry without a value", func(m *pb.ModelProto) {
			m.Primitives[0].Attribute = append(m.Primitives[0].Attribute, &pb.AttributeProto{Name: s("d"), Type: attrType(pb.AttributeProto_DICT),
				Values: []*pb.AttributeProto{{Name: s("k")}}})
		}, []string{`d["k"]`, "exactly one value", "load_model.cc:1565"}},
		{"old-form sequence with too few values", func(m *pb.ModelProto) {
			m.Graph.Node[0].Attribute = append(m.Graph.Node[0].Attribute, &pb.AttributeProto{Name: s("input_names"),
				Type: attrType(pb.AttributeProto_STRING), Strings: [][]byte{[]byte("x")}, RefAttrName: s("scalar:List[value1,value2,],")})
		}, []string{"input_names", "value1..value1", "value2", "load_model.cc:160"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := minimalModel()
			tc.mutate(m)
			expectRule(t, checkModel(t, m), tc.want...)
		})
	}
}

func TestCheckSchemaRules(t *testing.T) {
	withSchema(t,
		mindir.PrimSchema{Name: "Add", Outputs: 1, Source: "add_op.yaml", Args: []mindir.PrimArg{
			{Name: "input", Form: mindir.FormInput, Type: "tensor"},
			{Name: "other", Form: mindir.FormInput, Type: "tensor"}}},
		mindir.PrimSchema{Name: "ReLU", Outputs: 1, Source: "relu_op.yaml", Args: []mindir.PrimArg{
			{Name: "input", Form: mindir.FormInput, Type: "tensor"},
			{Name: "axis", Form: mindir.FormAttr, Type: "int", MindIR: pb.AttributeProto_INT64},
			{Name: "keep", Form: mindir.FormAttr, Type: "bool", MindIR: pb.AttributeProto_BOOL, Default: "False"},
			{Name: "pad_mode", Form: mindir.FormAttr, Type: "enum:PadMode", MindIR: pb.AttributeProto_INT64, Default: "0"},
			{Name: "dims", Form: mindir.FormAttr, Type: "tuple[int]", MindIR: pb.AttributeProto_TUPLE, Elem: pb.AttributeProto_INT64, Default: "()"}}},
		mindir.PrimSchema{Name: "Split", Outputs: 2, Source: "split_op.yaml", Args: []mindir.PrimArg{{Name: "x", Form: mindir.FormInput, Type: "tensor"}}},
	)
	axis := func(a *pb.AttributeProto) func(m *pb.ModelProto) {
		return func(m *pb.ModelProto) {
			m.Primitives[0].Attribute = append(m.Primitives[0].Attribute,
				&pb.AttributeProto{Name: s("axis"), Type: attrType(pb.AttributeProto_INT64), I: proto.Int64(0)}, a)
		}
	}
	str := func(name, v string) *pb.AttributeProto {
		return &pb.AttributeProto{Name: s(name), Type: attrType(pb.AttributeProto_STRING), S: []byte(v)}
	}
	t.Run("valid", func(t *testing.T) {
		m := minimalModel()
		axis(str("pad_mode", "same"))(m) // an enum may be a STRING
		m.Primitives[0].Attribute = append(m.Primitives[0].Attribute, &pb.AttributeProto{Name: s("dims"), Type: attrType(pb.AttributeProto_LIST),
			Values: []*pb.AttributeProto{{Type: attrType(pb.AttributeProto_INT64), Ints: []int64{1}}}}, str("input_names", "x"))
		if rep := checkModel(t, m); !rep.OK() {
			t.Fatalf("violations: %v", rep.Violations)
		}
	})
	cases := []struct {
		name   string
		mutate func(m *pb.ModelProto)
		want   []string
	}{
		{"wrong attribute type", axis(&pb.AttributeProto{Name: s("keep"), Type: attrType(pb.AttributeProto_INT64), I: proto.Int64(1)}),
			[]string{"f/f:r:3", "keep", "schema's MindIR type", "BOOL", "got INT64", "relu_op.yaml"}},
		{"wrong sequence item type", axis(&pb.AttributeProto{Name: s("dims"), Type: attrType(pb.AttributeProto_TUPLE),
			Values: []*pb.AttributeProto{{Type: attrType(pb.AttributeProto_FLOAT), Floats: []float32{1}}}}),
			[]string{"dims[0]", "item type", "got FLOAT"}},
		{"scalar for a sequence", axis(&pb.AttributeProto{Name: s("dims"), Type: attrType(pb.AttributeProto_INT64), I: proto.Int64(1)}),
			[]string{"dims", "TUPLE of INT64", "got INT64"}},
		{"enum as FLOAT", axis(&pb.AttributeProto{Name: s("pad_mode"), Type: attrType(pb.AttributeProto_FLOAT), F: proto.Float32(1)}),
			[]string{"pad_mode", "STRING or INT64", "got FLOAT"}},
		{"required attribute missing", func(*pb.ModelProto) {}, []string{"f/f:r:3", "axis", "required primitive attribute missing"}},
		{"too many inputs", func(m *pb.ModelProto) { m.Graph.Node[0].Input = append(m.Graph.Node[0].Input, "g:x") },
			[]string{"g/g:a:1", "input count", "2 inputs [input, other]", "got 3", "add_op.yaml"}},
		{"too few inputs", func(m *pb.ModelProto) { m.Graph.Node[0].Input = m.Graph.Node[0].Input[:1] },
			[]string{"g/g:a:1", "input count", "got 1"}},
		{"tuple output with a tensor shape", func(m *pb.ModelProto) {
			m.Primitives = append(m.Primitives, prim("Split:7", "Split"))
			m.Graph.Node[0] = node("g:a:1", "REF::Split:7", "g:x")
		}, []string{"g/g:a:1", "shape", "a TUPLE of 2 TENSORS", "split_op.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := minimalModel()
			tc.mutate(m)
			expectRule(t, checkModel(t, m), tc.want...)
		})
	}
	t.Run("monads are tolerated, attributes not required for PRIMITIVE_FUNCTION", func(t *testing.T) {
		m := minimalModel()
		m.MindIrVersion = proto.Int64(3)
		m.Primitives[0].PrimType = pb.PrimitiveProto_PRIMITIVE_FUNCTION.Enum()
		// PRIMITIVE_FUNCTION: every argument is an input (ReLU: input, axis required).
		m.Functions[0].Node = append([]*pb.NodeProto{{Name: s("U"), Output: []string{"U"}, OpType: s("Constant"),
			Attribute: []*pb.AttributeProto{{Name: s("value"), Type: attrType(pb.AttributeProto_UMONAD)}}},
			{Name: s("ax"), Output: []string{"ax"}, OpType: s("Constant"),
				Attribute: []*pb.AttributeProto{{Name: s("value"), Type: attrType(pb.AttributeProto_INT64), I: proto.Int64(0)}}}},
			m.Functions[0].Node...)
		m.Functions[0].Node[2].Input = []string{"f:y", "ax", "U"}
		// Add: input, other + a monad.
		m.Graph.Node = append([]*pb.NodeProto{{Name: s("U2"), Output: []string{"U2"}, OpType: s("Constant"),
			Attribute: []*pb.AttributeProto{{Name: s("value"), Type: attrType(pb.AttributeProto_IOMONAD)}}}}, m.Graph.Node...)
		m.Graph.Node[1].Input = append(m.Graph.Node[1].Input, "U2")
		if rep := checkModel(t, m); !rep.OK() {
			t.Fatalf("violations: %v", rep.Violations)
		}
	})
}

// graphKernelModel: a converter_lite CPU GraphKernel Custom node whose last
// input is the kernel library.
func graphKernelModel(kv map[string]string, order ...string) *pb.ModelProto {
	m := minimalModel()
	var items []*pb.AttributeProto
	for _, k := range order {
		var bytes []*pb.AttributeProto
		for _, b := range []byte(kv[k]) {
			bytes = append(bytes, &pb.AttributeProto{Type: attrType(pb.AttributeProto_UINT8), Ints: []int64{int64(b)}})
		}
		items = append(items,
			&pb.AttributeProto{Type: attrType(pb.AttributeProto_STRING), Strings: [][]byte{[]byte(k)}},
			&pb.AttributeProto{Type: attrType(pb.AttributeProto_TUPLE), Values: bytes})
	}
	m.Primitives = append(m.Primitives, prim("Custom:5", "Custom",
		&pb.AttributeProto{Name: s("type"), Type: attrType(pb.AttributeProto_STRING), S: []byte("GraphKernel")},
		&pb.AttributeProto{Name: s("attr"), Type: attrType(pb.AttributeProto_TUPLE), Values: items}))
	m.Graph.Parameter = append(m.Graph.Parameter, &pb.TensorProto{Name: s("g:Fused_Add_fusion_1.so"),
		DataType: proto.Int32(int32(pb.TensorProto_UINT8)), Dims: []int64{4}, RawData: []byte{0x7f, 'E', 'L', 'F'}})
	m.Graph.Node[0] = node("g:a:1", "REF::Custom:5", "g:x", "g:w", "g:Fused_Add_fusion_1.so")
	return m
}

func TestCheckGraphKernel(t *testing.T) {
	cpu := map[string]string{"kernel_name": "Fused_Add_fusion_1_kernel", "process": "cpu", "arch": "x86_64", "system": "linux",
		"feature": "avx512", "inputs_shape": "2,2,2,2,2,2,", "outputs_shape": "2,2,2,", "outputs_format": "0,", "outputs_type": "0,"}
	keys := []string{"kernel_name", "process", "arch", "system", "feature", "inputs_shape", "outputs_shape", "outputs_format", "outputs_type"}
	if rep := checkModel(t, graphKernelModel(cpu, keys...)); !rep.OK() {
		t.Fatalf("violations in a valid CPU GraphKernel node: %v", rep.Violations)
	}
	t.Run("missing key", func(t *testing.T) {
		expectRule(t, checkModel(t, graphKernelModel(cpu, keys[:8]...)), "attr[outputs_type]", "GraphKernel attr key", "cpu_kernel_builder.cc:31")
	})
	t.Run("library not last", func(t *testing.T) {
		m := graphKernelModel(cpu, keys...)
		in := m.Graph.Node[0].Input
		in[1], in[2] = in[2], in[1]
		expectRule(t, checkModel(t, m), "input[2]", "kernel library parameter", "akg_kernel.cc:157")
	})
	t.Run("bytes as a string", func(t *testing.T) {
		m := graphKernelModel(cpu, keys...)
		attr := m.Primitives[2].Attribute[1]
		attr.Values[1] = &pb.AttributeProto{Type: attrType(pb.AttributeProto_UINT8), S: []byte("Fused_Add_fusion_1_kernel")}
		rep := checkModel(t, m)
		expectRule(t, rep, "attr[kernel_name]", "TUPLEs of UINT8", "got UINT8")
		expectRule(t, rep, "attr[1]", "ints(0)", "load_model.cc:238")
	})
	t.Run("gpu", func(t *testing.T) {
		gpu := map[string]string{"kernel_name": "k", "process": "cuda", "outputs_shape": "1,2,", "outputs_format": "0,", "outputs_type": "0,",
			"GridDimX": "1", "GridDimY": "1", "GridDimZ": "1", "BlockDimX": "32", "BlockDimY": "1", "BlockDimZ": "1"}
		m := graphKernelModel(gpu, "kernel_name", "process", "outputs_shape", "outputs_format", "outputs_type",
			"GridDimX", "GridDimY", "GridDimZ", "BlockDimX", "BlockDimY", "BlockDimZ")
		expectRule(t, checkModel(t, m), "attr[ptx_path]", "gpu_kernel_builder.cc:57")
	})
	t.Run("ascend", func(t *testing.T) {
		m := graphKernelModel(nil)
		m.Primitives[2].Attribute = m.Primitives[2].Attribute[:1]
		m.Primitives[2].Attribute = append(m.Primitives[2].Attribute,
			&pb.AttributeProto{Name: s("reg_op_name"), Type: attrType(pb.AttributeProto_STRING), S: []byte("Fused_x2_y1")})
		expectRule(t, checkModel(t, m), "info_path", "Ascend", "ascend_kernel_builder.cc:59")
	})
}

// TestCheckFileNoCopy: File reports violations that do not alias the
// (unmapped) file.
func TestCheckFileNoCopy(t *testing.T) {
	m := minimalModel()
	m.Graph.Parameter[0].RawData = make([]byte, 15)
	b, _ := proto.Marshal(m)
	p := filepath.Join(t.TempDir(), "bad.mindir")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := File(p)
	if err != nil {
		t.Fatal(err)
	}
	expectRule(t, rep, "raw_data length")
	if rep.File != p {
		t.Errorf("report file %q", rep.File)
	}
}

// FuzzCheckBytes: the checker never fails internally on any input (a panic
// would surface as "internal error checking MindIR").
func FuzzCheckBytes(f *testing.F) {
	b, _ := proto.Marshal(minimalModel())
	f.Add(b)
	cpu := map[string]string{"process": "cpu", "kernel_name": "k"}
	g, _ := proto.Marshal(graphKernelModel(cpu, "process", "kernel_name"))
	f.Add(g)
	if root := filepath.Join("..", "..", "..", "shared", "corpus", "mindir", "mindspore-tests"); true {
		for _, name := range []string{"relu.mindir", "test_ops_celu_cast_float_fp32_cnode_to_fp64_v2.mindir",
			"test_ops_upsample_cast_tuple_float_fp32_value_node_to_fp64.mindir"} {
			if data, err := os.ReadFile(filepath.Join(root, name)); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Bytes(data, "fuzz")
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatal(err)
			}
			return
		}
		for _, v := range rep.Violations {
			if v.Ref == "" || v.Rule == "" {
				t.Fatalf("violation without rule or reference: %+v", v)
			}
		}
	})
}

// BenchmarkCheckLargeModel: a 50,000-node chain with a 64 MB weight; the
// check is linear in nodes and never copies raw_data.
func BenchmarkCheckLargeModel(b *testing.B) {
	m := minimalModel()
	m.Graph.Parameter[0].Dims = []int64{4096, 4096}
	m.Graph.Parameter[0].RawData = make([]byte, 4096*4096*4)
	prev := "g:a:1"
	nodes := []*pb.NodeProto{m.Graph.Node[0]}
	for i := range 50000 {
		out := "g:n" + strings.Repeat("x", i%7) + ":" + string(rune('a'+i%26)) + ":" + itoa(i)
		nodes = append(nodes, node(out, "REF::ReLU:1", prev))
		prev = out
	}
	m.Graph.Node = nodes
	m.Graph.Output[0].Name = s(prev)
	data, err := proto.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		rep, err := Bytes(data, "large")
		if err != nil || !rep.OK() {
			b.Fatal(err, rep.Violations)
		}
	}
}

func itoa(i int) string { return fmt.Sprint(i) }

// Issue 32 S2: `converter check` never reads outside the model's folder
// (an external_data location that climbs out, or a link inside the folder
// that leads out, is a violation and no byte of the target is read), and
// offset + length cannot overflow into a pass.
func TestCheckExternalDataStaysInFolder(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("r-secret-bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(dir, "w.bin")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "ok.bin"), append([]byte{1}, make([]byte, 64)...), 0o644)
	rel, _ := filepath.Rel(dir, secret)
	for _, c := range []struct {
		location       string
		offset, length int64
		want           string
	}{
		{rel, 1, 16, "not a path inside the model's folder"},
		{"w.bin", 1, 16, "outside"},
		{"ok.bin", math.MaxInt64, 16, "external data must lie inside the file"},
	} {
		m := minimalModel()
		m.Graph.Parameter[0].RawData = nil
		m.Graph.Parameter[0].ExternalData = &pb.TensorProto_ExternalDataProto{Location: s(c.location), Offset: proto.Int64(c.offset), Length: proto.Int64(c.length)}
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "model.mindir")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := File(path)
		if err != nil {
			t.Fatal(err)
		}
		expectRule(t, rep, c.want)
		for _, v := range rep.Violations {
			if strings.Contains(v.String(), "first byte 114") {
				t.Errorf("%s: the check read the outside file: %s", c.location, v)
			}
		}
	}
}

// Issue 32 (minor): a MindIR parameter whose data is external is refused
// by name (it silently became a graph input).
func TestReadExternalParameterRefused(t *testing.T) {
	m := minimalModel()
	m.Graph.Parameter[0].RawData = nil
	m.Graph.Parameter[0].ExternalData = &pb.TensorProto_ExternalDataProto{Location: s("model_variables/data_0"), Offset: proto.Int64(1), Length: proto.Int64(16)}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = mindir.Parse(b)
	var ue *mindir.UnsupportedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "g:w") || !strings.Contains(err.Error(), "external") {
		t.Fatalf("want an UnsupportedError naming g:w's external data, got %v", err)
	}
}
