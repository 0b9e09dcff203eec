package mindir

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/testkit"
)

// rawOffsets walks a written model with protowire along the messages that
// can hold tensors and returns the file offset of every non-empty
// TensorProto raw_data payload.
func rawOffsets(t *testing.T, data []byte) []int {
	t.Helper()
	var offs []int
	// kinds: model, graph, node, attr, prim, tensor
	var walk func(kind string, b []byte, base int)
	walk = func(kind string, b []byte, base int) {
		for pos := 0; pos < len(b); {
			num, typ, n := protowire.ConsumeTag(b[pos:])
			if n < 0 {
				t.Fatalf("%s at %d: bad tag", kind, base+pos)
			}
			vn := protowire.ConsumeFieldValue(num, typ, b[pos+n:])
			if vn < 0 {
				t.Fatalf("%s at %d: bad field %d", kind, base+pos, num)
			}
			if typ == protowire.BytesType {
				v, ln := protowire.ConsumeBytes(b[pos+n:])
				at := base + pos + n + ln - len(v)
				sub := ""
				switch kind + fmt.Sprint(num) {
				case "model7", "model8", "attr7", "attr13":
					sub = "graph"
				case "model12":
					sub = "prim"
				case "graph1":
					sub = "node"
				case "graph3", "attr6", "attr12":
					sub = "tensor"
				case "graph8", "node5", "prim3", "attr17":
					sub = "attr"
				case "tensor9":
					if len(v) > 0 {
						offs = append(offs, at)
					}
				}
				if sub != "" {
					walk(sub, v, at)
				}
			}
			pos += n + vn
		}
	}
	walk("model", data, 0)
	return offs
}

// checkAligned writes g and checks that every raw_data payload is aligned,
// that there are want of them, that the file still decodes with the
// generated code and reads back to g, and that writing is deterministic.
func checkAligned(t *testing.T, g *ir.Graph, opts WriteOptions, want int) []byte {
	t.Helper()
	data := writeBytes(t, g, opts)
	offs := rawOffsets(t, data)
	if want >= 0 && len(offs) != want {
		t.Fatalf("%d raw_data payloads, want %d", len(offs), want)
	}
	for _, o := range offs {
		if o%payloadAlign != 0 {
			t.Fatalf("raw_data at offset %d (%d past a %d-byte boundary) of payloads %v", o, o%payloadAlign, payloadAlign, offs)
		}
	}
	var mp pb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatalf("generated decoder: %v", err)
	}
	g2, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !opts.FP16 {
		if d := testkit.GraphDiff(g, g2); d != "" {
			t.Fatalf("round trip: %s", d)
		}
		again := writeBytes(t, g2, opts)
		if !bytes.Equal(data, again) {
			t.Fatalf("re-writing the read graph changes the bytes (%d vs %d)", len(data), len(again))
		}
	}
	if !bytes.Equal(data, writeBytes(t, g, opts)) {
		t.Fatal("two writes of one graph differ")
	}
	return data
}

func constCount(g *ir.Graph) int {
	n := 0
	for _, c := range g.Consts {
		if len(c.Const.Data) > 0 {
			n++
		}
	}
	return n
}

func TestAlignMnist(t *testing.T) {
	m, err := Open(filepath.Join(sharedDir(t, "corpus/mindir"), "mnist.mindir"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	checkAligned(t, m.Graph, WriteOptions{}, constCount(m.Graph))
	checkAligned(t, m.Graph, WriteOptions{FP16: true}, constCount(m.Graph))

	// Through a file: the runtime sees aligned addresses in the mapping.
	path := filepath.Join(t.TempDir(), "mnist.mindir")
	if err := WriteFile(path, m.Graph, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m2.data)))
	for _, c := range m2.Graph.Consts {
		d := c.Const.Data
		if len(d) == 0 {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(d)))
		if p < base || p >= base+uintptr(len(m2.data)) {
			t.Fatalf("constant %s does not alias the mapping", c.Name)
		}
		if p%payloadAlign != 0 {
			t.Errorf("constant %s at mapping offset %d is not %d-byte aligned", c.Name, p-base, payloadAlign)
		}
	}
}

func TestAlignGraphKernel(t *testing.T) {
	// w and idx in main; two in the body (a function); the kernel binary
	// (a uint8 parameter).
	checkAligned(t, kernelGraph(), WriteOptions{}, 4)
	checkAligned(t, kernelGraph(), WriteOptions{FP16: true}, 4)
	for _, so := range []int{0, 5000, 70000} {
		want := 4
		if so == 0 {
			want = 3 // an empty binary has no payload
		}
		checkAligned(t, kernelGraphN(so), WriteOptions{}, want)
	}
}

// TestAlignSweep varies sizes so that every padding length is needed, and
// puts message lengths right at varint width boundaries (2^14, 2^21), where
// a padding changes the width of a length prefix before it.
func TestAlignSweep(t *testing.T) {
	build := func(nameLen, size, count int) *ir.Graph {
		g := ir.NewGraph("g")
		x := &ir.Value{Name: "x", DType: ir.Float32, Shape: []int64{4}}
		g.Inputs = []*ir.Value{x}
		prev := x
		for i := 0; i < count; i++ {
			c := ir.NewTensor(ir.Uint8, []int64{int64(size + i)})
			for j := range c.Data {
				c.Data[j] = byte(i + j)
			}
			v := g.AddConst(fmt.Sprintf("c%d_%s", i, string(bytes.Repeat([]byte{'n'}, nameLen))), c)
			n := g.AddNode(fmt.Sprintf("n%d", i), "Add", []*ir.Value{prev, v}, fmt.Sprintf("o%d", i))
			prev = n.Outputs[0]
		}
		// A kernel body (a MindIR function) holds a constant too.
		sub := ir.NewGraph("sub")
		in := &ir.Value{Name: "in", DType: ir.Float32, Shape: []int64{4}}
		sub.Inputs = []*ir.Value{in}
		s := sub.AddConst("s", ir.Float32Tensor([]int64{4}, 1, 2, 3, 4))
		sub.Outputs = []*ir.Value{sub.AddNode("add", "Add", []*ir.Value{in, s}, "o").Outputs[0]}
		n := g.AddNode("last", ir.OpGraphKernel, []*ir.Value{prev}, "y")
		n.Attrs["kernel_name"] = ir.StringAttr("k")
		n.Body = sub
		g.Outputs = []*ir.Value{n.Outputs[0]}
		return g
	}
	for nameLen := 0; nameLen < 70; nameLen++ {
		checkAligned(t, build(nameLen, 1+nameLen*3, 3), WriteOptions{}, 4)
	}
	for _, boundary := range []int{1 << 14, 1 << 21} {
		for size := boundary - 400; size < boundary+100; size += 7 {
			checkAligned(t, build(5, size, 1), WriteOptions{}, 2)
		}
	}
	// FP16 halves the payload: the padding follows the written length.
	for size := 1; size < 200; size += 13 {
		g := build(2, 4, 1)
		f := ir.NewTensor(ir.Float32, []int64{int64(size)})
		for i := range f.F32() {
			f.F32()[i] = float32(i)
		}
		g.AddConst("f", f)
		checkAligned(t, g, WriteOptions{FP16: true}, 3)
	}
}

func TestPadFor(t *testing.T) {
	for need := -200; need < 200; need++ {
		for _, floor := range []int{0, 1, 3, 64, 115, 130, 131, 200} {
			pad := padFor(need, floor)
			if pad < floor || (pad-need)%payloadAlign != 0 || pad-floor >= 2*payloadAlign {
				t.Fatalf("padFor(%d, %d) = %d", need, floor, pad)
			}
			if pad == 0 {
				continue
			}
			// The field the emitter writes is exactly pad bytes and is skipped.
			k := padContent(pad)
			b := protowire.AppendTag(nil, padField, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(k))
			b = append(b, make([]byte, k)...)
			if len(b) != pad || protowire.ConsumeFieldValue(padField, protowire.BytesType, b[protowire.SizeTag(padField):]) != pad-protowire.SizeTag(padField) {
				t.Fatalf("padding field for %d bytes has %d", pad, len(b))
			}
		}
	}
}
