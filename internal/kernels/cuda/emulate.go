package cuda

import (
	"fmt"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// HostProgram is the C++ program that runs a built node's kernel under the
// host emulation: it reads the inputs' bytes from stdin, launches the
// kernel with the node's recorded grid and block, and writes the outputs'
// bytes to stdout. Outputs start as 0xff bytes so unwritten elements show.
func HostProgram(n *ir.Node) (string, error) {
	src := n.Attrs.String(ir.GKKernelSource, "")
	sym := n.Attrs.String(ir.GKKernelName, "")
	if src == "" || sym == "" || n.Body == nil {
		return "", fmt.Errorf("GraphKernel node %s has no CUDA kernel (build it first)", n.Name)
	}
	grid, block := n.Attrs.Int(ir.GKGridDimX, 0), n.Attrs.Int(ir.GKBlockDimX, 0)
	if grid <= 0 || block <= 0 {
		return "", fmt.Errorf("GraphKernel node %s has no launch configuration", n.Name)
	}
	var sb strings.Builder
	sb.WriteString("#define GK_HOST_EMULATION 1\n")
	sb.WriteString(HostHeader)
	sb.WriteString(src)
	var args, decl, io strings.Builder
	bufs := append(append([]*ir.Value{}, n.Body.Inputs...), n.Body.Outputs...)
	for i, v := range bufs {
		st, _ := kernels.StorageType(v.DType)
		size := ir.NumElements(v.Shape) * int64(v.DType.Size())
		fmt.Fprintf(&decl, "static %s *gk_b%d;\n", st, i)
		fmt.Fprintf(&io, "  gk_b%d = (%s *)malloc(%d);\n", i, st, max(size, 1))
		if i < len(n.Body.Inputs) {
			fmt.Fprintf(&io, "  if (fread(gk_b%d, 1, %d, stdin) != %d) { fputs(\"short input\\n\", stderr); return 3; }\n", i, size, size)
		} else {
			fmt.Fprintf(&io, "  memset(gk_b%d, 0xff, %d);\n", i, size)
		}
		if i > 0 {
			args.WriteString(", ")
		}
		fmt.Fprintf(&args, "gk_b%d", i)
	}
	sb.WriteString(decl.String())
	fmt.Fprintf(&sb, "static void gk_run(void) { %s(%s); }\n", sym, args.String())
	sb.WriteString("int main(void) {\n")
	sb.WriteString(io.String())
	fmt.Fprintf(&sb, "  if (gk_launch(%d, %d, gk_run)) return 4;\n", grid, block)
	for i := len(n.Body.Inputs); i < len(bufs); i++ {
		v := bufs[i]
		size := ir.NumElements(v.Shape) * int64(v.DType.Size())
		fmt.Fprintf(&sb, "  fwrite(gk_b%d, 1, %d, stdout);\n", i, size)
	}
	sb.WriteString("  return 0;\n}\n")
	return sb.String(), nil
}

// Emulator compiles and runs kernels on the host.
type Emulator struct {
	CXX string // host C++ compiler; kernels.FindHostCXX when empty
	Dir string // scratch directory; a temporary one when empty
}

// Run executes the built node's kernel on inputs (one tensor per body
// input) and returns its outputs.
func (e *Emulator) Run(n *ir.Node, inputs []*ir.Tensor) ([]*ir.Tensor, error) {
	prog, err := HostProgram(n)
	if err != nil {
		return nil, err
	}
	return kernels.RunHostProgram(e.CXX, e.Dir, prog, n, inputs)
}

// FindHostCXX resolves the host C++ compiler of the emulation.
func FindHostCXX() (string, error) { return kernels.FindHostCXX() }
