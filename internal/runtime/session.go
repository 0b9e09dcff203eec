// Package runtime is the CPU executor behind `converter benchmark`: it runs
// an ir.Graph node by node with the op library in ops/, recycling buffers by
// liveness, and optionally times every node.
package runtime

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"

	// The op library registers itself.
	_ "gkconv/internal/runtime/ops/elementwise"
	"gkconv/internal/runtime/ops/nn" // also registers the nn ops
	_ "gkconv/internal/runtime/ops/tensorops"
)

// Options configure a Session.
type Options struct {
	Threads int  // worker threads; <= 0 means all cores
	Profile bool // record per-node times
	// Visit, when set, is called after each node has run, with its input
	// and output tensors (valid only during the call); an error stops the
	// run and Run returns it unchanged (`converter bisect` uses this).
	Visit func(n *ir.Node, in, out []*ir.Tensor) error
	// KernelPolicy decides how fused CPU kernels run; its zero value never
	// loads native code that came from the model file.
	KernelPolicy
	// NoLoadFusion runs every node as the graph has it: no load-time
	// fusion of dequantizing chains (quantchain.go) or of a Conv's
	// PRelu/LeakyRelu (convact.go); Visit implies it.
	NoLoadFusion bool
}

// Session executes one graph repeatedly.
type Session struct {
	g       *ir.Graph
	ctx     *opkernel.Ctx
	funcs   []opkernel.Func
	lastUse []int // per value index: last node index that reads it
	index   map[*ir.Value]int
	// nodeIn/nodeOut: per node, the value index of each input/output (-1:
	// omitted), so the node loop does no map lookups.
	nodeIn, nodeOut [][]int
	// The node loop's slabs, reused by every Run (run).
	args    []*ir.Tensor
	headers []ir.Tensor
	records []buffer
	pinned  []bool // graph inputs, consts and graph outputs never recycle
	pool    *pool
	prof    bool
	visit   func(n *ir.Node, in, out []*ir.Tensor) error
	samples [][]time.Duration // per node, its time in each run since ResetProfile
	runs    int
	pace    opkernel.Pacer // the node loop's scheduling points (Run is not called concurrently)
	memo    []shapeMemo    // per node, its last runtime shape inference (shapememo.go)

	prepWeights int   // weight copies built at preparation (packed MatMul B)
	prepBytes   int64 // their bytes

	kernels []KernelBinding // how each fused kernel was bound, in graph order
	chains  []*qchain       // per node, the load-time fused chain it runs (nil: none)

	// Output buffers (Recycle): issued holds the data of the output
	// tensors the latest Run allocated that the caller has not given back
	// (only the latest, so a session whose caller never recycles holds no
	// old outputs); spare the given-back buffers the next Run writes its
	// outputs into.
	outMu  sync.Mutex
	issued map[*byte]bool
	spare  [][]byte

	// subs holds, per control-flow node index, a session per body
	// (control.go), an empty map for the sequence ops (sequence.go); nil
	// for the nodes whose kernels write preallocated outputs.
	subs []map[string]*Session
}

// UnsupportedOpsError lists every node the op library cannot run.
type UnsupportedOpsError struct{ Nodes []string }

func (e *UnsupportedOpsError) Error() string {
	return fmt.Sprintf("%d node(s) have no CPU kernel: %s", len(e.Nodes), strings.Join(e.Nodes, ", "))
}

// NewSession checks that every op has a kernel (reporting all missing ones at
// once), does the ops' load-time work (a MatMul marked pack_b gets its
// constant B packed for the packed-B GEMM, once per session) and precomputes
// value lifetimes.
func NewSession(g *ir.Graph, opts Options) (*Session, error) {
	ctx := opkernel.DefaultCtx()
	if opts.Threads > 0 {
		ctx.Threads = opts.Threads
	}
	var chains map[*ir.Node]*qchain
	var convActs map[*ir.Node]*convAct
	if opts.Visit == nil {
		g = dequantizeWeights(g) // dequant_load.go
	}
	if opts.Visit == nil && !opts.NoLoadFusion {
		g, chains = fuseQuantChains(g)
		g, convActs = fuseConvActivations(g) // convact.go
	}
	s := &Session{g: g, ctx: ctx, index: map[*ir.Value]int{}, pool: newPool(), prof: opts.Profile, visit: opts.Visit}
	s.chains = make([]*qchain, len(g.Nodes))
	var missing []string
	var refused []error
	var fallbacks []string // why kernels run interpreted against the policy's wish
	prep := opkernel.NewPrep()
	s.subs = make([]map[string]*Session, len(g.Nodes))
	for ni, n := range g.Nodes {
		if ir.IsControlFlow(n.Op) {
			// Bodies get sessions of their own; what they cannot run is
			// listed with the path of graphs that holds it.
			subs, miss, err := newBodySessions(n, opts)
			missing = append(missing, miss...)
			if err != nil {
				refused = append(refused, nodeErr(n, err))
			}
			s.subs[ni] = subs
			for _, sub := range subs {
				s.kernels = append(s.kernels, sub.kernels...)
				s.prepWeights += sub.prepWeights
				s.prepBytes += sub.prepBytes
			}
			s.funcs = append(s.funcs, nil)
			continue
		}
		if ir.IsSequenceOp(n.Op) {
			// Computed directly, like control flow (sequence.go).
			s.subs[ni] = map[string]*Session{}
			s.funcs = append(s.funcs, nil)
			continue
		}
		if c := chains[n]; c != nil {
			s.chains[ni] = c
			prepare := nn.PrepareConvIntegerChain
			if c.conv.Op == "MatMulInteger" {
				prepare = nn.PrepareMatMulIntegerChain
			}
			f, err := prepare(prep, n, c.relu)
			if err != nil {
				refused = append(refused, nodeErr(n, err))
			}
			s.funcs = append(s.funcs, f)
			continue
		}
		if n.Op == ir.OpGraphKernel {
			// Fused kernels are bound now (policy, hash, ISA), not at the first run.
			f, b, err := bindGraphKernel(n, opts.KernelPolicy)
			if err != nil {
				refused = append(refused, fmt.Errorf("fused kernel %s: %w", n.Name, err))
			} else {
				s.kernels = append(s.kernels, b)
				if b.Fallback {
					fallbacks = append(fallbacks, b.Reason)
				}
			}
			s.funcs = append(s.funcs, f)
			continue
		}
		// Load-time work (packing marked MatMul weights) happens here, once.
		f, ok, err := prep.Bind(n)
		if !ok {
			missing = append(missing, fmt.Sprintf("%s: %s", n.Name, n.Op))
		}
		if a := convActs[n]; a != nil && f != nil {
			f = a.wrap(f)
		}
		if err != nil {
			refused = append(refused, nodeErr(n, err))
		}
		s.funcs = append(s.funcs, f)
	}
	s.prepWeights += prep.Weights
	s.prepBytes += prep.WeightBytes
	if len(missing) > 0 {
		return nil, &UnsupportedOpsError{Nodes: missing}
	}
	if len(refused) > 0 {
		return nil, errors.Join(refused...)
	}
	if len(fallbacks) > 0 {
		what := fmt.Sprintf("%d fused kernels run", len(fallbacks))
		if len(fallbacks) == 1 {
			what = "1 fused kernel runs"
		}
		opts.warn(fmt.Sprintf("%s interpreted (slower): %s", what, strings.Join(uniq(fallbacks), "; ")))
	}
	id := func(v *ir.Value) int {
		if i, ok := s.index[v]; ok {
			return i
		}
		i := len(s.lastUse)
		s.index[v] = i
		s.lastUse = append(s.lastUse, -1)
		s.pinned = append(s.pinned, false)
		return i
	}
	for _, v := range g.Inputs {
		s.pinned[id(v)] = true
	}
	for _, v := range g.Consts {
		s.pinned[id(v)] = true
	}
	for ni, n := range g.Nodes {
		for _, in := range n.Inputs {
			if in == nil {
				continue
			}
			i := id(in)
			if in.Const != nil {
				s.pinned[i] = true
			}
			s.lastUse[i] = ni
		}
		for _, o := range n.Outputs {
			id(o)
		}
	}
	for _, v := range g.Outputs {
		s.pinned[id(v)] = true
	}
	indices := func(vs []*ir.Value) []int {
		ix := make([]int, len(vs))
		for k, v := range vs {
			ix[k] = -1
			if v != nil {
				ix[k] = s.index[v]
			}
		}
		return ix
	}
	s.nodeIn, s.nodeOut = make([][]int, len(g.Nodes)), make([][]int, len(g.Nodes))
	for ni, n := range g.Nodes {
		s.nodeIn[ni], s.nodeOut[ni] = indices(n.Inputs), indices(n.Outputs)
	}
	s.samples = make([][]time.Duration, len(g.Nodes))
	s.memo = make([]shapeMemo, len(g.Nodes))
	if plan, tr := s.replay(); plan.Unknown == 0 {
		s.pool.slab = layoutSlab(tr.sizes, tr.born, tr.died)
	}
	return s, nil
}

// argCount is the number of input and output slots of all nodes.
func (s *Session) argCount() int {
	c := 0
	for ni := range s.nodeIn {
		c += len(s.nodeIn[ni]) + len(s.nodeOut[ni])
	}
	return c
}

// buffer is a pooled allocation shared by the values that alias it.
type buffer struct {
	data []byte
	refs int
}

// Run executes the graph once. inputs are matched to g.Inputs by position.
func (s *Session) Run(inputs []*ir.Tensor) ([]*ir.Tensor, error) { return s.run(inputs, true) }

// run executes the graph; a body's session (check false) takes its inputs'
// shapes as they come, since loop-carried values may change shape.
func (s *Session) run(inputs []*ir.Tensor, check bool) ([]*ir.Tensor, error) {
	g := s.g
	if len(inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("model has %d input(s), %d given", len(g.Inputs), len(inputs))
	}
	s.outMu.Lock()
	clear(s.issued)
	s.outMu.Unlock()
	vals := make([]*ir.Tensor, len(s.lastUse))
	bufs := make([]*buffer, len(s.lastUse))
	s.pool.begin()
	for i, v := range g.Inputs {
		t := inputs[i]
		if t == nil {
			return nil, fmt.Errorf("input %s: no data", v.Name)
		}
		if check {
			if err := CheckInput(v, t); err != nil {
				return nil, err
			}
		}
		vals[s.index[v]] = t
	}
	for _, v := range g.Consts {
		vals[s.index[v]] = v.Const
	}
	// Slabs: the node loop's tensor headers, buffer records and argument
	// slices come from these, made once per session instead of several
	// allocations per node (on models of many small ops those allocations
	// and the GC they caused were a third of a node's cost). Reusing them
	// is safe: a header or record is only read in the Run that wrote it,
	// and graph outputs, which callers keep, are not in them.
	if s.args == nil {
		s.args = make([]*ir.Tensor, s.argCount())
		s.headers = make([]ir.Tensor, len(s.lastUse))
		s.records = make([]buffer, len(s.lastUse))
	}
	args, headers, records := s.args, s.headers, s.records
	clear(args) // omitted inputs and outputs stay nil
	for ni, n := range g.Nodes {
		in := args[:len(n.Inputs):len(n.Inputs)]
		args = args[len(n.Inputs):]
		for k, vi := range s.nodeIn[ni] {
			if vi < 0 {
				continue
			}
			t := vals[vi]
			if t == nil && n.Inputs[k].Const != nil {
				t = n.Inputs[k].Const
			}
			if t == nil {
				return nil, fmt.Errorf("node %s: input %s has no value", n.Name, n.Inputs[k].Name)
			}
			in[k] = t
		}
		if s.subs[ni] != nil {
			// Control flow: the bodies decide the outputs' shapes.
			if err := s.runControl(ni, n, in, vals); err != nil {
				return nil, err
			}
			s.released(ni, n, bufs, vals)
			continue
		}
		var outShapes []typeShape
		var err error
		if c := s.chains[ni]; c != nil {
			// the ConvInteger's shape, in float32
			outShapes, err = s.memo[ni].outputTypes(c.conv, in[:len(c.conv.Inputs)])
			if err == nil {
				outShapes = []typeShape{{ir.Float32, outShapes[0].Shape}}
			}
		} else {
			outShapes, err = s.memo[ni].outputTypes(n, in)
		}
		if err != nil {
			return nil, err
		}
		out := args[:len(n.Outputs):len(n.Outputs)]
		args = args[len(n.Outputs):]
		for k, o := range n.Outputs {
			if o == nil || (o.Name == "" && outShapes[k].Shape == nil) {
				continue // an omitted optional output
			}
			os := outShapes[k]
			oi := s.nodeOut[ni][k]
			// An alias op's output has exactly the input's bytes: share the
			// buffer instead of copying.
			if ir.LookupOp(n.Op).IsAlias() && k == 0 && in[0] != nil && in[0].DType != ir.String {
				src := s.nodeIn[ni][0]
				t := &ir.Tensor{DType: os.DType, Shape: os.Shape, Data: in[0].Data}
				if b := bufs[src]; b != nil {
					b.refs++
					bufs[oi] = b
				} else if s.pinned[oi] {
					// A graph output aliasing a const or input: copy so callers own it.
					t.Data = append([]byte(nil), in[0].Data...)
				}
				if s.pinned[oi] {
					t.Shape = slices.Clone(os.Shape) // the caller's; os.Shape may be memoized
				}
				out[k] = t
				continue
			}
			cnt := ir.NumElements(os.Shape)
			if cnt < 0 {
				return nil, fmt.Errorf("node %s: output %d has unknown shape %v at run time", n.Name, k, os.Shape)
			}
			var t *ir.Tensor
			if os.DType == ir.String {
				t = ir.NewTensor(ir.String, os.Shape)
			} else if s.pinned[oi] {
				t = s.outputTensor(os.DType, os.Shape)
			} else {
				b := &records[oi]
				*b = buffer{data: s.pool.get(int(cnt) * os.DType.Size()), refs: 1}
				bufs[oi] = b
				t = &headers[oi]
				*t = ir.Tensor{DType: os.DType, Shape: os.Shape, Data: b.data}
			}
			out[k] = t
		}
		s.pace.Tick()
		var start time.Time
		if s.prof {
			start = time.Now()
		}
		if err := s.funcs[ni](s.ctx, n, in, out); err != nil {
			return nil, nodeErr(n, err)
		}
		if s.prof {
			s.timed(ni, time.Since(start))
		}
		for k, oi := range s.nodeOut[ni] {
			if oi >= 0 && out[k] != nil {
				vals[oi] = out[k]
			}
		}
		if s.visit != nil {
			if err := s.visit(n, in, out); err != nil {
				return nil, err
			}
		}
		s.released(ni, n, bufs, vals)
	}
	s.runs++
	res := make([]*ir.Tensor, len(g.Outputs))
	for i, v := range g.Outputs {
		res[i] = vals[s.index[v]]
		if res[i] == nil && v.Const != nil {
			res[i] = v.Const
		}
		if res[i] == nil {
			return nil, fmt.Errorf("graph output %s was not computed", v.Name)
		}
	}
	return res, nil
}

// outputTensor is a tensor for a graph output: in a buffer given back by
// Recycle when one is large enough (not cleared: as for the pool's buffers,
// the op writes every element, see opkernel.Func; clearing it cost a fifth
// of a memory-bound op's run), else newly allocated.
func (s *Session) outputTensor(dt ir.DType, shape []int64) *ir.Tensor {
	size := int(ir.NumElements(shape)) * dt.Size()
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.issued == nil {
		s.issued = map[*byte]bool{}
	}
	var data []byte
	for i, b := range s.spare {
		if cap(b) >= size {
			data = b[:size]
			s.spare = append(s.spare[:i], s.spare[i+1:]...)
			break
		}
	}
	if data == nil {
		data = make([]byte, size)
	}
	if size > 0 {
		s.issued[&data[0]] = true
	}
	return &ir.Tensor{DType: dt, Shape: append([]int64{}, shape...), Data: data}
}

// Recycle gives back output tensors of the latest Run that the caller no
// longer reads: the next Run writes its outputs into their memory instead
// of allocating new (a loop of Runs otherwise allocates its outputs every
// time, e.g. gpt_small's 2 MiB of logits, and the garbage collector and
// the fresh pages cost more than the copy-free reuse saves). Tensors that
// are not outputs this session allocated (a graph input or constant
// returned as an output, one already given back, or one from an earlier
// Run) are ignored.
func (s *Session) Recycle(ts []*ir.Tensor) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	for _, t := range ts {
		if t == nil || len(t.Data) == 0 || !s.issued[&t.Data[0]] {
			continue
		}
		delete(s.issued, &t.Data[0])
		s.spare = append(s.spare, t.Data)
		t.Data = nil // the caller's tensor no longer reaches the buffer
	}
}

// released returns to the pool the buffers whose last reader was node ni,
// and those of its outputs nobody reads.
func (s *Session) released(ni int, n *ir.Node, bufs []*buffer, vals []*ir.Tensor) {
	{
		// Release buffers whose last reader was this node.
		for _, i := range s.nodeIn[ni] {
			if i < 0 {
				continue
			}
			if s.lastUse[i] == ni && !s.pinned[i] && bufs[i] != nil {
				s.release(bufs[i])
				bufs[i] = nil
				vals[i] = nil
			}
		}
		// Outputs nobody reads die at once.
		for _, i := range s.nodeOut[ni] {
			if i < 0 {
				continue
			}
			if s.lastUse[i] < 0 && !s.pinned[i] && bufs[i] != nil {
				s.release(bufs[i])
				bufs[i] = nil
			}
		}
	}
}

func (s *Session) release(b *buffer) {
	b.refs--
	if b.refs == 0 {
		s.pool.put(b.data)
	}
}

type typeShape struct {
	DType ir.DType
	Shape []int64
}

// nodeErr prefixes err with "node NAME (OP): " unless the kernel already did
// (the kernel packages' errorf helpers do), so the prefix appears once.
func nodeErr(n *ir.Node, err error) error {
	if strings.HasPrefix(err.Error(), nodePrefix(n)) {
		return err
	}
	return fmt.Errorf("%s%w", nodePrefix(n), err)
}

func nodePrefix(n *ir.Node) string { return fmt.Sprintf("node %s (%s): ", n.Name, n.Op) }

// inferRuntime computes output types from the actual input tensors.
func inferRuntime(n *ir.Node, ins []*ir.Value) ([]typeShape, error) {
	tmp := &ir.Node{Name: n.Name, Op: n.Op, Inputs: ins, Attrs: n.Attrs, Body: n.Body}
	tmp.Outputs = make([]*ir.Value, len(n.Outputs))
	for k := range tmp.Outputs {
		tmp.Outputs[k] = &ir.Value{Producer: tmp, OutIndex: k}
		if n.Outputs[k] != nil {
			tmp.Outputs[k].Name = n.Outputs[k].Name
			// Start from the conversion-time types; inference refines them.
			tmp.Outputs[k].DType = n.Outputs[k].DType
			tmp.Outputs[k].Shape = n.Outputs[k].Shape
		}
	}
	if err := ir.InferNode(tmp); err != nil {
		return nil, err
	}
	res := make([]typeShape, len(tmp.Outputs))
	for k, o := range tmp.Outputs {
		if o.Shape == nil && n.Outputs[k] != nil && n.Outputs[k].Name != "" {
			return nil, fmt.Errorf("node %s (%s): output %d has unknown rank at run time", n.Name, n.Op, k)
		}
		res[k] = typeShape{o.DType, o.Shape}
	}
	return res, nil
}

// CheckInput reports whether t can feed graph input v: same dtype, same rank,
// every fixed dim equal, and as many bytes as the shape needs.
func CheckInput(v *ir.Value, t *ir.Tensor) error {
	if v.DType != ir.Undefined && t.DType != v.DType {
		return fmt.Errorf("input %s: model expects %s, got %s", v.Name, v.DType, t.DType)
	}
	if v.Shape != nil {
		if len(v.Shape) != len(t.Shape) {
			return fmt.Errorf("input %s: model expects shape %v (rank %d), got %v", v.Name, v.Shape, len(v.Shape), t.Shape)
		}
		for i, d := range v.Shape {
			if d >= 0 && d != t.Shape[i] {
				return fmt.Errorf("input %s: model expects shape %v, got %v (dim %d)", v.Name, v.Shape, t.Shape, i)
			}
		}
	}
	if t.DType != ir.String && int64(len(t.Data)) != t.NumElements()*int64(t.DType.Size()) {
		return fmt.Errorf("input %s: %d bytes of data for %s", v.Name, len(t.Data), t)
	}
	return nil
}

// PreparedWeights is the number and bytes of the weight copies built when
// the session was prepared (MatMul weights packed for the packed-B GEMM);
// runs build none.
func (s *Session) PreparedWeights() (int, int64) { return s.prepWeights, s.prepBytes }

// ArenaBytes is the peak of pooled intermediate memory, the control-flow
// bodies' pools (kept between runs) included.
func (s *Session) ArenaBytes() int64 {
	total := s.pool.peak
	for _, subs := range s.subs {
		for _, sub := range subs {
			total += sub.ArenaBytes()
		}
	}
	return total
}

// NodeTime is one row of the profile.
type NodeTime struct {
	Node, Op string
	Total    time.Duration
	PerRun   time.Duration // mean over runs
	Median   time.Duration // median over the runs that timed the node
}

// timed records node ni's time in this run.
func (s *Session) timed(ni int, d time.Duration) {
	s.samples[ni] = append(s.samples[ni], d)
}

// Profile returns per-node times over the runs since ResetProfile (mean
// and median: on a noisy machine the mean carries the outlier runs),
// slowest first by total.
func (s *Session) Profile() []NodeTime {
	out := make([]NodeTime, 0, len(s.g.Nodes))
	runs := s.runs
	if runs == 0 {
		runs = 1
	}
	for i, n := range s.g.Nodes {
		var total, med time.Duration
		for _, d := range s.samples[i] {
			total += d
		}
		if k := len(s.samples[i]); k > 0 {
			v := slices.Clone(s.samples[i])
			slices.Sort(v)
			med = v[k/2]
			if k%2 == 0 {
				med = (v[k/2-1] + v[k/2]) / 2
			}
		}
		out = append(out, NodeTime{n.Name, n.Op, total, total / time.Duration(runs), med})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Total > out[b].Total })
	return out
}

// ResetProfile clears accumulated times (after warm-up).
func (s *Session) ResetProfile() {
	for i := range s.samples {
		s.samples[i] = s.samples[i][:0]
	}
	s.runs = 0
}

// KernelISA says which code paths the op library's hand-written kernels
// run at (the packed GEMM's level, whether the packed conv's AVX-512 GEMM is
// on) and OpenBLAS's core type, for `benchmark`'s ISA line.
func KernelISA() (gemm string, convGEMM bool, blasCore string) {
	gemm, convGEMM = nn.ISA()
	return gemm, convGEMM, nn.BLASCoreName()
}

// Int8GEMMPath names the 8-bit integer GEMM path (QLinearMatMul,
// QLinearConv, MatMulInteger, ConvInteger) at the current ISA level.
func Int8GEMMPath() string { return nn.QGEMMKernel() }
