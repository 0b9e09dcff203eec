package convert

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gkconv/internal/akgcfg"
	"gkconv/internal/ir"
	"gkconv/internal/runtime"
)

// calibSet is FULL_QUANT's calibration data: per sample, one tensor per
// graph input (in g.Inputs order).
type calibSet struct {
	samples [][]*ir.Tensor
	inputs  []string // "input <- folder", for the report
}

// readCalibration reads [data_preprocess_param]'s calibration data as
// converter_lite does for input_type=BIN: for every graph input, the
// regular files of calibrate_path's folder sorted by name, the first
// calibrate_size of them (fewer is an error, as in converter_lite), each the raw little-endian data
// of the input's dtype and exact shape. The sample count is the smallest
// over the inputs.
func readCalibration(g *ir.Graph, q *akgcfg.QuantConfig) (*calibSet, error) {
	image := strings.ToUpper(q.InputType) == "IMAGE"
	if t := strings.ToUpper(q.InputType); t != "" && t != "BIN" && !image {
		return nil, Errorf(CodeNotSupport, "[data_preprocess_param] input_type=%s: want BIN or IMAGE", q.InputType)
	}
	if len(g.Inputs) == 0 {
		return nil, Errorf(CodeParamInvalid, "FULL_QUANT: the model has no inputs to calibrate")
	}
	cs := &calibSet{}
	var files [][]string
	n := -1
	for _, in := range g.Inputs {
		dir, ok := q.CalibratePath[in.Name]
		if !ok || dir == "" {
			var have []string
			for k := range q.CalibratePath {
				have = append(have, k)
			}
			sort.Strings(have)
			return nil, Errorf(CodeParamInvalid, "FULL_QUANT: [data_preprocess_param] calibrate_path has no folder for graph input %q (it names %v)", in.Name, have)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, Errorf(CodeParamInvalid, "FULL_QUANT: calibrate_path for input %q: %v", in.Name, err)
		}
		var fs []string
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				fs = append(fs, filepath.Join(dir, e.Name()))
			} else if e.Type()&os.ModeSymlink != 0 {
				if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.Mode().IsRegular() {
					fs = append(fs, filepath.Join(dir, e.Name()))
				}
			}
		}
		sort.Strings(fs)
		if q.CalibrateSize > 0 && len(fs) > q.CalibrateSize {
			fs = fs[:q.CalibrateSize]
		}
		if len(fs) == 0 {
			return nil, Errorf(CodeParamInvalid, "FULL_QUANT: calibrate_path folder %s for input %q has no calibration files", dir, in.Name)
		}
		if len(fs) < q.CalibrateSize {
			// converter_lite's CollectCalibInputs: "file count less than calibrate size".
			return nil, Errorf(CodeParamInvalid, "FULL_QUANT: calibrate_path folder %s for input %q has %d files, fewer than calibrate_size=%d",
				dir, in.Name, len(fs), q.CalibrateSize)
		}
		if n < 0 || len(fs) < n {
			n = len(fs)
		}
		files = append(files, fs)
		cs.inputs = append(cs.inputs, in.Name+" <- "+dir)
	}
	for s := 0; s < n; s++ {
		var sample []*ir.Tensor
		for i, in := range g.Inputs {
			read := readBin
			if image {
				read = func(p string, in *ir.Value) (*ir.Tensor, error) { return readImage(p, in, q.Image) }
			}
			t, err := read(files[i][s], in)
			if err != nil {
				return nil, err
			}
			sample = append(sample, t)
		}
		cs.samples = append(cs.samples, sample)
	}
	return cs, nil
}

// readBin reads one BIN calibration file for graph input in.
func readBin(path string, in *ir.Value) (*ir.Tensor, error) {
	if !in.ShapeKnown() {
		return nil, Errorf(CodeParamInvalid, "FULL_QUANT: graph input %q has shape %v with unknown dims; fix them with --inputShape to read BIN calibration data", in.Name, in.Shape)
	}
	if in.DType.Size() <= 0 {
		return nil, Errorf(CodeNotSupport, "FULL_QUANT: graph input %q has dtype %s, which BIN calibration data cannot hold", in.Name, in.DType)
	}
	want := ir.NumElements(in.Shape) * int64(in.DType.Size())
	st, err := os.Stat(path)
	if err != nil {
		return nil, Errorf(CodeParamInvalid, "FULL_QUANT: calibration file: %v", err)
	}
	if st.Size() != want {
		return nil, Errorf(CodeParamInvalid, "FULL_QUANT: calibration file %s for input %q is %d bytes; a %s%v tensor is %d bytes", path, in.Name, st.Size(), in.DType, in.Shape, want)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, Errorf(CodeParamInvalid, "FULL_QUANT: calibration file: %v", err)
	}
	t := ir.NewTensor(in.DType, in.Shape)
	copy(t.Data, b)
	return t, nil
}

// runWithTaps runs g with the runtime on every sample with taps added as
// extra outputs; visit gets, per sample, the graph outputs and the tap
// values (in taps order).
func runWithTaps(ctx context.Context, g *ir.Graph, taps []*ir.Value, samples [][]*ir.Tensor,
	visit func(s int, outs, tapped []*ir.Tensor) error) error {
	view := *g // same nodes and values, more outputs
	view.Outputs = append([]*ir.Value(nil), g.Outputs...)
	at := map[*ir.Value]int{}
	for i, o := range view.Outputs {
		if _, ok := at[o]; !ok {
			at[o] = i
		}
	}
	idx := make([]int, len(taps))
	for i, v := range taps {
		j, ok := at[v]
		if !ok {
			j = len(view.Outputs)
			view.Outputs = append(view.Outputs, v)
			at[v] = j
		}
		idx[i] = j
	}
	// NoLoadFusion: a tapped value must not vanish into a load-time fused chain.
	sess, err := runtime.NewSession(&view, runtime.Options{NoLoadFusion: true})
	if err != nil {
		return fmt.Errorf("calibration session: %w", err)
	}
	for s, in := range samples {
		if err := ctx.Err(); err != nil {
			return err
		}
		outs, err := sess.Run(in)
		if err != nil {
			return fmt.Errorf("calibration sample %d: %w", s, err)
		}
		tapped := make([]*ir.Tensor, len(taps))
		for i, j := range idx {
			tapped[i] = outs[j]
		}
		if err := visit(s, outs[:len(g.Outputs)], tapped); err != nil {
			return err
		}
	}
	return nil
}

// floatsOf returns t's values as float32 (a copy for other float dtypes).
func floatsOf(t *ir.Tensor) []float32 {
	if t == nil {
		return nil
	}
	if t.DType == ir.Float32 {
		return t.F32()
	}
	v, err := t.Float64s()
	if err != nil {
		return nil
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// cosine is the cosine similarity of a and b (1 when both are zero).
func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 && bb == 0 {
		return 1
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / (math.Sqrt(aa) * math.Sqrt(bb))
}
