package onnx

import (
	"testing"

	ob "gkconv/internal/onnx/onnxbuild"
)

func fuzzSeeds() []*ob.Model {
	a := ob.New("g", 13).Input("x", ob.Float, "N", 3).Output("y", ob.Float, "N", 3).Init(ob.Fill("w", i64(3), 2))
	a.Node("m", "Mul", strs("x", "w"), strs("y"))

	b := ob.New("g", 11).Input("x", ob.Float, 2, 3, 4).Output("y", ob.Float, 2, 3, 4)
	b.Node("", "Constant", nil, strs("k"), ob.Tensor("value", ob.Float32s("", i64(1), []float32{2})))
	b.Node("", "Softmax", strs("x"), strs("s"))
	b.Node("", "Clip", strs("s"), strs("y"), ob.Float32Attr("min", 0))

	c := ob.New("g", 9).Input("x", ob.Float, 2, 4).Output("y", ob.Float, 2, 3).
		Init(ob.Fill("w", i64(4, 3), 1), ob.Float32s("b", i64(3), []float32{1, 2, 3}))
	c.Node("fc", "Gemm", strs("x", "w", "b"), strs("g"), ob.Float32Attr("alpha", 2))
	c.Node("r", "ReduceMean", strs("g"), strs("y"), ob.Ints("axes", 1))

	d := ob.New("g", 7).Input("x", ob.Float, 1, 1, 2, 2).Output("y", ob.Float, 1, 1, 4, 4)
	d.Node("u", "Upsample", strs("x"), strs("y"), ob.Floats("scales", 1, 1, 2, 2))
	return []*ob.Model{a, b, c, d}
}

// FuzzParse: no input makes the loader panic.
func FuzzParse(f *testing.F) {
	for _, m := range fuzzSeeds() {
		b, err := m.Bytes()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, "", Options{})
		if err == nil && m.Graph == nil {
			t.Fatal("no error and no graph")
		}
	})
}
