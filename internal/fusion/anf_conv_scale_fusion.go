package fusion

import "gkconv/internal/ir"

// ConvScaleFusion (converter_lite's conv_scale_fusion.cc): Conv then Mul by
// a per-channel constant s, optionally followed by Add of a per-channel
// constant t (MindSpore's Scale; ONNX writes it as Mul, Add) -> w*s, b*s+t.
// What it leaves alone is said in conv_fold.go.
func runConvScaleFusion(st *state) (bool, string, error) {
	users := st.g.Consumers()
	outs := graphOutputs(st.g)
	return runConvFold(st, "per-channel Mul (+ Add)", func(c convTail, dead map[*ir.Node]bool) bool {
		mul := c.next
		m, ok := c.foldable()
		if !ok || mul.Op != "Mul" || !sameOut(mul, c.out) {
			return false
		}
		k, ok := otherOperand(mul, c.out)
		if !ok {
			return false
		}
		s, ok := perChannel(k, c.out.Shape)
		if !ok {
			return false
		}
		chain := []*ir.Node{mul}
		var shift []float64
		mv := mul.Outputs[0]
		if u := users[mv]; len(u) == 1 && !outs[mv] && u[0].Op == "Add" && !dead[u[0]] && sameOut(u[0], mv) {
			if k2, ok2 := otherOperand(u[0], mv); ok2 {
				if t, ok3 := perChannel(k2, mv.Shape); ok3 {
					shift = f64s(t)
					chain = append(chain, u[0])
				}
			}
		}
		rescale(st, c.conv, m, f64s(s), shift)
		absorb(c.conv, dead, chain...)
		return true
	})
}
