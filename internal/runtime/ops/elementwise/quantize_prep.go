package elementwise

import (
	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// A DequantizeLinear whose inputs are all constants (a quantized weight that
// constant folding keeps as int8 so the model file stays small, e.g. a
// classifier weight larger than the fold limit, or one QDQFusion did not
// take) is evaluated once at model load; each run copies the result instead
// of dequantizing again (resnet18's 512x1000 fc weight: ~1 ms per run
// before). The copy holds the float values once per session, as the float
// model would.
func init() { opkernel.RegisterPreparer("DequantizeLinear", prepareDequantize) }

func prepareDequantize(p *opkernel.Prep, n *ir.Node) (opkernel.Func, error) {
	in := make([]*ir.Tensor, len(n.Inputs))
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		if v.Const == nil {
			return nil, nil
		}
		in[i] = v.Const
	}
	o := n.Outputs[0]
	if len(n.Outputs) != 1 || o == nil || !o.ShapeKnown() {
		return nil, nil
	}
	val := ir.NewTensor(o.DType, o.Shape)
	if err := dequantizeLinear(&opkernel.Ctx{Threads: 1}, n, in, []*ir.Tensor{val}); err != nil {
		return nil, err
	}
	return func(_ *opkernel.Ctx, _ *ir.Node, _, out []*ir.Tensor) error {
		copy(out[0].Data, val.Data)
		return nil
	}, nil
}
