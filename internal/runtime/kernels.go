package runtime

import (
	"fmt"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/kernel"
)

// graphKernelFunc binds a fused GraphKernel node to its embedded binary.
// Until the fused-kernel loader lands, such nodes run their Body subgraph
// with the op library, which gives the same numbers.
func graphKernelFunc(n *ir.Node) (kernel.Func, bool) {
	if n.Body == nil {
		return nil, false
	}
	sub, err := NewSession(n.Body, Options{Threads: 1})
	if err != nil {
		return nil, false
	}
	return func(ctx *kernel.Ctx, _ *ir.Node, in []*ir.Tensor, out []*ir.Tensor) error {
		res, err := sub.Run(in)
		if err != nil {
			return err
		}
		if len(res) != len(out) {
			return fmt.Errorf("fused body gave %d outputs, want %d", len(res), len(out))
		}
		for i := range res {
			copy(out[i].Data, res[i].Data)
		}
		return nil
	}, true
}
