package convert

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx/onnxbuild"
)

func randVals(seed int64, n int, positive bool) []float32 {
	r := rand.New(rand.NewSource(seed))
	out := make([]float32, n)
	for i := range out {
		v := r.NormFloat64() * 0.5
		if positive {
			v = math.Abs(v) + 0.1
		}
		out[i] = float32(v)
	}
	return out
}

// convNetModel writes an ONNX model with every pattern of converter_lite's
// conv fusions: Conv+BatchNormalization+Relu, a depthwise Conv without bias
// + Mul + Add (a Scale) + Clip(0,6), a Conv without bias + Add of a
// per-channel constant, and a Conv whose output two nodes read (not fused).
func convNetModel(t *testing.T) string {
	b := onnxbuild.New("convnet", 13)
	b.Input("x", onnxbuild.Float, 1, 3, 12, 12)
	f := onnxbuild.Float32s
	b.Init(f("w1", []int64{8, 3, 3, 3}, randVals(1, 8*27, false)), f("b1", []int64{8}, randVals(2, 8, false)),
		f("g", []int64{8}, randVals(3, 8, false)), f("be", []int64{8}, randVals(4, 8, false)),
		f("mu", []int64{8}, randVals(5, 8, false)), f("var", []int64{8}, randVals(6, 8, true)),
		f("wd", []int64{8, 1, 3, 3}, randVals(7, 72, false)), f("s", []int64{1, 8, 1, 1}, randVals(8, 8, false)),
		f("t", []int64{8, 1, 1}, randVals(9, 8, false)), onnxbuild.Scalar("lo", 0), onnxbuild.Scalar("hi", 6),
		f("w3", []int64{4, 8, 1, 1}, randVals(10, 32, false)), f("c3", []int64{1, 4, 1, 1}, randVals(11, 4, false)),
		f("w4", []int64{4, 4, 3, 3}, randVals(12, 144, false)))
	pads := onnxbuild.Ints("pads", 1, 1, 1, 1)
	b.Node("conv1", "Conv", []string{"x", "w1", "b1"}, []string{"c1"}, pads)
	b.Node("bn1", "BatchNormalization", []string{"c1", "g", "be", "mu", "var"}, []string{"n1"}, onnxbuild.Float32Attr("epsilon", 1e-3))
	b.Node("relu1", "Relu", []string{"n1"}, []string{"r1"})
	b.Node("dw", "Conv", []string{"r1", "wd"}, []string{"c2"}, pads, onnxbuild.Int("group", 8))
	b.Node("mul2", "Mul", []string{"c2", "s"}, []string{"m2"})
	b.Node("add2", "Add", []string{"m2", "t"}, []string{"a2"})
	b.Node("clip2", "Clip", []string{"a2", "lo", "hi"}, []string{"r2"})
	b.Node("pw", "Conv", []string{"r2", "w3"}, []string{"c3o"})
	b.Node("add3", "Add", []string{"c3o", "c3"}, []string{"a3"})
	b.Node("conv4", "Conv", []string{"a3", "w4"}, []string{"c4"}, pads)
	b.Node("relu4", "Relu", []string{"c4"}, []string{"r4"})
	b.Node("neg4", "Neg", []string{"c4"}, []string{"n4"})
	b.Node("sum", "Add", []string{"r4", "n4"}, []string{"y"})
	b.Output("y", onnxbuild.Float, 1, 4, 12, 12)
	p := filepath.Join(t.TempDir(), "convnet.onnx")
	if err := b.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnfFusionsEndToEnd(t *testing.T) {
	model := convNetModel(t)
	plainOpts := onnxOptions(t, model)
	plainOpts.Optimize = "none"
	plain, prep := convertOK(t, plainOpts)
	fused, frep := convertOK(t, onnxOptions(t, model))
	// 13 nodes; fused: conv1(+bn,relu), dw(+scale,clip), pw(+add), conv4, relu4, neg4, sum.
	if prep.Graph.NodesAfter != 13 || frep.Graph.NodesAfter != 7 {
		t.Errorf("nodes: unfused %d, fused %d", prep.Graph.NodesAfter, frep.Graph.NodesAfter)
	}
	for _, p := range prep.Passes {
		if p.Stage == "anf_fusion" && (p.Ran || !strings.Contains(p.Note, "--optimize=none")) {
			t.Errorf("--optimize=none ran %+v", p)
		}
	}
	changed := map[string]bool{}
	for _, p := range frep.Passes {
		if p.Stage == "anf_fusion" && p.Changed {
			changed[p.Name] = true
		}
	}
	for _, name := range []string{"ConvBiasaddFusion", "ConvBatchNormFusion", "ConvScaleFusion", "ConvActivationFusion"} {
		if !changed[name] {
			t.Errorf("%s changed nothing: %+v", name, frep.Passes)
		}
	}
	// The file has Conv2DFusion with activation_type, read back as attributes.
	m, err := mindir.Open(fused)
	if err != nil {
		t.Fatal(err)
	}
	acts := map[string]int64{}
	for _, n := range m.Graph.Nodes {
		if n.Op == "Conv2D" {
			acts[n.Provenance[0]] = n.Attrs.Int(ir.AttrActivation, 0)
		}
	}
	m.Close()
	want := map[string]int64{"conv1": ir.ActReLU, "dw": ir.ActReLU6, "pw": 0, "conv4": 0}
	for k, v := range want {
		if got, ok := acts[k]; !ok || got != v {
			t.Errorf("read back: %s activation_type %d (present %v), want %d; all %v", k, got, ok, v, acts)
		}
	}
	in := ir.NewTensor(ir.Float32, []int64{1, 3, 12, 12})
	copy(in.F32(), randVals(99, 432, false))
	a, b := runMindIR(t, plain, []*ir.Tensor{in})[0].F32(), runMindIR(t, fused, []*ir.Tensor{in})[0].F32()
	for i := range a {
		if d := math.Abs(float64(a[i] - b[i])); d > 1e-5+1e-4*math.Abs(float64(a[i])) {
			t.Fatalf("y[%d]: fused %g, unfused %g", i, b[i], a[i])
		}
	}
	// Re-converting the written file keeps the fused activations.
	again := onnxOptions(t, fused)
	again.FMK = "MINDIR"
	again2, _ := convertOK(t, again)
	c := runMindIR(t, again2, []*ir.Tensor{in})[0].F32()
	for i := range a {
		if c[i] != b[i] {
			t.Fatalf("re-converted y[%d] = %g, first conversion %g", i, c[i], b[i])
		}
	}
}

func TestAnfFusionSwitches(t *testing.T) {
	model := convNetModel(t)
	o := onnxOptions(t, model)
	o.ConfigFile = writeConfig(t, "[registry]\nfusion_blacklists=ConvActivationFusion, ConvBatchnormFusion,GLUFusion\n")
	_, rep := convertOK(t, o)
	warns := strings.Join(rep.Warnings, "\n")
	if !strings.Contains(warns, `did you mean "ConvBatchNormFusion"?`) || !strings.Contains(warns, "GLUFusion has no counterpart") {
		t.Errorf("warnings:\n%s", warns)
	}
	for _, p := range rep.Passes {
		if p.Stage == "anf_fusion" && p.Name == "ConvActivationFusion" && p.Ran {
			t.Errorf("blacklisted pass ran: %+v", p)
		}
	}
	// The misspelt ConvBatchnormFusion disables nothing: bn1, mul2, add2 and
	// add3 fold, no activation fuses.
	if rep.Graph.NodesAfter != 9 {
		t.Errorf("%d nodes after", rep.Graph.NodesAfter)
	}

	o = onnxOptions(t, model)
	o.ConfigFile = writeConfig(t, "[registry]\ndisable_fusion=on\n")
	if _, rep = convertOK(t, o); rep.Graph.NodesAfter != 13 {
		t.Errorf("disable_fusion=on: %d nodes after", rep.Graph.NodesAfter)
	}

	// ATC switch file, Ascend only.
	sw := filepath.Join(t.TempDir(), "fusion_switch.json")
	os.WriteFile(sw, []byte(`{"Switch":{"GraphFusion":{"ALL":"off","ConvBatchnormFusionPass":"on"},"UBFusion":{"TbeConvReluFusionPass":"off"}}}`), 0o644)
	o = onnxOptions(t, model)
	o.Optimize = "ascend_oriented"
	o.ConfigFile = writeConfig(t, "[ascend_context]\nfusion_switch_config_file_path="+sw+"\n")
	_, rep = convertOK(t, o)
	// bn1 folds and then relu1 fuses; the scale and bias Adds stay (and so
	// clip2, which reads add2).
	if rep.Graph.NodesAfter != 11 {
		t.Errorf("switch file: %d nodes after; passes %+v", rep.Graph.NodesAfter, rep.Passes)
	}
	if warns := strings.Join(rep.Warnings, "\n"); !strings.Contains(warns, "UBFusion.TbeConvReluFusionPass: no fusion pass of this converter corresponds") {
		t.Errorf("warnings:\n%s", warns)
	}
	os.WriteFile(sw, []byte(`{"Switch":{"GraphFusion":{"ALL":"maybe"}}}`), 0o644)
	expectFailure(t, o, CodeParamInvalid, "must be on or off")
}
