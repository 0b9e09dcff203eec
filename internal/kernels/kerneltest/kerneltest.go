// Package kerneltest holds the reference helpers the device-kernel tests
// share: corpus models fused for a backend, and fused bodies run on the
// runtime's op library (without importing internal/runtime). Tests only.
package kerneltest

import (
	"gkconv/internal/repotest"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/fusion"
	"gkconv/internal/ir"
	"gkconv/internal/kernels"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime/kernel"

	_ "gkconv/internal/runtime/ops/elementwise"
	_ "gkconv/internal/runtime/ops/nn"
	_ "gkconv/internal/runtime/ops/tensorops"
)

// SharedDir is ../shared beside the repository; the test is skipped when
// it is absent.
func SharedDir(t testing.TB) string { return repotest.SharedDir(t, "") }

// FusedKernels loads a corpus model, fuses it for be at flags and returns
// its GraphKernel nodes.
func FusedKernels(t testing.TB, model, flags string, be akgcfg.Backend) []*ir.Node {
	t.Helper()
	path := filepath.Join(SharedDir(t), "corpus", "models", model, "model.onnx")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s absent", path)
	}
	m, err := onnx.Open(path, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	f, _, err := akgcfg.ParseFlags(flags, "test")
	if err != nil {
		t.Fatal(err)
	}
	f.Resolve(be)
	if _, err := fusion.Run(m.Graph, f, be, nil, fusion.Options{}); err != nil {
		t.Fatalf("%s: fusion: %v", model, err)
	}
	var ks []*ir.Node
	for _, n := range m.Graph.Nodes {
		if n.Op == fusion.OpGraphKernel {
			ks = append(ks, n)
		}
	}
	return ks
}

// BodyInputs makes deterministic inputs for a body: floats in [-2, 2],
// integers in [0, 8), booleans alternating.
func BodyInputs(body *ir.Graph, seed int64) []*ir.Tensor {
	r := rand.New(rand.NewSource(seed))
	var out []*ir.Tensor
	for _, v := range body.Inputs {
		t := ir.NewTensor(v.DType, v.Shape)
		n := int(ir.NumElements(v.Shape))
		for i := 0; i < n; i++ {
			switch {
			case v.DType.IsFloat():
				kernels.PutNumber(t, i, -2+4*r.Float64())
			case v.DType == ir.Bool:
				kernels.PutNumber(t, i, float64(i%2))
			default:
				kernels.PutNumber(t, i, float64(r.Intn(8)))
			}
		}
		out = append(out, t)
	}
	return out
}

// RefRun runs a body on the runtime's op library.
func RefRun(t testing.TB, body *ir.Graph, inputs []*ir.Tensor) []*ir.Tensor {
	t.Helper()
	env := map[*ir.Value]*ir.Tensor{}
	for i, v := range body.Inputs {
		env[v] = inputs[i]
	}
	get := func(v *ir.Value) *ir.Tensor {
		if v == nil {
			return nil
		}
		if v.Const != nil {
			return v.Const
		}
		x, ok := env[v]
		if !ok {
			t.Fatalf("value %s has no data", v.Name)
		}
		return x
	}
	for _, n := range body.Nodes {
		var in []*ir.Tensor
		for _, v := range n.Inputs {
			in = append(in, get(v))
		}
		f, ok := kernel.Lookup(n.Op)
		if !ok {
			t.Fatalf("node %s: runtime has no op %s", n.Name, n.Op)
		}
		var out []*ir.Tensor
		for _, o := range n.Outputs {
			if o == nil {
				out = append(out, nil)
				continue
			}
			out = append(out, ir.NewTensor(o.DType, o.Shape))
		}
		if err := f(&kernel.Ctx{Threads: 1}, n, in, out); err != nil {
			t.Fatalf("node %s: %v", n.Name, err)
		}
		for i, o := range n.Outputs {
			if o != nil {
				env[o] = out[i]
			}
		}
	}
	var res []*ir.Tensor
	for _, o := range body.Outputs {
		res = append(res, get(o))
	}
	return res
}

// CompareTensors checks got against want at rel relative error, the scale
// of each element being at least 0.1 of the tensor's largest magnitude: an
// absolute floor of rel/10 * max|want| (about 8 float32 ulps of the largest
// element at rel 1e-5). Results that cancel to near zero (LayerNorm's
// x*rstd*gamma + beta, GeLU's 1 + erf(x) for negative x) cannot be more
// accurate than the terms that cancelled, and those are of the tensor's
// magnitude.
func CompareTensors(t testing.TB, what string, got, want *ir.Tensor, rel float64) {
	t.Helper()
	if got.DType != want.DType || ir.NumElements(got.Shape) != ir.NumElements(want.Shape) {
		t.Errorf("%s: got %s%v, want %s%v", what, got.DType, got.Shape, want.DType, want.Shape)
		return
	}
	g, err1 := got.Float64s()
	w, err2 := want.Float64s()
	if err1 != nil || err2 != nil {
		t.Errorf("%s: %v %v", what, err1, err2)
		return
	}
	var maxAbs float64
	for _, x := range w {
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			maxAbs = math.Max(maxAbs, math.Abs(x))
		}
	}
	bad := 0
	for i := range w {
		if math.IsNaN(w[i]) || math.IsNaN(g[i]) {
			if math.IsNaN(w[i]) != math.IsNaN(g[i]) {
				if bad < 3 {
					t.Errorf("%s[%d] = %g, want %g", what, i, g[i], w[i])
				}
				bad++
			}
			continue
		}
		if math.IsInf(w[i], 0) || math.IsInf(g[i], 0) {
			if w[i] != g[i] {
				if bad < 3 {
					t.Errorf("%s[%d] = %g, want %g", what, i, g[i], w[i])
				}
				bad++
			}
			continue
		}
		d := math.Abs(g[i] - w[i])
		if d > rel*math.Max(math.Abs(w[i]), 0.1*maxAbs) && d > 1e-30 {
			if bad < 3 {
				t.Errorf("%s[%d] = %.9g, want %.9g (rel %.3g)", what, i, g[i], w[i], d/math.Max(math.Abs(w[i]), 1e-30))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements off", what, bad, len(w))
	}
}
