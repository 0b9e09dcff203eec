package fusion

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"gkconv/internal/ir"
)

// WriteIR writes g as text: inputs, nodes (GraphKernel bodies indented
// below their node) and outputs.
func WriteIR(w io.Writer, g *ir.Graph) error {
	bw := bufio.NewWriter(w)
	writeGraphText(bw, g, "")
	return bw.Flush()
}

func valueList(vs []*ir.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		switch {
		case v == nil:
			parts[i] = "_"
		case v.Const != nil && v.Const.NumElements() <= 8:
			parts[i] = fmt.Sprintf("%%%s=%s", v.Name, v.Const.Summary(8))
		default:
			parts[i] = fmt.Sprintf("%%%s:%s%v", v.Name, v.DType, v.Shape)
		}
	}
	return strings.Join(parts, ", ")
}

func writeGraphText(w *bufio.Writer, g *ir.Graph, indent string) {
	fmt.Fprintf(w, "%sgraph %s(%s) {\n", indent, g.Name, valueList(g.Inputs))
	for _, n := range g.Nodes {
		fmt.Fprintf(w, "%s  %s = %s(%s)", indent, valueList(n.Outputs), n.Op, valueList(n.Inputs))
		for _, k := range n.Attrs.Keys() {
			fmt.Fprintf(w, " %s=%s", k, n.Attrs[k].GoString())
		}
		fmt.Fprintf(w, "  # %s", n.Name)
		if len(n.Provenance) > 0 {
			fmt.Fprintf(w, " from %s", strings.Join(n.Provenance, ","))
		}
		w.WriteByte('\n')
		if n.Body != nil {
			writeGraphText(w, n.Body, indent+"    ")
		}
	}
	fmt.Fprintf(w, "%s  return %s\n%s}\n", indent, valueList(g.Outputs), indent)
}

// WriteDOT writes g as Graphviz DOT: one box per node, each GraphKernel a
// filled box labelled with its kernel name and body ops; edges are values.
func WriteDOT(w io.Writer, g *ir.Graph) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph %q {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n", g.Name)
	id := map[*ir.Node]string{}
	for i, n := range g.Nodes {
		id[n] = fmt.Sprintf("n%d", i)
	}
	for i, v := range g.Inputs {
		fmt.Fprintf(bw, "  in%d [label=%q, shape=ellipse];\n", i, v.Name+"\n"+v.DType.String()+fmt.Sprint(v.Shape))
	}
	inIdx := map[*ir.Value]int{}
	for i, v := range g.Inputs {
		inIdx[v] = i
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpGraphKernel && n.Body != nil {
			var ops []string
			for _, b := range n.Body.Nodes {
				ops = append(ops, b.Op)
			}
			label := n.Attrs.String(ir.GKKernelName, n.Name) + "\n" + strings.Join(ops, " → ")
			fmt.Fprintf(bw, "  subgraph cluster_%s {\n    style=filled; color=\"#e8f0fe\"; label=%q;\n    %s [label=%q, style=filled, fillcolor=\"#aecbfa\"];\n  }\n",
				id[n], n.Name, id[n], label)
			continue
		}
		fmt.Fprintf(bw, "  %s [label=%q];\n", id[n], n.Op+"\n"+n.Name)
	}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v == nil {
				continue
			}
			if v.Producer != nil {
				if src, ok := id[v.Producer]; ok {
					fmt.Fprintf(bw, "  %s -> %s [label=%q];\n", src, id[n], fmt.Sprint(v.Shape))
				}
				continue
			}
			if i, ok := inIdx[v]; ok {
				fmt.Fprintf(bw, "  in%d -> %s;\n", i, id[n])
			}
		}
	}
	for i, v := range g.Outputs {
		fmt.Fprintf(bw, "  out%d [label=%q, shape=ellipse];\n", i, v.Name)
		if v.Producer != nil {
			if src, ok := id[v.Producer]; ok {
				fmt.Fprintf(bw, "  %s -> out%d;\n", src, i)
			}
		} else if j, ok := inIdx[v]; ok {
			fmt.Fprintf(bw, "  in%d -> out%d;\n", j, i)
		}
	}
	bw.WriteString("}\n")
	return bw.Flush()
}
