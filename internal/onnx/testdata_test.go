package onnx

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gkconv/internal/ir"
	ob "gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
)

var update = flag.Bool("update", false, "regenerate testdata/ at the repo root")

// A testdataCase is one folder of testdata/: model.onnx and test_data_set_0
// with inputs and the outputs computed here, by hand.
type testdataCase struct {
	name    string
	model   *ob.Model
	inputs  []*onnxpb.TensorProto
	outputs []*onnxpb.TensorProto
	ops     []string // the IR ops the model must load as
}

// lcg gives deterministic values k/2^23 in [-1, 1), exact in float32.
type lcg uint32

func (s *lcg) next() float32 {
	*s = *s*1664525 + 1013904223
	return float32(int32(*s>>8)-(1<<23)) / (1 << 23)
}

func (s *lcg) fill(n int, scale float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = s.next() * scale
	}
	return out
}

func filled(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func to32(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}

func testdataCases() []testdataCase {
	var cases []testdataCase

	// mynet: y = x*2 + 1.
	{
		m := ob.New("mynet", 13).Input("x", ob.Float, 2, 3).Output("y", ob.Float, 2, 3)
		m.Init(ob.Scalar("two", 2), ob.Scalar("one", 1))
		m.Node("mul", "Mul", strs("x", "two"), strs("t"))
		m.Node("add", "Add", strs("t", "one"), strs("y"))
		x := filled(6, 0.5)
		y := make([]float32, 6)
		for i, v := range x {
			y[i] = v*2 + 1
		}
		cases = append(cases, testdataCase{"mynet", m,
			[]*onnxpb.TensorProto{ob.Float32s("x", i64(2, 3), x)},
			[]*onnxpb.TensorProto{ob.Float32s("y", i64(2, 3), y)},
			strs("Mul", "Add")})
	}

	// mynet_myop: out = ((x*2)^3 - y) * (x*2)^3.
	{
		m := ob.New("mynet_myop", 13).Input("x", ob.Float, 2, 3).Input("y", ob.Float, 2, 3).Output("out", ob.Float, 2, 3)
		m.Init(ob.Scalar("two", 2), ob.Scalar("three", 3))
		m.Node("mul", "Mul", strs("x", "two"), strs("a"))
		m.Node("pow", "Pow", strs("a", "three"), strs("p"))
		m.Node("sub", "Sub", strs("p", "y"), strs("s"))
		m.Node("mul2", "Mul", strs("s", "p"), strs("out"))
		x, y := filled(6, 0.2), filled(6, 0.3)
		out := make([]float64, 6)
		for i := range out {
			p := math.Pow(float64(x[i])*2, 3)
			out[i] = (p - float64(y[i])) * p
		}
		cases = append(cases, testdataCase{"mynet_myop", m,
			[]*onnxpb.TensorProto{ob.Float32s("x", i64(2, 3), x), ob.Float32s("y", i64(2, 3), y)},
			[]*onnxpb.TensorProto{ob.Float32s("out", i64(2, 3), to32(out))},
			strs("Mul", "Pow", "Sub", "Mul")})
	}

	// mlp: Gemm -> Relu -> MatMul -> Add -> Softmax.
	{
		const b, in, hid, out = 4, 8, 16, 4
		r := lcg(12345)
		x, w1, b1 := r.fill(b*in, 1), r.fill(in*hid, 0.5), r.fill(hid, 0.5)
		w2, b2 := r.fill(hid*out, 0.5), r.fill(out, 0.5)
		m := ob.New("mlp", 13).Input("x", ob.Float, b, in).Output("y", ob.Float, b, out)
		m.Init(ob.Float32s("w1", i64(in, hid), w1), ob.Float32s("b1", i64(hid), b1),
			ob.Float32s("w2", i64(hid, out), w2), ob.Float32s("b2", i64(out), b2))
		m.Node("fc1", "Gemm", strs("x", "w1", "b1"), strs("h"))
		m.Node("relu", "Relu", strs("h"), strs("r"))
		m.Node("fc2", "MatMul", strs("r", "w2"), strs("z0"))
		m.Node("bias2", "Add", strs("z0", "b2"), strs("z"))
		m.Node("softmax", "Softmax", strs("z"), strs("y"), ob.Int("axis", -1))
		y := make([]float64, b*out)
		for i := 0; i < b; i++ {
			h := make([]float64, hid)
			for j := range h {
				s := float64(b1[j])
				for k := 0; k < in; k++ {
					s += float64(x[i*in+k]) * float64(w1[k*hid+j])
				}
				h[j] = math.Max(s, 0)
			}
			z := y[i*out : (i+1)*out]
			mx := math.Inf(-1)
			for j := range z {
				s := float64(b2[j])
				for k := 0; k < hid; k++ {
					s += h[k] * float64(w2[k*out+j])
				}
				z[j] = s
				mx = math.Max(mx, s)
			}
			sum := 0.0
			for j := range z {
				z[j] = math.Exp(z[j] - mx)
				sum += z[j]
			}
			for j := range z {
				z[j] /= sum
			}
		}
		cases = append(cases, testdataCase{"mlp", m,
			[]*onnxpb.TensorProto{ob.Float32s("x", i64(b, in), x)},
			[]*onnxpb.TensorProto{ob.Float32s("y", i64(b, out), to32(y))},
			strs("MatMul", "BiasAdd", "ReLU", "MatMul", "Add", "Softmax")})
	}

	// layernorm_gelu: LayerNorm and Erf-GeLU decomposed as PyTorch exports them.
	{
		const n, s, c = 2, 4, 8
		r := lcg(777)
		x, gamma, beta := r.fill(n*s*c, 2), r.fill(c, 1), r.fill(c, 0.5)
		eps, sqrt2 := float32(1e-5), float32(math.Sqrt2)
		m := ob.New("layernorm_gelu", 13).Input("x", ob.Float, n, s, c).Output("y", ob.Float, n, s, c)
		m.Init(ob.Float32s("gamma", i64(c), gamma), ob.Float32s("beta", i64(c), beta),
			ob.Scalar("two", 2), ob.Scalar("eps", eps), ob.Scalar("sqrt2", sqrt2), ob.Scalar("one", 1), ob.Scalar("half", 0.5))
		m.Node("/ln/ReduceMean", "ReduceMean", strs("x"), strs("mean"), ob.Ints("axes", -1), ob.Int("keepdims", 1))
		m.Node("/ln/Sub", "Sub", strs("x", "mean"), strs("d"))
		m.Node("/ln/Pow", "Pow", strs("d", "two"), strs("d2"))
		m.Node("/ln/ReduceMean_1", "ReduceMean", strs("d2"), strs("var"), ob.Ints("axes", -1), ob.Int("keepdims", 1))
		m.Node("/ln/Add", "Add", strs("var", "eps"), strs("ve"))
		m.Node("/ln/Sqrt", "Sqrt", strs("ve"), strs("sd"))
		m.Node("/ln/Div", "Div", strs("d", "sd"), strs("nrm"))
		m.Node("/ln/Mul", "Mul", strs("nrm", "gamma"), strs("g"))
		m.Node("/ln/Add_1", "Add", strs("g", "beta"), strs("h"))
		m.Node("/act/Div", "Div", strs("h", "sqrt2"), strs("e1"))
		m.Node("/act/Erf", "Erf", strs("e1"), strs("e2"))
		m.Node("/act/Add", "Add", strs("e2", "one"), strs("e3"))
		m.Node("/act/Mul", "Mul", strs("h", "e3"), strs("e4"))
		m.Node("/act/Mul_1", "Mul", strs("e4", "half"), strs("y"))
		y := make([]float64, n*s*c)
		for row := 0; row < n*s; row++ {
			xs := x[row*c : (row+1)*c]
			mean := 0.0
			for _, v := range xs {
				mean += float64(v)
			}
			mean /= c
			variance := 0.0
			for _, v := range xs {
				variance += (float64(v) - mean) * (float64(v) - mean)
			}
			variance /= c
			sd := math.Sqrt(variance + float64(eps))
			for j, v := range xs {
				h := (float64(v)-mean)/sd*float64(gamma[j]) + float64(beta[j])
				y[row*c+j] = h * (1 + math.Erf(h/float64(sqrt2))) * 0.5
			}
		}
		cases = append(cases, testdataCase{"layernorm_gelu", m,
			[]*onnxpb.TensorProto{ob.Float32s("x", i64(n, s, c), x)},
			[]*onnxpb.TensorProto{ob.Float32s("y", i64(n, s, c), to32(y))},
			strs("ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "RealDiv", "Mul", "Add", "RealDiv", "Erf", "Add", "Mul", "Mul")})
	}

	// conv_same_dynamic: Conv(2x2, SAME_UPPER) -> Relu -> Conv(3x3, stride 2,
	// SAME_UPPER) on an input of dynamic dims, so the pads stay for run time
	// (the MindSpore interop suite runs its --primitiveSet=mindspore form:
	// Conv2D with pad_mode "same").
	{
		const c, h, w, m1, m2 = 2, 5, 7, 3, 2
		r := lcg(777)
		x, w1, b1, w2 := r.fill(c*h*w, 1), r.fill(m1*c*2*2, 0.5), r.fill(m1, 0.5), r.fill(m2*m1*3*3, 0.5)
		m := ob.New("conv_same_dynamic", 13).Input("x", ob.Float, "N", c, "H", "W").Output("y", ob.Float, "N", m2, "OH", "OW")
		m.Init(ob.Float32s("w1", i64(m1, c, 2, 2), w1), ob.Float32s("b1", i64(m1), b1), ob.Float32s("w2", i64(m2, m1, 3, 3), w2))
		m.Node("conv1", "Conv", strs("x", "w1", "b1"), strs("c1"), ob.String("auto_pad", "SAME_UPPER"))
		m.Node("relu", "Relu", strs("c1"), strs("r1"))
		m.Node("conv2", "Conv", strs("r1", "w2"), strs("y"), ob.String("auto_pad", "SAME_UPPER"), ob.Ints("strides", 2, 2))
		r1, oh1, ow1 := convSameUpper(to64(x), c, h, w, to64(w1), to64(b1), m1, 2, 1)
		for i, v := range r1 {
			r1[i] = math.Max(v, 0)
		}
		y, oh2, ow2 := convSameUpper(r1, m1, oh1, ow1, to64(w2), nil, m2, 3, 2)
		cases = append(cases, testdataCase{"conv_same_dynamic", m,
			[]*onnxpb.TensorProto{ob.Float32s("x", i64(1, c, h, w), x)},
			[]*onnxpb.TensorProto{ob.Float32s("y", i64(1, m2, int64(oh2), int64(ow2)), to32(y))},
			strs("Conv2D", "ReLU", "Conv2D")})
	}
	return cases
}

// dimsMatch: a graph shape (-1 for a dynamic dim) admits a concrete one.
func dimsMatch(graph, got []int64) bool {
	if len(graph) != len(got) {
		return false
	}
	for i, d := range graph {
		if d >= 0 && d != got[i] {
			return false
		}
	}
	return true
}

func to64(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, v := range xs {
		out[i] = float64(v)
	}
	return out
}

// convSameUpper is a reference 2-D convolution of one image x [c, h, w] by
// w [m, c, k, k] (bias b, or nil) with stride s and ONNX's SAME_UPPER pads
// (floor(total/2) before, the rest after), in float64.
func convSameUpper(x []float64, c, h, w int, wt, b []float64, m, k, s int) ([]float64, int, int) {
	oh, ow := (h+s-1)/s, (w+s-1)/s
	top := max((oh-1)*s+k-h, 0) / 2
	left := max((ow-1)*s+k-w, 0) / 2
	y := make([]float64, m*oh*ow)
	for o := 0; o < m; o++ {
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				sum := 0.0
				if b != nil {
					sum = b[o]
				}
				for ci := 0; ci < c; ci++ {
					for ki := 0; ki < k; ki++ {
						for kj := 0; kj < k; kj++ {
							yi, xj := i*s+ki-top, j*s+kj-left
							if yi >= 0 && yi < h && xj >= 0 && xj < w {
								sum += x[(ci*h+yi)*w+xj] * wt[((o*c+ci)*k+ki)*k+kj]
							}
						}
					}
				}
				y[(o*oh+i)*ow+j] = sum
			}
		}
	}
	return y, oh, ow
}

// files returns the relative path and bytes of every file of a case.
func (tc testdataCase) files(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	b, err := tc.model.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	files["model.onnx"] = b
	for kind, ts := range map[string][]*onnxpb.TensorProto{"input": tc.inputs, "output": tc.outputs} {
		for i, tp := range ts {
			b, err := ob.Marshal(tp)
			if err != nil {
				t.Fatal(err)
			}
			files[filepath.Join("test_data_set_0", fmt.Sprintf("%s_%d.pb", kind, i))] = b
		}
	}
	return files
}

// TestTestdataUpToDate checks testdata/ against the generator; -update
// rewrites it.
func TestTestdataUpToDate(t *testing.T) {
	root := filepath.Join(repoRoot(t), "testdata")
	for _, tc := range testdataCases() {
		for rel, want := range tc.files(t) {
			path := filepath.Join(root, tc.name, rel)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is missing or stale; run: go test ./internal/onnx -run TestTestdataUpToDate -update", path)
			}
		}
	}
}

// TestTestdataLoads opens the generated models and checks their IR ops and
// that the test data tensors decode with the input/output shapes.
func TestTestdataLoads(t *testing.T) {
	root := filepath.Join(repoRoot(t), "testdata")
	for _, tc := range testdataCases() {
		dir := filepath.Join(root, tc.name)
		m, err := Open(filepath.Join(dir, "model.onnx"), Options{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := opList(m.Graph); !slices.Equal(got, tc.ops) {
			t.Errorf("%s: ops %v, want %v", tc.name, got, tc.ops)
		}
		if err := m.Graph.Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		l := &loader{model: &Model{}, file: tc.name}
		for i, want := range tc.outputs {
			data, err := os.ReadFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", i)))
			if err != nil {
				t.Fatal(err)
			}
			rt, err := decodeTensor(data)
			if err != nil {
				t.Fatalf("%s output %d: %v", tc.name, i, err)
			}
			tensor, err := l.tensor(rt)
			if err != nil {
				t.Fatal(err)
			}
			if out := m.Graph.Outputs[i]; tensor.DType != ir.Float32 || !slices.Equal(tensor.Shape, want.Dims) || (out.Shape != nil && !dimsMatch(out.Shape, tensor.Shape)) {
				t.Errorf("%s output %d: %v vs graph %v", tc.name, i, tensor, out)
			}
		}
		m.Close()
	}
}

// TestTestdataValues pins the hand-computed outputs the seed document gives.
func TestTestdataValues(t *testing.T) {
	cases := testdataCases()
	check := func(tc testdataCase, want float64) {
		tensor, err := (&loader{model: &Model{}}).tensor(&rawTensor{pb: tc.outputs[0], raw: tc.outputs[0].RawData, hasRaw: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range tensor.F32() {
			if math.Abs(float64(v)-want) > 1e-7 {
				t.Errorf("%s: %v, want %v", tc.name, v, want)
			}
		}
	}
	check(cases[0], 2.0)
	check(cases[1], -0.015104)
	// mlp rows are probability distributions.
	y, _ := (&loader{model: &Model{}}).tensor(&rawTensor{pb: cases[2].outputs[0], raw: cases[2].outputs[0].RawData, hasRaw: true})
	for i := 0; i < 4; i++ {
		s := 0.0
		for _, v := range y.F32()[4*i : 4*i+4] {
			s += float64(v)
		}
		if math.Abs(s-1) > 1e-6 {
			t.Errorf("mlp row %d sums to %v", i, s)
		}
	}
}
