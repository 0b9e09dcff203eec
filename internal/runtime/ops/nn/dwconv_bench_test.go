package nn

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"gkconv/internal/ir"
)

// dwS2Shapes are the stride-2 depthwise layers of mobilenet_v2 (3x3) and
// efficientnet_b0 (3x3, 5x5): channels, kernel, input side.
var dwS2Shapes = []struct{ c, k, h int64 }{
	{96, 3, 112}, {144, 3, 56}, {192, 3, 28}, {576, 3, 14},
	{144, 5, 56}, {240, 5, 28}, {672, 5, 14},
}

// dwS1Shapes are the stride-1 depthwise layers of mobilenet_v2 (3x3) and
// efficientnet_b0 (3x3, 5x5) up to 28x28: channels, kernel, side.
var dwS1Shapes = []struct{ c, k, h int64 }{
	{32, 3, 112}, {144, 3, 56}, {192, 3, 28}, {384, 3, 14}, {576, 3, 14}, {960, 3, 7}, {480, 3, 14}, {1152, 3, 7},
	{240, 5, 28}, {480, 5, 14}, {672, 5, 14}, {1152, 5, 7},
}

// BenchmarkDepthwiseS2 times those layers on the current path ("new"; pads
// k/2, bias, no activation; $GKCONV_BENCH_DW_ACT sets one, e.g. 18 for SiLU).
func BenchmarkDepthwiseS2(b *testing.B) { benchDepthwise(b, dwS2Shapes, 2) }

// BenchmarkDepthwiseS1 times the stride-1 layers on the current path ("new")
// and on the previous one ("old", see setDwLegacy), alternating in the same
// run.
func BenchmarkDepthwiseS1(b *testing.B) { benchDepthwise(b, dwS1Shapes, 1) }

func benchDepthwise(b *testing.B, shapes []struct{ c, k, h int64 }, stride int64) {
	defer setDwLegacy(false)
	for _, s := range shapes {
		rng := rand.New(rand.NewSource(1))
		x, w, bias := randTensor(rng, 1, s.c, s.h, s.h), randTensor(rng, s.c, 1, s.k, s.k), randTensor(rng, s.c)
		o := (s.h + stride - 1) / stride
		y := ir.NewTensor(ir.Float32, []int64{1, s.c, o, o})
		p := s.k / 2
		n := convNode(s.c, p, p, p, p)
		n.Attrs["strides"] = ir.IntsAttr(stride, stride)
		if act := os.Getenv("GKCONV_BENCH_DW_ACT"); act != "" {
			v, _ := strconv.Atoi(act)
			n.Attrs[ir.AttrActivation] = ir.IntAttr(int64(v))
		}
		legacies := []bool{false} // setDwLegacy switches stride-1 paths only
		if stride == 1 {
			legacies = []bool{true, false}
		}
		for _, legacy := range legacies {
			name := map[bool]string{true: "old", false: "new"}[legacy]
			b.Run(fmt.Sprintf("c%d_k%d_%dto%d/%s", s.c, s.k, s.h, o, name), func(b *testing.B) {
				setDwLegacy(legacy)
				benchOp(b, conv, n, []*ir.Tensor{x, w, bias}, y, float64(2*s.c*s.k*s.k*o*o))
			})
		}
	}
}
