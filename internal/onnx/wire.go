package onnx

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"gkconv/internal/ir"
	"gkconv/internal/onnx/onnxpb"
)

// The generated types copy every bytes field on Unmarshal, so the messages
// that can hold weights (GraphProto.initializer, NodeProto attributes with
// tensors, TensorProto.raw_data) are walked here with protowire: raw_data
// stays a sub-slice of the input. Everything else is small and is decoded
// with the generated types from the bytes of its remaining fields.

// Field numbers walked by hand.
const (
	modelGraph        = 7
	modelTrainingInfo = 20
	graphNode         = 1
	graphInitializer  = 5
	nodeAttribute     = 5
	attrT             = 5
	attrG             = 6
	attrTensors       = 10
	attrGraphs        = 11
	tensorRawData     = 9
)

type rawModel struct {
	pb    *onnxpb.ModelProto // all fields but graph and training_info
	graph *rawGraph          // nil when the model has no graph
}

type rawGraph struct {
	pb    *onnxpb.GraphProto // all fields but node and initializer
	nodes []*rawNode
	inits []*rawTensor
}

type rawNode struct {
	pb    *onnxpb.NodeProto // all fields but attribute
	attrs []*rawAttr
}

type rawAttr struct {
	pb      *onnxpb.AttributeProto // all fields but t, tensors, g and graphs
	t       *rawTensor
	tensors []*rawTensor
	g       *rawGraph // a GRAPH attribute (control-flow body)
	graphs  []*rawGraph
}

type rawTensor struct {
	pb     *onnxpb.TensorProto // all fields but raw_data
	raw    []byte              // aliases the input buffer
	hasRaw bool
}

// splitFields walks one message: fields for which lazy reports true must be
// length-delimited and go to visit (their payload aliases b); the others are
// returned as one buffer for proto.Unmarshal. When no field is lazy, b itself
// is returned.
func splitFields(b []byte, lazy func(protowire.Number) bool, visit func(protowire.Number, []byte) error) ([]byte, error) {
	var rest []byte
	copied := false
	for pos := 0; pos < len(b); {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return nil, fmt.Errorf("bad field tag at byte %d: %w", pos, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[pos+n:])
		if m < 0 {
			return nil, fmt.Errorf("bad value of field %d at byte %d: %w", num, pos, protowire.ParseError(m))
		}
		end := pos + n + m
		if !lazy(num) {
			if copied {
				rest = append(rest, b[pos:end]...)
			}
			pos = end
			continue
		}
		if typ != protowire.BytesType {
			return nil, fmt.Errorf("field %d at byte %d has wire type %d, want length-delimited", num, pos, typ)
		}
		if !copied {
			rest = append(make([]byte, 0, pos), b[:pos]...)
			copied = true
		}
		v, _ := protowire.ConsumeBytes(b[pos+n : end])
		if err := visit(num, v); err != nil {
			return nil, err
		}
		pos = end
	}
	if !copied {
		return b, nil
	}
	return rest, nil
}

var unmarshal = proto.UnmarshalOptions{RecursionLimit: 100}

func decodeModel(b []byte) (*rawModel, error) {
	var graphChunks [][]byte
	rest, err := splitFields(b, func(n protowire.Number) bool {
		return n == modelGraph || n == modelTrainingInfo
	}, func(n protowire.Number, v []byte) error {
		if n == modelGraph {
			graphChunks = append(graphChunks, v)
		}
		return nil // training_info is ignored: inference only
	})
	if err != nil {
		return nil, fmt.Errorf("ModelProto: %w", err)
	}
	m := &rawModel{pb: &onnxpb.ModelProto{}}
	if err := unmarshal.Unmarshal(rest, m.pb); err != nil {
		return nil, fmt.Errorf("ModelProto: %w", err)
	}
	if len(graphChunks) > 0 {
		if m.graph, err = decodeGraph(graphChunks, 0); err != nil {
			return nil, wrap(err, "ModelProto.graph")
		}
	}
	return m, nil
}

// wrap prefixes err with where, except an *ir.DepthError: that one goes up
// as it is, so a chain nested to the limit gives one short line, not one
// prefix per level.
func wrap(err error, where string) error {
	var de *ir.DepthError
	if errors.As(err, &de) {
		return err
	}
	return fmt.Errorf("%s: %w", where, err)
}

// decodeGraph decodes the occurrences of a graph field; protobuf merges
// repeated occurrences of a message field, which for the walked repeated
// fields means appending and for the rest decoding their concatenation.
// depth is the graph's nesting depth (the main graph 0, a body one more
// than the graph of its node): the nodes' graph attributes are decoded only
// while they stay within ir.MaxGraphDepth, so the recursion is bounded
// whatever the file holds, and a chain too deep costs only its first levels.
func decodeGraph(chunks [][]byte, depth int) (*rawGraph, error) {
	g := &rawGraph{pb: &onnxpb.GraphProto{}}
	var rest []byte
	for _, c := range chunks {
		r, err := splitFields(c, func(n protowire.Number) bool {
			return n == graphNode || n == graphInitializer
		}, func(n protowire.Number, v []byte) error {
			if n == graphNode {
				node, err := decodeNode(v, depth, len(g.nodes))
				if err != nil {
					return wrap(err, fmt.Sprintf("node %d", len(g.nodes)))
				}
				g.nodes = append(g.nodes, node)
				return nil
			}
			t, err := decodeTensor(v)
			if err != nil {
				return fmt.Errorf("initializer %d: %w", len(g.inits), err)
			}
			g.inits = append(g.inits, t)
			return nil
		})
		if err != nil {
			return nil, err
		}
		rest = append(rest, r...)
	}
	if err := unmarshal.Unmarshal(rest, g.pb); err != nil {
		return nil, err
	}
	return g, nil
}

// decodeNode decodes node idx of a graph at the given depth. Its own fields
// are decoded first, so that a depth error can name the node.
func decodeNode(b []byte, depth, idx int) (*rawNode, error) {
	node := &rawNode{pb: &onnxpb.NodeProto{}}
	var attrs [][]byte
	rest, err := splitFields(b, func(n protowire.Number) bool { return n == nodeAttribute },
		func(_ protowire.Number, v []byte) error {
			attrs = append(attrs, v)
			return nil
		})
	if err != nil {
		return nil, err
	}
	if err := unmarshal.Unmarshal(rest, node.pb); err != nil {
		return nil, err
	}
	name := node.pb.GetName()
	if name == "" {
		name = fmt.Sprintf("%s_%d", node.pb.GetOpType(), idx) // as the builder names it
	}
	for i, v := range attrs {
		a, err := decodeAttr(v, depth, name)
		if err != nil {
			return nil, wrap(err, fmt.Sprintf("attribute %d", i))
		}
		node.attrs = append(node.attrs, a)
	}
	return node, nil
}

// decodeAttr decodes an attribute of node (its name, for errors) in a graph
// at the given depth; the graphs it holds are one deeper.
func decodeAttr(b []byte, depth int, node string) (*rawAttr, error) {
	a := &rawAttr{pb: &onnxpb.AttributeProto{}}
	var gChunks, graphs [][]byte
	rest, err := splitFields(b, func(n protowire.Number) bool {
		return n == attrT || n == attrTensors || n == attrG || n == attrGraphs
	},
		func(n protowire.Number, v []byte) error {
			switch n {
			case attrG:
				gChunks = append(gChunks, v)
				return nil
			case attrGraphs:
				graphs = append(graphs, v)
				return nil
			}
			t, err := decodeTensor(v)
			if err != nil {
				return err
			}
			if n == attrT {
				a.t = t
			} else {
				a.tensors = append(a.tensors, t)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	if err := unmarshal.Unmarshal(rest, a.pb); err != nil {
		return nil, err
	}
	if len(gChunks) == 0 && len(graphs) == 0 {
		return a, nil
	}
	if depth+1 > ir.MaxGraphDepth {
		return nil, ir.NodeDepthError(node, a.pb.GetName())
	}
	for _, v := range graphs {
		g, err := decodeGraph([][]byte{v}, depth+1)
		if err != nil {
			return nil, wrap(err, fmt.Sprintf("graphs[%d]", len(a.graphs)))
		}
		a.graphs = append(a.graphs, g)
	}
	if len(gChunks) > 0 {
		if a.g, err = decodeGraph(gChunks, depth+1); err != nil {
			return nil, wrap(err, "graph "+a.pb.GetName())
		}
	}
	return a, nil
}

func decodeTensor(b []byte) (*rawTensor, error) {
	t := &rawTensor{pb: &onnxpb.TensorProto{}}
	rest, err := splitFields(b, func(n protowire.Number) bool { return n == tensorRawData },
		func(_ protowire.Number, v []byte) error {
			t.raw, t.hasRaw = v, true
			return nil
		})
	if err != nil {
		return nil, err
	}
	if err := unmarshal.Unmarshal(rest, t.pb); err != nil {
		return nil, err
	}
	return t, nil
}
