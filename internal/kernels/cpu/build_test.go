package cpu

import (
	"encoding/json"
	"gkconv/internal/repotest"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
	"gkconv/internal/runtime/native"
	"gkconv/internal/testkit"
)

func affineNode(t *testing.T, name string, k float32) *ir.Node {
	b := testkit.New(t, name)
	x := b.Input("", 8, 16)
	return b.GraphKernel(name, b.Op("Add", nil, b.Op("Mul", nil, x, b.Scalar(k)), b.Scalar(1)))
}

func TestCacheHitRunsNoCompiler(t *testing.T) {
	dir := t.TempDir()
	b1 := build(t, dir, affineNode(t, "a", 2), affineNode(t, "b", 2), affineNode(t, "c", 3))
	if b1.Stats.Kernels != 3 || b1.Stats.Unique != 2 || b1.Stats.Compiled != 2 {
		t.Fatalf("first build: %+v, want 3 kernels, 2 unique, 2 compiled", b1.Stats)
	}
	before := ccRuns.Load()
	n := affineNode(t, "a", 2)
	b2 := build(t, dir, n)
	if b2.Stats.CacheHits != 1 || b2.Stats.Compiled != 0 {
		t.Fatalf("second build: %+v, want one cache hit", b2.Stats)
	}
	if runs := ccRuns.Load() - before; runs != 0 {
		t.Fatalf("second build ran the compiler %d times", runs)
	}
	out := runKernel(t, n, 1, ir.Float32Tensor([]int64{8, 16}, 1, 2, 3))
	if got := out[0].F32()[:4]; got[0] != 3 || got[1] != 5 || got[2] != 7 || got[3] != 1 {
		t.Fatalf("cached kernel computes %v", got)
	}
}

func TestConcurrentBuildsShareCache(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	nodes := make([][]*ir.Node, 6)
	for i := range nodes {
		for k := 0; k < 4; k++ {
			nodes[i] = append(nodes[i], affineNode(t, "n", float32(k+10)))
		}
	}
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = NewBuilder(Options{CacheDir: dir, Jobs: 2}).BuildKernels(nodes[i])
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var sos []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if strings.HasPrefix(info.Name(), ".tmp") {
				t.Errorf("temporary file left in the cache: %s", p)
			}
			if strings.HasSuffix(p, ".so") {
				sos = append(sos, p)
			}
		}
		return nil
	})
	if len(sos) != 4 {
		t.Errorf("cache holds %d objects, want 4", len(sos))
	}
	for i := range nodes {
		for k, n := range nodes[i] {
			out := runKernel(t, n, 1, ir.Float32Tensor([]int64{8, 16}, 1))
			if want := float32(k+10) + 1; out[0].F32()[0] != want {
				t.Fatalf("builder %d kernel %d: %g, want %g", i, k, out[0].F32()[0], want)
			}
		}
	}
}

func TestShaMismatchRefused(t *testing.T) {
	if !native.Available {
		t.Skip("built without cgo")
	}
	n := affineNode(t, "a", 2)
	build(t, t.TempDir(), n)
	so := append([]byte(nil), n.Attrs[ir.GKKernelSO].B...)
	so[len(so)/2] ^= 0xff
	_, err := native.Load(so, n.Attrs.String(ir.GKKernelSOHash, ""), n.Attrs.String(ir.GKKernelName, ""))
	if err == nil || !strings.Contains(err.Error(), "corrupt or was modified") {
		t.Fatalf("tampered object: err = %v", err)
	}
	if _, err := native.Load(n.Attrs[ir.GKKernelSO].B, "", "x"); err == nil {
		t.Fatal("object without a recorded hash was loaded")
	}
}

func TestMissingCompiler(t *testing.T) {
	b := NewBuilder(Options{CC: "/nonexistent/gkconv-no-cc", CacheDir: t.TempDir()})
	err := b.BuildKernels([]*ir.Node{affineNode(t, "a", 2)})
	if err == nil || !strings.Contains(err.Error(), "CC") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("err = %v, want a message naming CC", err)
	}
	t.Setenv("CC", "gkconv-no-such-compiler")
	err = NewBuilder(Options{CacheDir: t.TempDir()}).BuildKernels([]*ir.Node{affineNode(t, "a", 2)})
	if err == nil || !strings.Contains(err.Error(), "gkconv-no-such-compiler") {
		t.Fatalf("$CC ignored: err = %v", err)
	}
}

func TestCompilerErrorNamesNode(t *testing.T) {
	// A "compiler" that always fails.
	dir := t.TempDir()
	cc := filepath.Join(dir, "badcc")
	os.WriteFile(cc, []byte("#!/bin/sh\ncase \"$*\" in *--version*) echo badcc 1.0;; *-dM*) echo '#define __SSE2__ 1';; *) echo boom >&2; exit 1;; esac\n"), 0o755)
	err := NewBuilder(Options{CC: cc, CacheDir: filepath.Join(dir, "cache")}).BuildKernels([]*ir.Node{affineNode(t, "mynode", 2)})
	if err == nil || !strings.Contains(err.Error(), "mynode") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
}

func TestUnsupportedBody(t *testing.T) {
	b := testkit.New(t, "u")
	x := b.Input("", 4, 4)
	n := b.GraphKernel("u", b.Op("Transpose", ir.Attrs{"perm": ir.IntsAttr(1, 0)}, x))
	err := NewBuilder(Options{CacheDir: t.TempDir()}).BuildKernels([]*ir.Node{n})
	if err == nil || !strings.Contains(err.Error(), "Transpose") || !strings.Contains(err.Error(), "node u") {
		t.Fatalf("err = %v", err)
	}
	if err := NewBuilder(Options{CacheDir: t.TempDir(), AllowInterpreted: true}).BuildKernels([]*ir.Node{n}); err != nil {
		t.Fatal(err)
	}
	if n.Attrs.String(ir.GKKernelStatus, "") != "interpreted" || n.Attrs.Has(ir.GKKernelSO) {
		t.Fatalf("attrs %v", n.Attrs.Keys())
	}
}

func TestAttrs(t *testing.T) {
	n := layerNormBody(t, 64, 768)
	n.Attrs[ir.GKKernelName] = ir.StringAttr("Fused_LayerNorm_split_42")
	build(t, t.TempDir(), n)
	want := map[string]string{
		ir.GKKernelName: "Fused_LayerNorm_split_42_kernel", ir.GKInputsShape: "2,64,768,1,768,1,768,",
		ir.GKOutputsShape: "2,64,768,2,64,1,", ir.GKOutputsType: "43,43,", ir.GKOutputsFormat: "0,0,",
		ir.GKProcess: "cpu", ir.GKSystem: "linux", ir.GKArch: ir.HostArch(), ir.GKKernelStatus: "compiled",
	}
	for k, v := range want {
		if got := n.Attrs.String(k, ""); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if f := n.Attrs.String(ir.GKFeature, ""); f == "" {
		t.Error("no feature recorded")
	}
	if err := native.CheckHost(n.Attrs.String(ir.GKArch, ""), n.Attrs.String(ir.GKFeature, ""), n.Attrs.String(ir.GKCPUFlags, "")); err != nil {
		t.Errorf("kernel built here is refused here: %v", err)
	}
	// Building again keeps the name (no "_kernel_kernel").
	build(t, t.TempDir(), n)
	if got := n.Attrs.String(ir.GKKernelName, ""); got != "Fused_LayerNorm_split_42_kernel" {
		t.Errorf("rebuilt kernel_name %q", got)
	}
}

func TestInfoJSON(t *testing.T) {
	n := layerNormBody(t, 64, 768)
	n.Attrs[ir.GKKernelName] = ir.StringAttr("Fused_LN_1")
	n.Attrs[ir.GKArch] = ir.StringAttr("x86_64")
	n.Attrs[ir.GKFeature] = ir.StringAttr("avx512")
	js, err := kernels.InfoJSON(n)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"composite", "composite_graph", "id", "input_desc", "op", "op_desc", "output_desc", "platform", "process", "target_info", "version"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %s missing", k)
		}
	}
	if m["op"] != "Fused_LN_1" || m["process"] != "cpu" {
		t.Errorf("op %v process %v", m["op"], m["process"])
	}
	ops := m["op_desc"].([]any)
	first := ops[0].(map[string]any)
	if first["name"] != "ReduceMean" {
		t.Errorf("first op %v", first["name"])
	}
	attrs, _ := json.Marshal(first["attr"])
	if !strings.Contains(string(attrs), `{"data_type":"listInt","name":"axis","value":[-1]}`) ||
		!strings.Contains(string(attrs), `"keep_dims","value":true`) {
		t.Errorf("reduce attrs %s", attrs)
	}
	in := first["input_desc"].([]any)
	if len(in) != 1 {
		t.Errorf("ReduceMean has %d inputs in the info, want 1 (axes is an attr)", len(in))
	}
	// Scalar constants carry their value.
	if !strings.Contains(string(js), `"value":0.000009999999747378752`) {
		t.Errorf("eps constant value missing: %s", js)
	}
	// Each internal tensor is produced before it is consumed.
	produced := map[string]bool{"input_0": true, "input_1": true, "input_2": true}
	for _, o := range ops {
		od := o.(map[string]any)
		for _, l := range od["input_desc"].([]any) {
			d := l.([]any)[0].(map[string]any)
			if _, isConst := d["value"]; !isConst && !produced[d["tensor_name"].(string)] {
				t.Errorf("op %v reads %v before it is produced", od["name"], d["tensor_name"])
			}
		}
		for _, d := range od["output_desc"].([]any) {
			produced[d.(map[string]any)["tensor_name"].(string)] = true
		}
	}
}

// The writer's key layout matches the AKG CPU corpus files.
func TestInfoJSONMatchesCorpus(t *testing.T) {
	cpuInfo := repotest.SharedDir(t, "corpus/akg-info/cpu")
	files, _ := filepath.Glob(filepath.Join(cpuInfo, "*.info"))
	if len(files) == 0 {
		t.Skip("../shared/corpus/akg-info/cpu not present")
	}
	// Same graph as Fused_Mul_fusion_...: y = x * 0.9 on shape [1].
	b := testkit.New(t, "68.76")
	x := b.Input("", 1)
	n := b.GraphKernel("mul", b.Op("Mul", nil, x, b.Scalar(0.9)))
	n.Attrs[ir.GKKernelName] = ir.StringAttr("Fused_Mul_fusion_11850656069760946926")
	ours, err := kernels.InfoJSON(n)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join(cpuInfo, "Fused_Mul_fusion_11850656069760946926.info"))
	if err != nil {
		t.Skip(err)
	}
	var g, o map[string]any
	json.Unmarshal(golden, &g)
	json.Unmarshal(ours, &o)
	// The corpus file predates target_info/version and names a GPU field; compare the op graph.
	for _, k := range []string{"composite", "id", "input_desc", "op", "op_desc", "output_desc", "platform", "process", "composite_graph"} {
		gj, _ := json.Marshal(g[k])
		oj, _ := json.Marshal(o[k])
		if string(gj) != string(oj) {
			t.Errorf("%s:\n ours   %s\n golden %s", k, oj, gj)
		}
	}
}

func TestGeneralReductions(t *testing.T) {
	// Reductions over a leading and a middle axis, and a non-trivial reshape,
	// take the general (materialised) path.
	b := testkit.New(t, "general")
	x := b.Input("", 6, 5, 7)
	s0 := b.Op("ReduceSum", keep(0), x, b.Ints(0))               // [5,7]
	m1 := b.Op("ReduceMax", keep(1), x, b.Ints(1))               // [6,1,7]
	y := b.Op("Add", nil, b.Op("Mul", nil, x, m1), s0)           // [6,5,7]
	rs := b.Op("Reshape", nil, b.Op("Exp", nil, s0), b.Ints(35)) // [35]
	all := b.Op("ReduceMean", keep(0), y, nil)                   // scalar
	n := b.GraphKernel("general", y, rs, all)
	build(t, t.TempDir(), n)
	if strings.Contains(n.Attrs.String(ir.GKKernelSource, ""), "row-wise") {
		t.Fatal("axis-0 reduction must not use the row-wise path")
	}
	xi := randTensor(rand.New(rand.NewSource(7)), x.Shape, -1, 1)
	xs := xi.F32()
	at := func(i, j, k int) float64 { return float64(xs[i*35+j*7+k]) }
	var wy, wrs []float64
	var sum float64
	for i := 0; i < 6; i++ {
		for j := 0; j < 5; j++ {
			for k := 0; k < 7; k++ {
				mx := math.Inf(-1)
				for jj := 0; jj < 5; jj++ {
					mx = math.Max(mx, at(i, jj, k))
				}
				var s float64
				for ii := 0; ii < 6; ii++ {
					s += at(ii, j, k)
				}
				v := at(i, j, k)*mx + s
				wy = append(wy, v)
				sum += v
			}
		}
	}
	for j := 0; j < 5; j++ {
		for k := 0; k < 7; k++ {
			var s float64
			for ii := 0; ii < 6; ii++ {
				s += at(ii, j, k)
			}
			wrs = append(wrs, math.Exp(s))
		}
	}
	got := runKernel(t, n, 2, xi)
	checkClose(t, "y", got[0].F32(), wy, 1e-5, 1)
	checkClose(t, "exp(sum)", got[1].F32(), wrs, 1e-5)
	checkClose(t, "mean", got[2].F32(), []float64{sum / 210}, 1e-5, 1)
}

func TestFloat16(t *testing.T) {
	b := testkit.New(t, "half")
	x := b.InputOf("", ir.Float16, 3, 50)
	y := b.Op("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))}, b.Op("Sigmoid", nil, x))
	n := b.GraphKernel("half", y, b.Op("Mul", nil, x, x))
	build(t, t.TempDir(), n)
	xi := ir.NewTensor(ir.Float16, x.Shape)
	r := rand.New(rand.NewSource(8))
	var w1, w2 []float64
	for i := range xi.U16() {
		h := ir.F32ToF16(float32(r.Float64()*8 - 4))
		xi.U16()[i] = h
		v := float64(ir.F16ToF32(h))
		w1 = append(w1, 1/(1+math.Exp(-v)))
		w2 = append(w2, float64(ir.F16ToF32(ir.F32ToF16(float32(v*v)))))
	}
	got := runKernel(t, n, 1, xi)
	checkClose(t, "sigmoid", got[0].F32(), w1, 1e-5)
	var g2 []float32
	for _, h := range got[1].U16() {
		g2 = append(g2, ir.F16ToF32(h))
	}
	checkClose(t, "x*x f16", g2, w2, 1e-6)
}

// A Cast to float16 inside a kernel rounds, as it does unfused: a float32 ->
// float16 -> float32 round trip between two float32 ops is not a no-op.
func TestCastToFloat16RoundsInKernel(t *testing.T) {
	b := testkit.New(t, "roundtrip")
	x := b.InputOf("", ir.Float32, 4, 64)
	m := b.Op("Mul", nil, x, x)
	h := b.Op("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float16))}, m)
	back := b.Op("Cast", ir.Attrs{"to": ir.IntAttr(int64(ir.Float32))}, h)
	n := b.GraphKernel("roundtrip", b.Op("Add", nil, back, x))
	build(t, t.TempDir(), n)
	xi := ir.NewTensor(ir.Float32, x.Shape)
	r := rand.New(rand.NewSource(9))
	xs := xi.F32()
	for i := range xs {
		// squares over the whole half range: subnormal halves (below 2^-14),
		// normal ones, ties, 65504 and the overflow to infinity
		xs[i] = float32(math.Exp2(r.Float64()*36-20) * math.Copysign(1, r.Float64()-0.5))
	}
	copy(xs, []float32{0, float32(math.Copysign(0, -1)), 255.96875, 255.984375, 256, 1e-4, 2.4414062e-4,
		float32(math.Sqrt(65520)), float32(math.Sqrt(65519)), float32(math.Inf(1)), float32(math.NaN())})
	got := runKernel(t, n, 1, xi)[0].F32()
	rounded := 0
	for i, v := range xs {
		sq := v * v
		want := ir.F16ToF32(ir.F32ToF16(sq)) + v
		if got[i] != want && !(got[i] != got[i] && want != want) {
			t.Fatalf("element %d: got %g, want %g (x %g, x*x %g)", i, got[i], want, v, sq)
		}
		if want != sq+v {
			rounded++
		}
	}
	if rounded == 0 {
		t.Fatal("no element was changed by the float16 rounding: the test shows nothing")
	}
}
