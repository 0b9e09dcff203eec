package fusion

import (
	"slices"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// fuzzGraph builds a small valid graph from data: a chain of MatMuls with
// constant weights, bias Adds, elementwise and unary ops, Transposes, column
// Slices, decomposed LayerNorms, Softmaxes, GeLUs and Reshapes, the shapes
// chosen so that every op is valid (Splits too). The same data gives the same graph.
type fuzzGraph struct {
	b    *testkit.Graph
	data []byte
	i    int
	vals []*ir.Value
}

func (z *fuzzGraph) next(n int) int {
	if n <= 1 || z.i >= len(z.data) {
		return 0
	}
	v := int(z.data[z.i]) % n
	z.i++
	return v
}

func (z *fuzzGraph) pick() *ir.Value { return z.vals[z.next(len(z.vals))] }

func (z *fuzzGraph) add(v *ir.Value) { z.vals = append(z.vals, v) }

func buildFuzzGraph(t *testing.T, data []byte) *ir.Graph {
	z := &fuzzGraph{b: testkit.New(t, "test"), data: data}
	b := z.b
	m, k := int64(1+z.next(6)), int64(1+z.next(9))
	if z.next(2) == 0 {
		z.add(b.Input("x", m, k))
	} else {
		z.add(b.Input("x", 1, m, k))
	}
	steps := 1 + z.next(12)
	for s := 0; s < steps; s++ {
		v := z.pick()
		r := len(v.Shape)
		last := v.Shape[r-1]
		name := func(p string) string { return p + string(rune('a'+s)) }
		switch z.next(12) {
		case 0, 1: // MatMul with a constant weight, maybe transposed, maybe + bias
			n := int64(1 + z.next(9))
			var mm *ir.Value
			if z.next(2) == 0 {
				mm = b.Node(name("mm"), "MatMul", nil, v, b.Weights(last, n))
			} else {
				mm = b.Node(name("mmt"), "MatMul", ir.Attrs{"transpose_b": ir.IntAttr(1)}, v, b.Weights(n, last))
			}
			switch z.next(3) {
			case 0:
				mm = b.Node(name("bias"), "Add", nil, mm, b.Weights(n))
			case 1:
				if len(mm.Shape) == 2 {
					mm = b.Node(name("biasadd"), "BiasAdd", nil, mm, b.Weights(n))
				}
			}
			switch z.next(5) { // MatMulActivationFusion's activations
			case 0:
				mm = b.Node(name("relu"), "ReLU", nil, mm)
			case 1:
				mm = b.Node(name("clip"), "Clip", nil, mm, b.Scalar(0), b.Scalar(6))
			case 2: // a bias Add after the activation stays after it
				mm = b.Node(name("rbias"), "Add", nil, b.Node(name("relu"), "ReLU", nil, mm), b.Weights(n))
			}
			z.add(mm)
		case 2: // binary op with a value of the same shape, or itself
			w := v
			for _, c := range z.vals {
				if slices.Equal(c.Shape, v.Shape) && c != v && z.next(2) == 0 {
					w = c
				}
			}
			z.add(b.Node(name("bin"), []string{"Add", "Mul", "Sub"}[z.next(3)], nil, v, w))
		case 3: // unary
			switch z.next(6) {
			case 5: // a ReLU of any value (of a MatMul also read elsewhere: not fused)
				z.add(b.Node(name("relu"), "ReLU", nil, v))
			case 0:
				z.add(b.Node(name("erf"), "Erf", nil, v))
			case 1:
				z.add(b.Node(name("exp"), "Exp", nil, b.Node(name("th"), "Tanh", nil, v)))
			case 2:
				z.add(b.Node(name("neg"), "Neg", nil, v))
			case 3:
				z.add(b.Node(name("sig"), "Sigmoid", nil, v))
			default:
				z.add(b.Node(name("sq"), "Sqrt", nil, b.Node(name("abs"), "Abs", nil, v)))
			}
		case 4: // Transpose
			if r < 2 {
				continue
			}
			p := make([]int64, r)
			for i := range p {
				p[i] = int64(i)
			}
			for i := r - 1; i > 0; i-- {
				j := z.next(i + 1)
				p[i], p[j] = p[j], p[i]
			}
			z.add(b.Node(name("tr"), "Transpose", perm(p...), v))
		case 5: // column Slices of the same value, or a Split of the last axis
			if last >= 2 && z.next(3) == 0 {
				s1 := 1 + int64(z.next(int(last-1)))
				for _, o := range b.NodeN(name("spl"), "Split", 2, ir.Attrs{"axis": ir.IntAttr(-1)}, v, b.Ints(s1, last-s1)) {
					z.add(o)
				}
				continue
			}
			lo := int64(z.next(int(last)))
			hi := lo + 1 + int64(z.next(int(last-lo)))
			z.add(b.Node(name("sl"), "Slice", nil, v, b.Ints(lo), b.Ints(hi), b.Ints(-1)))
			if hi < last && z.next(2) == 0 {
				z.add(b.Node(name("sr"), "Slice", nil, v, b.Ints(hi), b.Ints(last), b.Ints(int64(r-1))))
			}
		case 6: // decomposed LayerNorm over the last axis
			mean := b.Node(name("mean"), "ReduceMean", nil, v, b.Ints(-1))
			d := b.Node(name("d"), "Sub", nil, v, mean)
			vr := b.Node(name("var"), "ReduceMean", nil, b.Node(name("dd"), "Mul", nil, d, d), b.Ints(-1))
			z.add(b.Node(name("ln"), "RealDiv", nil, d, b.Node(name("std"), "Sqrt", nil, b.Node(name("eps"), "Add", nil, vr, b.Scalar(1e-5)))))
		case 7:
			z.add(b.Node(name("sm"), "Softmax", ir.Attrs{"axis": ir.IntAttr(-1)}, v))
		case 8: // GeLU, erf form
			e := b.Node(name("ge"), "Erf", nil, b.Node(name("gd"), "RealDiv", nil, v, b.Scalar(1.4142135)))
			z.add(b.Node(name("gm"), "Mul", nil, b.Node(name("gx"), "Mul", nil, v, b.Node(name("g1"), "Add", nil, e, b.Scalar(1))), b.Scalar(0.5)))
		case 9: // Reshape to [rows, last] or back to one row
			rows := ir.NumElements(v.Shape) / last
			if z.next(2) == 0 {
				z.add(b.Node(name("rs"), "Reshape", nil, v, b.Ints(rows, last)))
			} else {
				z.add(b.Node(name("rs"), "Reshape", nil, v, b.Ints(1, rows, last)))
			}
		case 10:
			z.add(b.Node(name("dc"), "RealDiv", nil, v, b.Scalar(8)))
		default: // a reduction kept as a row value
			z.add(b.Node(name("rmax"), "ReduceMax", nil, v, b.Ints(-1)))
		}
	}
	outs := []*ir.Value{z.vals[len(z.vals)-1]}
	if o := z.pick(); o != outs[0] && len(z.vals) > 2 {
		outs = append(outs, o)
	}
	return b.Output(outs...)
}

// FuzzPasses: every graph the generator makes fuses at opt_level 1-3 on
// CPU, and with converter_lite's passes (RunAnf) before opt_level 3,
// without an error and computes what the unfused graph computes.
func FuzzPasses(f *testing.F) {
	for _, s := range []string{"", "\x03\x05\x01\x06\x00\x00\x08\x01\x05\x02\x06", "\x05\x07\x00\x0a\x01\x01\x02\x05\x04\x03\x00\x08\x09",
		"\x02\x08\x01\x0b\x00\x03\x01\x05\x07\x02\x04\x01\x06\x07\x00\x02", "\x04\x04\x00\x09\x04\x01\x00\x05\x03\x02\x05\x01\x07\x0b\x06\x08"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, flags := range []string{"--opt_level=1", "--opt_level=2", "--opt_level=3"} {
			checkEquivalent(t, buildFuzzGraph(t, data), flags, cpuBE, 1e-4)
		}
		// converter_lite's passes first, as a conversion runs them.
		anf := func(g *ir.Graph) error { _, _, err := RunAnf(g, AnfOptions{}); return err }
		checkEquivalentAfter(t, buildFuzzGraph(t, data), anf, "--opt_level=3", cpuBE, 1e-4)
	})
}
