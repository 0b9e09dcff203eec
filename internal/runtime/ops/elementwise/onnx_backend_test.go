package elementwise

import (
	"bufio"
	"encoding/binary"
	"errors"
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

// This file runs the ONNX backend node tests whose model is a single node of
// an op this package implements, straight through the kernels, with a small
// protowire reader of the few ONNX messages needed (the real frontend lives
// elsewhere and is not a dependency of this package).

type pbNode struct {
	op      string
	inputs  []string
	outputs []string
	attrs   ir.Attrs
}

type pbModel struct {
	opset   int64
	nodes   []pbNode
	inputs  []string
	outputs []string
	inits   map[string]*ir.Tensor
}

// fields walks the top-level fields of a message.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, u uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var u uint64
		switch typ {
		case protowire.VarintType:
			u, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			u = uint64(x)
		case protowire.Fixed64Type:
			u, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, v, u); err != nil {
			return err
		}
	}
	return nil
}

// repeatedVarint appends a packed or unpacked repeated varint field.
func repeatedVarint(dst []uint64, typ protowire.Type, v []byte, u uint64) []uint64 {
	if typ != protowire.BytesType {
		return append(dst, u)
	}
	for len(v) > 0 {
		x, n := protowire.ConsumeVarint(v)
		if n < 0 {
			break
		}
		dst = append(dst, x)
		v = v[n:]
	}
	return dst
}

func repeatedFixed(dst []uint64, typ protowire.Type, v []byte, u uint64, size int) []uint64 {
	if typ != protowire.BytesType {
		return append(dst, u)
	}
	for ; len(v) >= size; v = v[size:] {
		if size == 4 {
			dst = append(dst, uint64(binary.LittleEndian.Uint32(v)))
		} else {
			dst = append(dst, binary.LittleEndian.Uint64(v))
		}
	}
	return dst
}

func parseTensor(b []byte) (*ir.Tensor, error) {
	var dims, ints, i64s, u64s, f32s, f64s []uint64
	var dt ir.DType
	var raw []byte
	var strs []string
	hasRaw := false
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) error {
		switch num {
		case 1:
			dims = repeatedVarint(dims, typ, v, u)
		case 2:
			dt = ir.DType(u)
		case 4:
			f32s = repeatedFixed(f32s, typ, v, u, 4)
		case 5:
			ints = repeatedVarint(ints, typ, v, u)
		case 6:
			strs = append(strs, string(v))
		case 7:
			i64s = repeatedVarint(i64s, typ, v, u)
		case 9:
			raw, hasRaw = v, true
		case 10:
			f64s = repeatedFixed(f64s, typ, v, u, 8)
		case 11:
			u64s = repeatedVarint(u64s, typ, v, u)
		case 14:
			return errors.New("external data")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	shape := make([]int64, len(dims))
	for i, d := range dims {
		shape[i] = int64(d)
	}
	if dt.Size() == 0 && dt != ir.String {
		return nil, fmt.Errorf("dtype %s", dt)
	}
	if ne := ir.NumElements(shape); ne < 0 || ne > 1<<26 {
		return nil, fmt.Errorf("implausible shape %v", shape)
	}
	t := ir.NewTensor(dt, shape)
	n := int(t.NumElements())
	if hasRaw {
		if len(raw) != len(t.Data) {
			return nil, fmt.Errorf("raw_data has %d bytes, want %d", len(raw), len(t.Data))
		}
		copy(t.Data, raw)
		return t, nil
	}
	var src []uint64
	switch dt {
	case ir.Float32:
		src = f32s
	case ir.Float64:
		src = f64s
	case ir.Int64:
		src = i64s
	case ir.Uint32, ir.Uint64:
		src = u64s
	case ir.String:
		if len(strs) != n {
			return nil, fmt.Errorf("%d strings for %d elements", len(strs), n)
		}
		copy(t.Strings, strs)
		return t, nil
	default:
		src = ints
	}
	if len(src) != n {
		return nil, fmt.Errorf("%d values for %d elements of %s", len(src), n, dt)
	}
	sz := dt.Size()
	for i, v := range src {
		switch sz {
		case 1:
			t.Data[i] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(t.Data[2*i:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(v))
		case 8:
			binary.LittleEndian.PutUint64(t.Data[8*i:], v)
		}
	}
	return t, nil
}

func parseAttr(b []byte) (string, ir.Attr, error) {
	var name string
	var a ir.Attr
	var kind uint64
	var ints, floats []uint64
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) error {
		switch num {
		case 1:
			name = string(v)
		case 2:
			a.F = float64(math.Float32frombits(uint32(u)))
		case 3:
			a.I = int64(u)
		case 4:
			a.S = string(v)
		case 5:
			t, err := parseTensor(v)
			if err != nil {
				return err
			}
			a.T = t
		case 7:
			floats = repeatedFixed(floats, typ, v, u, 4)
		case 8:
			ints = repeatedVarint(ints, typ, v, u)
		case 9:
			a.Strings = append(a.Strings, string(v))
		case 20:
			kind = u
		}
		return nil
	})
	for _, f := range floats {
		a.Floats = append(a.Floats, float64(math.Float32frombits(uint32(f))))
	}
	for _, i := range ints {
		a.Ints = append(a.Ints, int64(i))
	}
	// AttributeProto.AttributeType: FLOAT=1 INT=2 STRING=3 TENSOR=4 FLOATS=6 INTS=7 STRINGS=8.
	a.Kind = map[uint64]ir.AttrKind{1: ir.AttrFloat, 2: ir.AttrInt, 3: ir.AttrString, 4: ir.AttrTensor,
		6: ir.AttrFloats, 7: ir.AttrInts, 8: ir.AttrStrings}[kind]
	return name, a, err
}

func parseModel(b []byte) (*pbModel, error) {
	m := &pbModel{inits: map[string]*ir.Tensor{}}
	valueName := func(v []byte) (string, error) {
		var name string
		err := fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
			if num == 1 {
				name = string(v)
			}
			return nil
		})
		return name, err
	}
	err := fields(b, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 8: // opset_import
			var domain string
			var ver int64
			if err := fields(v, func(num protowire.Number, _ protowire.Type, v []byte, u uint64) error {
				if num == 1 {
					domain = string(v)
				} else if num == 2 {
					ver = int64(u)
				}
				return nil
			}); err != nil {
				return err
			}
			if domain == "" || domain == "ai.onnx" {
				m.opset = ver
			}
		case 7: // graph
			return fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				switch num {
				case 1:
					nd := pbNode{attrs: ir.Attrs{}}
					err := fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
						switch num {
						case 1:
							nd.inputs = append(nd.inputs, string(v))
						case 2:
							nd.outputs = append(nd.outputs, string(v))
						case 4:
							nd.op = string(v)
						case 7:
							if len(v) > 0 && string(v) != "ai.onnx" {
								nd.op = string(v) + "::" + nd.op
							}
						case 5:
							name, a, err := parseAttr(v)
							if err != nil {
								return err
							}
							nd.attrs[name] = a
						}
						return nil
					})
					m.nodes = append(m.nodes, nd)
					return err
				case 5:
					t, err := parseTensor(v)
					if err != nil {
						return err
					}
					var tn string // TensorProto.name is field 8
					_ = fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
						if num == 8 {
							tn = string(v)
						}
						return nil
					})
					m.inits[tn] = t
				case 11:
					name, err := valueName(v)
					m.inputs = append(m.inputs, name)
					return err
				case 12:
					name, err := valueName(v)
					m.outputs = append(m.outputs, name)
					return err
				}
				return nil
			})
		}
		return nil
	})
	return m, err
}

func loadPB(path string) (*ir.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseTensor(b)
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
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// compareTensors checks got against want: exact for integers, bools and
// strings; atol/rtol for floats with NaN matching NaN.
func compareTensors(got, want *ir.Tensor, atol, rtol float64) error {
	if got.DType != want.DType {
		return fmt.Errorf("dtype %s, want %s", got.DType, want.DType)
	}
	if got.NumElements() != want.NumElements() {
		return fmt.Errorf("shape %v, want %v", got.Shape, want.Shape)
	}
	if got.DType == ir.String {
		for i := range want.Strings {
			if got.Strings[i] != want.Strings[i] {
				return fmt.Errorf("element %d = %q, want %q", i, got.Strings[i], want.Strings[i])
			}
		}
		return nil
	}
	if !got.DType.IsFloat() {
		if string(got.Data) != string(want.Data) {
			g, _ := got.Float64s()
			w, _ := want.Float64s()
			for i := range w {
				if g[i] != w[i] {
					return fmt.Errorf("element %d = %v, want %v", i, g[i], w[i])
				}
			}
			return errors.New("data differs")
		}
		return nil
	}
	g, _ := got.Float64s()
	w, _ := want.Float64s()
	for i := range w {
		a, b := g[i], w[i]
		if math.IsNaN(b) {
			if !math.IsNaN(a) {
				return fmt.Errorf("element %d = %v, want NaN", i, a)
			}
			continue
		}
		if math.IsInf(b, 0) {
			if a != b {
				return fmt.Errorf("element %d = %v, want %v", i, a, b)
			}
			continue
		}
		if math.Abs(a-b) > atol+rtol*math.Abs(b) || math.IsNaN(a) {
			return fmt.Errorf("element %d = %v, want %v", i, a, b)
		}
	}
	return nil
}

// runBackendTest runs one single-node backend test; skip reports why the
// test is not applicable.
func runBackendTest(dir string) (skip string, err error) {
	b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return "", err
	}
	m, err := parseModel(b)
	if err != nil {
		return "", fmt.Errorf("parse model: %v", err)
	}
	if len(m.nodes) != 1 {
		return "not a single-node model", nil
	}
	nd := m.nodes[0]
	info, ok := ir.OpFromOnnx(nd.op)
	if !ok {
		return "op " + nd.op + " not in the IR table", nil
	}
	f, ok := kernel.Lookup(info.Name)
	if !ok {
		return "op " + info.Name + " not implemented here", nil
	}
	if (nd.op == "Softmax" || nd.op == "LogSoftmax") && m.opset < 13 {
		return "pre-13 Softmax semantics are rewritten by the frontend", nil
	}
	vals := map[string]*ir.Tensor{}
	for k, v := range m.inits {
		vals[k] = v
	}
	idx := 0
	for _, name := range m.inputs {
		if _, isInit := m.inits[name]; isInit {
			continue
		}
		t, err := loadPB(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", idx)))
		if err != nil {
			return fmt.Sprintf("input %s is not a plain tensor of a supported dtype: %v", name, err), nil
		}
		vals[name] = t
		idx++
	}
	in := make([]*ir.Tensor, len(nd.inputs))
	for i, name := range nd.inputs {
		if name != "" {
			in[i] = vals[name]
		}
	}
	want := map[string]*ir.Tensor{}
	for i, name := range m.outputs {
		t, err := loadPB(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", i)))
		if err != nil {
			return fmt.Sprintf("output %s is not a plain tensor of a supported dtype: %v", name, err), nil
		}
		want[name] = t
	}
	out := make([]*ir.Tensor, len(nd.outputs))
	for i, name := range nd.outputs {
		w, ok := want[name]
		if !ok {
			if name == "" {
				continue
			}
			return "output " + name + " has no reference data", nil
		}
		out[i] = ir.NewTensor(w.DType, w.Shape)
	}
	node := &ir.Node{Name: filepath.Base(dir), Op: info.Name, Attrs: nd.attrs}
	if err := f(kernel.DefaultCtx(), node, in, out); err != nil {
		var u *kernel.Unsupported
		if errors.As(err, &u) {
			return "unsupported: " + u.Reason, nil
		}
		return "", err
	}
	for i, name := range nd.outputs {
		if out[i] == nil {
			continue
		}
		atol, rtol := 1e-4, 1e-3
		if out[i].DType == ir.Float16 || out[i].DType == ir.BFloat16 {
			atol, rtol = 1e-2, 1e-2
		}
		if err := compareTensors(out[i], want[name], atol, rtol); err != nil {
			return "", fmt.Errorf("output %s: %v", name, err)
		}
	}
	return "", nil
}

func TestONNXBackendNodes(t *testing.T) {
	base := filepath.Join(repoRoot(t), "..", "shared", "corpus", "onnx-backend")
	mf, err := os.Open(filepath.Join(base, "manifest.tsv"))
	if err != nil {
		t.Skipf("ONNX backend corpus not available (%v); it lives in ../shared beside the repo", err)
	}
	defer mf.Close()
	var passed, skipped int
	sc := bufio.NewScanner(mf)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 5 || cols[0] != "node" || strings.Contains(cols[4], ",") {
			continue
		}
		info, ok := ir.OpFromOnnx(cols[4])
		if !ok {
			continue
		}
		if _, mine := kernel.Lookup(info.Name); !mine {
			continue
		}
		dir := filepath.Join(base, "node", cols[1])
		skip, err := runBackendTest(dir)
		switch {
		case err != nil:
			t.Errorf("%s: %v", cols[1], err)
		case skip != "":
			skipped++
			if testing.Verbose() {
				t.Logf("%s: skipped: %s", cols[1], skip)
			}
		default:
			passed++
		}
	}
	t.Logf("backend node tests: %d passed, %d skipped", passed, skipped)
	if passed == 0 {
		t.Fatal("no backend test ran")
	}
}
