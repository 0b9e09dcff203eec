package mindir

// A Conv2D with a residual input (ir.ConvResidualInput, made by
// anf_fusion.ConvElemwiseAddFusion) has no single MindSpore primitive:
// Conv2DFusion has no residual input. It is written as MindSpore Lite
// expresses the same computation, the conv (Conv2DFusion with
// NO_ACTIVATION, or whatever the conv alone lowers to) then
// AddFusion(conv, z) with the conv's activation_type (the form
// converter_lite's AddActivationFusion makes). The AddFusion carries the
// node_attr convResidualAttr; the reader joins such a pair into one Conv2D
// again, so a round trip keeps the node count. Pairs without the mark (any
// other writer's) are read as two nodes; anf_fusion fuses them on
// --fmk=MINDIR conversion.
//
// A Conv2D whose activation is one MindSpore Lite's convolution kernels do
// not apply (ir.IsEpilogueActivation: SIGMOID, TANH, HSWISH, SWISH, made by
// anf_fusion.ConvSwishActivationFusion) is written the same way: the conv
// (and its residual AddFusion, NO_ACTIVATION) then an Activation node with
// that activation_type, as converter_lite writes ONNX's Sigmoid, Tanh and
// HardSwish, carrying the node_attr convActivationAttr; the reader joins it
// into the conv it reads, which must be the node just before it.

import (
	"fmt"
	"slices"
	"strings"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// convResidualAttr marks an AddFusion that adds a Conv2D's residual input.
const convResidualAttr = "gkconv_conv_residual"

// convActivationAttr marks an Activation that is a Conv2D's fused activation.
const convActivationAttr = "gkconv_conv_activation"

// writtenApart says whether Conv2D node n is written as more than one
// MindIR node: it has a residual input or an epilogue activation.
func writtenApart(n *ir.Node) bool {
	act, _ := ir.FusedActivation(n)
	return n.Op == "Conv2D" && (ir.ConvResidual(n) != nil || ir.IsEpilogueActivation(act))
}

// convApart writes Conv2D node n (writtenApart) as the conv, then the
// AddFusion of its residual (with n's activation_type when it is RELU or
// RELU6), then an Activation for an epilogue activation.
func (gw *graphWriter) convApart(n *ir.Node, defined map[*ir.Value]bool) error {
	act, ok := ir.FusedActivation(n)
	if !ok || len(n.Inputs) > ir.ConvResidualInput+1 || len(n.Outputs) != 1 {
		return fmt.Errorf("mindir: node %s (Conv2D): activation_type %d with %d inputs is not writable", n.Name, act, len(n.Inputs))
	}
	if !ir.IsEpilogueActivation(act) {
		return gw.convResidual(n, n.Outputs, act, defined)
	}
	out := n.Outputs[0]
	mid := &ir.Value{Name: n.Name + "/pre_act", DType: out.DType, Shape: out.Shape}
	pre := &ir.Node{Name: strings.TrimPrefix(gw.name(mid), gw.prefix), Op: "Conv2D", Inputs: n.Inputs,
		Attrs: n.Attrs.Clone(), Outputs: []*ir.Value{mid}, Provenance: n.Provenance}
	delete(pre.Attrs, ir.AttrActivation)
	mid.Producer = pre
	var err error
	if ir.ConvResidual(n) != nil {
		err = gw.convResidual(pre, pre.Outputs, ir.ActNone, defined)
	} else {
		err = gw.node(pre, defined)
	}
	if err != nil {
		return err
	}
	an := &ir.Node{Name: n.Name, Op: "Activation", Inputs: []*ir.Value{mid}, Outputs: n.Outputs, Provenance: n.Provenance}
	m := elemActivation(an, act) // ir.ActSigmoid... are MindSpore's values
	m.nodeAttrs = append(m.nodeAttrs, aBool(convActivationAttr, true))
	return gw.emit(an, m, defined)
}

// convResidual writes Conv2D node n with a residual input as the conv then
// an AddFusion with activation_type act (RELU, RELU6 or none) producing outs.
func (gw *graphWriter) convResidual(n *ir.Node, outs []*ir.Value, act int64, defined map[*ir.Value]bool) error {
	if len(n.Inputs) != ir.ConvResidualInput+1 || len(n.Outputs) != 1 || (act != ir.ActNone && act != ir.ActReLU && act != ir.ActReLU6) {
		return fmt.Errorf("mindir: node %s (Conv2D): residual form with activation_type %d and %d inputs is not writable", n.Name, act, len(n.Inputs))
	}
	out := n.Outputs[0]
	ins := slices.Clone(n.Inputs[:ir.ConvResidualInput])
	for len(ins) > 0 && ins[len(ins)-1] == nil {
		ins = ins[:len(ins)-1] // no bias
	}
	attrs := n.Attrs.Clone()
	delete(attrs, ir.AttrActivation)
	mid := &ir.Value{Name: n.Name + "/conv", DType: out.DType, Shape: out.Shape}
	name := strings.TrimPrefix(gw.name(mid), gw.prefix)
	conv := &ir.Node{Name: name, Op: "Conv2D", Inputs: ins, Attrs: attrs, Outputs: []*ir.Value{mid}, Provenance: n.Provenance}
	mid.Producer = conv
	if err := gw.node(conv, defined); err != nil {
		return err
	}
	add := &ir.Node{Name: n.Name, Op: "Add", Inputs: []*ir.Value{mid, ir.ConvResidual(n)}, Outputs: outs, Provenance: n.Provenance}
	m, err := lowerArith("AddFusion")(&lowerCtx{gw: gw, n: add})
	if err != nil {
		return fmt.Errorf("mindir: node %s (Conv2D): its residual Add: %w", n.Name, err)
	}
	for _, a := range m.attrs {
		if a.GetName() == "activation_type" {
			a.I = ptr(act) // ir.ActReLU/ActReLU6 are MindSpore's values
		}
	}
	m.nodeAttrs = append(m.nodeAttrs, aBool(convResidualAttr, true))
	return gw.emit(add, m, defined)
}

// hasMark reports whether a node carries the node_attr mark.
func hasMark(np *pb.NodeProto, mark string) bool {
	for _, a := range np.NodeAttr {
		if a.GetName() == mark {
			return true
		}
	}
	return false
}

// joinConvActivation makes the marked Activation m of type act on a (the
// output of the conv read just before it) the conv's activation_type again;
// false when the pair is not the writer's form.
func (m *mnode) joinConvActivation(a *ir.Value, act int64) (*ir.Value, bool) {
	g := m.c.g
	conv := a.Producer
	if !ir.IsEpilogueActivation(act) || conv == nil || len(g.Nodes) == 0 || g.Nodes[len(g.Nodes)-1] != conv ||
		conv.Op != "Conv2D" || len(conv.Outputs) != 1 {
		return nil, false
	}
	if ca, _ := ir.FusedActivation(conv); ca != ir.ActNone {
		return nil, false
	}
	g.Nodes = g.Nodes[:len(g.Nodes)-1]
	m.c.names.Release(a.Name)
	attrs := conv.Attrs.Clone()
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	attrs[ir.AttrActivation] = ir.IntAttr(act)
	return m.emit("Conv2D", slices.Clone(conv.Inputs), 1, attrs).Outputs[0], true
}

// joinConvResidual makes the marked AddFusion m of a (the output of the
// conv read just before it) and z one Conv2D with residual z and m's
// activation again; false when the pair is not the writer's form.
func (m *mnode) joinConvResidual(a, z *ir.Value) (*ir.Value, bool) {
	g := m.c.g
	conv := a.Producer
	if conv == nil || len(g.Nodes) == 0 || g.Nodes[len(g.Nodes)-1] != conv || conv.Op != "Conv2D" ||
		len(conv.Inputs) > ir.ConvResidualInput || len(conv.Outputs) != 1 {
		return nil, false
	}
	if ca, _ := ir.FusedActivation(conv); ca != ir.ActNone {
		return nil, false
	}
	act, err := m.intArg(-1, msActNone, "activation_type")
	if err != nil || (act != msActNone && act != msActReLU && act != msActReLU6) {
		return nil, false
	}
	if z == nil || z.DType != a.DType || a.Shape == nil || !slices.Equal(z.Shape, a.Shape) {
		return nil, false
	}
	g.Nodes = g.Nodes[:len(g.Nodes)-1]
	m.c.names.Release(a.Name)
	ins := slices.Clone(conv.Inputs)
	for len(ins) < ir.ConvResidualInput {
		ins = append(ins, nil)
	}
	attrs := conv.Attrs.Clone()
	if act != msActNone {
		if attrs == nil {
			attrs = ir.Attrs{}
		}
		attrs[ir.AttrActivation] = ir.IntAttr(act)
	}
	return m.emit("Conv2D", append(ins, z), 1, attrs).Outputs[0], true
}
