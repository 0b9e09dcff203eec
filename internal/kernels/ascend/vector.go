package ascend

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// The vector strategy. The fused domain F (the reduced shape, or the
// common output shape of an elementwise body) is split into rows F[:p] and
// a row's elements F[p:]. Every value is then either a vector (varies over
// the row: a Unified Buffer tensor of up to Tile elements) or a row scalar
// (constant over the row: a scalar-unit variable). Body inputs that are
// vectors are contiguous in their row and staged by DataCopyPad through a
// VECIN queue; reductions over the row are ReduceSum/ReduceMax/ReduceMin
// into a scalar; outputs leave through a VECOUT queue. Bodies that do not
// fit (other dtypes than float32, non-trivial reshapes, ops without a
// vector instruction) use the scalar strategy.

var vecUnary = map[string]string{
	"Exp": "Exp", "Log": "Ln", "Sqrt": "Sqrt", "Rsqrt": "Rsqrt", "Abs": "Abs", "ReLU": "Relu",
	"Reciprocal": "Reciprocal", "Tanh": "Tanh", "Erf": "Erf",
}

var vecBinary = map[string]bool{"Add": true, "Sub": true, "Mul": true, "RealDiv": true, "Maximum": true, "Minimum": true}

// vecAlias: ops the vector and cube strategies run without an instruction,
// the output sharing the input's buffer: the IR table's aliases and
// pass-through ops, and Cast (both strategies take float32 values only).
func vecAlias(op string) bool {
	o := ir.LookupOp(op)
	return o.IsAlias() || o.PassesThrough() || op == "Cast"
}

type vplan struct {
	F      []int64
	p      int
	maps   map[*ir.Value][]int // F dim of each value dim (-1: size 1)
	isVec  map[*ir.Value]bool
	hasRed bool
}

func (g *agen) vector() (string, Plan, error) {
	body := g.body
	for _, v := range body.Inputs {
		if v.DType != ir.Float32 {
			return "", Plan{}, errors.New("vector strategy: float32 only")
		}
	}
	hasRed := false
	for _, n := range body.Nodes {
		for _, o := range n.Outputs {
			if o != nil && o.DType != ir.Float32 {
				return "", Plan{}, errors.New("vector strategy: float32 only")
			}
		}
		if len(n.Outputs) != 1 {
			return "", Plan{}, fmt.Errorf("node %s: multi-output op", n.Name)
		}
		if kernels.IsReduce(n.Op) && !kernels.IsNoopReduce(n) {
			hasRed = true
			switch n.Op {
			case "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin":
			default:
				return "", Plan{}, fmt.Errorf("node %s: no vector reduction for %s", n.Name, n.Op)
			}
		}
	}
	var cands []int
	var F []int64
	if hasRed {
		f, p, _, ok, err := kernels.RowPlan(body)
		if err != nil || !ok {
			return "", Plan{}, errors.New("vector strategy: reductions are not row-wise")
		}
		F, cands = f, []int{p}
	} else {
		F = body.Outputs[0].Shape
		for _, v := range body.Outputs {
			if !slices.Equal(v.Shape, F) {
				return "", Plan{}, errors.New("vector strategy: outputs of different shapes")
			}
		}
		for p := 0; p <= len(F); p++ {
			cands = append(cands, p)
		}
	}
	var lastErr error = errors.New("vector strategy: no row split fits")
	for _, p := range cands {
		vp, err := g.classify(F, p, hasRed)
		if err != nil {
			lastErr = err
			continue
		}
		g.init.Reset()
		g.members.Reset()
		code, plan, err := g.emitVector(vp)
		if err != nil {
			g.init.Reset()
			g.members.Reset()
			lastErr = err
			continue
		}
		return code, plan, nil
	}
	return "", Plan{}, lastErr
}

func composeMap(inner []int, outer []int) []int {
	m := make([]int, len(inner))
	for a, l := range inner {
		m[a] = -1
		if l >= 0 {
			m[a] = outer[l]
		}
	}
	return m
}

// bcastMap maps operand dims onto result dims by numpy broadcasting.
func bcastMap(in, out []int64) ([]int, bool) {
	off := len(out) - len(in)
	if off < 0 {
		return nil, false
	}
	m := make([]int, len(in))
	for a, d := range in {
		switch {
		case d == 1:
			m[a] = -1
		case d == out[a+off]:
			m[a] = a + off
		default:
			return nil, false
		}
	}
	return m, true
}

func (g *agen) classify(F []int64, p int, hasRed bool) (*vplan, error) {
	vp := &vplan{F: F, p: p, maps: map[*ir.Value][]int{}, isVec: map[*ir.Value]bool{}, hasRed: hasRed}
	set := func(v *ir.Value, m []int) error {
		if v == nil {
			return nil
		}
		if old, ok := vp.maps[v]; ok {
			for a := range old {
				if old[a] != m[a] {
					return fmt.Errorf("value %s is read in two layouts", v.Name)
				}
			}
			return nil
		}
		vp.maps[v] = m
		return nil
	}
	for _, v := range g.body.Outputs {
		if m, ok := kernels.AlignOnes(v.Shape, F); ok {
			if err := set(v, m); err != nil {
				return nil, err
			}
		} else if m, ok := kernels.AlignOnes(v.Shape, F[:p]); ok && hasRed {
			if err := set(v, m); err != nil {
				return nil, err
			}
		} else {
			return nil, fmt.Errorf("output %s does not fit the domain %v", v.Name, F)
		}
	}
	nodes := g.body.Nodes
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		out := n.Outputs[0]
		m, ok := vp.maps[out]
		if !ok {
			continue
		}
		switch {
		case kernels.IsReduce(n.Op) && !kernels.IsNoopReduce(n):
			x := n.Inputs[0]
			if !slices.Equal(x.Shape, F) {
				return nil, fmt.Errorf("node %s: reduction input is not the domain", n.Name)
			}
			id := make([]int, len(F))
			for a, d := range F {
				id[a] = a
				if d == 1 {
					id[a] = -1
				}
			}
			if err := set(x, id); err != nil {
				return nil, err
			}
		case kernels.IsReduce(n.Op), kernels.IsReshape(n.Op):
			r, ok := kernels.AlignOnes(n.Inputs[0].Shape, out.Shape)
			if !ok {
				return nil, fmt.Errorf("node %s: reshape %v -> %v moves elements", n.Name, n.Inputs[0].Shape, out.Shape)
			}
			if err := set(n.Inputs[0], composeMap(r, m)); err != nil {
				return nil, err
			}
		default:
			if !vecBinary[n.Op] && vecUnary[n.Op] == "" && !vecAlias(n.Op) && !vecExtra(n) {
				return nil, fmt.Errorf("node %s: no vector instruction for %s", n.Name, n.Op)
			}
			if n.Op == "Cast" && n.Inputs[0].DType != ir.Float32 {
				return nil, fmt.Errorf("node %s: cast", n.Name)
			}
			for k, in := range n.Inputs {
				if in == nil || vecAlias(n.Op) && k > 0 {
					continue
				}
				bm, ok := bcastMap(in.Shape, out.Shape)
				if !ok {
					return nil, fmt.Errorf("node %s: operand %s does not broadcast", n.Name, in.Name)
				}
				if err := set(in, composeMap(bm, m)); err != nil {
					return nil, err
				}
			}
		}
	}
	usesInner := func(m []int) bool {
		for _, l := range m {
			if l >= p {
				return true
			}
		}
		return false
	}
	leaf := func(v *ir.Value) error {
		m := vp.maps[v]
		if !usesInner(m) {
			return nil
		}
		vp.isVec[v] = true
		// The row's elements must be v's trailing dims, all of F[p:].
		seenInner := false
		covered := 0
		for a, l := range m {
			if l >= p {
				seenInner = true
				covered++
			} else if seenInner && v.Shape[a] != 1 {
				return fmt.Errorf("value %s is not contiguous in a row", v.Name)
			}
		}
		want := 0
		for _, d := range F[p:] {
			if d != 1 {
				want++
			}
		}
		if covered != want {
			return fmt.Errorf("value %s is broadcast inside a row", v.Name)
		}
		return nil
	}
	for _, v := range g.body.Inputs {
		if _, ok := vp.maps[v]; ok {
			if err := leaf(v); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range nodes {
		out := n.Outputs[0]
		for k, in := range n.Inputs {
			if in != nil && in.Const != nil && in.Const.NumElements() > 1 && !(vecAlias(n.Op) && k > 0) && !(kernels.IsReduce(n.Op) && k > 0) {
				if err := leaf(in); err != nil {
					return nil, err
				}
			}
		}
		switch {
		case kernels.IsReduce(n.Op) && !kernels.IsNoopReduce(n):
			if !vp.isVec[n.Inputs[0]] {
				return nil, fmt.Errorf("node %s: reduction of a row constant", n.Name)
			}
		case vecAlias(n.Op) || kernels.IsReduce(n.Op):
			vp.isVec[out] = vp.isVec[n.Inputs[0]]
		default:
			for _, in := range n.Inputs {
				if in != nil && vp.isVec[in] {
					vp.isVec[out] = true
				}
			}
		}
	}
	return vp, nil
}

// vecExtra are ops written as short instruction sequences.
func vecExtra(n *ir.Node) bool {
	switch n.Op {
	case "Neg", "Square", "ReLU6":
		return true
	case "Clip":
		return true
	case "Pow":
		if c := n.Inputs[1].Const; c != nil && c.NumElements() == 1 {
			f, err := c.Float64s()
			return err == nil && (f[0] == 2 || f[0] == 0.5 || f[0] == 1)
		}
	}
	return false
}

// emitVector writes the Process body of a classified plan.
func (g *agen) emitVector(vp *vplan) (string, Plan, error) {
	F, p := vp.F, vp.p
	rows, inner := ir.NumElements(F[:p]), ir.NumElements(F[p:])
	// Buffers: a queue per vector input and output, a TBuf per computed
	// vector (aliases share their operand's), a reduction work buffer.
	bufName := map[*ir.Value]string{}
	var ins []int
	var constVecs []*ir.Value
	for i, v := range g.body.Inputs {
		if vp.isVec[v] {
			ins = append(ins, i)
			bufName[v] = fmt.Sprintf("vin%d", i)
		}
	}
	outBuf := map[int]string{}
	var outs []int
	for i, v := range g.body.Outputs {
		if _, ok := kernels.AlignOnes(v.Shape, F); ok && usesInnerDims(F, p) {
			outs = append(outs, i)
			outBuf[i] = fmt.Sprintf("vout%d", i)
		}
	}
	firstOut := map[*ir.Value]int{}
	for _, i := range outs {
		v := g.body.Outputs[i]
		if _, ok := firstOut[v]; !ok {
			firstOut[v] = i
		}
	}
	var tmps []string
	alias := map[*ir.Value]*ir.Value{}
	for _, n := range g.body.Nodes {
		out := n.Outputs[0]
		for k, in := range n.Inputs {
			if in != nil && in.Const != nil && vp.isVec[in] && bufName[in] == "" && !(vecAlias(n.Op) && k > 0) {
				bufName[in] = fmt.Sprintf("vt%d", len(tmps))
				tmps = append(tmps, bufName[in])
				constVecs = append(constVecs, in)
			}
		}
		if !vp.isVec[out] {
			continue
		}
		if vecAlias(n.Op) || kernels.IsReduce(n.Op) {
			alias[out] = n.Inputs[0]
			continue
		}
		if i, ok := firstOut[out]; ok {
			bufName[out] = outBuf[i]
			continue
		}
		bufName[out] = fmt.Sprintf("vt%d", len(tmps))
		tmps = append(tmps, bufName[out])
	}
	resolve := func(v *ir.Value) string {
		for alias[v] != nil && bufName[v] == "" {
			v = alias[v]
		}
		return bufName[v]
	}
	nbuf := int64(len(ins) + len(outs) + len(tmps))
	if vp.hasRed {
		nbuf++
	}
	tile := inner
	if nbuf*tile*4+64 > ubBudget {
		if vp.hasRed {
			return "", Plan{}, fmt.Errorf("rows of %d elements do not fit the Unified Buffer", inner)
		}
		tile = (ubBudget - 64) / (nbuf * 4) / 8 * 8
	}
	if tile < minVecTile && inner >= minVecTile || inner < minVecTile && rows > 1 && p > 0 {
		return "", Plan{}, fmt.Errorf("rows of %d elements are too short for vectors", inner)
	}
	tile = max(tile, 1)
	nt := (inner + tile - 1) / tile
	tb := (tile*4 + 31) / 32 * 32
	for _, i := range ins {
		fmt.Fprintf(&g.init, "    pipe.InitBuffer(qin%d, 1, %d);\n", i, tb)
		fmt.Fprintf(&g.members, "  TQue<TPosition::VECIN, 1> qin%d;\n", i)
	}
	for _, i := range outs {
		fmt.Fprintf(&g.init, "    pipe.InitBuffer(qout%d, 1, %d);\n", i, tb)
		fmt.Fprintf(&g.members, "  TQue<TPosition::VECOUT, 1> qout%d;\n", i)
	}
	for _, t := range tmps {
		fmt.Fprintf(&g.init, "    pipe.InitBuffer(tb_%s, %d);\n", t, tb)
		fmt.Fprintf(&g.members, "  TBuf<TPosition::VECCALC> tb_%s;\n", t)
	}
	if vp.hasRed {
		fmt.Fprintf(&g.init, "    pipe.InitBuffer(tb_work, %d);\n    pipe.InitBuffer(tb_red, 32);\n", tb)
		g.members.WriteString("  TBuf<TPosition::VECCALC> tb_work;\n  TBuf<TPosition::VECCALC> tb_red;\n")
	}
	g.members.WriteString("  TPipe pipe;\n")

	var sb strings.Builder
	fmt.Fprintf(&sb, "    for (int64_t w = GetBlockIdx(); w < %d; w += GetBlockNum()) {\n", rows*nt)
	sc := kernels.NewScope(&sb, "      ", nil)
	sc.Line("const int64_t row = w / %d;", nt)
	sc.Line("const int64_t t0 = (w %% %d) * %d;", nt, tile)
	sc.Line("const int32_t n = (int32_t)(%d - t0 < %d ? %d - t0 : %d);", inner, tile, inner, tile)
	sc.Line("const DataCopyExtParams cp{1, (uint32_t)(n * sizeof(float)), 0, 0, 0};")
	rowIdx := g.eg.Decompose(sc, "row", "o", F[:p])
	fIdx := make([]string, len(F))
	copy(fIdx, rowIdx)
	for a := p; a < len(F); a++ {
		fIdx[a] = "0"
	}
	idxOf := func(v *ir.Value) []string { return kernels.PickIdx(fIdx, vp.maps[v]) }
	// Row base offset of a vector leaf: the offset of its first row element.
	base := func(v *ir.Value) string { return kernels.Offset(v.Shape, idxOf(v)) }
	for _, i := range ins {
		v := g.body.Inputs[i]
		sc.Line("{ LocalTensor<float> l = qin%d.AllocTensor<float>(); DataCopyPad(l, gin%d[%s + t0], cp, DataCopyPadExtParams<float>{false, 0, 0, 0.0f}); qin%d.EnQue(l); }",
			i, i, base(v), i)
	}
	for _, i := range ins {
		sc.Line("LocalTensor<float> vin%d = qin%d.DeQue<float>();", i, i)
	}
	for _, i := range outs {
		sc.Line("LocalTensor<float> vout%d = qout%d.AllocTensor<float>();", i, i)
	}
	for _, t := range tmps {
		sc.Line("LocalTensor<float> %s = tb_%s.Get<float>();", t, t)
	}
	if vp.hasRed {
		sc.Line("LocalTensor<float> vwork = tb_work.Get<float>();")
		sc.Line("LocalTensor<float> vred = tb_red.Get<float>();")
	}
	for _, c := range constVecs {
		sc.Line("for (int32_t k = 0; k < n; k++) %s.SetValue(k, %s[%s + t0 + k]);", bufName[c], g.consts[c], base(c))
	}
	scalar := func(v *ir.Value) (string, error) { return g.eg.Eval(sc, v, idxOf(v)) }
	for _, n := range g.body.Nodes {
		out := n.Outputs[0]
		if _, ok := vp.maps[out]; !ok {
			continue
		}
		if kernels.IsReduce(n.Op) && !kernels.IsNoopReduce(n) {
			src := resolve(n.Inputs[0])
			r, err := kernels.NewReduction(n, true)
			if err != nil {
				return "", Plan{}, err
			}
			instr := map[string]string{"ReduceSum": "ReduceSum", "ReduceMean": "ReduceSum", "ReduceMax": "ReduceMax", "ReduceMin": "ReduceMin"}[n.Op]
			sc.Line("%s(vred, %s, vwork, n);", instr, src)
			s := g.eg.Tmp("r")
			sc.Line("const float %s = (float)(%s);", s, r.Finish("vred.GetValue(0)"))
			g.eg.Bind(sc, out, idxOf(out), s)
			continue
		}
		if !vp.isVec[out] || vecAlias(n.Op) || kernels.IsReduce(n.Op) {
			continue // row scalars are computed on demand; aliases share buffers
		}
		opnd := func(k int) (bool, string, error) {
			in := n.Inputs[k]
			if vp.isVec[in] {
				return true, resolve(in), nil
			}
			s, err := scalar(in)
			return false, s, err
		}
		if err := emitVecOp(sc, n, bufName[out], opnd); err != nil {
			return "", Plan{}, err
		}
	}
	// Outputs.
	for _, i := range outs {
		v := g.body.Outputs[i]
		src := resolve(v)
		switch {
		case !vp.isVec[v]:
			s, err := scalar(v)
			if err != nil {
				return "", Plan{}, err
			}
			sc.Line("Duplicate(vout%d, (float)%s, n);", i, s)
		case src != outBuf[i]:
			sc.Line("Muls(vout%d, %s, 1.0f, n);", i, src)
		}
		sc.Line("qout%d.EnQue(vout%d);", i, i)
		sc.Line("{ LocalTensor<float> o = qout%d.DeQue<float>(); DataCopyPad(gout%d[%s + t0], o, cp); qout%d.FreeTensor(o); }", i, i, base(v), i)
	}
	for _, i := range ins {
		sc.Line("qin%d.FreeTensor(vin%d);", i, i)
	}
	isOut := map[int]bool{}
	for _, i := range outs {
		isOut[i] = true
	}
	for i, v := range g.body.Outputs {
		if isOut[i] {
			continue
		}
		s, err := scalar(v)
		if err != nil {
			return "", Plan{}, err
		}
		sc.Line("if (t0 == 0) gout%d.SetValue(%s, %s);", i, base(v), s)
	}
	sb.WriteString("    }\n")
	ub := nbuf*tb + 32
	return sb.String(), Plan{Strategy: "vector", BlockDim: min(max(rows*nt, 1), maxCores), Rows: rows, Inner: inner, Tile: tile, UBBytes: ub}, nil
}

// emitVecOp writes elementwise node n into the vector d; opnd(k) gives
// operand k as a vector buffer (true) or a scalar expression (false).
func emitVecOp(sc *kernels.Scope, n *ir.Node, d string, opnd func(int) (bool, string, error)) error {
	switch {
	case vecUnary[n.Op] != "":
		_, a, _ := opnd(0)
		sc.Line("%s(%s, %s, n);", vecUnary[n.Op], d, a)
	case n.Op == "Neg":
		_, a, _ := opnd(0)
		sc.Line("Muls(%s, %s, -1.0f, n);", d, a)
	case n.Op == "Square" || n.Op == "Pow":
		_, a, _ := opnd(0)
		e := 2.0
		if n.Op == "Pow" {
			f, _ := n.Inputs[1].Const.Float64s()
			e = f[0]
		}
		switch e {
		case 2:
			sc.Line("Mul(%s, %s, %s, n);", d, a, a)
		case 0.5:
			sc.Line("Sqrt(%s, %s, n);", d, a)
		default:
			sc.Line("Muls(%s, %s, 1.0f, n);", d, a)
		}
	case n.Op == "ReLU6":
		_, a, _ := opnd(0)
		sc.Line("Maxs(%s, %s, 0.0f, n);", d, a)
		sc.Line("Mins(%s, %s, 6.0f, n);", d, d)
	case n.Op == "Clip":
		_, a, _ := opnd(0)
		cur := a
		for _, k := range []int{1, 2} {
			if n.Input(k) == nil {
				continue
			}
			isv, b, err := opnd(k)
			if err != nil {
				return err
			}
			instr := map[int]string{1: "Max", 2: "Min"}[k]
			if isv {
				sc.Line("%s(%s, %s, %s, n);", instr, d, cur, b)
			} else {
				sc.Line("%ss(%s, %s, %s, n);", instr, d, cur, b)
			}
			cur = d
		}
		if cur != d {
			sc.Line("Muls(%s, %s, 1.0f, n);", d, cur)
		}
	case vecBinary[n.Op]:
		av, a, err := opnd(0)
		if err != nil {
			return err
		}
		bv, b, err := opnd(1)
		if err != nil {
			return err
		}
		if err := binaryVec(sc, n.Op, d, av, a, bv, b); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	default:
		return fmt.Errorf("node %s: no vector instruction for %s", n.Name, n.Op)
	}
	return nil
}

func usesInnerDims(F []int64, p int) bool {
	for _, d := range F[p:] {
		if d != 1 {
			return true
		}
	}
	return false
}

// binaryVec writes a binary op with vector or scalar operands.
func binaryVec(sc *kernels.Scope, op, d string, av bool, a string, bv bool, b string) error {
	vv := map[string]string{"Add": "Add", "Sub": "Sub", "Mul": "Mul", "RealDiv": "Div", "Maximum": "Max", "Minimum": "Min"}[op]
	switch {
	case av && bv:
		sc.Line("%s(%s, %s, %s, n);", vv, d, a, b)
	case av: // vector op scalar
		switch op {
		case "Add":
			sc.Line("Adds(%s, %s, (float)%s, n);", d, a, b)
		case "Sub":
			sc.Line("Adds(%s, %s, (float)(-%s), n);", d, a, b)
		case "Mul":
			sc.Line("Muls(%s, %s, (float)%s, n);", d, a, b)
		case "RealDiv":
			sc.Line("Duplicate(%s, (float)%s, n);", d, b)
			sc.Line("Div(%s, %s, %s, n);", d, a, d)
		case "Maximum":
			sc.Line("Maxs(%s, %s, (float)%s, n);", d, a, b)
		case "Minimum":
			sc.Line("Mins(%s, %s, (float)%s, n);", d, a, b)
		}
	case bv: // scalar op vector
		switch op {
		case "Add":
			sc.Line("Adds(%s, %s, (float)%s, n);", d, b, a)
		case "Sub":
			sc.Line("Muls(%s, %s, -1.0f, n);", d, b)
			sc.Line("Adds(%s, %s, (float)%s, n);", d, d, a)
		case "Mul":
			sc.Line("Muls(%s, %s, (float)%s, n);", d, b, a)
		case "RealDiv":
			sc.Line("Duplicate(%s, (float)%s, n);", d, a)
			sc.Line("Div(%s, %s, %s, n);", d, d, b)
		case "Maximum":
			sc.Line("Maxs(%s, %s, (float)%s, n);", d, b, a)
		case "Minimum":
			sc.Line("Mins(%s, %s, (float)%s, n);", d, b, a)
		}
	default:
		return errors.New("binary op of two row scalars classified as a vector")
	}
	return nil
}
