package ir

import (
	"fmt"
	"strings"
	"testing"
)

// Builders for the shape-inference tables.

// tVal is a non-const value of known rank (no dims: a scalar).
func tVal(dt DType, dims ...int64) *Value {
	return &Value{Name: "in", DType: dt, Shape: append([]int64{}, dims...)}
}

// tUnk is a value of unknown rank.
func tUnk(dt DType) *Value { return &Value{Name: "in", DType: dt} }

// tInts is a 1-D int64 constant.
func tInts(vals ...int64) *Value {
	t := Int64Tensor([]int64{int64(len(vals))}, vals...)
	return &Value{Name: "c", DType: Int64, Shape: cloneShape(t.Shape), Const: t}
}

// tInt is a scalar int64 constant.
func tInt(v int64) *Value {
	t := Int64Tensor([]int64{}, v)
	return &Value{Name: "c", DType: Int64, Shape: []int64{}, Const: t}
}

// tFloats is a 1-D float32 constant.
func tFloats(vals ...float32) *Value {
	t := Float32Tensor([]int64{int64(len(vals))}, vals...)
	return &Value{Name: "c", DType: Float32, Shape: cloneShape(t.Shape), Const: t}
}

// tFloat is a scalar float32 constant.
func tFloat(v float32) *Value {
	t := Float32Tensor([]int64{}, v)
	return &Value{Name: "c", DType: Float32, Shape: []int64{}, Const: t}
}

// tVec is a non-const 1-D int64 value of length l (data unknown).
func tVec(l int64) *Value { return tVal(Int64, l) }

type outWant struct {
	dt    DType
	shape []int64 // nil: unknown rank
}

func tOut(dt DType, dims ...int64) outWant { return outWant{dt, append([]int64{}, dims...)} }
func tOutU(dt DType) outWant               { return outWant{dt, nil} }

type inferCase struct {
	name   string
	op     string
	inputs []*Value
	attrs  Attrs
	nout   int       // outputs; 0 means len(want) or 1
	want   []outWant // ignored when err is set
	err    string    // substring of the expected error
}

func tSameShape(a, b []int64) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func tFmtShape(s []int64) string {
	if s == nil {
		return "<unknown rank>"
	}
	return fmt.Sprint(s)
}

func runInferTable(t *testing.T, cases []inferCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.op+"/"+c.name, func(t *testing.T) {
			nout := c.nout
			if nout == 0 {
				nout = max(len(c.want), 1)
			}
			n := &Node{Name: "n", Op: c.op, Inputs: c.inputs, Attrs: c.attrs}
			if n.Attrs == nil {
				n.Attrs = Attrs{}
			}
			for i := 0; i < nout; i++ {
				n.Outputs = append(n.Outputs, &Value{Name: fmt.Sprintf("out%d", i), Producer: n, OutIndex: i})
			}
			err := InferNode(n)
			if c.err != "" {
				if err == nil {
					t.Fatalf("want error containing %q, got none (outputs %v)", c.err, n.Outputs)
				}
				if !strings.Contains(err.Error(), c.err) {
					t.Fatalf("want error containing %q, got %q", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for i, w := range c.want {
				got := n.Outputs[i]
				if got.DType != w.dt || !tSameShape(got.Shape, w.shape) {
					t.Errorf("output %d: got %s %s, want %s %s", i, got.DType, tFmtShape(got.Shape), w.dt, tFmtShape(w.shape))
				}
			}
		})
	}
}
