package runtime_test

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/rand"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/kernels/cpu"
	"gkconv/internal/runtime"
	"gkconv/internal/runtime/native"
	"gkconv/internal/testkit"
)

// The runtime's side of fused kernels, tested from outside the package:
// the CPU builder (a test-only import; the runtime imports no code
// generator) compiles the body, the runtime binds and runs it.

// gkModel is a graph with one GraphKernel node: y = LayerNorm-ish(x)*2 + Exp(x)
// over [rows, cols], plus the same body for reference runs.
func gkModel(t *testing.T, rows, cols int64) (*ir.Graph, *ir.Node) {
	body := testkit.New(t, "body")
	x := body.Input("bx", rows, cols)
	mean := body.Op("ReduceMean", nil, x, body.Ints(-1))
	d := body.Op("Sub", nil, x, mean)
	y := body.Op("Add", nil, body.Op("Mul", nil, d, body.Scalar(2)), body.Op("Exp", nil, x))
	n := body.GraphKernel("fused0", y)

	g := testkit.New(t, "model")
	n.Inputs = []*ir.Value{g.Input("x", rows, cols)}
	g.G.Nodes = append(g.G.Nodes, n)
	return g.Output(g.Node("relu", "ReLU", nil, n.Outputs[0])), n
}

func runModel(t *testing.T, g *ir.Graph, threads int, x *ir.Tensor) ([]float32, error) {
	s, err := runtime.NewSession(g, runtime.Options{Threads: threads, KernelPolicy: runtime.KernelPolicy{TrustEmbedded: true}})
	if err != nil {
		return nil, err
	}
	out, err := s.Run([]*ir.Tensor{x})
	if err != nil {
		return nil, err
	}
	return out[0].F32(), nil
}

func randInput(rows, cols int64) *ir.Tensor {
	x := ir.NewTensor(ir.Float32, []int64{rows, cols})
	r := rand.New(rand.NewSource(1))
	for i := range x.F32() {
		x.F32()[i] = float32(r.Float64()*4 - 2)
	}
	return x
}

func TestGraphKernelCompiledMatchesInterpreted(t *testing.T) {
	if !native.Available {
		t.Skip("built without cgo")
	}
	g, n := gkModel(t, 96, 500)
	x := randInput(96, 500)
	n.Attrs[ir.GKKernelStatus] = ir.StringAttr("interpreted")
	want, err := runModel(t, g, 1, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := cpu.NewBuilder(cpu.Options{CacheDir: t.TempDir()}).BuildKernels([]*ir.Node{n}); err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 2} {
		got, err := runModel(t, g, threads, x)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("threads %d: out[%d] = %g, interpreted %g", threads, i, got[i], want[i])
			}
		}
	}
}

func TestGraphKernelRefusals(t *testing.T) {
	if !native.Available {
		t.Skip("built without cgo")
	}
	x := randInput(4, 8)
	// Unbuilt and unmarked: refused.
	g, n := gkModel(t, 4, 8)
	if _, err := runModel(t, g, 1, x); err == nil || !strings.Contains(err.Error(), "kernel_status=interpreted") {
		t.Fatalf("unbuilt kernel: err = %v", err)
	}
	if err := cpu.NewBuilder(cpu.Options{CacheDir: t.TempDir()}).BuildKernels([]*ir.Node{n}); err != nil {
		t.Fatal(err)
	}
	// Tampered object: refused by hash.
	good := n.Attrs[ir.GKKernelSO]
	bad := append([]byte(nil), good.B...)
	bad[len(bad)-100] ^= 1
	n.Attrs[ir.GKKernelSO] = ir.BytesAttr(bad)
	if _, err := runModel(t, g, 1, x); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("tampered kernel: err = %v", err)
	}
	n.Attrs[ir.GKKernelSO] = good
	// An ISA extension this host lacks: refused with the flag named.
	n.Attrs[ir.GKCPUFlags] = ir.StringAttr(n.Attrs.String(ir.GKCPUFlags, "") + ",gkconv_imaginary_isa")
	if _, err := runModel(t, g, 1, x); err == nil || !strings.Contains(err.Error(), "gkconv_imaginary_isa") {
		t.Fatalf("missing ISA: err = %v", err)
	}
	n.Attrs[ir.GKArch] = ir.StringAttr("riscv64")
	if _, err := runModel(t, g, 1, x); err == nil || !strings.Contains(err.Error(), "riscv64") {
		t.Fatalf("wrong arch: err = %v", err)
	}
}

// TestKernelPolicy: without trust the embedded object is never loaded (a
// garbage object with a matching hash does not matter); Rebuild's object is
// loaded instead; without Rebuild the body runs interpreted with one
// warning; a node with no body needs trust, and the error says how to
// opt in.
func TestKernelPolicy(t *testing.T) {
	if !native.Available {
		t.Skip("built without cgo")
	}
	x := randInput(8, 16)
	g, n := gkModel(t, 8, 16)
	n.Attrs[ir.GKKernelStatus] = ir.StringAttr("interpreted")
	want, err := runModel(t, g, 1, x)
	if err != nil {
		t.Fatal(err)
	}
	built := &ir.Node{Name: n.Name, Op: n.Op, Inputs: n.Inputs, Outputs: n.Outputs, Body: n.Body, Attrs: ir.Attrs{}}
	if err := cpu.NewBuilder(cpu.Options{CacheDir: t.TempDir()}).BuildKernels([]*ir.Node{built}); err != nil {
		t.Fatal(err)
	}
	// The model's object is garbage with a matching sha256: loading it would fail.
	junk := append([]byte("\x7fELF"), make([]byte, 200)...)
	sum := sha256.Sum256(junk)
	n.Attrs[ir.GKKernelSO] = ir.BytesAttr(junk)
	n.Attrs[ir.GKKernelSOHash] = ir.StringAttr(hex.EncodeToString(sum[:]))
	n.Attrs[ir.GKKernelName] = built.Attrs[ir.GKKernelName]
	n.Attrs[ir.GKKernelStatus] = ir.StringAttr("compiled")

	run := func(p runtime.KernelPolicy) ([]float32, []runtime.KernelBinding, error) {
		s, err := runtime.NewSession(g, runtime.Options{Threads: 1, KernelPolicy: p})
		if err != nil {
			return nil, nil, err
		}
		out, err := s.Run([]*ir.Tensor{x})
		if err != nil {
			return nil, nil, err
		}
		return out[0].F32(), s.Kernels(), nil
	}
	same := func(what string, got []float32) {
		t.Helper()
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("%s: out[%d] = %g, want %g", what, i, got[i], want[i])
			}
		}
	}
	rebuilds := 0
	rebuild := func(m *ir.Node) ([]byte, string, error) {
		rebuilds++
		return built.Attrs[ir.GKKernelSO].B, built.Attrs.String(ir.GKKernelName, ""), nil
	}
	got, ks, err := run(runtime.KernelPolicy{Rebuild: rebuild, Warn: func(w string) { t.Errorf("unexpected warning %q", w) }})
	if err != nil {
		t.Fatal(err)
	}
	same("rebuilt", got)
	if rebuilds != 1 || len(ks) != 1 || ks[0].Mode != runtime.KernelRebuilt {
		t.Fatalf("rebuilt: %d rebuilds, bindings %+v", rebuilds, ks)
	}
	var warned []string
	got, ks, err = run(runtime.KernelPolicy{Warn: func(w string) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	same("interpreted", got)
	if len(ks) != 1 || ks[0].Mode != runtime.KernelInterpreted || len(warned) != 1 || !strings.Contains(warned[0], "1 fused kernel runs interpreted (slower)") {
		t.Fatalf("interpreted: bindings %+v, warnings %q", ks, warned)
	}
	// Trusted: the (garbage) embedded object is what loads, and fails.
	if _, _, err := run(runtime.KernelPolicy{TrustEmbedded: true, Rebuild: rebuild}); err == nil || !strings.Contains(err.Error(), "dlopen") {
		t.Fatalf("trusted garbage object: err = %v", err)
	}
	// No body: only trust can run it.
	n.Body = nil
	if _, _, err := run(runtime.KernelPolicy{Rebuild: rebuild}); err == nil || !strings.Contains(err.Error(), "--trustEmbeddedKernels") {
		t.Fatalf("no body: err = %v", err)
	}
}
