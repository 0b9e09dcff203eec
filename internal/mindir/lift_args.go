package mindir

// Schema-driven argument decoding for the lifts: where an argument of a
// MindSpore primitive lives in a node (which input, which attribute) and
// its upstream default come from the generated schema (prims_gen.go), so a
// lift names the argument and says nothing else about it.

import (
	"fmt"
	"strconv"
	"strings"
)

// primArg is one argument of the primitive being lifted, located by the
// schema.
type primArg struct {
	m *mnode
	// pos is the node input that may carry it, -1 when it is only an
	// attribute: an op_def (yaml) primitive has every argument at its
	// position, since MindSpore 2.x exports it as PRIMITIVE_FUNCTION with
	// all arguments as inputs (and mind_ir_version 1 files keep the
	// prim_init ones as attributes); an older or Lite primitive has its
	// inputs in order and the rest as attributes.
	pos int
	// names are the attribute names: the schema's, then older spellings
	// the caller accepts too.
	names []string
	def   string // the schema's default, "" when it has none
	err   error  // the schema has no such argument: a bug in the lift
}

// schemaArg locates argument name of m's primitive.
func (m *mnode) schemaArg(name string, older ...string) primArg {
	return m.schemaArgOf(m.op, name, older...)
}

// schemaArgOf locates argument name of primitive prim, for a primitive
// read under another (older) name that the schema lacks, such as GatherV2.
func (m *mnode) schemaArgOf(prim, name string, older ...string) primArg {
	a := primArg{m: m, pos: -1, names: append([]string{name}, older...)}
	s, ok := LookupPrim(prim)
	if !ok {
		a.err = fmt.Errorf("mindir: no schema row for primitive %s", prim)
		return a
	}
	opDef := strings.Contains(s.Source, "/op_def/yaml/")
	input := 0
	for i, pa := range s.Args {
		if pa.Name == name {
			switch {
			case opDef:
				a.pos = i
			case pa.Form == FormInput:
				a.pos = input
			}
			a.def = pa.Default
			return a
		}
		if pa.Form == FormInput {
			input++
		}
	}
	a.err = fmt.Errorf("mindir: the schema of %s has no argument %s", prim, name)
	return a
}

// value is the argument as given, nil when absent.
func (a primArg) value() any { return a.m.arg(a.pos, a.names...) }

// Int reads an integer (or bool) argument, the schema's default when absent.
func (a primArg) Int() (int64, error) {
	if a.err != nil {
		return 0, a.err
	}
	def, err := a.intDefault()
	if err != nil && a.value() == nil {
		return 0, err
	}
	return a.m.intArg(a.pos, def, a.names...)
}

// IntOr reads an integer argument, def when absent: for a default of this
// project's where the schema has none or another (the caller says why).
func (a primArg) IntOr(def int64) (int64, error) {
	if a.err != nil {
		return 0, a.err
	}
	return a.m.intArg(a.pos, def, a.names...)
}

// Float reads a number argument, the schema's default when absent.
func (a primArg) Float() (float64, error) {
	if a.err != nil {
		return 0, a.err
	}
	def, err := strconv.ParseFloat(a.def, 64)
	if err != nil && a.value() == nil {
		return 0, fmt.Errorf("%s: no usable default %q in the schema", a.names[0], a.def)
	}
	return a.m.floatArg(a.pos, def, a.names...)
}

// FloatOr reads a number argument, def when absent (as IntOr).
func (a primArg) FloatOr(def float64) (float64, error) {
	if a.err != nil {
		return 0, a.err
	}
	return a.m.floatArg(a.pos, def, a.names...)
}

// Ints reads an integer tuple; ok is false when it is absent (the callers'
// defaults are shapes of their own: every axis, no permutation).
func (a primArg) Ints() (v []int64, ok bool, err error) {
	if a.err != nil {
		return nil, false, a.err
	}
	return a.m.intsArg(a.pos, a.names...)
}

// Format reads a data format (string or MindSpore's Format enum), NCHW
// when absent (every schema default of a format argument).
func (a primArg) Format() (string, error) {
	if a.err != nil {
		return "", a.err
	}
	return a.m.formatArg(a.pos, a.names...)
}

// PadMode reads a pad mode (string or MindSpore's PadMode enum), VALID
// when absent (the schema's default).
func (a primArg) PadMode() (string, error) {
	if a.err != nil {
		return "", a.err
	}
	return a.m.padModeArg(a.pos, a.names...)
}

// Value is the argument as given (nil when absent), for arguments whose
// kinds the caller tells apart itself.
func (a primArg) Value() (any, error) {
	if a.err != nil {
		return nil, a.err
	}
	return a.value(), nil
}

// intDefault parses the schema's default of an integer or bool argument.
func (a primArg) intDefault() (int64, error) {
	switch strings.ToLower(a.def) {
	case "false":
		return 0, nil
	case "true":
		return 1, nil
	}
	x, err := strconv.ParseInt(a.def, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: no usable default %q in the schema", a.names[0], a.def)
	}
	return x, nil
}
