// Package kerneltest holds the reference helpers the device-kernel tests
// share: corpus models fused for a backend, and fused bodies run on the
// runtime's op library (without importing internal/runtime). Tests only.
package kerneltest

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/fusion"
	"gkconv/internal/ir"
	"gkconv/internal/kernels"
	"gkconv/internal/onnx"
	"gkconv/internal/randgraph"
	"gkconv/internal/repotest"
	"gkconv/internal/runtime/opkernel"

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
	return fuse(t, m.Graph, model, flags, be)
}

// fuse runs fusion on g for be at flags and returns its GraphKernel nodes.
func fuse(t testing.TB, g *ir.Graph, name, flags string, be akgcfg.Backend) []*ir.Node {
	t.Helper()
	f, _, err := akgcfg.ParseFlags(flags, "test")
	if err != nil {
		t.Fatal(err)
	}
	f.Resolve(be)
	if _, err := fusion.Run(g, f, be, nil, fusion.Options{}); err != nil {
		t.Fatalf("%s: fusion: %v", name, err)
	}
	var ks []*ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpGraphKernel {
			ks = append(ks, n)
		}
	}
	return ks
}

// RandomKernels fuses the random model of seed (internal/randgraph) for be
// at opt_level 2 and returns its GraphKernel nodes.
func RandomKernels(t testing.TB, seed int64, be akgcfg.Backend) ([]*ir.Node, randgraph.Info) {
	t.Helper()
	m, info := randgraph.Model(seed)
	data, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("random seed %d", seed)
	model, err := onnx.Parse(data, "", onnx.Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return fuse(t, model.Graph, name, "--opt_level=2", be), info
}

// Conditioned is the per-output tolerance for random graphs: three times
// the float32 op library's own error against the body evaluated in float64
// (the kernel's error plus the reference's, with slack), and never less
// than the corpus tests' 1e-5. A random graph can be ill-conditioned at its
// input (GPU seed 18: a LayerNorm of a thrice-softmaxed row, where the
// emulation and the op library are 1.3e-5 and 1.7e-5 off the float64 result).
func Conditioned(t testing.TB, n *ir.Node, in, want []*ir.Tensor) []float64 {
	exact := RefRun(t, randgraph.Float64Body(n.Body), randgraph.Float64Tensors(in))
	rels := make([]float64, len(want))
	for k := range want {
		rels[k] = math.Max(1e-5, 3*randgraph.ScaledError(want[k], exact[k]))
	}
	return rels
}

// RandomSeeds is how many random models a test checks: n, a third under
// -short, or $GKCONV_RANDOM_SEEDS to explore more.
func RandomSeeds(t testing.TB, n int) int {
	if s := os.Getenv("GKCONV_RANDOM_SEEDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("GKCONV_RANDOM_SEEDS=%q: want a positive count", s)
		}
		return v
	}
	if testing.Short() {
		return n / 3
	}
	return n
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
		f, ok := opkernel.Lookup(n.Op)
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
		if err := f(&opkernel.Ctx{Threads: 1}, n, in, out); err != nil {
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

// Tolerance gives the relative tolerance of each output of kernel n whose
// body computed want from in on the op library; nil means 1e-5 for all.
type Tolerance func(t testing.TB, n *ir.Node, in, want []*ir.Tensor) []float64

// CheckAgainstRef compares got, the outputs a device kernel computed from
// in, with n's body run on the op library; label names the kernel in
// failures.
func CheckAgainstRef(t testing.TB, n *ir.Node, in, got []*ir.Tensor, label string, tol Tolerance) {
	t.Helper()
	want := RefRun(t, n.Body, in)
	rels := make([]float64, len(want))
	for k := range rels {
		rels[k] = 1e-5
	}
	if tol != nil {
		rels = tol(t, n, in, want)
	}
	for k := range want {
		CompareTensors(t, fmt.Sprintf("%s output %d", label, k), got[k], want[k], rels[k])
	}
}
