package mindir

// The lowering table: IR op -> the MindSpore primitive converter_lite writes
// for it (mindspore-lite/tools/converter/parser/onnx/*). IR ops not listed
// are written as Custom(type="gkconv.<op>") by customFallback. The families
// live in their own files (lower_elem.go, lower_nn.go); their reverse, the
// reader's mapping of those primitives, is liftTable.
var lowerTable = mergeTables(lowerSameTable(), lowerElemTable, lowerNNTable,
	lowerLossNormTable, lowerIndexingTable, lowerQuantTable, lowerRecurrentTable, lowerControlTable, lowerMiscTable)

// liftTable is the one table of the reader: MindSpore primitive -> its
// lift (ops.go dispatch). Its rows are the families' lifts, the framework
// primitives and plumbing (lift_core.go), sameOps and the renamings.
var liftTable = mergeTables(liftElemTable, liftNNTable,
	liftLossNormTable, liftIndexingTable, liftQuantTable, liftRecurrentTable, liftControlTable, liftMiscTable,
	liftCoreTable, liftSameTable(), liftRenameTable())

func mergeTables[F any](tables ...map[string]F) map[string]F {
	out := map[string]F{}
	for _, t := range tables {
		for k, f := range t {
			if _, dup := out[k]; dup {
				panic("mindir: op " + k + " is in two lowering or lifting tables")
			}
			out[k] = f
		}
	}
	return out
}

// sameOps are the IR ops whose IR form is MindSpore's: same name, same
// inputs, no attributes. The writer lowers them by lowerSame and the reader
// lifts them by liftSame, so an op of this kind is added here once. (Exp,
// ReLU, Sigmoid and Tanh, which converter_lite writes as ExpFusion and
// Activation, are in lower_elem.go and lift_core.go's liftUnaryAs.)
var sameOps = []string{
	"Abs", "ACos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Erf", "Floor",
	"HSwish", "IsInf", "IsNan", "LogicalNot", "Mish", "Neg", "Reciprocal", "ReLU6", "Rsqrt",
	"Sign", "Sin", "Sinh", "Softsign", "Sqrt", "Square", "Tan",
	"Equal", "Greater", "GreaterEqual", "Less", "LessEqual", "LogicalAnd", "LogicalOr", "SquaredDifference",
}

func lowerSameTable() map[string]lowerFunc {
	t := map[string]lowerFunc{}
	for _, op := range sameOps {
		t[op] = lowerSame
	}
	return t
}

// lowerSame writes the node as the primitive of the same name, inputs as they are.
func lowerSame(c *lowerCtx) (*msNode, error) {
	if len(c.n.Attrs) > 0 {
		return nil, errNoPrimitive
	}
	return &msNode{prim: c.n.Op, inputs: c.n.Inputs}, nil
}
