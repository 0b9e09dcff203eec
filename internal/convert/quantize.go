package convert

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gkconv/internal/safefs"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// ReportQuantization is the --reportFile "quantization" section.
type ReportQuantization struct {
	QuantType string `json:"quant_type"`
	BitNum    int    `json:"bit_num"`
	// Quantized are the nodes whose weights (and, for FULL_QUANT,
	// activations) are now integer.
	Quantized []ReportQuantNode `json:"quantized"`
	// KeptFloat are the candidate nodes left in float, each with why.
	KeptFloat []ReportQuantKept `json:"kept_float"`
	// Calibration is FULL_QUANT's calibration run (nil otherwise).
	Calibration *ReportCalibration `json:"calibration,omitempty"`
	// WeightBytesBefore/After are the candidate weights' bytes in float and
	// as stored now (integers plus their scales and zero points).
	WeightBytesBefore int64 `json:"weight_bytes_before"`
	WeightBytesAfter  int64 `json:"weight_bytes_after"`
}

// ReportQuantNode is one quantized node.
type ReportQuantNode struct {
	Name string `json:"name"`
	Op   string `json:"op"`
	// Weight is the quantized weight: its channels and the largest
	// per-channel relative error of the dequantized weight.
	WeightChannels int     `json:"weight_channels,omitempty"`
	WeightMaxError float64 `json:"weight_max_rel_error,omitempty"`
	// Activation range, scale and zero point (FULL_QUANT).
	InputMin  *float64 `json:"input_min,omitempty"`
	InputMax  *float64 `json:"input_max,omitempty"`
	Scale     *float64 `json:"input_scale,omitempty"`
	ZeroPoint *int     `json:"input_zero_point,omitempty"`
	// Cosine is the cosine similarity of this node's output, quantized
	// against float, over the calibration data (FULL_QUANT, DYNAMIC_QUANT
	// when measured).
	Cosine *float64 `json:"cosine,omitempty"`
}

// ReportQuantKept is a candidate node kept in float.
type ReportQuantKept struct {
	Name   string `json:"name"`
	Op     string `json:"op"`
	Reason string `json:"reason"`
}

// ReportCalibration is what the FULL_QUANT calibration run saw.
type ReportCalibration struct {
	Method  string   `json:"activation_quant_method"`
	Samples int      `json:"samples"`
	Inputs  []string `json:"inputs"` // graph input <- folder
	// OutputCosine is the cosine similarity of each graph output,
	// quantized against float, over the calibration samples.
	OutputCosine map[string]float64 `json:"output_cosine,omitempty"`
}

// quantize runs the post-training quantization the config file asks for
// ([common_quant_param] quant_type); nothing when it asks for none.
func quantize(ctx context.Context, g *ir.Graph, cfg *akgcfg.Config, modelFile string, rep *Report) error {
	if cfg == nil || cfg.Quant == nil || cfg.Quant.Type == akgcfg.QuantNone {
		return nil
	}
	q := cfg.Quant
	rq := &ReportQuantization{QuantType: q.Type.String(), BitNum: q.BitNum,
		Quantized: []ReportQuantNode{}, KeptFloat: []ReportQuantKept{}}
	rep.Quantization = rq
	var err error
	switch q.Type {
	case akgcfg.WeightQuant:
		err = weightQuant(ctx, g, q, modelFile, rq)
	case akgcfg.FullQuant:
		err = fullQuant(ctx, g, q, modelFile, rq)
	case akgcfg.DynamicQuant:
		err = dynamicQuant(ctx, g, q, modelFile, rq)
	default:
		return Errorf(CodeParamInvalid, "quant_type %s is not implemented", q.Type)
	}
	if err != nil {
		return err
	}
	for _, s := range q.SkipQuantNodes {
		if !slices.ContainsFunc(rq.KeptFloat, func(k ReportQuantKept) bool { return k.Reason == "skip_quant_node" && k.Name == s }) &&
			!nodeNamed(g, s) {
			rep.warn(fmt.Sprintf("%s: skip_quant_node %q names no node of the model", q.Source["skip_quant_node"], s))
		}
	}
	if len(rq.Quantized) == 0 {
		rep.warn(fmt.Sprintf("quant_type=%s: no node was quantized (%d candidates kept in float; see the report's quantization.kept_float)",
			q.Type, len(rq.KeptFloat)))
	}
	if q.DebugInfoSavePath != "" {
		if err := writeQuantDebug(q.DebugInfoSavePath, modelFile, rq); err != nil {
			return Errorf(CodeError, "debug_info_save_path (%s): %v", q.Source["debug_info_save_path"], err)
		}
	}
	return nil
}

// nodeNamed: a node of g has the name, or came from a source node of it.
func nodeNamed(g *ir.Graph, name string) bool {
	for _, n := range g.Nodes {
		if n.Name == name || slices.Contains(n.Provenance, name) {
			return true
		}
	}
	return false
}

// writeQuantDebug writes debug_info_save_path's per-layer table, as
// converter_lite's debug mode does: <dir>/<model>_quant_debug.csv, one
// row per candidate node (quantized or kept in float, with why).
func writeQuantDebug(dir, modelFile string, rq *ReportQuantization) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("folder %s does not exist", dir)
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"node", "op", "status", "weight_channels", "weight_max_rel_error", "input_min", "input_max",
		"input_scale", "input_zero_point", "cosine", "reason"})
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', 8, 64)
	}
	for _, n := range rq.Quantized {
		zp := ""
		if n.ZeroPoint != nil {
			zp = strconv.Itoa(*n.ZeroPoint)
		}
		w.Write([]string{n.Name, n.Op, "quantized", strconv.Itoa(n.WeightChannels), strconv.FormatFloat(n.WeightMaxError, 'g', 6, 64),
			f(n.InputMin), f(n.InputMax), f(n.Scale), zp, f(n.Cosine), ""})
	}
	for _, k := range rq.KeptFloat {
		w.Write([]string{k.Name, k.Op, "float", "", "", "", "", "", "", "", k.Reason})
	}
	w.Flush()
	base := strings.TrimSuffix(filepath.Base(modelFile), filepath.Ext(modelFile))
	return safefs.WriteOutputBytes(filepath.Join(dir, base+"_quant_debug.csv"), []byte(b.String()), 0o644)
}
