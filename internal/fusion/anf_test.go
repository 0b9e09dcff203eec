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

// anfBN is an inference BatchNorm of v with constant parameters over 4
// channels (mean: a constant one when nil).
func anfBN(b *testkit.Graph, v *ir.Value, mean *ir.Value) *ir.Value {
	if mean == nil {
		mean = anfConst(b, 5, false, 4)
	}
	return b.Node("bn", "BatchNorm", ir.Attrs{"epsilon": ir.FloatAttr(1e-3)}, v,
		anfConst(b, 3, false, 4), anfConst(b, 4, false, 4), mean, anfConst(b, 6, true, 4))
}

func anfReLU(b *testkit.Graph, v *ir.Value) *ir.Value { return b.Node("relu", "ReLU", nil, v) }

// anfResidual is an input z of convIn's output shape.
func anfResidual(b *testkit.Graph) *ir.Value { return b.Input("z", 1, 4, 6, 6) }

// anfShortcut is a second conv of its own input (the shortcut conv of a
// downsampling block), of convIn's output shape.
func anfShortcut(b *testkit.Graph) *ir.Value {
	return b.Node("conv_sc", "Conv2D", ir.Attrs{"kernel_shape": ir.IntsAttr(1, 1)}, b.Input("x2", 1, 2, 6, 6),
		anfConst(b, 20, false, 4, 2, 1, 1), anfConst(b, 21, false, 4))
}

// convAnfCase is one graph of the conv fusion tests (anf_conv_*_test.go).
type convAnfCase struct {
	name  string
	build func(b *testkit.Graph) *ir.Graph
	ops   string // top-level ops after
	pass  string // the pass that changed the graph ("" none)
	act   int64  // the conv's (with a residual: the fused conv's) activation_type after
}

// runConvAnfCases runs RunAnf on each case's graph, checked against the
// unfused graph, and compares the top-level ops, which pass changed the
// graph (none when c.pass is ""), the conv's activation_type and whether it
// has a residual input.
func runConvAnfCases(t *testing.T, cases []convAnfCase) {
	t.Helper()
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
