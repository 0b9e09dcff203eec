package nn

import (
	"math"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. Both take
// input [N, C, d1..dk], an integer target [N, d1..dk] and optional class
// weights [C]; the loss of element (n, d) with class t = target[n, d] is
// -input[n, t, d] * weight[t], and 0 with weight 0 where t == ignore_index.
// reduction "none" keeps the per-element losses, "sum" adds them, "mean"
// divides the sum by the sum of the weights used. SoftmaxCrossEntropyLoss
// applies LogSoftmax over C first and may output it (log_prob). Sums are
// taken in float64.

func init() {
	opkernel.Register("NegativeLogLikelihoodLoss", lossOp(false))
	opkernel.Register("SoftmaxCrossEntropyLoss", lossOp(true))
}

// lossGeom is the layout of a loss node's operands.
type lossGeom struct {
	batch, classes, inner int
	target                []int64
	weight                []float64 // nil: every class weighs 1
	ignore                int64
	hasIgnore             bool
	reduction             string
}

func readLossGeom(n *ir.Node, in []*ir.Tensor) (*lossGeom, error) {
	x, t := in[0], in[1]
	if len(x.Shape) < 2 {
		return nil, errf(n, "input %v must have rank >= 2", x.Shape)
	}
	g := &lossGeom{batch: int(x.Shape[0]), classes: int(x.Shape[1]), inner: prod(x.Shape[2:])}
	if t.NumElements() != int64(g.batch*g.inner) {
		return nil, errf(n, "target %v does not match input %v", t.Shape, x.Shape)
	}
	var err error
	if g.target, err = t.Int64s(); err != nil {
		return nil, errf(n, "target: %v", err)
	}
	if w := input(in, 2); w != nil {
		if w.NumElements() != int64(g.classes) {
			return nil, errf(n, "weight %v must have %d elements", w.Shape, g.classes)
		}
		if g.weight, err = w.Float64s(); err != nil {
			return nil, errf(n, "weight: %v", err)
		}
	}
	_, g.hasIgnore = n.Attrs["ignore_index"]
	g.ignore = n.Attrs.Int("ignore_index", 0)
	g.reduction = n.Attrs.String("reduction", "mean")
	switch g.reduction {
	case "none", "sum", "mean":
	default:
		return nil, errf(n, "unknown reduction %q", g.reduction)
	}
	return g, nil
}

// apply computes the loss from the log-probabilities lp (input's layout)
// into loss: the target's shape for "none", one element otherwise.
func (g *lossGeom) apply(n *ir.Node, lp []float64, loss *ir.Tensor) error {
	want := int64(1)
	if g.reduction == "none" {
		want = int64(g.batch * g.inner)
	}
	if loss.NumElements() != want {
		return errf(n, "loss output %v must have %d elements", loss.Shape, want)
	}
	var sum, wsum float64
	for b := 0; b < g.batch; b++ {
		for d := 0; d < g.inner; d++ {
			k := b*g.inner + d
			t := g.target[k]
			var l, w float64
			if !g.hasIgnore || t != g.ignore {
				if t < 0 || t >= int64(g.classes) {
					return errf(n, "target %d at %d is outside [0, %d)", t, k, g.classes)
				}
				w = 1
				if g.weight != nil {
					w = g.weight[t]
				}
				l = -lp[(b*g.classes+int(t))*g.inner+d] * w
			}
			if g.reduction == "none" {
				loss.PutFloat(k, l)
			}
			sum += l
			wsum += w
		}
	}
	switch g.reduction {
	case "sum":
		loss.PutFloat(0, sum)
	case "mean":
		loss.PutFloat(0, sum/wsum)
	}
	return nil
}

// lossOp is NegativeLogLikelihoodLoss (softmax false: the input holds the
// log-probabilities) or SoftmaxCrossEntropyLoss (softmax true).
func lossOp(softmax bool) opkernel.Func {
	return func(_ *opkernel.Ctx, n *ir.Node, in, out []*ir.Tensor) error {
		if err := need(n, in, 2); err != nil {
			return err
		}
		if len(out) < 1 || out[0] == nil {
			return errf(n, "the loss output is missing")
		}
		if !in[0].DType.IsFloat() {
			return opkernel.Unsupportedf(n, "dtype %s", in[0].DType)
		}
		g, err := readLossGeom(n, in)
		if err != nil {
			return err
		}
		x, err := in[0].Float64s()
		if err != nil {
			return errf(n, "%v", err)
		}
		if softmax {
			logSoftmaxMid(x, g.batch, g.classes, g.inner)
			if lp := output(out, 1); lp != nil {
				if lp.NumElements() != int64(len(x)) {
					return errf(n, "log_prob output %v does not match the scores %v", lp.Shape, in[0].Shape)
				}
				for i, v := range x {
					lp.PutFloat(i, v)
				}
			}
		}
		return g.apply(n, x, out[0])
	}
}

// logSoftmaxMid replaces x, laid out [outer, k, inner], by its LogSoftmax
// over the middle dim.
func logSoftmaxMid(x []float64, outer, k, inner int) {
	for o := 0; o < outer; o++ {
		for d := 0; d < inner; d++ {
			base := o*k*inner + d
			m := math.Inf(-1)
			for c := 0; c < k; c++ {
				m = math.Max(m, x[base+c*inner])
			}
			var s float64
			for c := 0; c < k; c++ {
				s += math.Exp(x[base+c*inner] - m)
			}
			ls := m + math.Log(s)
			for c := 0; c < k; c++ {
				x[base+c*inner] -= ls
			}
		}
	}
}
