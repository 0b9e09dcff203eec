package elementwise

// Float32 ReduceSum and ReduceMean in onnxruntime's order of operations.
// A model quantized after a reduction (a global average feeding
// DynamicQuantizeLinear: squeeze-excite blocks, text detectors) amplifies
// one ulp of difference into a different quantization level, so these
// sums are not "more accurate" (float64) but the same float32 additions
// onnxruntime's CPU kernels make (reduction_ops.h, Eigen 3.4's redux):
//
//   - reducing trailing dims (FastReduceKR): each row is summed like
//     Eigen's vectorised redux over SSE packets of 4 floats: the elements
//     before the first 16-byte-aligned one (counted from the tensor's
//     start, as onnxruntime's buffers are aligned) are held back; two
//     packet accumulators take alternate packets, are added, take one more
//     packet if one is left, and are reduced as (p0+p2)+(p1+p3); then the
//     held-back head and the tail are added one by one. Rows shorter than
//     a packet after the head are summed left to right.
//   - the mean divides by the count (not a multiply by its reciprocal).
//
// Rows longer than ortOrderMaxRow are summed in float64 instead: float32
// accumulation drifts there (0.4% over 4M elements, as onnxruntime's does);
// no model reduces such rows before a quantizer.
//
// The fused kernels sum such rows with the same C function
// (gk_ort_sum_row_f32, internal/runtime/cpuisa/gk_ort_math.h), so a fused
// ReduceMean keeps these bits. GlobalAveragePool is an op of its own
// (ops/nn/globalpool.go: MLAS's pooling order). Not matched yet: reducing
// leading or middle dims (onnxruntime's FastReduceRK/KRK, a ones-vector
// GEMM for KRK); those accumulate in float64.
//
// Checked bit-exact against onnxruntime 1.30 (ort_sum_test.go has the
// values; scripts/realmodels checks the models).

const ortOrderMaxRow = 1 << 16

// goSumRowsF32 is gk_sum_rows_f32 (fast_cgo.go) in Go, the same additions.
func goSumRowsF32(d, s []float32, rows, n, off0 int, mean bool) {
	for r := 0; r < rows; r++ {
		x := s[r*n : r*n+n]
		start := (4 - ((off0 + r*n) & 3)) & 3
		start = min(start, n)
		m := n - start
		a1, a2 := m/4*4, m/8*8
		var res float32
		if a1 == 0 {
			res = x[0]
			for i := 1; i < n; i++ {
				res += x[i]
			}
		} else {
			y := x[start:]
			var p0, p1 [4]float32
			copy(p0[:], y[:4])
			if a1 > 4 {
				copy(p1[:], y[4:8])
				for i := 8; i < a2; i += 8 {
					for j := 0; j < 4; j++ {
						p0[j] += y[i+j]
						p1[j] += y[i+4+j]
					}
				}
				for j := 0; j < 4; j++ {
					p0[j] += p1[j]
				}
				if a1 > a2 {
					for j := 0; j < 4; j++ {
						p0[j] += y[a2+j]
					}
				}
			}
			res = float32(p0[0]+p0[2]) + float32(p0[1]+p0[3])
			for i := 0; i < start; i++ {
				res += x[i]
			}
			for i := start + a1; i < n; i++ {
				res += x[i]
			}
		}
		if mean {
			res /= float32(n)
		}
		d[r] = res
	}
}

// goSumMidF32 is gk_sum_mid_f32 in Go: float64 accumulation.
func goSumMidF32(d, s []float32, outer, k, inner int, mean bool) {
	acc := make([]float64, inner)
	for o := 0; o < outer; o++ {
		clear(acc)
		for r := 0; r < k; r++ {
			for j, x := range s[(o*k+r)*inner : (o*k+r+1)*inner] {
				acc[j] += float64(x)
			}
		}
		for j, v := range acc {
			if mean {
				v /= float64(k)
			}
			d[o*inner+j] = float32(v)
		}
	}
}
