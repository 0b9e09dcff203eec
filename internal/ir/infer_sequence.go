package ir

import "fmt"

// Shape functions of the sequence ops: a Sequence value has no shape (nil);
// its element type travels in Value.Elem.

func setSequence(n *Node, elem DType) {
	o := n.Outputs[0]
	o.DType, o.Elem, o.Shape, o.DimNames = Sequence, elem, nil, nil
}

func seqInput(n *Node, i int) (*Value, error) {
	v := n.Input(i)
	if v == nil || (v.DType != Sequence && v.DType != Undefined) {
		return nil, fmt.Errorf("%s is not a sequence", inputDesc(n, i))
	}
	return v, nil
}

func inferSequenceEmpty(n *Node) error {
	setSequence(n, DType(n.Attrs.Int("dtype", int64(Float32))))
	return nil
}

func inferSequenceConstruct(n *Node) error {
	elem := dtypeOf(n.Inputs[0])
	for i, v := range n.Inputs {
		if v == nil || (v.DType != elem && v.DType != Undefined && elem != Undefined) {
			return fmt.Errorf("%s: every element must be a %s tensor", inputDesc(n, i), elem)
		}
	}
	setSequence(n, elem)
	return nil
}

// inferSequenceSame: SequenceInsert and SequenceErase keep the element type.
func inferSequenceSame(n *Node) error {
	s, err := seqInput(n, 0)
	if err != nil {
		return err
	}
	elem := s.Elem
	if n.Op == "SequenceInsert" {
		if t := dtypeOf(n.Input(1)); elem == Undefined {
			elem = t
		} else if t != Undefined && t != elem {
			return fmt.Errorf("inserts a %s tensor into a sequence of %s", t, elem)
		}
	}
	setSequence(n, elem)
	return nil
}

// inferSequenceElem: SequenceAt and ConcatFromSequence give a tensor of the
// element type whose shape depends on the data.
func inferSequenceElem(n *Node) error {
	s, err := seqInput(n, 0)
	if err != nil {
		return err
	}
	setOutput(n, 0, s.Elem, nil)
	return nil
}

func inferSequenceLength(n *Node) error {
	if _, err := seqInput(n, 0); err != nil {
		return err
	}
	setOutput(n, 0, Int64, []int64{})
	return nil
}

func inferSplitToSequence(n *Node) error {
	setSequence(n, dtypeOf(n.Inputs[0]))
	return nil
}
