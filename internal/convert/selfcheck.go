package convert

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"time"

	"gkconv/internal/ir"
	"gkconv/internal/kernels/cache"
	"gkconv/internal/runtime"
	"gkconv/internal/safefs"
)

// The kernel self-check (buildkernel.kernel_self_check): every compiled CPU
// kernel runs once on seeded random inputs, as an object and as its body on
// the op library, before the model is written. Fusion is the one step that
// changes numerics, so a kernel that disagrees with its body is un-fused.
// A kernel that passed is remembered in the kernel cache
// (selfcheck/<object sha256>), so a warm cache runs nothing.

// Tolerances of the self-check: an element passes when
// |compiled - body| <= atol + rtol*|body| (inputs are in [-2, 2]); float16
// outputs get float16's precision.
const (
	selfCheckAtol, selfCheckRtol         = 1e-4, 1e-3
	selfCheckAtolHalf, selfCheckRtolHalf = 1e-2, 1e-2
	// selfCheckMaxElements skips kernels whose inputs are larger (the check
	// must stay a small share of a conversion).
	selfCheckMaxElements = 1 << 24
)

type kernelSelfCheck struct {
	cacheDir  string // the kernel cache setting, for evicting objects that fail
	markerDir string // "" when the cache folder is unknown: no memory between runs
	ran       int    // kernels run (not remembered)
	skipped   []string
	failed    []string
	elapsed   time.Duration
}

func newKernelSelfCheck(cacheDir string) *kernelSelfCheck {
	c := &kernelSelfCheck{cacheDir: cacheDir}
	if dir, err := cache.ResolveDir(cacheDir); err == nil {
		c.markerDir = filepath.Join(dir, "selfcheck")
	}
	return c
}

func (c *kernelSelfCheck) marker(hash string) string {
	if c.markerDir == "" || len(hash) < 8 {
		return ""
	}
	return filepath.Join(c.markerDir, hash[:2], hash+".ok")
}

// CheckKernel implements fusion.KernelChecker.
func (c *kernelSelfCheck) CheckKernel(k *ir.Node) error {
	hash := k.Attrs.String(ir.GKKernelSOHash, "")
	m := c.marker(hash)
	if m != "" {
		if st, err := os.Lstat(m); err == nil && st.Mode().IsRegular() {
			return nil // this object passed before
		}
	}
	start := time.Now()
	defer func() { c.elapsed += time.Since(start) }()
	inputs, why := selfCheckInputs(k, hash)
	if why != "" {
		c.skipped = append(c.skipped, k.Name+": "+why)
		return nil
	}
	c.ran++
	var got, want []*ir.Tensor
	var err error
	if SelfCheckExecutable != "" {
		if want, err = runtime.ReferenceOutputs(k, inputs); err == nil {
			if got, err = runCompiledIsolated(k, inputs); err != nil {
				return c.fail(k, fmt.Errorf("the compiled kernel, run in a child process, %w", err))
			}
		}
	} else {
		got, want, err = runtime.CheckKernelNode(k, inputs)
	}
	var refErr *runtime.ReferenceError
	switch {
	case errors.As(err, &refErr):
		c.skipped = append(c.skipped, fmt.Sprintf("%s: %v", k.Name, err))
		return nil
	case err != nil:
		return c.fail(k, fmt.Errorf("the compiled kernel did not run: %w", err))
	}
	for i := range want {
		atol, rtol := selfCheckAtol, selfCheckRtol
		if want[i].DType == ir.Float16 || want[i].DType == ir.BFloat16 {
			atol, rtol = selfCheckAtolHalf, selfCheckRtolHalf
		}
		acc, err := runtime.Compare(k.Outputs[i].Name, got[i], want[i], atol, rtol, 0)
		if err != nil {
			return c.fail(k, err)
		}
		if !acc.Pass {
			return c.fail(k, fmt.Errorf("output %d differs from its body on the op library: %s (%d of %d elements beyond atol %g + rtol %g)",
				i, acc.FirstMismatch, acc.Mismatches, acc.Elements, atol, rtol))
		}
	}
	if m != "" { // best effort: without it the next run checks again
		_ = os.MkdirAll(filepath.Dir(m), 0o700)
		_ = safefs.WriteBytesAtomic(m, []byte(k.Attrs.String(ir.GKKernelName, "")+"\n"), 0o600)
	}
	return nil
}

// fail records k's failure and evicts its object from the kernel cache, so
// no later build reuses it (a remote-served or damaged object included).
func (c *kernelSelfCheck) fail(k *ir.Node, err error) error {
	if hash := k.Attrs.String(ir.GKKernelSOHash, ""); hash != "" {
		if _, eerr := cache.Evict(c.cacheDir, hash); eerr != nil {
			slog.Debug("kernel self-check: evicting the failed object", "kernel", k.Name, "err", eerr)
		}
	}
	return err
}

// KernelUnfused implements fusion.KernelChecker: the report lists every
// un-fused kernel node (seven nodes sharing one failed object are seven
// entries, not one).
func (c *kernelSelfCheck) KernelUnfused(k *ir.Node, reason string) {
	c.failed = append(c.failed, fmt.Sprintf("%s (%s): %s", k.Name, k.Attrs.String(ir.GKKernelName, ""), reason))
}

// selfCheckInputs are seeded random inputs for kernel k: floats in [-2, 2],
// integers in [0, 4), booleans; why says why k is not checked.
func selfCheckInputs(k *ir.Node, hash string) ([]*ir.Tensor, string) {
	sum := sha256.Sum256([]byte(hash))
	rng := rand.New(rand.NewSource(int64(binary.LittleEndian.Uint64(sum[:8]))))
	var total int64
	var ins []*ir.Tensor
	for _, v := range k.Inputs {
		if v == nil || !v.ShapeKnown() {
			return nil, "an input without a static shape"
		}
		n := ir.NumElements(v.Shape)
		if total += n; total > selfCheckMaxElements {
			return nil, fmt.Sprintf("inputs larger than %d elements", selfCheckMaxElements)
		}
		t := ir.NewTensor(v.DType, v.Shape)
		f := func() float32 { return float32(4*rng.Float64() - 2) }
		switch v.DType {
		case ir.Float32:
			for i := range t.F32() {
				t.F32()[i] = f()
			}
		case ir.Float64:
			for i := range t.F64() {
				t.F64()[i] = float64(f())
			}
		case ir.Float16:
			for i := range t.U16() {
				t.U16()[i] = ir.F32ToF16(f())
			}
		case ir.BFloat16:
			for i := range t.U16() {
				t.U16()[i] = ir.F32ToBF16(f())
			}
		case ir.Int32:
			for i := range t.I32() {
				t.I32()[i] = int32(rng.Intn(4))
			}
		case ir.Int64:
			for i := range t.I64() {
				t.I64()[i] = int64(rng.Intn(4))
			}
		case ir.Bool:
			for i := range t.U8() {
				t.U8()[i] = uint8(rng.Intn(2))
			}
		default:
			return nil, "an input of dtype " + v.DType.String()
		}
		ins = append(ins, t)
	}
	return ins, ""
}
