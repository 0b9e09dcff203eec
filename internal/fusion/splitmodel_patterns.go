package fusion

import (
	"slices"
	"strings"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// The split model's fusion patterns (MindSpore's split_model.cc FusePattern
// subclasses, plus this project's layer_norm and expanded_op), and which of
// them each backend runs (backendPatterns). The engine they drive is
// splitmodel.go.

func virtualPattern() fusePattern {
	return fusePattern{"bind_virtual_node", func(m *splitModel, dom *area) bool {
		if dom.pat != ir.PatternVirtual {
			return false
		}
		for _, e := range dom.inputs {
			m.fused = append(m.fused, e.a)
		}
		return true
	}}
}

func reshapePattern() fusePattern {
	return fusePattern{"reshape", func(m *splitModel, dom *area) bool {
		if dom.pat != ir.PatternReshape {
			return false
		}
		var min *area
		for _, u := range m.users(dom) {
			if u.a.pat <= ir.PatternBroadcast && !m.hasCircle(dom, u.a) && (min == nil || u.a.pat < min.pat) {
				min, m.forward = u.a, false
			}
		}
		for _, e := range dom.inputs {
			if e.a.pat <= ir.PatternBroadcast && !m.hasCircle(e.a, dom) && (min == nil || e.a.pat < min.pat) {
				min, m.forward = e.a, true
			}
		}
		if min == nil {
			return false
		}
		m.fused = append(m.fused, min)
		return true
	}}
}

func isolateReshapePattern() fusePattern {
	return fusePattern{"isolate_reshape", func(m *splitModel, dom *area) bool {
		if dom.pat != ir.PatternReshape || len(dom.ops) != 1 {
			return false
		}
		for _, u := range m.users(dom) {
			if u.a.mode == modeComposite && !m.hasCircle(dom, u.a) {
				m.fused, m.forward = append(m.fused, u.a), false
				return true
			}
		}
		for _, e := range dom.inputs {
			if e.a.mode == modeComposite && !m.hasCircle(e.a, dom) {
				m.fused, m.forward = append(m.fused, e.a), true
				return true
			}
		}
		return false
	}}
}

func suffix(width bool) string {
	if width {
		return "_width"
	}
	return "_depth"
}

// elemwiseFwd is Lite CPU/GPU's elemwise_fwd: an ELEMWISE dom absorbs
// ELEMWISE inputs over injective edges of equal size.
func elemwiseFwdPattern(width bool) fusePattern {
	return fusePattern{"elemwise_fwd" + suffix(width), func(m *splitModel, dom *area) bool {
		if dom.pat != ir.PatternElemwise || (!width && len(dom.inputs) != 1) {
			return false
		}
		for _, e := range dom.inputs {
			if !width && len(m.users(e.a)) != 1 {
				continue
			}
			if e.a.pat <= ir.PatternElemwise && e.rel == relInjective {
				if width && m.hasCircle(e.a, dom) {
					continue
				}
				if e.a.computeSize() == dom.computeSize() {
					m.fused = append(m.fused, e.a)
				}
			}
		}
		return len(m.fused) > 0
	}}
}

func elemwiseBroadcastFwdPattern(width bool) fusePattern {
	return fusePattern{"elemwise_broadcast_fwd" + suffix(width), func(m *splitModel, dom *area) bool {
		if (dom.pat != ir.PatternElemwise && dom.pat != ir.PatternBroadcast) || (!width && len(dom.inputs) != 1) {
			return false
		}
		for _, e := range dom.inputs {
			if !width && len(m.users(e.a)) != 1 {
				continue
			}
			if e.a.pat <= ir.PatternBroadcast && e.rel == relInjective {
				if width && m.hasCircle(e.a, dom) {
					continue
				}
				if e.a.computeSize() == dom.computeSize() {
					m.fused = append(m.fused, e.a)
				}
			}
		}
		return len(m.fused) > 0
	}}
}

func reduceFwdPattern(width bool, limit int) fusePattern {
	return fusePattern{"reduce_fwd" + suffix(width), func(m *splitModel, dom *area) bool {
		if dom.pat != ir.PatternReduce || (!width && len(dom.inputs) != 1) {
			return false
		}
		for _, e := range dom.inputs {
			if !width && len(m.users(e.a)) != 1 {
				continue
			}
			if len(e.a.ops) > limit {
				continue
			}
			if e.a.pat <= ir.PatternElemwise && e.rel == relInjective {
				if width && m.hasCircle(e.a, dom) {
					continue
				}
				m.fused = append(m.fused, e.a)
			}
		}
		return len(m.fused) > 0
	}}
}

// elemwiseBroadcastBwd: a non-output ELEMWISE/BROADCAST area fuses into ALL
// of its users or none.
func elemwiseBroadcastBwdPattern(width bool, limit int) fusePattern {
	return fusePattern{"elemwise_broadcast_bwd" + suffix(width), func(m *splitModel, dom *area) bool {
		if (dom.pat != ir.PatternElemwise && dom.pat != ir.PatternBroadcast) || dom.isOutput {
			return false
		}
		users := m.users(dom)
		if (!width && len(users) > 1) || len(dom.ops) > limit {
			return false
		}
		m.forward = false
		for _, u := range users {
			a := u.a
			if !width && len(a.inputs) != 1 {
				m.fused = nil
				return false
			}
			if a.pat > ir.PatternReduce {
				m.fused = nil
				return false
			}
			if width {
				if len(m.fused) > 0 && m.fused[0].computeSize() != a.computeSize() {
					m.fused = nil
					return false
				}
				if m.hasCircle(dom, a) {
					continue
				}
			}
			if a.pat == ir.PatternReduce {
				if dom.pat == ir.PatternElemwise && u.rel == relInjective {
					m.fused = append(m.fused, a)
				} else {
					m.fused = nil
					return false
				}
			} else {
				m.fused = append(m.fused, a)
			}
		}
		if len(m.fused) != len(users) {
			m.fused = nil
			return false
		}
		return len(m.fused) > 0
	}}
}

// convPattern (Lite CPU): Conv2D absorbs elementwise users of its shape.
func convPattern() fusePattern {
	return fusePattern{"conv", func(m *splitModel, dom *area) bool {
		if dom.dom().Op != "Conv2D" {
			return false
		}
		m.forward = false
		for _, u := range m.users(dom) {
			if m.hasCircle(dom, u.a) {
				continue
			}
			if u.a.pat < ir.PatternBroadcast || (u.a.pat == ir.PatternBroadcast && slices.Equal(u.a.dom().Outputs[0].Shape, dom.dom().Outputs[0].Shape)) {
				m.fused = append(m.fused, u.a)
			}
		}
		return len(m.fused) > 0
	}}
}

// matmulPattern (Ascend AKG): MatMul absorbs Add/Cast users.
func matmulPattern() fusePattern {
	return fusePattern{"matmul_depth", func(m *splitModel, dom *area) bool {
		if dom.dom().Op != "MatMul" {
			return false
		}
		m.forward = false
		for _, u := range m.users(dom) {
			if op := u.a.dom().Op; (op == "Add" || op == "Cast") && !m.hasCircle(dom, u.a) {
				m.fused = append(m.fused, u.a)
			}
		}
		return len(m.fused) > 0
	}}
}

// expansionKey identifies the expansion an op came from ("" = none).
func expansionKey(n *ir.Node) string {
	if !n.Attrs.Has(ir.GKExpandFrom) {
		return ""
	}
	return n.Attrs.String(ir.GKExpandFrom, "") + "\x00" + strings.Join(n.Provenance, "\x00")
}

// expandedOpPattern is this converter's addition, run last: the areas of
// one expanded op (LayerNorm, Softmax, ...) that the MindSpore patterns left
// apart across a reduction are joined again when no cycle results, so an
// expander yields one kernel as in MindSpore's GraphKernelExpander.
// disable_fusion_pattern=expanded_op turns it off.
func expandedOpPattern() fusePattern {
	return fusePattern{"expanded_op", func(m *splitModel, dom *area) bool {
		keys := map[string]bool{}
		for _, o := range dom.ops {
			if k := expansionKey(o); k != "" {
				keys[k] = true
			}
		}
		if len(keys) == 0 {
			return false
		}
		shares := func(a *area) bool {
			for _, o := range a.ops {
				if keys[expansionKey(o)] {
					return true
				}
			}
			return false
		}
		for _, e := range dom.inputs {
			if shares(e.a) && !m.hasCircle(e.a, dom) {
				m.fused, m.forward = append(m.fused, e.a), true
				return true
			}
		}
		for _, u := range m.users(dom) {
			if shares(u.a) && !m.hasCircle(dom, u.a) {
				m.fused, m.forward = append(m.fused, u.a), false
				return true
			}
		}
		return false
	}}
}

// rowShape is the row plan of the kernel generators (kernels.RowPlan) as
// the split model sees it: every reduction reduces the trailing axes
// full[p:] of a tensor of shape full, and every value is per element of
// full or per row (full[:p]), ignoring 1s. Areas that fit one rowShape
// still fit it after they merge.
type rowShape struct {
	full []int64
	p    int
}

func (r rowShape) equal(o rowShape) bool { return r.p == o.p && slices.Equal(r.full, o.full) }

// rowShapeOf returns the rowShape of a REDUCE area; ok is false when a has
// no reduction or does not fit one row plan.
func rowShapeOf(a *area) (rowShape, bool) {
	for _, n := range a.ops {
		if opPattern(n) != ir.PatternReduce {
			continue
		}
		full, p, ok, reduces := reduceRows(n)
		if !ok {
			return rowShape{}, false
		}
		if reduces {
			rs := rowShape{full: full, p: p}
			return rs, fitsRows(a, rs)
		}
	}
	return rowShape{}, false
}

// fitsRows: every reduction of a reduces rs's rows and every op output is
// per element or per row of rs.
func fitsRows(a *area, rs rowShape) bool {
	for _, n := range a.ops {
		if opPattern(n) == ir.PatternReduce {
			full, p, ok, reduces := reduceRows(n)
			if !ok || reduces && !rs.equal(rowShape{full: full, p: p}) {
				return false
			}
		}
		for _, o := range n.Outputs {
			if o != nil && !sameNonOnes(o.Shape, rs.full) && !sameNonOnes(o.Shape, rs.full[:rs.p]) {
				return false
			}
		}
	}
	return true
}

// reduceRows reads reduce op n (ONNX signature: data, constant axes): the
// input shape full and the first reduced axis p when n reduces exactly the
// trailing axes full[p:]. reduces is false for a no-op reduction
// (noop_with_empty_axes with no axes), which the generators treat as a copy.
func reduceRows(n *ir.Node) (full []int64, p int, ok, reduces bool) {
	if len(n.Inputs) == 0 || n.Inputs[0] == nil || len(n.Outputs) != 1 || n.Outputs[0] == nil {
		return nil, 0, false, false
	}
	full = n.Inputs[0].Shape
	r := len(full)
	var axes []int64
	if in := n.Input(1); in != nil {
		if in.Const == nil {
			return nil, 0, false, false
		}
		a, err := in.Const.Int64s()
		if err != nil {
			return nil, 0, false, false
		}
		axes = a
	}
	if len(axes) == 0 && n.Attrs.Int("noop_with_empty_axes", 0) != 0 {
		return full, 0, true, false
	}
	reduced := make([]bool, r)
	for i := range reduced {
		reduced[i] = len(axes) == 0 // no axes: all of them
	}
	for _, ax := range axes {
		if ax < 0 {
			ax += int64(r)
		}
		if ax < 0 || ax >= int64(r) {
			return nil, 0, false, false
		}
		reduced[ax] = true
	}
	p = r
	for p > 0 && reduced[p-1] {
		p--
	}
	for i := 0; i < p; i++ {
		if reduced[i] {
			return nil, 0, false, false // not only trailing axes
		}
	}
	return full, p, true, true
}

// sameNonOnes: a and b have the same dims apart from 1s.
func sameNonOnes(a, b []int64) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i] == 1 {
			i++
		}
		for j < len(b) && b[j] == 1 {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		i, j = i+1, j+1
	}
}

// mergeMakesCycle reports whether merging set (already connected by edges)
// would make a cycle: some area outside set lies on a path between two of
// its members.
func (m *splitModel) mergeMakesCycle(set ...*area) bool {
	for _, s := range set {
		for _, e := range s.inputs {
			if slices.Contains(set, e.a) {
				continue
			}
			for _, t := range set {
				if m.reachable(t.id, e.a.id) {
					return true
				}
			}
		}
	}
	return false
}

// layerNormPattern is our addition, modelled on Lite Ascend's layer_norm
// (ReduceSum -> BROADCAST -> {REDUCE, BROADCAST}) and generalised. A
// LayerNorm or Softmax written out with basic ops (ONNX opset < 17) leaves
// the MindSpore patterns with one area per reduction, joined through the
// elementwise area between them (x - mean and its square). A REDUCE dom
// with a rowShape absorbs either a REDUCE input area of the same rowShape,
// or an ELEMWISE/BROADCAST input area that fits the rowShape together with
// a REDUCE input of that area of the same rowShape (both or neither); the
// merge must make no cycle and stay within composite_op_limit_size. The
// result fits the generators' row-wise strategy: one pass per reduction
// over the same rows, the input read once, the intermediates kept out of
// memory. disable_fusion_pattern=layer_norm turns it off.
func layerNormPattern() fusePattern {
	return fusePattern{"layer_norm", func(m *splitModel, dom *area) bool {
		if dom.pat != ir.PatternReduce {
			return false
		}
		rows, ok := rowShapeOf(dom)
		if !ok {
			return false
		}
		fits := func(areas ...*area) bool {
			size := len(dom.ops)
			for _, a := range areas {
				size += len(a.ops)
			}
			return size <= m.limit && !m.mergeMakesCycle(append(areas, dom)...)
		}
		for _, e := range dom.inputs {
			a := e.a
			switch {
			case a.pat == ir.PatternReduce:
				if r, ok := rowShapeOf(a); ok && r.equal(rows) && fits(a) {
					m.fused = append(m.fused, a)
					return true
				}
			case (a.pat == ir.PatternElemwise || a.pat == ir.PatternBroadcast) && fitsRows(a, rows):
				for _, ae := range a.inputs {
					r, ok := rowShapeOf(ae.a)
					if ae.a.pat == ir.PatternReduce && ok && r.equal(rows) && fits(a, ae.a) {
						m.fused = append(m.fused, a, ae.a) // a is dom's input, then ae.a is
						return true
					}
				}
			}
		}
		return false
	}}
}

// backendPatterns is the pattern order of each backend (converter_lite's
// mindspore-lite/tools/graph_kernel/converter/split_model_{cpu,gpu,ascend}.cc).
// Our additions: layer_norm (where Lite Ascend has its layer_norm; on CPU/GPU
// after the MindSpore patterns) and expanded_op, last.
func backendPatterns(be akgcfg.Backend, reduceDepth int) []fusePattern {
	switch be.Device {
	case akgcfg.Ascend:
		ps := []fusePattern{virtualPattern()}
		if !be.Is910B() {
			ps = append(ps, matmulPattern())
		}
		return append(ps,
			elemwiseBroadcastFwdPattern(false), elemwiseBroadcastFwdPattern(true),
			reduceFwdPattern(false, reduceDepth), reduceFwdPattern(true, reduceDepth),
			elemwiseBroadcastBwdPattern(false, 6), elemwiseBroadcastBwdPattern(true, 6),
			layerNormPattern(), isolateReshapePattern(), expandedOpPattern())
	default:
		ps := []fusePattern{virtualPattern(), reshapePattern(), elemwiseFwdPattern(false), elemwiseFwdPattern(true)}
		if be.Device == akgcfg.CPU {
			ps = append(ps, convPattern())
		}
		return append(ps,
			elemwiseBroadcastFwdPattern(false), elemwiseBroadcastFwdPattern(true),
			reduceFwdPattern(false, reduceDepth), reduceFwdPattern(true, reduceDepth),
			elemwiseBroadcastBwdPattern(false, 20), elemwiseBroadcastBwdPattern(true, 20),
			isolateReshapePattern(), layerNormPattern(), expandedOpPattern())
	}
}

// enabledPatterns applies enable_fusion_pattern_only and
// disable_fusion_pattern (substring matches on pattern names).
func enabledPatterns(ps []fusePattern, f *akgcfg.Flags) []fusePattern {
	contains := func(list []string, name string) bool {
		for _, s := range list {
			if s != "" && strings.Contains(name, s) {
				return true
			}
		}
		return false
	}
	var out []fusePattern
	for _, p := range ps {
		if len(f.EnableFusionPatternOnly) > 0 && !contains(f.EnableFusionPatternOnly, p.name) {
			continue
		}
		if contains(f.DisableFusionPattern, p.name) {
			continue
		}
		out = append(out, p)
	}
	return out
}
