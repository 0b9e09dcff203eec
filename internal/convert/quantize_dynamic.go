package convert

import (
	"context"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// dynamicQuant: DYNAMIC_QUANT.
func dynamicQuant(ctx context.Context, g *ir.Graph, q *akgcfg.QuantConfig, modelFile string, rq *ReportQuantization) error {
	return Errorf(CodeParamInvalid, "quant_type=DYNAMIC_QUANT is not implemented yet")
}
