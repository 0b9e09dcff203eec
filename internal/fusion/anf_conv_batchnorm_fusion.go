package fusion

import (
	"math"

	"gkconv/internal/ir"
)

// ConvBatchNormFusion (converter_lite's conv_bn_fusion.cc): Conv then
// inference BatchNorm with constant scale, bias, mean and var -> w*s,
// (b-mean)*s+beta with s = scale/sqrt(var+eps) (conv_transform_fusion.cc).
// What it leaves alone is said in conv_fold.go.
func runConvBatchNormFusion(st *state) (bool, string, error) {
	return runConvFold(st, "BatchNorm", func(c convTail, dead map[*ir.Node]bool) bool {
		bn := c.next
		m, ok := c.foldable()
		if !ok || bn.Op != "BatchNorm" || bn.Body != nil || len(bn.Outputs) != 1 || len(bn.Inputs) != 5 || bn.Inputs[0] != c.out || !sameOut(bn, c.out) {
			return false
		}
		var p [4][]float32 // scale, bias, mean, var
		for i := range p {
			v := bn.Inputs[1+i]
			if v == nil || !v.IsConst() || v.Const.DType != ir.Float32 || v.Const.NumElements() != int64(m) {
				return false
			}
			p[i] = v.Const.F32()
		}
		eps := bn.Attrs.Float("epsilon", 1e-5)
		scale, shift := make([]float64, m), make([]float64, m)
		for o := 0; o < m; o++ {
			scale[o] = float64(p[0][o]) / math.Sqrt(float64(p[3][o])+eps)
			shift[o] = float64(p[1][o]) - float64(p[2][o])*scale[o]
		}
		rescale(st, c.conv, m, scale, shift)
		absorb(c.conv, dead, bn)
		return true
	})
}
