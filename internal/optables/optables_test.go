// Package optables holds, as tests only, the check that the op tables of
// the other packages answer to the one registry, ir's op table (ir.Ops):
// every key of the MindIR lowering tables, the fusion cluster and expander
// lists, the kernel expression tables and the runtime's kernels is an IR
// op; every key of the MindIR reader's lift table is a primitive of the
// generated schema; every IR op the ONNX reader maps to has a runtime
// kernel. docs/adding-an-op.md lists the places an op goes and which test
// here (or beside the table) holds each. An exception is a row of the
// exempt maps below with its reason; an exception that no longer excuses
// anything fails too, so the lists stay true.
package optables

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"gkconv/internal/fusion"
	"gkconv/internal/ir"
	"gkconv/internal/kernels"
	"gkconv/internal/mindir"
	_ "gkconv/internal/runtime" // registers every op kernel
	"gkconv/internal/runtime/opkernel"
)

// table is one op table of another package: where it lives and the names
// it is keyed by.
type table struct {
	name string
	ops  []string
}

// notIROp excuses names in IR-op tables that the IR does not have.
var notIROp = map[string]string{
	"FastGeLU": "MindSpore's op, kept in fusion's Ascend cluster and expander lists as MindSpore has them; " +
		"the IR has no row for it yet, so nothing produces it and the rows wait",
}

// notPrimitive excuses lift-table keys the generated schema does not have.
var notPrimitive = map[string]string{
	"Load":          "MindIR plumbing: a parameter load, not an op",
	"UpdateState":   "MindIR plumbing: a monad update, not an op",
	"tuple_getitem": "MindIR plumbing: an older spelling of TupleGetItem",
	"ListGetItem":   "MindIR plumbing: TupleGetItem on a list",
	"GatherV2":      "an older name of Gather, read by Gather's schema row",
	"LeakyReLU":     "the older primitive (MindSpore 2.x writes LeakyReLUExt)",
}

// noKernel excuses ONNX-mapped IR ops without an opkernel: the executor
// runs them itself.
var noKernel = map[string]string{
	"If":                 "control flow: the session runs the bodies (runtime/session.go)",
	"Loop":               "control flow: the session runs the bodies (runtime/session.go)",
	"Scan":               "control flow: the session runs the bodies (runtime/session.go)",
	"SequenceEmpty":      "sequence op: computed by the session (runtime/sequence.go)",
	"SequenceConstruct":  "sequence op: computed by the session (runtime/sequence.go)",
	"SequenceInsert":     "sequence op: computed by the session (runtime/sequence.go)",
	"SequenceErase":      "sequence op: computed by the session (runtime/sequence.go)",
	"SequenceAt":         "sequence op: computed by the session (runtime/sequence.go)",
	"SequenceLength":     "sequence op: computed by the session (runtime/sequence.go)",
	"SplitToSequence":    "sequence op: computed by the session (runtime/sequence.go)",
	"ConcatFromSequence": "sequence op: computed by the session (runtime/sequence.go)",
}

// noExpression excuses ELEMWISE IR ops the kernel generators cannot
// compile; a cluster holding one is refused by kernels.CheckBody and left
// unfused.
var noExpression = map[string]string{
	"Mod": "no C expression yet (ONNX fmod=0 is Python's sign rule)",
}

// unknownNames reports every name of tables that known lacks and exempt
// does not excuse, naming the table and the registry, and every exemption
// that excuses nothing.
func unknownNames(registry string, known func(string) bool, exempt map[string]string, tables ...table) error {
	var problems []string
	used := map[string]bool{}
	for _, t := range tables {
		for _, op := range t.ops {
			switch {
			case known(op):
			case exempt[op] != "":
				used[op] = true
			default:
				problems = append(problems, fmt.Sprintf("%s names %q, which is not %s", t.name, op, registry))
			}
		}
	}
	problems = append(problems, staleExemptions(exempt, used)...)
	return joined(problems)
}

// missingKernels reports every ONNX-mapped IR op (onnxOps: IR op -> ONNX
// op type) without a kernel that exempt does not excuse, and every
// exemption that excuses nothing.
func missingKernels(onnxOps map[string]string, hasKernel func(string) bool, exempt map[string]string) error {
	var problems []string
	used := map[string]bool{}
	for _, op := range slices.Sorted(maps.Keys(onnxOps)) {
		switch {
		case hasKernel(op):
		case exempt[op] != "":
			used[op] = true
		default:
			problems = append(problems, fmt.Sprintf("ONNX %s maps to IR op %q, which has no runtime kernel", onnxOps[op], op))
		}
	}
	problems = append(problems, staleExemptions(exempt, used)...)
	return joined(problems)
}

func staleExemptions(exempt map[string]string, used map[string]bool) []string {
	var out []string
	for _, op := range slices.Sorted(maps.Keys(exempt)) {
		if !used[op] {
			out = append(out, fmt.Sprintf("exemption %q (%s) excuses nothing: delete it", op, exempt[op]))
		}
	}
	return out
}

func joined(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
}

func isIROp(op string) bool { return ir.LookupOp(op) != nil }

// irOpTables are the tables keyed by IR op names.
func irOpTables() []table {
	ts := []table{
		{"fusion clusterTable (cluster.go)", fusion.ClusterTableOps()},
		{"fusion expanders (expanders.go)", fusion.ExpanderOps()},
		{"kernels expression tables (exprs.go, device_math.go)", kernels.ExprOps()},
		{"runtime op kernels (opkernel.Register)", opkernel.Registered()},
	}
	mt := mindir.OpTables()
	for _, name := range slices.Sorted(maps.Keys(mt)) {
		ts = append(ts, table{name, mt[name]})
	}
	return ts
}

// onnxMapped is every IR op the ONNX reader maps an ONNX op type to
// through the IR table (ir.OpFromOnnx), with that type.
func onnxMapped() map[string]string {
	out := map[string]string{}
	for _, o := range ir.Ops() {
		if o.Onnx != "" {
			out[o.Name] = o.Onnx
		}
	}
	return out
}

func TestTablesNameIROps(t *testing.T) {
	if err := unknownNames("an IR op (ir.OpInfo)", isIROp, notIROp, irOpTables()...); err != nil {
		t.Error(err)
	}
}

func TestLiftTableNamesPrimitives(t *testing.T) {
	known := func(p string) bool { _, ok := mindir.LookupPrim(p); return ok }
	if err := unknownNames("a primitive of the generated schema (mindir.LookupPrim)", known, notPrimitive,
		table{"mindir liftTable (lower_ops.go)", mindir.LiftedPrims()}); err != nil {
		t.Error(err)
	}
}

func TestONNXOpsHaveKernels(t *testing.T) {
	hasKernel := func(op string) bool { _, ok := opkernel.Lookup(op); return ok }
	if err := missingKernels(onnxMapped(), hasKernel, noKernel); err != nil {
		t.Error(err)
	}
}

// TestElemwiseOpsHaveExpressions: an ELEMWISE op is one the cluster pass
// may fuse, so the kernel generators need its expression.
func TestElemwiseOpsHaveExpressions(t *testing.T) {
	var elemwise []string
	for _, o := range ir.Ops() {
		if o.IsElemwise() {
			elemwise = append(elemwise, o.Name)
		}
	}
	if err := unknownNames("compiled by the kernel generators (kernels.Supported)", kernels.Supported, noExpression,
		table{"ir op table, ELEMWISE rows", elemwise}); err != nil {
		t.Error(err)
	}
}

// TestCheckersNameTheBadRow feeds the checks tables with a made-up op: the
// error must name the op and the table, so the test above fails on a bad
// table and says where to look.
func TestCheckersNameTheBadRow(t *testing.T) {
	bad := table{"fusion clusterTable (cluster.go)", []string{"Add", "Sine"}}
	err := unknownNames("an IR op (ir.OpInfo)", isIROp, nil, bad)
	if err == nil || !strings.Contains(err.Error(), `"Sine"`) || !strings.Contains(err.Error(), bad.name) {
		t.Errorf("a cluster table naming Sine: %v; want an error naming Sine and the table", err)
	}
	if err := unknownNames("an IR op (ir.OpInfo)", isIROp, nil, table{"t", []string{"Add", "Sin"}}); err != nil {
		t.Errorf("a table of IR ops: %v", err)
	}
	err = unknownNames("an IR op (ir.OpInfo)", isIROp, map[string]string{"Cosine": "gone"}, table{"t", []string{"Add"}})
	if err == nil || !strings.Contains(err.Error(), `"Cosine"`) {
		t.Errorf("an exemption that excuses nothing: %v; want an error naming it", err)
	}
	err = missingKernels(map[string]string{"Add": "Add", "Sine": "Sin"}, func(op string) bool { return op == "Add" }, nil)
	if err == nil || !strings.Contains(err.Error(), `"Sine"`) || !strings.Contains(err.Error(), "ONNX Sin") {
		t.Errorf("an ONNX op whose IR op has no kernel: %v; want an error naming both", err)
	}
}
