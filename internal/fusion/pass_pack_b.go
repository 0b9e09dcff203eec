package fusion

import (
	"fmt"

	"gkconv/internal/ir"
)

// matmul_pack_b (postprocess, level 2, CPU): MindSpore Lite's MatmulPackB.
// A MatMul whose B is a constant float32 matrix becomes PackedMatMul with B
// packed once, here, into the panel layout of the CPU GEMM micro-kernel
// (ir.PackB), so the runtime neither re-packs B per call nor keeps a second
// copy: the unpacked const is dropped unless something else reads it. A bias
// folded in by preprocess.matmul_bias_fold stays the third input.
func runMatMulPackB(st *state) (bool, string, error) {
	g := st.g
	type key struct {
		v      *ir.Value
		transB bool
	}
	packedOf := map[key]*ir.Value{}
	var rewritten, packedFloats int
	orig := map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		k, nn, transB, ok := packableMatMul(n)
		if !ok {
			continue
		}
		b := n.Inputs[1]
		pk := key{b, transB}
		pv := packedOf[pk]
		if pv == nil {
			t := ir.PackBTensor(b.Const.F32(), k, nn, ir.PackNR, transB)
			ir.ReleaseMapped(b.Const.Data) // one resident copy: the packed one
			pv = g.AddConst(st.names.unique(b.Name+"_packed"), t)
			packedOf[pk] = pv
			packedFloats += int(t.NumElements())
		}
		n.Op = ir.OpPackedMatMul
		n.Inputs = append([]*ir.Value{n.Inputs[0], pv}, n.Inputs[2:]...)
		n.Attrs = ir.Attrs{
			"k":           ir.IntAttr(int64(k)),
			"n":           ir.IntAttr(int64(nn)),
			"nr":          ir.IntAttr(ir.PackNR),
			"transpose_a": ir.IntAttr(n.Attrs.Int("transpose_a", 0)),
		}
		orig[b] = true
		rewritten++
	}
	if rewritten == 0 {
		return false, "no MatMul with a constant float32 B", nil
	}
	kept := dropUnusedConsts(g, orig)
	note := fmt.Sprintf("%d MatMul -> PackedMatMul, %d B packed (%.1f MiB)", rewritten, len(packedOf), float64(packedFloats)*4/(1<<20))
	if kept > 0 {
		note += fmt.Sprintf(", %d unpacked B kept for other users", kept)
	}
	return true, note, nil
}

// packableMatMul reports whether n is a top-level float32 MatMul with a
// constant rank-2 B, and its k and n (after transpose_b).
func packableMatMul(n *ir.Node) (k, nn int, transB, ok bool) {
	if n.Op != "MatMul" || len(n.Inputs) < 2 || len(n.Inputs) > 3 || len(n.Outputs) != 1 {
		return 0, 0, false, false
	}
	if len(n.Inputs) == 3 && !isRowBias(n.Inputs[2], -1) {
		return 0, 0, false, false
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if a == nil || b == nil || !b.IsConst() || a.DType != ir.Float32 || len(a.Shape) == 0 {
		return 0, 0, false, false
	}
	t := b.Const
	if t.DType != ir.Float32 || len(t.Shape) != 2 || t.Shape[0] < 1 || t.Shape[1] < 1 ||
		int64(len(t.F32())) < t.Shape[0]*t.Shape[1] {
		return 0, 0, false, false
	}
	transB = n.Attrs.Int("transpose_b", 0) != 0
	k, nn = int(t.Shape[0]), int(t.Shape[1])
	if transB {
		k, nn = nn, k
	}
	// A's K must match where known (a mismatched MatMul keeps its own error).
	ka := a.Shape[len(a.Shape)-1]
	if len(a.Shape) >= 2 && n.Attrs.Int("transpose_a", 0) != 0 {
		ka = a.Shape[len(a.Shape)-2]
	}
	if ka >= 0 && int(ka) != k {
		return 0, 0, false, false
	}
	return k, nn, transB, true
}

// dropUnusedConsts removes the consts in cand that no top-level node reads
// and that are not graph outputs; it returns how many were kept.
func dropUnusedConsts(g *ir.Graph, cand map[*ir.Value]bool) int {
	used := map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			used[v] = true
		}
	}
	for _, v := range g.Outputs {
		used[v] = true
	}
	kept := 0
	consts := g.Consts[:0]
	for _, v := range g.Consts {
		if cand[v] && !used[v] {
			continue
		}
		if cand[v] {
			kept++
		}
		consts = append(consts, v)
	}
	clear(g.Consts[len(consts):])
	g.Consts = consts
	return kept
}
