package ir

import (
	"fmt"
	"sort"
	"strings"
)

// FixInputShapes sets the dims of graph inputs by name (converter
// --inputShape, benchmark --inputShapes). A negative dim keeps the model's;
// a dim the model fixes must match; symbolic names survive only on dims left
// unknown. Names are applied in sorted order so errors are deterministic.
func (g *Graph) FixInputShapes(shapes map[string][]int64) error {
	names := make([]string, 0, len(shapes))
	for n := range shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		dims := shapes[name]
		var v *Value
		for _, in := range g.Inputs {
			if in.Name == name {
				v = in
			}
		}
		if v == nil {
			have := make([]string, len(g.Inputs))
			for i, in := range g.Inputs {
				have[i] = in.Name
			}
			return fmt.Errorf("input shape given for %q, but the model's inputs are: %s", name, strings.Join(have, ", "))
		}
		if v.Shape != nil && len(v.Shape) != len(dims) {
			return fmt.Errorf("input %s: shape %v has rank %d, the model's input has rank %d %v", name, dims, len(dims), len(v.Shape), v.Shape)
		}
		shape := make([]int64, len(dims))
		dimNames := make([]string, len(dims))
		for i, d := range dims {
			model := int64(-1)
			if v.Shape != nil {
				model = v.Shape[i]
				if i < len(v.DimNames) {
					dimNames[i] = v.DimNames[i]
				}
			}
			switch {
			case d < 0:
				shape[i] = model
			case model >= 0 && d != model:
				return fmt.Errorf("input %s: dim %d is fixed to %d in the model, cannot set it to %d", name, i, model, d)
			default:
				shape[i] = d
				dimNames[i] = ""
			}
		}
		if err := CheckSize(shape, v.DType); err != nil {
			return fmt.Errorf("input %s: %w", name, err)
		}
		v.Shape = shape
		v.DimNames = nil
		for _, n := range dimNames {
			if n != "" {
				v.DimNames = dimNames
				break
			}
		}
	}
	return nil
}
