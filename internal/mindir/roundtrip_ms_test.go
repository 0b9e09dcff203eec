package mindir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "gkconv/internal/mindir/mindirpb"
)

// Bookkeeping nodes MindSpore writes around compute nodes (side-effect
// monads, parameter loads, the output tuple) that carry no computation;
// the reader drops them and the writer has none to write.
var bookkeeping = map[string]bool{"Load": true, "UpdateState": true, "Depend": true, "MakeTuple": true, "Return": true, "Constant": true}

type primSig struct {
	op    string
	attrs []string // "name:TYPE", sorted
}

// computeNodes lists the main graph's compute nodes as their primitive and
// attribute names and types.
// Files of ir_version 0.1.0 state attribute types through ref_attr_name
// instead of type; only the names are compared for them.
func computeNodes(t *testing.T, data []byte, namesOnly bool) []primSig {
	t.Helper()
	var mp pb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	prims := map[string]*pb.PrimitiveProto{}
	for _, p := range mp.Primitives {
		prims[p.GetName()] = p
	}
	var out []primSig
	for _, n := range mp.Graph.Node {
		op := n.GetOpType()
		var attrs []*pb.AttributeProto
		if ref, ok := strings.CutPrefix(op, "REF::"); ok {
			p := prims[ref]
			if p == nil {
				t.Fatalf("node %s: no primitive %s", n.GetName(), ref)
			}
			op, attrs = p.GetOpType(), p.Attribute
		} else {
			attrs = n.Attribute
		}
		if bookkeeping[op] {
			continue
		}
		s := primSig{op: op}
		for _, a := range attrs {
			if a.GetName() == "shape" || a.GetName() == "" {
				continue
			}
			if namesOnly {
				s.attrs = append(s.attrs, a.GetName())
			} else {
				s.attrs = append(s.attrs, a.GetName()+":"+a.GetType().String())
			}
		}
		slices.Sort(s.attrs)
		out = append(out, s)
	}
	return out
}

// TestMindSporeRoundTrip: reading a file MindSpore wrote and writing it
// again (what `--fmk=MINDIR --optimize=none` does) gives the same compute
// nodes with the same primitives and attribute names and types.
func TestMindSporeRoundTrip(t *testing.T) {
	files := []string{filepath.Join(sharedDir(t, "corpus/mindir"), "mnist.mindir")}
	for name, exp := range corpusExpect {
		// The MindSpore 2.5 dtype-promotion tests (CeLU/Log/Upsample with
		// casts) are read as decompositions in the IR (the reader spells out
		// MindSpore's implicit casts), so they cannot keep one node per
		// primitive; they are checked for loading and numerics elsewhere.
		// So is MindSpore's LSTM (exp.decomposed).
		if !exp.encrypted && exp.unsupported == nil && !exp.decomposed && !strings.HasPrefix(name, "test_ops_") {
			files = append(files, filepath.Join(sharedDir(t, "corpus/mindir/mindspore-tests"), name))
		}
	}
	slices.Sort(files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			g, err := Parse(orig)
			if err != nil {
				t.Fatal(err)
			}
			again := writeBytes(t, g, WriteOptions{})
			var head pb.ModelProto
			if err := proto.Unmarshal(orig, &head); err != nil {
				t.Fatal(err)
			}
			old := head.GetIrVersion() == "0.1.0"
			want, got := computeNodes(t, orig, old), computeNodes(t, again, old)
			if len(want) != len(got) {
				t.Fatalf("%d compute nodes, MindSpore's file has %d:\n got %v\nwant %v", len(got), len(want), got, want)
			}
			for i := range want {
				if want[i].op != got[i].op || !slices.Equal(want[i].attrs, got[i].attrs) {
					t.Errorf("node %d: %s %v, MindSpore wrote %s %v", i, got[i].op, got[i].attrs, want[i].op, want[i].attrs)
				}
			}
		})
	}
}
