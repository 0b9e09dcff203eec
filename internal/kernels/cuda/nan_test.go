package cuda

import (
	"fmt"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/kerneltest"
	"gkconv/internal/testkit"
)

// TestReduceMaxMinNaN: ReduceMax and ReduceMin propagate NaN as the op
// library does, in the row strategy (strided per-thread loops and the tree
// reduction) and the inline loops. Random seed 53 of TestRandomKernels
// found it: Sqrt of a negative sum reduced by ReduceMin gave a number, the
// op library NaN (the fold was x < s ? x : s, which drops a NaN x).
func TestReduceMaxMinNaN(t *testing.T) {
	needClang(t)
	needCXX(t)
	for _, c := range []struct {
		op       string
		shape    []int64
		axis     int64
		strategy string
	}{
		{"ReduceMin", []int64{4, 700}, -1, "row"},
		{"ReduceMax", []int64{4, 700}, -1, "row"},
		{"ReduceMin", []int64{9, 5}, 0, "inline-reduce"},
		{"ReduceMax", []int64{9, 5}, 0, "inline-reduce"},
	} {
		name := fmt.Sprintf("%s_axis%d", c.op, c.axis)
		t.Run(name, func(t *testing.T) {
			n := synthetic(t, name, func(b *testkit.Graph) []*ir.Value {
				x := b.Input("x", c.shape...)
				// Inputs are in [-2, 2]: Sqrt makes NaNs among numbers.
				return []*ir.Value{b.Op(c.op, ir.Attrs{"keepdims": ir.IntAttr(1)}, b.Op("Sqrt", nil, x), b.Ints(c.axis))}
			})
			if err := NewBuilder(Options{CacheDir: t.TempDir()}).BuildKernels([]*ir.Node{n}); err != nil {
				t.Fatal(err)
			}
			if s := n.Attrs.String(ir.GKStrategy, ""); s != c.strategy {
				t.Errorf("strategy %s, want %s", s, c.strategy)
			}
			in := kerneltest.BodyInputs(n.Body, 3)
			// Rows and columns without a NaN too: the last row/column is
			// made non-negative.
			xs := in[0].F32()
			rows, cols := int(c.shape[0]), int(c.shape[1])
			for i := range xs {
				if (c.axis != 0 && i/cols == rows-1) || (c.axis == 0 && i%cols == cols-1) {
					xs[i] = max(xs[i], -xs[i])
				}
			}
			got, err := (&Emulator{}).Run(n, in)
			if err != nil {
				t.Fatal(err)
			}
			want := kerneltest.RefRun(t, n.Body, in)
			kerneltest.CompareTensors(t, name, got[0], want[0], 1e-5)
		})
	}
}
