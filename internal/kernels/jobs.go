package kernels

import (
	"errors"
	"fmt"
	"strings"

	"gkconv/internal/ir"
)

// The pieces below are shared by the CPU, CUDA and Ascend builders: which
// nodes they build, how a rejected body is recorded, how identical sources
// are compiled once, and the I/O attrs every backend writes.

// CheckBodyArity reports a GraphKernel node without a body or whose
// inputs/outputs do not match its body's.
func CheckBodyArity(n *ir.Node) error {
	if n.Body == nil {
		return errors.New("no body")
	}
	if len(n.Inputs) != len(n.Body.Inputs) || len(n.Outputs) != len(n.Body.Outputs) {
		return fmt.Errorf("node has %d inputs/%d outputs but its body %d/%d",
			len(n.Inputs), len(n.Outputs), len(n.Body.Inputs), len(n.Body.Outputs))
	}
	return nil
}

// SetKernelIOAttrs writes kernel_name and the inputs_shape, outputs_shape,
// outputs_type and outputs_format attrs (converter_lite's Custom attrs).
func SetKernelIOAttrs(n *ir.Node, symbol string) {
	a := n.Attrs
	a[ir.GKKernelName] = ir.StringAttr(symbol)
	a[ir.GKInputsShape] = ir.StringAttr(shapeList(n.Body.Inputs))
	a[ir.GKOutputsShape] = ir.StringAttr(shapeList(n.Body.Outputs))
	a[ir.GKOutputsType] = ir.StringAttr(TypeList(n.Body.Outputs))
	a[ir.GKOutputsFormat] = ir.StringAttr(strings.Repeat(ir.GKDefaultOutputsForm, len(n.Body.Outputs)))
}

// Job is a GraphKernel node with its generated source and whatever else
// the backend's generator returns (X).
type Job[X any] struct {
	Node   *ir.Node
	Symbol string
	Src    string
	Extra  X
}

// GenerateJobs runs gen on every GraphKernel node of nodes (others are
// ignored), with the symbol symbolOf gives. A body that fails is an error
// naming the node, or, with allowInterpreted, marks the node
// kernel_status=interpreted with the reason in kernel_error, removes the
// stale attrs and is left out of the jobs.
func GenerateJobs[X any](nodes []*ir.Node, symbolOf func(*ir.Node) string, allowInterpreted bool, stale []string,
	gen func(symbol string, body *ir.Graph) (string, X, error)) ([]Job[X], error) {
	var jobs []Job[X]
	var errs []error
	for _, n := range nodes {
		if n == nil || n.Op != ir.OpGraphKernel {
			continue
		}
		if n.Attrs == nil {
			n.Attrs = ir.Attrs{}
		}
		symbol := symbolOf(n)
		var src string
		var extra X
		err := CheckBodyArity(n)
		if err == nil {
			src, extra, err = gen(symbol, n.Body)
		}
		if err != nil {
			if allowInterpreted {
				for _, k := range stale {
					delete(n.Attrs, k)
				}
				n.Attrs[ir.GKKernelStatus] = ir.StringAttr("interpreted")
				n.Attrs[ir.GKKernelError] = ir.StringAttr(err.Error())
				continue
			}
			errs = append(errs, fmt.Errorf("GraphKernel node %s: %w", n.Name, err))
			continue
		}
		jobs = append(jobs, Job[X]{n, symbol, src, extra})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return jobs, nil
}

// UniqueSources lists the distinct sources of jobs (identical sources
// compile once), each named after its first node, and the index of every
// source in that list.
func UniqueSources[X any](jobs []Job[X]) (index map[string]int, srcs, names []string) {
	index = map[string]int{}
	for _, j := range jobs {
		if _, ok := index[j.Src]; !ok {
			index[j.Src] = len(srcs)
			srcs = append(srcs, j.Src)
			names = append(names, "GraphKernel node "+j.Node.Name)
		}
	}
	return index, srcs, names
}
