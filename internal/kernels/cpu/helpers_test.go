package cpu

import (
	"math"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/native"
)

func randTensor(r *rand.Rand, shape []int64, lo, hi float64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		t.F32()[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return t
}

// run builds (into a per-test cache) and calls the node's kernel.
func runKernel(t testing.TB, n *ir.Node, threads int, ins ...*ir.Tensor) []*ir.Tensor {
	t.Helper()
	if !native.Available {
		t.Skip("built without cgo: kernels cannot be loaded")
	}
	k, err := native.Load(n.Attrs[ir.GKKernelSO].B, n.Attrs.String(ir.GKKernelSOHash, ""), n.Attrs.String(ir.GKKernelName, ""))
	if err != nil {
		t.Fatal(err)
	}
	bufs, outs := kernelBufs(n, ins)
	k.Call(threads, bufs)
	return outs
}

// kernelBufs is a kernel call's buffers (ins, then new outputs of n's body)
// and the output tensors.
func kernelBufs(n *ir.Node, ins []*ir.Tensor) ([][]byte, []*ir.Tensor) {
	var bufs [][]byte
	for _, x := range ins {
		bufs = append(bufs, x.Data)
	}
	var outs []*ir.Tensor
	for _, v := range n.Body.Outputs {
		o := ir.NewTensor(v.DType, v.Shape)
		outs = append(outs, o)
		bufs = append(bufs, o.Data)
	}
	return bufs, outs
}

func build(t testing.TB, dir string, nodes ...*ir.Node) *Builder {
	t.Helper()
	b := NewBuilder(Options{CacheDir: dir})
	if err := b.BuildKernels(nodes); err != nil {
		t.Fatal(err)
	}
	return b
}

// checkClose compares float32 results with a float64 reference: the error
// must be within rel of max(|want|, scale). scale is the size of the terms
// that cancel in the result (float32 cannot do better than that); use 1e-3
// when nothing cancels.
func checkClose(t *testing.T, what string, got []float32, want []float64, rel float64, scale ...float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		w := want[i]
		d := math.Abs(float64(got[i]) - w)
		sc := 1e-3
		if len(scale) == 1 {
			sc = scale[0]
		} else if len(scale) == len(want) {
			sc = scale[i]
		}
		if d > rel*math.Max(math.Abs(w), sc) || math.IsNaN(float64(got[i])) != math.IsNaN(w) {
			if bad < 5 {
				t.Errorf("%s[%d] = %g, want %g (rel err %.3g)", what, i, got[i], w, d/math.Max(math.Abs(w), 1e-30))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values off", what, bad, len(got))
	}
}
