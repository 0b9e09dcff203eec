package mindir

import (
	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// Tensor quant_params: the integer weight a DequantizeLinear reads (what
// WEIGHT_QUANT writes) also carries its scales and zero points the way
// converter_lite stores a quantized tensor's (quant::ConvertQuantParamTTo
// QuantizationParam): one QuantParamProto "linear_quant" whose attributes
// are LISTs with one element per channel (scale_list, zero_point_list,
// min_list, max_list, var_corr_list, mean_corr_list, num_bit_list,
// narrow_range_list, dst_dtype_list, round_type_list, multiplier_list);
// MindSpore's loader puts them on the tensor (load_model.cc
// GenerateQuantizationParam). The DequantizeLinear node, or its Cast/Mul
// pieces in the framework form, still carries the meaning.

// dequantizedConsts maps each constant integer tensor a DequantizeLinear of
// constant scale (and zero point) reads to that node.
func dequantizedConsts(g *ir.Graph) map[*ir.Value]*ir.Node {
	m := map[*ir.Value]*ir.Node{}
	for _, n := range g.Nodes {
		if n.Op != "DequantizeLinear" || n.Attrs.Int("block_size", 0) != 0 {
			continue
		}
		x, s, zp := n.Input(0), n.Input(1), n.Input(2)
		if x == nil || x.Const == nil || s == nil || s.Const == nil || (zp != nil && zp.Const == nil) {
			continue
		}
		if _, _, ok := ir.QuantIntRange(x.DType); !ok || len(s.Shape) > 1 {
			continue
		}
		if _, dup := m[x]; !dup {
			m[x] = n
		}
	}
	return m
}

// linearQuantParams is the QuantParamProto of the integer tensor dq reads.
func linearQuantParams(dq *ir.Node) []*pb.TensorProto_QuantParamProto {
	x, s, zp := dq.Input(0), dq.Input(1), dq.Input(2)
	scales, err := s.Const.Float64s()
	if err != nil || len(scales) == 0 {
		return nil
	}
	zps := make([]float64, len(scales))
	if zp != nil {
		z, err := zp.Const.Float64s()
		if err != nil || len(z) != len(scales) {
			return nil
		}
		zps = z
	}
	lo, hi, _ := ir.QuantIntRange(x.DType)
	bits := int64(8 * x.DType.Size())
	narrow := false
	if x.DType.IsSigned() {
		// A symmetric range that leaves out the most negative value
		// (WEIGHT_QUANT's [-qmax, qmax]) is converter_lite's narrow range.
		narrow = true
		if vs, err := x.Const.Int64s(); err == nil {
			for _, v := range vs {
				if v == lo {
					narrow = false
					break
				}
			}
		}
	}
	list := func(name string, typ pb.AttributeProto_AttributeType, n int, elem func(i int, a *pb.AttributeProto)) *pb.AttributeProto {
		p := &pb.AttributeProto{Name: ptr(name), Type: pb.AttributeProto_LIST.Enum()}
		for i := 0; i < n; i++ {
			a := &pb.AttributeProto{Type: typ.Enum()}
			elem(i, a)
			p.Values = append(p.Values, a)
		}
		return p
	}
	n := len(scales)
	dbl := func(f func(i int) float64) func(int, *pb.AttributeProto) {
		return func(i int, a *pb.AttributeProto) { a.Doubles = []float64{f(i)} }
	}
	i32 := func(f func(i int) int64) func(int, *pb.AttributeProto) {
		return func(i int, a *pb.AttributeProto) { a.Ints = []int64{f(i)} }
	}
	f32 := func(v float32) func(int, *pb.AttributeProto) {
		return func(_ int, a *pb.AttributeProto) { a.Floats = []float32{v} }
	}
	qp := &pb.TensorProto_QuantParamProto{QuantAlgoName: ptr("linear_quant")}
	qp.Attribute = []*pb.AttributeProto{
		list("scale_list", pb.AttributeProto_DOUBLE, n, dbl(func(i int) float64 { return scales[i] })),
		list("zero_point_list", pb.AttributeProto_INT32, n, i32(func(i int) int64 { return int64(zps[i]) })),
		list("min_list", pb.AttributeProto_DOUBLE, n, dbl(func(i int) float64 { return (float64(lo) - zps[i]) * scales[i] })),
		list("max_list", pb.AttributeProto_DOUBLE, n, dbl(func(i int) float64 { return (float64(hi) - zps[i]) * scales[i] })),
		list("var_corr_list", pb.AttributeProto_FLOAT, n, f32(1)),
		list("mean_corr_list", pb.AttributeProto_FLOAT, n, f32(0)),
		list("num_bit_list", pb.AttributeProto_INT32, n, i32(func(int) int64 { return bits })),
		list("narrow_range_list", pb.AttributeProto_BOOL, n, i32(func(int) int64 { return b2i(narrow) })),
		list("dst_dtype_list", pb.AttributeProto_INT32, n, i32(func(int) int64 { return msTypeIDs[x.DType] })),
		list("round_type_list", pb.AttributeProto_INT32, n, i32(func(int) int64 { return 1 })),
		list("multiplier_list", pb.AttributeProto_INT32, n, i32(func(int) int64 { return 1 })),
	}
	return []*pb.TensorProto_QuantParamProto{qp}
}
