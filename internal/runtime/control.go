package runtime

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	"gkconv/internal/ir"
)

// Control flow (If, Loop, Scan): each body runs in a session of its own,
// built with the enclosing one. Bodies are closed graphs (the IR passes
// outer-scope values as the node's trailing captured inputs), so a body's
// session is an ordinary one that takes its inputs' shapes as they come.

// newBodySessions builds one session per body of n. missing lists, with the
// path of graphs that holds them (If_25/then_branch/LSTM_3: LSTM), the
// nodes no kernel runs.
func newBodySessions(n *ir.Node, opts Options) (map[string]*Session, []string, error) {
	subs := map[string]*Session{}
	var missing []string
	opts.Profile, opts.Visit = false, nil
	for _, sg := range n.Subgraphs() {
		sub, err := NewSession(sg.Graph, opts)
		if err != nil {
			if ue, ok := err.(*UnsupportedOpsError); ok {
				for _, m := range ue.Nodes {
					missing = append(missing, n.Name+"/"+sg.Attr+"/"+m)
				}
				continue
			}
			return nil, missing, fmt.Errorf("%s: %w", sg.Attr, err)
		}
		subs[sg.Attr] = sub
	}
	if len(missing) == 0 {
		switch n.Op {
		case "If":
			if subs["then_branch"] == nil || subs["else_branch"] == nil {
				return nil, nil, fmt.Errorf("needs then_branch and else_branch")
			}
		default:
			if subs["body"] == nil {
				return nil, nil, fmt.Errorf("needs a body")
			}
		}
	}
	return subs, missing, nil
}

// runControl runs control-flow node ni on its input tensors and stores its
// outputs in vals.
func (s *Session) runControl(ni int, n *ir.Node, in []*ir.Tensor, vals []*ir.Tensor) error {
	var start time.Time
	if s.prof {
		start = time.Now()
	}
	var out []*ir.Tensor
	var err error
	switch n.Op {
	case "If":
		out, err = s.runIf(ni, n, in)
	case "Loop":
		out, err = s.runLoop(ni, n, in)
	case "Scan":
		out, err = s.runScan(ni, n, in)
	default:
		f := seqOps[n.Op]
		if f == nil {
			err = fmt.Errorf("not a control-flow or sequence op")
			break
		}
		var t *ir.Tensor
		if t, err = f(n, in); err == nil {
			out = []*ir.Tensor{t}
		}
	}
	if err != nil {
		return nodeErr(n, err)
	}
	if len(out) != len(n.Outputs) {
		return nodeErr(n, fmt.Errorf("%d outputs computed, the node has %d", len(out), len(n.Outputs)))
	}
	// An output may be an input tensor passed through a body: the caller
	// recycles input buffers, so such an output gets its own bytes.
	for k, t := range out {
		for _, x := range in {
			if x != nil && sharesData(t, x) {
				out[k] = t.Clone()
				break
			}
		}
	}
	if s.prof {
		s.timed(ni, time.Since(start))
	}
	for k, o := range n.Outputs {
		if o != nil {
			vals[s.index[o]] = out[k]
		}
	}
	if s.visit != nil {
		return s.visit(n, in, out)
	}
	return nil
}

func sharesData(a, b *ir.Tensor) bool {
	if len(a.Data) == 0 || len(b.Data) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(&a.Data[0])), uintptr(unsafe.Pointer(&b.Data[0]))
	return pa < pb+uintptr(len(b.Data)) && pb < pa+uintptr(len(a.Data))
}

// scalarTrue reads a one-element condition tensor.
func scalarTrue(t *ir.Tensor, what string) (bool, error) {
	if t.NumElements() != 1 {
		return false, fmt.Errorf("%s has %d elements, want 1", what, t.NumElements())
	}
	v, err := t.Int64s()
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return v[0] != 0, nil
}

func (s *Session) runIf(ni int, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	c, err := scalarTrue(in[0], "condition")
	if err != nil {
		return nil, err
	}
	br := "else_branch"
	if c {
		br = "then_branch"
	}
	out, err := s.subs[ni][br].run(in[1:], false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", br, err)
	}
	return out, nil
}

func (s *Session) runLoop(ni int, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	N, K, err := ir.LoopCounts(n)
	if err != nil {
		return nil, err
	}
	body := s.subs[ni]["body"]
	trips := int64(-1)
	if in[0] != nil {
		v, err := in[0].Int64s()
		if err != nil || len(v) != 1 {
			return nil, fmt.Errorf("trip count M must be one integer")
		}
		trips = v[0]
	}
	cond := true
	if in[1] != nil {
		if cond, err = scalarTrue(in[1], "cond"); err != nil {
			return nil, err
		}
	}
	carried := append([]*ir.Tensor(nil), in[2:2+N]...)
	caps := in[2+N:]
	scans := make([][]*ir.Tensor, K)
	args := make([]*ir.Tensor, 2+N+len(caps))
	for it := int64(0); (trips < 0 || it < trips) && cond; it++ {
		args[0] = scalarTensor(ir.Int64, it)
		args[1] = scalarTensor(ir.Bool, 1)
		copy(args[2:], carried)
		copy(args[2+N:], caps)
		res, err := body.run(args, false)
		if err != nil {
			return nil, fmt.Errorf("body, iteration %d: %w", it, err)
		}
		if cond, err = scalarTrue(res[0], "body condition output"); err != nil {
			return nil, err
		}
		copy(carried, res[1:1+N])
		for j := range K {
			scans[j] = append(scans[j], res[1+N+j])
		}
	}
	out := append([]*ir.Tensor(nil), carried...)
	for j := range K {
		t, err := stack(scans[j], 0, false, n.Outputs[N+j])
		if err != nil {
			return nil, fmt.Errorf("scan output %d: %w", j, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func (s *Session) runScan(ni int, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	l, err := ir.ScanCounts(n)
	if err != nil {
		return nil, err
	}
	body := s.subs[ni]["body"]
	steps := int64(-1)
	axes := make([]int, l.ScanIns)
	for j := range l.ScanIns {
		x := in[l.States+j]
		ax := int(l.InAxes[j])
		if ax < 0 {
			ax += len(x.Shape)
		}
		if ax < 0 || ax >= len(x.Shape) {
			return nil, fmt.Errorf("scan_input_axes[%d]=%d is out of range for scan input of shape %v", j, l.InAxes[j], x.Shape)
		}
		axes[j] = ax
		if steps < 0 {
			steps = x.Shape[ax]
		} else if x.Shape[ax] != steps {
			return nil, fmt.Errorf("scan input %d has %d steps, the first %d", j, x.Shape[ax], steps)
		}
	}
	state := append([]*ir.Tensor(nil), in[:l.States]...)
	args := make([]*ir.Tensor, len(in))
	copy(args[l.States+l.ScanIns:], in[l.States+l.ScanIns:])
	scans := make([][]*ir.Tensor, l.ScanOuts)
	for t := range steps {
		copy(args, state)
		for j := range l.ScanIns {
			idx := t
			if l.InDirs[j] != 0 {
				idx = steps - 1 - t
			}
			args[l.States+j] = sliceAt(in[l.States+j], axes[j], idx)
		}
		res, err := body.run(args, false)
		if err != nil {
			return nil, fmt.Errorf("body, step %d: %w", t, err)
		}
		copy(state, res[:l.States])
		for j := range l.ScanOuts {
			scans[j] = append(scans[j], res[l.States+j])
		}
	}
	out := append([]*ir.Tensor(nil), state...)
	for j := range l.ScanOuts {
		parts := scans[j]
		ax := int(l.OutAxes[j])
		r := -1
		switch static := n.Outputs[l.States+j]; {
		case len(parts) > 0:
			r = len(parts[0].Shape) + 1
		case static != nil && static.Shape != nil:
			r = len(static.Shape)
		}
		if r >= 0 {
			if ax < 0 {
				ax += r
			}
			if ax < 0 || ax >= r {
				return nil, fmt.Errorf("scan_output_axes[%d]=%d is out of range for rank %d", j, l.OutAxes[j], r)
			}
		} else if ax < 0 {
			ax = 0
		}
		t, err := stack(parts, ax, l.OutDirs[j] != 0, n.Outputs[l.States+j])
		if err != nil {
			return nil, fmt.Errorf("scan output %d: %w", j, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func scalarTensor(dt ir.DType, v int64) *ir.Tensor {
	t := ir.NewTensor(dt, []int64{})
	switch dt {
	case ir.Bool:
		t.Data[0] = byte(v)
	default:
		for i := range 8 {
			t.Data[i] = byte(v >> (8 * i))
		}
	}
	return t
}

// sliceAt is x[..., idx, ...] along axis (the axis removed).
func sliceAt(x *ir.Tensor, axis int, idx int64) *ir.Tensor {
	outer := ir.NumElements(x.Shape[:axis])
	inner := ir.NumElements(x.Shape[axis+1:])
	n := x.Shape[axis]
	shape := append(append([]int64{}, x.Shape[:axis]...), x.Shape[axis+1:]...)
	t := ir.NewTensor(x.DType, shape)
	if x.DType == ir.String {
		for o := range outer {
			copy(t.Strings[o*inner:(o+1)*inner], x.Strings[(o*n+idx)*inner:])
		}
		return t
	}
	es := int64(x.DType.Size())
	for o := range outer {
		copy(t.Data[o*inner*es:(o+1)*inner*es], x.Data[((o*n+idx)*inner)*es:])
	}
	return t
}

// stack joins equally shaped parts along a new axis (in reverse order when
// reverse); no parts give a tensor with 0 along the axis, shaped after the
// node's static output (unknown dims 0).
func stack(parts []*ir.Tensor, axis int, reverse bool, static *ir.Value) (*ir.Tensor, error) {
	if len(parts) == 0 {
		shape := []int64{0}
		dt := ir.Float32
		if static != nil {
			if static.DType != ir.Undefined {
				dt = static.DType
			}
			if static.Shape != nil {
				shape = make([]int64, len(static.Shape))
				for i, d := range static.Shape {
					shape[i] = max(d, 0)
				}
				if axis < len(shape) {
					shape[axis] = 0
				}
			}
		}
		return ir.NewTensor(dt, shape), nil
	}
	p0 := parts[0]
	for i, p := range parts {
		if p.DType != p0.DType || !slices.Equal(p.Shape, p0.Shape) {
			return nil, fmt.Errorf("step %d gives %s%v, step 0 %s%v: scan outputs must keep their shape", i, p.DType, p.Shape, p0.DType, p0.Shape)
		}
	}
	steps := int64(len(parts))
	shape := append(append(append([]int64{}, p0.Shape[:axis]...), steps), p0.Shape[axis:]...)
	t := ir.NewTensor(p0.DType, shape)
	outer := ir.NumElements(p0.Shape[:axis])
	inner := ir.NumElements(p0.Shape[axis:])
	es := int64(p0.DType.Size())
	for s, p := range parts {
		pos := int64(s)
		if reverse {
			pos = steps - 1 - int64(s)
		}
		for o := range outer {
			dst := (o*steps + pos) * inner
			if p0.DType == ir.String {
				copy(t.Strings[dst:dst+inner], p.Strings[o*inner:])
			} else {
				copy(t.Data[dst*es:(dst+inner)*es], p.Data[o*inner*es:])
			}
		}
	}
	return t, nil
}
