package mindir

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
	"gkconv/internal/safefs"
)

// WriteOptions configures Write.
type WriteOptions struct {
	// FP16 stores float32 constants as float16 (see fp16Marker): half the
	// size, and the reader widens them back to float32.
	FP16 bool
	// OnWrite, when set, is called as the file is written, with the bytes
	// written so far (progress displays).
	OnWrite func(written int64)
	// MindSporePrimitives writes MindSpore's own primitives where an IR op
	// has one (lower_framework.go), so the file runs in MindSpore itself,
	// instead of converter_lite's fusion primitives that MindSpore Lite runs.
	MindSporePrimitives bool
}

// countingWriter reports the bytes written through it.
type countingWriter struct {
	w       io.Writer
	n       int64
	onWrite func(int64)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.onWrite(c.n)
	return n, err
}

// Bytes attributes longer than this are streamed like weights instead of
// being marshaled into a buffer (compiled kernels can be megabytes).
const streamBytesAttr = 4 << 10

var marshalOpts = proto.MarshalOptions{Deterministic: true}

// Writing without holding weights twice: every message is encoded as a tree
// of parts whose big payloads (raw_data, kernel bytes) are the graph's own
// slices; only the small framing is allocated. The tree is laid out (see
// layout) and then copied to the writer in order. Field order inside a
// message is not canonical (streamed fields come after the marshaled ones),
// which every protobuf parser accepts, and it is fixed, so the output is
// deterministic.
type part struct {
	b    []byte           // bytes written as is, or a payload's data
	sub  *parts           // a length-delimited field holding a message
	num  protowire.Number // field number of sub or of an aligned payload
	pay  bool             // b is an aligned raw_data payload
	half bool             // the payload is float32 data written as float16
	pad  int              // bytes of padding field before an aligned payload
}

type parts struct {
	list []part
	n    int // encoded size, valid after sizes
}

func (p *parts) add(b []byte) {
	if len(b) > 0 {
		p.list = append(p.list, part{b: b})
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

// field appends a length-delimited field holding sub; its length prefix is
// computed at layout time, when the padding inside sub is known.
func (p *parts) field(num protowire.Number, sub *parts) {
	p.list = append(p.list, part{sub: sub, num: num})
}

// rawField appends a bytes field whose payload is written as is.
func (p *parts) rawField(num protowire.Number, b []byte) {
	var hdr []byte
	hdr = protowire.AppendTag(hdr, num, protowire.BytesType)
	hdr = protowire.AppendVarint(hdr, uint64(len(b)))
	p.add(hdr)
	p.add(b)
}

// payloadField appends a bytes field whose payload starts at a multiple of
// payloadAlign in the file; half writes float32 data as float16.
func (p *parts) payloadField(num protowire.Number, data []byte, half bool) {
	p.list = append(p.list, part{b: data, num: num, pay: true, half: half})
}

// payloadLen is the number of bytes the payload takes in the file.
func (q *part) payloadLen() int {
	if q.half {
		return len(q.b) / 2
	}
	return len(q.b)
}

// Weight payloads start at a multiple of payloadAlign in the file, so the
// runtime, which uses the mapped file in place, gets cache-line-aligned
// weights. The gap is filled by a bytes field of a number that TensorProto
// does not define: every protobuf parser skips it (ours keeps it as an
// unknown field of a few bytes).
const (
	payloadAlign     = 64
	padField         = protowire.Number(1000)
	layoutFreeRounds = 4
	layoutRounds     = 64
)

var padZeros [payloadAlign]byte

// padContent is the length of the padding field's content when the whole
// field takes pad bytes (tag, length, content).
func padContent(pad int) int {
	k := pad - protowire.SizeTag(padField) - 1
	if protowire.SizeVarint(uint64(k)) > 1 {
		k--
	}
	return k
}

// padFor is the smallest padding of at least floor bytes that puts the next
// byte need bytes further modulo payloadAlign. A padding field takes at least
// 3 bytes, and 131 (127 content bytes plus a 2-byte length) cannot be made.
func padFor(need, floor int) int {
	pad := need & (payloadAlign - 1)
	for pad < floor || (pad > 0 && pad < 3) || (pad > 0 && pad != protowire.SizeTag(padField)+protowire.SizeBytes(padContent(pad))) {
		pad += payloadAlign
	}
	return pad
}

// sizes computes p.n for p and every message inside it.
func (p *parts) sizes() int {
	n := 0
	for i := range p.list {
		q := &p.list[i]
		switch {
		case q.sub != nil:
			s := q.sub.sizes()
			n += protowire.SizeTag(q.num) + protowire.SizeBytes(s)
		case q.pay:
			n += q.pad + protowire.SizeTag(q.num) + protowire.SizeBytes(q.payloadLen())
		default:
			n += len(q.b)
		}
	}
	p.n = n
	return n
}

// place walks p starting at file offset off with the message sizes of the
// last sizes call, sets the padding of every payload from the offset it
// lands at and reports whether any padding changed. Paddings are used as
// soon as they are set, so only stale length prefixes (a varint that
// changes width) can make another round necessary. When grow is set a
// padding never shrinks (it grows by payloadAlign instead), which stops the
// oscillation where a padding moves a length prefix across a varint width
// and back: sizes then only grow, so widths only grow, and they are bounded.
func (p *parts) place(off int, grow bool) (int, bool) {
	changed := false
	for i := range p.list {
		q := &p.list[i]
		switch {
		case q.sub != nil:
			off += protowire.SizeTag(q.num) + protowire.SizeVarint(uint64(q.sub.n))
			var c bool
			off, c = q.sub.place(off, grow)
			changed = changed || c
		case q.pay:
			hdr := protowire.SizeTag(q.num) + protowire.SizeVarint(uint64(q.payloadLen()))
			pad := 0
			if q.payloadLen() > 0 {
				floor := 0
				if grow {
					floor = q.pad
				}
				pad = padFor(-(off + hdr), floor)
			}
			if pad != q.pad {
				q.pad, changed = pad, true
			}
			off += q.pad + hdr + q.payloadLen()
		default:
			off += len(q.b)
		}
	}
	return off, changed
}

// layout fixes the paddings (the file starts at offset 0) and the sizes.
// It converges in two or three rounds. Should it not within layoutRounds,
// the last paddings are kept: the sizes computed from them keep the file
// valid, only some payload may be unaligned.
func (p *parts) layout() {
	p.sizes()
	for round := 0; round < layoutRounds; round++ {
		_, changed := p.place(0, round >= layoutFreeRounds)
		p.sizes()
		if !changed {
			return
		}
	}
}

// emitter copies a laid-out tree to w.
type emitter struct {
	w   *bufio.Writer
	buf []byte // float16 conversion chunk
	hdr []byte
}

func (e *emitter) emit(p *parts) error {
	for i := range p.list {
		q := &p.list[i]
		switch {
		case q.sub != nil:
			e.hdr = protowire.AppendTag(e.hdr[:0], q.num, protowire.BytesType)
			e.hdr = protowire.AppendVarint(e.hdr, uint64(q.sub.n))
			if _, err := e.w.Write(e.hdr); err != nil {
				return err
			}
			if err := e.emit(q.sub); err != nil {
				return err
			}
		case q.pay:
			if err := e.payload(q); err != nil {
				return err
			}
		default:
			if _, err := e.w.Write(q.b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *emitter) payload(q *part) error {
	e.hdr = e.hdr[:0]
	if q.pad > 0 {
		k := padContent(q.pad)
		e.hdr = protowire.AppendTag(e.hdr, padField, protowire.BytesType)
		e.hdr = protowire.AppendVarint(e.hdr, uint64(k))
		for ; k > 0; k -= min(k, len(padZeros)) {
			e.hdr = append(e.hdr, padZeros[:min(k, len(padZeros))]...)
		}
	}
	e.hdr = protowire.AppendTag(e.hdr, q.num, protowire.BytesType)
	e.hdr = protowire.AppendVarint(e.hdr, uint64(q.payloadLen()))
	if _, err := e.w.Write(e.hdr); err != nil {
		return err
	}
	// Once written, a weight in the input file's mapping leaves this process's
	// resident memory, so a conversion holds about one page of each weight at
	// a time instead of the whole mapped model.
	defer ir.ReleaseMapped(q.b)
	if !q.half {
		_, err := e.w.Write(q.b)
		return err
	}
	if e.buf == nil {
		e.buf = make([]byte, 64<<10)
	}
	for src := q.b; len(src) >= 4; {
		k := min(len(src)/4, len(e.buf)/2)
		for i := 0; i < k; i++ {
			f := math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
			binary.LittleEndian.PutUint16(e.buf[2*i:], ir.F32ToF16(f))
		}
		if _, err := e.w.Write(e.buf[:2*k]); err != nil {
			return err
		}
		src = src[4*k:]
	}
	return nil
}

// WriteFile writes g to path (safefs.WriteOutput: nothing but a regular
// file is replaced; a FIFO or device is written as it is) crash-safely
// (safefs.WriteFileAtomic: an
// unnamed O_TMPFILE file in the same folder linked into place when
// complete, or a named temporary file a later run cleans up), so neither an
// error nor a kill leaves partial output.
func WriteFile(path string, g *ir.Graph, opts WriteOptions) error {
	return safefs.WriteOutput(path, 0o644, func(w io.Writer) error {
		if opts.OnWrite != nil {
			w = &countingWriter{w: w, onWrite: opts.OnWrite}
		}
		if err := Write(w, g, opts); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
}

// writer holds what one Write shares between graphs: MindSpore's loader keeps
// one name map for the main graph, every function and every primitive
// (load_model.cc: anfnode_build_map_), so every name written is unique
// across the whole file.
type writer struct {
	opts      WriteOptions
	uid       int
	prims     []*parts
	funcs     []*parts
	funcNames map[*ir.Graph]string
	names     map[string]bool
	// constNodes: the graph being written keeps its constants in Constant
	// nodes instead of parameters (graphFunction).
	constNodes bool
}

// mindIRVersion is what this writer's argument convention is: primitives
// carry their arguments as attributes (MindSpore 2.x before primitive
// functions, and converter_lite's fusion primitives). A value >= 2 would tell
// MindSpore that op_def arguments are node inputs (load_model.cc
// CheckMindIRVseriosn sets generated_from_mindir_with_prim_func).
const mindIRVersion = int64(pb.Version_IR_VERSION)

// Write encodes g as a MindIR model in MindSpore's form: every IR op as the
// primitive converter_lite writes for it (lower_ops.go), fused kernels as
// converter_lite's GraphKernel Custom nodes, multi-output nodes as a tuple
// read through TupleGetItem. The output is deterministic: the same graph
// gives the same bytes. Every tensor's raw_data starts at a multiple of 64
// bytes from the first byte written (the file offset when w is a new file).
func Write(w io.Writer, g *ir.Graph, opts WriteOptions) error {
	if g == nil {
		return errors.New("mindir: nil graph")
	}
	wr := &writer{opts: opts, funcNames: map[*ir.Graph]string{}, names: map[string]bool{}}
	name := g.Name
	if name == "" {
		name = "main"
	}
	wr.names[name] = true
	// The one nesting limit, checked up front: one short error, not one
	// prefix per level.
	if err := ir.CheckGraphDepth(g); err != nil {
		return fmt.Errorf("mindir: %w", err)
	}
	graph, err := wr.graph(g, name, "", 0)
	if err != nil {
		return err
	}
	head := &pb.ModelProto{
		IrVersion:     ptr("0.1.1"),
		ProducerName:  ptr(ProducerName),
		ModelVersion:  ptr("1"),
		LittleEndian:  ptr(true),
		MindIrVersion: ptr(mindIRVersion),
	}
	if opts.MindSporePrimitives {
		head.MindIrVersion = ptr(int64(frameworkMindIRVersion))
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
	model.layout()
	e := &emitter{w: bufio.NewWriterSize(w, 1<<20), hdr: make([]byte, 0, 256)}
	if err := e.emit(&model); err != nil {
		return err
	}
	return e.w.Flush()
}

// primRef claims the name of a new primitive instance, "<op>:<uid>" (the
// REF:: target of its node).
func (wr *writer) primRef(op string) string {
	wr.uid++
	return wr.uniq(fmt.Sprintf("%s:%d", op, wr.uid))
}

// addPrim appends a primitive to ModelProto.primitives.
func (wr *writer) addPrim(p *pb.PrimitiveProto) error {
	var pp parts
	if err := pp.addMsg(p); err != nil {
		return err
	}
	wr.prims = append(wr.prims, &pp)
	return nil
}

// uniq claims a name in the file-wide name map.
func (wr *writer) uniq(base string) string {
	if base == "" {
		base = "v"
	}
	n := base
	for i := 1; wr.names[n]; i++ {
		n = fmt.Sprintf("%s_%d", base, i)
	}
	wr.names[n] = true
	return n
}

// graphWriter writes one graph (the main graph or a kernel body).
type graphWriter struct {
	wr     *writer
	g      *ir.Graph
	prefix string // prepended to the names of a body, so they never collide with the main graph's
	mname  map[*ir.Value]string
	gp     *pb.GraphProto
	extra  []*ir.Value // constants the lowerings made
	index  map[int]string
	depth  int
	// noneName is the None Constant node, made on first use.
	noneName string
	// piece: writing the pieces of a node (frameworkPieces), not split again.
	piece bool
	// binaries: kernel binary parameters by name.
	binaries map[string]*ir.Value
	// dequant: the integer constants a DequantizeLinear reads, which get
	// quant_params (quant_params.go).
	dequant map[*ir.Value]*ir.Node
}

// name is the MindIR name of v, claimed on first use.
func (gw *graphWriter) name(v *ir.Value) string {
	if s, ok := gw.mname[v]; ok {
		return s
	}
	s := gw.wr.uniq(gw.prefix + v.Name)
	gw.mname[v] = s
	return s
}

// graph encodes g under the given (already claimed) name; prefix is put
// before every value name of a kernel body.
func (wr *writer) graph(g *ir.Graph, name, prefix string, depth int) (*parts, error) {
	if depth > ir.MaxGraphDepth+1 { // Write checked the depth (ir.CheckGraphDepth); a kernel's body may be one below the limit
		return nil, fmt.Errorf("mindir: %w", &ir.DepthError{Where: "graph " + name})
	}
	gw := &graphWriter{wr: wr, g: g, prefix: prefix, mname: map[*ir.Value]string{}, depth: depth,
		gp: &pb.GraphProto{Name: ptr(name)}, index: map[int]string{}}
	if !wr.opts.MindSporePrimitives {
		// converter_lite's form only: MindSpore's own primitives carry the
		// dequantization as Cast/Mul nodes, and the per-channel lists cost
		// about 110 bytes a channel (quant_params.go).
		gw.dequant = dequantizedConsts(g)
	}
	if name != g.Name && g.Name != "" {
		gw.gp.Attribute = append(gw.gp.Attribute, aStr("graph_name", g.Name))
	}
	// Claim the graph's own names first, in order, so they stay as they are
	// whenever they are free. Two values of one graph with one name are a
	// broken graph, not something to rename.
	own := map[string]*ir.Value{}
	claim := func(v *ir.Value, what string) error {
		if old, ok := own[v.Name]; ok && old != v {
			return fmt.Errorf("mindir: graph %s: two values are named %q (%s)", g.Name, v.Name, what)
		}
		own[v.Name] = v
		gw.name(v)
		return nil
	}
	for _, v := range g.Inputs {
		if v == nil || v.Name == "" {
			return nil, fmt.Errorf("mindir: graph %s: an input has no name", g.Name)
		}
		if err := claim(v, "an input"); err != nil {
			return nil, err
		}
	}
	consts := append([]*ir.Value{}, g.Consts...)
	seen := map[*ir.Value]bool{}
	for _, v := range consts {
		seen[v] = true
	}
	for _, n := range g.Nodes {
		if n == nil {
			return nil, fmt.Errorf("mindir: graph %s: nil node", g.Name)
		}
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
		for _, o := range n.Outputs {
			if o == nil {
				return nil, fmt.Errorf("mindir: node %s has a nil output", n.Name)
			}
			if o.Name != "" {
				if err := claim(o, "an output of "+n.Name); err != nil {
					return nil, err
				}
			}
		}
	}
	defined := map[*ir.Value]bool{}
	for _, v := range g.Inputs {
		defined[v] = true
		gw.gp.Input = append(gw.gp.Input, &pb.ValueInfoProto{Name: ptr(gw.name(v)), Tensor: []*pb.TensorProto{typeToProto(v)}})
	}
	for _, v := range consts {
		defined[v] = true
	}
	for _, n := range g.Nodes {
		if err := gw.node(n, defined); err != nil {
			return nil, err
		}
	}
	for _, v := range g.Outputs {
		if v == nil || !defined[v] {
			return nil, fmt.Errorf("mindir: graph %s: output %v is not an input, constant or node output of the graph", g.Name, v)
		}
		gw.gp.Output = append(gw.gp.Output, &pb.ValueInfoProto{Name: ptr(gw.name(v)), Tensor: []*pb.TensorProto{typeToProto(v)}})
	}
	if wr.constNodes {
		var head []*pb.NodeProto
		for _, v := range append(consts, gw.extra...) {
			np, err := constantNode(gw.name(v), v.Const)
			if dq := gw.dequant[v]; dq != nil && err == nil {
				np.Attribute[0].Tensors[0].QuantParams = linearQuantParams(dq)
			}
			if err != nil {
				return nil, fmt.Errorf("mindir: graph %s: constant %s: %w", g.Name, v.Name, err)
			}
			head = append(head, np)
		}
		gw.gp.Node = append(head, gw.gp.Node...)
		consts, gw.extra = nil, nil
	}
	var out parts
	if err := out.addMsg(gw.gp); err != nil {
		return nil, err
	}
	for _, v := range append(consts, gw.extra...) {
		var qp []*pb.TensorProto_QuantParamProto
		if dq := gw.dequant[v]; dq != nil {
			qp = linearQuantParams(dq)
		}
		tp, err := wr.tensor(gw.name(v), v.Const, wr.opts.FP16, qp...)
		if err != nil {
			return nil, fmt.Errorf("mindir: graph %s: constant %s: %w", g.Name, v.Name, err)
		}
		out.field(3, tp)
	}
	return &out, nil
}

// node writes one IR node: its lowering as a CNode and, when MindSpore's
// primitive returns a tuple, one TupleGetItem per IR output (the loader
// registers only output(0) of a node: load_model.cc BuildCNodeForFuncGraph).
func (gw *graphWriter) node(n *ir.Node, defined map[*ir.Value]bool) error {
	for i, in := range n.Inputs {
		if in != nil && !defined[in] {
			return fmt.Errorf("mindir: node %s: input %d (%s) is not defined before use", n.Name, i, in.Name)
		}
	}
	if gw.wr.opts.MindSporePrimitives && !gw.piece {
		if pieces := frameworkPieces(n); pieces != nil {
			gw.piece = true
			defer func() { gw.piece = false }()
			for _, p := range pieces {
				for _, in := range p.Inputs {
					if in != nil && in.Const != nil && !defined[in] {
						gw.extra = append(gw.extra, in) // a constant the split made
						defined[in] = true
					}
				}
				if err := gw.node(p, defined); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if writtenApart(n) {
		return gw.convApart(n, defined)
	}
	if n.Op == "If" {
		return gw.writeIf(n, defined)
	}
	var m *msNode
	var err error
	if n.Op == ir.OpGraphKernel {
		body := ""
		if n.Body != nil {
			if body, err = gw.wr.function(n, gw.depth); err != nil {
				return err
			}
		}
		m, err = gw.graphKernelCustom(n, body)
	} else if ir.IsControlFlow(n.Op) {
		m, err = gw.controlFlowCustom(n)
	} else {
		m, err = gw.lower(n)
	}
	if err != nil {
		return fmt.Errorf("mindir: node %s (%s): %w", n.Name, n.Op, err)
	}
	return gw.emit(n, m, defined)
}

// emit writes the CNode m stands for, with n's name, outputs and provenance.
func (gw *graphWriter) emit(n *ir.Node, m *msNode, defined map[*ir.Value]bool) error {
	for _, v := range gw.extra {
		defined[v] = true
	}
	outs := m.outs
	if outs == nil {
		for _, o := range n.Outputs {
			outs = append(outs, msOut{v: o})
		}
	}
	tupled := m.tuple || len(outs) != 1
	wr := gw.wr
	ref := wr.primRef(m.prim)
	np := &pb.NodeProto{Name: ptr(gw.prefix + n.Name), OpType: ptr("REF::" + ref)}
	for i := 0; i < len(m.inputs); i++ {
		in := m.inputs[i]
		if m.pack != nil && i == m.pack[0] {
			t, err := gw.makeTuple(n, m.inputs[m.pack[0]:m.pack[1]])
			if err != nil {
				return err
			}
			np.Input = append(np.Input, t)
			i = m.pack[1] - 1
			continue
		}
		if a, ok := m.values[in]; ok {
			np.Input = append(np.Input, gw.constant(n, a))
			continue
		}
		if in == nil {
			// An absent optional input is MindSpore's None value.
			np.Input = append(np.Input, gw.none())
			continue
		}
		np.Input = append(np.Input, gw.name(in))
	}
	if len(outs) == 0 {
		return fmt.Errorf("mindir: node %s (%s) has no outputs", n.Name, n.Op)
	}
	shape := &pb.AttributeProto{Name: ptr("shape")}
	if tupled {
		np.Output = []string{wr.uniq(gw.prefix + n.Name + ":tuple")}
		shape.Type = pb.AttributeProto_TUPLE.Enum()
		for _, o := range outs {
			shape.Values = append(shape.Values, &pb.AttributeProto{Type: pb.AttributeProto_TENSORS.Enum(), Tensors: []*pb.TensorProto{outProto(o)}})
		}
	} else {
		np.Output = []string{gw.name(outs[0].v)}
		shape.Type = pb.AttributeProto_TENSORS.Enum()
		shape.Tensors = []*pb.TensorProto{outProto(outs[0])}
	}
	np.Attribute = append(np.Attribute, shape)
	np.NodeAttr = append(np.NodeAttr, aStrs("provenance", n.Provenance...))
	np.NodeAttr = append(np.NodeAttr, m.nodeAttrs...)
	prim := &pb.PrimitiveProto{Name: ptr(ref), OpType: ptr(m.prim), PrimType: pb.PrimitiveProto_PRIMITIVE.Enum(), Attribute: m.attrs}
	if m.core {
		prim.InstanceName = ptr("")
	}
	if m.primFunc {
		prim.PrimType = pb.PrimitiveProto_PRIMITIVE_FUNCTION.Enum()
		prim.InstanceName = ptr("")
	}
	if err := wr.addPrim(prim); err != nil {
		return err
	}
	gw.gp.Node = append(gw.gp.Node, np)
	if tupled {
		for i, o := range outs {
			if o.v == nil || o.v.Name == "" {
				continue
			}
			if err := gw.tupleGetItem(n, np.Output[0], i, o.v); err != nil {
				return err
			}
		}
	}
	for _, o := range n.Outputs {
		defined[o] = true
	}
	return nil
}

func outProto(o msOut) *pb.TensorProto {
	if o.v != nil {
		return typeToProto(o.v)
	}
	return typeToProto(&ir.Value{DType: o.dt, Shape: o.shape})
}

// makeTuple writes a MakeTuple CNode of vs (a tuple[tensor] argument) and
// returns its output name.
func (gw *graphWriter) makeTuple(n *ir.Node, vs []*ir.Value) (string, error) {
	wr := gw.wr
	ref := wr.primRef("MakeTuple")
	if err := wr.addPrim(&pb.PrimitiveProto{Name: ptr(ref), OpType: ptr("MakeTuple"), PrimType: pb.PrimitiveProto_PRIMITIVE.Enum()}); err != nil {
		return "", err
	}
	out := wr.uniq(gw.prefix + n.Name + ":tensors")
	np := &pb.NodeProto{Name: ptr(out), OpType: ptr("REF::" + ref), Output: []string{out}}
	shape := &pb.AttributeProto{Name: ptr("shape"), Type: pb.AttributeProto_TUPLE.Enum()}
	for _, v := range vs {
		if v == nil {
			return "", fmt.Errorf("mindir: node %s: a tuple element is absent", n.Name)
		}
		np.Input = append(np.Input, gw.name(v))
		shape.Values = append(shape.Values, &pb.AttributeProto{Type: pb.AttributeProto_TENSORS.Enum(), Tensors: []*pb.TensorProto{typeToProto(v)}})
	}
	np.Attribute = []*pb.AttributeProto{shape}
	gw.gp.Node = append(gw.gp.Node, np)
	return out, nil
}

// constant writes a Constant value node (a scalar or tuple argument of a
// PRIMITIVE_FUNCTION node) and returns its name.
func (gw *graphWriter) constant(n *ir.Node, value *pb.AttributeProto) string {
	name := gw.wr.uniq(gw.prefix + n.Name + ":arg")
	gw.gp.Node = append(gw.gp.Node, &pb.NodeProto{Name: ptr(name), Output: []string{name}, OpType: ptr("Constant"),
		Attribute: []*pb.AttributeProto{value}})
	return name
}

// none is the graph's None Constant node (an absent optional input).
func (gw *graphWriter) none() string {
	if gw.noneName == "" {
		gw.noneName = gw.wr.uniq(gw.prefix + "none")
		gw.gp.Node = append(gw.gp.Node, &pb.NodeProto{Name: ptr(gw.noneName), Output: []string{gw.noneName}, OpType: ptr("Constant"),
			Attribute: []*pb.AttributeProto{{Name: ptr("value"), Type: pb.AttributeProto_NONE.Enum()}}})
	}
	return gw.noneName
}

// tupleGetItem writes v = TupleGetItem(tuple, i), as MindSpore reads one
// element of a tuple output; the index is a Constant node.
func (gw *graphWriter) tupleGetItem(n *ir.Node, tuple string, i int, v *ir.Value) error {
	idx, ok := gw.index[i]
	if !ok {
		idx = gw.wr.uniq(fmt.Sprintf("%stuple_index_%d", gw.prefix, i))
		gw.index[i] = idx
		gw.gp.Node = append(gw.gp.Node, &pb.NodeProto{Name: ptr(idx), Output: []string{idx}, OpType: ptr("Constant"),
			Attribute: []*pb.AttributeProto{aInt("value", int64(i))}})
	}
	wr := gw.wr
	ref := wr.primRef("TupleGetItem")
	if err := wr.addPrim(&pb.PrimitiveProto{Name: ptr(ref), OpType: ptr("TupleGetItem"), PrimType: pb.PrimitiveProto_PRIMITIVE.Enum()}); err != nil {
		return err
	}
	gw.gp.Node = append(gw.gp.Node, &pb.NodeProto{
		Name: ptr(fmt.Sprintf("%s%s:%d", gw.prefix, n.Name, i)), OpType: ptr("REF::" + ref),
		Input: []string{tuple, idx}, Output: []string{gw.name(v)},
		Attribute: []*pb.AttributeProto{{Name: ptr("shape"), Type: pb.AttributeProto_TENSORS.Enum(), Tensors: []*pb.TensorProto{typeToProto(v)}}},
	})
	return nil
}

// function writes a kernel body once per graph as a MindIR function named
// after kernel_name; every name inside it is prefixed with the function's
// name, so nothing collides with the main graph.
func (wr *writer) function(n *ir.Node, depth int) (string, error) {
	base := n.Attrs.String(ir.GKKernelName, "")
	if base == "" {
		base = n.Name
	}
	name, err := wr.graphFunction(n.Body, base+"_body", depth)
	if err != nil {
		return "", fmt.Errorf("graph kernel %s: %w", n.Name, err)
	}
	return name, nil
}

// graphFunction writes g once as a MindIR function named after base (made
// unique); every name inside it is prefixed with the function's name.
func (wr *writer) graphFunction(g *ir.Graph, base string, depth int) (string, error) {
	if name, ok := wr.funcNames[g]; ok {
		return name, nil
	}
	name := wr.uniq(base)
	wr.funcNames[g] = name
	// MindSpore counts a function graph's parameters as its inputs (only
	// the top graph holds weights): in the framework form a function's
	// constants are Constant nodes, as mindspore.export writes them
	// (MindSpore 2.7.2 otherwise refuses the call: "input size:3 ...
	// input size:2 may have unsupported parameters").
	saved := wr.constNodes
	wr.constNodes = wr.opts.MindSporePrimitives
	body, err := wr.graph(g, name, name+"/", depth+1)
	wr.constNodes = saved
	if err != nil {
		return "", err
	}
	wr.funcs = append(wr.funcs, body)
	return name, nil
}

// constantNode is a Constant node holding tensor t (its bytes inline).
func constantNode(name string, t *ir.Tensor) (*pb.NodeProto, error) {
	if t.DType == ir.String || t.DType.Size() == 0 {
		return nil, fmt.Errorf("cannot store dtype %s in a Constant node", t.DType)
	}
	tp := &pb.TensorProto{Dims: append([]int64{}, t.Shape...), DataType: ptr(int32(t.DType)), RawData: t.Data}
	return &pb.NodeProto{Name: ptr(name), Output: []string{name}, OpType: ptr("Constant"),
		Attribute: []*pb.AttributeProto{{Name: ptr("value"), Type: pb.AttributeProto_TENSORS.Enum(), Tensors: []*pb.TensorProto{tp}}}}, nil
}

// tensor encodes a TensorProto whose data is streamed.
func (wr *writer) tensor(name string, t *ir.Tensor, fp16 bool, qp ...*pb.TensorProto_QuantParamProto) (*parts, error) {
	n, err := numElements(t.Shape)
	if err != nil {
		return nil, err
	}
	tp := &pb.TensorProto{Dims: append([]int64{}, t.Shape...), DataType: ptr(int32(t.DType)), QuantParams: qp}
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
	out.payloadField(9, t.Data, half)
	return &out, nil
}
