package convert

import (
	"context"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// ReportQuantization is the --reportFile "quantization" section.
type ReportQuantization struct {
	QuantType string `json:"quant_type"`
}

// quantize runs the post-training quantization the config file asks for
// ([common_quant_param] quant_type); nothing when it asks for none.
func quantize(ctx context.Context, g *ir.Graph, cfg *akgcfg.Config, modelFile string, rep *Report) error {
	if cfg == nil || cfg.Quant == nil || cfg.Quant.Type == akgcfg.QuantNone {
		return nil
	}
	q := cfg.Quant
	rep.Quantization = &ReportQuantization{QuantType: q.Type.String()}
	switch q.Type {
	case akgcfg.WeightQuant:
		return weightQuant(ctx, g, q, modelFile, rep)
	case akgcfg.FullQuant:
		return fullQuant(ctx, g, q, modelFile, rep)
	case akgcfg.DynamicQuant:
		return dynamicQuant(ctx, g, q, modelFile, rep)
	}
	return Errorf(CodeParamInvalid, "quant_type %s is not implemented", q.Type)
}
