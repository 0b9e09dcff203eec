package mindir

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// WriteOptions configures Write.
type WriteOptions struct {
	// FP16 stores float32 constants as float16 (see fp16Marker): half the
	// size, and the reader widens them back to float32.
	FP16 bool
}

// Bytes attributes longer than this are streamed like weights instead of
// being marshaled into a buffer (compiled kernels can be megabytes).
const streamBytesAttr = 4 << 10

var marshalOpts = proto.MarshalOptions{Deterministic: true}

// Writing without holding weights twice: every message is encoded as a list
// of parts whose big payloads (raw_data, kernel bytes) are the graph's own
// slices; only the small framing is allocated. Parts are then copied to the
// writer in order. Field order inside a message is not canonical (streamed
// fields come after the marshaled ones), which every protobuf parser accepts,
// and it is fixed, so the output is deterministic.
type part struct {
	b   []byte
	f16 []byte // float32 data written as float16
}

type parts struct {
	list []part
	n    int
}

func (p *parts) add(b []byte) {
	if len(b) > 0 {
		p.list = append(p.list, part{b: b})
		p.n += len(b)
	}
}

func (p *parts) addMsg(m proto.Message) error {
	b, err := marshalOpts.Marshal(m)
	if err != nil {
		return err
	}
	p.add(b)
	return nil
}

// field appends a length-delimited field holding sub.
func (p *parts) field(num protowire.Number, sub *parts) {
	var hdr []byte
	hdr = protowire.AppendTag(hdr, num, protowire.BytesType)
	hdr = protowire.AppendVarint(hdr, uint64(sub.n))
	p.add(hdr)
	p.list = append(p.list, sub.list...)
	p.n += sub.n
}

// rawField appends a bytes field whose payload is written as is.
func (p *parts) rawField(num protowire.Number, b []byte) {
	var hdr []byte
	hdr = protowire.AppendTag(hdr, num, protowire.BytesType)
	hdr = protowire.AppendVarint(hdr, uint64(len(b)))
	p.add(hdr)
	if len(b) > 0 {
		p.list = append(p.list, part{b: b})
		p.n += len(b)
	}
}

func (p *parts) f16Field(num protowire.Number, f32 []byte) {
	var hdr []byte
	hdr = protowire.AppendTag(hdr, num, protowire.BytesType)
	hdr = protowire.AppendVarint(hdr, uint64(len(f32)/2))
	p.add(hdr)
	if len(f32) > 0 {
		p.list = append(p.list, part{f16: f32})
		p.n += len(f32) / 2
	}
}

type writer struct {
	opts      WriteOptions
	uid       int
	prims     []*parts
	funcs     []*parts
	funcNames map[*ir.Graph]string
	usedFuncs map[string]bool
}

// Write encodes g as a MindIR model. The output is deterministic: the same
// graph gives the same bytes.
func Write(w io.Writer, g *ir.Graph, opts WriteOptions) error {
	if g == nil {
		return errors.New("mindir: nil graph")
	}
	wr := &writer{opts: opts, funcNames: map[*ir.Graph]string{}, usedFuncs: map[string]bool{}}
	graph, err := wr.graph(g, "", 0)
	if err != nil {
		return err
	}
	head := &pb.ModelProto{
		IrVersion:     ptr("0.1.1"),
		ProducerName:  ptr(ProducerName),
		ModelVersion:  ptr("1"),
		LittleEndian:  ptr(true),
		MindIrVersion: ptr(int64(pb.Version_IR_VERSION_WITH_SCALAR_GRAPH_HOLDER)),
	}
	if len(g.Meta) > 0 {
		head.UserInfo = map[string]string{}
		for k, v := range g.Meta {
			head.UserInfo[k] = v
		}
	}
	var model parts
	if err := model.addMsg(head); err != nil {
		return err
	}
	model.field(7, graph)
	for _, f := range wr.funcs {
		model.field(8, f)
	}
	for _, p := range wr.prims {
		model.field(12, p)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	for _, p := range model.list {
		if p.f16 != nil {
			if buf == nil {
				buf = make([]byte, 64<<10)
			}
			for src := p.f16; len(src) > 0; {
				k := min(len(src)/4, len(buf)/2)
				for i := 0; i < k; i++ {
					f := math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
					binary.LittleEndian.PutUint16(buf[2*i:], ir.F32ToF16(f))
				}
				if _, err := bw.Write(buf[:2*k]); err != nil {
					return err
				}
				src = src[4*k:]
			}
			continue
		}
		if _, err := bw.Write(p.b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteFile writes g to path through a temporary file in the same folder,
// renamed into place at the end, so an error never leaves partial output.
func WriteFile(path string, g *ir.Graph, opts WriteOptions) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = Write(f, g, opts); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// graph encodes g; fname, when set, names a function (a kernel body).
func (wr *writer) graph(g *ir.Graph, fname string, depth int) (*parts, error) {
	if depth > maxDepth {
		return nil, errors.New("mindir: graph kernels nested too deeply")
	}
	gp := &pb.GraphProto{Name: ptr(g.Name)}
	if fname != "" {
		gp.Name = ptr(fname)
		gp.Attribute = append(gp.Attribute, &pb.AttributeProto{Name: ptr("graph_name"), S: []byte(g.Name), Type: pb.AttributeProto_STRING.Enum()})
	}
	names := map[string]*ir.Value{}
	claim := func(v *ir.Value, what string) error {
		if v == nil {
			return fmt.Errorf("mindir: graph %s: %s is nil", g.Name, what)
		}
		if v.Name == "" {
			return fmt.Errorf("mindir: graph %s: %s has no name", g.Name, what)
		}
		if old, ok := names[v.Name]; ok && old != v {
			return fmt.Errorf("mindir: graph %s: two values are named %q", g.Name, v.Name)
		}
		names[v.Name] = v
		return nil
	}
	for _, v := range g.Inputs {
		if err := claim(v, "an input"); err != nil {
			return nil, err
		}
		gp.Input = append(gp.Input, &pb.ValueInfoProto{Name: ptr(v.Name), Tensor: []*pb.TensorProto{typeToProto(v)}})
	}
	// Constants: the graph's list, then any constant a node uses that is not in it.
	consts := append([]*ir.Value{}, g.Consts...)
	seen := map[*ir.Value]bool{}
	for _, v := range consts {
		seen[v] = true
	}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			if in != nil && in.Const != nil && !seen[in] {
				seen[in] = true
				consts = append(consts, in)
			}
		}
	}
	for _, o := range g.Outputs {
		if o != nil && o.Const != nil && !seen[o] {
			seen[o] = true
			consts = append(consts, o)
		}
	}
	for _, v := range consts {
		if v.Const == nil {
			return nil, fmt.Errorf("mindir: graph %s: constant %s has no data", g.Name, v.Name)
		}
		if err := claim(v, "a constant"); err != nil {
			return nil, err
		}
	}
	for _, n := range g.Nodes {
		if n == nil {
			return nil, fmt.Errorf("mindir: graph %s: nil node", g.Name)
		}
		np, err := wr.node(n, depth)
		if err != nil {
			return nil, err
		}
		for _, o := range n.Outputs {
			if o != nil && o.Name == "" {
				continue
			}
			if err := claim(o, "an output of "+n.Name); err != nil {
				return nil, err
			}
		}
		gp.Node = append(gp.Node, np)
	}
	for _, v := range g.Outputs {
		if v == nil || names[v.Name] != v {
			return nil, fmt.Errorf("mindir: graph %s: output %v is not an input, constant or node output of the graph", g.Name, v)
		}
		gp.Output = append(gp.Output, &pb.ValueInfoProto{Name: ptr(v.Name), Tensor: []*pb.TensorProto{typeToProto(v)}})
	}
	var out parts
	if err := out.addMsg(gp); err != nil {
		return nil, err
	}
	for _, v := range consts {
		tp, err := wr.tensor(v.Name, v.Const, wr.opts.FP16)
		if err != nil {
			return nil, fmt.Errorf("mindir: graph %s: constant %s: %w", g.Name, v.Name, err)
		}
		out.field(3, tp)
	}
	return &out, nil
}

// tensor encodes a TensorProto whose data is streamed.
func (wr *writer) tensor(name string, t *ir.Tensor, fp16 bool) (*parts, error) {
	n, err := numElements(t.Shape)
	if err != nil {
		return nil, err
	}
	tp := &pb.TensorProto{Dims: append([]int64{}, t.Shape...), DataType: ptr(int32(t.DType))}
	if len(tp.Dims) == 0 {
		tp.Dims = nil
	}
	if name != "" {
		tp.Name = ptr(name)
	}
	var out parts
	if t.DType == ir.String {
		if int64(len(t.Strings)) != n {
			return nil, fmt.Errorf("string tensor %v has %d elements", t.Shape, len(t.Strings))
		}
		for _, s := range t.Strings {
			tp.StringData = append(tp.StringData, []byte(s))
		}
		if err := out.addMsg(tp); err != nil {
			return nil, err
		}
		return &out, nil
	}
	if t.DType.Size() == 0 {
		return nil, fmt.Errorf("cannot store dtype %s", t.DType)
	}
	if int64(len(t.Data)) != n*int64(t.DType.Size()) {
		return nil, fmt.Errorf("%s has %d bytes, want %d", t, len(t.Data), n*int64(t.DType.Size()))
	}
	half := fp16 && t.DType == ir.Float32
	if half {
		tp.DataType = ptr(int32(ir.Float16))
		tp.DocString = ptr(fp16Marker)
	}
	if err := out.addMsg(tp); err != nil {
		return nil, err
	}
	if half {
		out.f16Field(9, t.Data)
	} else {
		out.rawField(9, t.Data)
	}
	return &out, nil
}

func (wr *writer) node(n *ir.Node, depth int) (*pb.NodeProto, error) {
	wr.uid++
	primName := n.Op
	attrs := n.Attrs
	if n.Op == "GraphKernel" {
		primName = "Custom"
		attrs = ir.Attrs{}
		for k, v := range n.Attrs {
			attrs[k] = v
		}
		attrs["type"] = ir.StringAttr("GraphKernel")
		if n.Body != nil {
			fname, err := wr.function(n, depth)
			if err != nil {
				return nil, err
			}
			attrs["graph_kernel_body"] = ir.StringAttr(fname)
		} else {
			delete(attrs, "graph_kernel_body")
		}
	}
	ref := fmt.Sprintf("%s:%d", primName, wr.uid)
	np := &pb.NodeProto{Name: ptr(n.Name), OpType: ptr("REF::" + ref)}
	for _, in := range n.Inputs {
		if in == nil {
			np.Input = append(np.Input, "")
		} else {
			np.Input = append(np.Input, in.Name)
		}
	}
	shape := &pb.AttributeProto{Name: ptr("shape"), Type: pb.AttributeProto_TUPLE.Enum()}
	for _, o := range n.Outputs {
		if o == nil {
			return nil, fmt.Errorf("mindir: node %s has a nil output", n.Name)
		}
		np.Output = append(np.Output, o.Name)
		shape.Values = append(shape.Values, &pb.AttributeProto{Type: pb.AttributeProto_TENSORS.Enum(), Tensors: []*pb.TensorProto{typeToProto(o)}})
	}
	np.Attribute = append(np.Attribute, shape)
	if len(n.Provenance) > 0 {
		a := &pb.AttributeProto{Name: ptr("provenance"), Type: pb.AttributeProto_LIST.Enum(), DocString: ptr("strings")}
		for _, s := range n.Provenance {
			a.Strings = append(a.Strings, []byte(s))
		}
		np.NodeAttr = append(np.NodeAttr, a)
	}
	prim := &pb.PrimitiveProto{Name: ptr(ref), OpType: ptr(primName), PrimType: pb.PrimitiveProto_PRIMITIVE.Enum()}
	var pp parts
	if err := pp.addMsg(prim); err != nil {
		return nil, err
	}
	for _, k := range attrs.Keys() {
		ap, err := wr.attr(k, attrs[k], depth)
		if err != nil {
			return nil, fmt.Errorf("mindir: node %s: attribute %s: %w", n.Name, k, err)
		}
		pp.field(3, ap)
	}
	wr.prims = append(wr.prims, &pp)
	return np, nil
}

// function writes a kernel body once per graph, named after kernel_name or
// the node, made unique when two different bodies share a name.
func (wr *writer) function(n *ir.Node, depth int) (string, error) {
	if name, ok := wr.funcNames[n.Body]; ok {
		return name, nil
	}
	base := n.Attrs.String("kernel_name", "")
	if base == "" {
		base = n.Name
	}
	name := base
	for i := 1; wr.usedFuncs[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	wr.usedFuncs[name] = true
	wr.funcNames[n.Body] = name
	body, err := wr.graph(n.Body, name, depth+1)
	if err != nil {
		return "", fmt.Errorf("graph kernel %s: %w", n.Name, err)
	}
	wr.funcs = append(wr.funcs, body)
	return name, nil
}

// attr encodes an IR attribute verbatim (see ownAttr for the reverse):
// int INT64 i, float DOUBLE d, string STRING s, bytes UINT8 s, lists LIST
// with doc_string naming the kind, tensor TENSOR t, graph GRAPH g.
func (wr *writer) attr(name string, a ir.Attr, depth int) (*parts, error) {
	ap := &pb.AttributeProto{Name: ptr(name)}
	var out parts
	switch a.Kind {
	case ir.AttrInt:
		ap.Type, ap.I = pb.AttributeProto_INT64.Enum(), ptr(a.I)
	case ir.AttrFloat:
		ap.Type, ap.D = pb.AttributeProto_DOUBLE.Enum(), ptr(a.F)
	case ir.AttrString:
		ap.Type, ap.S = pb.AttributeProto_STRING.Enum(), []byte(a.S)
	case ir.AttrBytes:
		ap.Type = pb.AttributeProto_UINT8.Enum()
		if len(a.B) > streamBytesAttr {
			if err := out.addMsg(ap); err != nil {
				return nil, err
			}
			out.rawField(5, a.B)
			return &out, nil
		}
		ap.S = a.B
		if ap.S == nil {
			ap.S = []byte{}
		}
	case ir.AttrInts:
		ap.Type, ap.DocString, ap.Ints = pb.AttributeProto_LIST.Enum(), ptr("ints"), a.Ints
	case ir.AttrFloats:
		ap.Type, ap.DocString, ap.Doubles = pb.AttributeProto_LIST.Enum(), ptr("floats"), a.Floats
	case ir.AttrStrings:
		ap.Type, ap.DocString = pb.AttributeProto_LIST.Enum(), ptr("strings")
		for _, s := range a.Strings {
			ap.Strings = append(ap.Strings, []byte(s))
		}
	case ir.AttrTensor:
		if a.T == nil {
			return nil, errors.New("nil tensor")
		}
		ap.Type = pb.AttributeProto_TENSOR.Enum()
		if err := out.addMsg(ap); err != nil {
			return nil, err
		}
		tp, err := wr.tensor("", a.T, false)
		if err != nil {
			return nil, err
		}
		out.field(6, tp)
		return &out, nil
	case ir.AttrGraph:
		if a.G == nil {
			return nil, errors.New("nil graph")
		}
		ap.Type = pb.AttributeProto_GRAPH.Enum()
		if err := out.addMsg(ap); err != nil {
			return nil, err
		}
		gp, err := wr.graph(a.G, "", depth+1)
		if err != nil {
			return nil, err
		}
		out.field(7, gp)
		return &out, nil
	default:
		return nil, fmt.Errorf("unknown attribute kind %d", a.Kind)
	}
	if err := out.addMsg(ap); err != nil {
		return nil, err
	}
	return &out, nil
}
