package ir

import "fmt"

// inferGraphKernel types a fused node from its body, whose shapes are static
// (fusion only clusters static shapes), so a converted model can be read
// back, re-inferred and converted again.
func inferGraphKernel(n *Node) error {
	if n.Body == nil {
		return fmt.Errorf("fused node has no body")
	}
	if len(n.Body.Outputs) != len(n.Outputs) {
		return fmt.Errorf("fused node has %d outputs, its body %d", len(n.Outputs), len(n.Body.Outputs))
	}
	for i, o := range n.Outputs {
		if o == nil {
			continue
		}
		b := n.Body.Outputs[i]
		o.DType, o.Shape = b.DType, cloneShape(b.Shape)
	}
	return nil
}
