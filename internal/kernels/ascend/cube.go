package ascend

import (
	"errors"
	"fmt"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// The cube strategy: a body with one MatMul (AKG's matmul_depth fusion:
// reshapes before it, elementwise ops after it). The product runs on the
// Cube unit through the high-level Matmul API: each work item (a batch
// index and a singleCoreM x singleCoreN block of C) sets the offset A/B
// GlobalTensors and SetTail, then every Iterate yields a baseM x baseN tile
// of C in the Unified Buffer (GetTensorC into a VECIN queue). The epilogue
// runs on that tile row by row with vector instructions, as the vector
// strategy does with a row of the domain F = batch ++ [M, N]: operands that
// vary along N are staged by DataCopyPad (or filled on the scalar unit when
// not contiguous), the others are row scalars. A bias Add right after the
// MatMul becomes Matmul::SetBias.

// cubeTiling is the Matmul tiling and the work split over the cores.
type cubeTiling struct {
	M, N, K             int64
	baseM, baseN, baseK int64
	singleM, singleN    int64
	batch, mBlocks      int64
	nBlocks             int64
}

func roundUp(x, m int64) int64 { return (x + m - 1) / m * m }
func ceilDiv(x, m int64) int64 { return (x + m - 1) / m }

// planCube picks base tiles that fit L0A/L0B/L0C with double buffering
// (128x64 and 64x128 float32 tiles: 32 KiB each; C 128x128: 64 KiB) and the
// Unified Buffer (the C tile plus rowBufs row buffers of baseN floats), and
// groups tiles into per-core blocks so that about maxCores work items
// remain.
func planCube(batch, M, N, K int64, rowBufs int64) (cubeTiling, error) {
	t := cubeTiling{M: M, N: N, K: K, batch: batch}
	t.baseM = min(roundUp(M, 16), 128)
	t.baseN = min(roundUp(N, 16), 128)
	t.baseK = min(roundUp(K, 8), 64)
	for t.baseM*t.baseN*4+rowBufs*t.baseN*4+64 > ubBudget {
		if t.baseM > 16 {
			t.baseM /= 2
		} else if t.baseN > 16 {
			t.baseN /= 2
		} else {
			return t, fmt.Errorf("%d epilogue row buffers do not fit the Unified Buffer", rowBufs)
		}
	}
	mt, nt := ceilDiv(M, t.baseM), ceilDiv(N, t.baseN)
	tm, tn := int64(1), int64(1)
	for batch*ceilDiv(mt, tm)*ceilDiv(nt, tn) > maxCores {
		if tn < nt {
			tn *= 2
		} else if tm < mt {
			tm *= 2
		} else {
			break
		}
	}
	t.singleM, t.singleN = min(tm*t.baseM, M), min(tn*t.baseN, N)
	t.mBlocks, t.nBlocks = ceilDiv(M, t.singleM), ceilDiv(N, t.singleN)
	return t, nil
}

// findMatMul returns the body's MatMul node (nil when none); more than one
// is an error.
func findMatMul(body *ir.Graph) (*ir.Node, error) {
	var mm *ir.Node
	for _, n := range body.Nodes {
		if n.Op == "MatMul" {
			if mm != nil {
				return nil, fmt.Errorf("nodes %s and %s: more than one MatMul in a fused kernel", mm.Name, n.Name)
			}
			mm = n
		}
	}
	return mm, nil
}

// checkCubeBody is CheckDeviceBody for bodies with a MatMul: float32 values
// of static shape, every other op known to the elementwise generator.
func checkCubeBody(body *ir.Graph) error {
	var errs []error
	check := func(v *ir.Value, what string) {
		if v == nil {
			return
		}
		if !v.ShapeKnown() {
			errs = append(errs, fmt.Errorf("%s %s has no static shape (%v)", what, v.Name, v.Shape))
		} else if v.DType != ir.Float32 {
			errs = append(errs, fmt.Errorf("%s %s is %s: the cube strategy is float32 only", what, v.Name, v.DType))
		}
	}
	for _, v := range body.Inputs {
		check(v, "input")
	}
	for _, n := range body.Nodes {
		if n.Op != "MatMul" && !kernels.Supported(n.Op) {
			errs = append(errs, fmt.Errorf("node %s: op %s is not supported", n.Name, n.Op))
		}
		for _, o := range n.Outputs {
			check(o, "value")
		}
	}
	return errors.Join(errs...)
}

// cubeLeaf is an epilogue operand that does not depend on the MatMul.
type cubeLeaf struct {
	v    *ir.Value
	m    []int  // F dim of each of v's dims
	buf  string // vector buffer name; "" for a row scalar
	in   int    // body input staged by DataCopyPad; -1 when filled element-wise
	elem bool
}

func (g *agen) cube(mm *ir.Node) (string, Plan, error) {
	body := g.body
	inputIdx := func(v *ir.Value) int {
		for i, bi := range body.Inputs {
			if bi == v {
				return i
			}
		}
		return -1
	}
	// Prologue: A and B are body inputs seen through reshapes.
	source := func(v *ir.Value) (int, error) {
		// Aliases (reshapes, Identity) only reinterpret row-major data: the
		// operand's GM buffer is the MatMul operand.
		for v != nil && v.Producer != nil && ir.LookupOp(v.Producer.Op).IsAlias() {
			v = v.Producer.Inputs[0]
		}
		if v == nil || v.Const != nil {
			return -1, fmt.Errorf("node %s: MatMul operand %s is a constant (the Cube reads operands from GM)", mm.Name, v.Name)
		}
		i := inputIdx(v)
		if i < 0 {
			return -1, fmt.Errorf("node %s: MatMul operand %s is computed in the kernel (only reshapes may precede a MatMul)", mm.Name, v.Name)
		}
		return i, nil
	}
	ia, err := source(mm.Inputs[0])
	if err != nil {
		return "", Plan{}, err
	}
	ib, err := source(mm.Inputs[1])
	if err != nil {
		return "", Plan{}, err
	}
	as, bs := mm.Inputs[0].Shape, mm.Inputs[1].Shape
	if len(as) == 0 || len(bs) == 0 {
		return "", Plan{}, fmt.Errorf("node %s: MatMul of a scalar", mm.Name)
	}
	transA := len(as) > 1 && mm.Attrs.Int("transpose_a", 0) != 0
	transB := len(bs) > 1 && mm.Attrs.Int("transpose_b", 0) != 0
	if len(as) == 1 {
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int64{bs[0], 1}
	}
	ra, rb := len(as), len(bs)
	M, K := as[ra-2], as[ra-1]
	if transA {
		M, K = K, M
	}
	Kb, N := bs[rb-2], bs[rb-1]
	if transB {
		Kb, N = N, Kb
	}
	if K != Kb {
		return "", Plan{}, fmt.Errorf("node %s: inner dims %d and %d differ", mm.Name, K, Kb)
	}
	if M == 0 || N == 0 || K == 0 || K > 1<<30 || M > 1<<30 || N > 1<<30 {
		return "", Plan{}, fmt.Errorf("node %s: MatMul of %dx%dx%d is not supported", mm.Name, M, N, K)
	}
	batchA, batchB := as[:ra-2], bs[:rb-2]
	ob := make([]int64, max(len(batchA), len(batchB)))
	for i := range ob {
		da, db := int64(1), int64(1)
		if j := i - (len(ob) - len(batchA)); j >= 0 {
			da = batchA[j]
		}
		if j := i - (len(ob) - len(batchB)); j >= 0 {
			db = batchB[j]
		}
		switch {
		case da == db || db == 1:
			ob[i] = da
		case da == 1:
			ob[i] = db
		default:
			return "", Plan{}, fmt.Errorf("node %s: batch dims %v and %v do not broadcast", mm.Name, batchA, batchB)
		}
	}
	F := append(append([]int64{}, ob...), M, N)
	nd := len(F) - 1 // the N dim of F
	mmOut := mm.Outputs[0]
	dom := map[*ir.Value][]int{}
	if m, ok := kernels.AlignOnes(mmOut.Shape, F); ok {
		dom[mmOut] = m
	} else {
		return "", Plan{}, fmt.Errorf("node %s: output %v does not match %v", mm.Name, mmOut.Shape, F)
	}

	// Epilogue: nodes reading the product, in order; each operand that does
	// not depend on it is a leaf.
	var epi []*ir.Node
	leafOf := map[*ir.Node][]*cubeLeaf{} // per node, per input (nil: a domain value)
	uses := map[*ir.Value]int{}
	for _, n := range body.Nodes {
		for _, in := range n.Inputs {
			uses[in]++
		}
		reads := false
		for _, in := range n.Inputs {
			if _, ok := dom[in]; ok && in != nil {
				reads = true
			}
		}
		if !reads {
			continue
		}
		if len(n.Outputs) != 1 {
			return "", Plan{}, fmt.Errorf("node %s: multi-output op after a MatMul", n.Name)
		}
		out := n.Outputs[0]
		om, ok := kernels.AlignOnes(out.Shape, F)
		if !ok {
			return "", Plan{}, fmt.Errorf("node %s: %s result %v after the MatMul does not keep its %v layout", n.Name, n.Op, out.Shape, F)
		}
		alias := vecAlias(n.Op)
		if !alias && !vecBinary[n.Op] && vecUnary[n.Op] == "" && !vecExtra(n) {
			return "", Plan{}, fmt.Errorf("node %s: no vector instruction for %s after a MatMul", n.Name, n.Op)
		}
		if !alias && !vecBinary[n.Op] {
			if _, ok := dom[n.Inputs[0]]; !ok {
				return "", Plan{}, fmt.Errorf("node %s: %s applies the product as a bound, not as its operand", n.Name, n.Op)
			}
		}
		ls := make([]*cubeLeaf, len(n.Inputs))
		for k, in := range n.Inputs {
			if in == nil || alias && k > 0 {
				continue
			}
			var m []int
			if ir.LookupOp(n.Op).IsAlias() {
				m = dom[in]
			} else {
				bm, ok := bcastMap(in.Shape, out.Shape)
				if !ok {
					return "", Plan{}, fmt.Errorf("node %s: operand %s does not broadcast", n.Name, in.Name)
				}
				m = composeMap(bm, om)
			}
			if dm, ok := dom[in]; ok {
				for a := range dm {
					if dm[a] != m[a] {
						return "", Plan{}, fmt.Errorf("node %s: the product is broadcast", n.Name)
					}
				}
				continue
			}
			if alias {
				return "", Plan{}, fmt.Errorf("node %s: %s of a value independent of the MatMul", n.Name, n.Op)
			}
			l := &cubeLeaf{v: in, m: m, in: -1}
			ls[k] = l
		}
		dom[out] = om
		leafOf[n] = ls
		epi = append(epi, n)
	}
	for _, v := range body.Outputs {
		if _, ok := dom[v]; !ok {
			return "", Plan{}, fmt.Errorf("output %s does not depend on MatMul %s", v.Name, mm.Name)
		}
	}

	// SetBias: an Add of a vector along N as the product's only use.
	var biasNode *ir.Node
	biasIn := -1
	isOutput := func(v *ir.Value) bool {
		for _, o := range body.Outputs {
			if o == v {
				return true
			}
		}
		return false
	}
	if len(epi) > 0 && epi[0].Op == "Add" && uses[mmOut] == 1 && !isOutput(mmOut) && N > 1 {
		n := epi[0]
		for k, l := range leafOf[n] {
			if l == nil || biasIn >= 0 {
				continue
			}
			nonOne := 0
			onN := false
			for a, d := range l.v.Shape {
				if d != 1 {
					nonOne++
					onN = l.m[a] == nd
				}
			}
			if i := inputIdx(l.v); i >= 0 && nonOne == 1 && onN && n.Inputs[1-k] == mmOut {
				biasNode, biasIn = n, i
				leafOf[n][k] = nil
			}
		}
	}

	// Buffers: the C tile; per row, a VECIN queue per staged leaf, a VECOUT
	// queue per output, a TBuf per computed vector and element-wise leaf.
	varies := func(l *cubeLeaf) bool {
		if F[nd] == 1 {
			return false
		}
		for _, x := range l.m {
			if x == nd {
				return true
			}
		}
		return false
	}
	var nIn, nTmp int
	var stageLeaves, fillLeaves []*cubeLeaf
	for _, n := range epi {
		for _, l := range leafOf[n] {
			if l == nil || !varies(l) {
				continue
			}
			i := inputIdx(l.v)
			contiguous := true
			for a, x := range l.m {
				if x == nd {
					for _, d := range l.v.Shape[a+1:] {
						contiguous = contiguous && d == 1
					}
				}
			}
			if i >= 0 && contiguous {
				l.in, l.buf = i, fmt.Sprintf("vin%d", nIn)
				nIn++
				stageLeaves = append(stageLeaves, l)
			} else {
				l.elem, l.buf = true, fmt.Sprintf("vt%d", nTmp)
				nTmp++
				fillLeaves = append(fillLeaves, l)
			}
		}
	}
	bufName := map[*ir.Value]string{mmOut: "vc"}
	alias := map[*ir.Value]*ir.Value{}
	outBuf := map[*ir.Value]string{}
	for i, v := range body.Outputs {
		if outBuf[v] == "" {
			outBuf[v] = fmt.Sprintf("vout%d", i)
		}
	}
	for _, n := range epi {
		out := n.Outputs[0]
		switch {
		case n == biasNode:
			alias[out] = mmOut
		case vecAlias(n.Op):
			alias[out] = n.Inputs[0]
		case outBuf[out] != "":
			bufName[out] = outBuf[out]
		default:
			bufName[out] = fmt.Sprintf("vt%d", nTmp)
			nTmp++
		}
	}
	resolve := func(v *ir.Value) string {
		for bufName[v] == "" && alias[v] != nil {
			v = alias[v]
		}
		return bufName[v]
	}
	rowBufs := int64(nIn + nTmp + len(body.Outputs))
	batch := ir.NumElements(ob)
	t, err := planCube(batch, M, N, K, rowBufs)
	if err != nil {
		return "", Plan{}, err
	}
	rowBytes := roundUp(t.baseN*4, 32)
	tileBytes := t.baseM * t.baseN * 4

	// Init: tiling, buffers, the Matmul object.
	fmt.Fprintf(&g.init, "    tiling.usedCoreNum = %d; tiling.M = %d; tiling.N = %d; tiling.Ka = %d; tiling.Kb = %d;\n",
		min(max(batch*t.mBlocks*t.nBlocks, 1), maxCores), M, N, K, K)
	fmt.Fprintf(&g.init, "    tiling.singleCoreM = %d; tiling.singleCoreN = %d; tiling.singleCoreK = %d;\n", t.singleM, t.singleN, K)
	fmt.Fprintf(&g.init, "    tiling.baseM = %d; tiling.baseN = %d; tiling.baseK = %d;\n", t.baseM, t.baseN, t.baseK)
	g.init.WriteString("    tiling.depthA1 = 1; tiling.depthB1 = 1; tiling.stepM = 1; tiling.stepN = 1; tiling.stepKa = 1; tiling.stepKb = 1;\n")
	isBias := 0
	if biasNode != nil {
		isBias = 1
	}
	fmt.Fprintf(&g.init, "    tiling.isBias = %d; tiling.iterateOrder = 0; tiling.dbL0A = 2; tiling.dbL0B = 2; tiling.dbL0C = 1;\n", isBias)
	g.init.WriteString("    tiling.shareL1Size = 0; tiling.shareL0CSize = 0; tiling.shareUbSize = 0; tiling.transLength = 0;\n")
	fmt.Fprintf(&g.init, "    pipe.InitBuffer(qc, 1, %d);\n", tileBytes)
	g.members.WriteString("  TQue<TPosition::VECIN, 1> qc;\n")
	for j := range nIn {
		fmt.Fprintf(&g.init, "    pipe.InitBuffer(qin%d, 1, %d);\n", j, rowBytes)
		fmt.Fprintf(&g.members, "  TQue<TPosition::VECIN, 1> qin%d;\n", j)
	}
	for _, v := range uniqueOutputs(body.Outputs) {
		name := outBuf[v]
		fmt.Fprintf(&g.init, "    pipe.InitBuffer(q%s, 1, %d);\n", name, rowBytes)
		fmt.Fprintf(&g.members, "  TQue<TPosition::VECOUT, 1> q%s;\n", name)
	}
	for j := range nTmp {
		fmt.Fprintf(&g.init, "    pipe.InitBuffer(tb_vt%d, %d);\n", j, rowBytes)
		fmt.Fprintf(&g.members, "  TBuf<TPosition::VECCALC> tb_vt%d;\n", j)
	}
	g.init.WriteString("    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);\n")
	g.members.WriteString("  TPipe pipe;\n  TCubeTiling tiling;\n")
	g.members.WriteString("  Matmul<MatmulType<TPosition::GM, CubeFormat::ND, float>, MatmulType<TPosition::GM, CubeFormat::ND, float>,\n" +
		"         MatmulType<TPosition::VECIN, CubeFormat::ND, float>, MatmulType<TPosition::GM, CubeFormat::ND, float>> mm;\n")

	// Process.
	var sb strings.Builder
	nw := batch * t.mBlocks * t.nBlocks
	fmt.Fprintf(&sb, "    for (int64_t w = GetBlockIdx(); w < %d; w += GetBlockNum()) {\n", nw)
	sc := kernels.NewScope(&sb, "      ", nil)
	sc.Line("const int64_t bi = w / %d;", t.mBlocks*t.nBlocks)
	sc.Line("const int32_t m0 = (int32_t)((w / %d) %% %d) * %d, nb0 = (int32_t)(w %% %d) * %d;", t.nBlocks, t.mBlocks, t.singleM, t.nBlocks, t.singleN)
	sc.Line("const int32_t tm = %d - m0 < %d ? %d - m0 : %d, tn = %d - nb0 < %d ? %d - nb0 : %d;", M, t.singleM, M, t.singleM, N, t.singleN, N, t.singleN)
	bIdx := g.eg.Decompose(sc, "bi", "b", ob)
	batchOff := func(bshape []int64, mat int64) string {
		off := len(ob) - len(bshape)
		var terms []string
		stride := mat
		for a := len(bshape) - 1; a >= 0; a-- {
			if bshape[a] != 1 {
				terms = append(terms, fmt.Sprintf("%s*%d", bIdx[a+off], stride))
			}
			stride *= bshape[a]
		}
		if len(terms) == 0 {
			return "0"
		}
		return strings.Join(terms, " + ")
	}
	offA := batchOff(batchA, M*K)
	if transA {
		offA += " + m0"
	} else {
		offA += fmt.Sprintf(" + (int64_t)m0*%d", K)
	}
	offB := batchOff(batchB, K*N)
	if transB {
		offB += fmt.Sprintf(" + (int64_t)nb0*%d", K)
	} else {
		offB += " + nb0"
	}
	sc.Line("mm.SetTensorA(gin%d[%s], %t);", ia, offA, transA)
	sc.Line("mm.SetTensorB(gin%d[%s], %t);", ib, offB, transB)
	if biasNode != nil {
		sc.Line("mm.SetBias(gin%d[nb0]);", biasIn)
	}
	sc.Line("mm.SetTail(tm, tn);")
	sc.Line("const int32_t roundM = (tm + %d) / %d;", t.baseM-1, t.baseM)
	sc.Line("for (int32_t it = 0; mm.template Iterate<true>(); it++) {")
	tsc := kernels.NewScope(&sb, "        ", sc)
	tsc.Line("const int32_t mt0 = m0 + (it %% roundM) * %d, nt0 = nb0 + (it / roundM) * %d;", t.baseM, t.baseN)
	tsc.Line("const int32_t rows = m0 + tm - mt0 < %d ? m0 + tm - mt0 : %d;", t.baseM, t.baseM)
	tsc.Line("const int32_t n = nb0 + tn - nt0 < %d ? nb0 + tn - nt0 : %d;", t.baseN, t.baseN)
	tsc.Line("const DataCopyExtParams cp{1, (uint32_t)(n * sizeof(float)), 0, 0, 0};")
	tsc.Line("{ LocalTensor<float> c = qc.AllocTensor<float>(); mm.template GetTensorC<true>(c, false, true); qc.EnQue(c); }")
	tsc.Line("LocalTensor<float> ct = qc.DeQue<float>();")
	for j := range nTmp {
		tsc.Line("LocalTensor<float> vt%d = tb_vt%d.Get<float>();", j, j)
	}
	tsc.Line("for (int32_t r = 0; r < rows; r++) {")
	rsc := kernels.NewScope(&sb, "          ", tsc)
	rsc.Line("const int32_t mr = mt0 + r;")
	rsc.Line("LocalTensor<float> vc = ct[r * %d];", t.baseN)
	fIdx := append(append([]string{}, bIdx...), "mr", "nt0")
	if F[nd-1] == 1 {
		fIdx[nd-1] = "0"
	}
	if F[nd] == 1 {
		fIdx[nd] = "0"
	}
	for _, l := range stageLeaves {
		rsc.Line("{ LocalTensor<float> l = qin%s.AllocTensor<float>(); DataCopyPad(l, gin%d[%s], cp, DataCopyPadExtParams<float>{false, 0, 0, 0.0f}); qin%s.EnQue(l); }",
			strings.TrimPrefix(l.buf, "vin"), l.in, kernels.Offset(l.v.Shape, kernels.PickIdx(fIdx, l.m)), strings.TrimPrefix(l.buf, "vin"))
	}
	for _, l := range stageLeaves {
		rsc.Line("LocalTensor<float> %s = qin%s.DeQue<float>();", l.buf, strings.TrimPrefix(l.buf, "vin"))
	}
	for _, v := range uniqueOutputs(body.Outputs) {
		name := outBuf[v]
		rsc.Line("LocalTensor<float> %s = q%s.AllocTensor<float>();", name, name)
	}
	for _, l := range fillLeaves {
		kIdx := append([]string{}, fIdx...)
		kIdx[nd] = "(nt0 + k)"
		var fb strings.Builder
		fsc := kernels.NewScope(&fb, "            ", rsc)
		e, err := g.eg.Eval(fsc, l.v, kernels.PickIdx(kIdx, l.m))
		if err != nil {
			return "", Plan{}, err
		}
		rsc.Line("for (int32_t k = 0; k < n; k++) {")
		sb.WriteString(fb.String())
		rsc.Line("  %s.SetValue(k, (float)(%s));", l.buf, e)
		rsc.Line("}")
	}
	for _, n := range epi {
		if n == biasNode || vecAlias(n.Op) {
			continue
		}
		ls := leafOf[n]
		opnd := func(k int) (bool, string, error) {
			l := ls[k]
			if l == nil {
				return true, resolve(n.Inputs[k]), nil
			}
			if l.buf != "" {
				return true, l.buf, nil
			}
			s, err := g.eg.Eval(rsc, l.v, kernels.PickIdx(fIdx, l.m))
			return false, s, err
		}
		if err := emitVecOp(rsc, n, bufName[n.Outputs[0]], opnd); err != nil {
			return "", Plan{}, err
		}
	}
	for _, v := range uniqueOutputs(body.Outputs) {
		name := outBuf[v]
		if src := resolve(v); src != name {
			rsc.Line("Muls(%s, %s, 1.0f, n);", name, src)
		}
		rsc.Line("q%s.EnQue(%s);", name, name)
		rsc.Line("{ LocalTensor<float> o = q%s.DeQue<float>();", name)
		for i, o := range body.Outputs {
			if o == v {
				rsc.Line("  DataCopyPad(gout%d[%s], o, cp);", i, kernels.Offset(v.Shape, kernels.PickIdx(fIdx, dom[v])))
			}
		}
		rsc.Line("  q%s.FreeTensor(o); }", name)
	}
	for _, l := range stageLeaves {
		rsc.Line("qin%s.FreeTensor(%s);", strings.TrimPrefix(l.buf, "vin"), l.buf)
	}
	tsc.Line("}")
	tsc.Line("qc.FreeTensor(ct);")
	sc.Line("}")
	sb.WriteString("    }\n    mm.End();\n")
	ub := tileBytes + rowBufs*rowBytes
	return sb.String(), Plan{Strategy: "cube", BlockDim: min(max(nw, 1), maxCores), Rows: batch * M, Inner: N, Tile: t.baseN, UBBytes: ub}, nil
}

// uniqueOutputs lists the distinct output values in order.
func uniqueOutputs(vs []*ir.Value) []*ir.Value {
	var out []*ir.Value
	seen := map[*ir.Value]bool{}
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
