package nn

// Runs the single-node ONNX backend tests of this package's ops against the
// kernels. It decodes model.onnx and the TensorProto files with a minimal
// protowire reader of its own, so it depends on no other package of the
// project (the frontend is written concurrently).

import (
	"bufio"
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

func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repo root (go.mod) not found")
		}
		dir = parent
	}
	s := filepath.Join(dir, "..", "shared", "corpus", "onnx-backend")
	if _, err := os.Stat(filepath.Join(s, "manifest.tsv")); err != nil {
		t.Skipf("ONNX backend corpus not present at %s: skipping", s)
	}
	return s
}

type pbNode struct {
	op, name string
	inputs   []string
	outputs  []string
	attrs    ir.Attrs
}

type pbGraph struct {
	nodes  []pbNode
	inputs []string
	inits  map[string]*ir.Tensor
}

// fields iterates the top-level fields of a protobuf message.
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
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			x = uint64(u)
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

// varints decodes a packed or single varint field.
func varints(typ protowire.Type, v []byte, x uint64) []uint64 {
	if typ == protowire.VarintType {
		return []uint64{x}
	}
	var out []uint64
	for len(v) > 0 {
		u, n := protowire.ConsumeVarint(v)
		if n < 0 {
			break
		}
		out = append(out, u)
		v = v[n:]
	}
	return out
}

func parseTensor(b []byte) (*ir.Tensor, string, error) {
	var dims []int64
	var dt ir.DType
	var raw []byte
	var name string
	var f32 []float32
	var f64 []float64
	var i64 []int64
	var u64 []uint64
	var i32 []int32
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			for _, u := range varints(typ, v, x) {
				dims = append(dims, int64(u))
			}
		case 2:
			dt = ir.DType(x)
		case 4:
			if typ == protowire.Fixed32Type {
				f32 = append(f32, math.Float32frombits(uint32(x)))
			} else {
				for i := 0; i+4 <= len(v); i += 4 {
					f32 = append(f32, math.Float32frombits(binary.LittleEndian.Uint32(v[i:])))
				}
			}
		case 5:
			for _, u := range varints(typ, v, x) {
				i32 = append(i32, int32(u))
			}
		case 7:
			for _, u := range varints(typ, v, x) {
				i64 = append(i64, int64(u))
			}
		case 8:
			name = string(v)
		case 9:
			raw = v
		case 10:
			if typ == protowire.Fixed64Type {
				f64 = append(f64, math.Float64frombits(x))
			} else {
				for i := 0; i+8 <= len(v); i += 8 {
					f64 = append(f64, math.Float64frombits(binary.LittleEndian.Uint64(v[i:])))
				}
			}
		case 11:
			u64 = append(u64, varints(typ, v, x)...)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if dt.Size() == 0 {
		return nil, name, fmt.Errorf("tensor %q: unsupported dtype %s", name, dt)
	}
	t := ir.NewTensor(dt, dims)
	switch {
	case raw != nil:
		if len(raw) != len(t.Data) {
			return nil, name, fmt.Errorf("tensor %q: raw_data has %d bytes, want %d", name, len(raw), len(t.Data))
		}
		copy(t.Data, raw)
	case f32 != nil:
		copy(t.F32(), f32)
	case f64 != nil:
		copy(t.F64(), f64)
	case i64 != nil:
		copy(t.I64(), i64)
	case u64 != nil:
		copy(t.U64(), u64)
	case i32 != nil: // int32_data holds every type of 32 bits or fewer
		for i, v := range i32 {
			switch dt.Size() {
			case 1:
				t.Data[i] = byte(v)
			case 2:
				binary.LittleEndian.PutUint16(t.Data[2*i:], uint16(v))
			case 4:
				binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(v))
			}
		}
	}
	return t, name, nil
}

func parseAttr(b []byte) (string, ir.Attr, error) {
	var name string
	var a ir.Attr
	var ints []int64
	var floats []float64
	var strs []string
	var kind int
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
			if typ == protowire.Fixed32Type {
				floats = append(floats, float64(math.Float32frombits(uint32(x))))
			} else {
				for i := 0; i+4 <= len(v); i += 4 {
					floats = append(floats, float64(math.Float32frombits(binary.LittleEndian.Uint32(v[i:]))))
				}
			}
		case 8:
			for _, u := range varints(typ, v, x) {
				ints = append(ints, int64(u))
			}
		case 9:
			strs = append(strs, string(v))
		case 20:
			kind = int(x)
		}
		return nil
	})
	switch kind {
	case 1:
		a.Kind = ir.AttrFloat
	case 2:
		a.Kind = ir.AttrInt
	case 3:
		a.Kind = ir.AttrString
	case 4:
		a.Kind = ir.AttrTensor
	case 6:
		a.Kind, a.Floats = ir.AttrFloats, floats
	case 7:
		a.Kind, a.Ints = ir.AttrInts, ints
	case 8:
		a.Kind, a.Strings = ir.AttrStrings, strs
	default:
		return name, a, fmt.Errorf("attribute %q: unsupported type %d", name, kind)
	}
	return name, a, err
}

func parseModel(path string) (*pbGraph, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g := &pbGraph{inits: map[string]*ir.Tensor{}}
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		if num != 7 {
			return nil
		}
		return fields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
			switch num {
			case 1:
				nd := pbNode{attrs: ir.Attrs{}}
				err := fields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
					switch num {
					case 1:
						nd.inputs = append(nd.inputs, string(v))
					case 2:
						nd.outputs = append(nd.outputs, string(v))
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
				if err != nil {
					return err
				}
				g.nodes = append(g.nodes, nd)
			case 5:
				t, name, err := parseTensor(v)
				if err != nil {
					return err
				}
				g.inits[name] = t
			case 11:
				return fields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
					if num == 1 {
						g.inputs = append(g.inputs, string(v))
					}
					return nil
				})
			}
			return nil
		})
	})
	return g, err
}

func loadPB(path string) (*ir.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, _, err := parseTensor(b)
	return t, err
}

// closeEnough compares at atol/rtol; NaNs must match.
func closeEnough(got, want *ir.Tensor, atol, rtol float64) error {
	if got.DType != want.DType || !shapeEq(got.Shape, want.Shape) {
		return fmt.Errorf("got %s, want %s", got, want)
	}
	g, err1 := got.Float64s()
	w, err2 := want.Float64s()
	if err1 != nil || err2 != nil {
		return fmt.Errorf("not numeric: %s", got.DType)
	}
	bad := 0
	var first string
	for i := range g {
		if math.IsNaN(w[i]) && math.IsNaN(g[i]) {
			continue
		}
		if math.IsInf(w[i], 0) && g[i] == w[i] {
			continue
		}
		if !(math.Abs(g[i]-w[i]) <= atol+rtol*math.Abs(w[i])) {
			if bad == 0 {
				first = fmt.Sprintf("element %d: got %g, want %g", i, g[i], w[i])
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d elements differ; first %s", bad, len(g), first)
	}
	return nil
}

// myOps are the ONNX op types this package implements (through the IR table).
func myOps() map[string]string {
	m := map[string]string{}
	mine := map[string]bool{}
	for _, op := range []string{"MatMul", "Conv2D", "Conv2DTranspose", "AvgPool", "MaxPool", "BatchNorm",
		"InstanceNorm", "LayerNorm", "Einsum", "Resize"} {
		mine[op] = true
	}
	for _, o := range ir.Ops() {
		if mine[o.Name] && o.Onnx != "" {
			m[o.Onnx] = o.Name
		}
	}
	return m
}

// runBackendCase runs one single-node backend test directory.
func runBackendCase(dir, irOp string) (skip string, err error) {
	g, err := parseModel(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return "", fmt.Errorf("model: %v", err)
	}
	if len(g.nodes) != 1 {
		return fmt.Sprintf("%d nodes", len(g.nodes)), nil
	}
	nd := g.nodes[0]
	vals := map[string]*ir.Tensor{}
	for k, v := range g.inits {
		vals[k] = v
	}
	inIdx := 0
	for _, name := range g.inputs {
		if _, ok := g.inits[name]; ok {
			continue
		}
		t, err := loadPB(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", inIdx)))
		if err != nil {
			return "", err
		}
		vals[name] = t
		inIdx++
	}
	node := &ir.Node{Name: nd.name, Op: irOp, Attrs: nd.attrs}
	in := make([]*ir.Tensor, len(nd.inputs))
	for i, name := range nd.inputs {
		if name != "" {
			in[i] = vals[name]
			if in[i] == nil {
				return "", fmt.Errorf("input %q not found", name)
			}
		}
	}
	out := make([]*ir.Tensor, len(nd.outputs))
	want := make([]*ir.Tensor, len(nd.outputs))
	for i, name := range nd.outputs {
		if name == "" {
			continue
		}
		w, err := loadPB(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", i)))
		if err != nil {
			return "", err
		}
		want[i] = w
		out[i] = ir.NewTensor(w.DType, w.Shape)
		// poison the output: kernels must not rely on zeroed memory
		if w.DType == ir.Float32 {
			for j := range out[i].F32() {
				out[i].F32()[j] = float32(math.NaN())
			}
		}
	}
	f, ok := kernel.Lookup(irOp)
	if !ok {
		return "", fmt.Errorf("op %s not registered", irOp)
	}
	if err := f(&kernel.Ctx{Threads: 2}, node, in, out); err != nil {
		var u *kernel.Unsupported
		if ok := asUnsupported(err, &u); ok {
			return "unsupported: " + u.Reason, nil
		}
		return "", err
	}
	for i := range out {
		if out[i] == nil {
			continue
		}
		atol, rtol := 1e-4, 1e-3
		if want[i].DType == ir.Float16 {
			atol, rtol = 1e-2, 1e-2
		}
		if err := closeEnough(out[i], want[i], atol, rtol); err != nil {
			return "", fmt.Errorf("output %d: %v", i, err)
		}
	}
	return "", nil
}

func asUnsupported(err error, u **kernel.Unsupported) bool {
	v, ok := err.(*kernel.Unsupported)
	if ok {
		*u = v
	}
	return ok
}

func TestONNXBackend(t *testing.T) {
	root := sharedDir(t)
	f, err := os.Open(filepath.Join(root, "manifest.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops := myOps()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	pass, fail, skip := 0, 0, 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 5 || cols[0] == "suite" {
			continue
		}
		irOp, ok := ops[cols[4]]
		if !ok {
			continue
		}
		dir := filepath.Join(root, cols[0], cols[1])
		t.Run(cols[0]+"/"+cols[1], func(t *testing.T) {
			reason, err := runBackendCase(dir, irOp)
			switch {
			case err != nil:
				fail++
				t.Error(err)
			case reason != "":
				skip++
				t.Skip(reason)
			default:
				pass++
			}
		})
	}
	t.Logf("backend tests: %d pass, %d fail, %d skipped", pass, fail, skip)
}
