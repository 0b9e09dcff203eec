package akgcfg

import (
	"slices"
	"testing"
)

func TestValidOps(t *testing.T) {
	table := []OpEntry{
		{AllDevices, 0, "Add"},
		{CPU | GPU, 0, "Gelu"},
		{Ascend, 0, "LayerNorm"},
		{GPU, 1, "Softmax"},
		{0, 1, "Sigmoid"}, // 0 = all devices
		{CPU, 2, "MatMul"},
	}
	cpu, gpu, asc := Backend{Device: CPU}, Backend{Device: GPU}, Backend{Device: Ascend}
	cases := []struct {
		name                  string
		b                     Backend
		level                 int
		enable, disable, only []string
		want                  []string
	}{
		{"cpu level 0", cpu, 0, nil, nil, nil, []string{"Add", "Gelu"}},
		{"cpu level 1", cpu, 1, nil, nil, nil, []string{"Add", "Gelu", "Sigmoid"}},
		{"gpu level 1", gpu, 1, nil, nil, nil, []string{"Add", "Gelu", "Softmax", "Sigmoid"}},
		{"ascend level 0", asc, 0, nil, nil, nil, []string{"Add", "LayerNorm"}},
		{"cpu level 2", cpu, 2, nil, nil, nil, []string{"Add", "Gelu", "Sigmoid", "MatMul"}},
		{"enable and disable", cpu, 1, []string{"Tanh", "Add"}, []string{"Gelu", "Tanh"}, nil, []string{"Add", "Sigmoid"}},
		{"only replaces", cpu, 1, []string{"Tanh"}, []string{"Mul"}, []string{"Mul", "Sub", "Mul"}, []string{"Mul", "Sub"}},
	}
	for _, c := range cases {
		if got := ValidOps(table, c.b, c.level, c.enable, c.disable, c.only); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	f, _ := mustParse(t, "--enable_expand_ops=Tanh --disable_cluster_ops=Add --enable_cluster_ops_only=Mul")
	f.Resolve(cpu)
	if got := f.ValidExpandOps(table, cpu); !slices.Equal(got, []string{"Add", "Gelu", "Sigmoid", "Tanh"}) {
		t.Errorf("ValidExpandOps = %v", got)
	}
	if got := f.ValidClusterOps(table, cpu); !slices.Equal(got, []string{"Mul"}) {
		t.Errorf("ValidClusterOps = %v", got)
	}
	f.Resolve(asc) // fusion_ops_level 0 on Ascend
	if got := f.ValidExpandOps(table, asc); !slices.Equal(got, []string{"Add", "LayerNorm", "Tanh"}) {
		t.Errorf("ValidExpandOps(Ascend) = %v", got)
	}
}

func TestPassEnabled(t *testing.T) {
	f, _ := mustParse(t, "--opt_level=2 --disable_pass=1.4,highlevelopt1.arithmetic_simplify --enable_pass=3.9,cluster.graph_kernel_op_combiner")
	cases := []struct {
		stage     int
		stageName string
		pass      int
		passName  string
		level     int
		backendOK bool
		want      bool
	}{
		{1, "cluster", 0, "graph_kernel_expander", 1, true, true},        // level ok
		{1, "cluster", 4, "graph_kernel_cluster", 1, true, false},        // disabled by index
		{2, "highlevelopt1", 0, "arithmetic_simplify", 2, true, false},   // disabled by name
		{2, "highlevelopt1", 1, "transform_op_optimizer", 2, true, true}, // level 2 <= 2
		{1, "cluster", 3, "graph_kernel_op_combiner", 3, true, true},     // level 3 > 2, enabled by name
		{3, "split", 9, "x", 4, true, true},                              // enabled by index
		{3, "split", 8, "y", 3, true, false},                             // level too high
		{0, "preprocess", 2, "dynamic_infer_shape", 1, false, false},     // backend not supported
		{1, "cluster", 3, "graph_kernel_op_combiner", 1, false, true},    // enable_pass beats the backend
	}
	for _, c := range cases {
		if got := f.PassEnabled(c.stage, c.stageName, c.pass, c.passName, c.level, c.backendOK); got != c.want {
			t.Errorf("%d.%d %s.%s L%d ok=%v: got %v", c.stage, c.pass, c.stageName, c.passName, c.level, c.backendOK, got)
		}
	}
	// A disabled pass that would not run anyway stays off; opt_level 0 runs only enabled passes.
	g, _ := mustParse(t, "--enable_pass=0.0")
	if !g.PassEnabled(0, "preprocess", 0, "empty_pass", 1, true) || g.PassEnabled(0, "preprocess", 1, "format_recognition", 1, true) {
		t.Error("opt_level 0: only enable_pass passes run")
	}
}
