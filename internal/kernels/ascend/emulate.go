package ascend

import (
	"fmt"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
)

// HostProgram is the C++ program that runs a built node's Ascend C kernel
// on the host: HostHeader stands in for kernel_operator.h, the blocks of
// the launch run one after another, inputs are read from stdin and outputs
// (initialised to 0xff bytes, so unwritten elements show) written to stdout.
func HostProgram(n *ir.Node) (string, error) {
	src := string(n.Attrs[ir.GKKernelAscendC].B)
	base := n.Attrs.String(ir.GKKernelName, "")
	blocks := n.Attrs.Int(ir.GKBlockDim, 0)
	if src == "" || base == "" || blocks <= 0 || n.Body == nil {
		return "", fmt.Errorf("GraphKernel node %s has no Ascend C kernel (build it first)", n.Name)
	}
	var sb, args strings.Builder
	sb.WriteString("#define GK_HOST_EMULATION 1\n")
	sb.WriteString(HostHeader)
	sb.WriteString(HostMatmulHeader)
	sb.WriteString(src)
	bufs := append(append([]*ir.Value{}, n.Body.Inputs...), n.Body.Outputs...)
	sb.WriteString("int main(void) {\n")
	for i, v := range bufs {
		size := ir.NumElements(v.Shape) * int64(v.DType.Size())
		fmt.Fprintf(&sb, "  uint8_t *b%d = (uint8_t *)malloc(%d);\n", i, max(size, 1))
		if i < len(n.Body.Inputs) {
			fmt.Fprintf(&sb, "  if (fread(b%d, 1, %d, stdin) != %d) return 3;\n", i, size, size)
		} else {
			fmt.Fprintf(&sb, "  memset(b%d, 0xff, %d);\n", i, size)
		}
		if i > 0 {
			args.WriteString(", ")
		}
		fmt.Fprintf(&args, "b%d", i)
	}
	fmt.Fprintf(&sb, "  AscendC::gk_block_num = %d;\n", blocks)
	fmt.Fprintf(&sb, "  for (int64_t b = 0; b < %d; b++) { AscendC::gk_block_idx = b; %s_kernel0(%s); }\n", blocks, base, args.String())
	for i := len(n.Body.Inputs); i < len(bufs); i++ {
		v := bufs[i]
		fmt.Fprintf(&sb, "  fwrite(b%d, 1, %d, stdout);\n", i, ir.NumElements(v.Shape)*int64(v.DType.Size()))
	}
	sb.WriteString("  return 0;\n}\n")
	return sb.String(), nil
}

// Emulator compiles and runs Ascend C kernels on the host.
type Emulator struct {
	CXX string // host C++ compiler; kernels.FindHostCXX when empty
	Dir string // scratch directory; a temporary one when empty
}

// Run executes the built node's kernel on inputs (one per body input).
func (e *Emulator) Run(n *ir.Node, inputs []*ir.Tensor) ([]*ir.Tensor, error) {
	prog, err := HostProgram(n)
	if err != nil {
		return nil, err
	}
	return kernels.RunHostProgram(e.CXX, e.Dir, prog, n, inputs)
}
