package opstest

import (
	"math"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

func TestSelect(t *testing.T) {
	entries := []Entry{
		{Suite: "node", Test: "a", Ops: []string{"Add"}},
		{Suite: "node", Test: "b", Ops: []string{"Add", "Constant"}},
		{Suite: "node", Test: "c", Ops: []string{"Add", "Conv"}},
		{Suite: "simple", Test: "d", Ops: []string{"Max"}},
		{Suite: "node", Test: "e", Ops: []string{"Constant"}},
		{Suite: "node", Test: "f", Ops: []string{"NoSuchOp"}},
	}
	names := func(es []Entry) string {
		var s []string
		for _, e := range es {
			s = append(s, e.Test)
		}
		return strings.Join(s, ",")
	}
	mine := OpSet("Add", "Maximum")
	if got := names(Select(entries, Filter{Ops: mine})); got != "a,d" {
		t.Errorf("all suites: got %s, want a,d", got)
	}
	if got := names(Select(entries, Filter{Suites: []string{"node"}, Ops: mine, WithConstant: true})); got != "a,b" {
		t.Errorf("node suite with Constant: got %s, want a,b", got)
	}
}

func TestFillAndCompare(t *testing.T) {
	want := ir.Float32Tensor([]int64{3}, 1, float32(math.NaN()), float32(math.Inf(1)))
	got := ir.NewTensor(ir.Float32, []int64{3})
	FillNaN(got)
	if err := Close(got, want, 1e-4, 1e-3); err == nil {
		t.Fatal("NaN-filled output compared equal to finite reference")
	}
	copy(got.F32(), []float32{1.00001, float32(math.NaN()), float32(math.Inf(1))})
	if err := Close(got, want, 1e-4, 1e-3); err != nil {
		t.Fatalf("within tolerance: %v", err)
	}
	if err := Equal(got, want); err == nil {
		t.Fatal("Equal accepted a value that differs in its last bits")
	}
	got.F32()[2] = float32(math.Inf(-1))
	if err := Close(got, want, 1e-4, 1e-3); err == nil {
		t.Fatal("-Inf compared close to +Inf")
	}

	h := ir.NewTensor(ir.Float16, []int64{2})
	FillNaN(h)
	if f, _ := h.Float64s(); !math.IsNaN(f[0]) || !math.IsNaN(f[1]) {
		t.Fatalf("float16 fill: %v", f)
	}
	i := ir.Int64Tensor([]int64{2}, 5, 6)
	j := ir.NewTensor(ir.Int64, []int64{2})
	FillJunk(j)
	if err := Close(j, i, 1, 1); err == nil {
		t.Fatal("integers must compare exactly")
	}
	j.I64()[0], j.I64()[1] = 5, 6
	if err := Close(j, i, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := Equal(ir.NewTensor(ir.Int64, []int64{1, 2}), i); err == nil {
		t.Fatal("shape difference not reported")
	}
}

// absMode switches the fake Abs kernel: 0 correct, 1 leaves the last
// element unwritten, 2 fails as unsupported.
var absMode int

func init() {
	opkernel.Register("Abs", func(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if absMode == 2 {
			return opkernel.Unsupportedf(n, "fake")
		}
		x, y := in[0].F32(), out[0].F32()
		if absMode == 1 {
			y = y[:len(y)-1]
		}
		for i := range y {
			y[i] = float32(math.Abs(float64(x[i])))
		}
		return nil
	})
}

// TestHarness runs the real test_abs case on a fake kernel: the harness
// must pass a correct kernel, catch an unwritten element and report a
// kernel's Unsupported as a skip.
func TestHarness(t *testing.T) {
	var abs []Entry
	for _, e := range Select(Manifest(t), Filter{Suites: []string{"node"}, Ops: RegisteredOps()}) {
		if e.Test == "test_abs" {
			abs = append(abs, e)
		}
	}
	if len(abs) != 1 {
		t.Fatalf("test_abs selected %d times", len(abs))
	}
	check := func(got, want *ir.Tensor) error { return Close(got, want, 1e-6, 0) }
	t.Cleanup(func() { absMode = 0 })
	for mode, want := range []string{"", "differ", "not applicable"} {
		absMode = mode
		err := runCase(abs[0], []int{1, 3}, FillNaN, check)
		if (err == nil) != (want == "") || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("mode %d: got error %v, want %q", mode, err, want)
		}
	}
}
