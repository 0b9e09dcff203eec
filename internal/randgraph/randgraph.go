// Package randgraph builds random but valid ONNX models out of the patterns
// graph-kernel fusion targets, for tests that check fused kernels against
// the unfused graph (the CPU C kernels end to end in internal/convert, the
// CUDA and Ascend C generators in internal/kernels). A seed always gives the
// same model. Test support: nothing in the product imports it.
package randgraph

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"

	"gkconv/internal/ir"
	ob "gkconv/internal/onnx/onnxbuild"
	"gkconv/internal/onnx/onnxpb"
)

// Info describes a model Model built.
type Info struct {
	// Input is the model's only input, float32.
	Input Value
	// Steps lists the patterns built, as "Pattern(in[shape])->out[shape]",
	// for failure messages.
	Steps []string
	// Fusible is set when some step built a chain of at least two ops that
	// fusion at opt_level 2 always fuses into a GraphKernel.
	Fusible bool
}

// Model builds the random model of seed: one float32 input [rows, last] or
// [batch, rows, last] and 1 to 14 pattern steps; every value nothing reads is
// a graph output.
func Model(seed int64) (*ob.Model, Info) {
	g := &graph{r: rand.New(rand.NewSource(seed)), m: ob.New("random", 18), used: map[string]bool{}}
	rows, last := 1+g.r.Int63n(7), 1+g.r.Int63n(70)
	in := Value{"x", []int64{rows, last}}
	if g.r.Intn(2) == 0 {
		in.Shape = []int64{1 + g.r.Int63n(3), rows, last}
	}
	g.m.Input(in.Name, ob.Float, dimsAny(in.Shape)...)
	g.vals = []Value{in}
	for steps := 1 + g.r.Intn(14); len(g.steps) < steps; {
		g.step()
	}
	// Every value nothing reads is an output: no step is dead, and fused
	// kernels get several outputs.
	for _, v := range g.vals[1:] {
		if !g.used[v.Name] {
			g.m.Output(v.Name, ob.Float, dimsAny(v.Shape)...)
		}
	}
	return g.m, Info{Input: in, Steps: g.steps, Fusible: g.fusible}
}

// Describe is info's steps, one a line, for failure messages.
func (info Info) Describe() string { return strings.Join(info.Steps, "\n  ") }

// Value is an ONNX value of a random graph with its static shape.
type Value struct {
	Name  string
	Shape []int64
}

// graph builds a random but valid ONNX model out of the patterns graph
// kernel fusion targets (the ONNX twin of internal/fusion's buildFuzzGraph):
// MatMul/Gemm with constant weights and biases, elementwise and unary ops,
// Max/Min/Pow, Transposes, last-axis Slices, decomposed and ONNX
// LayerNorms, Softmaxes on any axis, erf-GeLUs, Reshapes, row reductions and
// reductions over other axes. Shapes are small (rows 1..7, last dims 1..70,
// so row-wise reductions see rows both shorter and longer than 64). Every
// value nothing reads is a graph output, so no step is dead.
type graph struct {
	r       *rand.Rand
	m       *ob.Model
	vals    []Value
	n       int
	used    map[string]bool // values some node reads
	steps   []string        // what was built, for failure messages
	fusible bool            // a step built a chain of >=2 fusible ops
}

func (g *graph) fresh(p string) string {
	g.n++
	return p + strconv.Itoa(g.n)
}

// pick prefers the newest value so that graphs grow deep as well as wide.
func (g *graph) pick() Value {
	if g.r.Intn(2) == 0 {
		return g.vals[len(g.vals)-1]
	}
	return g.vals[g.r.Intn(len(g.vals))]
}

// node adds an ONNX node with one output of the given shape.
func (g *graph) node(op string, shape []int64, ins []string, attrs ...*onnxpb.AttributeProto) Value {
	out := g.fresh(strings.ToLower(op) + "_")
	for _, in := range ins {
		g.used[in] = true
	}
	g.m.Node(out, op, ins, []string{out}, attrs...)
	return Value{Name: out, Shape: shape}
}

// weight is a random constant scaled by 1/sqrt(fanIn) so values stay O(1)
// through MatMul chains.
func (g *graph) weight(fanIn int64, dims ...int64) string {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	s := 1 / math.Sqrt(float64(fanIn))
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32((2*g.r.Float64() - 1) * s)
	}
	name := g.fresh("w_")
	g.m.Init(ob.Float32s(name, dims, vals))
	return name
}

func (g *graph) ints(vals ...int64) string {
	name := g.fresh("i_")
	g.m.Init(ob.Int64s(name, []int64{int64(len(vals))}, vals))
	return name
}

func (g *graph) scalar(v float32) string {
	name := g.fresh("c_")
	g.m.Init(ob.Scalar(name, v))
	return name
}

func withLast(shape []int64, last int64) []int64 {
	s := append([]int64{}, shape...)
	s[len(s)-1] = last
	return s
}

func dimsAny(s []int64) []any {
	out := make([]any, len(s))
	for i, d := range s {
		out[i] = d
	}
	return out
}

// step adds one random pattern reading a random existing value.
func (g *graph) step() {
	v := g.pick()
	r := len(v.Shape)
	last := v.Shape[r-1]
	add := func(desc string, out Value, fusible bool) {
		g.vals = append(g.vals, out)
		g.steps = append(g.steps, fmt.Sprintf("%s(%s%v)->%s%v", desc, v.Name, v.Shape, out.Name, out.Shape))
		g.fusible = g.fusible || fusible
	}
	switch g.r.Intn(18) {
	case 0, 1: // MatMul with a constant weight, maybe + bias
		n := 1 + g.r.Int63n(70)
		mm := g.node("MatMul", withLast(v.Shape, n), []string{v.Name, g.weight(last, last, n)})
		if g.r.Intn(2) == 0 {
			mm = g.node("Add", mm.Shape, []string{mm.Name, g.weight(1, n)})
		}
		add("MatMul", mm, false)
	case 2: // Gemm (2-D only): MatMul transpose_b + BiasAdd, maybe alpha
		if r != 2 {
			return
		}
		n := 1 + g.r.Int63n(70)
		attrs := []*onnxpb.AttributeProto{}
		w := g.weight(last, last, n)
		if g.r.Intn(2) == 0 {
			w = g.weight(last, n, last)
			attrs = append(attrs, ob.Int("transB", 1))
		}
		if g.r.Intn(3) == 0 {
			attrs = append(attrs, ob.Float32Attr("alpha", 0.5))
		}
		add("Gemm", g.node("Gemm", withLast(v.Shape, n), []string{v.Name, w, g.weight(1, n)}, attrs...), false)
	case 3: // binary op with a value of the same shape, or itself
		w := v
		for _, c := range g.vals {
			if c.Name != v.Name && slices.Equal(c.Shape, v.Shape) && g.r.Intn(2) == 0 {
				w = c
			}
		}
		op := []string{"Add", "Mul", "Sub"}[g.r.Intn(3)]
		add(op, g.node(op, v.Shape, []string{v.Name, w.Name}), false)
	case 4: // broadcasts: a row vector constant, or a row reduction back
		if g.r.Intn(2) == 0 {
			op := []string{"Add", "Mul"}[g.r.Intn(2)]
			add(op+"Row", g.node(op, v.Shape, []string{v.Name, g.weight(1, last)}), false)
		} else {
			mx := g.node("ReduceMax", withLast(v.Shape, 1), []string{v.Name, g.ints(-1)})
			// Not fusible alone: MindSpore's split model fuses no
			// REDUCE area forward into a BROADCAST user.
			add("SubRowMax", g.node("Sub", v.Shape, []string{v.Name, mx.Name}), false)
		}
	case 5: // unary
		switch g.r.Intn(6) {
		case 0:
			add("Erf", g.node("Erf", v.Shape, []string{v.Name}), false)
		case 1:
			th := g.node("Tanh", v.Shape, []string{v.Name})
			add("ExpTanh", g.node("Exp", v.Shape, []string{th.Name}), true)
		case 2:
			add("Neg", g.node("Neg", v.Shape, []string{v.Name}), false)
		case 3:
			add("Sigmoid", g.node("Sigmoid", v.Shape, []string{v.Name}), false)
		case 4:
			add("Relu", g.node("Relu", v.Shape, []string{v.Name}), false)
		default:
			ab := g.node("Abs", v.Shape, []string{v.Name})
			add("SqrtAbs", g.node("Sqrt", v.Shape, []string{ab.Name}), true)
		}
	case 6: // Transpose with a random permutation
		p := g.r.Perm(r)
		perm := make([]int64, r)
		shape := make([]int64, r)
		for i, j := range p {
			perm[i], shape[i] = int64(j), v.Shape[j]
		}
		add("Transpose", g.node("Transpose", shape, []string{v.Name}, ob.Ints("perm", perm...)), false)
	case 7: // last-axis column Slices of the same value
		lo := g.r.Int63n(last)
		hi := lo + 1 + g.r.Int63n(last-lo)
		add("Slice", g.node("Slice", withLast(v.Shape, hi-lo), []string{v.Name, g.ints(lo), g.ints(hi), g.ints(-1)}), false)
		if hi < last && g.r.Intn(2) == 0 {
			add("SliceRest", g.node("Slice", withLast(v.Shape, last-hi), []string{v.Name, g.ints(hi), g.ints(last), g.ints(int64(r - 1))}), false)
		}
	case 8: // decomposed LayerNorm over the last axis, maybe with gamma/beta
		row := withLast(v.Shape, 1)
		mean := g.node("ReduceMean", row, []string{v.Name, g.ints(-1)})
		d := g.node("Sub", v.Shape, []string{v.Name, mean.Name})
		dd := g.node("Mul", v.Shape, []string{d.Name, d.Name})
		vr := g.node("ReduceMean", row, []string{dd.Name, g.ints(-1)})
		eps := g.node("Add", row, []string{vr.Name, g.scalar(1e-5)})
		std := g.node("Sqrt", row, []string{eps.Name})
		ln := g.node("Div", v.Shape, []string{d.Name, std.Name})
		if g.r.Intn(2) == 0 {
			ln = g.node("Mul", v.Shape, []string{ln.Name, g.weight(1, last)})
			ln = g.node("Add", v.Shape, []string{ln.Name, g.weight(1, last)})
		}
		add("LayerNorm", ln, true)
	case 9:
		add("Softmax", g.node("Softmax", v.Shape, []string{v.Name}, ob.Int("axis", -1)), true)
	case 10: // GeLU, erf form
		dv := g.node("Div", v.Shape, []string{v.Name, g.scalar(1.4142135)})
		e := g.node("Erf", v.Shape, []string{dv.Name})
		one := g.node("Add", v.Shape, []string{e.Name, g.scalar(1)})
		x := g.node("Mul", v.Shape, []string{v.Name, one.Name})
		add("GeLU", g.node("Mul", v.Shape, []string{x.Name, g.scalar(0.5)}), true)
	case 11: // Reshape to [rows, last] or [1, rows, last]
		rows := ir.NumElements(v.Shape) / last
		shape := []int64{rows, last}
		if g.r.Intn(2) == 0 {
			shape = []int64{1, rows, last}
		}
		add("Reshape", g.node("Reshape", shape, []string{v.Name, g.ints(shape...)}), false)
	case 12:
		add("DivConst", g.node("Div", v.Shape, []string{v.Name, g.scalar(8)}), false)
	case 13: // a reduction kept as a row value
		op := []string{"ReduceMax", "ReduceSum", "ReduceMean"}[g.r.Intn(3)]
		add(op, g.node(op, withLast(v.Shape, 1), []string{v.Name, g.ints(-1)}), false)
	case 14: // a reduction over other axes (the kernels' general path), maybe
		// dropping the axis when the rank stays >= 2
		var axes []int64
		shape := append([]int64{}, v.Shape...)
		for len(axes) == 0 {
			axes = axes[:0]
			for a := 0; a < r; a++ {
				if g.r.Intn(2) == 0 {
					axes = append(axes, int64(a))
				}
			}
		}
		keep := int64(1)
		if r == 3 && len(axes) == 1 && g.r.Intn(2) == 0 {
			keep = 0
			shape = append(shape[:axes[0]], shape[axes[0]+1:]...)
		} else {
			for _, a := range axes {
				shape[a] = 1
			}
		}
		op := []string{"ReduceMax", "ReduceSum", "ReduceMean", "ReduceMin"}[g.r.Intn(4)]
		red := g.node(op, shape, []string{v.Name, g.ints(axes...)}, ob.Int("keepdims", keep))
		if keep == 1 && g.r.Intn(2) == 0 { // broadcast back over v
			red = g.node("Mul", v.Shape, []string{v.Name, red.Name})
		}
		add(fmt.Sprintf("%s%v", op, axes), red, false)
	case 15: // Max/Min with another same-shape value, or Pow 2
		w := v
		for _, c := range g.vals {
			if c.Name != v.Name && slices.Equal(c.Shape, v.Shape) && g.r.Intn(2) == 0 {
				w = c
			}
		}
		switch g.r.Intn(3) {
		case 0:
			add("Max", g.node("Max", v.Shape, []string{v.Name, w.Name}), false)
		case 1:
			add("Min", g.node("Min", v.Shape, []string{v.Name, w.Name}), false)
		default:
			add("Pow2", g.node("Pow", v.Shape, []string{v.Name, g.scalar(2)}), false)
		}
	case 16: // Softmax on any axis
		axis := int64(g.r.Intn(r))
		add(fmt.Sprintf("Softmax%d", axis), g.node("Softmax", v.Shape, []string{v.Name}, ob.Int("axis", axis)), true)
	default: // LayerNormalization (opset 17) over the trailing axes from a random one
		axis := int64(r - 1)
		if g.r.Intn(3) == 0 {
			axis = int64(g.r.Intn(r))
		}
		norm := v.Shape[axis:]
		ln := g.node("LayerNormalization", v.Shape, []string{v.Name, g.weight(1, norm...), g.weight(1, norm...)},
			ob.Int("axis", axis), ob.Float32Attr("epsilon", 1e-5))
		add(fmt.Sprintf("LayerNormalization%d", axis), ln, true)
	}
}
