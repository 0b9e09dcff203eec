package akgcfg

import (
	"slices"
	"strconv"
)

// OpEntry is one row of an expand or cluster op table: the op Name applies on
// the Backends devices (0 means all, as MindSpore's kAllTarget) from
// fusion_ops_level Level up.
type OpEntry struct {
	Backends Device
	Level    int
	Name     string
}

// ValidOps filters an op table as MindSpore's GkUtils::GetValidOps: a
// non-empty only list replaces the table; otherwise the entries for the
// backend with Level <= fusionOpsLevel are kept, enable is appended and
// disable removed. The result has no duplicates and keeps table order.
func ValidOps(table []OpEntry, backend Backend, fusionOpsLevel int, enable, disable, only []string) []string {
	var ops []string
	if len(only) > 0 {
		ops = append(ops, only...)
	} else {
		for _, e := range table {
			if (e.Backends == 0 || e.Backends&backend.Device != 0) && fusionOpsLevel >= e.Level {
				ops = append(ops, e.Name)
			}
		}
		ops = append(ops, enable...)
		ops = slices.DeleteFunc(ops, func(op string) bool { return slices.Contains(disable, op) })
	}
	seen := make(map[string]bool, len(ops))
	return slices.DeleteFunc(ops, func(op string) bool {
		dup := seen[op]
		seen[op] = true
		return dup
	})
}

// ValidExpandOps applies the expand-op flags of f to table.
func (f *Flags) ValidExpandOps(table []OpEntry, b Backend) []string {
	return ValidOps(table, b, f.FusionOpsLevel, f.EnableExpandOps, f.DisableExpandOps, f.EnableExpandOpsOnly)
}

// ValidClusterOps applies the cluster-op flags of f to table.
func (f *Flags) ValidClusterOps(table []OpEntry, b Backend) []string {
	return ValidOps(table, b, f.FusionOpsLevel, f.EnableClusterOps, f.DisableClusterOps, f.EnableClusterOpsOnly)
}

// PassEnabled decides whether a pass runs, as GraphKernelPassManager::Add:
// it runs when backendOK and opt_level >= level, unless disable_pass names
// it; otherwise it runs only when enable_pass names it. A pass is named
// "<stageIdx>.<passIdx>" (passIdx 0-based within the stage) or
// "<stageName>.<passName>".
func (f *Flags) PassEnabled(stageIdx int, stageName string, passIdx int, passName string, level int, backendOK bool) bool {
	byIndex := strconv.Itoa(stageIdx) + "." + strconv.Itoa(passIdx)
	byName := stageName + "." + passName
	named := func(list []string) bool {
		return slices.ContainsFunc(list, func(s string) bool { return s == byIndex || s == byName })
	}
	if backendOK && f.OptLevel >= level {
		return !named(f.DisablePass)
	}
	return named(f.EnablePass)
}
