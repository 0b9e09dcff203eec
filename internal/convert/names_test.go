package convert

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMisspelledNames: pass, expander, cluster-op and chip names that name
// nothing are warned about with the nearest valid name (they used to be
// silently ignored).
func TestMisspelledNames(t *testing.T) {
	dir := testdataModel(t, "mynet")
	o := onnxOptions(t, filepath.Join(dir, "model.onnx"))
	o.ConfigFile = writeConfig(t, "[graph_kernel_param]\nopt_level=2\ndisable_pass=preprocess.matmul_bias_fod,9.9\n"+
		"enable_expand_ops=Softmaxx\ndisable_cluster_ops=MatMull\n")
	_, rep := convertOK(t, o)
	all := strings.Join(rep.Warnings, "\n")
	for _, want := range []string{
		`disable_pass=preprocess.matmul_bias_fod: no pass is called "preprocess.matmul_bias_fod" (did you mean "preprocess.matmul_bias_fold"?)`,
		`disable_pass=9.9: no pass is called "9.9"`,
		`enable_expand_ops=Softmaxx: no expander is called "Softmaxx" (did you mean "Softmax"?)`,
		`disable_cluster_ops=MatMull: no op is called "MatMull" (did you mean "MatMul"?)`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	o = onnxOptions(t, filepath.Join(dir, "model.onnx"))
	o.ConfigFile = writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	o.Optimize = "ascend_oriented:Ascend91OB"
	_, rep = convertOK(t, o)
	if all := strings.Join(rep.Warnings, "\n"); !strings.Contains(all, `unknown Ascend chip "Ascend91OB" (did you mean`) {
		t.Errorf("no chip warning in:\n%s", all)
	}
	// Valid names give no such warning.
	o = onnxOptions(t, filepath.Join(dir, "model.onnx"))
	o.ConfigFile = writeConfig(t, "[graph_kernel_param]\nopt_level=2\ndisable_pass=preprocess.matmul_bias_fold,0.5\nenable_expand_ops=Softmax\n")
	o.Optimize = "ascend_oriented:Ascend910B2"
	_, rep = convertOK(t, o)
	if all := strings.Join(rep.Warnings, "\n"); strings.Contains(all, "no pass is called") || strings.Contains(all, "unknown Ascend chip") || strings.Contains(all, "no expander") {
		t.Errorf("warnings for valid names:\n%s", all)
	}
}
