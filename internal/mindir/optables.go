package mindir

import (
	"maps"
	"slices"
)

// OpTables lists, per table, the IR ops the writer's and the reader's
// tables name: the lowering tables' keys, sameOps, and the IR ops the
// reader's renamings produce. internal/optables checks that each is an IR
// op. (opPadV3, the framework writer's own intermediate op, is left out.)
func OpTables() map[string][]string {
	fw := maps.Clone(lowerFrameworkTable)
	delete(fw, opPadV3)
	var renamed []string
	for _, t := range []map[string]string{liftUnaryAs, liftBinaryAs, liftReduceAs} {
		renamed = append(renamed, slices.Collect(maps.Values(t))...)
	}
	return map[string][]string{
		"mindir lowerTable (lower_ops.go)":                sortedKeys(lowerTable),
		"mindir lowerFrameworkTable (lower_framework.go)": sortedKeys(fw),
		"mindir lowerCoreTable (lower_core.go)":           sortedKeys(lowerCoreTable),
		"mindir sameOps (lower_ops.go)":                   slices.Clone(sameOps),
		"mindir lift renamings (lift_core.go)":            slices.Compact(slices.Sorted(slices.Values(renamed))),
	}
}

// LiftedPrims lists the MindSpore primitives liftTable is keyed by, sorted;
// internal/optables checks each against the generated schema (LookupPrim).
func LiftedPrims() []string { return sortedKeys(liftTable) }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
