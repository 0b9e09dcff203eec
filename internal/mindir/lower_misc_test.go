package mindir

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/testkit"
)

// TestMiscLowerings writes one node of each misc-family form, checks the
// primitive (or Custom fallback) and MindSpore's loader rules, reads it
// back to the same IR and runs both.
func TestMiscLowerings(t *testing.T) {
	cases := []struct {
		name, prim string
		g          func(b *nnGraph) *ir.Graph
		check      func(t *testing.T, w nnWritten)
	}{
		{"BitwiseAnd", "BitwiseAnd", func(b *nnGraph) *ir.Graph {
			return b.node("BitwiseAnd", nil, 1, b.in("x", ir.Int32, 2, 3), b.in("y", ir.Int32, 3))
		}, nil},
		{"BitwiseOr", "BitwiseOr", func(b *nnGraph) *ir.Graph {
			return b.node("BitwiseOr", nil, 1, b.in("x", ir.Int64, 4), b.in("y", ir.Int64, 4))
		}, nil},
		{"BitwiseXor", "BitwiseXor", func(b *nnGraph) *ir.Graph {
			return b.node("BitwiseXor", nil, 1, b.in("x", ir.Int32, 3, 1), b.in("y", ir.Int32, 1, 2))
		}, nil},
		{"BitwiseNot", "BitwiseNot", func(b *nnGraph) *ir.Graph {
			return b.node("BitwiseNot", nil, 1, b.in("x", ir.Int64, 2, 2))
		}, nil},
		{"ReverseSequence", "ReverseSequence", func(b *nnGraph) *ir.Graph {
			return b.node("ReverseSequence", ir.Attrs{"batch_axis": ir.IntAttr(0), "time_axis": ir.IntAttr(1)}, 1,
				b.in("x", ir.Float32, 3, 4, 2), b.in("lens", ir.Int64, 3))
		}, func(t *testing.T, w nnWritten) {
			nnWantInt(t, w, "seq_dim", 1)
			nnWantInt(t, w, "batch_dim", 0)
		}},
		{"ReverseSequence_defaults", "ReverseSequence", func(b *nnGraph) *ir.Graph {
			return b.node("ReverseSequence", ir.Attrs{"batch_axis": ir.IntAttr(1), "time_axis": ir.IntAttr(0)}, 1,
				b.in("x", ir.Float32, 4, 3), b.in("lens", ir.Int64, 3))
		}, func(t *testing.T, w nnWritten) {
			nnWantInt(t, w, "seq_dim", 0)
			nnWantInt(t, w, "batch_dim", 1)
		}},
		{"OneHot", "Custom:gkconv.OneHot", func(b *nnGraph) *ir.Graph {
			return b.node("OneHot", ir.Attrs{"axis": ir.IntAttr(0)}, 1, b.in("i", ir.Int64, 2, 3),
				b.scalarInt("depth", 4), b.c("values", ir.Float32Tensor([]int64{2}, -1, 5)))
		}, nil},
		{"Unique", "Custom:gkconv.Unique", func(b *nnGraph) *ir.Graph {
			return b.node("Unique", ir.Attrs{"sorted": ir.IntAttr(1), "axis": ir.IntAttr(1)}, 4, b.in("x", ir.Int64, 2, 5))
		}, nil},
		{"TfIdfVectorizer", "Custom:gkconv.TfIdfVectorizer", func(b *nnGraph) *ir.Graph {
			return b.node("TfIdfVectorizer", ir.Attrs{"mode": ir.StringAttr("TFIDF"), "min_gram_length": ir.IntAttr(1),
				"max_gram_length": ir.IntAttr(2), "max_skip_count": ir.IntAttr(1), "ngram_counts": ir.IntsAttr(0, 2),
				"ngram_indexes": ir.IntsAttr(2, 0, 1), "pool_int64s": ir.IntsAttr(0, 1, 2, 1), "weights": ir.FloatsAttr(0.5, 2, 3)},
				1, b.in("x", ir.Int32, 2, 6))
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g(newNNGraph(t))
			data := writeBytes(t, g, WriteOptions{})
			if rep, err := checkBytes(data, tc.name); err != nil || !rep.OK() {
				t.Fatalf("converter check: %v %v", err, rep)
			}
			if w := nnDecode(t, data); w.prim != tc.prim {
				t.Fatalf("written as %s, want %s", w.prim, tc.prim)
			} else if tc.check != nil {
				tc.check(t, w)
			}
			back, err := Parse(data)

			if err != nil {
				t.Fatal(err)
			}
			nnSameRun(t, g, back)
			nnNormConsts(g)
			nnNormConsts(back)
			if d := testkit.GraphDiff(g, back); d != "" {
				t.Errorf("read back differs: %s", d)
			}
		})
	}
	for op := range lowerMiscTable {
		found := op == "CastLike" // TestCastLikeAsCast

		for _, tc := range cases {
			found = found || tc.name == op
		}
		if !found {
			t.Errorf("no case for %s", op)
		}
	}
}

// TestCastLikeAsCast: a CastLike of known target dtype is written as Cast
// and reads back as one, computing the same.
func TestCastLikeAsCast(t *testing.T) {
	b := newNNGraph(t)
	g := b.node("CastLike", nil, 1, b.in("x", ir.Float32, 3), b.in("like", ir.Int32, 2))
	data := writeBytes(t, g, WriteOptions{})
	if rep, err := checkBytes(data, "castlike"); err != nil || !rep.OK() {
		t.Fatalf("converter check: %v %v", err, rep)
	}
	if w := nnDecode(t, data); w.prim != "Cast" {
		t.Fatalf("written as %s, want Cast", w.prim)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Nodes) != 1 || back.Nodes[0].Op != "Cast" || back.Nodes[0].Outputs[0].DType != ir.Int32 {
		t.Fatalf("read back as %v", back.Nodes)
	}
	nnSameRun(t, g, back)
}

// TestLiftReverseSequenceDefault: MindSpore's batch_dim defaults to 0
// (ONNX's batch_axis to 1), so a file without it reads as batch_axis 0.
func TestLiftReverseSequenceDefault(t *testing.T) {
	b := newNNGraph(t)
	g := b.node("ReverseSequence", ir.Attrs{"batch_axis": ir.IntAttr(1), "time_axis": ir.IntAttr(0)}, 1,
		b.in("x", ir.Float32, 3, 3), b.in("lens", ir.Int64, 3))
	data := writeBytes(t, g, WriteOptions{})
	var mp pb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	for _, p := range mp.Primitives {
		p.Attribute = slices.DeleteFunc(p.Attribute, func(a *pb.AttributeProto) bool { return a.GetName() == "batch_dim" })
	}
	var back *ir.Graph
	patched, err := proto.Marshal(&mp)
	if err == nil {
		back, err = Parse(patched)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Nodes[0].Attrs.Int("batch_axis", -1); got != 0 || len(back.Nodes) != 1 {
		t.Errorf("batch_axis %d, want 0", got)
	}
}
