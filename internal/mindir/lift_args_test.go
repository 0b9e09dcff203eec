package mindir

import (
	"strings"
	"testing"

	"gkconv/internal/ir"
)

// TestSchemaArgPlaces: schemaArg finds an argument where MindSpore puts it:
// every argument of an op_def primitive at its position (PRIMITIVE_FUNCTION
// form) or as an attribute; the inputs of an older or Lite primitive in
// order, its other arguments as attributes only.
func TestSchemaArgPlaces(t *testing.T) {
	for _, c := range []struct {
		prim, arg string
		pos       int
		def       string
	}{
		{"LayerNorm", "epsilon", 5, "1e-7"},        // op_def yaml: prim_init argument at its position
		{"Gather", "axis", 2, ""},                  // op_def yaml input, required
		{"LayerNormFusion", "epsilon", -1, "1e-7"}, // Lite primitive: attribute only
		{"FusedBatchNorm", "variance", 4, ""},      // ops/infer primitive: inputs in order
		{"Conv2DFusion", "activation_type", -1, "NO_ACTIVATION"},
	} {
		a := (&mnode{op: c.prim}).schemaArg(c.arg)
		if a.err != nil || a.pos != c.pos || a.def != c.def {
			t.Errorf("%s.%s: pos %d default %q err %v, want pos %d default %q", c.prim, c.arg, a.pos, a.def, a.err, c.pos, c.def)
		}
	}
	m := &mnode{op: "LayerNorm", attrs: map[string]any{}}
	if eps, err := m.schemaArg("epsilon").Float(); err != nil || eps != 1e-7 {
		t.Errorf("absent epsilon: %v, %v; want the schema's 1e-7", eps, err)
	}
	m.attrs["begin_norm_axis"] = scalar{dt: ir.Int64, i: -1}
	if axis, err := m.schemaArg("begin_norm_axis").Int(); err != nil || axis != -1 {
		t.Errorf("begin_norm_axis attribute: %v, %v; want -1", axis, err)
	}
	if _, err := m.schemaArg("begin_norm_axes").Int(); err == nil || !strings.Contains(err.Error(), "begin_norm_axes") {
		t.Errorf("a name the schema lacks: %v; want an error naming it", err)
	}
	if _, err := (&mnode{op: "Gather"}).schemaArg("axis").Int(); err == nil {
		t.Error("an absent required argument read without a default: no error")
	}
}
