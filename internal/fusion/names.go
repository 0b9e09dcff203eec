package fusion

import (
	"fmt"
	"slices"
	"strconv"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
)

// CheckNames reports the names in the pass and op lists of f that name
// nothing (a typo silently disables nothing), each with the nearest valid
// name: enable_pass/disable_pass against the pass table ("stage.name" or
// "S.I"), the expand lists against the ops that have an expander, the
// cluster lists against the IR ops.
func CheckNames(f *akgcfg.Flags) []string {
	var passNames []string
	valid := map[string]bool{}
	for _, p := range pipeline {
		byName := stageNames[p.stage] + "." + p.name
		passNames = append(passNames, byName)
		valid[byName] = true
		valid[strconv.Itoa(p.stage)+"."+strconv.Itoa(p.index)] = true
	}
	var out []string
	check := func(key string, list []string, known func(string) bool, candidates []string, what string) {
		for _, name := range list {
			if !known(name) {
				out = append(out, fmt.Sprintf("%s=%s: no %s is called %q%s; it has no effect", key, name, what, name, akgcfg.Suggestion(name, candidates)))
			}
		}
	}
	check("enable_pass", f.EnablePass, func(s string) bool { return valid[s] }, passNames, "pass")
	check("disable_pass", f.DisablePass, func(s string) bool { return valid[s] }, passNames, "pass")
	var expandOps []string
	for op := range expanders {
		expandOps = append(expandOps, op)
	}
	slices.Sort(expandOps)
	hasExpander := func(s string) bool { _, ok := expanders[s]; return ok }
	check("enable_expand_ops", f.EnableExpandOps, hasExpander, expandOps, "expander")
	check("enable_expand_ops_only", f.EnableExpandOpsOnly, hasExpander, expandOps, "expander")
	check("disable_expand_ops", f.DisableExpandOps, hasExpander, expandOps, "expander")
	var irOps []string
	for _, o := range ir.Ops() {
		irOps = append(irOps, o.Name)
	}
	isOp := func(s string) bool { return ir.LookupOp(s) != nil }
	check("enable_cluster_ops", f.EnableClusterOps, isOp, irOps, "op")
	check("enable_cluster_ops_only", f.EnableClusterOpsOnly, isOp, irOps, "op")
	check("disable_cluster_ops", f.DisableClusterOps, isOp, irOps, "op")
	return out
}
