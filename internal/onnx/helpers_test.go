package onnx

import (
	"gkconv/internal/repotest"
	"slices"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/onnx/onnxbuild"
)

func repoRoot(t testing.TB) string { return repotest.RepoRoot(t) }

func parseModel(t *testing.T, m *onnxbuild.Model, opts Options) (*Model, error) {
	t.Helper()
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return Parse(b, "", opts)
}

func mustGraph(t *testing.T, m *onnxbuild.Model) *ir.Graph {
	t.Helper()
	model, err := parseModel(t, m, Options{})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := model.Graph.Validate(); err != nil {
		t.Fatalf("invalid graph: %v", err)
	}
	return model.Graph
}

func opList(g *ir.Graph) []string {
	var ops []string
	for _, n := range g.Nodes {
		ops = append(ops, n.Op)
	}
	return ops
}

func wantOps(t *testing.T, g *ir.Graph, want ...string) {
	t.Helper()
	if got := opList(g); !slices.Equal(got, want) {
		t.Fatalf("ops = %v, want %v", got, want)
	}
}

func constInts(t *testing.T, v *ir.Value) []int64 {
	t.Helper()
	if !v.IsConst() {
		t.Fatalf("value %v is not a constant", v)
	}
	xs, err := v.Const.Int64s()
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

func constFloats(t *testing.T, v *ir.Value) []float64 {
	t.Helper()
	if !v.IsConst() {
		t.Fatalf("value %v is not a constant", v)
	}
	xs, err := v.Const.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

func i64(v ...int64) []int64    { return v }
func strs(v ...string) []string { return v }
