package benchmark

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
	"gkconv/internal/safefs"
)

// SplitList splits a comma-separated file list, dropping empty entries.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// RandomInputs makes one tensor per graph input from a PCG seeded with
// seed, so a benchmark without input files is repeatable: floats uniform in
// [-1, 1), integers in [0, 10), booleans 0 or 1, other types zero. Every
// input needs a static shape.
func RandomInputs(g *ir.Graph, seed uint64) ([]*ir.Tensor, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	var out []*ir.Tensor
	for _, v := range g.Inputs {
		if !v.ShapeKnown() {
			return nil, fmt.Errorf("input %s has dynamic shape %v", v.Name, v.Shape)
		}
		out = append(out, randomTensor(rng, v))
	}
	return out, nil
}

func randomTensor(rng *rand.Rand, v *ir.Value) *ir.Tensor {
	t := ir.NewTensor(v.DType, v.Shape)
	n := int(t.NumElements())
	switch {
	case v.DType.IsFloat():
		for i := 0; i < n; i++ {
			t.PutFloat(i, rng.Float64()*2-1)
		}
	case v.DType == ir.Bool:
		for i := range t.Data {
			t.Data[i] = byte(rng.IntN(2))
		}
	case v.DType == ir.Int64:
		for i := range t.I64() {
			t.I64()[i] = int64(rng.IntN(10))
		}
	case v.DType == ir.Int32:
		for i := range t.I32() {
			t.I32()[i] = int32(rng.IntN(10))
		}
	default:
		for i := range t.Data {
			t.Data[i] = 0
		}
	}
	return t
}

// LoadInputs reads one file per graph input (the files option flag gives),
// matched by the TensorProtos' names when they all name inputs, else in
// order, and checks each against its input's type and shape.
func LoadInputs(g *ir.Graph, flag string, files []string) ([]*ir.Tensor, error) {
	if len(files) != len(g.Inputs) {
		return nil, fmt.Errorf("%s gives %d file(s), the model has %d input(s) (%s)", flag, len(files), len(g.Inputs), valueNames(g.Inputs))
	}
	return loadTensors(g.Inputs, files, "input")
}

// LoadReferences reads the reference outputs: one file per output (matched
// by the TensorProtos' names when they all name outputs, else in order),
// or fewer .pb files, each naming the output it is the reference of;
// outputs without one are nil (not checked).
func LoadReferences(g *ir.Graph, flag string, files []string) ([]*ir.Tensor, error) {
	if len(files) > len(g.Outputs) {
		return nil, fmt.Errorf("%s gives %d file(s), the model has %d output(s) (%s)", flag, len(files), len(g.Outputs), valueNames(g.Outputs))
	}
	if len(files) == len(g.Outputs) {
		return loadTensors(g.Outputs, files, "reference")
	}
	index := map[string]int{}
	for i, v := range g.Outputs {
		index[v.Name] = i
	}
	out := make([]*ir.Tensor, len(g.Outputs))
	for _, file := range files {
		if !strings.HasSuffix(file, ".pb") {
			return nil, fmt.Errorf("%s gives %d file(s) for %d outputs: each must be a TensorProto .pb naming its output, %s is not", flag, len(files), len(g.Outputs), file)
		}
		t, name, err := onnx.ReadTensorFile(file)
		if err != nil {
			return nil, err
		}
		i, ok := index[name]
		switch {
		case name == "":
			return nil, fmt.Errorf("%s: the tensor has no name; with %d reference file(s) for %d outputs each must name its output (%s)", file, len(files), len(g.Outputs), valueNames(g.Outputs))
		case !ok:
			return nil, fmt.Errorf("%s: names %q, which is not an output of the model (%s)", file, name, valueNames(g.Outputs))
		case out[i] != nil:
			return nil, fmt.Errorf("%s: a second reference for output %q", file, name)
		}
		out[i] = t
	}
	return out, nil
}

func valueNames(vs []*ir.Value) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Name)
	}
	return strings.Join(s, ", ")
}

// loadTensors reads files for vals (as many of each); what ("input" or
// "reference") names them in messages, and inputs are checked against
// their values.
func loadTensors(vals []*ir.Value, files []string, what string) ([]*ir.Tensor, error) {
	out := make([]*ir.Tensor, len(vals))
	named := map[string]*ir.Tensor{}
	var positional []*ir.Tensor
	for i, file := range files {
		if strings.HasSuffix(file, ".bin") {
			t, err := readRaw(file, vals[i], what)
			if err != nil {
				return nil, err
			}
			positional = append(positional, t)
			continue
		}
		t, name, err := onnx.ReadTensorFile(file)
		if err != nil {
			return nil, err
		}
		if name != "" {
			named[name] = t
		}
		positional = append(positional, t)
	}
	byName := len(named) == len(vals)
	for i, v := range vals {
		t, ok := named[v.Name]
		if !byName || !ok {
			byName = false
			break
		}
		out[i] = t
	}
	if !byName {
		copy(out, positional)
	}
	if what == "input" {
		for i, v := range vals {
			if err := runtime.CheckInput(v, out[i]); err != nil {
				return nil, fmt.Errorf("%s: %w", files[i], err)
			}
		}
	}
	return out, nil
}

// readRaw reads a raw .bin file as v's type and static shape.
func readRaw(file string, v *ir.Value, what string) (*ir.Tensor, error) {
	if !v.ShapeKnown() {
		return nil, fmt.Errorf("%s: raw .bin needs a static shape, %s has %v", file, v.Name, v.Shape)
	}
	want, err := byteCount(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", file, what, v.Name, err)
	}
	// The shape declares the size: a larger file is refused before
	// anything is read, a FIFO before it is opened.
	if st, err := os.Stat(file); err == nil && st.Mode().IsRegular() && st.Size() != want {
		return nil, fmt.Errorf("%s: %d bytes, %s %s%v needs %d", file, st.Size(), what, v.DType, v.Shape, want)
	}
	data, err := safefs.ReadRegular(file, want)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != want {
		return nil, fmt.Errorf("%s: %d bytes, %s %s%v needs %d", file, len(data), what, v.DType, v.Shape, want)
	}
	return &ir.Tensor{DType: v.DType, Shape: v.Shape, Data: data}, nil
}

// byteCount is the bytes of a value's static shape, refusing overflow.
func byteCount(v *ir.Value) (int64, error) {
	if err := ir.CheckSize(v.Shape, v.DType); err != nil {
		return 0, err
	}
	return ir.NumElements(v.Shape) * int64(max(v.DType.Size(), 1)), nil
}

// WriteOutputs writes outputs as ONNX TensorProto files output_<i>.pb in
// dir (created when absent; flag names it in messages), each carrying its
// graph output's name so that LoadReferences matches it back by name.
func WriteOutputs(flag, dir string, g *ir.Graph, outs []*ir.Tensor) error {
	if st, err := os.Lstat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("%s %s: exists and is not a directory", flag, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	for i, t := range outs {
		p := filepath.Join(dir, fmt.Sprintf("output_%d.pb", i))
		if err := onnx.WriteTensorFile(p, g.Outputs[i].Name, t); err != nil {
			return fmt.Errorf("%s: writing %s: %w", flag, p, err)
		}
	}
	return nil
}
