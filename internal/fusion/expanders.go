package fusion

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// An expander rewrites one complex op into basic ops
// (mindspore/ccsrc/backend/common/graph_kernel/core/graph_kernel_expander.cc,
// mindspore-lite/tools/graph_kernel/converter/graph_kernel_expander_lite.cc). It
// returns the body values of the node's outputs, in order; it may return
// fewer than the node has when the rest are optional and unused.
type expander func(b *Builder, n *ir.Node, be akgcfg.Backend) ([]*ir.Value, error)

var (
	cpu    = akgcfg.CPU
	gpu    = akgcfg.GPU
	ascend = akgcfg.Ascend
)

// expanders holds every op that can be expanded, each named once: its
// expander and its entries in the default expand list (the backends, 0 for
// all, and the fusion_ops_level from which it is on): the seed's appendix 1
// for ops the IR has, plus converter_lite's InitOpList (Activation =
// ReLU/Sigmoid at L0 on CPU; Softmax, LayerNorm, InstanceNorm,
// FusedBatchNorm and ReduceFusion at L1 on CPU). Ops without entries expand
// only when enable_expand_ops names them.
var expanders = map[string]expanderDef{
	"GeLU":              {expandGeLU, []listEntry{{0, 0}}},
	"Square":            {expandSquare, []listEntry{{0, 0}}},
	"Tile":              {expandTile, []listEntry{{0, 0}}},
	"AddN":              {expandAddN, []listEntry{{0, 0}}},
	"BiasAdd":           {expandBiasAdd, []listEntry{{0, 0}}},
	"ReLU":              {expandReLU, []listEntry{{0, 0}}},
	"SquaredDifference": {expandSquaredDifference, []listEntry{{gpu | ascend, 0}}},
	"ReduceMean":        {expandReduceMean, []listEntry{{gpu | ascend, 0}, {cpu, 1}}},
	// Our addition (MindSpore's ONNX GlobalAveragePool is AvgPoolFusion,
	// not clustered): on GPU and Ascend it expands as the ReduceMean it was
	// read as before; on CPU it stays one op, unfused, as converter_lite
	// leaves AvgPoolFusion, and the runtime sums it in MLAS's order.
	"GlobalAveragePool": {expandGlobalAvgPool, []listEntry{{gpu | ascend, 0}}},
	// Not on CPU, unlike MindSpore: there Sigmoid stays one op in the
	// cluster and the kernel computes onnxruntime's logistic, so fusion
	// keeps the bits of the unfused model (1/(1+exp(-x)) is 1-2 ulp off)
	"Sigmoid":      {expandSigmoid, []listEntry{{gpu | ascend, 0}}},
	"Softplus":     {expandSoftplus, []listEntry{{cpu | ascend, 0}}},
	"LayerNorm":    {expandLayerNorm, []listEntry{{gpu, 0}, {cpu, 1}, {ascend, 1}}},
	"LogSoftmax":   {expandLogSoftmax, []listEntry{{gpu, 0}}},
	"Softmax":      {expandSoftmax, []listEntry{{gpu, 0}, {cpu, 1}}},
	"FastGeLU":     {expandFastGeLU, []listEntry{{ascend, 0}}},
	"HSigmoid":     {expandHSigmoid, []listEntry{{ascend, 0}}},
	"HSwish":       {expandHSwish, []listEntry{{ascend, 0}}},
	"Tanh":         {expandTanh, []listEntry{{ascend, 0}}},
	"Cosh":         {expandCosh, []listEntry{{ascend, 0}}},
	"Sinh":         {expandSinh, []listEntry{{ascend, 0}}},
	"LeakyReLU":    {expandLeakyReLU, []listEntry{{ascend, 0}}},
	"Elu":          {expandElu, []listEntry{{ascend, 0}}},
	"InstanceNorm": {expandInstanceNorm, []listEntry{{cpu, 1}}},
	"BatchNorm":    {expandBatchNorm, []listEntry{{cpu, 1}}},
	// Erf is our addition, not MindSpore's: MindSpore's CPU cluster list has
	// no Erf, so an ONNX erf-GeLU (Div->Erf->Add->Mul->Mul) would split at
	// the Erf. Here Erf is clustered whole on CPU instead (gk_cluster.go) and
	// the kernel computes onnxruntime's erf, so the fused GeLU keeps the
	// bits of the unfused model; enable_expand_ops=Erf expands it into basic
	// ops (expand_erf.go, its own polynomial, within 1e-7).
	"Erf":        {expandErf, nil},
	"Softsign":   {expandSoftsign, []listEntry{{ascend, 1}}},
	"Mish":       {expandMish, nil},
	"ReLU6":      {expandReLU6, nil},
	"Clip":       {expandClip, nil},
	"Rsqrt":      {expandRsqrt, nil},
	"Reciprocal": {expandReciprocal, nil},
}

type expanderDef struct {
	expand   expander
	defaults []listEntry
}

// listEntry is an op's place in a default op list: on the backends (0 =
// all) from fusion_ops_level level up.
type listEntry struct {
	backends akgcfg.Device
	level    int
}

// expandTable is the default expand list, from expanders.
func expandTable() []akgcfg.OpEntry {
	var t []akgcfg.OpEntry
	for _, op := range slices.Sorted(maps.Keys(expanders)) {
		for _, e := range expanders[op].defaults {
			t = append(t, akgcfg.OpEntry{Backends: e.backends, Level: e.level, Name: op})
		}
	}
	return t
}

func one(v *ir.Value, b *Builder) ([]*ir.Value, error) { return []*ir.Value{v}, b.Err() }

const (
	geluC        = 0.044714998453855515
	sqrt2OverPi  = 0.7978845608028654
	geluExpCoeff = 1.5957691216057308
)

// expandGeLU: approximate=none (ONNX default) is the exact erf form; the
// tanh approximation is MindSpore's gelu.cc: tanh form on CPU/GPU, the
// sigmoid-like exp form on Ascend. In the erf form GPU and Ascend keep the
// Erf op (their kernel generators have it, and GPU clusters it); the CPU
// cluster list has no Erf, so there it becomes ErfApprox's basic ops.
func expandGeLU(b *Builder, n *ir.Node, be akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	if n.Attrs.String("approximate", "none") == "none" {
		// 0.5*x*(1+erf(x/sqrt2))
		u := b.Mul(x, b.Const(1/math.Sqrt2))
		var e *ir.Value
		if be.Device == akgcfg.CPU {
			e = b.ErfApprox(u)
		} else {
			e = b.Erf(u)
		}
		return one(b.Mul(b.Mul(x, b.Const(0.5)), b.Add(e, b.Const(1))), b)
	}
	x3 := b.Mul(b.Mul(x, x), x)
	inner := b.Add(x, b.Mul(x3, b.Const(geluC)))
	if be.Device == akgcfg.Ascend {
		// x / (1 + exp(-1.5957691216057308*(x + c*x^3)))
		e := b.Exp(b.Mul(inner, b.Const(-geluExpCoeff)))
		return one(b.Div(x, b.Add(e, b.Const(1))), b)
	}
	t := b.Tanh(b.Mul(inner, b.Const(sqrt2OverPi)))
	return one(b.Mul(b.Mul(x, b.Const(0.5)), b.Add(t, b.Const(1))), b)
}

// expandFastGeLU: x*exp(0.5*v*(x-|x|)) / (exp(-v*|x|) + 1), v = 1.702.
func expandFastGeLU(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	const v = 1.702
	x := b.In(0)
	ax := b.Abs(x)
	num := b.Mul(x, b.Exp(b.Mul(b.Sub(x, ax), b.Const(0.5*v))))
	den := b.Add(b.Exp(b.Mul(ax, b.Const(-v))), b.Const(1))
	return one(b.Div(num, den), b)
}

// normAxes turns a begin axis into [axis, rank).
func tailAxes(axis int64, rank int) ([]int64, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return nil, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	var out []int64
	for i := axis; i < int64(rank); i++ {
		out = append(out, i)
	}
	return out, nil
}

func prodDims(shape []int64, axes []int64) int64 {
	p := int64(1)
	for _, a := range axes {
		p *= shape[a]
	}
	return p
}

// expandLayerNorm (layernorm.cc): mean = sum(x)/n; d = x-mean;
// var = sum(d*d)/n; y = d*rsqrt(var+eps)*scale + bias. The optional outputs
// are mean and inv_std in stash_type.
func expandLayerNorm(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	axes, err := tailAxes(n.Attrs.Int("axis", -1), len(x.Shape))
	if err != nil {
		return nil, err
	}
	inv := 1 / float64(prodDims(x.Shape, axes))
	mean := b.Mul(b.ReduceSum(x, axes, true), b.Const(inv))
	d := b.Sub(x, mean)
	variance := b.Mul(b.ReduceSum(b.Mul(d, d), axes, true), b.Const(inv))
	rstd := b.Rsqrt(b.Add(variance, b.Const(n.Attrs.Float("epsilon", 1e-5))))
	y := b.Mul(b.Mul(d, rstd), b.In(1))
	if n.Input(2) != nil {
		y = b.Add(y, b.In(2))
	}
	outs := []*ir.Value{y}
	if len(n.Outputs) > 1 {
		stash := ir.DType(n.Attrs.Int("stash_type", int64(ir.Float32)))
		outs = append(outs, b.Cast(mean, stash))
		if len(n.Outputs) > 2 {
			outs = append(outs, b.Cast(rstd, stash))
		}
	}
	return outs, b.Err()
}

func softmaxAxis(n *ir.Node, x *ir.Value) ([]int64, error) {
	axis := n.Attrs.Int("axis", -1)
	r := int64(len(x.Shape))
	if axis < -r || axis >= r {
		return nil, fmt.Errorf("axis %d out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += r
	}
	return []int64{axis}, nil
}

// expandSoftmax (softmax.cc): e = exp(x - max(x)); y = e / sum(e).
func expandSoftmax(b *Builder, n *ir.Node, be akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	axes, err := softmaxAxis(n, x)
	if err != nil {
		return nil, err
	}
	e := b.Exp(b.Sub(x, b.ReduceMax(x, axes, true)))
	if be.Device == akgcfg.CPU {
		// onnxruntime's CPU Softmax (MlasComputeSoftmax) scales by the
		// reciprocal of the sum: one division per row, not per element
		return one(b.Mul(e, b.Div(b.Const(1), b.ReduceSum(e, axes, true))), b)
	}
	return one(b.Div(e, b.ReduceSum(e, axes, true)), b)
}

// expandLogSoftmax: s = x - max(x); y = s - log(sum(exp(s))).
func expandLogSoftmax(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	axes, err := softmaxAxis(n, x)
	if err != nil {
		return nil, err
	}
	s := b.Sub(x, b.ReduceMax(x, axes, true))
	return one(b.Sub(s, b.Log(b.ReduceSum(b.Exp(s), axes, true))), b)
}

// expandSigmoid (sigmoid.cc): 1 / (1 + exp(-x)).
func expandSigmoid(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	return one(b.Div(b.Const(1), b.Add(b.Exp(b.Neg(x)), b.Const(1))), b)
}

// expandHSigmoid: max(0, min(1, alpha*x + beta)) with ONNX's alpha, beta.
func expandHSigmoid(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	y := b.Add(b.Mul(x, b.Const(n.Attrs.Float("alpha", 0.2))), b.Const(n.Attrs.Float("beta", 0.5)))
	return one(b.Maximum(b.Minimum(y, b.Const(1)), b.Const(0)), b)
}

// expandHSwish: x * min(max(x + 3, 0), 6) / 6.
func expandHSwish(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	r6 := b.Minimum(b.Maximum(b.Add(x, b.Const(3)), b.Const(0)), b.Const(6))
	return one(b.Mul(x, b.Mul(r6, b.Const(1.0/6))), b)
}

// expandMish: x * tanh(log(1 + exp(x))).
func expandMish(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	sp := b.Log(b.Add(b.Exp(x), b.Const(1)))
	return one(b.Mul(x, b.Tanh(sp)), b)
}

// expandSoftplus: log(exp(x) + 1), as ONNX defines it.
func expandSoftplus(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	return one(b.Log(b.Add(b.Exp(x), b.Const(1))), b)
}

// expandSoftsign: x / (1 + |x|).
func expandSoftsign(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	return one(b.Div(x, b.Add(b.Abs(x), b.Const(1))), b)
}

// expandCosh/expandSinh: (e^x ± e^-x) / 2.
func expandCosh(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	return one(b.Mul(b.Add(b.Exp(x), b.Exp(b.Neg(x))), b.Const(0.5)), b)
}

func expandSinh(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	return one(b.Mul(b.Sub(b.Exp(x), b.Exp(b.Neg(x))), b.Const(0.5)), b)
}

// expandLeakyReLU: x > 0 ? x : alpha*x.
func expandLeakyReLU(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	ax := b.Mul(x, b.Const(n.Attrs.Float("alpha", 0.01)))
	return one(b.Select(b.Greater(x, b.Const(0)), x, ax), b)
}

// expandElu: x > 0 ? x : alpha*(exp(x)-1).
func expandElu(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	neg := b.Mul(b.Sub(b.Exp(x), b.Const(1)), b.Const(n.Attrs.Float("alpha", 1)))
	return one(b.Select(b.Greater(x, b.Const(0)), x, neg), b)
}

// expandBiasAdd (nn_ops.cc): reshape the bias to [C, 1...] from the channel
// axis (1 for NCHW, last for NHWC) and add.
func expandBiasAdd(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x, bias := b.In(0), b.In(1)
	rank := len(x.Shape)
	ch := 1
	if f := n.Attrs.String("format", n.Attrs.String("data_format", "NCHW")); f == "NHWC" || rank < 2 {
		ch = rank - 1
	}
	if len(bias.Shape) != 1 {
		return nil, fmt.Errorf("bias must be 1-D, got %v", bias.Shape)
	}
	if trailing := rank - ch - 1; trailing > 0 {
		shape := []int64{bias.Shape[0]}
		for range trailing {
			shape = append(shape, 1)
		}
		bias = b.Reshape(bias, shape)
	}
	return one(b.Add(x, bias), b)
}

func expandSquare(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	return one(b.Mul(x, x), b)
}

func expandSquaredDifference(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	d := b.Sub(b.In(0), b.In(1))
	return one(b.Mul(d, d), b)
}

// reduceAxes reads the constant axes operand of a reduction (inputs data,
// axes?; attr noop_with_empty_axes), normalized.
func reduceAxes(n *ir.Node, rank int) ([]int64, error) {
	var axes []int64
	if a := n.Input(1); a != nil {
		if a.Const == nil {
			return nil, fmt.Errorf("axes are not constant")
		}
		v, err := a.Const.Int64s()
		if err != nil {
			return nil, err
		}
		axes = v
	}
	if len(axes) == 0 {
		if n.Attrs.Int("noop_with_empty_axes", 0) != 0 {
			return nil, fmt.Errorf("empty axes with noop_with_empty_axes is an identity")
		}
		for i := range rank {
			axes = append(axes, int64(i))
		}
	}
	out := make([]int64, len(axes))
	for i, a := range axes {
		if a < -int64(rank) || a >= int64(rank) {
			return nil, fmt.Errorf("axis %d out of range for rank %d", a, rank)
		}
		if a < 0 {
			a += int64(rank)
		}
		out[i] = a
	}
	return out, nil
}

// expandReduceMean: ReduceSum(x)/n. On CPU a RealDiv by n, as onnxruntime
// divides the sum (and the kernel's ReduceSum adds in its order), so the
// fused mean has the unfused op's bits; elsewhere a multiply by 1/n.
func expandReduceMean(b *Builder, n *ir.Node, be akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	axes, err := reduceAxes(n, len(x.Shape))
	if err != nil {
		return nil, err
	}
	keep := n.Attrs.Int("keepdims", 1) != 0
	return meanOf(b, x, axes, keep, be)
}

func meanOf(b *Builder, x *ir.Value, axes []int64, keep bool, be akgcfg.Backend) ([]*ir.Value, error) {
	s := b.ReduceSum(x, axes, keep)
	count := float64(prodDims(x.Shape, axes))
	if be.Device == akgcfg.CPU {
		return one(b.Div(s, b.Const(count)), b)
	}
	return one(b.Mul(s, b.Const(1/count)), b)
}

// expandGlobalAvgPool: the mean over the spatial axes, kept.
func expandGlobalAvgPool(b *Builder, n *ir.Node, be akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	if len(x.Shape) < 3 {
		return nil, fmt.Errorf("input rank %d, want N, C and spatial dims", len(x.Shape))
	}
	axes := make([]int64, 0, len(x.Shape)-2)
	for a := 2; a < len(x.Shape); a++ {
		axes = append(axes, int64(a))
	}
	return meanOf(b, x, axes, true, be)
}

// expandTile: a Tile that only repeats size-1 dims is a BroadcastTo.
func expandTile(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	r := n.Input(1)
	if r == nil || r.Const == nil {
		return nil, fmt.Errorf("repeats are not constant")
	}
	reps, err := r.Const.Int64s()
	if err != nil {
		return nil, err
	}
	x := n.Input(0)
	if len(reps) != len(x.Shape) {
		return nil, fmt.Errorf("repeats %v do not match rank %d", reps, len(x.Shape))
	}
	out := make([]int64, len(reps))
	for i, k := range reps {
		if k != 1 && x.Shape[i] != 1 {
			return nil, fmt.Errorf("dim %d (size %d) repeated %d times is not a broadcast", i, x.Shape[i], k)
		}
		out[i] = x.Shape[i] * k
	}
	return one(b.BroadcastTo(b.In(0), out), b)
}

// expandTanh: 1 - 2/(exp(2x)+1), computed in float32.
func expandTanh(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	dt := x.DType
	xf := b.Cast(x, ir.Float32)
	e := b.Exp(b.Mul(xf, b.ConstOf(2, ir.Float32)))
	y := b.Sub(b.ConstOf(1, ir.Float32), b.Div(b.ConstOf(2, ir.Float32), b.Add(e, b.ConstOf(1, ir.Float32))))
	return one(b.Cast(y, dt), b)
}

// channelShape is [C, 1, ...] that broadcasts against an N,C,... tensor.
func channelShape(c int64, rank int) []int64 {
	s := []int64{c}
	for i := 2; i < rank; i++ {
		s = append(s, 1)
	}
	return s
}

// expandBatchNorm (inference): (x - mean) * (scale * rsqrt(var + eps)) + bias,
// per channel (axis 1).
func expandBatchNorm(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	if len(n.Outputs) > 1 {
		return nil, fmt.Errorf("training-mode outputs are not expanded")
	}
	x := b.In(0)
	rank := len(x.Shape)
	if rank < 2 {
		return nil, fmt.Errorf("rank %d input", rank)
	}
	cs := channelShape(x.Shape[1], rank)
	ch := func(i int) *ir.Value {
		v := b.In(i)
		if v != nil && len(cs) > 1 {
			return b.Reshape(v, cs)
		}
		return v
	}
	scale, bias, mean, variance := ch(1), ch(2), ch(3), ch(4)
	k := b.Mul(scale, b.Rsqrt(b.Add(variance, b.Const(n.Attrs.Float("epsilon", 1e-5)))))
	return one(b.Add(b.Mul(b.Sub(x, mean), k), bias), b)
}

// expandInstanceNorm: normalize over the spatial axes per sample and channel.
func expandInstanceNorm(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	x := b.In(0)
	rank := len(x.Shape)
	if rank < 3 {
		return nil, fmt.Errorf("rank %d input", rank)
	}
	axes, _ := tailAxes(2, rank)
	inv := 1 / float64(prodDims(x.Shape, axes))
	mean := b.Mul(b.ReduceSum(x, axes, true), b.Const(inv))
	d := b.Sub(x, mean)
	variance := b.Mul(b.ReduceSum(b.Mul(d, d), axes, true), b.Const(inv))
	y := b.Mul(d, b.Rsqrt(b.Add(variance, b.Const(n.Attrs.Float("epsilon", 1e-5)))))
	cs := channelShape(x.Shape[1], rank)
	y = b.Add(b.Mul(y, b.Reshape(b.In(1), cs)), b.Reshape(b.In(2), cs))
	return one(y, b)
}

func expandReLU(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	return one(b.Maximum(b.In(0), b.Const(0)), b)
}

func expandReLU6(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	return one(b.Minimum(b.Maximum(b.In(0), b.Const(0)), b.Const(6)), b)
}

// expandClip: min(max(x, lo), hi), each bound optional.
func expandClip(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	y := b.In(0)
	if n.Input(1) == nil && n.Input(2) == nil {
		return nil, fmt.Errorf("no bounds: Clip is an identity")
	}
	if n.Input(1) != nil {
		y = b.Maximum(y, b.In(1))
	}
	if n.Input(2) != nil {
		y = b.Minimum(y, b.In(2))
	}
	return one(y, b)
}

func expandRsqrt(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	return one(b.Div(b.Const(1), b.Sqrt(b.In(0))), b)
}

func expandReciprocal(b *Builder, _ *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	return one(b.Div(b.Const(1), b.In(0)), b)
}

// expandAddN: a chain of Add.
func expandAddN(b *Builder, n *ir.Node, _ akgcfg.Backend) ([]*ir.Value, error) {
	if len(n.Inputs) < 2 {
		return nil, fmt.Errorf("AddN of %d inputs", len(n.Inputs))
	}
	y := b.In(0)
	for i := 1; i < len(n.Inputs); i++ {
		y = b.Add(y, b.In(i))
	}
	return one(y, b)
}
