package runtime

import (
	"fmt"

	"gkconv/internal/ir"
)

// CheckKernelNode runs GraphKernel node n once on inputs twice: its
// compiled CPU object (trusted: the converter calls this on the object it
// has just built, before writing the model) and its fused body on the op
// library, the unfused meaning of the kernel. It returns both results, in
// n's output order, for the converter's kernel self-check to compare.
func CheckKernelNode(n *ir.Node, inputs []*ir.Tensor) (compiled, reference []*ir.Tensor, err error) {
	if n.Op != ir.OpGraphKernel || n.Body == nil {
		return nil, nil, fmt.Errorf("node %s is not a GraphKernel with a body", n.Name)
	}
	g := ir.SingleNodeGraph(n)
	sess, err := NewSession(g, Options{Threads: 1, KernelPolicy: KernelPolicy{TrustEmbedded: true}})
	if err != nil {
		return nil, nil, err
	}
	if compiled, err = sess.Run(inputs); err != nil {
		return nil, nil, err
	}
	if reference, err = ReferenceOutputs(n, inputs); err != nil {
		return nil, nil, err
	}
	return compiled, reference, nil
}

// ReferenceOutputs runs GraphKernel n's body on the op library; the error
// is a *ReferenceError.
func ReferenceOutputs(n *ir.Node, inputs []*ir.Tensor) ([]*ir.Tensor, error) {
	if n.Op != ir.OpGraphKernel || n.Body == nil {
		return nil, fmt.Errorf("node %s is not a GraphKernel with a body", n.Name)
	}
	body, err := NewSession(n.Body, Options{Threads: 1})
	if err != nil {
		return nil, &ReferenceError{err}
	}
	reference, err := body.Run(inputs)
	if err != nil {
		return nil, &ReferenceError{err}
	}
	return reference, nil
}

// ReferenceError: the body could not run on the op library, so there is
// nothing to check the compiled kernel against.
type ReferenceError struct{ Err error }

func (e *ReferenceError) Error() string { return "the body on the op library: " + e.Err.Error() }
func (e *ReferenceError) Unwrap() error { return e.Err }
