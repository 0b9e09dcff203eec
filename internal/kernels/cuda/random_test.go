package cuda

import (
	"fmt"
	"testing"

	"gkconv/internal/kerneltest"
)

// TestRandomKernels runs the GPU generator on the fused kernels of the
// random models of internal/randgraph (the graphs cmd/converter's
// TestRandomFusedGraphs runs through the CPU generator): every kernel must
// compile to PTX and compute in the host emulation what its body computes
// on the op library. The corpus models reach few of the shapes and
// patterns those graphs do (reductions over leading axes, Softmax on any
// axis, rows of 1 to 70, several outputs).
func TestRandomKernels(t *testing.T) {
	needClang(t)
	needCXX(t)
	seeds := kerneltest.RandomSeeds(t, 40)
	cache := t.TempDir()
	strategies := map[string]int{}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed_%d", seed), func(t *testing.T) {
			ks, info := kerneltest.RandomKernels(t, seed, gpuBE)
			defer func() {
				if t.Failed() {
					t.Logf("seed %d graph:\n  %s", seed, info.Describe())
				}
			}()
			if info.Fusible && len(ks) == 0 {
				t.Errorf("the graph has fusible chains but no GraphKernel was made")
			}
			for s, n := range checkKernels(t, NewBuilder(Options{CacheDir: cache}), ks, kerneltest.Conditioned) {
				strategies[s] += n
			}
		})
	}
	t.Logf("%d seeds: strategies %v", seeds, strategies)
}
