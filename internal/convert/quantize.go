package convert

import (
	"context"

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
	switch q.Type {
	case akgcfg.WeightQuant:
		return weightQuant(ctx, g, q, modelFile, rq)
	case akgcfg.FullQuant:
		return fullQuant(ctx, g, q, modelFile, rq)
	case akgcfg.DynamicQuant:
		return dynamicQuant(ctx, g, q, modelFile, rq)
	}
	return Errorf(CodeParamInvalid, "quant_type %s is not implemented", q.Type)
}
