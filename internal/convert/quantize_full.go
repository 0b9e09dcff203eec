package convert

import (
	"context"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// fullQuant: FULL_QUANT.
func fullQuant(ctx context.Context, g *ir.Graph, q *akgcfg.QuantConfig, modelFile string, rq *ReportQuantization) error {
	return Errorf(CodeParamInvalid, "quant_type=FULL_QUANT is not implemented yet")
}
