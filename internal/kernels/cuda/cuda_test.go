package cuda

import (
	"fmt"
	"gkconv/internal/kerneltest"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

func needClang(t testing.TB) string {
	t.Helper()
	p, err := FindClang("")
	if err != nil {
		t.Skip("clang is not installed: CUDA tests skipped")
	}
	return p
}

func needCXX(t testing.TB) {
	t.Helper()
	if _, err := FindHostCXX(); err != nil {
		t.Skip("no host C++ compiler: emulation tests skipped")
	}
}

var gpuBE = akgcfg.Backend{Device: akgcfg.GPU}

// TestCorpusKernels builds every fused kernel of three corpus models for
// the GPU, checks each PTX and runs each kernel in the host emulation
// against the body run on the runtime's op library.
func TestCorpusKernels(t *testing.T) {
	needClang(t)
	needCXX(t)
	cache := t.TempDir()
	for _, model := range []string{"bert_tiny", "gpt_tiny", "mobilenet_v2"} {
		t.Run(model, func(t *testing.T) {
			ks := kerneltest.FusedKernels(t, model, "--opt_level=2", gpuBE)
			if len(ks) == 0 {
				t.Fatal("no kernels fused")
			}
			b := NewBuilder(Options{CacheDir: cache})
			strategies := checkKernels(t, b, ks, nil)
			t.Logf("%s: %d kernels (%d compiled, %d unique), strategies %v", model, len(ks), b.Stats.Compiled, b.Stats.Unique, strategies)
		})
	}
}

// checkKernels builds ks for the GPU with b, checks each PTX and runs each
// kernel in the host emulation against the body run on the runtime's op
// library at relative tolerance 1e-5 (or tol's); it returns how many
// kernels took each strategy.
func checkKernels(t *testing.T, b *Builder, ks []*ir.Node, tol kerneltest.Tolerance) map[string]int {
	t.Helper()
	if err := b.BuildKernels(ks); err != nil {
		t.Fatal(err)
	}
	strategies := map[string]int{}
	var mu sync.Mutex
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, n := range ks {
		a := n.Attrs
		strategies[a.String(ir.GKStrategy, "")]++
		ptx := a[ir.GKKernelPTX].B
		nparams := len(n.Body.Inputs) + len(n.Body.Outputs)
		if err := CheckPTX(ptx, a.String(ir.GKKernelName, ""), "sm_80", nparams); err != nil {
			t.Errorf("%s: %v", n.Name, err)
		}
		if ok, err := Assemble(ptx, "sm_80"); ok && err != nil {
			t.Errorf("%s: %v", n.Name, err)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, n *ir.Node) {
			defer wg.Done()
			defer func() { <-sem }()
			in := kerneltest.BodyInputs(n.Body, int64(i))
			got, err := (&Emulator{}).Run(n, in)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("%v", err)
				return
			}
			kerneltest.CheckAgainstRef(t, n, in, got, fmt.Sprintf("%s (%s)", n.Name, opsOf(n)), tol)
		}(i, n)
	}
	wg.Wait()
	return strategies
}

func opsOf(n *ir.Node) string {
	var ops []string
	for _, b := range n.Body.Nodes {
		ops = append(ops, b.Op)
	}
	return strings.Join(ops, ",")
}

// TestMathAccuracy runs the device math header on the host over wide
// ranges and compares with float64 math.
func TestMathAccuracy(t *testing.T) {
	needCXX(t)
	cxx, _ := FindHostCXX()
	prog := "#define GK_HOST_EMULATION 1\n" + HostHeader + MathHeader + `
int main(void) {
  for (int i = 0; i <= 200000; i++) {
    float x = -30.0f + 60.0f * (float)i / 200000.0f;
    float ax = x < 0 ? -x : x;
    printf("%.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", x, gk_expf(x < 80 ? x : 80), gk_logf(ax + 1e-30f), gk_tanhf(x),
      gk_erff(x / 4), gk_log1pf(ax - 0.99f), gk_expm1f(x / 10), gk_powf(ax, 1.7f));
  }
  return 0;
}
`
	out := compileRun(t, cxx, prog)
	fns := []struct {
		name string
		f    func(x float64) float64
		ulps float64
	}{
		{"exp", func(x float64) float64 { return math.Exp(math.Min(x, 80)) }, 4},
		{"log", func(x float64) float64 { return math.Log(float64(float32(math.Abs(x)) + 1e-30)) }, 4},
		{"tanh", math.Tanh, 4},
		{"erf", func(x float64) float64 { return math.Erf(float64(float32(x) / 4)) }, 4},
		{"log1p", func(x float64) float64 { return math.Log1p(float64(float32(math.Abs(x)) - 0.99)) }, 8},
		{"expm1", func(x float64) float64 { return math.Expm1(float64(float32(x) / 10)) }, 8},
		{"pow", func(x float64) float64 { return math.Pow(math.Abs(x), float64(float32(1.7))) }, 64},
	}
	worst := make([]float64, len(fns))
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v [8]float64
		if _, err := fmt.Sscan(line, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]); err != nil {
			t.Fatalf("bad line %q", line)
		}
		for k, f := range fns {
			want := f.f(v[0])
			ulp := math.Max(math.Abs(want), 1e-37) * 1.1920929e-07
			if e := math.Abs(v[k+1]-want) / ulp; e > worst[k] {
				worst[k] = e
			}
		}
	}
	for k, f := range fns {
		if worst[k] > f.ulps {
			t.Errorf("%s: max error %.2f ulp, want <= %g", f.name, worst[k], f.ulps)
		}
		t.Logf("%s: max error %.2f ulp", f.name, worst[k])
	}
}

func compileRun(t *testing.T, cxx, prog string) string {
	t.Helper()
	dir := t.TempDir()
	src, exe := dir+"/m.cpp", dir+"/m"
	if err := writeFile(src, prog); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cxx, "-O1", "-w", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
