package onnx

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	"gkconv/internal/onnx/onnxpb"
)

// onnxruntime does not run a float16 model as its graph reads. When a session
// is created (at every optimisation level, ORT_DISABLE_ALL included), its
// InsertCastTransformer gives every node that has a float16 input but no
// float16 CPU kernel (Conv, Add, Relu, Resize, ...: all but the ops of
// ortFloat16Kernels) a Cast to float32 on each float16 input and a Cast back
// on each float16 output; a node that could run in float16 but sits between
// such nodes is moved to float32 too. Then RemoveDuplicateCastTransformer
// deletes Cast pairs that undo each other within the float types — its own
// pairs, so runs of float32 nodes pass float32 values to each other, and the
// model's own, so a model's float32 -> float16 -> float32 round trip is not
// rounded at all. The outcome differs from rounding after every op by up to a
// few float16 ulps per layer (issue 33: 4.4e-5 against onnxruntime's own
// spread of 1.5e-5 on a float16 detector) and from float32 inference by the
// float16 weights only.
//
// ortFloat16Rewrite replays both transformers on the ONNX nodes of one graph,
// with the element types the first build inferred, so that the IR built from
// its result computes what onnxruntime computes. The rewrite is on the ONNX
// nodes, not the IR, because onnxruntime decides per ONNX node (an Identity,
// which the IR drops, keeps float16 between two float32 nodes when it must),
// and it leaves the bodies of If/Loop/Scan as they are.

// ortCastRewrite is the result: the new node list and what changed.
type ortCastRewrite struct {
	nodes      []*rawNode
	inFloat32  int // model nodes computed in float32 instead of float16
	removed    int // model Casts removed
	unrounded  int // values no longer rounded to float16 between nodes
	changedAny bool
}

type castGraphNode struct {
	raw      *rawNode // nil for an inserted Cast
	op       string
	domain   string
	in, out  []string
	implicit []string // names a body of the node reads from this graph
	to       int64    // Cast's target type (inserted or the model's)
	removed  bool
	f32      bool // computed in float32 (inserted Casts around it)
	dtypeFix bool // its dtype attribute said FLOAT16
}

type castGraph struct {
	nodes    []*castGraphNode
	uses     map[string][]*castGraphNode // explicit input slots reading a name (one entry per slot)
	bodyUses map[string]int              // reads from the bodies of nodes
	types    map[string]ir.DType
	outputs  map[string]bool
	consts   map[string]bool // graph inputs and initializers: no producer
	names    *ir.Names
	nodeName *ir.Names
}

// ortHasFloat16Kernel: onnxruntime 1.30's CPU provider has a float16 kernel
// for op at this opset.
func ortHasFloat16Kernel(domain, op string, opset int64) bool {
	if domain == "ai.onnx" {
		domain = ""
	}
	for _, r := range ortFloat16Kernels[domain+":"+op] {
		if opset >= r[0] && opset <= r[1] {
			return true
		}
	}
	return false
}

// rawImplicit lists the names the bodies of a node read (every input of every
// body node, conservatively including names the body defines itself).
func rawImplicit(rn *rawNode) []string {
	var names []string
	var walk func(g *rawGraph)
	walk = func(g *rawGraph) {
		for _, n := range g.nodes {
			names = append(names, n.pb.GetInput()...)
			for _, a := range n.attrs {
				if a.g != nil {
					walk(a.g)
				}
				for _, sg := range a.graphs {
					walk(sg)
				}
			}
		}
	}
	for _, a := range rn.attrs {
		if a.g != nil {
			walk(a.g)
		}
		for _, sg := range a.graphs {
			walk(sg)
		}
	}
	return names
}

// mayHaveFloat16OrCast: the graph has a Cast or a float16 tensor anywhere
// the model says so (initializers, inputs, outputs, value_info); only then
// can the rewrite change it.
func mayHaveFloat16OrCast(rg *rawGraph) bool {
	f16 := int32(onnxpb.TensorProto_FLOAT16)
	for _, n := range rg.nodes {
		if op := n.pb.GetOpType(); op == "Cast" || op == "CastLike" {
			return true
		}
	}
	for _, t := range rg.inits {
		if t.pb.GetDataType() == f16 {
			return true
		}
	}
	for _, vis := range [][]*onnxpb.ValueInfoProto{rg.pb.GetInput(), rg.pb.GetOutput(), rg.pb.GetValueInfo()} {
		for _, vi := range vis {
			if vi.GetType().GetTensorType().GetElemType() == f16 {
				return true
			}
		}
	}
	return false
}

func castTo(rn *rawNode) int64 {
	for _, a := range rn.attrs {
		if a.pb.GetName() == "to" {
			return a.pb.GetI()
		}
	}
	return 0
}

// ortFloat16Rewrite replays onnxruntime's Cast insertion and removal on the
// main graph rg. dtype gives each value's element type (Undefined when not
// known), opset the opset of a node's domain.
func (b *builder) ortFloat16Rewrite(rg *rawGraph) ortCastRewrite {
	cg := &castGraph{
		types:    map[string]ir.DType{},
		outputs:  map[string]bool{},
		consts:   map[string]bool{},
		names:    ir.NewNames(),
		nodeName: ir.NewNames(),
	}
	dtypeOf := func(name string) ir.DType {
		if t, ok := cg.types[name]; ok {
			return t
		}
		if v, ok := b.lookup(name); ok && v != nil {
			return v.DType
		}
		return ir.Undefined
	}
	for _, vi := range rg.pb.GetOutput() {
		cg.outputs[vi.GetName()] = true
	}
	for _, vi := range rg.pb.GetInput() {
		cg.consts[vi.GetName()] = true
		cg.names.Reserve(vi.GetName())
	}
	for _, t := range rg.inits {
		cg.consts[t.pb.GetName()] = true
		cg.names.Reserve(t.pb.GetName())
	}
	for _, rn := range rg.nodes {
		pb := rn.pb
		n := &castGraphNode{raw: rn, op: pb.GetOpType(), domain: pb.GetDomain(),
			in: append([]string{}, pb.GetInput()...), out: append([]string{}, pb.GetOutput()...),
			implicit: rawImplicit(rn)}
		if n.op == "Cast" && (n.domain == "" || n.domain == "ai.onnx") {
			n.to = castTo(rn)
		}
		for _, o := range n.out {
			cg.names.Reserve(o)
		}
		cg.nodeName.Reserve(pb.GetName())
		cg.nodes = append(cg.nodes, n)
	}
	for _, n := range cg.nodes {
		for _, names := range [][]string{n.in, n.out, n.implicit} {
			for _, s := range names {
				if s != "" {
					if _, ok := cg.types[s]; !ok {
						cg.types[s] = dtypeOf(s)
					}
				}
			}
		}
	}
	producer := map[string]*castGraphNode{}
	for _, n := range cg.nodes {
		for _, o := range n.out {
			if o != "" {
				producer[o] = n
			}
		}
	}
	isF16 := func(s string) bool { return s != "" && cg.types[s] == ir.Float16 }
	hasF16Input := func(n *castGraphNode) bool {
		for _, s := range n.in {
			if isF16(s) {
				return true
			}
		}
		return false
	}
	opsetOf := func(domain string) int64 {
		if domain == "" || domain == "ai.onnx" {
			return b.opset
		}
		for _, o := range b.rm.pb.GetOpsetImport() {
			if o.GetDomain() == domain {
				return o.GetVersion()
			}
		}
		return 1
	}

	// Partitioning: a node with a float16 input and no float16 kernel gets no
	// execution provider; InsertCastTransformer then runs it in float32.
	assigned := map[*castGraphNode]bool{}
	for _, n := range cg.nodes {
		assigned[n] = !hasF16Input(n) || ortHasFloat16Kernel(n.domain, n.op, opsetOf(n.domain))
	}
	needsCast := func(n *castGraphNode) bool { return !assigned[n] && hasF16Input(n) }
	cg.indexUses(cg.nodes)

	// ForceSingleNodeCPUFloat16ToFloat32, in node order with immediate effect
	// as onnxruntime does it.
	for _, n := range cg.nodes {
		if b.isolatedFloat16Node(cg, n, assigned, producer, needsCast) {
			assigned[n] = false
		}
	}

	// InsertCastTransformer, in a topological order (the builder's).
	order, err := orderNodes(rg.nodes)
	if err != nil {
		return ortCastRewrite{}
	}
	var inserted []*castGraphNode
	toF32 := map[string]string{} // float16 value -> its inserted float32 Cast's output
	newCast := func(from, to string, target int64) *castGraphNode {
		c := &castGraphNode{op: "Cast", in: []string{from}, out: []string{to}, to: target}
		inserted = append(inserted, c)
		return c
	}
	out := ortCastRewrite{}
	for _, idx := range order {
		n := cg.nodes[idx]
		if !needsCast(n) || hasGraphAttr(n.raw) {
			continue
		}
		n.f32 = true
		out.inFloat32++
		for i, s := range n.in {
			if !isF16(s) {
				continue
			}
			c, ok := toF32[s]
			if !ok {
				c = cg.names.Unique(insertedCastPrefix + s)
				cg.types[c] = ir.Float32
				newCast(s, c, int64(onnxpb.TensorProto_FLOAT))
				toF32[s] = c
			}
			n.in[i] = c
		}
		for i, s := range n.out {
			if !isF16(s) {
				continue
			}
			c := cg.names.Unique(insertedCastPrefix + s)
			cg.types[c] = ir.Float32
			n.out[i] = c
			newCast(c, s, int64(onnxpb.TensorProto_FLOAT16))
		}
		for _, a := range n.raw.attrs {
			if a.pb.GetName() == "dtype" && a.pb.GetI() == int64(onnxpb.TensorProto_FLOAT16) {
				n.dtypeFix = true
			}
		}
	}
	if out.inFloat32 == 0 && !hasCast(cg.nodes) {
		return ortCastRewrite{}
	}
	cg.nodes = append(cg.nodes, inserted...)
	cg.indexUses(cg.nodes)
	b.removeDuplicateCasts(cg, &out)
	out.nodes = cg.emit(&out)
	return out
}

// indexUses rebuilds the consumer index of the graph's live nodes.
func (cg *castGraph) indexUses(nodes []*castGraphNode) {
	cg.uses = map[string][]*castGraphNode{}
	cg.bodyUses = map[string]int{}
	for _, n := range nodes {
		if n.removed {
			continue
		}
		for _, s := range n.in {
			if s != "" {
				cg.uses[s] = append(cg.uses[s], n)
			}
		}
		for _, s := range n.implicit {
			if s != "" {
				cg.bodyUses[s]++
			}
		}
	}
}

// consumers lists the live nodes reading name, once per input slot and once
// per body read (onnxruntime's output edges).
func (cg *castGraph) consumers(name string) []*castGraphNode {
	var edges []*castGraphNode
	for _, n := range cg.uses[name] {
		if !n.removed {
			edges = append(edges, n)
		}
	}
	for i := 0; i < cg.bodyUses[name]; i++ {
		edges = append(edges, nil) // a body read: never a Cast
	}
	return edges
}

func hasCast(nodes []*castGraphNode) bool {
	for _, n := range nodes {
		if n.op == "Cast" && n.raw != nil {
			return true
		}
	}
	return false
}

// isolatedFloat16Node is onnxruntime's IsIsolatedFp16NodeOnCpu: a node with a
// float16 kernel whose float16 inputs all come from nodes run in float32 and
// whose float16 outputs all go to such nodes runs in float32 too. Only the
// inputs onnxruntime checks count: the first input of a variadic parameter
// (Concat, Max, Min), every input of the others; inputs that are initializers
// or graph inputs have no producer and pass.
func (b *builder) isolatedFloat16Node(cg *castGraph, n *castGraphNode, assigned map[*castGraphNode]bool,
	producer map[string]*castGraphNode, needsCast func(*castGraphNode) bool) bool {
	if !assigned[n] || n.raw == nil || hasGraphAttr(n.raw) {
		return false
	}
	inEdges := 0
	for _, s := range append(append([]string{}, n.in...), n.implicit...) {
		if s != "" && producer[s] != nil {
			inEdges++
		}
	}
	if inEdges == 0 {
		return false
	}
	for _, o := range n.out {
		if cg.outputs[o] {
			return false
		}
	}
	checked := n.in
	if variadicInput[n.op] && len(checked) > 1 {
		checked = checked[:1]
	}
	fp16Args := 0
	for _, s := range checked {
		if s == "" || cg.types[s] != ir.Float16 {
			continue
		}
		fp16Args++
		if p := producer[s]; p != nil && !needsCast(p) {
			return false
		}
	}
	if fp16Args == 0 {
		return false
	}
	fp16Outs := 0
	for _, o := range n.out {
		if o == "" || cg.types[o] != ir.Float16 {
			continue
		}
		fp16Outs++
		for _, c := range cg.consumers(o) {
			if c == nil || !needsCast(c) {
				return false
			}
		}
	}
	return fp16Outs > 0
}

// variadicInput: ops of ortFloat16Kernels whose first parameter is variadic.
var variadicInput = map[string]bool{"Concat": true, "Max": true, "Min": true, "SequenceConstruct": true}

func hasGraphAttr(rn *rawNode) bool {
	for _, a := range rn.attrs {
		if a.g != nil || len(a.graphs) > 0 {
			return true
		}
	}
	return false
}

// Type groups of onnxruntime's RemoveDuplicateCastTransformer.
const (
	groupUnknown = iota - 1
	groupBool
	groupInteger
	groupUnsigned
	groupFloat
)

func typeGroup(t ir.DType) int {
	switch t {
	case ir.Bool:
		return groupBool
	case ir.Int8, ir.Int16, ir.Int32, ir.Int64:
		return groupInteger
	case ir.Uint8, ir.Uint16, ir.Uint32, ir.Uint64:
		return groupUnsigned
	case ir.BFloat16, ir.Float64, ir.Float32, ir.Float16:
		return groupFloat
	}
	return groupUnknown
}

func bitLength(t ir.DType) int {
	switch t {
	case ir.Bool:
		return 1
	case ir.Uint8, ir.Int8:
		return 8
	case ir.Int16, ir.Uint16, ir.BFloat16, ir.Float16:
		return 16
	case ir.Int32, ir.Uint32, ir.Float32:
		return 32
	case ir.Int64, ir.Uint64, ir.Float64:
		return 64
	}
	return -1
}

// insertedCastPrefix names the Casts onnxruntime inserts; its remover treats a
// narrowing Cast with this name as precision-free.
const insertedCastPrefix = "InsertedPrecisionFreeCast_"

// unsafeCast is onnxruntime's UnsafeCast: a Cast whose removal could change
// values (a model's narrowing Cast is; an inserted one is not).
func unsafeCast(src, dst ir.DType, name string) bool {
	sg, dg := typeGroup(src), typeGroup(dst)
	if sg == groupUnknown || dg == groupUnknown {
		return true
	}
	if sg != groupBool && sg != groupUnsigned && dg == groupUnsigned {
		return true
	}
	if sg == groupFloat && dg != groupFloat {
		return true
	}
	sb, db := bitLength(src), bitLength(dst)
	if sg == groupUnsigned && dg == groupInteger {
		return db <= sb
	}
	if (sg == groupInteger || sg == groupUnsigned) && dg == groupFloat {
		return db <= sb
	}
	if (src == ir.Float16 && dst == ir.BFloat16) || (src == ir.BFloat16 && dst == ir.Float16) {
		return true
	}
	return sb > db && !strings.HasPrefix(name, insertedCastPrefix)
}

// removeDuplicateCasts is onnxruntime's RemoveDuplicateCastTransformer: one
// pass over the Casts in node order (the model's, then the inserted ones).
func (b *builder) removeDuplicateCasts(cg *castGraph, out *ortCastRewrite) {
	castType := func(n *castGraphNode) ir.DType {
		t, err := irDType(int32(n.to))
		if err != nil {
			return ir.Undefined
		}
		return t
	}
	isCast := func(n *castGraphNode) bool {
		return n != nil && n.op == "Cast" && (n.domain == "" || n.domain == "ai.onnx") && len(n.in) == 1 && len(n.out) == 1
	}
	name := func(n *castGraphNode) string {
		if n.raw == nil {
			return insertedCastPrefix
		}
		return n.raw.pb.GetName()
	}
	rewire := func(from, to string) {
		for _, n := range cg.uses[from] {
			if n.removed {
				continue
			}
			for i, s := range n.in {
				if s == from {
					n.in[i] = to
				}
			}
			cg.uses[to] = append(cg.uses[to], n)
		}
		delete(cg.uses, from)
	}
	usedByBody := func(name string) bool { return cg.bodyUses[name] > 0 }
	remove := func(n *castGraphNode) {
		n.removed = true
		if n.raw != nil {
			out.removed++
		}
	}
	for _, n := range cg.nodes {
		if n.removed || !isCast(n) || n.in[0] == "" {
			continue
		}
		src, dst := cg.types[n.in[0]], castType(n)
		lossy := unsafeCast(src, dst, name(n))
		children := cg.consumers(n.out[0])
		var drop, keep []*castGraphNode
		inconsistent := false
		for _, c := range children {
			if !isCast(c) {
				continue
			}
			src1, dst1 := cg.types[c.in[0]], castType(c)
			if lossy && unsafeCast(dst1, src1, name(c)) {
				inconsistent = true
				break
			}
			// A value a body reads is kept: its rewiring would reach into the
			// body, which this rewrite leaves alone.
			if !cg.outputs[c.out[0]] && !usedByBody(c.out[0]) && src == dst1 && src1 == dst {
				if !containsNode(drop, c) {
					drop = append(drop, c)
				}
			} else if !containsNode(keep, c) {
				keep = append(keep, c)
			}
		}
		if inconsistent {
			continue
		}
		for _, c := range drop {
			remove(c)
			rewire(c.out[0], n.in[0])
			out.unrounded++
		}
		nDrop, nKeep := 0, 0
		for _, c := range children {
			if containsNode(drop, c) {
				nDrop++
			} else if containsNode(keep, c) {
				nKeep++
			}
		}
		if len(children) > 0 && nDrop+nKeep == len(children) && !cg.outputs[n.out[0]] && !usedByBody(n.out[0]) {
			remove(n)
			rewire(n.out[0], n.in[0])
		}
	}
}

func containsNode(list []*castGraphNode, n *castGraphNode) bool {
	for _, m := range list {
		if m == n {
			return true
		}
	}
	return false
}

// emit turns the rewritten graph back into raw nodes: the model's nodes keep
// their protos (copied where inputs or outputs changed), inserted Casts get
// fresh names.
func (cg *castGraph) emit(out *ortCastRewrite) []*rawNode {
	var nodes []*rawNode
	for _, n := range cg.nodes {
		if n.removed {
			out.changedAny = true
			continue
		}
		if n.raw == nil {
			out.changedAny = true
			name := cg.nodeName.Unique(insertedCastPrefix + n.out[0])
			pb := &onnxpb.NodeProto{Name: &name, OpType: strPtr("Cast"), Input: n.in, Output: n.out}
			typ := onnxpb.AttributeProto_INT
			to := n.to
			nodes = append(nodes, &rawNode{pb: pb, attrs: []*rawAttr{{pb: &onnxpb.AttributeProto{Name: strPtr("to"), Type: &typ, I: &to}}}})
			continue
		}
		if slices.Equal(n.in, n.raw.pb.GetInput()) && slices.Equal(n.out, n.raw.pb.GetOutput()) && !n.dtypeFix {
			nodes = append(nodes, n.raw)
			continue
		}
		out.changedAny = true
		pb := cloneNodeProto(n.raw.pb)
		pb.Input, pb.Output = n.in, n.out
		attrs := n.raw.attrs
		if n.dtypeFix {
			attrs = nil
			for _, a := range n.raw.attrs {
				if a.pb.GetName() == "dtype" {
					fixed := *a
					apb := cloneAttrProto(a.pb)
					f32 := int64(onnxpb.TensorProto_FLOAT)
					apb.I = &f32
					fixed.pb = apb
					a = &fixed
				}
				attrs = append(attrs, a)
			}
		}
		nodes = append(nodes, &rawNode{pb: pb, attrs: attrs})
	}
	return nodes
}

func strPtr(s string) *string { return &s }

func cloneNodeProto(pb *onnxpb.NodeProto) *onnxpb.NodeProto {
	return proto.Clone(pb).(*onnxpb.NodeProto)
}

func cloneAttrProto(pb *onnxpb.AttributeProto) *onnxpb.AttributeProto {
	return proto.Clone(pb).(*onnxpb.AttributeProto)
}

// describe is the conversion report's line for a rewrite.
func (r ortCastRewrite) describe() string {
	return fmt.Sprintf("%d float16 node(s) computed in float32 and %d model Cast(s) removed, as onnxruntime %s does (%d value(s) not rounded to float16 between nodes)",
		r.inFloat32, r.removed, ortFloat16KernelsVersion, r.unrounded)
}
