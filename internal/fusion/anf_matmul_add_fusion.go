package fusion

// MatMulAddFusion (converter_lite's matmul_add_fusion.cc): Add(MatMul(A, B),
// C) with a constant row bias C -> MatMul(A, B, C). It is the rewrite of the
// graph-kernel table's preprocess.matmul_bias_fold (gk_matmul_bias_fold.go),
// which MindSpore applies as a simplify rule; here it also runs on every
// conversion, with the converter_lite fusion passes, whatever opt_level says.
func runMatMulAddFusion(st *state) (bool, string, error) {
	return runMatMulBiasFold(st)
}
