package fusion

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// anfConst adds a float32 constant of shape with seeded normal values
// (absolute values when positive, e.g. a variance).
func anfConst(b *testkit.Graph, seed int64, positive bool, shape ...int64) *ir.Value {
	r := rand.New(rand.NewSource(seed))
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.F32() {
		v := r.NormFloat64()
		if positive {
			v = math.Abs(v) + 0.1
		}
		t.F32()[i] = float32(v)
	}
	return b.Const(fmt.Sprintf("k%d", len(b.G.Consts)), t)
}

var convAttrs = ir.Attrs{"pads": ir.IntsAttr(1, 1, 1, 1), "kernel_shape": ir.IntsAttr(3, 3)}

// convIn is x [1,3,6,6] and a Conv2D of it (bias when withBias) with 4
// output channels.
func convIn(b *testkit.Graph, withBias bool) *ir.Value {
	x := b.Input("x", 1, 3, 6, 6)
	ins := []*ir.Value{x, anfConst(b, 1, false, 4, 3, 3, 3)}
	if withBias {
		ins = append(ins, anfConst(b, 2, false, 4))
	}
	return b.Node("conv", "Conv2D", convAttrs, ins...)
}

// runAnfChecked runs RunAnf on g with o and checks the outputs against the
// graph before (relative tolerance 1e-5).
func runAnfChecked(t *testing.T, g *ir.Graph, o AnfOptions) (*Result, []string) {
	t.Helper()
	ref := testkit.CloneGraph(g)
	in := randInputs(g, 3)
	want := execute(t, ref, in)
	res, warns, err := RunAnf(g, o)
	if err != nil {
		t.Fatalf("RunAnf: %v\n%s", err, dumpText(g))
	}
	got := execute(t, g, in)
	for i := range want {
		w, gt := want[i].F32(), got[i].F32()
		for j := range w {
			if d := math.Abs(float64(w[j] - gt[j])); d > 1e-5*(1+math.Abs(float64(w[j]))) {
				t.Fatalf("output %d[%d]: fused %g, unfused %g\n%s", i, j, gt[j], w[j], dumpText(g))
			}
		}
	}
	return res, warns
}

func anfRecord(res *Result, name string) PassRecord {
	for _, p := range res.Passes {
		if p.Name == name {
			return p
		}
	}
	return PassRecord{}
}

func TestConvAnfFusions(t *testing.T) {
	bn := func(b *testkit.Graph, v *ir.Value, mean *ir.Value) *ir.Value {
		if mean == nil {
			mean = anfConst(b, 5, false, 4)
		}
		return b.Node("bn", "BatchNorm", ir.Attrs{"epsilon": ir.FloatAttr(1e-3)}, v,
			anfConst(b, 3, false, 4), anfConst(b, 4, false, 4), mean, anfConst(b, 6, true, 4))
	}
	relu := func(b *testkit.Graph, v *ir.Value) *ir.Value { return b.Node("relu", "ReLU", nil, v) }
	resid := func(b *testkit.Graph) *ir.Value { return b.Input("z", 1, 4, 6, 6) }
	// a second conv of its own input (the shortcut conv of a downsampling block)
	shortcut := func(b *testkit.Graph) *ir.Value {
		return b.Node("conv_sc", "Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(1, 1)}, b.Input("x2", 1, 2, 6, 6),
			anfConst(b, 20, false, 4, 2, 1, 1), anfConst(b, 21, false, 4))
	}
	cases := []struct {
		name  string
		build func(b *testkit.Graph) *ir.Graph
		ops   string // top-level ops after
		pass  string // the pass that changed the graph ("" none)
		act   int64  // the conv's (with a residual: the fused conv's) activation_type after
	}{
		{"bn", func(b *testkit.Graph) *ir.Graph { return b.Output(bn(b, convIn(b, true), nil)) }, "Conv2D", "ConvBatchNormFusion", 0},
		{"bn_nobias_relu", func(b *testkit.Graph) *ir.Graph { return b.Output(relu(b, bn(b, convIn(b, false), nil))) }, "Conv2D", "ConvBatchNormFusion", ir.ActReLU},
		{"bn_shared_conv", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(bn(b, c, nil), b.Node("neg", "Neg", nil, c))
		}, "Conv2D,BatchNorm,Neg", "", 0},
		{"bn_conv_is_output", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(bn(b, c, nil), c)
		}, "Conv2D,BatchNorm", "", 0},
		{"bn_mean_not_const", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(bn(b, c, b.Input("mean", 4)))
		}, "Conv2D,BatchNorm", "", 0},
		{"scale_mul_add", func(b *testkit.Graph) *ir.Graph {
			m := b.Node("mul", "Mul", nil, convIn(b, true), anfConst(b, 7, false, 1, 4, 1, 1))
			return b.Output(b.Node("add", "Add", nil, anfConst(b, 8, false, 4, 1, 1), m))
		}, "Conv2D", "ConvScaleFusion", 0},
		{"scale_mul_only_scalar", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("mul", "Mul", nil, convIn(b, false), b.Scalar(0.5)))
		}, "Conv2D", "ConvScaleFusion", 0},
		{"scale_not_const", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("mul", "Mul", nil, convIn(b, true), b.Input("s", 1, 4, 1, 1)))
		}, "Conv2D,Mul", "", 0},
		{"scale_spatial", func(b *testkit.Graph) *ir.Graph { // varies along W, not the channels
			return b.Output(b.Node("mul", "Mul", nil, convIn(b, true), anfConst(b, 9, false, 6)))
		}, "Conv2D,Mul", "", 0},
		{"scale_mul_add_input", func(b *testkit.Graph) *ir.Graph { // the Mul folds, the Add becomes the residual
			m := b.Node("mul", "Mul", nil, convIn(b, true), anfConst(b, 7, false, 4, 1, 1))
			return b.Output(b.Node("add", "Add", nil, m, b.Input("z", 1, 4, 6, 6)))
		}, "Conv2D", "ConvScaleFusion", 0},
		{"biasadd_add", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, convIn(b, false), anfConst(b, 10, false, 1, 4, 1, 1)))
		}, "Conv2D", "ConvBiasaddFusion", 0},
		{"biasadd_onto_bias", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "BiasAdd", nil, convIn(b, true), anfConst(b, 10, false, 4)))
		}, "Conv2D", "ConvBiasaddFusion", 0},
		{"biasadd_broadcasting", func(b *testkit.Graph) *ir.Graph { // the Add makes the output bigger
			return b.Output(b.Node("add", "Add", nil, convIn(b, false), anfConst(b, 10, false, 2, 4, 1, 1)))
		}, "Conv2D,Add", "", 0},
		{"biasadd_input", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, convIn(b, false), b.Input("z", 1, 4, 1, 1)))
		}, "Conv2D,Add", "", 0},
		{"relu6", func(b *testkit.Graph) *ir.Graph { return b.Output(b.Node("r", "ReLU6", nil, convIn(b, true))) }, "Conv2D", "ConvActivationFusion", ir.ActReLU6},
		{"clip_0_6", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("clip", "Clip", nil, convIn(b, true), b.Scalar(0), b.Scalar(6)))
		}, "Conv2D", "ConvActivationFusion", ir.ActReLU6},
		{"clip_0", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("clip", "Clip", nil, convIn(b, true), b.Scalar(0)))
		}, "Conv2D", "ConvActivationFusion", ir.ActReLU},
		{"clip_0_5", func(b *testkit.Graph) *ir.Graph { // no MindSpore conv activation is this
			return b.Output(b.Node("clip", "Clip", nil, convIn(b, true), b.Scalar(0), b.Scalar(5)))
		}, "Conv2D,Clip", "", 0},
		// ConvSwishActivationFusion (converter_lite fuses RELU and RELU6 only)
		{"sigmoid", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("s", "Sigmoid", nil, convIn(b, true)))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActSigmoid},
		{"tanh", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("t", "Tanh", nil, convIn(b, false)))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActTanh},
		{"hswish", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("h", "HSwish", nil, convIn(b, true)))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActHSwish},
		{"silu", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, c)))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActSwish},
		{"silu_sigmoid_first", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, b.Node("s", "Sigmoid", nil, c), c))
		}, "Conv2D", "ConvSwishActivationFusion", ir.ActSwish},
		{"silu_bn", func(b *testkit.Graph) *ir.Graph { // BatchNorm folds first, then the SiLU
			c := bn(b, convIn(b, false), nil)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, c)))
		}, "Conv2D", "ConvBatchNormFusion", ir.ActSwish},
		{"silu_sigmoid_shared", func(b *testkit.Graph) *ir.Graph { // the Sigmoid has another reader
			c := convIn(b, true)
			s := b.Node("s", "Sigmoid", nil, c)
			return b.Output(b.Node("m", "Mul", nil, c, s), b.Node("neg", "Neg", nil, s))
		}, "Conv2D,Sigmoid,Mul,Neg", "", 0},
		{"silu_sigmoid_output", func(b *testkit.Graph) *ir.Graph { // the Sigmoid's output is a graph output
			c := convIn(b, true)
			s := b.Node("s", "Sigmoid", nil, c)
			return b.Output(b.Node("m", "Mul", nil, c, s), s)
		}, "Conv2D,Sigmoid,Mul", "", 0},
		{"silu_conv_shared", func(b *testkit.Graph) *ir.Graph { // a third reader of the conv
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, c)), b.Node("neg", "Neg", nil, c))
		}, "Conv2D,Sigmoid,Mul,Neg", "", 0},
		{"silu_conv_output", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, c)), c)
		}, "Conv2D,Sigmoid,Mul", "", 0},
		{"sigmoid_conv_output", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("s", "Sigmoid", nil, c), c)
		}, "Conv2D,Sigmoid", "", 0},
		{"mul_sigmoid_of_other", func(b *testkit.Graph) *ir.Graph { // Mul(y, Sigmoid(y)) needs the same y
			c := convIn(b, true)
			return b.Output(b.Node("m", "Mul", nil, c, b.Node("s", "Sigmoid", nil, resid(b))))
		}, "Conv2D,Sigmoid,Mul", "", 0},
		{"relu_shared", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(relu(b, c), b.Node("neg", "Neg", nil, c))
		}, "Conv2D,ReLU,Neg", "", 0},
		{"bias_bn_scale_relu", func(b *testkit.Graph) *ir.Graph {
			a := b.Node("add", "Add", nil, convIn(b, false), anfConst(b, 10, false, 4, 1, 1))
			m := b.Node("mul", "Mul", nil, bn(b, a, nil), anfConst(b, 11, false, 4, 1, 1))
			return b.Output(relu(b, m))
		}, "Conv2D", "ConvBatchNormFusion", ir.ActReLU},
		// ConvElemwiseAddFusion
		{"add_relu", func(b *testkit.Graph) *ir.Graph {
			return b.Output(relu(b, b.Node("add", "Add", nil, convIn(b, true), resid(b))))
		}, "Conv2D", "ConvElemwiseAddFusion", ir.ActReLU},
		{"residual_first_nobias", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, resid(b), convIn(b, false)))
		}, "Conv2D", "ConvElemwiseAddFusion", ir.ActNone},
		{"add_relu6", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("r6", "ReLU6", nil, b.Node("add", "Add", nil, convIn(b, true), resid(b))))
		}, "Conv2D", "ConvElemwiseAddFusion", ir.ActReLU6},
		{"add_clip_0_6", func(b *testkit.Graph) *ir.Graph {
			a := b.Node("add", "Add", nil, convIn(b, true), resid(b))
			return b.Output(b.Node("clip", "Clip", nil, a, b.Scalar(0), b.Scalar(6)))
		}, "Conv2D", "ConvElemwiseAddFusion", ir.ActReLU6},
		{"add_sigmoid", func(b *testkit.Graph) *ir.Graph { // the Add folds, the Sigmoid stays
			return b.Output(b.Node("s", "Sigmoid", nil, b.Node("add", "Add", nil, convIn(b, true), resid(b))))
		}, "Conv2D,Sigmoid", "ConvElemwiseAddFusion", ir.ActNone},
		{"add_is_output", func(b *testkit.Graph) *ir.Graph { // the ReLU stays: the sum is an output too
			a := b.Node("add", "Add", nil, convIn(b, true), resid(b))
			return b.Output(relu(b, a), a)
		}, "Conv2D,ReLU", "ConvElemwiseAddFusion", ir.ActNone},
		{"two_convs", func(b *testkit.Graph) *ir.Graph { // downsampling block: one conv takes the other as residual
			return b.Output(relu(b, b.Node("add", "Add", nil, convIn(b, true), shortcut(b))))
		}, "Conv2D,Conv2D", "ConvElemwiseAddFusion", ir.ActReLU},
		{"residual_after_conv", func(b *testkit.Graph) *ir.Graph { // z is computed after the conv: the conv moves
			c := convIn(b, true)
			zz := b.Node("neg", "Neg", nil, resid(b))
			return b.Output(relu(b, b.Node("add", "Add", nil, c, zz)))
		}, "Neg,Conv2D", "ConvElemwiseAddFusion", ir.ActReLU},
		{"broadcast", func(b *testkit.Graph) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, convIn(b, true), b.Input("z", 1, 4, 1, 6)))
		}, "Conv2D,Add", "", ir.ActNone},
		{"conv_shared", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("add", "Add", nil, c, resid(b)), b.Node("neg", "Neg", nil, c))
		}, "Conv2D,Add,Neg", "", ir.ActNone},
		{"conv_is_output", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("add", "Add", nil, c, resid(b)), c)
		}, "Conv2D,Add", "", ir.ActNone},
		{"conv_has_activation", func(b *testkit.Graph) *ir.Graph { // ReLU then Add: the ReLU folds, the Add stays
			return b.Output(b.Node("add", "Add", nil, relu(b, convIn(b, true)), resid(b)))
		}, "Conv2D,Add", "ConvActivationFusion", ir.ActReLU},
		{"add_self", func(b *testkit.Graph) *ir.Graph {
			c := convIn(b, true)
			return b.Output(b.Node("add", "Add", nil, c, c))
		}, "Conv2D,Add", "", ir.ActNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.build(testkit.New(t, c.name))
			res, _ := runAnfChecked(t, g, AnfOptions{})
			if got := strings.Join(topOps(g), ","); got != c.ops {
				t.Fatalf("ops %s, want %s\n%s", got, c.ops, dumpText(g))
			}
			if c.pass != "" && !anfRecord(res, c.pass).Changed {
				t.Errorf("%s did not change the graph: %+v", c.pass, res.Passes)
			}
			if c.pass == "" {
				for _, p := range res.Passes {
					if p.Changed {
						t.Errorf("%s changed the graph", p.Name)
					}
				}
			}
			conv := g.Nodes[0]
			for _, n := range g.Nodes {
				if n.Op == "Conv2D" && (conv.Op != "Conv2D" || ir.ConvResidual(n) != nil) {
					conv = n
				}
			}
			if a := conv.Attrs.Int(ir.AttrActivation, 0); a != c.act {
				t.Errorf("activation_type %d, want %d", a, c.act)
			}
			if z := ir.ConvResidual(conv); (z != nil) != (c.pass == "ConvElemwiseAddFusion" || c.name == "scale_mul_add_input") || (z != nil && len(conv.Inputs) != 4) {
				t.Errorf("residual %v, inputs %d", z, len(conv.Inputs))
			}
			if len(g.Consts) > 0 && c.pass != "" {
				for _, k := range g.Consts {
					if k.Name == "" {
						t.Errorf("unnamed constant")
					}
				}
			}
		})
	}
}

func TestMatMulAddFusionReusesBiasFold(t *testing.T) {
	b := testkit.New(t, "mm")
	x := b.Input("x", 5, 16)
	g := b.Output(b.Node("add", "Add", nil, b.Node("mm", "MatMul", nil, x, b.Weights(16, 8)), b.Weights(8)))
	res, _ := runAnfChecked(t, g, AnfOptions{})
	if got := strings.Join(topOps(g), ","); got != "MatMul" || len(g.Nodes[0].Inputs) != 3 {
		t.Fatalf("ops %s\n%s", got, dumpText(g))
	}
	if r := anfRecord(res, "MatMulAddFusion"); !r.Ran || !r.Changed || r.Stage != AnfStage || r.StageIndex != 6 {
		t.Errorf("record %+v", r)
	}
	if r := anfRecord(res, "MatMulActivationFusion"); !r.Ran || r.Changed || !strings.Contains(r.Note, "no MatMul") {
		t.Errorf("record %+v", r)
	}
}

// TestMatMulActivationFusion: MatMul (+ its folded bias) then ReLU, ReLU6,
// Clip(0) or Clip(0, 6) becomes one MatMul with activation_type RELU/RELU6,
// checked against the unfused graph on the runtime; a MatMul read by
// another node too, or that is a graph output, keeps its activation op.
func TestMatMulActivationFusion(t *testing.T) {
	clip := func(b *testkit.Graph, v *ir.Value, hi bool) *ir.Value {
		ins := []*ir.Value{v, b.Scalar(0)}
		if hi {
			ins = append(ins, b.Scalar(6))
		}
		return b.Node("clip", "Clip", nil, ins...)
	}
	for _, c := range []struct {
		name  string
		build func(b *testkit.Graph, mm *ir.Value) *ir.Graph
		ops   string
		act   int64
	}{
		{"relu", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(b.Node("r", "ReLU", nil, mm)) }, "MatMul", ir.ActReLU},
		{"relu6", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(b.Node("r", "ReLU6", nil, mm)) }, "MatMul", ir.ActReLU6},
		{"clip0", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(clip(b, mm, false)) }, "MatMul", ir.ActReLU},
		{"clip06", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(clip(b, mm, true)) }, "MatMul", ir.ActReLU6},
		{"bias+relu", func(b *testkit.Graph, mm *ir.Value) *ir.Graph {
			return b.Output(b.Node("r", "ReLU", nil, b.Node("add", "Add", nil, mm, b.Weights(8))))
		}, "MatMul", ir.ActReLU},
		{"relu then bias Add", func(b *testkit.Graph, mm *ir.Value) *ir.Graph {
			return b.Output(b.Node("add", "Add", nil, b.Node("r", "ReLU", nil, mm), b.Weights(8)))
		}, "MatMul,Add", ir.ActReLU},
		{"two readers", func(b *testkit.Graph, mm *ir.Value) *ir.Graph {
			return b.Output(b.Node("r", "ReLU", nil, mm), b.Node("n", "Neg", nil, mm))
		}, "MatMul,ReLU,Neg", ir.ActNone},
		{"graph output", func(b *testkit.Graph, mm *ir.Value) *ir.Graph { return b.Output(b.Node("r", "ReLU", nil, mm), mm) }, "MatMul,ReLU", ir.ActNone},
		{"clip 1..6", func(b *testkit.Graph, mm *ir.Value) *ir.Graph {
			return b.Output(b.Node("clip", "Clip", nil, mm, b.Scalar(1), b.Scalar(6)))
		}, "MatMul,Clip", ir.ActNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testkit.New(t, "g")
			w := b.Weights(16, 8)
			for i := range w.Const.F32() {
				w.Const.F32()[i] *= 4 // outputs past 6 and below 0
			}
			g := c.build(b, b.Node("mm", "MatMul", nil, b.Input("x", 5, 16), w))
			res, _ := runAnfChecked(t, g, AnfOptions{})
			if got := strings.Join(topOps(g), ","); got != c.ops {
				t.Fatalf("ops %s, want %s\n%s", got, c.ops, dumpText(g))
			}
			if a := g.Nodes[0].Attrs.Int(ir.AttrActivation, ir.ActNone); a != c.act {
				t.Fatalf("activation_type %d, want %d", a, c.act)
			}
			if r := anfRecord(res, "MatMulActivationFusion"); r.Changed != (c.act != ir.ActNone) {
				t.Errorf("record %+v", r)
			}
		})
	}
	// The graph-kernel stage's bias fold (level 2) and MatMul combining
	// (graph_kernel_op_combiner, level 3) must leave a MatMul with an
	// activation alone: an Add after it comes after the activation, and
	// MatMuls sharing A combined into one would share it.
	for _, level := range []string{"2", "3"} {
		b := testkit.New(t, "g")
		x := b.Input("x", 5, 16)
		r := b.Node("r", "ReLU", nil, b.Node("mm", "MatMul", nil, x, b.Weights(16, 8)))
		g := b.Output(b.Node("add", "Add", nil, r, b.Weights(8)), b.Node("mm2", "MatMul", nil, x, b.Weights(16, 8)))
		ref := testkit.CloneGraph(g)
		in := randInputs(g, 4)
		want := execute(t, ref, in)
		if _, _, err := RunAnf(g, AnfOptions{}); err != nil {
			t.Fatal(err)
		}
		run(t, g, "--opt_level="+level, cpuBE)
		got := execute(t, g, in)
		for i := range want {
			for j, w := range want[i].F32() {
				if d := math.Abs(float64(w - got[i].F32()[j])); d > 1e-5*(1+math.Abs(float64(w))) {
					t.Fatalf("opt_level %s, output %d[%d]: fused %g, unfused %g\n%s", level, i, j, got[i].F32()[j], w, dumpText(g))
				}
			}
		}
	}
}

// bnReluGraph is Conv, BatchNorm, ReLU.
func bnReluGraph(t *testing.T) *ir.Graph {
	b := testkit.New(t, "g")
	c := convIn(b, true)
	o := b.Node("bn", "BatchNorm", nil, c, anfConst(b, 3, false, 4), anfConst(b, 4, false, 4), anfConst(b, 5, false, 4), anfConst(b, 6, true, 4))
	return b.Output(b.Node("relu", "ReLU", nil, o))
}

func TestAnfBlacklist(t *testing.T) {
	g := bnReluGraph(t)
	res, warns := runAnfChecked(t, g, AnfOptions{Blacklist: []string{"ConvBatchNormFusion", "ConvBatchnormFusion", "HardSwishFusion"}})
	// The BatchNorm stays, and so the ReLU (it reads the BatchNorm, not the conv).
	if got := strings.Join(topOps(g), ","); got != "Conv2D,BatchNorm,ReLU" {
		t.Fatalf("ops %s", got)
	}
	if r := anfRecord(res, "ConvBatchNormFusion"); r.Ran || !strings.Contains(r.Note, "fusion_blacklists") {
		t.Errorf("record %+v", r)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], `did you mean "ConvBatchNormFusion"`) || !strings.Contains(warns[1], "HardSwishFusion has no counterpart") {
		t.Errorf("warnings %q", warns)
	}
	g = bnReluGraph(t)
	res, _ = runAnfChecked(t, g, AnfOptions{Off: "--optimize=none"})
	if len(g.Nodes) != 3 || len(res.Passes) != len(anfFusions) || res.Passes[0].Ran || res.Passes[0].Note != "--optimize=none" {
		t.Errorf("Off: %d nodes, passes %+v", len(g.Nodes), res.Passes)
	}
}

func TestAnfSwitchFile(t *testing.T) {
	asc := akgcfg.Backend{Device: akgcfg.Ascend, Soc: "Ascend910B"}
	sw := &akgcfg.FusionSwitch{Path: "fs.json",
		GraphFusion: map[string]bool{"ALL": false, "ConvBatchnormFusionPass": true, "ConvBatchNormFusionPass": false},
		UBFusion:    map[string]bool{"ALL": false}}
	g := bnReluGraph(t)
	res, warns := runAnfChecked(t, g, AnfOptions{Backend: asc, Switch: sw})
	// BatchNorm folds (named "on" over ALL=off), the ReLU stays (UBFusion ALL=off).
	if got := strings.Join(topOps(g), ","); got != "Conv2D,ReLU" {
		t.Fatalf("ops %s", got)
	}
	for name, on := range map[string]bool{"ConvBatchNormFusion": true, "ConvActivationFusion": false, "ConvScaleFusion": false, "ConvBiasaddFusion": false, "MatMulAddFusion": false} {
		if r := anfRecord(res, name); r.Ran != on || (!on && !strings.Contains(r.Note, "fs.json")) {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "GraphFusion.ConvBatchNormFusionPass") || !strings.Contains(warns[0], `did you mean "ConvBatchnormFusionPass"`) {
		t.Errorf("warnings %q", warns)
	}
	// The blacklist wins over the switch file; a CPU conversion ignores the file.
	g = bnReluGraph(t)
	res, _ = runAnfChecked(t, g, AnfOptions{Backend: asc, Switch: sw, Blacklist: []string{"ConvBatchNormFusion"}})
	if anfRecord(res, "ConvBatchNormFusion").Ran {
		t.Error("blacklisted pass ran")
	}
	g = bnReluGraph(t)
	_, warns = runAnfChecked(t, g, AnfOptions{Switch: sw})
	if len(g.Nodes) != 1 || len(warns) != 1 || !strings.Contains(warns[0], "ascend_oriented only") {
		t.Errorf("CPU: %d nodes, warnings %q", len(g.Nodes), warns)
	}
	if !slices.Equal(AnfPassNames(), []string{"ConvBiasaddFusion", "ConvBatchNormFusion", "ConvScaleFusion", "ConvActivationFusion", "MatMulAddFusion", "MatMulActivationFusion", "ConvElemwiseAddFusion", "ConvSwishActivationFusion", "QDQFusion"}) {
		t.Errorf("names %v", AnfPassNames())
	}
}
