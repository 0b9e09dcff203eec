package fusion

// ConvActivationFusion (converter_lite's conv_activation_fusion.cc): Conv
// then ReLU, ReLU6 or Clip(0, 6) -> activation_type RELU/RELU6 on the conv
// (the only two converter_lite's pass and MindSpore Lite's convolution
// kernels take). The fold itself, foldActivation, is MatMulActivationFusion's
// too (conv_fold.go).
func runConvActivationFusion(st *state) (bool, string, error) {
	return runConvFold(st, "ReLU/ReLU6", foldActivation)
}
