package fusion

// MatMulActivationFusion (converter_lite's matmul_activation_fusion.cc):
// a float32 MatMul, with or without the bias MatMulAddFusion folded into
// it, whose output only a ReLU, ReLU6, Clip(0) or Clip(0, 6) reads becomes
// one MatMul with activation_type RELU or RELU6 (ir.AttrActivation), the
// two converter_lite's pass accepts and MindSpore Lite's MatMul kernels
// apply after the bias. The CPU runtime's packed GEMM applies it to each
// block of C right after computing it (while in L1), the unpacked MatMul
// after the product; the MindIR writer writes it as MatMulFusion's
// activation_type.
//
// converter_lite replaces the activation with the MatMul without looking at
// the MatMul's other readers, which would apply the activation for them
// too; here, as in ConvActivationFusion, a MatMul whose output another node
// reads or that is a graph output is left alone. A MatMul that already has
// an activation is too.
func runMatMulActivationFusion(st *state) (bool, string, error) {
	return runFold(st, opTails(st.g, "MatMul", false), "MatMul", "MatMul + ReLU/ReLU6", foldActivation)
}
