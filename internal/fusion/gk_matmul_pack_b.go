package fusion

import (
	"fmt"

	"gkconv/internal/ir"
)

// matmul_pack_b (postprocess, level 2, CPU): MindSpore Lite's MatmulPackB,
// as a mark. Every MatMul that ir.PackableMatMul accepts (float32, constant
// rank-2 B with transpose_b either way, at most a constant row bias folded in
// by preprocess.matmul_bias_fold) gets the attribute pack_b = 1
// (ir.AttrPackB: an int attribute, a MindSpore bool). The node stays a plain
// MatMul with B in MindSpore's layout, so the file holds no private op or
// packed weight; the CPU runtime packs a marked MatMul's B once at model load
// (ir.PackB panels) and runs it on its packed-B GEMM, dropping the mapped
// original's pages. Unmarked MatMuls (an --optimize=none model, this pass
// disabled) run on OpenBLAS as before, which keeps the O0-vs-O2 comparison.
func runMatMulPackB(st *state) (bool, string, error) {
	type key struct {
		v      *ir.Value
		transB bool
	}
	weights := map[key]bool{}
	var marked, floats int
	for _, n := range st.g.Nodes {
		k, nn, transB, ok := ir.PackableMatMul(n)
		if !ok {
			continue
		}
		if n.Attrs == nil {
			n.Attrs = ir.Attrs{}
		}
		n.Attrs[ir.AttrPackB] = ir.IntAttr(1)
		marked++
		if pk := (key{n.Inputs[1], transB}); !weights[pk] {
			weights[pk] = true
			floats += ir.PackedLen(k, nn, ir.PackNR)
		}
	}
	if marked == 0 {
		return false, "no MatMul with a constant float32 B", nil
	}
	return true, fmt.Sprintf("%d MatMul marked %s=1, %d B to pack at load (%.1f MiB)",
		marked, ir.AttrPackB, len(weights), float64(floats)*4/(1<<20)), nil
}
