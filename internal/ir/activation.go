package ir

// Fused activations (MindSpore's ActivationType, mindapi/base/types.h) on ops
// that apply one after their own result: Conv2D's attribute AttrActivation,
// set by anf_fusion.ConvActivationFusion (internal/fusion) and written as
// Conv2DFusion's activation_type. Only the two types MindSpore Lite's
// convolution kernels apply (and its ConvActivationFusion produces) are
// defined; any other value is refused by the runtime and the writer.
const (
	AttrActivation = "activation_type"

	ActNone  = 0 // NO_ACTIVATION
	ActReLU  = 1 // RELU: max(x, 0)
	ActReLU6 = 3 // RELU6: min(max(x, 0), 6)
)

// FusedActivation returns n's activation_type (ActNone when absent) and
// whether it is one this converter applies.
func FusedActivation(n *Node) (int64, bool) {
	a := n.Attrs.Int(AttrActivation, ActNone)
	return a, a == ActNone || a == ActReLU || a == ActReLU6
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
