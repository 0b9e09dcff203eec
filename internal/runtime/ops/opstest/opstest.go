// Package opstest runs the ONNX backend node tests (../shared/corpus/onnx-backend)
// on the CPU kernels of an op package. Models are read by the project's ONNX
// frontend, so the kernels see the IR nodes the converter produces. Only
// tests import it; it registers no kernels itself, so a test binary runs the
// kernels of the op package under test and nothing else.
package opstest

import (
	"errors"
	"fmt"
	"gkconv/internal/repotest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime/opkernel"
)

// Entry is one row of the backend corpus manifest.
type Entry struct {
	Suite, Test string
	Ops         []string // ONNX op types the model uses
	Dir         string   // the test folder: model.onnx, test_data_set_0/
	ORT         string   // onnxruntime 1.30's result on it: "pass", "fail", ...
}

// Name is "suite/test", the subtest name.
func (e Entry) Name() string { return e.Suite + "/" + e.Test }

// Manifest reads corpus/onnx-backend/manifest.tsv, skipping the test when the
// corpus is absent.
func Manifest(t testing.TB) []Entry {
	t.Helper()
	root := repotest.SharedDir(t, "corpus/onnx-backend")
	path := filepath.Join(root, "manifest.tsv")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("ONNX backend manifest %s is unreadable (%v): skipping", path, err)
	}
	var out []Entry
	for i, line := range strings.Split(string(b), "\n") {
		cols := strings.Split(line, "\t")
		if i == 0 || len(cols) < 5 {
			continue // header, trailing newline
		}
		out = append(out, Entry{
			Suite: cols[0], Test: cols[1], Ops: strings.Split(cols[4], ","),
			Dir: filepath.Join(root, cols[0], cols[1]),
		})
		if len(cols) > 7 {
			out[len(out)-1].ORT = cols[7]
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s lists no tests", path)
	}
	return out
}

// Filter picks the manifest entries an op package runs.
type Filter struct {
	// Suites limits the suites ("node", "simple", "pytorch-converted", ...);
	// empty takes all.
	Suites []string
	// Ops is the set of IR ops under test. An entry is taken when every ONNX op
	// it uses maps to one of them, and at least one does.
	Ops map[string]bool
	// WithConstant also takes entries whose other ops are Constant nodes.
	WithConstant bool
}

// Select returns the entries f takes, in manifest order.
func Select(entries []Entry, f Filter) []Entry {
	var out []Entry
	for _, e := range entries {
		if len(f.Suites) > 0 && !slices.Contains(f.Suites, e.Suite) {
			continue
		}
		mine, foreign := false, false
		for _, op := range e.Ops {
			if info, ok := ir.OpFromOnnx(op); ok && f.Ops[info.Name] {
				mine = true
			} else if !(f.WithConstant && op == "Constant") {
				foreign = true
			}
		}
		if mine && !foreign {
			out = append(out, e)
		}
	}
	return out
}

// OpSet builds a set of IR op names.
func OpSet(ops ...string) map[string]bool {
	m := make(map[string]bool, len(ops))
	for _, op := range ops {
		m[op] = true
	}
	return m
}

// RegisteredOps is the set of IR ops with a kernel in this test binary: the
// ops of the package under test.
func RegisteredOps() map[string]bool { return OpSet(opkernel.Registered()...) }

// Skip is the error for a test that does not apply here: the frontend does
// not take the model, it needs a kernel of another package, or a kernel
// reports the case as opkernel.Unsupported.
type Skip struct{ Reason string }

func (s *Skip) Error() string { return "not applicable: " + s.Reason }

func skipf(format string, args ...any) error { return &Skip{Reason: fmt.Sprintf(format, args...)} }

// Case is one backend test loaded through the ONNX frontend.
type Case struct {
	Entry
	Graph  *ir.Graph
	Opset  int64
	Inputs []*ir.Tensor // by Graph.Inputs
	Want   []*ir.Tensor // by Graph.Outputs
}

// Load reads the model and test_data_set_0 of e. Models the frontend
// reports unsupported and graphs with ops that have no kernel in this binary
// give a *Skip.
func Load(e Entry) (*Case, error) {
	path := filepath.Join(e.Dir, "model.onnx")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Parse, not Open: the tensors alias data, which the GC keeps alive.
	m, err := onnx.Parse(data, e.Dir, onnx.Options{Name: path})
	if err != nil {
		var u *onnx.UnsupportedError
		if errors.As(err, &u) {
			return nil, &Skip{Reason: err.Error()}
		}
		return nil, err
	}
	c := &Case{Entry: e, Graph: m.Graph, Opset: m.Opset}
	for _, n := range c.Graph.Nodes {
		if _, ok := opkernel.Lookup(n.Op); !ok {
			return nil, skipf("the frontend made node %s, whose kernel is in another package", n)
		}
	}
	ds := filepath.Join(e.Dir, "test_data_set_0")
	for i := range c.Graph.Inputs {
		t, _, err := onnx.ReadTensorFile(filepath.Join(ds, fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			return nil, err
		}
		c.Inputs = append(c.Inputs, t)
	}
	for i := range c.Graph.Outputs {
		t, _, err := onnx.ReadTensorFile(filepath.Join(ds, fmt.Sprintf("output_%d.pb", i)))
		if err != nil {
			return nil, err
		}
		c.Want = append(c.Want, t)
	}
	return c, nil
}

// Run executes the graph node by node on the registered kernels with
// ctx.Threads = threads. Every tensor a kernel writes is first passed to fill
// (nil leaves it zeroed), so elements a kernel forgets to write show up.
// Graph outputs take the expected outputs' dtypes and shapes, intermediates
// those the frontend inferred. It returns the graph outputs.
func (c *Case) Run(threads int, fill func(*ir.Tensor)) ([]*ir.Tensor, error) {
	vals := map[*ir.Value]*ir.Tensor{}
	for _, v := range c.Graph.Consts {
		vals[v] = v.Const
	}
	for i, v := range c.Graph.Inputs {
		vals[v] = c.Inputs[i]
	}
	want := map[*ir.Value]*ir.Tensor{}
	for i, v := range c.Graph.Outputs {
		want[v] = c.Want[i]
	}
	ctx := &opkernel.Ctx{Threads: threads}
	for _, n := range c.Graph.Nodes {
		f, ok := opkernel.Lookup(n.Op)
		if !ok {
			return nil, skipf("node %s has no kernel in this package", n)
		}
		in := make([]*ir.Tensor, len(n.Inputs))
		for i, v := range n.Inputs {
			if v == nil {
				continue // omitted optional input
			}
			if in[i] = vals[v]; in[i] == nil {
				return nil, fmt.Errorf("node %s: input %d (%s) has no value", n, i, v.Name)
			}
		}
		out := make([]*ir.Tensor, len(n.Outputs))
		for i, v := range n.Outputs {
			switch w := want[v]; {
			case w != nil:
				out[i] = ir.NewTensor(w.DType, w.Shape)
			case v.Name == "":
				continue // omitted optional output
			case v.ShapeKnown() && v.DType != ir.Undefined:
				out[i] = ir.NewTensor(v.DType, v.Shape)
			default:
				return nil, skipf("node %s: the shape of intermediate %s is unknown before running", n, v.Name)
			}
			if fill != nil {
				fill(out[i])
			}
			vals[v] = out[i]
		}
		if err := f(ctx, n, in, out); err != nil {
			var u *opkernel.Unsupported
			if errors.As(err, &u) {
				return nil, &Skip{Reason: err.Error()}
			}
			return nil, fmt.Errorf("node %s: %w", n, err)
		}
	}
	got := make([]*ir.Tensor, len(c.Graph.Outputs))
	for i, v := range c.Graph.Outputs {
		if got[i] = vals[v]; got[i] == nil {
			return nil, fmt.Errorf("graph output %s was not computed", v.Name)
		}
	}
	return got, nil
}
