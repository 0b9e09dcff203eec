package mindir

import (
	"fmt"

	"gkconv/internal/ir"
)

// lowerLossNormTable and liftLossNormTable: the issue-13 op family's MindSpore
// primitives (written by lower, read back by lift); IR ops of the family
// that have no MindSpore primitive are written as Custom(type="gkconv.<op>").
//
// Written as MindSpore primitives: CumProd (CumSum's form), MatrixDeterminant
// (converter_lite's Det), LpNormalization (axis, p) and LRN of odd size
// (converter_lite's depth_radius = size/2, alpha/size; an even ONNX window
// is not centred, which MindSpore's cannot say). The others are Custom:
// MindSpore's NLLLoss is 2-D with a required weight, RmsNorm normalises
// gamma's trailing dims and has a second output, GroupNorm takes its
// scalars as inputs, SiLU has no alpha, MVN and Shrink are converter_lite's
// own primitives outside MindSpore's schema, and NegativeLogLikelihoodLoss's
// N-d form, SoftmaxCrossEntropyLoss, RotaryEmbedding, Hardmax, EyeLike and
// LpPool have no MindSpore primitive.
var lowerLossNormTable = schemaGated(map[string]lowerFunc{
	"CumProd":           func(c *lowerCtx) (*msNode, error) { return lowerScan(c, "CumProd") },
	"MatrixDeterminant": lowerSame,
	"LpNormalization":   lowerLpNormalization,
	"LRN":               lowerLRN,
})

var liftLossNormTable = map[string]func(*mnode) (any, error){
	"CumProd":           func(m *mnode) (any, error) { return liftScan(m, "CumProd") },
	"MatrixDeterminant": liftMatrixDeterminant,
	"LpNormalization":   liftLpNormalization,
	"LRN":               liftLRN,
}

// lowerLpNormalization: LpNormalization(x) with axis and p (both required
// by MindSpore's primitive).
func lowerLpNormalization(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis", "p") || len(n.Inputs) != 1 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "LpNormalization", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInt("axis", n.Attrs.Int("axis", -1)), aInt("p", n.Attrs.Int("p", 2)))
	return m, nil
}

// lowerLRN: LRN(x) as onnx_lrn_parser.cc writes it, for odd sizes only.
func lowerLRN(c *lowerCtx) (*msNode, error) {
	n := c.n
	size := n.Attrs.Int("size", 0)
	if !attrsOnly(n, "size", "alpha", "beta", "bias") || len(n.Inputs) != 1 || size <= 0 || size%2 == 0 {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "LRN", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInt("depth_radius", size/2),
		aFloat("alpha", float32(n.Attrs.Float("alpha", 1e-4)/float64(size))),
		aFloat("beta", float32(n.Attrs.Float("beta", 0.75))),
		aFloat("bias", float32(n.Attrs.Float("bias", 1))))
	return m, nil
}

func liftMatrixDeterminant(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	return m.emit1("MatrixDeterminant", nil, x), nil
}

func liftLpNormalization(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	axis, err := m.intArg(-1, -1, "axis")
	if err != nil {
		return nil, err
	}
	p, err := m.intArg(-1, 2, "p")
	if err != nil {
		return nil, err
	}
	return m.emit1("LpNormalization", ir.Attrs{"axis": ir.IntAttr(axis), "p": ir.IntAttr(p)}, x), nil
}

// liftLRN reads MindSpore's LRN (window 2*depth_radius+1, alpha per
// element of the window) into ONNX's (size, alpha for the whole window).
func liftLRN(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	if r, ok := m.arg(-1, "norm_region").(string); ok && r != "ACROSS_CHANNELS" {
		return nil, unsupported("LRN norm_region %q", r)
	}
	radius, err := m.intArg(-1, 5, "depth_radius")
	if err != nil {
		return nil, err
	}
	if radius < 0 {
		return nil, fmt.Errorf("LRN depth_radius %d is negative", radius)
	}
	size := 2*radius + 1
	attrs := ir.Attrs{"size": ir.IntAttr(size)}
	for _, a := range []struct {
		name string
		def  float64
	}{{"alpha", 1}, {"beta", 0.5}, {"bias", 1}} {
		v, err := m.floatArg(-1, a.def, a.name)
		if err != nil {
			return nil, err
		}
		if a.name == "alpha" {
			// the float32 ONNX alpha this was divided from
			v = float64(float32(v * float64(size)))
		}
		attrs[a.name] = ir.FloatAttr(v)
	}
	return m.emit1("LRN", attrs, x), nil
}
