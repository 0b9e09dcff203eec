package tensorops

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/kernel"
)

// This file runs the ONNX backend node tests of this package's ops straight
// on the kernels: a minimal protobuf reader (test-only; the real frontend
// lives elsewhere) decodes single-node models, output tensors are allocated
// from the expected outputs' shapes, and results are compared exactly.

var onnxToIR = map[string]string{"GatherElements": "GatherD"}

type onnxNode struct {
	op, name    string
	inputs, out []string
	attrs       ir.Attrs
}

type onnxGraph struct {
	nodes   []onnxNode
	inits   map[string]*ir.Tensor
	inputs  []string
	outputs []string
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// fields walks the top-level fields of a message.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var y uint32
			y, n = protowire.ConsumeFixed32(b)
			x = uint64(y)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// varints decodes a repeated int field, packed or not.
func varints(typ protowire.Type, v []byte, x uint64, dst []uint64) []uint64 {
	if typ != protowire.BytesType {
		return append(dst, x)
	}
	for len(v) > 0 {
		y, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return dst
		}
		dst = append(dst, y)
		v = v[n:]
	}
	return dst
}

func fixed32s(typ protowire.Type, v []byte, x uint64, dst []uint32) []uint32 {
	if typ != protowire.BytesType {
		return append(dst, uint32(x))
	}
	for i := 0; i+4 <= len(v); i += 4 {
		dst = append(dst, binary.LittleEndian.Uint32(v[i:]))
	}
	return dst
}

func fixed64s(typ protowire.Type, v []byte, x uint64, dst []uint64) []uint64 {
	if typ != protowire.BytesType {
		return append(dst, x)
	}
	for i := 0; i+8 <= len(v); i += 8 {
		dst = append(dst, binary.LittleEndian.Uint64(v[i:]))
	}
	return dst
}

func parseTensor(b []byte) (*ir.Tensor, string, error) {
	var shape []int64
	var dt ir.DType
	var name string
	var raw []byte
	var i32, i64, u64, f64 []uint64
	var f32 []uint32
	var strs []string
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			for _, d := range varints(typ, v, x, nil) {
				shape = append(shape, int64(d))
			}
		case 2:
			dt = ir.DType(x)
		case 4:
			f32 = fixed32s(typ, v, x, f32)
		case 5:
			i32 = varints(typ, v, x, i32)
		case 6:
			strs = append(strs, string(v))
		case 7:
			i64 = varints(typ, v, x, i64)
		case 8:
			name = string(v)
		case 9:
			raw = v
		case 10:
			f64 = fixed64s(typ, v, x, f64)
		case 11:
			u64 = varints(typ, v, x, u64)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if shape == nil {
		shape = []int64{}
	}
	t := ir.NewTensor(dt, shape)
	cnt := int(t.NumElements())
	switch {
	case dt == ir.String:
		copy(t.Strings, strs)
	case raw != nil:
		if len(raw) != len(t.Data) {
			return nil, "", fmt.Errorf("raw_data has %d bytes, want %d", len(raw), len(t.Data))
		}
		copy(t.Data, raw)
	default:
		sz := dt.Size()
		for i := 0; i < cnt; i++ {
			var bits uint64
			switch {
			case len(f32) > i:
				bits = uint64(f32[i])
			case len(f64) > i:
				bits = f64[i]
			case len(i64) > i:
				bits = i64[i]
			case len(u64) > i:
				bits = u64[i]
			case len(i32) > i:
				bits = i32[i]
			}
			for k := 0; k < sz; k++ {
				t.Data[i*sz+k] = byte(bits >> (8 * k))
			}
		}
	}
	return t, name, nil
}

func parseAttr(b []byte) (string, ir.Attr, error) {
	var name string
	var a ir.Attr
	var kind uint64
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			name = string(v)
		case 2:
			a.F = float64(math.Float32frombits(uint32(x)))
		case 3:
			a.I = int64(x)
		case 4:
			a.S = string(v)
		case 5:
			t, _, err := parseTensor(v)
			if err != nil {
				return err
			}
			a.T = t
		case 7:
			for _, f := range fixed32s(typ, v, x, nil) {
				a.Floats = append(a.Floats, float64(math.Float32frombits(f)))
			}
		case 8:
			for _, i := range varints(typ, v, x, nil) {
				a.Ints = append(a.Ints, int64(i))
			}
		case 20:
			kind = x
		}
		return nil
	})
	a.Kind = map[uint64]ir.AttrKind{1: ir.AttrFloat, 2: ir.AttrInt, 3: ir.AttrString, 4: ir.AttrTensor, 6: ir.AttrFloats, 7: ir.AttrInts}[kind]
	return name, a, err
}

func parseModel(b []byte) (*onnxGraph, error) {
	g := &onnxGraph{inits: map[string]*ir.Tensor{}}
	valueName := func(v []byte) string {
		var s string
		fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
			if num == 1 {
				s = string(v)
			}
			return nil
		})
		return s
	}
	err := fields(b, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		if num != 7 {
			return nil
		}
		return fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
			switch num {
			case 1:
				nd := onnxNode{attrs: ir.Attrs{}}
				err := fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
					switch num {
					case 1:
						nd.inputs = append(nd.inputs, string(v))
					case 2:
						nd.out = append(nd.out, string(v))
					case 3:
						nd.name = string(v)
					case 4:
						nd.op = string(v)
					case 5:
						k, a, err := parseAttr(v)
						if err != nil {
							return err
						}
						nd.attrs[k] = a
					}
					return nil
				})
				g.nodes = append(g.nodes, nd)
				return err
			case 5:
				t, name, err := parseTensor(v)
				if err != nil {
					return err
				}
				g.inits[name] = t
			case 11:
				g.inputs = append(g.inputs, valueName(v))
			case 12:
				g.outputs = append(g.outputs, valueName(v))
			}
			return nil
		})
	})
	return g, err
}

func loadPB(t *testing.T, path string) *ir.Tensor {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tt, _, err := parseTensor(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tt
}

// backendOps lists the ONNX ops whose single-op tests this package runs.
var backendOps = map[string]bool{
	"Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true, "Transpose": true, "Concat": true,
	"Split": true, "Slice": true, "Gather": true, "GatherElements": true, "Pad": true, "Tile": true,
	"DepthToSpace": true, "SpaceToDepth": true, "Trilu": true, "Range": true, "Shape": true, "Size": true,
	"ConstantOfShape": true, "TopK": true,
}

func TestONNXBackendNodes(t *testing.T) {
	smallParallel(t)
	root := filepath.Join(repoRoot(t), "..", "shared", "corpus", "onnx-backend")
	man, err := os.ReadFile(filepath.Join(root, "manifest.tsv"))
	if err != nil {
		t.Skipf("ONNX backend corpus not found (%v): ../shared is absent in this checkout", err)
	}
	ran := 0
	for _, line := range strings.Split(string(man), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 5 || f[0] != "node" {
			continue
		}
		ops := strings.Split(f[4], ",")
		mine := false
		foreign := false
		for _, op := range ops {
			switch {
			case backendOps[op]:
				mine = true
			case op == "Constant":
			default:
				foreign = true
			}
		}
		if !mine || foreign {
			continue
		}
		name := f[1]
		ran++
		t.Run(name, func(t *testing.T) { runBackendTest(t, filepath.Join(root, "node", name)) })
	}
	if ran == 0 {
		t.Fatal("no backend tests selected")
	}
}

func runBackendTest(t *testing.T, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseModel(b)
	if err != nil {
		t.Fatalf("parse model: %v", err)
	}
	vals := map[string]*ir.Tensor{}
	for k, v := range g.inits {
		vals[k] = v
	}
	ds := filepath.Join(dir, "test_data_set_0")
	k := 0
	for _, in := range g.inputs {
		if _, isInit := g.inits[in]; isInit {
			continue
		}
		vals[in] = loadPB(t, filepath.Join(ds, fmt.Sprintf("input_%d.pb", k)))
		k++
	}
	want := map[string]*ir.Tensor{}
	for i, o := range g.outputs {
		want[o] = loadPB(t, filepath.Join(ds, fmt.Sprintf("output_%d.pb", i)))
	}
	for _, nd := range g.nodes {
		if nd.op == "Constant" {
			vals[nd.out[0]] = nd.attrs.Tensor("value")
			continue
		}
		op := nd.op
		if m, ok := onnxToIR[op]; ok {
			op = m
		}
		fn, ok := kernel.Lookup(op)
		if !ok {
			t.Fatalf("op %s not registered", op)
		}
		node := &ir.Node{Name: nd.name, Op: op, Attrs: nd.attrs}
		var in []*ir.Tensor
		for _, name := range nd.inputs {
			in = append(in, vals[name]) // "" (omitted) gives nil
		}
		var out []*ir.Tensor
		for _, name := range nd.out {
			w, ok := want[name]
			if !ok {
				t.Skipf("intermediate value %s: shapes unknown to this harness", name)
			}
			out = append(out, ir.NewTensor(w.DType, w.Shape))
		}
		for _, threads := range []int{1, 3} {
			for _, o := range out {
				for i := range o.Data {
					o.Data[i] = 0xAB // catch elements the kernel forgets to write
				}
			}
			if err := fn(&kernel.Ctx{Threads: threads}, node, in, out); err != nil {
				t.Fatalf("run: %v", err)
			}
			for i, name := range nd.out {
				compareExact(t, name, out[i], want[name])
			}
		}
	}
}

func compareExact(t *testing.T, name string, got, want *ir.Tensor) {
	t.Helper()
	if got.DType != want.DType || !sameShape(got.Shape, want.Shape) {
		t.Fatalf("%s: got %s, want %s", name, got, want)
	}
	if want.DType == ir.String {
		for i := range want.Strings {
			if got.Strings[i] != want.Strings[i] {
				t.Fatalf("%s[%d]: got %q, want %q", name, i, got.Strings[i], want.Strings[i])
			}
		}
		return
	}
	for i := range want.Data {
		if got.Data[i] != want.Data[i] {
			t.Fatalf("%s: byte %d differs:\ngot  %s\nwant %s", name, i, got.Summary(24), want.Summary(24))
		}
	}
}
