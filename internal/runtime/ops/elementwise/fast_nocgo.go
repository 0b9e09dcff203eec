//go:build !cgo

package elementwise

func f32UnaryParam(op int, d, s []float32, a, b float32)            { goUnaryParamF32(op, d, s, a, b) }
func f32Binary(op int, d, a []float32, sa int, b []float32, sb int) { goBinaryF32(op, d, a, sa, b, sb) }
func f32Unary(op int, d, s []float32)                               { goUnaryF32(op, d, s) }
func f32BinaryRows(op int, d, a, b []float32, aFull bool, rows, n int) {
	goBinaryRowsF32(op, d, a, b, aFull, rows, n)
}
func f32SumRows(d, s []float32, rows, n, off0 int, mean bool) {
	goSumRowsF32(d, s, rows, n, off0, mean)
}
func f32SumMid(d, s []float32, outer, k, inner int, mean bool) {
	goSumMidF32(d, s, outer, k, inner, mean)
}
func f32SoftmaxRows(d, s []float32, rows, n int, logsm bool)                     { goSoftmaxRowsF32(d, s, rows, n, logsm) }
func f32ArgBlock(d []int64, s []float32, k, inner, w int, isMax, last bool) bool { return false }
