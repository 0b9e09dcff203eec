package opstest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/ir"
)

// FillJunk sets every byte to 0xAB (and strings to "junk"): for byte-exact
// checks, where any unwritten element differs from the reference.
func FillJunk(t *ir.Tensor) {
	for i := range t.Data {
		t.Data[i] = 0xAB
	}
	for i := range t.Strings {
		t.Strings[i] = "junk"
	}
}

// FillNaN sets float elements to NaN and the others to junk bytes: for
// tolerance checks, which accept any finite junk that happens to be close.
func FillNaN(t *ir.Tensor) {
	FillJunk(t)
	var bits uint64
	switch t.DType {
	case ir.Float32:
		bits = uint64(math.Float32bits(float32(math.NaN())))
	case ir.Float64:
		bits = math.Float64bits(math.NaN())
	case ir.Float16:
		bits = 0x7e00
	case ir.BFloat16:
		bits = 0x7fc0
	default:
		return
	}
	sz := t.DType.Size()
	for i := 0; i+sz <= len(t.Data); i += sz {
		switch sz {
		case 2:
			binary.LittleEndian.PutUint16(t.Data[i:], uint16(bits))
		case 4:
			binary.LittleEndian.PutUint32(t.Data[i:], uint32(bits))
		case 8:
			binary.LittleEndian.PutUint64(t.Data[i:], bits)
		}
	}
}

// Equal checks dtype, shape and every byte (every string).
func Equal(got, want *ir.Tensor) error {
	if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) {
		return fmt.Errorf("got %s, want %s", got, want)
	}
	if want.DType == ir.String {
		for i := range want.Strings {
			if got.Strings[i] != want.Strings[i] {
				return fmt.Errorf("element %d = %q, want %q", i, got.Strings[i], want.Strings[i])
			}
		}
		return nil
	}
	for i := range want.Data {
		if got.Data[i] != want.Data[i] {
			return fmt.Errorf("byte %d differs:\ngot  %s\nwant %s", i, got.Summary(24), want.Summary(24))
		}
	}
	return nil
}

// Tol returns the default tolerances for a float dtype: float16/bfloat16
// results are rounded from float32, so they get a looser bound.
func Tol(dt ir.DType) (atol, rtol float64) {
	if dt == ir.Float16 || dt == ir.BFloat16 {
		return 1e-2, 1e-2
	}
	return 1e-4, 1e-3
}

// Close checks dtype and shape, float elements within atol+rtol*|want| (NaN
// matches NaN, infinities must be equal) and the other dtypes exactly.
func Close(got, want *ir.Tensor, atol, rtol float64) error {
	if !want.DType.IsFloat() {
		return Equal(got, want)
	}
	if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) {
		return fmt.Errorf("got %s, want %s", got, want)
	}
	g, err := got.Float64s()
	if err != nil {
		return err
	}
	w, err := want.Float64s()
	if err != nil {
		return err
	}
	bad := 0
	var first string
	for i := range w {
		a, b := g[i], w[i]
		var ok bool
		switch {
		case math.IsNaN(b):
			ok = math.IsNaN(a)
		case math.IsInf(b, 0):
			ok = a == b
		default:
			ok = math.Abs(a-b) <= atol+rtol*math.Abs(b) // false for a NaN
		}
		if !ok {
			if bad == 0 {
				first = fmt.Sprintf("element %d = %g, want %g", i, a, b)
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d elements differ; first: %s", bad, len(w), first)
	}
	return nil
}

// Check says how RunAll tests each case.
type Check struct {
	// Threads lists the ctx.Threads values to run each case with; each run
	// starts from freshly filled outputs.
	Threads []int
	// Exact compares bytes (data-movement ops); otherwise floats are compared
	// with Tol and the outputs are pre-filled with NaN.
	Exact bool
	// FollowORT names tests (by Entry.Test) whose reference onnxruntime
	// disagrees with and whose values here are onnxruntime's, with why:
	// such a test must still fail against the suite's reference (and
	// onnxruntime must fail it too), and is then reported as a skip; the
	// package checks onnxruntime's values in its own tests.
	FollowORT map[string]string
}

// RunAll runs each entry as a subtest named by Entry.Name: not applicable
// cases skip, wrong results fail. It logs the counts, fails when no case
// passed, and returns the names of the cases that passed.
func RunAll(t *testing.T, entries []Entry, chk Check) (passed []string) {
	t.Helper()
	if len(chk.Threads) == 0 {
		chk.Threads = []int{1, 3}
	}
	fill, compare := FillNaN, func(got, want *ir.Tensor) error {
		atol, rtol := Tol(want.DType)
		return Close(got, want, atol, rtol)
	}
	if chk.Exact {
		fill, compare = FillJunk, Equal
	}
	skipped, failed := 0, 0
	for _, e := range entries {
		outcome := "fail" // set by the subtest; stays "fail" on t.Fatal
		t.Run(e.Name(), func(t *testing.T) {
			err := runCase(e, chk.Threads, fill, compare)
			if why, ok := chk.FollowORT[e.Test]; ok {
				switch {
				case e.ORT != "fail":
					t.Fatalf("listed as following onnxruntime, but onnxruntime's result in the manifest is %q", e.ORT)
				case err == nil:
					t.Fatal("listed as following onnxruntime, but it now matches the suite's reference: take it off the list")
				}
				outcome = "skip"
				t.Skipf("onnxruntime's values, not the suite's (%s): %v", why, err)
			}
			var s *Skip
			switch {
			case errors.As(err, &s):
				outcome = "skip"
				t.Skip(strings.ReplaceAll(s.Reason, "\n", ";"))
			case err != nil:
				t.Fatal(err)
			}
			outcome = "pass"
		})
		switch outcome {
		case "pass":
			passed = append(passed, e.Name())
		case "skip":
			skipped++
		default:
			failed++
		}
	}
	t.Logf("ONNX backend tests: %d selected, %d passed, %d failed, %d skipped", len(entries), len(passed), failed, skipped)
	if len(passed) == 0 {
		t.Fatal("no backend test passed")
	}
	return passed
}

// runCase loads e and checks it at each thread count.
func runCase(e Entry, threads []int, fill func(*ir.Tensor), compare func(got, want *ir.Tensor) error) error {
	c, err := Load(e)
	if err != nil {
		return err
	}
	for _, th := range threads {
		got, err := c.Run(th, fill)
		if err != nil {
			return fmt.Errorf("%d threads: %w", th, err)
		}
		for i, g := range got {
			if err := compare(g, c.Want[i]); err != nil {
				return fmt.Errorf("%d threads: output %d (%s): %w", th, i, c.Graph.Outputs[i].Name, err)
			}
		}
	}
	return nil
}
