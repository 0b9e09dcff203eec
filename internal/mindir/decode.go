package mindir

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	pb "gkconv/internal/mindir/mindirpb"
)

// The generated Unmarshal copies every bytes field, which would hold every
// weight twice (once in the mmap, once on the heap). decodeModel walks the
// messages that can carry tensors with protowire instead: each TensorProto's
// raw_data is kept as a sub-slice of the input, and all other fields of a
// message are gathered into a small buffer that the generated code decodes.

// maxDepth bounds the message nesting the decoder follows (graph > node >
// attribute > value ... > graph): the one nesting limit, ir.MaxGraphDepth.
// MindIR bodies are functions, named rather than nested, so a body's graph
// depth (reader.go, writer.go) is not limited by this.
const maxDepth = ir.MaxGraphDepth

var unmarshalOpts = proto.UnmarshalOptions{AllowPartial: true}

// handler consumes one length-delimited field; it returns false to let the
// field go to the generated decoder instead.
type handler func(num protowire.Number, v []byte) (bool, error)

// splitFields walks b, hands length-delimited fields to h and decodes all the
// fields h declines into m.
func splitFields(b []byte, m proto.Message, h handler) error {
	var rest []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		vn := protowire.ConsumeFieldValue(num, typ, b[n:])
		if vn < 0 {
			return protowire.ParseError(vn)
		}
		field := b[:n+vn]
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			ok, err := h(num, v)
			if err != nil {
				return err
			}
			if ok {
				b = b[n+vn:]
				continue
			}
		}
		rest = append(rest, field...)
		b = b[n+vn:]
	}
	if len(rest) == 0 {
		return nil
	}
	return unmarshalOpts.Unmarshal(rest, m)
}

func decodeModel(b []byte) (*pb.ModelProto, error) {
	mp := &pb.ModelProto{}
	var graph *pb.GraphProto
	var funcs []*pb.GraphProto
	var prims []*pb.PrimitiveProto
	err := splitFields(b, mp, func(num protowire.Number, v []byte) (bool, error) {
		switch num {
		case 7:
			g, err := decodeGraph(v, 1)
			if err != nil {
				return false, err
			}
			graph = g // proto2 optional message: the last one wins (merging is not needed here)
			return true, nil
		case 8:
			g, err := decodeGraph(v, 1)
			if err != nil {
				return false, err
			}
			funcs = append(funcs, g)
			return true, nil
		case 12:
			p := &pb.PrimitiveProto{}
			var attrs []*pb.AttributeProto
			err := splitFields(v, p, func(num protowire.Number, v []byte) (bool, error) {
				if num != 3 {
					return false, nil
				}
				a, err := decodeAttr(v, 1)
				attrs = append(attrs, a)
				return err == nil, err
			})
			if err != nil {
				return false, err
			}
			p.Attribute = append(p.Attribute, attrs...)
			prims = append(prims, p)
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if graph != nil {
		mp.Graph = graph
	}
	mp.Functions = append(mp.Functions, funcs...)
	mp.Primitives = append(mp.Primitives, prims...)
	return mp, nil
}

var errTooDeep = errors.New("messages nested too deeply")

func decodeGraph(b []byte, depth int) (*pb.GraphProto, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	g := &pb.GraphProto{}
	var nodes []*pb.NodeProto
	var params []*pb.TensorProto
	var attrs []*pb.AttributeProto
	err := splitFields(b, g, func(num protowire.Number, v []byte) (bool, error) {
		switch num {
		case 1:
			n, err := decodeNode(v, depth+1)
			nodes = append(nodes, n)
			return err == nil, err
		case 3:
			t, err := decodeTensor(v)
			params = append(params, t)
			return err == nil, err
		case 8:
			a, err := decodeAttr(v, depth+1)
			attrs = append(attrs, a)
			return err == nil, err
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	g.Node = append(g.Node, nodes...)
	g.Parameter = append(g.Parameter, params...)
	g.Attribute = append(g.Attribute, attrs...)
	return g, nil
}

func decodeNode(b []byte, depth int) (*pb.NodeProto, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	n := &pb.NodeProto{}
	var attrs []*pb.AttributeProto
	err := splitFields(b, n, func(num protowire.Number, v []byte) (bool, error) {
		if num != 5 {
			return false, nil
		}
		a, err := decodeAttr(v, depth+1)
		attrs = append(attrs, a)
		return err == nil, err
	})
	if err != nil {
		return nil, err
	}
	n.Attribute = append(n.Attribute, attrs...)
	return n, nil
}

func decodeAttr(b []byte, depth int) (*pb.AttributeProto, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	a := &pb.AttributeProto{}
	var t *pb.TensorProto
	var g *pb.GraphProto
	var tensors []*pb.TensorProto
	var graphs []*pb.GraphProto
	var values []*pb.AttributeProto
	err := splitFields(b, a, func(num protowire.Number, v []byte) (bool, error) {
		var err error
		switch num {
		case 6:
			t, err = decodeTensor(v)
		case 7:
			g, err = decodeGraph(v, depth+1)
		case 12:
			var x *pb.TensorProto
			x, err = decodeTensor(v)
			tensors = append(tensors, x)
		case 13:
			var x *pb.GraphProto
			x, err = decodeGraph(v, depth+1)
			graphs = append(graphs, x)
		case 17:
			var x *pb.AttributeProto
			x, err = decodeAttr(v, depth+1)
			values = append(values, x)
		default:
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return nil, err
	}
	if t != nil {
		a.T = t
	}
	if g != nil {
		a.G = g
	}
	a.Tensors = append(a.Tensors, tensors...)
	a.Graphs = append(a.Graphs, graphs...)
	a.Values = append(a.Values, values...)
	return a, nil
}

// decodeTensor decodes a TensorProto whose raw_data aliases b.
func decodeTensor(b []byte) (*pb.TensorProto, error) {
	t := &pb.TensorProto{}
	var raw []byte
	hasRaw := false
	err := splitFields(b, t, func(num protowire.Number, v []byte) (bool, error) {
		if num != 9 {
			return false, nil
		}
		raw, hasRaw = v, true
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("tensor: %w", err)
	}
	if hasRaw {
		if raw == nil {
			raw = []byte{}
		}
		t.RawData = raw[:len(raw):len(raw)]
	}
	return t, nil
}
