package ir

import (
	"slices"
	"testing"
)

// TestOpClasses pins the op sets that passes and back ends take from the
// table, so a new row cannot silently change them.
func TestOpClasses(t *testing.T) {
	sets := map[string]func(*OpInfo) bool{
		"reshape":      (*OpInfo).IsReshape,
		"alias":        (*OpInfo).IsAlias,
		"pass-through": (*OpInfo).PassesThrough,
		"value-depend": (*OpInfo).ValueDepend,
		"reduce":       (*OpInfo).IsReduce,
		"broadcast":    func(o *OpInfo) bool { return o.Pattern == PatternBroadcast },
	}
	want := map[string][]string{
		"reshape":      {"Flatten", "Reshape", "Squeeze", "Unsqueeze"},
		"alias":        {"Flatten", "Identity", "Reshape", "Squeeze", "Unsqueeze"},
		"pass-through": {"BroadcastTo", "Dropout", "Identity"},
		"value-depend": {"BroadcastTo", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "Reshape", "Squeeze", "Tile", "Unsqueeze"},
		"reduce": {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
			"ReduceProd", "ReduceSum", "ReduceSumSquare"},
		"broadcast": {"BroadcastTo", "Tile"},
	}
	for name, in := range sets {
		var got []string
		for i := range opTable {
			if in(&opTable[i]) {
				got = append(got, opTable[i].Name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s ops = %v, want %v", name, got, want[name])
		}
	}
	var unknown *OpInfo
	if LookupOp("NoSuchOp") != nil || unknown.IsAlias() || unknown.IsReshape() || unknown.PatternOf() != PatternOpaque {
		t.Error("an unknown op must have a nil row answering false and OPAQUE")
	}
}

// TestOpRows: every row has a shape function and a sane arity; names are unique.
func TestOpRows(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range opTable {
		if seen[o.Name] {
			t.Errorf("op %s has two rows", o.Name)
		}
		seen[o.Name] = true
		if o.Infer == nil {
			t.Errorf("op %s has no shape function", o.Name)
		}
		for _, a := range []Arity{o.In, o.Out} {
			if a.Min < 0 || (a.Max >= 0 && a.Max < a.Min) {
				t.Errorf("op %s: arity %v", o.Name, a)
			}
		}
	}
}
