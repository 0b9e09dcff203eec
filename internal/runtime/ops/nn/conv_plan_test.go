package nn

import (
	"math/rand"
	"slices"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// TestConvPlanReplans: a Conv2D node's memoized plan (prepareConv) gives
// the unplanned conv's output bit for bit, and is made again when the input
// shape, the thread count, a forced path or the bias changes.
func TestConvPlanReplans(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	w := randTensor(rng, 32, 16, 3, 3)
	n := constConvNode(ir.Attrs{"pads": ir.IntsAttr(1, 1, 1, 1)}, w)
	f, ok, err := opkernel.NewPrep().Bind(n)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	bias := randTensor(rng, 32)
	defer packedConvMode.Store(0)
	for i, c := range []struct {
		nb, side, threads int64
		mode              int32
		withBias          bool
	}{
		{1, 14, 1, 0, true},
		{1, 14, 1, 0, true}, // the same: the plan is reused
		{2, 14, 1, 0, true}, // another batch
		{1, 30, 2, 0, true}, // another plane and thread count
		{1, 30, 2, packTransposed, true},
		{1, 30, 2, -1, true},
		{1, 30, 2, 0, false}, // no bias
	} {
		packedConvMode.Store(c.mode)
		x := randTensor(rng, c.nb, 16, c.side, c.side)
		in := []*ir.Tensor{x, w, nil}
		if c.withBias {
			in[2] = bias
		}
		ctx := &opkernel.Ctx{Threads: int(c.threads)}
		got := ir.NewTensor(ir.Float32, []int64{c.nb, 32, c.side, c.side})
		want := ir.NewTensor(ir.Float32, []int64{c.nb, 32, c.side, c.side})
		if err := f(ctx, n, in, []*ir.Tensor{got}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if err := conv(ctx, n, in, []*ir.Tensor{want}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !slices.Equal(got.F32(), want.F32()) {
			t.Errorf("case %d (%+v): the planned conv differs from the unplanned one", i, c)
		}
	}
	// A shape that no longer fits the weights is still refused after a
	// plan was made for a good one.
	x := randTensor(rng, 1, 8, 14, 14)
	y := ir.NewTensor(ir.Float32, []int64{1, 32, 14, 14})
	if err := f(&opkernel.Ctx{Threads: 1}, n, []*ir.Tensor{x, w, bias}, []*ir.Tensor{y}); err == nil {
		t.Error("an input with 8 channels for 16-channel weights was accepted")
	}
}
