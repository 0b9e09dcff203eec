package fusion

import (
	"sort"

	"gkconv/internal/ir"
)

// opPattern is n's split-model pattern, its op's row in the IR table
// (OPAQUE for ops the table lacks).
func opPattern(n *ir.Node) ir.Pattern { return ir.LookupOp(n.Op).PatternOf() }

type edgeRel int

const (
	relInjective edgeRel = iota
	relBroadcast
)

type areaMode int

const (
	modeBasic areaMode = iota
	modeComposite
)

type areaEdge struct {
	a   *area
	rel edgeRel
}

// area is a set of ops the split model may turn into one kernel.
type area struct {
	id       int
	ops      []*ir.Node // ops[0] is the dominant op
	pat      ir.Pattern
	mode     areaMode
	isOutput bool
	inputs   []areaEdge
	alive    bool
}

func (a *area) dom() *ir.Node { return a.ops[0] }

func (a *area) computeSize() int64 {
	if len(a.dom().Outputs) == 0 {
		return 0
	}
	return ir.NumElements(a.dom().Outputs[0].Shape)
}

// shapeEqual compares shapes ignoring leading 1s of the longer one.
func shapeEqual(a, b []int64) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	diff := len(a) - len(b)
	for i := 0; i < diff; i++ {
		if a[i] != 1 {
			return false
		}
	}
	for i := range b {
		if a[i+diff] != b[i] {
			return false
		}
	}
	return true
}

// splitModel is MindSpore's SplitModel over a list of ops.
type splitModel struct {
	areas   []*area
	byNode  map[*ir.Node]*area
	reach   [][]bool
	alive   map[int]bool
	limit   int // composite_op_limit_size
	fused   []*area
	forward bool // direction of the last match
}

func newSplitModel(ops []*ir.Node, isOutput func(*ir.Node) bool, limit int) *splitModel {
	m := &splitModel{byNode: map[*ir.Node]*area{}, alive: map[int]bool{}, limit: limit}
	for _, n := range ops {
		m.newArea(n, isOutput(n))
	}
	sz := len(m.areas)
	m.reach = make([][]bool, sz)
	for i := range m.reach {
		m.reach[i] = make([]bool, sz)
		m.reach[i][i] = true
		m.alive[i] = true
	}
	for i := sz - 1; i >= 0; i-- {
		for _, u := range m.users(m.areas[i]) {
			m.link(i, u.a.id)
		}
	}
	return m
}

func (m *splitModel) newArea(n *ir.Node, isOutput bool) {
	a := &area{id: len(m.areas), ops: []*ir.Node{n}, isOutput: isOutput, alive: true}
	init := opPattern(n)
	a.pat = init
	var ins []*ir.Value
	for _, v := range n.Inputs {
		if v != nil {
			ins = append(ins, v)
		}
	}
	for _, v := range ins {
		rel := relInjective
		if init == ir.PatternElemwise && len(ins) > 1 && len(n.Outputs) > 0 && !shapeEqual(n.Outputs[0].Shape, v.Shape) {
			rel = relBroadcast
		}
		if init == ir.PatternElemwise && rel == relBroadcast {
			a.pat = ir.PatternBroadcast
		}
		if v.Producer != nil {
			if pa, ok := m.byNode[v.Producer]; ok {
				a.inputs = append(a.inputs, areaEdge{pa, rel})
			}
		}
	}
	// ELEMWISE again when every other input is a scalar constant: Add(x, 1).
	if a.pat == ir.PatternBroadcast && init == ir.PatternElemwise {
		scalars := 0
		for _, v := range ins {
			if v.Const != nil && v.Const.NumElements() == 1 {
				scalars++
			}
		}
		if scalars+1 == len(ins) {
			a.pat = ir.PatternElemwise
			if len(a.inputs) > 0 {
				a.inputs[0].rel = relInjective
			}
		}
	}
	if n.Attrs.Has(ir.GKExpandFrom) {
		a.mode = modeComposite
	}
	a.inputs = uniqueEdges(a.inputs)
	m.areas = append(m.areas, a)
	m.byNode[n] = a
}

// uniqueEdges keeps one edge per area (the greater relation), by area id.
func uniqueEdges(es []areaEdge) []areaEdge {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].a == es[j].a {
			return es[i].rel > es[j].rel
		}
		return es[i].a.id < es[j].a.id
	})
	out := es[:0]
	for i, e := range es {
		if i > 0 && e.a == es[i-1].a {
			continue
		}
		out = append(out, e)
	}
	return out
}

func (m *splitModel) users(a *area) []areaEdge {
	var us []areaEdge
	for _, b := range m.areas {
		if !b.alive || b == a {
			continue
		}
		for _, e := range b.inputs {
			if e.a == a {
				us = append(us, areaEdge{b, e.rel})
				break
			}
		}
	}
	return us
}

func (m *splitModel) reachable(a, b int) bool { return m.reach[a][b] }

func (m *splitModel) link(from, to int) {
	for suc := range m.alive {
		if m.reach[to][suc] {
			m.reach[from][suc] = true
		}
	}
}

func (m *splitModel) fuseReach(target, other int) {
	for suc := range m.alive {
		if m.reach[other][suc] && !m.reach[target][suc] {
			for pre := range m.alive {
				if m.reach[pre][target] {
					m.reach[pre][suc] = true
				}
			}
		}
	}
	for pre := range m.alive {
		if m.reach[pre][other] && !m.reach[pre][target] {
			for suc := range m.alive {
				if m.reach[target][suc] {
					m.reach[pre][suc] = true
				}
			}
		}
	}
	delete(m.alive, other)
}

// hasCircle: fusing a and b (one an input of the other) would make a cycle
// iff the producer reaches another input of the consumer.
func (m *splitModel) hasCircle(a, b *area) bool {
	if m.reachable(a.id, b.id) {
		for _, e := range b.inputs {
			if e.a != a && m.reachable(a.id, e.a.id) {
				return true
			}
		}
		return false
	}
	for _, e := range a.inputs {
		if e.a != b && m.reachable(b.id, e.a.id) {
			return true
		}
	}
	return false
}

// fuseInput merges input area in into a (Area::FuseInput).
func (m *splitModel) fuseInput(a, in *area) {
	at := -1
	for i, e := range a.inputs {
		if e.a == in {
			at = i
			break
		}
	}
	if at < 0 {
		return
	}
	rel := a.inputs[at].rel
	if in.isOutput {
		a.isOutput = true
	}
	if a.pat < in.pat {
		a.ops = append(append([]*ir.Node{}, in.ops...), a.ops...)
	} else {
		a.ops = append(a.ops, in.ops...)
	}
	if in.pat > a.pat {
		a.pat = in.pat
	}
	if a.pat == ir.PatternElemwise && rel == relBroadcast {
		a.pat = ir.PatternBroadcast
	}
	ins := append([]areaEdge{}, a.inputs[:at]...)
	ins = append(ins, a.inputs[at+1:]...)
	ins = append(ins, in.inputs...)
	a.inputs = uniqueEdges(ins)
	for _, b := range m.areas {
		if !b.alive || b == a || b == in {
			continue
		}
		changed := false
		for i := range b.inputs {
			if b.inputs[i].a == in {
				b.inputs[i].a = a
				changed = true
			}
		}
		if changed {
			b.inputs = uniqueEdges(b.inputs)
		}
	}
	for _, o := range in.ops {
		m.byNode[o] = a
	}
	in.alive = false
	in.ops = nil
	in.inputs = nil
}

func (m *splitModel) limitAreaSize(dom *area) {
	total := len(dom.ops)
	for _, a := range m.fused {
		total += len(a.ops)
	}
	if total <= m.limit {
		return
	}
	sort.SliceStable(m.fused, func(i, j int) bool { return len(m.fused[i].ops) < len(m.fused[j].ops) })
	cur := len(dom.ops)
	for i, a := range m.fused {
		cur += len(a.ops)
		if cur > m.limit {
			m.fused = m.fused[:i]
			return
		}
	}
}

func (m *splitModel) fuseAreas(dom *area, areas []*area, forward bool) {
	target := dom
	for _, a := range areas {
		if !forward { // the user always absorbs its producer
			target, a = a, target
		}
		m.fuseInput(target, a)
		m.fuseReach(target.id, a.id)
	}
	if target.pat > ir.PatternReshape {
		target.mode = modeComposite
	}
}

// fusePattern is one rule of the split model.
type fusePattern struct {
	name string
	// match fills m.fused and m.forward for dom; it includes the Check.
	match func(m *splitModel, dom *area) bool
}

func (m *splitModel) runPattern(p fusePattern) {
	for i := 0; i < len(m.areas); {
		a := m.areas[i]
		if !a.alive {
			i++
			continue
		}
		m.fused, m.forward = nil, true
		if p.match(m, a) {
			m.limitAreaSize(a)
			if len(m.fused) > 0 {
				m.fuseAreas(a, m.fused, m.forward)
				continue // re-visit the same area
			}
		}
		i++
	}
}

// run applies the patterns in order and returns the live areas.
func (m *splitModel) run(patterns []fusePattern) []*area {
	for _, p := range patterns {
		m.runPattern(p)
	}
	var out []*area
	for _, a := range m.areas {
		if a.alive {
			out = append(out, a)
		}
	}
	return out
}
