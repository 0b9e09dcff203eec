package kernels

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/safefs"
)

// FindHostCXX resolves the host C++ compiler of the emulation: $CXX, else
// g++, else clang++.
func FindHostCXX() (string, error) {
	for _, c := range []string{os.Getenv("CXX"), "g++", "clang++"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(strings.Fields(c)[0]); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no host C++ compiler (set CXX, or install g++ or clang++)")
}

// RunHostProgram compiles a C++ program that reads the inputs on stdin and writes
// the outputs on stdout, runs it and decodes the outputs.
func RunHostProgram(cxx, dir, prog string, n *ir.Node, inputs []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(inputs) != len(n.Body.Inputs) {
		return nil, fmt.Errorf("GraphKernel node %s: %d inputs, body has %d", n.Name, len(inputs), len(n.Body.Inputs))
	}
	if cxx == "" {
		p, err := FindHostCXX()
		if err != nil {
			return nil, err
		}
		cxx = p
	}
	work, err := safefs.MkdirTemp(dir, "gkconv-emu-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	src := filepath.Join(work, "main.cpp")
	exe := filepath.Join(work, "main")
	if err := os.WriteFile(src, []byte(prog), 0o600); err != nil {
		return nil, err
	}
	argv := strings.Fields(cxx)
	args := append(append([]string{}, argv[1:]...), "-O1", "-std=c++17", "-w")
	args = append(args, "-o", exe, src)
	if out, err := exec.Command(argv[0], args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("GraphKernel node %s: host compile failed: %v\n%s", n.Name, err, firstLines(string(out), 30))
	}
	var in bytes.Buffer
	for i, t := range inputs {
		v := n.Body.Inputs[i]
		if t.DType != v.DType || ir.NumElements(t.Shape) != ir.NumElements(v.Shape) {
			return nil, fmt.Errorf("GraphKernel node %s: input %d is %s%v, body wants %s%v", n.Name, i, t.DType, t.Shape, v.DType, v.Shape)
		}
		in.Write(t.Data[:ir.NumElements(v.Shape)*int64(v.DType.Size())])
	}
	cmd := exec.Command(exe)
	cmd.Stdin = &in
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("GraphKernel node %s: emulated kernel failed: %v: %s", n.Name, err, strings.TrimSpace(errb.String()))
	}
	data := out.Bytes()
	var res []*ir.Tensor
	for _, v := range n.Body.Outputs {
		t := ir.NewTensor(v.DType, v.Shape)
		sz := len(t.Data)
		if len(data) < sz {
			return nil, fmt.Errorf("GraphKernel node %s: emulated kernel wrote %d bytes too few", n.Name, sz-len(data))
		}
		copy(t.Data, data[:sz])
		data = data[sz:]
		res = append(res, t)
	}
	return res, nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
