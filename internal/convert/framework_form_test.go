package convert

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gkconv/internal/mindir"
	"gkconv/internal/mindir/check"
)

// liteOnlyPrimitives are converter_lite's fusion primitives, for which
// MindSpore itself has no CPU kernel ("Unsupported op [MatMulFusion] on
// CPU", MindSpore 2.7.2): a file written with --primitiveSet=mindspore must
// not hold them for the models below, which make interop's GraphCell run.
// (Names that cannot occur in a node name: the file's bytes are searched.)
var liteOnlyPrimitives = []string{
	"Conv2DFusion", "MatMulFusion", "AddFusion", "SubFusion", "MulFusion", "DivFusion", "ReduceFusion",
	"PowFusion", "ExpFusion", "MaxPoolFusion", "AvgPoolFusion", "LayerNormFusion", "FusedBatchNorm", "gkconv.",
}

// TestMindSporeFramework writes the project's and the corpus's float models
// unfused with --primitiveSet=mindspore: every file passes `converter
// check` (convertOK), holds no converter_lite-only primitive or Custom
// node, reads back and matches the reference (the MindSpore run itself is
// `make interop`, which needs the MindSpore wheel).
func TestMindSporeFramework(t *testing.T) {
	dirs := []string{}
	for _, m := range []string{"mlp", "mynet", "mynet_myop", "layernorm_gelu"} {
		dirs = append(dirs, testdataModel(t, m))
	}
	if shared, err := filepath.Abs(filepath.Join(repoRoot(t), "..", "shared", "corpus", "models")); err == nil {
		if _, err := os.Stat(shared); err == nil {
			for _, m := range []string{"bert_tiny", "gpt_tiny", "squeezenet1_1", "mobilenet_v2", "mobilenet_v2_bn", "mobilenet_v3_small", "resnet18_bn"} {
				dirs = append(dirs, filepath.Join(shared, m))
			}
		} else {
			t.Logf("../shared/corpus/models absent: corpus models skipped")
		}
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			o := onnxOptions(t, filepath.Join(dir, "model.onnx"))
			o.Optimize, o.PrimitiveSet = "none", "mindspore"
			out, _ := convertOK(t, o)
			chk, err := check.File(out)
			if err != nil {
				t.Fatal(err)
			}
			if chk.MindIRVersion != 3 {
				t.Errorf("mind_ir_version %d, want 3 (MindSpore 2.7's op_def-input form)", chk.MindIRVersion)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, prim := range liteOnlyPrimitives {
				if bytes.Contains(data, []byte(prim)) {
					t.Errorf("%s holds %s, which MindSpore's CPU cannot run", filepath.Base(dir), prim)
				}
			}
			m, err := mindir.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			g := m.Graph
			defer m.Close()
			matchSet(t, filepath.Base(dir), out, g, filepath.Join(dir, "test_data_set_0"), 1e-4, 1e-3, 0)
		})
	}
}
