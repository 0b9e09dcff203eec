package fusion

import "slices"

// ClusterTableOps lists the ops of the default cluster list (clusterTable),
// sorted, each once; internal/optables checks that each is an IR op.
func ClusterTableOps() []string {
	var ops []string
	for _, e := range clusterTable {
		ops = append(ops, e.Name)
	}
	slices.Sort(ops)
	return slices.Compact(ops)
}

// ExpanderOps lists the ops that have an expander, sorted.
func ExpanderOps() []string {
	var ops []string
	for op := range expanders {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	return ops
}
