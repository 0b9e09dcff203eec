package mindir

import (
	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// lowerMiscTable and liftMiscTable: the issue-13 op family's MindSpore
// primitives (written by lower, read back by lift); IR ops of the family
// that have no MindSpore primitive are written as Custom(type="gkconv.<op>").
//
// CastLike is written as the Cast its output dtype (the target's, known
// once shapes are inferred) makes it, and so reads back as a Cast.
// Written as MindSpore's own primitive: BitwiseAnd, BitwiseOr, BitwiseXor
// (ops/infer/bitwise*.h: two broadcast integer tensors) and BitwiseNot
// (bitwise_not_op.yaml), ReverseSequence (as onnx_reverse_sequence_parser.cc:
// time_axis -> seq_dim, batch_axis -> batch_dim). The others differ from
// the ONNX op and stay Custom: BitShift (ONNX shifts past the width give 0;
// LeftShift/RightShift are two primitives, MindSpore's RightShift of
// signed types is arithmetic), OneHot (MindSpore takes on/off values as two
// inputs and depth as a scalar), Col2Im ([N, C, prod(block), L] input),
// Unique (two outputs), the windows (MindSpore's have no output_datatype
// and Hann none at all), and the ops MindSpore lacks.
var lowerMiscTable = schemaGated(map[string]lowerFunc{
	"BitwiseAnd":      lowerSame,
	"BitwiseOr":       lowerSame,
	"BitwiseXor":      lowerSame,
	"BitwiseNot":      lowerSame,
	"ReverseSequence": lowerReverseSequence,
	"CastLike":        lowerCastLike,
})

var liftMiscTable = map[string]func(*mnode) (any, error){
	"BitwiseAnd":      liftBinary("BitwiseAnd"),
	"BitwiseOr":       liftBinary("BitwiseOr"),
	"BitwiseXor":      liftBinary("BitwiseXor"),
	"BitwiseNot":      liftBitwiseNot,
	"ReverseSequence": liftReverseSequence,
}

// lowerCastLike writes Cast(x, to) for the target's dtype; with that dtype
// still unknown it falls back to Custom.
func lowerCastLike(c *lowerCtx) (*msNode, error) {
	n := c.n
	if len(n.Attrs) > 0 || len(n.Inputs) != 2 || len(n.Outputs) != 1 || n.Outputs[0].DType == ir.Undefined {
		return nil, errNoPrimitive
	}
	cast := *n
	cast.Op, cast.Inputs = "Cast", n.Inputs[:1]
	cast.Attrs = ir.Attrs{"to": ir.IntAttr(int64(n.Outputs[0].DType))}
	return lowerCast(&lowerCtx{gw: c.gw, n: &cast})
}

func liftBitwiseNot(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	return m.emit1("BitwiseNot", nil, x), nil
}

// lowerReverseSequence: ReverseSequence(x, seq_lengths) with seq_dim and
// batch_dim, the IR's (ONNX's) defaults written out.
func lowerReverseSequence(c *lowerCtx) (*msNode, error) {
	n := c.n
	if !attrsOnly(n, "batch_axis", "time_axis") || len(n.Inputs) != 2 {
		return nil, errNoPrimitive
	}
	return &msNode{prim: "ReverseSequence", inputs: n.Inputs, attrs: []*pb.AttributeProto{
		aInt("seq_dim", n.Attrs.Int("time_axis", 0)),
		aInt("batch_dim", n.Attrs.Int("batch_axis", 1)),
	}}, nil
}

// liftReverseSequence reads MindSpore's seq_dim (required) and batch_dim
// (0 by default, where ONNX's batch_axis is 1).
func liftReverseSequence(m *mnode) (any, error) {
	x, err := m.tensor(0)
	if err != nil {
		return nil, err
	}
	l, err := m.tensor(1)
	if err != nil {
		return nil, err
	}
	if m.arg(-1, "seq_dim") == nil {
		return nil, unsupported("ReverseSequence without seq_dim")
	}
	seq, err := m.intArg(-1, 0, "seq_dim")
	if err != nil {
		return nil, err
	}
	batch, err := m.intArg(-1, 0, "batch_dim")
	if err != nil {
		return nil, err
	}
	return m.emit1("ReverseSequence", ir.Attrs{"time_axis": ir.IntAttr(seq), "batch_axis": ir.IntAttr(batch)}, x, l), nil
}
