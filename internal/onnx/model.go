package onnx

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"gkconv/internal/ir"
	"gkconv/internal/textsafe"
)

// Options tune loading.
type Options struct {
	// InputShapes fixes dynamic input dims, by input name. The rank must match
	// the model's and fixed dims must agree; a dim < 0 keeps the model's dim.
	InputShapes map[string][]int64
	// Name labels errors of Parse (Open uses the path); default "<memory>".
	Name string
	// KeepFloat16 computes float16 ops in float16 (rounded after every op, as
	// the graph reads) instead of as onnxruntime's CPU provider does: ops it
	// has no float16 kernel for run in float32 between Casts, and Cast pairs
	// that undo each other are removed (ort_float16.go).
	KeepFloat16 bool
}

// MaxOpset is the newest ai.onnx opset this converter knows (the ONNX
// backend suite's newest tests): a later one may change what an op means,
// so it is refused rather than read as an older one (as onnxruntime does).
const MaxOpset = 28

// Model is a loaded ONNX model. Graph's weight tensors alias the mapped file:
// they stay valid until Close.
type Model struct {
	Graph     *ir.Graph
	Opset     int64 // default-domain opset
	IRVersion int64
	maps      [][]byte
}

// Close unmaps the model and its external data files; Graph's tensors that
// came from raw_data must not be used afterwards.
func (m *Model) Close() error {
	var first error
	for _, d := range m.maps {
		ir.UnregisterMapping(d)
		if err := syscall.Munmap(d); err != nil && first == nil {
			first = err
		}
	}
	m.maps = nil
	return first
}

// Unsupported is one node the converter cannot take.
type Unsupported struct {
	Node   string // ONNX node name (synthesized as <op>_<index> when it has none)
	Op     string // ONNX op type, with its domain when not the default one
	Reason string
}

// UnsupportedError lists every unsupported node of a model.
type UnsupportedError struct {
	File  string
	Items []Unsupported
}

func (e *UnsupportedError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %d unsupported node(s):", textsafe.Escape(e.File), len(e.Items))
	for _, it := range e.Items {
		// Model strings are escaped: a name cannot start a line of its own.
		fmt.Fprintf(&sb, "\n  %s: %s (%s)", textsafe.Escape(it.Node), textsafe.Escape(it.Op), textsafe.Escape(it.Reason))
	}
	return sb.String()
}

// Open maps an ONNX file and builds its graph without copying the weights.
func Open(path string, opts Options) (*Model, error) {
	data, err := mmapFile(path)
	if err != nil {
		return nil, err
	}
	m := &Model{}
	if len(data) > 0 {
		m.maps = append(m.maps, data)
		ir.RegisterMapping(data) // passes may drop weight pages they replaced
	}
	if err := m.load(data, filepath.Dir(path), path, opts); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Parse builds a model from bytes, which the graph's tensors alias; dir is
// the folder external data is relative to ("" refuses external data).
func Parse(data []byte, dir string, opts Options) (*Model, error) {
	name := opts.Name
	if name == "" {
		name = "<memory>"
	}
	m := &Model{}
	if err := m.load(data, dir, name, opts); err != nil {
		return nil, err
	}
	return m, nil
}

// loader holds the state of one load.
type loader struct {
	model *Model
	file  string
	dir   string
	side  map[string][]byte
}

func (m *Model) load(data []byte, dir, file string, opts Options) error {
	if len(data) == 0 {
		return fmt.Errorf("%s: empty file", file)
	}
	rm, err := decodeModel(data)
	if err != nil {
		var de *ir.DepthError
		if errors.As(err, &de) {
			return fmt.Errorf("%s: %w", file, de)
		}
		return fmt.Errorf("%s: not a valid ONNX model (truncated or corrupt): %w", file, err)
	}
	if rm.graph == nil {
		return fmt.Errorf("%s: the model has no graph", file)
	}
	l := &loader{model: m, file: file, dir: dir}
	m.IRVersion = rm.pb.GetIrVersion()
	m.Opset = 1 // IR version 1-2 models without opset_import are opset 1
	for _, o := range rm.pb.GetOpsetImport() {
		if d := o.GetDomain(); d == "" || d == "ai.onnx" {
			m.Opset = o.GetVersion()
		}
	}
	if m.Opset < 1 || m.Opset > MaxOpset {
		return fmt.Errorf("%s: ai.onnx opset %d: this converter reads opsets 1 to %d", file, m.Opset, MaxOpset)
	}
	b := newBuilder(l, rm, m.Opset, opts)
	g, err := b.build()
	if err != nil {
		return err
	}
	// The decoder kept the bodies within ir.MaxGraphDepth; this also
	// covers the level an opset-8 Scan adds (subgraph.go scan8).
	if err := ir.CheckGraphDepth(g); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	g.Meta["onnx.opset"] = fmt.Sprint(m.Opset)
	g.Meta["onnx.ir_version"] = fmt.Sprint(m.IRVersion)
	g.Meta["producer_name"] = rm.pb.GetProducerName()
	g.Meta["producer_version"] = rm.pb.GetProducerVersion()
	if allInfer(g) {
		if err := ir.InferShapes(g); err != nil {
			return fmt.Errorf("%s: shape inference: %w", file, err)
		}
	}
	m.Graph = g
	return nil
}

func allInfer(g *ir.Graph) bool {
	for _, n := range g.Nodes {
		if !ir.HasInfer(n.Op) {
			return false
		}
	}
	return true
}
