package ascend

import (
	"fmt"
	"gkconv/internal/kerneltest"
	"strings"
	"sync"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

func needCXX(t testing.TB) {
	t.Helper()
	if _, err := kernels.FindHostCXX(); err != nil {
		t.Skip("no host C++ compiler: Ascend C emulation tests skipped")
	}
}

var ascendBE = akgcfg.Backend{Device: akgcfg.Ascend, Soc: "Ascend910B2"}

// ascendMatmulBE is a chip without 910B's defaults: the matmul_depth split
// pattern fuses MatMul with its Add users, so kernels take the cube strategy.
var ascendMatmulBE = akgcfg.Backend{Device: akgcfg.Ascend, Soc: "Ascend910A"}

func opsOf(n *ir.Node) string {
	var ops []string
	for _, b := range n.Body.Nodes {
		ops = append(ops, b.Op)
	}
	return strings.Join(ops, ",")
}

// TestCorpusKernels generates the Ascend C kernel of every fused kernel of
// three corpus models, for a 910B (no MatMul fusion) and a 910A (MatMul
// fused with its Add users: the cube strategy), and runs it on the host
// emulation of the Ascend C API against the body run on the runtime's op
// library.
func TestCorpusKernels(t *testing.T) {
	needCXX(t)
	for _, be := range []akgcfg.Backend{ascendBE, ascendMatmulBE} {
		for _, model := range []string{"bert_tiny", "gpt_tiny", "mobilenet_v2"} {
			t.Run(be.Soc+"/"+model, func(t *testing.T) { corpusKernels(t, model, be) })
		}
	}
}

func corpusKernels(t *testing.T, model string, be akgcfg.Backend) {
	ks := kerneltest.FusedKernels(t, model, "--opt_level=2", be)
	if len(ks) == 0 {
		t.Fatal("no kernels fused")
	}
	strategies := checkKernels(t, ks, be, nil)
	t.Logf("%s: %d kernels, strategies %v", model, len(ks), strategies)
	// Every corpus model has a Gemm/MatMul with a bias Add.
	if !be.Is910B() && strategies["cube"] == 0 {
		t.Errorf("%s on %s: no MatMul kernel fused", model, be.Soc)
	}
}

// checkKernels builds ks for be, checks each node's Ascend attributes and
// runs each kernel on the host emulation of the Ascend C API against the
// body run on the runtime's op library at relative tolerance 1e-5 (or
// tol's); it returns how many kernels took each strategy.
func checkKernels(t *testing.T, ks []*ir.Node, be akgcfg.Backend, tol kerneltest.Tolerance) map[string]int {
	t.Helper()
	if err := NewBuilder(Options{Soc: be.Soc}).BuildKernels(ks); err != nil {
		t.Fatal(err)
	}
	strategies := map[string]int{}
	var mu sync.Mutex
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, n := range ks {
		a := n.Attrs
		if e := a.String(ir.GKKernelError, ""); e != "" {
			t.Errorf("%s (%s): no Ascend C source: %s", n.Name, opsOf(n), e)
			continue
		}
		if got, want := a.String(ir.GKRegOpName, ""), RegOpName(len(n.Inputs), len(n.Outputs)); got != want {
			t.Errorf("%s: reg_op_name %q, want %q", n.Name, got, want)
		}
		if !strings.Contains(string(a[ir.GKKernelInfo].B), `"process":"aicore"`) ||
			!strings.Contains(string(a[ir.GKKernelInfo].B), `"target_info":{"arch":"`+be.Soc+`"}`) {
			t.Errorf("%s: kernel_info lacks process/target_info: %.200s", n.Name, a[ir.GKKernelInfo].B)
		}
		if a.String(ir.GKKernelStatus, "") != StatusSourceOnly || len(a[ir.GKKernelAscendC].B) == 0 || len(a.String(ir.GKKernelAscendCHash, "")) != 64 ||
			a.String(ir.GKBinaryFormat, "") != "ascendc-source" {
			t.Errorf("%s: kernel_status %q, binary_format %q, %d source bytes, sha256 %q", n.Name, a.String(ir.GKKernelStatus, ""),
				a.String(ir.GKBinaryFormat, ""), len(a[ir.GKKernelAscendC].B), a.String(ir.GKKernelAscendCHash, ""))
		}
		if strings.Contains(opsOf(n), "MatMul") != (a.String(ir.GKStrategy, "") == "cube") {
			t.Errorf("%s (%s): strategy %s", n.Name, opsOf(n), a.String(ir.GKStrategy, ""))
		}
		strategies[a.String(ir.GKStrategy, "")]++
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
				t.Errorf("%s (%s): %v", n.Name, opsOf(n), err)
				return
			}
			kerneltest.CheckAgainstRef(t, n, in, got, fmt.Sprintf("%s (%s, %s)", n.Name, opsOf(n), n.Attrs.String(ir.GKStrategy, "")), tol)
		}(i, n)
	}
	wg.Wait()
	return strategies
}
