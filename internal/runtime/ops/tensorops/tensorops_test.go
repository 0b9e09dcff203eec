package tensorops

import (
	"errors"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/opkernel"
)

// call runs a registered op on fresh output tensors of the given dtypes and
// shapes; each output is pre-filled with garbage so unwritten elements show.
func call(t *testing.T, threads int, op string, attrs ir.Attrs, in []*ir.Tensor, outs ...*ir.Tensor) error {
	t.Helper()
	fn, ok := opkernel.Lookup(op)
	if !ok {
		t.Fatalf("op %s not registered", op)
	}
	for _, o := range outs {
		for i := range o.Data {
			o.Data[i] = 0xCD
		}
		for i := range o.Strings {
			o.Strings[i] = "garbage"
		}
	}
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	return fn(&opkernel.Ctx{Threads: threads}, &ir.Node{Name: "n", Op: op, Attrs: attrs}, in, outs)
}

// smallParallel lowers the parallel threshold for one test so the
// multi-threaded paths run on small tensors too.
func smallParallel(t *testing.T) {
	old := parBytes
	parBytes = 64
	t.Cleanup(func() { parBytes = old })
}

func f32(shape []int64, v ...float32) *ir.Tensor { return ir.Float32Tensor(shape, v...) }
func i64(v ...int64) *ir.Tensor                  { return ir.Int64Tensor([]int64{int64(len(v))}, v...) }
func i64s(v int64) *ir.Tensor                    { return ir.Int64Tensor([]int64{}, v) }

func i32(shape []int64, v ...int32) *ir.Tensor {
	t := ir.NewTensor(ir.Int32, shape)
	copy(t.I32(), v)
	return t
}

func i8(shape []int64, v ...int8) *ir.Tensor {
	t := ir.NewTensor(ir.Int8, shape)
	copy(t.I8(), v)
	return t
}

func strs(shape []int64, v ...string) *ir.Tensor {
	t := ir.NewTensor(ir.String, shape)
	copy(t.Strings, v)
	return t
}

func iota32(shape ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		t.F32()[i] = float32(i)
	}
	return t
}

// vals returns a tensor's elements as float64 (or its strings).
func vals(t *ir.Tensor) any {
	if t.DType == ir.String {
		return t.Strings
	}
	v, _ := t.Float64s()
	return v
}

type tcase struct {
	name  string
	op    string
	attrs ir.Attrs
	in    []*ir.Tensor
	want  []*ir.Tensor
}

func TestOps(t *testing.T) {
	smallParallel(t)
	half := func(shape []int64, v ...float32) *ir.Tensor {
		x := ir.NewTensor(ir.Float16, shape)
		for i, f := range v {
			x.U16()[i] = ir.F32ToF16(f)
		}
		return x
	}
	cases := []tcase{
		{"reshape", "Reshape", nil, []*ir.Tensor{iota32(2, 3), i64(3, 2)}, []*ir.Tensor{f32([]int64{3, 2}, 0, 1, 2, 3, 4, 5)}},
		{"unsqueeze strings", "Unsqueeze", nil, []*ir.Tensor{strs([]int64{2}, "a", "b"), i64(0)}, []*ir.Tensor{strs([]int64{1, 2}, "a", "b")}},
		{"transpose default", "Transpose", nil, []*ir.Tensor{iota32(2, 3)}, []*ir.Tensor{f32([]int64{3, 2}, 0, 3, 1, 4, 2, 5)}},
		{"transpose 0213", "Transpose", ir.Attrs{"perm": ir.IntsAttr(0, 2, 1, 3)}, []*ir.Tensor{iota32(1, 2, 2, 2)},
			[]*ir.Tensor{f32([]int64{1, 2, 2, 2}, 0, 1, 4, 5, 2, 3, 6, 7)}},
		{"transpose 0231", "Transpose", ir.Attrs{"perm": ir.IntsAttr(0, 2, 3, 1)}, []*ir.Tensor{iota32(1, 2, 2, 2)},
			[]*ir.Tensor{f32([]int64{1, 2, 2, 2}, 0, 4, 1, 5, 2, 6, 3, 7)}},
		{"transpose negative perm", "Transpose", ir.Attrs{"perm": ir.IntsAttr(-1, 0)}, []*ir.Tensor{i8([]int64{2, 2}, 1, 2, 3, 4)},
			[]*ir.Tensor{i8([]int64{2, 2}, 1, 3, 2, 4)}},
		{"transpose strings", "Transpose", nil, []*ir.Tensor{strs([]int64{2, 2}, "a", "b", "c", "d")}, []*ir.Tensor{strs([]int64{2, 2}, "a", "c", "b", "d")}},
		{"concat axis -1", "Concat", ir.Attrs{"axis": ir.IntAttr(-1)}, []*ir.Tensor{iota32(2, 1), f32([]int64{2, 2}, 7, 8, 9, 10)},
			[]*ir.Tensor{f32([]int64{2, 3}, 0, 7, 8, 1, 9, 10)}},
		{"concat empty input", "Concat", nil, []*ir.Tensor{iota32(0, 2), iota32(1, 2)}, []*ir.Tensor{f32([]int64{1, 2}, 0, 1)}},
		{"concat strings", "Concat", nil, []*ir.Tensor{strs([]int64{1}, "x"), strs([]int64{2}, "y", "z")}, []*ir.Tensor{strs([]int64{3}, "x", "y", "z")}},
		{"split uneven", "Split", ir.Attrs{"axis": ir.IntAttr(1), "num_outputs": ir.IntAttr(3)}, []*ir.Tensor{iota32(2, 7)},
			[]*ir.Tensor{f32([]int64{2, 3}, 0, 1, 2, 7, 8, 9), f32([]int64{2, 3}, 3, 4, 5, 10, 11, 12), f32([]int64{2, 1}, 6, 13)}},
		{"split explicit", "Split", nil, []*ir.Tensor{iota32(5), i64(1, 4)}, []*ir.Tensor{f32([]int64{1}, 0), f32([]int64{4}, 1, 2, 3, 4)}},
		{"slice negative step, INT_MIN end", "Slice", nil, []*ir.Tensor{iota32(5), i64(-1), i64(math.MinInt64), i64(0), i64(-2)},
			[]*ir.Tensor{f32([]int64{3}, 4, 2, 0)}},
		{"slice INT_MAX end, clamped start", "Slice", nil, []*ir.Tensor{iota32(2, 4), i64(-10), i64(math.MaxInt64), i64(1), i64(3)},
			[]*ir.Tensor{f32([]int64{2, 2}, 0, 3, 4, 7)}},
		{"slice empty", "Slice", nil, []*ir.Tensor{iota32(4), i64(3), i64(1)}, []*ir.Tensor{f32([]int64{0})}},
		{"slice inner block", "Slice", nil, []*ir.Tensor{iota32(3, 2), i64(2), i64(-4), i64(0), i64(-2)},
			[]*ir.Tensor{f32([]int64{2, 2}, 4, 5, 0, 1)}},
		{"gather axis1 negative int32", "Gather", ir.Attrs{"axis": ir.IntAttr(1)}, []*ir.Tensor{iota32(2, 3), i32([]int64{2}, -1, 0)},
			[]*ir.Tensor{f32([]int64{2, 2}, 2, 0, 5, 3)}},
		{"gather rows scalar index", "Gather", nil, []*ir.Tensor{iota32(3, 2), i64s(2)}, []*ir.Tensor{f32([]int64{2}, 4, 5)}},
		{"gatherD axis0", "GatherD", nil, []*ir.Tensor{iota32(3, 2), ir.Int64Tensor([]int64{2, 2}, 2, 0, -3, 1)},
			[]*ir.Tensor{f32([]int64{2, 2}, 4, 1, 0, 3)}},
		{"gatherD axis1 smaller indices", "GatherD", ir.Attrs{"axis": ir.IntAttr(1)}, []*ir.Tensor{iota32(3, 3), ir.Int64Tensor([]int64{2, 1}, 2, 0)},
			[]*ir.Tensor{f32([]int64{2, 1}, 2, 3)}},
		{"pad constant with crop", "Pad", nil, []*ir.Tensor{iota32(3), i64(-1, 2), f32([]int64{}, 9)}, []*ir.Tensor{f32([]int64{4}, 1, 2, 9, 9)}},
		{"pad reflect", "Pad", ir.Attrs{"mode": ir.StringAttr("reflect")}, []*ir.Tensor{iota32(3), i64(3, 2)}, []*ir.Tensor{f32([]int64{8}, 1, 2, 1, 0, 1, 2, 1, 0)}},
		{"pad edge 2d axes", "Pad", ir.Attrs{"mode": ir.StringAttr("edge")}, []*ir.Tensor{iota32(2, 2), i64(1, 0), nil, i64(-2)},
			[]*ir.Tensor{f32([]int64{3, 2}, 0, 1, 0, 1, 2, 3)}},
		{"pad wrap", "Pad", ir.Attrs{"mode": ir.StringAttr("wrap")}, []*ir.Tensor{iota32(1, 3), i64(0, 4, 0, 1)},
			[]*ir.Tensor{f32([]int64{1, 8}, 2, 0, 1, 2, 0, 1, 2, 0)}},
		{"tile", "Tile", nil, []*ir.Tensor{iota32(2, 2), i64(2, 3)}, []*ir.Tensor{f32([]int64{4, 6},
			0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3)}},
		{"depth to space DCR", "DepthToSpace", ir.Attrs{"blocksize": ir.IntAttr(2)}, []*ir.Tensor{iota32(1, 4, 1, 2)},
			[]*ir.Tensor{f32([]int64{1, 1, 2, 4}, 0, 2, 1, 3, 4, 6, 5, 7)}},
		{"depth to space CRD", "DepthToSpace", ir.Attrs{"blocksize": ir.IntAttr(2), "mode": ir.StringAttr("CRD")}, []*ir.Tensor{iota32(1, 8, 1, 1)},
			[]*ir.Tensor{f32([]int64{1, 2, 2, 2}, 0, 1, 2, 3, 4, 5, 6, 7)}},
		{"space to depth", "SpaceToDepth", ir.Attrs{"blocksize": ir.IntAttr(2)}, []*ir.Tensor{iota32(1, 1, 2, 4)},
			[]*ir.Tensor{f32([]int64{1, 4, 1, 2}, 0, 2, 1, 3, 4, 6, 5, 7)}},
		{"triu k=1", "Trilu", nil, []*ir.Tensor{iota32(3, 3), i64s(1)}, []*ir.Tensor{f32([]int64{3, 3}, 0, 1, 2, 0, 0, 5, 0, 0, 0)}},
		{"tril k=-1 batched", "Trilu", ir.Attrs{"upper": ir.IntAttr(0)}, []*ir.Tensor{iota32(2, 2, 2), i64s(-1)},
			[]*ir.Tensor{f32([]int64{2, 2, 2}, 0, 0, 2, 0, 0, 0, 6, 0)}},
		{"range int32 negative", "Range", nil, []*ir.Tensor{i32(nil, 10), i32(nil, 4), i32(nil, -3)}, []*ir.Tensor{i32([]int64{2}, 10, 7)}},
		{"range float", "Range", nil, []*ir.Tensor{f32(nil, 1), f32(nil, 2), f32(nil, 0.25)}, []*ir.Tensor{f32([]int64{4}, 1, 1.25, 1.5, 1.75)}},
		{"range empty", "Range", nil, []*ir.Tensor{i64s(5), i64s(1), i64s(1)}, []*ir.Tensor{ir.NewTensor(ir.Int64, []int64{0})}},
		{"shape slice", "Shape", ir.Attrs{"start": ir.IntAttr(-2), "end": ir.IntAttr(100)}, []*ir.Tensor{iota32(2, 3, 4)}, []*ir.Tensor{i64(3, 4)}},
		{"shape of strings", "Shape", nil, []*ir.Tensor{strs([]int64{2}, "a", "b")}, []*ir.Tensor{i64(2)}},
		{"size", "Size", nil, []*ir.Tensor{iota32(2, 3, 4)}, []*ir.Tensor{i64s(24)}},
		{"constant of shape int64", "ConstantOfShape", ir.Attrs{"value": ir.TensorAttr(ir.Int64Tensor([]int64{1}, 7))}, []*ir.Tensor{i64(2, 2)},
			[]*ir.Tensor{ir.Int64Tensor([]int64{2, 2}, 7, 7, 7, 7)}},
		{"constant of shape default", "ConstantOfShape", nil, []*ir.Tensor{i64(3)}, []*ir.Tensor{f32([]int64{3}, 0, 0, 0)}},
		{"topk largest ties", "TopK", nil, []*ir.Tensor{f32([]int64{2, 4}, 3, 1, 3, 2, 5, 5, 5, 4), i64(2)},
			[]*ir.Tensor{f32([]int64{2, 2}, 3, 3, 5, 5), ir.Int64Tensor([]int64{2, 2}, 0, 2, 0, 1)}},
		{"topk smallest axis0", "TopK", ir.Attrs{"axis": ir.IntAttr(0), "largest": ir.IntAttr(0)}, []*ir.Tensor{f32([]int64{3, 2}, 3, 0, 1, 0, 2, -1), i64(2)},
			[]*ir.Tensor{f32([]int64{2, 2}, 1, -1, 2, 0), ir.Int64Tensor([]int64{2, 2}, 1, 2, 2, 0)}},
		{"topk nan is largest", "TopK", nil, []*ir.Tensor{f32([]int64{3}, 1, float32(math.NaN()), 2), i64(1)},
			[]*ir.Tensor{f32([]int64{1}, float32(math.NaN())), ir.Int64Tensor([]int64{1}, 1)}},
		{"topk float16", "TopK", nil, []*ir.Tensor{half([]int64{3}, 0.5, 2, 1), i64(2)},
			[]*ir.Tensor{half([]int64{2}, 2, 1), ir.Int64Tensor([]int64{2}, 1, 2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, threads := range []int{1, 4} {
				outs := make([]*ir.Tensor, len(c.want))
				for i, w := range c.want {
					outs[i] = ir.NewTensor(w.DType, w.Shape)
				}
				if err := call(t, threads, c.op, c.attrs, c.in, outs...); err != nil {
					t.Fatal(err)
				}
				for i, w := range c.want {
					g, wv := vals(outs[i]), vals(w)
					if gf, ok := g.([]float64); ok {
						if !equalNaN(gf, wv.([]float64)) {
							t.Fatalf("output %d: got %v, want %v", i, g, wv)
						}
					} else if !reflect.DeepEqual(g, wv) {
						t.Fatalf("output %d: got %v, want %v", i, g, wv)
					}
				}
			}
		})
	}
}

func equalNaN(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name        string
		op          string
		attrs       ir.Attrs
		in          []*ir.Tensor
		out         *ir.Tensor
		unsupported bool
	}{
		{"gather index out of range", "Gather", nil, []*ir.Tensor{iota32(3), i64(3)}, ir.NewTensor(ir.Float32, []int64{1}), false},
		{"slice step 0", "Slice", nil, []*ir.Tensor{iota32(3), i64(0), i64(3), i64(0), i64(0)}, ir.NewTensor(ir.Float32, []int64{3}), false},
		{"transpose bad perm", "Transpose", ir.Attrs{"perm": ir.IntsAttr(0, 0)}, []*ir.Tensor{iota32(2, 2)}, ir.NewTensor(ir.Float32, []int64{2, 2}), false},
		{"transpose wrong output", "Transpose", nil, []*ir.Tensor{iota32(2, 3)}, ir.NewTensor(ir.Float32, []int64{2, 3}), false},
		{"reshape count mismatch", "Reshape", nil, []*ir.Tensor{iota32(4), i64(5)}, ir.NewTensor(ir.Float32, []int64{5}), false},
		{"reshape dtype mismatch", "Reshape", nil, []*ir.Tensor{iota32(4), i64(4)}, ir.NewTensor(ir.Int32, []int64{4}), false},
		{"short input buffer", "Reshape", nil, []*ir.Tensor{{DType: ir.Float32, Shape: []int64{4}, Data: make([]byte, 8)}, i64(4)}, ir.NewTensor(ir.Float32, []int64{4}), false},
		{"pad bad mode", "Pad", ir.Attrs{"mode": ir.StringAttr("mirror")}, []*ir.Tensor{iota32(2), i64(1, 1)}, ir.NewTensor(ir.Float32, []int64{4}), true},
		{"reflect-pad empty dim", "Pad", ir.Attrs{"mode": ir.StringAttr("reflect")}, []*ir.Tensor{iota32(0), i64(1, 1)}, ir.NewTensor(ir.Float32, []int64{2}), false},
		{"range wrong count", "Range", nil, []*ir.Tensor{i64s(0), i64s(5), i64s(1)}, ir.NewTensor(ir.Int64, []int64{4}), false},
		{"range complex", "Range", nil, []*ir.Tensor{ir.NewTensor(ir.Complex64, nil), ir.NewTensor(ir.Complex64, nil), ir.NewTensor(ir.Complex64, nil)}, ir.NewTensor(ir.Complex64, []int64{0}), true},
		{"concat mismatched dims", "Concat", ir.Attrs{"axis": ir.IntAttr(0)}, []*ir.Tensor{iota32(1, 2), iota32(1, 3)}, ir.NewTensor(ir.Float32, []int64{2, 2}), false},
		{"missing input", "Gather", nil, []*ir.Tensor{iota32(2), nil}, ir.NewTensor(ir.Float32, []int64{1}), false},
		{"topk k too large", "TopK", nil, []*ir.Tensor{iota32(2), i64(3)}, ir.NewTensor(ir.Float32, []int64{3}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs := []*ir.Tensor{c.out}
			if c.op == "TopK" {
				outs = append(outs, ir.NewTensor(ir.Int64, c.out.Shape))
			}
			err := call(t, 1, c.op, c.attrs, c.in, outs...)
			if err == nil {
				t.Fatal("expected an error")
			}
			var u *opkernel.Unsupported
			if errors.As(err, &u) != c.unsupported {
				t.Fatalf("unsupported=%v expected, got %v", c.unsupported, err)
			}
		})
	}
}

// --- randomized checks of the fast paths against naive references ---

// naiveTranspose computes the permutation by multi-index arithmetic.
func naiveTranspose(src []float32, shape, perm []int) []float32 {
	r := len(shape)
	os := make([]int, r)
	for i, a := range perm {
		os[i] = shape[a]
	}
	inStride := make([]int, r)
	st := 1
	for d := r - 1; d >= 0; d-- {
		inStride[d] = st
		st *= shape[d]
	}
	out := make([]float32, len(src))
	idx := make([]int, r)
	for o := range out {
		rem := o
		for d := r - 1; d >= 0; d-- {
			idx[d] = rem % os[d]
			rem /= os[d]
		}
		off := 0
		for i, a := range perm {
			off += idx[i] * inStride[a]
		}
		out[o] = src[off]
	}
	return out
}

func randTensor(rng *rand.Rand, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		t.F32()[i] = rng.Float32()
	}
	return t
}

func TestTransposeRandom(t *testing.T) {
	smallParallel(t)
	rng := rand.New(rand.NewSource(1))
	shapes := [][]int64{{1, 128, 12, 64}, {2, 64, 4, 32}, {3, 1, 5, 7, 2}, {17, 33}, {300, 257}, {2, 3, 4, 5, 6, 7}, {1}, {4, 1, 1, 5}}
	for _, shape := range shapes {
		r := len(shape)
		perms := [][]int{}
		if r == 4 {
			perms = append(perms, []int{0, 2, 1, 3}, []int{0, 2, 3, 1}, []int{0, 3, 1, 2})
		}
		for range 4 {
			perms = append(perms, rng.Perm(r))
		}
		for _, perm := range perms {
			x := randTensor(rng, shape...)
			want := naiveTranspose(x.F32(), dims(shape), perm)
			os := make([]int64, r)
			p64 := make([]int64, r)
			for i, a := range perm {
				os[i] = shape[a]
				p64[i] = int64(a)
			}
			for _, threads := range []int{1, 3} {
				o := ir.NewTensor(ir.Float32, os)
				if err := call(t, threads, "Transpose", ir.Attrs{"perm": ir.IntsAttr(p64...)}, []*ir.Tensor{x}, o); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(o.F32(), want) {
					t.Fatalf("shape %v perm %v threads %d: mismatch", shape, perm, threads)
				}
			}
		}
	}
}

func TestSliceRandom(t *testing.T) {
	smallParallel(t)
	rng := rand.New(rand.NewSource(2))
	for iter := range 200 {
		r := 1 + rng.Intn(4)
		shape := make([]int64, r)
		for i := range shape {
			shape[i] = int64(1 + rng.Intn(9))
		}
		if iter%20 == 0 {
			shape[0] = 300 // big enough to run in parallel
		}
		x := randTensor(rng, shape...)
		var starts, ends, axes, steps []int64
		for a := range r {
			if rng.Intn(3) == 0 {
				continue
			}
			d := shape[a]
			st := int64(rng.Intn(5) - 2)
			if st == 0 {
				st = 1
			}
			starts = append(starts, int64(rng.Intn(int(2*d+3)))-d-1)
			ends = append(ends, int64(rng.Intn(int(2*d+3)))-d-1)
			axes = append(axes, int64(a-r*rng.Intn(2)))
			steps = append(steps, st)
		}
		// naive: per axis list of selected indices
		sel := make([][]int, r)
		for a := range r {
			for i := range int(shape[a]) {
				sel[a] = append(sel[a], i)
			}
		}
		for j, a64 := range axes {
			a := int((a64 + int64(r)) % int64(r))
			d := shape[a]
			s, e, st := starts[j], ends[j], steps[j]
			if s < 0 {
				s += d
			}
			if e < 0 {
				e += d
			}
			var idx []int
			if st > 0 {
				s, e = clamp(s, 0, d), clamp(e, 0, d)
				for i := s; i < e; i += st {
					idx = append(idx, int(i))
				}
			} else {
				s, e = clamp(s, 0, d-1), clamp(e, -1, d-1)
				for i := s; i > e; i += st {
					idx = append(idx, int(i))
				}
			}
			sel[a] = idx
		}
		os := make([]int64, r)
		for a := range r {
			os[a] = int64(len(sel[a]))
		}
		var want []float32
		var rec func(a, off int)
		xd := dims(shape)
		rec = func(a, off int) {
			if a == r {
				want = append(want, x.F32()[off])
				return
			}
			for _, i := range sel[a] {
				rec(a+1, off*xd[a]+i)
			}
		}
		rec(0, 0)
		o := ir.NewTensor(ir.Float32, os)
		err := call(t, 3, "Slice", nil, []*ir.Tensor{x, i64(starts...), i64(ends...), i64(axes...), i64(steps...)}, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			want = []float32{}
		}
		got := o.F32()
		if got == nil {
			got = []float32{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("shape %v starts %v ends %v axes %v steps %v: got %v want %v", shape, starts, ends, axes, steps, got, want)
		}
	}
}

func TestPadRandom(t *testing.T) {
	smallParallel(t)
	rng := rand.New(rand.NewSource(3))
	for _, mode := range []string{"constant", "reflect", "edge", "wrap"} {
		for range 50 {
			r := 1 + rng.Intn(3)
			shape := make([]int64, r)
			for i := range shape {
				shape[i] = int64(2 + rng.Intn(5))
			}
			pads := make([]int64, 2*r)
			os := make([]int64, r)
			emptyDim := false
			for a := range r {
				lo := -int(shape[a]) / 2
				pads[a] = int64(lo + rng.Intn(6))
				pads[a+r] = int64(lo + rng.Intn(6))
				os[a] = shape[a] + pads[a] + pads[a+r]
				kept := shape[a] - max(0, -pads[a]) - max(0, -pads[a+r])
				emptyDim = emptyDim || (kept == 0 && os[a] > 0)
			}
			x := randTensor(rng, shape...)
			o := ir.NewTensor(ir.Float32, os)
			err := call(t, 2, "Pad", ir.Attrs{"mode": ir.StringAttr(mode)}, []*ir.Tensor{x, i64(pads...), f32(nil, -1)}, o)
			if emptyDim && mode != "constant" {
				if err == nil {
					t.Fatalf("mode %s shape %v pads %v: padding an emptied dim must fail", mode, shape, pads)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			// naive: crop then map each output coordinate independently
			xd, od := dims(shape), dims(os)
			idx := make([]int, r)
			for p := range o.F32() {
				rem := p
				for d := r - 1; d >= 0; d-- {
					idx[d] = rem % od[d]
					rem /= od[d]
				}
				off, outside := 0, false
				for d := range r {
					lo := max(0, -int(pads[d]))
					n := xd[d] - lo - max(0, -int(pads[d+r]))
					c := idx[d] - max(0, int(pads[d]))
					switch {
					case c >= 0 && c < n:
					case mode == "constant":
						outside = true
					case mode == "edge":
						c = min(max(c, 0), n-1)
					case mode == "wrap":
						c = ((c % n) + n) % n
					case mode == "reflect" && n == 1:
						c = 0
					case mode == "reflect":
						for c < 0 || c >= n {
							if c < 0 {
								c = -c
							}
							if c >= n {
								c = 2*(n-1) - c
							}
						}
					}
					off = off*xd[d] + lo + c
				}
				want := float32(-1)
				if !outside {
					want = x.F32()[off]
				}
				if o.F32()[p] != want {
					t.Fatalf("mode %s shape %v pads %v: element %d got %v want %v", mode, shape, pads, p, o.F32()[p], want)
				}
			}
		}
	}
}

func TestGatherEmbeddingParallel(t *testing.T) {
	smallParallel(t)
	rng := rand.New(rand.NewSource(4))
	vocab, hidden, seq := 1000, 256, 300
	x := randTensor(rng, int64(vocab), int64(hidden))
	ids := ir.NewTensor(ir.Int64, []int64{1, int64(seq)})
	for i := range ids.I64() {
		ids.I64()[i] = int64(rng.Intn(2*vocab) - vocab)
	}
	o := ir.NewTensor(ir.Float32, []int64{1, int64(seq), int64(hidden)})
	if err := call(t, 4, "Gather", nil, []*ir.Tensor{x, ids}, o); err != nil {
		t.Fatal(err)
	}
	for j, id := range ids.I64() {
		if id < 0 {
			id += int64(vocab)
		}
		if !reflect.DeepEqual(o.F32()[j*hidden:(j+1)*hidden], x.F32()[int(id)*hidden:(int(id)+1)*hidden]) {
			t.Fatalf("row %d wrong", j)
		}
	}
}

func TestConcatSplitRoundTripParallel(t *testing.T) {
	smallParallel(t)
	rng := rand.New(rand.NewSource(5))
	a, b := randTensor(rng, 4, 128, 100), randTensor(rng, 4, 128, 300)
	cat := ir.NewTensor(ir.Float32, []int64{4, 128, 400})
	if err := call(t, 3, "Concat", ir.Attrs{"axis": ir.IntAttr(2)}, []*ir.Tensor{a, b}, cat); err != nil {
		t.Fatal(err)
	}
	a2, b2 := ir.NewTensor(ir.Float32, a.Shape), ir.NewTensor(ir.Float32, b.Shape)
	if err := call(t, 3, "Split", ir.Attrs{"axis": ir.IntAttr(-1)}, []*ir.Tensor{cat, i64(100, 300)}, a2, b2); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.F32(), a2.F32()) || !reflect.DeepEqual(b.F32(), b2.F32()) {
		t.Fatal("split(concat(a, b)) != (a, b)")
	}
	if cat.F32()[100] != b.F32()[0] || cat.F32()[400] != a.F32()[100] {
		t.Fatal("concat layout wrong")
	}
}

func TestTopKHeapPathMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	n := 1000
	x := ir.NewTensor(ir.Int32, []int64{int64(n)})
	for i := range x.I32() {
		x.I32()[i] = int32(rng.Intn(50)) // many ties
	}
	for _, largest := range []int64{0, 1} {
		for _, k := range []int{5, 900} { // heap path and sort path
			v, ix := ir.NewTensor(ir.Int32, []int64{int64(k)}), ir.NewTensor(ir.Int64, []int64{int64(k)})
			if err := call(t, 1, "TopK", ir.Attrs{"largest": ir.IntAttr(largest)}, []*ir.Tensor{x, i64(int64(k))}, v, ix); err != nil {
				t.Fatal(err)
			}
			for j := 0; j < k; j++ {
				p := ix.I64()[j]
				if x.I32()[p] != v.I32()[j] {
					t.Fatalf("value/index mismatch at %d", j)
				}
				if j > 0 {
					pv, pp := v.I32()[j-1], ix.I64()[j-1]
					ordered := (largest == 1 && pv > v.I32()[j]) || (largest == 0 && pv < v.I32()[j]) || (pv == v.I32()[j] && pp < p)
					if !ordered {
						t.Fatalf("largest=%d k=%d: order broken at %d", largest, k, j)
					}
				}
			}
			// the k-th value bounds every unselected one
			chosen := map[int64]bool{}
			for _, p := range ix.I64() {
				chosen[p] = true
			}
			kth := v.I32()[k-1]
			for i, xv := range x.I32() {
				if chosen[int64(i)] {
					continue
				}
				if (largest == 1 && xv > kth) || (largest == 0 && xv < kth) || (xv == kth && int64(i) < ix.I64()[k-1]) {
					t.Fatalf("largest=%d k=%d: element %d (%d) should have been chosen", largest, k, i, xv)
				}
			}
		}
	}
}

// TestTopKHeapFloatNaN: the heap path's early skip (a value that loses to
// the worst kept one outright) ranks NaN, ties and negative zero as the
// full sort does.
func TestTopKHeapFloatNaN(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	n := 2000
	x := ir.NewTensor(ir.Float32, []int64{1, int64(n)})
	for i := range x.F32() {
		switch rng.Intn(20) {
		case 0:
			x.F32()[i] = float32(math.NaN())
		case 1:
			x.F32()[i] = float32(math.Copysign(0, -1))
		default:
			x.F32()[i] = float32(rng.Intn(40) - 20)
		}
	}
	for _, largest := range []int64{0, 1} {
		run := func(k int) ([]float32, []int64) {
			v, ix := ir.NewTensor(ir.Float32, []int64{1, int64(k)}), ir.NewTensor(ir.Int64, []int64{1, int64(k)})
			if err := call(t, 1, "TopK", ir.Attrs{"largest": ir.IntAttr(largest)}, []*ir.Tensor{x, i64(int64(k))}, v, ix); err != nil {
				t.Fatal(err)
			}
			return v.F32(), ix.I64()
		}
		hv, hi := run(7)
		sv, si := run(n)
		for j := range hv {
			if math.Float32bits(hv[j]) != math.Float32bits(sv[j]) && !(hv[j] != hv[j] && sv[j] != sv[j]) || hi[j] != si[j] {
				t.Fatalf("largest=%d: position %d: heap %v@%d, sort %v@%d", largest, j, hv[j], hi[j], sv[j], si[j])
			}
		}
	}
}

// TestTransposeEveryISALevel: the C 8x8 register-block transpose of 4-byte
// elements gives the naive result at every ISA level (odd edges, bands of
// more than 256 rows, int32 too).
func TestTransposeEveryISALevel(t *testing.T) {
	defer cpuisa.Force(cpuisa.Detected())
	rng := rand.New(rand.NewSource(3))
	for _, lv := range []cpuisa.Level{cpuisa.Portable, cpuisa.AVX2, cpuisa.AVX512} {
		if err := cpuisa.Force(lv); err != nil {
			continue
		}
		for _, c := range []struct {
			shape []int64
			perm  []int
		}{{[]int64{300, 257}, []int{1, 0}}, {[]int64{1, 64, 37, 41}, []int{0, 2, 3, 1}}, {[]int64{2, 9, 600}, []int{0, 2, 1}}} {
			x := randTensor(rng, c.shape...)
			want := naiveTranspose(x.F32(), dims(c.shape), c.perm)
			os := make([]int64, len(c.perm))
			p64 := make([]int64, len(c.perm))
			for i, a := range c.perm {
				os[i], p64[i] = c.shape[a], int64(a)
			}
			o := ir.NewTensor(ir.Float32, os)
			if err := call(t, 1, "Transpose", ir.Attrs{"perm": ir.IntsAttr(p64...)}, []*ir.Tensor{x}, o); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o.F32(), want) {
				t.Fatalf("%v: shape %v perm %v: mismatch", lv, c.shape, c.perm)
			}
		}
	}
}
