package ir

// Packed-B layout of the CPU GEMM (MindSpore Lite's MatmulPackB): a constant
// B[k, n] stored as ceil(n/nr) panels of nr columns, each panel k rows of nr
// floats, [ceil(n/nr)][k][nr], with the columns past n zero. A GEMM
// micro-kernel then reads one contiguous nr-wide row of a panel per k step.
// Packed weights never appear in a model file: files keep MindSpore's layout
// (MatMul with B [k, n], or [n, k] with transpose_b), and the CPU runtime
// (internal/runtime/ops/nn) packs the MatMuls marked with AttrPackB once, at
// session preparation. Packed 2-D convs (conv_packed.go) use the same layout.

// AttrPackB is the MatMul attribute that postprocess.matmul_pack_b sets: an
// int attribute (a MindSpore bool), 1 = "pack B at model load and run the
// packed-B GEMM"; absent or 0 = run MatMul as it is. It is a hint: the
// runtime packs only MatMuls that PackableMatMul accepts, and a MatMul
// carrying it computes the same function as one without it.
const AttrPackB = "pack_b"

// PackNR is the panel width the CPU kernel is tuned for (two AVX-512 vectors).
const PackNR = 32

// PackBMarked reports whether n is a MatMul marked with AttrPackB.
func PackBMarked(n *Node) bool {
	return n.Op == "MatMul" && n.Attrs.Int(AttrPackB, 0) != 0
}

// PackableMatMul reports whether n is a float32 MatMul that can run on the
// packed-B GEMM with B packed once: B a constant float32 rank-2 tensor, A
// float32 of rank >= 1 whose K (where known) matches B's, at most a third
// input that is a constant row bias (IsRowBias, from
// preprocess.matmul_bias_fold). It returns k and n of B after transpose_b.
// postprocess.matmul_pack_b marks exactly these MatMuls, and the runtime
// packs exactly the marked ones that still pass it; n is a top-level node.
func PackableMatMul(n *Node) (k, nn int, transB, ok bool) {
	if n.Op != "MatMul" || len(n.Inputs) < 2 || len(n.Inputs) > 3 || len(n.Outputs) != 1 {
		return 0, 0, false, false
	}
	if len(n.Inputs) == 3 && !IsRowBias(n.Inputs[2], -1) {
		return 0, 0, false, false
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if a == nil || b == nil || !b.IsConst() || a.DType != Float32 || len(a.Shape) == 0 {
		return 0, 0, false, false
	}
	t := b.Const
	if t.DType != Float32 || len(t.Shape) != 2 || t.Shape[0] < 1 || t.Shape[1] < 1 ||
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

// IsRowBias reports whether v is a float32 constant of n elements laid along
// the last axis ([n] or [1, ..., 1, n]): one value per output column. n < 0
// accepts any length.
func IsRowBias(v *Value, n int64) bool {
	if !v.IsConst() || v.Const.DType != Float32 || len(v.Const.Shape) == 0 {
		return false
	}
	s := v.Const.Shape
	for _, d := range s[:len(s)-1] {
		if d != 1 {
			return false
		}
	}
	return s[len(s)-1] >= 1 && (n < 0 || s[len(s)-1] == n)
}

// PackedLen is the number of floats of B[k, n] packed in panels of nr columns.
func PackedLen(k, n, nr int) int {
	if k <= 0 || n <= 0 || nr <= 0 {
		return 0
	}
	return (n + nr - 1) / nr * k * nr
}

// PackB packs B into panels of nr columns. B is row-major [k, n], or with
// transB row-major [n, k] (B^T stored, as MatMul transpose_b=1 reads it).
// It panics if b is shorter than k*n or nr < 1 (programming errors).
func PackB(b []float32, k, n, nr int, transB bool) []float32 {
	out := make([]float32, PackedLen(k, n, nr))
	PackBInto(out, b, k, n, nr, transB)
	return out
}

// PackBInto is PackB into out, which holds PackedLen(k, n, nr) zeroed floats
// (memory the caller chose, such as an anonymous mapping).
func PackBInto(out, b []float32, k, n, nr int, transB bool) {
	if nr < 1 {
		panic("ir.PackB: panel width must be >= 1")
	}
	if len(b) < k*n {
		panic("ir.PackB: B is shorter than k*n")
	}
	if len(out) < PackedLen(k, n, nr) {
		panic("ir.PackB: out is shorter than PackedLen")
	}
	for j0, p := 0, 0; j0 < n; j0, p = j0+nr, p+1 {
		cols := min(nr, n-j0)
		panel := out[p*k*nr : (p+1)*k*nr]
		if !transB {
			for q := 0; q < k; q++ {
				copy(panel[q*nr:q*nr+cols], b[q*n+j0:q*n+j0+cols])
			}
			continue
		}
		for j := 0; j < cols; j++ {
			col := b[(j0+j)*k : (j0+j+1)*k]
			for q, v := range col {
				panel[q*nr+j] = v
			}
		}
	}
}
