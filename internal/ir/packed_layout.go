package ir

// Packed-B layout of the PackedMatMul op (MindSpore Lite's MatmulPackB): a
// constant B[k, n] stored as ceil(n/nr) panels of nr columns, each panel k
// rows of nr floats, [ceil(n/nr)][k][nr], with the columns past n zero. A
// GEMM micro-kernel then reads one contiguous nr-wide row of a panel per k
// step. The conversion pass (internal/fusion) packs, the CPU kernel
// (internal/runtime/ops/nn) consumes; both use these functions.

// OpPackedMatMul is the IR op of a MatMul whose B was packed at conversion time.
const OpPackedMatMul = "PackedMatMul"

// PackNR is the panel width the CPU kernel is tuned for (two AVX-512 vectors).
const PackNR = 32

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
	packBInto(out, b, k, n, nr, transB)
	return out
}

// PackBTensor is PackB into a new 1-D float32 tensor (no intermediate copy:
// weights can be hundreds of MiB).
func PackBTensor(b []float32, k, n, nr int, transB bool) *Tensor {
	t := NewTensor(Float32, []int64{int64(PackedLen(k, n, nr))})
	packBInto(t.F32(), b, k, n, nr, transB)
	return t
}

func packBInto(out, b []float32, k, n, nr int, transB bool) {
	if nr < 1 {
		panic("ir.PackB: panel width must be >= 1")
	}
	if len(b) < k*n {
		panic("ir.PackB: B is shorter than k*n")
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
