package fusion

import "gkconv/internal/ir"

// ConvBiasaddFusion (converter_lite's conv_biasadd_fusion.cc): Conv then Add
// (or BiasAdd) of a constant that only varies along the channel axis -> that
// constant becomes (is added to) the conv's bias. What it leaves alone is
// said in conv_fold.go.
func runConvBiasaddFusion(st *state) (bool, string, error) {
	return runConvFold(st, "bias Add", func(c convTail, dead map[*ir.Node]bool) bool {
		m, ok := c.foldable()
		if !ok || !sameOut(c.next, c.out) {
			return false
		}
		var add []float32
		switch c.next.Op {
		case "Add":
			k, ok2 := otherOperand(c.next, c.out)
			if !ok2 {
				return false
			}
			add, ok = perChannel(k, c.out.Shape)
		case "BiasAdd":
			if c.next.Attrs.String("format", c.next.Attrs.String("data_format", "NCHW")) != "NCHW" || c.next.Inputs[0] != c.out {
				return false
			}
			b := c.next.Inputs[1]
			if b == nil || !b.IsConst() || b.Const.DType != ir.Float32 || b.Const.NumElements() != int64(m) {
				return false
			}
			add, ok = b.Const.F32(), true
		default:
			return false
		}
		if !ok {
			return false
		}
		rescale(st, c.conv, m, nil, f64s(add))
		absorb(c.conv, dead, c.next)
		return true
	})
}
