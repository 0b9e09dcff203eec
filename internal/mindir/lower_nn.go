package mindir

import (
	"math"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// NN, shape and data-movement ops: lowering (IR -> MindSpore primitive) and
// lifting (the primitive -> IR).
//
// Each lowering writes the primitive converter_lite's ONNX parser writes for
// the ONNX op the IR op stands for (mindspore-lite/tools/converter/parser/
// onnx/onnx_*_parser.cc, after onnx_inputs_adjust.cc / onnx_pad_adjust.cc
// moved attributes to inputs), with MindSpore's attribute names and MindIR
// types (ops/infer/cxx_api/*.cc, ops/op_def/op_name.h; enums of
// mindapi/base/types.h and format.h written as INT64, bools as BOOL, floats
// as FLOAT, int vectors as TUPLE of INT64). An instance the primitive cannot
// express exactly returns errNoPrimitive (then Custom "gkconv.<op>"); every
// lowering also refuses IR attributes it does not know, so nothing is lost.
// A form whose input count the primitive schema (what `converter check`
// enforces) does not allow falls back too (schemaGated), or, for Slice, Pad
// and Trilu, is written in another form the schema has.
// The lift of each primitive gives back the IR node; constant inputs that
// stay inputs are passed through as they are (same name, same dtype).
// This file holds the tables, MindSpore enums and shared helpers; the
// lowerings are in lower_conv.go, lower_norm.go, lower_matmul.go and
// lower_shape.go, the lifts in lift_nn.go and lift_shape.go.

var lowerNNTable = schemaGated(map[string]lowerFunc{
	"Conv2D":            lowerConv2D,
	"Conv2DTranspose":   lowerConvTranspose,
	"AvgPool":           lowerPool,
	"GlobalAveragePool": lowerGlobalAvgPool,
	"MaxPool":           lowerPool,
	"BatchNorm":         lowerBatchNorm,
	"InstanceNorm":      lowerInstanceNorm,
	"LayerNorm":         lowerLayerNorm,
	"Softmax":           lowerSoftmax,
	"LogSoftmax":        lowerLogSoftmax,
	"MatMul":            lowerMatMul,
	"Einsum":            lowerEinsum,
	"Transpose":         lowerTranspose,
	"Concat":            lowerConcat,
	"Split":             lowerSplit,
	"Slice":             lowerSlice,
	"Gather":            lowerGather,
	"GatherD":           lowerGatherD,
	"Pad":               lowerPad,
	"Tile":              lowerTile,
	"DepthToSpace":      lowerDepthToSpace,
	"SpaceToDepth":      lowerSpaceToDepth,
	"Reshape":           lowerReshape,
	"Flatten":           lowerFlatten,
	"Squeeze":           lowerSqueeze,
	"Unsqueeze":         lowerUnsqueeze,
	"Resize":            lowerResize,
	"TopK":              lowerTopK,
	"CumSum":            lowerCumSum,
	"Range":             lowerRange,
	"Shape":             lowerShape,
	"Size":              lowerSize,
	"ConstantOfShape":   lowerConstantOfShape,
	"Trilu":             lowerTrilu,
})

// schemaGated wraps every lowering so that a node whose input count the
// primitive schema (schema.go, generated from MindSpore's sources) does not
// allow is written as Custom instead: `converter check` applies the same
// rule (internal/mindir/check, checkInputCount), and converter_lite's Lite forms
// with extra inputs (a bias on Conv2DFusion/MatMulFusion, N tensors on
// Concat/Einsum, LayerNormFusion without beta, Conv2dTransposeFusion
// without input_sizes) are outside the MindSpore rows the schema has. Once
// the schema admits such a form, the lowering writes it unchanged.
func schemaGated(t map[string]lowerFunc) map[string]lowerFunc {
	for op, f := range t {
		t[op] = func(c *lowerCtx) (*msNode, error) {
			m, err := f(c)
			if err == nil && !schemaInputsOK(m.prim, m.nodeInputs()) {
				return nil, errNoPrimitive
			}
			return m, err
		}
	}
	return t
}

// schemaInputsOK reports whether the schema row of prim allows n node
// inputs (primitive-init arguments as attributes, this writer's
// convention); a primitive without a row or without listed inputs is not
// checked.
func schemaInputsOK(prim string, n int) bool {
	s, ok := LookupPrim(prim)
	if !ok || s == nil {
		return true
	}
	ins := s.Inputs()
	if len(ins) == 0 {
		return true
	}
	req := 0
	for _, a := range ins {
		if !a.Optional() {
			req++
		}
	}
	return n >= req && n <= len(ins)
}

// MindSpore enum values (mindapi/base/types.h, format.h) and converter_lite's
// FmkType (include/registry/converter_context.h).
const (
	msPadModePad   = 0 // PadMode::PAD
	msPadModeSame  = 1 // PadMode::SAME (the odd padding at the end: ONNX SAME_UPPER)
	msPadModeValid = 2 // PadMode::VALID

	msFormatNCHW = 0 // Format::NCHW

	msActNone  = 0 // ActivationType::NO_ACTIVATION
	msActReLU  = 1 // ActivationType::RELU
	msActReLU6 = 3 // ActivationType::RELU6

	msRoundFloor = 0 // RoundMode::FLOOR
	msRoundCeil  = 1 // RoundMode::CEIL

	msPaddingConstant  = 0 // PaddingMode::CONSTANT
	msPaddingReflect   = 1 // PaddingMode::REFLECT
	msPaddingSymmetric = 2 // PaddingMode::SYMMETRIC

	fmkTypeOnnx = 2 // converter::FmkType::kFmkTypeOnnx
)

// Resize enums: ResizeMethod, CoordinateTransformMode, NearestMode.
var (
	resizeMethods = map[string]int64{"linear": 0, "nearest": 1, "cubic": 2}
	resizeCoords  = map[string]int64{"asymmetric": 0, "align_corners": 1, "half_pixel": 2}
	resizeNearest = map[string]int64{"round_prefer_floor": 1, "round_prefer_ceil": 2, "floor": 3, "ceil": 4}
)

// aInt32 is an INT32 attribute: MakeValue of a C++ int (converter_lite's
// `int fmk_type`, Reshape's allowzero, Range's d_type).
func aInt32(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_INT32.Enum(), I: ptr(v)}
}

// attrsOnly reports whether every IR attribute of n is one of names.
func attrsOnly(n *ir.Node, names ...string) bool {
	for k := range n.Attrs {
		found := false
		for _, x := range names {
			if k == x {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// emptyValue reports whether v is absent or an empty 1-D tensor (ONNX
// exporters pass empty tensors for absent optional inputs).
func emptyValue(v *ir.Value) bool {
	return v == nil || (len(v.Shape) == 1 && v.Shape[0] == 0)
}

// inputsUpTo returns the node's inputs up to the last present one, refusing
// a missing one in the middle (MindSpore's None only stands for optional
// trailing arguments of these primitives).
func inputsUpTo(n *ir.Node, max int) ([]*ir.Value, bool) {
	ins := n.Inputs
	for len(ins) > 0 && ins[len(ins)-1] == nil {
		ins = ins[:len(ins)-1]
	}
	if len(ins) > max {
		return nil, false
	}
	for _, v := range ins {
		if v == nil {
			return nil, false
		}
	}
	return ins, true
}

func i32Tensor(shape []int64, v ...int64) (*ir.Tensor, bool) {
	t := ir.NewTensor(ir.Int32, shape)
	for i, x := range v {
		if x < math.MinInt32 || x > math.MaxInt32 {
			return nil, false
		}
		t.I32()[i] = int32(x)
	}
	return t, true
}
