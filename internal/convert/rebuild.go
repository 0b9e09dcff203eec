package convert

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/kernels"
	"gkconv/internal/kernels/cpu"
	"gkconv/internal/runtime/cpuisa"
)

// ErrNoCompiler: no C compiler to rebuild fused kernels with (CC, else cc).
var ErrNoCompiler = errors.New("no C compiler")

// RebuildKernels compiles the fused body of every CPU GraphKernel node of g
// with this converter's code generator and the local C compiler, for this
// host (-march=native, the conversion default, or the x86-64 level of a
// GKCONV_CPU_ISA that forces one: cpuisa.MArch), through the
// content-addressed kernel cache in cacheDir ("" for $GKCONV_KERNEL_CACHE,
// else the user cache dir, as conversion uses it). All bodies are built in
// one cpu.Builder.BuildKernels call on copies of the nodes (g is not
// changed), so identical bodies compile once and a second load is all cache
// hits. The embedded shared objects are never read.
//
// The returned lookup gives a node's shared object and entry symbol, for
// runtime.KernelPolicy.Rebuild. When the build fails (ErrNoCompiler, a
// compiler error) the lookup is still returned and reports that error for
// every node, so the runtime runs the bodies interpreted and says why.
func RebuildKernels(g *ir.Graph, cacheDir string) (func(*ir.Node) ([]byte, string, error), error) {
	copies := map[*ir.Node]*ir.Node{}
	var nodes []*ir.Node
	for _, n := range allNodes(g) { // fused kernels of control-flow bodies too
		if n.Op != ir.OpGraphKernel || n.Body == nil || n.Attrs.String(ir.GKProcess, "cpu") != "cpu" {
			continue
		}
		c := &ir.Node{Name: n.Name, Op: n.Op, Inputs: n.Inputs, Outputs: n.Outputs, Body: n.Body, Attrs: ir.Attrs{}}
		if a, ok := n.Attrs[ir.GKKernelName]; ok {
			c.Attrs[ir.GKKernelName] = a
		}
		copies[n] = c
		nodes = append(nodes, c)
	}
	lookup := func(err error) func(*ir.Node) ([]byte, string, error) {
		return func(n *ir.Node) ([]byte, string, error) {
			if err != nil {
				return nil, "", err
			}
			c, ok := copies[n]
			if !ok {
				return nil, "", fmt.Errorf("GraphKernel node %s: no CPU fused body to rebuild", n.Name)
			}
			if c.Attrs.String(ir.GKKernelStatus, "") != "compiled" {
				return nil, "", fmt.Errorf("the code generator cannot compile its body: %s", c.Attrs.String(ir.GKKernelError, "unknown reason"))
			}
			return c.Attrs[ir.GKKernelSO].B, c.Attrs.String(ir.GKKernelName, ""), nil
		}
	}
	if len(nodes) == 0 {
		return lookup(nil), nil
	}
	if err := findCompiler(); err != nil {
		return lookup(err), err
	}
	b := cpu.NewBuilder(cpu.Options{
		CC:               os.Getenv("CC"),
		MArch:            cpuisa.MArch(), // this host: native, or GKCONV_CPU_ISA's level
		CacheDir:         cacheDir,
		AllowInterpreted: true, // one body the generator rejects does not stop the others
	})
	if err := b.BuildKernels(nodes); err != nil {
		err = fmt.Errorf("rebuilding fused kernels: %w", err)
		return lookup(err), err
	}
	return lookup(nil), nil
}

// CheckRebuild says, without compiling, whether RebuildKernels could
// rebuild GraphKernel node n: nil, or why not (ErrNoCompiler, a body the code
// generator rejects, no body). The compiler is looked up once.
func CheckRebuild() func(n *ir.Node) error {
	cc := findCompiler()
	return func(n *ir.Node) error {
		if n.Body == nil {
			return fmt.Errorf("no fused body")
		}
		if err := kernels.CheckBodyArity(n); err != nil {
			return fmt.Errorf("the code generator cannot compile its body: %w", err)
		}
		if _, err := cpu.GenerateC(kernels.KernelBaseName(n)+"_kernel", n.Body); err != nil {
			return fmt.Errorf("the code generator cannot compile its body: %w", err)
		}
		return cc
	}
}

// findCompiler looks the C compiler up as the CPU builder does ($CC, else
// cc).
func findCompiler() error {
	cc := os.Getenv("CC")
	if strings.TrimSpace(cc) == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(strings.Fields(cc)[0]); err != nil {
		return fmt.Errorf("%w (%q not found; set CC to gcc or clang)", ErrNoCompiler, strings.Fields(cc)[0])
	}
	return nil
}
