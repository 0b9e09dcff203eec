package onnx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"

	ob "gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
)

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func writeModel(t *testing.T, dir string, m *ob.Model) string {
	t.Helper()
	path := filepath.Join(dir, "model.onnx")
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.onnx")
	if _, err := Open(path, Options{}); err == nil || !contains(err.Error(), path) {
		t.Errorf("err = %v", err)
	}
}

func TestOpenTruncatedAndEmpty(t *testing.T) {
	dir := t.TempDir()
	m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2).Init(ob.Fill("w", i64(64), 1))
	m.Node("a", "Add", strs("x", "w"), strs("y"))
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{len(b) - 1, len(b) / 2, 3, 0} {
		path := filepath.Join(dir, "cut.onnx")
		if err := os.WriteFile(path, b[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, Options{}); err == nil || !contains(err.Error(), path) {
			t.Errorf("cut at %d: err = %v", cut, err)
		}
	}
}

func TestUnsupportedListsAll(t *testing.T) {
	m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2).Import("com.microsoft", 1)
	m.Node("n1", "FancyOp", strs("x"), strs("a"))
	m.Node("ok", "Relu", strs("a"), strs("b"))
	m.Node("", "FusedGemm", strs("b"), strs("c")).Domain = proto.String("com.microsoft")
	then := ob.New("then", 13).Output("d1", ob.Float, 2)
	then.Node("lstm", "FancyOp", strs("x"), strs("d1")) // x: outer scope
	els := ob.New("else", 13).Output("d2", ob.Float, 2)
	els.Node("id", "Identity", strs("x"), strs("d2"))
	m.Node("loop", "If", strs("x"), strs("d"), ob.Graph("then_branch", then.Graph()), ob.Graph("else_branch", els.Graph()))
	m.Node("n4", "Add", strs("c", "d"), strs("y"))
	dir := t.TempDir()
	path := writeModel(t, dir, m)
	_, err := Open(path, Options{})
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v", err)
	}
	if ue.File != path || len(ue.Items) != 3 {
		t.Fatalf("items %+v", ue.Items)
	}
	want := []Unsupported{
		{"n1", "FancyOp", "op is not in the converter's op table"},
		{"FusedGemm_2", "com.microsoft::FusedGemm", `domain "com.microsoft" is not supported (of its operators only QLinearConcat, QLinearLeakyRelu, QLinearSigmoid)`},
		{"loop/then_branch/lstm", "FancyOp", "op is not in the converter's op table"},
	}
	for i, w := range want {
		if ue.Items[i] != w {
			t.Errorf("item %d = %+v, want %+v", i, ue.Items[i], w)
		}
	}
	if msg := err.Error(); !strings.HasPrefix(msg, path+":") || !contains(msg, "n1: FancyOp", "FusedGemm_2", "loop/then_branch/lstm: FancyOp") {
		t.Errorf("message %q", msg)
	}
}

func TestMissingInputReference(t *testing.T) {
	m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
	m.Node("add1", "Add", strs("x", "nothere"), strs("y"))
	if _, err := parseModel(t, m, Options{Name: "m.onnx"}); err == nil || !contains(err.Error(), "m.onnx", "add1", `"nothere"`) {
		t.Errorf("err = %v", err)
	}
}

func externalTensor(name, location string, offset, length int64, dims ...int64) *onnxpb.TensorProto {
	kv := func(k, v string) *onnxpb.StringStringEntryProto {
		return &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(v)}
	}
	t := &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(ob.Float), Dims: dims,
		DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
		ExternalData: []*onnxpb.StringStringEntryProto{kv("location", location)}}
	if offset >= 0 {
		t.ExternalData = append(t.ExternalData, kv("offset", itoa(offset)))
	}
	if length >= 0 {
		t.ExternalData = append(t.ExternalData, kv("length", itoa(length)))
	}
	return t
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	side := ob.Float32s("", i64(4), []float32{0, 0, 1, 2}).RawData
	if err := os.WriteFile(filepath.Join(dir, "w", "weights.bin"), side, 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(loc string, off, length int64) *ob.Model {
		m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
		m.Init(externalTensor("w", loc, off, length, 2))
		m.Node("add", "Add", strs("x", "w"), strs("y"))
		return m
	}
	model, err := Open(writeModel(t, dir, build("w/weights.bin", 8, 8)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := constFloats(t, model.Graph.Consts[0]); got[0] != 1 || got[1] != 2 {
		t.Errorf("external values %v", got)
	}
	if err := model.Close(); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		loc      string
		off, len int64
		want     string
	}{
		{"../weights.bin", 0, 8, "escapes the model's folder"},
		{"w/../../x.bin", 0, 8, "escapes the model's folder"},
		{"/etc/passwd", 0, 8, "is absolute"},
		{"w/weights.bin", 12, 8, "past its end"},
		{"w/weights.bin", math.MaxInt64 - 3, 8, "8 bytes at offset 9223372036854775804 are past its end"},
		{"w/weights.bin", 0, 4, "length 4, want 8"},
		{"w/missing.bin", 0, 8, "missing.bin"},
	} {
		path := writeModel(t, dir, build(tc.loc, tc.off, tc.len))
		if _, err := Open(path, Options{}); err == nil || !contains(err.Error(), path, "initializer w", tc.want) {
			t.Errorf("%s: err = %v", tc.loc, err)
		}
	}
	// Bytes without a folder cannot have external data.
	b, _ := build("w/weights.bin", 8, 8).Bytes()
	if _, err := Parse(b, "", Options{}); err == nil || !contains(err.Error(), "without a folder") {
		t.Errorf("no dir: %v", err)
	}
}

// TestZeroCopy checks that raw_data weights alias the mapping.
func TestZeroCopy(t *testing.T) {
	dir := t.TempDir()
	m := ob.New("g", 13).Input("x", ob.Float, 1024).Output("y", ob.Float, 1024).Init(ob.Fill("w", i64(1024), 3))
	m.Node("add", "Add", strs("x", "w"), strs("y"))
	model, err := Open(writeModel(t, dir, m), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	data := model.Graph.Consts[0].Const.Data
	mapped := model.maps[0]
	start := uintptr(unsafe.Pointer(&mapped[0]))
	p := uintptr(unsafe.Pointer(&data[0]))
	if p < start || p+uintptr(len(data)) > start+uintptr(len(mapped)) {
		t.Errorf("weights were copied out of the mapping")
	}
	if got := constFloats(t, model.Graph.Consts[0]); got[1023] != 3 {
		t.Errorf("value %v", got[1023])
	}
}

func TestOneProducerPerTensor(t *testing.T) {
	cases := []struct {
		name string
		m    func() *ob.Model
		want string
	}{
		{"two nodes", func() *ob.Model {
			m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
			m.Node("a", "Relu", strs("x"), strs("y"))
			m.Node("b", "Neg", strs("x"), strs("y"))
			return m
		}, "tensor y is produced by both node a (Relu) and node b (Neg)"},
		{"unnamed nodes", func() *ob.Model {
			m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
			m.Node("", "Relu", strs("x"), strs("y"))
			m.Node("", "Neg", strs("x"), strs("y"))
			return m
		}, "tensor y is produced by both node Relu_0 (Relu) and node Neg_1 (Neg)"},
		{"node and input", func() *ob.Model {
			m := ob.New("g", 13).Input("x", ob.Float, 2).Output("x", ob.Float, 2)
			m.Node("a", "Relu", strs("x"), strs("x"))
			return m
		}, "tensor x is produced by both graph input x and node a (Relu)"},
		{"node and initializer", func() *ob.Model {
			m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
			m.Init(ob.Float32s("w", []int64{2}, []float32{1, 2}))
			m.Node("a", "Relu", strs("x"), strs("w"))
			m.Node("b", "Add", strs("x", "w"), strs("y"))
			return m
		}, "tensor w is produced by both initializer w and node a (Relu)"},
		{"same node twice", func() *ob.Model {
			m := ob.New("g", 13).Input("x", ob.Float, 4).Output("y", ob.Float, 2)
			m.Node("s", "Split", strs("x"), strs("y", "y"), ob.Int("axis", 0))
			return m
		}, "tensor y is produced twice by node s (Split)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseModel(t, c.m(), Options{Name: "m.onnx"})
			if err == nil || !contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	// An initializer listed as a graph input too (old exporters) is fine.
	m := ob.New("g", 13).Input("x", ob.Float, 2).Input("w", ob.Float, 2).Output("y", ob.Float, 2)
	m.Init(ob.Float32s("w", []int64{2}, []float32{1, 2}))
	m.Node("b", "Add", strs("x", "w"), strs("y"))
	if _, err := parseModel(t, m, Options{Name: "m.onnx"}); err != nil {
		t.Errorf("initializer also listed as input: %v", err)
	}
}

func TestNegativeDimValue(t *testing.T) {
	setNeg := func(vi *onnxpb.ValueInfoProto) {
		vi.GetType().GetTensorType().GetShape().Dim[1].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: -2}
	}
	build := func() *ob.Model {
		m := ob.New("g", 13).Input("x", ob.Float, 1, 4).Output("y", ob.Float, 1, 4)
		m.Node("a", "Relu", strs("x"), strs("t"))
		m.Node("b", "Relu", strs("t"), strs("y"))
		m.Graph().ValueInfo = append(m.Graph().ValueInfo, ob.ValueInfo("t", ob.Float, 1, 4))
		return m
	}
	cases := []struct {
		name string
		set  func(g *onnxpb.GraphProto)
		want string
	}{
		{"input", func(g *onnxpb.GraphProto) { setNeg(g.Input[0]) }, `graph input "x": dim 1 has dim_value -2`},
		{"output", func(g *onnxpb.GraphProto) { setNeg(g.Output[0]) }, `graph output "y": dim 1 has dim_value -2`},
		{"value_info", func(g *onnxpb.GraphProto) { setNeg(g.ValueInfo[0]) }, `value_info "t": dim 1 has dim_value -2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := build()
			c.set(m.Graph())
			_, err := parseModel(t, m, Options{Name: "m.onnx"})
			if err == nil || !contains(err.Error(), "m.onnx", c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	if _, err := parseModel(t, build(), Options{Name: "m.onnx"}); err != nil {
		t.Errorf("valid model: %v", err)
	}
}

// Issue 32 (minor): an opset outside 1..MaxOpset is refused with its
// number, not read as if it were a known one.
func TestOpsetRange(t *testing.T) {
	for _, v := range []int64{-5, 0, MaxOpset + 1, 999} {
		m := ob.New("g", v).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
		m.Node("r", "Relu", strs("x"), strs("y"))
		if _, err := parseModel(t, m, Options{Name: "m.onnx"}); err == nil || !contains(err.Error(), "m.onnx", fmt.Sprintf("opset %d", v)) {
			t.Errorf("opset %d: err = %v", v, err)
		}
	}
	m := ob.New("g", MaxOpset).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
	m.Node("r", "Relu", strs("x"), strs("y"))
	if _, err := parseModel(t, m, Options{Name: "m.onnx"}); err != nil {
		t.Errorf("opset %d: %v", MaxOpset, err)
	}
}
