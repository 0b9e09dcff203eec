package fusion

import (
	"fmt"
	"maps"
	"slices"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// RunAnf, the runner of converter_lite's graph fusion passes
// (AnfTransform::RunFusionPass, the "anf fusion pass manager" of
// tools/converter/anf_transform.cc; each pass is in its anf_<pass>.go). They
// run on every conversion before graph-kernel fusion, whatever opt_level
// says, and not at all with --optimize=none (converter_lite's no_fusion).
// They are the rows of anfFusions (passes.go), a stage of their own ("anf_fusion", index 6) so the
// stage.pass and S.I names of the graph-kernel table keep their meaning;
// they are named and ordered as InitFusions lists them, and switched off by
// [registry] fusion_blacklists=Name1,Name2 (converter_lite's key),
// [registry] disable_fusion=on (all of them) and, for Ascend, by the ATC
// fusion switch file (atcSwitchNames). enable_pass/disable_pass do not reach
// them (converter_lite's graph-kernel flags do not either).

// liteOnlyFusions are converter_lite's other InitFusions passes: names a
// blacklist may carry that this converter has no pass for.
var liteOnlyFusions = []string{
	"AddConcatActivationFusion", "HardSwishFusion", "PReluFusion", "SqueezeFusion", "TransposeFusion",
	"CastFusionPass", "ReshapeReshapeFusion", "ReshapeTransposeFusion", "GroupNormFusion", "TfNormFusion",
	"OnnxLayerNormFusion", "OnnxLayerNormFusion2", "BatchMatMulFusion", "BatchNormToScaleFusion",
	"SigmoidMulFusion", "ActivationFusion", "ConvTupleGetItemFusion", "ConvTupleActivationFusion",
	"TfliteLstmCellFusion", "TfLstmCellFusion", "TfBidirectionGruFusion", "TfGeLUFusion", "OnnxGeLUFusion",
	"TfliteRelPosMultiHeadAttentionFusion", "GLUFusion", "ResizeFusion1", "ResizeFusion2", "ConstFoldPass",
	"AffineFusion", "AffineActivationFusion", "ConvConvFusion", "ConvPadFusion", "MatMulMulFusion",
	"TransposeMatMulFusion", "MulAddFusion", "ScaleActivationFusion", "ScaleScaleFusion",
	"FullConnectedFusion", "FullconnectedAddFusion", "TensorDotFusion", "MulActivationFusion",
	"AddActivationFusion", "ExpandDimsReshapeFusion", "SqueezeExpandDimsFusion", "TileMatMulFusion",
}

// atcSwitchNames maps the ATC fusion switch file's pass names to the passes
// of anfFusions they correspond to. "ALL" of GraphFusion covers the weight
// folding passes, "ALL" of UBFusion (ATC's fusion of an op with the
// elementwise ops after it in the Unified Buffer) the activation passes.
// Every name of anfFusions is accepted in either section as itself.
var atcSwitchNames = map[string]map[string][]string{
	"GraphFusion": {
		"ALL":                     {"ConvBiasaddFusion", "ConvBatchNormFusion", "ConvScaleFusion", "MatMulAddFusion"},
		"ConvBatchnormFusionPass": {"ConvBatchNormFusion"},
		"ConvScaleFusionPass":     {"ConvScaleFusion"},
		"AConv2dMulFusion":        {"ConvScaleFusion"},
	},
	"UBFusion": {
		"ALL": {"ConvActivationFusion", "MatMulActivationFusion", "ConvElemwiseAddFusion", "ConvSwishActivationFusion"},
	},
}

// AnfOptions steer RunAnf.
type AnfOptions struct {
	// Flags are the resolved graph-kernel flags (nil: defaults):
	// MatMulAddFusion leaves MatMul alone when enable_cluster_ops makes it
	// clusterable, as preprocess.matmul_bias_fold does.
	Flags   *akgcfg.Flags
	Backend akgcfg.Backend
	// Off, when not empty, turns every pass off and says why
	// (--optimize=none, [registry] disable_fusion=on).
	Off string
	// Blacklist is [registry] fusion_blacklists.
	Blacklist []string
	// Switch is the ATC fusion switch file (Ascend only), nil when none.
	Switch *akgcfg.FusionSwitch
}

// AnfPassNames are the names of converter_lite's fusion passes this
// converter has, in the order they run.
func AnfPassNames() []string {
	var out []string
	for _, p := range anfFusions {
		out = append(out, p.name)
	}
	return out
}

// RunAnf runs converter_lite's graph fusion passes on g (in place) and
// returns one record per pass and the warnings about names in the blacklist
// or the switch file that name no pass, each with the nearest name.
func RunAnf(g *ir.Graph, o AnfOptions) (*Result, []string, error) {
	if g == nil {
		return nil, nil, fmt.Errorf("fusion: nil graph")
	}
	flags := o.Flags
	if flags == nil {
		flags = akgcfg.NewFlags()
	}
	if o.Backend.Device == 0 {
		o.Backend.Device = akgcfg.CPU
	}
	off, warns := anfSwitches(o)
	res := &Result{NodesBefore: len(g.Nodes)}
	for _, n := range g.Nodes {
		if len(n.Provenance) == 0 {
			n.Provenance = []string{n.Name}
		}
	}
	st := &state{g: g, flags: flags, backend: o.Backend, edit: ir.NewEditor(g)}
	changed := false
	for _, p := range anfFusions {
		rec := PassRecord{Stage: AnfStage, StageIndex: p.stage, Name: p.name, PassIndex: p.index, Level: p.lvl}
		if why, ok := off[p.name]; ok || o.Off != "" {
			if o.Off != "" {
				why = o.Off
			}
			rec.Note = why
			res.Passes = append(res.Passes, rec)
			continue
		}
		rec.Ran = true
		ch, msg, err := p.run(st)
		if err != nil {
			return res, warns, fmt.Errorf("fusion: pass %s.%s: %w", AnfStage, p.name, err)
		}
		rec.Changed, rec.Note = ch, msg
		changed = changed || ch
		res.Passes = append(res.Passes, rec)
	}
	if changed {
		g.RemoveDead() // the folded-away weights
	}
	if err := g.Validate(); err != nil {
		return res, warns, fmt.Errorf("fusion: graph after %s is invalid: %w", AnfStage, err)
	}
	res.NodesAfter = len(g.Nodes)
	return res, warns, nil
}

// anfSwitches returns the passes switched off (with the reason) and the
// warnings about unknown names.
func anfSwitches(o AnfOptions) (map[string]string, []string) {
	off, warns := atcSwitchOff(o)
	ours := AnfPassNames()
	// The blacklist wins over a switch file's "on".
	for _, name := range o.Blacklist {
		switch {
		case slices.Contains(ours, name):
			off[name] = "disabled by [registry] fusion_blacklists"
		case slices.Contains(liteOnlyFusions, name):
			warns = append(warns, fmt.Sprintf("fusion_blacklists=%s: converter_lite's pass %s has no counterpart in this converter; it has no effect", name, name))
		default:
			warns = append(warns, fmt.Sprintf("fusion_blacklists=%s: no fusion pass is called %q%s; it has no effect",
				name, name, akgcfg.Suggestion(name, append(slices.Clone(ours), liteOnlyFusions...))))
		}
	}
	return off, warns
}

// atcSwitchOff applies the ATC fusion switch file of o (see atcSwitchNames):
// a section's ALL first, then its named passes over it.
func atcSwitchOff(o AnfOptions) (map[string]string, []string) {
	off := map[string]string{}
	if o.Switch == nil {
		return off, nil
	}
	if o.Backend.Device != akgcfg.Ascend {
		return off, []string{o.Switch.Path + ": the fusion switch file applies to --optimize=ascend_oriented only; ignored"}
	}
	ours := AnfPassNames()
	var warns []string
	for _, sec := range []string{"GraphFusion", "UBFusion"} {
		m := o.Switch.GraphFusion
		if sec == "UBFusion" {
			m = o.Switch.UBFusion
		}
		if on, ok := m["ALL"]; ok && !on {
			for _, p := range atcSwitchNames[sec]["ALL"] {
				off[p] = fmt.Sprintf("disabled by %s: %s.ALL=off", o.Switch.Path, sec)
			}
		}
		known := append(slices.Sorted(maps.Keys(atcSwitchNames[sec])), ours...)
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if name == "ALL" {
				continue
			}
			targets := atcSwitchNames[sec][name]
			if slices.Contains(ours, name) {
				targets = []string{name}
			}
			if len(targets) == 0 {
				warns = append(warns, fmt.Sprintf("%s: %s.%s: no fusion pass of this converter corresponds%s; it has no effect",
					o.Switch.Path, sec, name, akgcfg.Suggestion(name, known)))
				continue
			}
			for _, p := range targets {
				if m[name] {
					delete(off, p)
				} else {
					off[p] = fmt.Sprintf("disabled by %s: %s.%s=off", o.Switch.Path, sec, name)
				}
			}
		}
	}
	return off, warns
}
