package mindir

import "gkconv/internal/ir"

// lowerIndexingTable and liftIndexingTable: the issue-13 op family's MindSpore
// primitives (written by lower, read back by lift); IR ops of the family
// that have no MindSpore primitive are written as Custom(type="gkconv.<op>").
//
// Written as primitives, as converter_lite's ONNX parsers write them:
// GatherNd (onnx_gather_nd_parser.cc; batch_dims 0 only), ScatterNdUpdate
// (onnx_scatter_nd_parser.cc; reduction none only), ScatterElements
// (onnx_scatter_elements_parser.cc and onnx_scatter_parser.cc: axis;
// reduction none only) and NonMaxSuppression
// (onnx_non_max_suppression_parser.cc: center_point_box); AffineGrid as
// MindSpore's AffineGrid (theta, output_size; align_corners), which is
// PyTorch's affine_grid like ONNX's. Custom: the reductions, GatherND with
// batch_dims, TensorScatter (no primitive), NonZero (converter_lite writes
// Where then a Transpose), GridSample (GridSampler2D/3D take their modes
// as MindSpore enums whose values the reference sources here do not
// define), RoiAlign (MindSpore's ROIAlign takes [R, 5] rois and has no
// max mode), MaxUnpool (MindSpore's MaxUnpool2D indexes per channel) and
// DeformConv (MindSpore's DeformableConv2d takes another offset layout).
var lowerIndexingTable = schemaGated(map[string]lowerFunc{
	"GatherNd":          lowerGatherNd,
	"ScatterNdUpdate":   lowerScatterNoReduction,
	"ScatterElements":   lowerScatterNoReduction,
	"NonMaxSuppression": lowerNonMaxSuppression,
	"AffineGrid":        lowerAffineGrid,
})

var liftIndexingTable = map[string]func(*mnode) (any, error){
	"GatherNd":          liftIndexing("GatherNd", 2, 2, "", false),
	"ScatterNdUpdate":   liftIndexing("ScatterNdUpdate", 3, 3, "", false),
	"ScatterElements":   liftIndexing("ScatterElements", 3, 3, "axis", false),
	"NonMaxSuppression": liftIndexing("NonMaxSuppression", 2, 5, "center_point_box", false),
	"AffineGrid":        liftIndexing("AffineGrid", 2, 2, "align_corners", true),
}

// allPresent reports n has between lo and hi inputs, none omitted.
func allPresent(n *ir.Node, lo, hi int) bool {
	if len(n.Inputs) < lo || len(n.Inputs) > hi {
		return false
	}
	for _, v := range n.Inputs {
		if v == nil {
			return false
		}
	}
	return true
}

func lowerGatherNd(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "batch_dims") || n.Attrs.Int("batch_dims", 0) != 0 || !allPresent(n, 2, 2) {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "GatherNd", inputs: n.Inputs}, nil
}

// lowerScatterNoReduction: ScatterNdUpdate(data, indices, updates) and
// ScatterElements(data, indices, updates) with axis, for reduction none.
func lowerScatterNoReduction(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "axis", "reduction") || n.Attrs.String("reduction", "none") != "none" || !allPresent(n, 3, 3) {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: n.Op, inputs: n.Inputs}
	if n.Op == "ScatterElements" {
		m.attrs = append(m.attrs, aInt("axis", n.Attrs.Int("axis", 0)))
	} else if n.Attrs.Has("axis") {
		return nil, errNoPrimitive
	}
	return m, nil
}

func lowerNonMaxSuppression(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "center_point_box") || !allPresent(n, 2, 5) {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "NonMaxSuppression", inputs: n.Inputs}
	m.attrs = append(m.attrs, aInt("center_point_box", n.Attrs.Int("center_point_box", 0)))
	return m, nil
}

func lowerAffineGrid(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "align_corners") || !allPresent(n, 2, 2) {
		return nil, errNoPrimitive
	}
	m := &msNode{prim: "AffineGrid", inputs: n.Inputs}
	m.attrs = append(m.attrs, aBool("align_corners", n.Attrs.Int("align_corners", 0) != 0))
	return m, nil
}

// liftIndexing lifts a primitive whose inputs are the IR op's (lo to hi of
// them) and whose one attribute, when attr is not "", is the IR op's
// integer attribute of that name (0 by default; a MindSpore bool when
// isBool).
func liftIndexing(op string, lo, hi int, attr string, isBool bool) func(*mnode) (any, error) {
	return func(m *mnode) (any, error) {
		ins, err := m.tensorsUpTo(lo, hi)
		if err != nil {
			return nil, err
		}
		var attrs ir.Attrs
		if attr != "" {
			v, err := m.intArg(-1, 0, attr)
			if err != nil {
				return nil, err
			}
			if isBool {
				v = b2i(v != 0)
			}
			attrs = ir.Attrs{attr: ir.IntAttr(v)}
		}
		return m.emit1(op, attrs, ins...), nil
	}
}

// tensorsUpTo reads inputs 0..hi-1 (the first lo required, later ones
// absent or None).
func (m *mnode) tensorsUpTo(lo, hi int) ([]*ir.Value, error) {
	var ins []*ir.Value
	for i := 0; i < hi; i++ {
		v, err := m.optTensor(i)
		if err != nil {
			return nil, err
		}
		if v == nil {
			if i < lo {
				return nil, unsupported("input %d is missing", i)
			}
			break
		}
		ins = append(ins, v)
	}
	return ins, nil
}
