package fusion

import (
	"fmt"
	"slices"
	"strings"

	"gkconv/internal/ir"
)

var transformBinary = map[string]bool{"Add": true, "Sub": true, "Mul": true, "RealDiv": true, "Maximum": true, "Minimum": true}

// runTransformOpOptimizer is transform_op_optimizer, reduced to its core
// case: a binary elementwise op whose two inputs are the same Transpose of
// equal shapes computes first and transposes once (2 transforms -> 1).
func runTransformOpOptimizer(st *state) (bool, string, error) {
	total := 0
	for _, k := range kernels(st.g) {
		e := bodyEditor(k.Body)
		for changed := true; changed; {
			changed = false
			for _, n := range k.Body.Nodes {
				if !transformBinary[n.Op] || len(n.Inputs) != 2 {
					continue
				}
				a, b := prod(n.Inputs[0], "Transpose"), prod(n.Inputs[1], "Transpose")
				if a == nil || b == nil || a == b || !e.SoleUse(n.Inputs[0], n) || !e.SoleUse(n.Inputs[1], n) {
					continue
				}
				pa, pb := a.Attrs.Ints("perm", nil), b.Attrs.Ints("perm", nil)
				if len(pa) == 0 || !slices.Equal(pa, pb) || !slices.Equal(a.Inputs[0].Shape, b.Inputs[0].Shape) {
					continue
				}
				y := emitLike(e, n, n.Op, n.Attrs, a.Inputs[0], b.Inputs[0])
				t := emitLike(e, n, "Transpose", a.Attrs, y)
				if keepsShape(t, n) == nil {
					continue
				}
				k.Body.ReplaceUses(n.Outputs[0], t)
				_ = k.Body.TopoSort()
				k.Body.RemoveDead()
				e.RefreshUses()
				total++
				changed = true
				break
			}
		}
	}
	if total == 0 {
		return false, "", nil
	}
	return true, fmt.Sprintf("%d transposes moved", total), nil
}

// reach reports whether to is reachable from from through top-level edges.
func reach(from, to *ir.Node, users map[*ir.Value][]*ir.Node) bool {
	seen := map[*ir.Node]bool{}
	stack := []*ir.Node{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, o := range n.Outputs {
			for _, u := range users[o] {
				if u == to {
					return true
				}
				if !seen[u] {
					seen[u] = true
					stack = append(stack, u)
				}
			}
		}
	}
	return false
}

// Stitch thresholds of MindSpore's GPU splitter
// (mindspore/python/mindspore/_extends/graph_kernel/model/graph_split.py).
const (
	stitchMinReduceInput = 12 * 1024
)

// runStitch is reduce stitching (opt_level 3, GPU/Ascend): a kernel whose
// reduce result feeds the next kernel is fused with it when the reduce input
// is large enough; the fused kernel carries buffer_stitch naming the
// stitched tensors, which the kernel compiler keeps in on-chip memory.
func runStitch(st *state) (bool, string, error) {
	g := st.g
	stitched := 0
	for changed := true; changed; {
		changed = false
		users := g.Consumers()
		for _, k1 := range kernels(g) {
			if k1.Attrs.Has(ir.GKStitch) {
				continue
			}
			for i, o := range k1.Outputs {
				bo := k1.Body.Outputs[i]
				if bo.Producer == nil || opPattern(bo.Producer) != ir.PatternReduce {
					continue
				}
				in := bo.Producer.Inputs[0]
				if ir.NumElements(in.Shape) < stitchMinReduceInput {
					continue
				}
				us := users[o]
				if len(us) != 1 || us[0].Op != ir.OpGraphKernel || us[0] == k1 {
					continue
				}
				k2 := us[0]
				cyclic := false
				for _, v := range k2.Inputs {
					if v != nil && v.Producer != nil && v.Producer != k1 && reach(k1, v.Producer, users) {
						cyclic = true
					}
				}
				if cyclic {
					continue
				}
				name := o.Name
				k, err := st.fuseNodes([]*ir.Node{k1, k2}, "stitch", true)
				if err != nil {
					return false, "", err
				}
				k.Attrs[ir.GKStitch] = ir.StringsAttr(name)
				finalizeKernel(k)
				stitched++
				changed = true
				break
			}
			if changed {
				break
			}
		}
	}
	if stitched == 0 {
		return false, "no reduce output large enough to stitch", nil
	}
	return true, fmt.Sprintf("%d stitches", stitched), nil
}

// maxParallel is ParallelOpFusion's limit of kernels per group.
const maxParallel = 7

// runParallelFusion marks groups of independent kernels that read a common
// value (opt_level 3, GPU/Ascend) with parallel_fusion_group, so the kernel
// compiler can launch them as one block-fused kernel.
func runParallelFusion(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	grouped := map[*ir.Node]bool{}
	groups := 0
	for _, v := range allValues(g) {
		var cands []*ir.Node
		for _, u := range users[v] {
			if u.Op == ir.OpGraphKernel && !grouped[u] && !u.Attrs.Has(ir.GKStitch) && !slices.Contains(cands, u) {
				cands = append(cands, u)
			}
		}
		var grp []*ir.Node
		for _, c := range cands {
			indep := true
			for _, o := range grp {
				if reach(c, o, users) || reach(o, c, users) {
					indep = false
					break
				}
			}
			if indep && len(grp) < maxParallel {
				grp = append(grp, c)
			}
		}
		if len(grp) < 2 {
			continue
		}
		groups++
		for _, k := range grp {
			grouped[k] = true
			k.Attrs[ir.GKParallelGroup] = ir.StringAttr(fmt.Sprintf("parallel_%d", groups))
		}
	}
	if groups == 0 {
		return false, "no independent kernels share an input", nil
	}
	return true, fmt.Sprintf("%d parallel groups", groups), nil
}

func allValues(g *ir.Graph) []*ir.Value {
	vs := append([]*ir.Value{}, g.Inputs...)
	for _, n := range g.Nodes {
		vs = append(vs, n.Outputs...)
	}
	return vs
}

// runOpCombiner is graph_kernel_op_combiner (opt_level 3): MatMuls that
// share their left operand and have constant 2-D right operands become one
// MatMul over the concatenated weights followed by a Split.
func runOpCombiner(st *state) (bool, string, error) {
	g := st.g
	users := g.Consumers()
	combined := 0
	for _, a := range allValues(g) {
		var mms []*ir.Node
		for _, u := range users[a] {
			if u.Op == "MatMul" && len(u.Inputs) == 2 && u.Inputs[0] == a && combinableMatMul(u, a) && !slices.Contains(mms, u) {
				mms = append(mms, u)
			}
		}
		if len(mms) < 2 {
			continue
		}
		if err := st.combineMatMuls(a, mms); err != nil {
			return false, "", err
		}
		combined++
	}
	if combined == 0 {
		return false, "no MatMuls share an input", nil
	}
	if err := g.TopoSort(); err != nil {
		return false, "", err
	}
	return true, fmt.Sprintf("%d MatMul groups combined", combined), nil
}

func combinableMatMul(n *ir.Node, a *ir.Value) bool {
	w := n.Inputs[1]
	if w.Const == nil || w.DType != a.DType || len(w.Shape) != 2 || !a.ShapeKnown() || len(a.Shape) < 1 {
		return false
	}
	if n.Attrs.Int("transpose_a", 0) != 0 || n.Attrs.Int("transpose_b", 0) != 0 || n.Attrs.Has(ir.AttrActivation) {
		return false
	}
	return w.DType.Size() > 0 && a.Shape[len(a.Shape)-1] == w.Shape[0]
}

func (st *state) combineMatMuls(a *ir.Value, mms []*ir.Node) error {
	k := mms[0].Inputs[1].Shape[0]
	es := mms[0].Inputs[1].DType.Size()
	var total int64
	var split []int64
	for _, m := range mms {
		if m.Inputs[1].Shape[0] != k {
			return nil
		}
		split = append(split, m.Inputs[1].Shape[1])
		total += m.Inputs[1].Shape[1]
	}
	w := ir.NewTensor(mms[0].Inputs[1].DType, []int64{k, total})
	for r := int64(0); r < k; r++ {
		off := r * total * int64(es)
		for _, m := range mms {
			nc := m.Inputs[1].Shape[1] * int64(es)
			src := m.Inputs[1].Const.Data[r*nc : (r+1)*nc]
			copy(w.Data[off:off+nc], src)
			off += nc
		}
	}
	g := st.g
	wv := st.edit.Const(mms[0].Name+"_combined_w", w)
	mm := ir.NewNode(st.edit.Unique(mms[0].Name+"_combined"), "MatMul", []*ir.Value{a, wv}, nil, st.edit.Unique(mms[0].Name+"_combined_out"))
	if err := ir.InferNode(mm); err != nil {
		return err
	}
	sv := st.edit.Const(mms[0].Name+"_split", ir.Int64Tensor([]int64{int64(len(split))}, split...))
	var outNames []string
	for _, m := range mms {
		outNames = append(outNames, m.Outputs[0].Name)
	}
	sp := ir.NewNode(st.edit.Unique(mms[0].Name+"_split"), "Split", []*ir.Value{mm.Outputs[0], sv}, ir.Attrs{"axis": ir.IntAttr(-1)}, outNames...)
	for _, m := range mms {
		sp.Provenance = append(sp.Provenance, m.Provenance...)
		mm.Provenance = append(mm.Provenance, m.Provenance...)
	}
	outs := sp.Outputs
	if err := ir.InferNode(sp); err != nil {
		return err
	}
	for i, m := range mms {
		if !slices.Equal(outs[i].Shape, m.Outputs[0].Shape) {
			return fmt.Errorf("combined MatMul output %v differs from %v", outs[i].Shape, m.Outputs[0].Shape)
		}
	}
	// Reuse the MatMuls' output values so consumers and graph outputs keep them.
	for i, m := range mms {
		o := m.Outputs[0]
		o.Producer, o.OutIndex = sp, i
		sp.Outputs[i] = o
	}
	var nodes []*ir.Node
	for _, n := range g.Nodes {
		if slices.Contains(mms, n) {
			if n == mms[0] {
				nodes = append(nodes, mm, sp)
			}
			continue
		}
		nodes = append(nodes, n)
	}
	g.Nodes = nodes
	return nil
}

// runBuild is akg_kernel_builder: hand every kernel to the KernelBuilder.
func runBuild(st *state) (bool, string, error) {
	ks := kernels(st.g)
	for _, k := range ks {
		finalizeKernel(k)
	}
	if len(ks) == 0 {
		return false, "no kernels to build", nil
	}
	if st.builder == nil {
		return false, fmt.Sprintf("no kernel builder: %d kernels left uncompiled", len(ks)), nil
	}
	if err := st.builder.BuildKernels(ks); err != nil {
		return false, "", err
	}
	st.built = true
	return true, fmt.Sprintf("%d kernels built", len(ks)), nil
}

// runRename is rename_fullname_with_scope: kernel nodes take their kernel
// name (made unique), so dumps and profiles name kernels consistently.
func runRename(st *state) (bool, string, error) {
	renamed := 0
	for _, k := range kernels(st.g) {
		kn := k.Attrs.String(ir.GKKernelName, "")
		if kn == "" || strings.HasPrefix(k.Name, kn) {
			continue
		}
		st.edit.Release(k.Name)
		k.Name = st.edit.Unique(kn)
		k.Body.Name = k.Name
		renamed++
	}
	return renamed > 0, "", nil
}

// runUpdateKernelInfo checks each kernel's outputs against its body and
// refreshes its kernel name and pattern.
func runUpdateKernelInfo(st *state) (bool, string, error) {
	for _, k := range kernels(st.g) {
		if len(k.Outputs) != len(k.Body.Outputs) || len(k.Inputs) != len(k.Body.Inputs) {
			return false, "", fmt.Errorf("kernel %s: %d/%d inputs, %d/%d outputs against its body", k.Name,
				len(k.Inputs), len(k.Body.Inputs), len(k.Outputs), len(k.Body.Outputs))
		}
		for i, o := range k.Outputs {
			bo := k.Body.Outputs[i]
			if o.DType != bo.DType || !slices.Equal(o.Shape, bo.Shape) {
				return false, "", fmt.Errorf("kernel %s: output %s is %s%v, body gives %s%v", k.Name, o.Name, o.DType, o.Shape, bo.DType, bo.Shape)
			}
		}
		if k.Attrs.Has(ir.GKKernelSO) || k.Attrs.Has(ir.GKKernelPTX) || k.Attrs.Has(ir.GKKernelInfo) {
			// A built kernel's name is its compiled symbol: keep it.
			continue
		}
		finalizeKernel(k)
	}
	return false, "", nil
}
