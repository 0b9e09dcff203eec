package nn

import (
	"math"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
	"gkconv/internal/runtime/ops/opstest"
)

// TestMiscONNXBackend runs the backend node tests of Col2Im, the window
// generators, MelWeightMatrix and TfIdfVectorizer.
func TestMiscONNXBackend(t *testing.T) {
	cases := opstest.Select(opstest.Manifest(t), opstest.Filter{Suites: []string{"node"}, Ops: opstest.OpSet(
		"Col2Im", "BlackmanWindow", "HammingWindow", "HannWindow", "MelWeightMatrix", "TfIdfVectorizer")})
	if passed := opstest.RunAll(t, cases, opstest.Check{Threads: []int{1, 3}}); len(passed) < 19 {
		t.Errorf("%d backend tests passed, want the 19 of these ops that onnxruntime passes", len(passed))
	}
}

// runOne runs op on inputs into an output of want's dtype and shape and
// compares the values.
func runOne(t *testing.T, name, op string, attrs ir.Attrs, in []*ir.Tensor, want *ir.Tensor) {
	t.Helper()
	f, _ := opkernel.Lookup(op)
	out := ir.NewTensor(want.DType, want.Shape)
	for i := range out.Data {
		out.Data[i] = 0xff
	}
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	if err := f(&opkernel.Ctx{Threads: 1}, &ir.Node{Name: name, Op: op, Attrs: attrs}, in, []*ir.Tensor{out}); err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	got, _ := out.Float64s()
	exp, _ := want.Float64s()
	for i := range exp {
		if math.Abs(got[i]-exp[i]) > 1e-6 {
			t.Errorf("%s: got %v, want %v", name, got, exp)
			return
		}
	}
}

func TestSignalOps(t *testing.T) {
	size := func(n int64) *ir.Tensor { return ir.Int64Tensor(nil, n) }
	f64 := func(v ...float64) *ir.Tensor {
		x := ir.NewTensor(ir.Float64, []int64{int64(len(v))})
		copy(x.F64(), v)
		return x
	}
	i32 := func(shape []int64, v ...int32) *ir.Tensor {
		x := ir.NewTensor(ir.Int32, shape)
		copy(x.I32(), v)
		return x
	}
	runOne(t, "hann float64", "HannWindow", ir.Attrs{"output_datatype": ir.IntAttr(int64(ir.Float64))}, []*ir.Tensor{size(4)}, f64(0, 0.5, 1, 0.5))
	runOne(t, "hann symmetric", "HannWindow", ir.Attrs{"periodic": ir.IntAttr(0)}, []*ir.Tensor{size(3)}, ir.Float32Tensor([]int64{3}, 0, 1, 0))
	runOne(t, "hamming int32", "HammingWindow", ir.Attrs{"output_datatype": ir.IntAttr(int64(ir.Int32))}, []*ir.Tensor{size(4)}, i32([]int64{4}, 0, 0, 1, 0))
	runOne(t, "blackman empty", "BlackmanWindow", nil, []*ir.Tensor{size(0)}, ir.Float32Tensor([]int64{0}))
	// Col2Im, one spatial dim: column k of block position l lands at l*stride - pad + k*dilation.
	runOne(t, "col2im strided", "Col2Im", ir.Attrs{"strides": ir.IntsAttr(2)},
		[]*ir.Tensor{ir.Float32Tensor([]int64{1, 2, 2}, 1, 2, 3, 4), ir.Int64Tensor([]int64{1}, 5), ir.Int64Tensor([]int64{1}, 2)},
		ir.Float32Tensor([]int64{1, 1, 5}, 1, 3, 2, 4, 0))
	runOne(t, "col2im padded, overlapping", "Col2Im", ir.Attrs{"pads": ir.IntsAttr(1, 1)},
		[]*ir.Tensor{ir.Float32Tensor([]int64{1, 2, 4}, 1, 2, 3, 4, 10, 20, 30, 40), ir.Int64Tensor([]int64{1}, 3), ir.Int64Tensor([]int64{1}, 2)},
		ir.Float32Tensor([]int64{1, 1, 3}, 12, 23, 34))
	runOne(t, "col2im dilated 2-D", "Col2Im", ir.Attrs{"dilations": ir.IntsAttr(1, 2)},
		[]*ir.Tensor{ir.Float32Tensor([]int64{1, 2, 1}, 5, 7), ir.Int64Tensor([]int64{2}, 1, 3), ir.Int64Tensor([]int64{2}, 1, 2)},
		ir.Float32Tensor([]int64{1, 1, 1, 3}, 5, 0, 7))
	pool := ir.Attrs{"min_gram_length": ir.IntAttr(1), "max_gram_length": ir.IntAttr(2), "max_skip_count": ir.IntAttr(1),
		"ngram_counts": ir.IntsAttr(0, 1), "ngram_indexes": ir.IntsAttr(0, 1), "pool_int64s": ir.IntsAttr(1, 1, 2),
		"mode": ir.StringAttr("TF")}
	x := i32([]int64{4}, 1, 2, 1, 2)
	runOne(t, "tfidf TF, unigrams once", "TfIdfVectorizer", pool, []*ir.Tensor{x}, ir.Float32Tensor([]int64{2}, 2, 2))
	with := func(kv ...any) ir.Attrs {
		a := ir.Attrs{}
		for k, v := range pool {
			a[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			a[kv[i].(string)] = kv[i+1].(ir.Attr)
		}
		return a
	}
	runOne(t, "tfidf TFIDF", "TfIdfVectorizer", with("mode", ir.StringAttr("TFIDF"), "weights", ir.FloatsAttr(0.5, 3)), []*ir.Tensor{x}, ir.Float32Tensor([]int64{2}, 1, 6))
	runOne(t, "tfidf IDF", "TfIdfVectorizer", with("mode", ir.StringAttr("IDF"), "weights", ir.FloatsAttr(0.5, 3)), []*ir.Tensor{x}, ir.Float32Tensor([]int64{2}, 0.5, 3))
	bigrams := with("min_gram_length", ir.IntAttr(2), "max_skip_count", ir.IntAttr(2))
	runOne(t, "tfidf skips, batch", "TfIdfVectorizer", bigrams, []*ir.Tensor{i32([]int64{2, 5}, 1, 5, 2, 1, 2, 2, 2, 2, 2, 1)},
		ir.Float32Tensor([]int64{2, 2}, 0, 2, 0, 0))
	runOne(t, "mel 2 bins", "MelWeightMatrix", nil, []*ir.Tensor{ir.Int64Tensor(nil, 2), ir.Int64Tensor(nil, 8), ir.Int64Tensor(nil, 100),
		ir.Float32Tensor(nil, 0), ir.Float32Tensor(nil, 50)}, melReference(2, 8, 100, 0, 50))
}

// melReference is the ONNX definition of MelWeightMatrix written out
// directly (float32 output).
func melReference(bins, dft int, rate, lo, hi float64) *ir.Tensor {
	toMel := func(h float64) float64 { return 2595 * math.Log10(1+h/700) }
	step := (toMel(hi) - toMel(lo)) / float64(bins+2)
	fb := make([]int, bins+2)
	for i := range fb {
		fb[i] = int(math.Floor(float64(dft+1) * 700 * (math.Pow(10, (toMel(lo)+float64(i)*step)/2595) - 1) / rate))
	}
	spec := dft/2 + 1
	out := ir.NewTensor(ir.Float32, []int64{int64(spec), int64(bins)})
	w := out.F32()
	for i := 0; i < bins; i++ {
		for j := 0; j < spec; j++ {
			switch {
			case j == fb[i+1]:
				w[j*bins+i] = 1
			case j > fb[i] && j < fb[i+1]:
				w[j*bins+i] = float32(j-fb[i]) / float32(fb[i+1]-fb[i])
			case j > fb[i+1] && j < fb[i+2]:
				w[j*bins+i] = float32(fb[i+2]-j) / float32(fb[i+2]-fb[i+1])
			}
		}
	}
	return out
}
