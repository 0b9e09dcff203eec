package convert

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
	"gkconv/internal/onnx"
	"gkconv/internal/runtime"
	"gkconv/internal/runtime/opkernel"
)

// inScopeOps is the op list of the runtime issue: every backend test whose
// ops are all here and that onnxruntime 1.30 passes must pass.
var inScopeOps = strings.Fields(`Abs Acos Acosh Add And ArgMax ArgMin Asin Asinh Atan Atanh Attention AveragePool
BatchNormalization Cast Ceil Celu Clip Concat Constant ConstantOfShape Conv ConvTranspose Cos Cosh CumSum
DepthToSpace Div Dropout Einsum Elu Equal Erf Exp Expand Flatten Floor Gather GatherElements Gelu Gemm
GlobalAveragePool GlobalMaxPool Greater GreaterOrEqual HardSigmoid HardSwish Identity InstanceNormalization
IsInf IsNaN LayerNormalization LeakyRelu Less LessOrEqual Log LogSoftmax MatMul Max MaxPool Mean Min Mish
Mod Mul Neg Not Or Pad Pow PRelu Range Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax
ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize Round Selu Shape Sigmoid Sign
Sin Sinh Size Slice Softmax Softplus Softsign SpaceToDepth Split Sqrt Squeeze Sub Sum Tan Tanh
ThresholdedRelu Tile TopK Transpose Trilu Unsqueeze Where Xor`)

type manifestRow struct {
	ops []string
	ort string
}

func readManifest(t *testing.T, path string) map[string]manifestRow {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]manifestRow{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 8 || c[0] != "node" {
			continue
		}
		rows[c[1]] = manifestRow{ops: strings.Split(c[4], ","), ort: c[7]}
	}
	return rows
}

// roundTrip applies the conversion steps of `--optimize=none` in memory:
// the driver's constant folding (with shape inference), MindIR write,
// `converter check`'s validator on the bytes, and read back.
func roundTrip(g *ir.Graph) (*ir.Graph, error) {
	if _, err := fold(g); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := mindir.Write(&buf, g, mindir.WriteOptions{}); err != nil {
		return nil, err
	}
	// Every file the suite writes must pass MindSpore's loader rules.
	rep, err := mindir.CheckBytes(buf.Bytes(), g.Name)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if !rep.OK() {
		return nil, fmt.Errorf("check: %d violation(s), first: %s", len(rep.Violations), rep.Violations[0])
	}
	return mindir.Parse(buf.Bytes())
}

// runONNXTest converts one test folder in-process (frontend, folding,
// MindIR write and read back) and checks every test_data_set output.
func runONNXTest(dir string) error {
	m, err := onnx.Open(filepath.Join(dir, "model.onnx"), onnx.Options{})
	if err != nil {
		return err
	}
	defer m.Close()
	g, err := roundTrip(m.Graph)
	if err != nil {
		return err
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	if len(sets) == 0 {
		return fmt.Errorf("no test_data_set")
	}
	sess, err := runtime.NewSession(g, runtime.Options{Threads: 1, KernelPolicy: selfBuilt})
	if err != nil {
		return err
	}
	plan := sess.MemoryPlan()
	for _, set := range sets {
		ins, err := readPBs(set, "input", len(g.Inputs))
		if err != nil {
			return err
		}
		want, err := readPBs(set, "output", len(g.Outputs))
		if err != nil {
			return err
		}
		got, err := sess.Run(ins)
		if err != nil {
			return err
		}
		// The plan benchmark checks against --maxMemory is what the run used.
		if plan.Unknown == 0 && plan.PoolPeak < sess.ArenaBytes() {
			return fmt.Errorf("memory plan: pool peak %d bytes, the run used %d", plan.PoolPeak, sess.ArenaBytes())
		}
		for i := range got {
			atol, rtol := 1e-4, 1e-3
			if got[i].DType == ir.Float16 || got[i].DType == ir.BFloat16 {
				atol, rtol = 1e-2, 1e-2
			}
			acc, err := runtime.Compare(g.Outputs[i].Name, got[i], want[i], atol, rtol, 0)
			if err != nil {
				return err
			}
			if !acc.Pass {
				return fmt.Errorf("%s: output %s: %s (%d mismatches)", filepath.Base(set), acc.Name, acc.FirstMismatch, acc.Mismatches)
			}
		}
	}
	return nil
}

func readPBs(set, kind string, n int) ([]*ir.Tensor, error) {
	out := make([]*ir.Tensor, n)
	for i := 0; i < n; i++ {
		t, _, err := onnx.ReadTensorFile(filepath.Join(set, fmt.Sprintf("%s_%d.pb", kind, i)))
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

func isUnsupported(err error) bool {
	var ue *onnx.UnsupportedError
	var ke *opkernel.Unsupported
	var re *runtime.UnsupportedOpsError
	return errors.As(err, &ue) || errors.As(err, &ke) || errors.As(err, &re)
}

// TestBackendSuite converts and runs every ONNX backend node test.
func TestBackendSuite(t *testing.T) {
	root := filepath.Join(sharedDir(t), "corpus", "onnx-backend")
	rows := readManifest(t, filepath.Join(root, "manifest.tsv"))
	scope := map[string]bool{}
	for _, op := range inScopeOps {
		scope[op] = true
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "node", "test_*"))
	sort.Strings(dirs)
	var passed, failed, unsupported, inScope, inScopePassed int
	var inScopeFailures []string
	unsupportedOps := map[string]int{}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		row := rows[name]
		want := row.ort == "pass"
		for _, op := range row.ops {
			if !scope[op] {
				want = false
			}
		}
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return runONNXTest(dir)
		}()
		switch {
		case err == nil:
			passed++
		case isUnsupported(err):
			unsupported++
			for _, op := range row.ops {
				if !scope[op] {
					unsupportedOps[op]++
				}
			}
		default:
			failed++
		}
		if want {
			inScope++
			if err == nil {
				inScopePassed++
			} else {
				inScopeFailures = append(inScopeFailures, fmt.Sprintf("%s: %v", name, oneLine(err)))
			}
		}
	}
	var ops []string
	for op := range unsupportedOps {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	t.Logf("unsupported ops outside the runtime's list: %s", strings.Join(ops, " "))
	t.Logf("in scope: %d/%d passed", inScopePassed, inScope)
	fmt.Printf("onnx-backend node suite: %d passed, %d failed, %d unsupported (in scope: %d of %d passed)\n",
		passed, failed, unsupported, inScopePassed, inScope)
	for _, f := range inScopeFailures {
		t.Errorf("in-scope test failed: %s", f)
	}
}
