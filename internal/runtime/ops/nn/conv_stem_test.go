package nn

import (
	"fmt"
	"math/rand"
	"testing"

	"gkconv/internal/ir"
)

// TestConvStemRandom checks the direct few-channel path against convDirect
// at the AVX-512 and AVX2 levels on random shapes: 1-4 input channels,
// kernels 1..11 wide, strides 1..3, dilations, asymmetric pads, planes
// narrower than one vector and ragged against 16 and 8, partial channel
// blocks, batch 1-2, with and without bias and ReLU6, at 1, 2 and 3
// threads (bands split over threads).
func TestConvStemRandom(t *testing.T) {
	winoLevels(t, testConvStemRandom)
}

func testConvStemRandom(t *testing.T) {
	packedConvMode.Store(packStem)
	defer packedConvMode.Store(0)
	rng := rand.New(rand.NewSource(5))
	for it := 0; it < 50; it++ {
		nb, cin, cout := 1+rng.Intn(2), 1+rng.Intn(stemMaxChannels), 1+rng.Intn(70)
		kh, kw := 1+rng.Intn(7), 1+rng.Intn(7)
		if it%10 == 3 {
			kh, kw = 7, 11
		}
		h, w := kh+rng.Intn(40), kw+rng.Intn(60)
		sh, sw := 1+rng.Intn(3), 1+rng.Intn(3)
		dh, dw, pads := randDilationsPads(rng, kh, kw, h, w)
		act := []int64{ir.ActNone, ir.ActReLU6}[it%2]
		attrs := ir.Attrs{"strides": ir.IntsAttr(int64(sh), int64(sw)), "dilations": ir.IntsAttr(int64(dh), int64(dw)),
			"pads": ir.IntsAttr(pads...)}
		if act != ir.ActNone {
			attrs[ir.AttrActivation] = ir.IntAttr(act)
		}
		x := randTensor(rng, int64(nb), int64(cin), int64(h), int64(w))
		wt := randTensor(rng, int64(cout), int64(cin), int64(kh), int64(kw))
		in := []*ir.Tensor{x, wt, nil}
		if it%3 != 0 {
			in[2] = randTensor(rng, int64(cout))
		}
		n := constConvNode(attrs, wt)
		g, err := windowAttrs(n, x.Shape[2:], wt.Shape[2:], false)
		if err != nil {
			t.Fatal(err)
		}
		if usePackedConv(n, wt, g, 1, cin, cout, 1) != packStem {
			t.Fatal("direct few-channel path not taken")
		}
		relu6 := func(v float64) float64 { return min(max(v, 0), 6) }
		post := map[int64]func(float64) float64{ir.ActReLU6: relu6}[act]
		checkConvVsDirect(t, fmt.Sprintf("it %d", it), n, g, in, post)
	}
}
