package ir

// Fused activations (MindSpore's ActivationType, mindapi/base/types.h) on ops
// that apply one after their own result: Conv2D's attribute AttrActivation,
// set by anf_fusion.ConvActivationFusion (RELU, RELU6: the two MindSpore
// Lite's convolution kernels apply, written as Conv2DFusion's
// activation_type) and anf_fusion.ConvSwishActivationFusion (SIGMOID, TANH,
// HSWISH, SWISH: applied by this runtime's convolution epilogue; the MindIR
// writer writes them as Conv2DFusion then an Activation node, which is what
// MindSpore Lite computes); MatMul's, set by anf_fusion.MatMulActivationFusion
// (RELU, RELU6 only, written as MatMulFusion's activation_type). Any other
// value is refused by the runtime and the writer.
const (
	AttrActivation = "activation_type"

	ActNone    = 0  // NO_ACTIVATION
	ActReLU    = 1  // RELU: max(x, 0)
	ActSigmoid = 2  // SIGMOID: 1/(1+exp(-x))
	ActReLU6   = 3  // RELU6: min(max(x, 0), 6)
	ActTanh    = 10 // TANH
	ActHSwish  = 12 // HSWISH: x*min(max(x+3, 0), 6)/6 (ONNX HardSwish)
	ActSwish   = 18 // SWISH: x*sigmoid(x) (SiLU)
)

// FusedActivation returns n's activation_type (ActNone when absent) and
// whether it is one this converter applies.
func FusedActivation(n *Node) (int64, bool) {
	a := n.Attrs.Int(AttrActivation, ActNone)
	return a, a == ActNone || a == ActReLU || a == ActReLU6 || IsEpilogueActivation(a)
}

// IsEpilogueActivation says whether a is one of the fused activations that
// MindSpore Lite's convolution kernels do not apply (SIGMOID, TANH, HSWISH,
// SWISH): this runtime applies them in the conv epilogue, and a MindIR file
// carries them as an Activation node after the Conv2DFusion.
func IsEpilogueActivation(a int64) bool {
	return a == ActSigmoid || a == ActTanh || a == ActHSwish || a == ActSwish
}

// ConvResidualInput is the index of Conv2D's optional residual input z: a
// tensor of exactly the conv output's shape and dtype added to the output
// after the bias and before the activation (y = act(conv(x, w) + b + z),
// onnxruntime FusedConv's Z). The bias before it may then be absent (nil).
const ConvResidualInput = 3

// ConvResidual returns the residual input of Conv2D node n, nil when none.
func ConvResidual(n *Node) *Value {
	return n.Input(ConvResidualInput)
}
