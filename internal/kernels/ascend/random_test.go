package ascend

import (
	"fmt"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/kerneltest"
)

// TestRandomKernels runs the Ascend C generator on the fused kernels of the
// random models of internal/randgraph (the graphs cmd/converter's
// TestRandomFusedGraphs runs through the CPU generator), for a 910B and,
// every fifth seed, a 910A (MatMul fused with its Add users: the cube
// strategy): every kernel must get an Ascend C source that computes on the
// host emulation what its body computes on the op library.
func TestRandomKernels(t *testing.T) {
	needCXX(t)
	seeds := kerneltest.RandomSeeds(t, 40)
	strategies := map[string]int{}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		bes := []akgcfg.Backend{ascendBE}
		if seed%5 == 0 {
			bes = append(bes, ascendMatmulBE)
		}
		for _, be := range bes {
			t.Run(fmt.Sprintf("%s/seed_%d", be.Soc, seed), func(t *testing.T) {
				ks, info := kerneltest.RandomKernels(t, seed, be)
				defer func() {
					if t.Failed() {
						t.Logf("seed %d graph:\n  %s", seed, info.Describe())
					}
				}()
				// info.Fusible is not checked: on Ascend, Softmax and
				// LayerNorm are not expanded (MindSpore's expander list is
				// CPU/GPU for them), so some of those chains stay whole ops.
				for s, n := range checkKernels(t, ks, be, kerneltest.Conditioned) {
					strategies[s] += n
				}
			})
		}
	}
	t.Logf("%d seeds: strategies %v", seeds, strategies)
}
