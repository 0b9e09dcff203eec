package convert

import (
	"context"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// weightQuant: WEIGHT_QUANT.
func weightQuant(ctx context.Context, g *ir.Graph, q *akgcfg.QuantConfig, modelFile string, rq *ReportQuantization) error {
	return Errorf(CodeParamInvalid, "quant_type=WEIGHT_QUANT is not implemented yet")
}
