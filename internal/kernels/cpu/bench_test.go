package cpu

import (
	"fmt"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/native"
	"gkconv/internal/testkit"
)

// benchKernel times one kernel call on 1 thread and reports GB/s of
// compulsory traffic (inputs read once + outputs written once).
func benchKernel(b *testing.B, n *ir.Node, ins ...*ir.Tensor) {
	if !native.Available {
		b.Skip("built without cgo")
	}
	build(b, b.TempDir(), n)
	k, err := native.Load(n.Attrs[ir.GKKernelSO].B, n.Attrs.String(ir.GKKernelSOHash, ""), n.Attrs.String(ir.GKKernelName, ""))
	if err != nil {
		b.Fatal(err)
	}
	var bufs [][]byte
	var bytes int64
	for _, x := range ins {
		bufs = append(bufs, x.Data)
		bytes += int64(len(x.Data))
	}
	for _, v := range n.Body.Outputs {
		o := ir.NewTensor(v.DType, v.Shape)
		bufs = append(bufs, o.Data)
		bytes += int64(len(o.Data))
	}
	k.Call(1, bufs) // warm up: page faults, OpenMP start
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k.Call(1, bufs)
	}
	b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

func BenchmarkAffine16M(b *testing.B) {
	bb := testkit.New(b, "affine")
	x := bb.Input("", 4096, 4096)
	n := bb.GraphKernel("affine", bb.Op("Add", nil, bb.Op("Mul", nil, x, bb.Scalar(2)), bb.Scalar(1)))
	benchKernel(b, n, randTensor(rand.New(rand.NewSource(1)), x.Shape, -1, 1))
}

func BenchmarkLayerNorm512x4096(b *testing.B) {
	n := layerNormBody(b, 512, 4096)
	r := rand.New(rand.NewSource(2))
	benchKernel(b, n, randTensor(r, []int64{512, 4096}, -1, 1), randTensor(r, []int64{4096}, 0, 1), randTensor(r, []int64{4096}, 0, 1))
}

func BenchmarkSoftmax512x4096(b *testing.B) {
	n := softmaxBody(b, 512, 4096)
	benchKernel(b, n, randTensor(rand.New(rand.NewSource(3)), []int64{512, 4096}, -5, 5))
}

// BenchmarkGlobalAvgPool is efficientnet_b0's squeeze-excite pooling:
// ReduceMean over the trailing H, W of [1, C, H, W] (C rows of H*W).
func BenchmarkGlobalAvgPool(b *testing.B) {
	for _, s := range [][3]int64{{1152, 7, 7}, {672, 14, 14}, {144, 56, 56}, {32, 112, 112}} {
		b.Run(fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
			bb := testkit.New(b, "gap")
			x := bb.Input("", 1, s[0], s[1], s[2])
			n := bb.GraphKernel("gap", bb.Op("ReduceMean", keep(1), x, bb.Ints(2, 3)))
			benchKernel(b, n, randTensor(rand.New(rand.NewSource(4)), x.Shape, -1, 1))
		})
	}
}
