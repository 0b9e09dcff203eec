package cpu

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestRowInnerMerge reduces the trailing H, W of [C, H, W] (global average
// pooling): with every access contiguous over H, W they run as one
// lane-blocked loop of H*W with the last partial block in a scalar tail;
// an input broadcast over W alone keeps the two loops. Each shape is
// checked against a float64 reference, on 1 and 2 threads.
func TestRowInnerMerge(t *testing.T) {
	cases := []struct {
		c, h, w int64
		bcast   bool // add a [W] input: H and W cannot merge
		merged  bool
	}{
		{5, 7, 7, false, true},     // 49: 3 blocks of 16 + a tail of 1
		{3, 14, 14, false, true},   // 196: tail of 4
		{2, 28, 28, false, true},   // 784: 32 lanes, tail of 16
		{2, 112, 112, false, true}, // 12544: 64 lanes, several flush chunks
		{3, 1, 5, false, false},    // one inner dim: nothing to merge, shorter than a block
		{4, 7, 7, true, false},
		{2, 3, 40, true, false},
	}
	for _, tc := range cases {
		b := testkit.New(t, "merge")
		x := b.Input("", 1, tc.c, tc.h, tc.w)
		in := x
		var y *ir.Value
		if tc.bcast {
			y = b.Input("", tc.w)
			in = b.Op("Add", nil, x, y)
		}
		mean := b.Op("ReduceMean", keep(1), in, b.Ints(2, 3))
		hi := b.Op("ReduceMax", keep(1), in, b.Ints(-2, -1))
		n := b.GraphKernel("merge", mean, hi)
		src, err := GenerateC("k", n.Body)
		if err != nil {
			t.Fatal(err)
		}
		hw := tc.h * tc.w
		if got := strings.Contains(src, "o1*"+strconv.FormatInt(hw, 10)+" + j2]"); got != tc.merged {
			t.Errorf("%v: inner dims merged = %v, want %v\n%s", tc, got, tc.merged, src)
		}
		build(t, t.TempDir(), n)
		r := rand.New(rand.NewSource(21))
		xi := randTensor(r, x.Shape, -2, 3)
		xs := xi.F32()
		if tc.merged || tc.w >= 16 {
			// Row 1: the max is NaN, the mean NaN. Only lane-blocked rows:
			// short unblocked rows reduce max with OpenMP's reduction(max:),
			// whose merge of partial results can drop a NaN (known, not
			// changed here).
			xs[hw+2] = float32(math.NaN())
		}
		ins := []*ir.Tensor{xi}
		var yv []float32
		if tc.bcast {
			yi := randTensor(r, []int64{tc.w}, -1, 1)
			yv = yi.F32()
			ins = append(ins, yi)
		}
		var wm, wx []float64
		for c := int64(0); c < tc.c; c++ {
			s, m := 0.0, math.Inf(-1)
			for k := int64(0); k < hw; k++ {
				v := xs[c*hw+k]
				if tc.bcast {
					v += yv[k%tc.w]
				}
				s += float64(v)
				if !math.IsNaN(m) && (math.IsNaN(float64(v)) || float64(v) > m) {
					m = float64(v)
				}
			}
			wm, wx = append(wm, s/float64(hw)), append(wx, m)
		}
		for _, threads := range []int{1, 2} {
			got := runKernel(t, n, threads, ins...)
			checkClose(t, fmt.Sprintf("%v mean", tc), got[0].F32(), wm, 1e-5, 3)
			checkClose(t, fmt.Sprintf("%v max", tc), got[1].F32(), wx, 0)
		}
	}
}
