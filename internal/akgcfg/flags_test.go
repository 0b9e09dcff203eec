package akgcfg

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mustParse parses s and fails the test on error.
func mustParse(t *testing.T, s string) (*Flags, []Warning) {
	t.Helper()
	f, w, err := ParseFlags(s, EnvVar)
	if err != nil {
		t.Fatalf("ParseFlags(%q): %v", s, err)
	}
	return f, w
}

// parseErr parses s, expects an error, and returns its text.
func parseErr(t *testing.T, s string) string {
	t.Helper()
	_, _, err := ParseFlags(s, EnvVar)
	if err == nil {
		t.Fatalf("ParseFlags(%q): want an error", s)
	}
	return err.Error()
}

func TestBoolSpellings(t *testing.T) {
	for _, v := range []string{"", "true", "True", "on", "1"} {
		f, _ := mustParse(t, "--dump_as_text="+v+" --enable_vectorization=0")
		if !f.DumpAsText || f.EnableVectorization {
			t.Errorf("value %q: dump_as_text=%v enable_vectorization=%v", v, f.DumpAsText, f.EnableVectorization)
		}
	}
	for _, v := range []string{"false", "False", "off", "0"} {
		f, _ := mustParse(t, "--enable_vectorization="+v+" --dump_as_text")
		if f.EnableVectorization || !f.DumpAsText {
			t.Errorf("value %q: enable_vectorization=%v dump_as_text=%v", v, f.EnableVectorization, f.DumpAsText)
		}
	}
	for _, v := range []string{"yes", "TRUE", "2", "true,false", "ON"} {
		msg := parseErr(t, "--dump_as_text="+v)
		if !strings.Contains(msg, "dump_as_text") || !strings.Contains(msg, "is not a boolean") {
			t.Errorf("value %q: error %q", v, msg)
		}
	}
}

func TestInts(t *testing.T) {
	f, _ := mustParse(t, "--opt_level=2 --composite_op_limit_size=+50 --reduce_fuse_depth=-1 --online_tuning=3")
	if f.OptLevel != 2 || f.CompositeOpLimitSize != 50 || f.OnlineTuning != 3 {
		t.Errorf("got opt_level=%d composite_op_limit_size=%d online_tuning=%d", f.OptLevel, f.CompositeOpLimitSize, f.OnlineTuning)
	}
	cases := map[string]string{
		"--opt_level=2x":                         `"2x" is not an integer`,
		"--opt_level=2.0":                        `"2.0" is not an integer`,
		"--opt_level":                            "missing value",
		"--cpu_refer_thread_num=":                "missing value",
		"--opt_level=-1":                         "-1 is negative",
		"--composite_op_limit_size=9e99":         `"9e99" is not an integer`,
		"--recompute_peak_threshold=99999999999": "out of range",
		"--online_tuning=4":                      "4 is outside [0, 3]",
		"--reduce_fuse_depth=-2":                 "-2 is below -1",
		"--cpu_refer_thread_num=0":               "0 is below 1",
	}
	for in, want := range cases {
		if msg := parseErr(t, in); !strings.Contains(msg, want) {
			t.Errorf("%s: error %q, want it to contain %q", in, msg, want)
		}
	}
}

func TestOptLevelClamp(t *testing.T) {
	f, w := mustParse(t, "--opt_level=7")
	if f.OptLevel != 3 {
		t.Fatalf("opt_level = %d, want 3", f.OptLevel)
	}
	if len(w) != 1 || w[0].Key != "opt_level" || !strings.Contains(w[0].Message, "clamped to 3") {
		t.Fatalf("warnings %v", w)
	}
	if f.Tokens() != "--opt_level=3" {
		t.Errorf("Tokens() = %q", f.Tokens())
	}
	// opt_level 3 turns the level-3 features on.
	if !f.EnableParallelFusion || !f.EnableStitchFusion || !f.EnableRecomputeFusion {
		t.Errorf("level-3 defaults not applied: %+v", f)
	}
}

func TestLists(t *testing.T) {
	f, _ := mustParse(t, "--enable_expand_ops=Gelu,,Softmax, --disable_pass=1.2,cluster.graph_kernel_cluster")
	if !slices.Equal(f.EnableExpandOps, []string{"Gelu", "Softmax"}) {
		t.Errorf("enable_expand_ops = %q", f.EnableExpandOps)
	}
	if !slices.Equal(f.DisablePass, []string{"1.2", "cluster.graph_kernel_cluster"}) {
		t.Errorf("disable_pass = %q", f.DisablePass)
	}
	if msg := parseErr(t, "--enable_expand_ops=,,"); !strings.Contains(msg, "missing value") {
		t.Errorf("empty list: %q", msg)
	}
	// Items are trimmed when the value comes from a file or JSON.
	var g Flags
	if err := g.Set("disable_cluster_ops", " MatMul , Reshape ,"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.DisableClusterOps, []string{"MatMul", "Reshape"}) {
		t.Errorf("disable_cluster_ops = %q", g.DisableClusterOps)
	}
	if err := g.Set("disable_cluster_ops", "Mat Mul"); err == nil || !strings.Contains(err.Error(), "whitespace") {
		t.Errorf("item with a space: %v", err)
	}
}

func TestStrings(t *testing.T) {
	f, _ := mustParse(t, "--cpu_arch=x86_64 --cpu_feature=avx512 --cpu_type=skylake-avx512 --target_os=linux --repository_path=/tmp/akg")
	if f.CPUArch != "x86_64" || f.CPUFeature != "avx512" || f.CPUType != "skylake-avx512" || f.RepositoryPath != "/tmp/akg" {
		t.Errorf("got %+v", f)
	}
	if msg := parseErr(t, "--cpu_arch=riscv"); !strings.Contains(msg, `"riscv" is not one of arm, aarch64, x86_64`) {
		t.Errorf("cpu_arch: %q", msg)
	}
	_, w := mustParse(t, "--kernel_generator=TVM")
	if len(w) != 1 || !strings.Contains(w[0].Message, "unknown kernel generator") {
		t.Errorf("kernel_generator warnings: %v", w)
	}
}

func TestInvalidTokens(t *testing.T) {
	cases := map[string]string{
		"--opt_level=2=3": "more than one '='",
		"opt_level=2":     "does not start with --",
		"-opt_level=2":    "does not start with --",
		"--=2":            "empty key",
		"--":              "empty key",
	}
	for in, want := range cases {
		msg := parseErr(t, in)
		if !strings.Contains(msg, want) || !strings.HasPrefix(msg, EnvVar+": ") {
			t.Errorf("%q: error %q, want %q", in, msg, want)
		}
	}
	// Several bad tokens are all reported.
	_, _, err := ParseFlags("--a=b=c --opt_level=x", EnvVar)
	var n int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *Error
		if errors.As(e, &ce) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("want 2 located errors, got %v", err)
	}
}

func TestUnknownKeySuggestion(t *testing.T) {
	f, w := mustParse(t, "--opt_levle=2 --enable_expand_op=Gelu --Dump_As_Text --zzzzzzzzzzzz")
	if f.OptLevel != 0 || len(f.ExplicitKeys()) != 0 {
		t.Errorf("unknown keys must not set anything: %v", f.ExplicitKeys())
	}
	want := []string{
		`opt_levle: unknown flag, ignored (did you mean "opt_level"?)`,
		`enable_expand_op: unknown flag, ignored (did you mean "enable_expand_ops"?)`,
		`Dump_As_Text: unknown flag, ignored (keys are case-sensitive: did you mean "dump_as_text"?)`,
		`zzzzzzzzzzzz: unknown flag, ignored`,
	}
	if len(w) != len(want) {
		t.Fatalf("warnings %v", w)
	}
	for i := range want {
		if got := w[i].String(); got != EnvVar+": "+want[i] {
			t.Errorf("warning %d = %q, want %q", i, got, want[i])
		}
	}
}

func TestRepeatedKeyKeepsFirst(t *testing.T) {
	f, w := mustParse(t, "--opt_level=1 --opt_level=3")
	if f.OptLevel != 1 {
		t.Errorf("opt_level = %d, want the first value 1", f.OptLevel)
	}
	if len(w) != 1 || w[0].Key != "opt_level" || !strings.Contains(w[0].Message, "repeated") {
		t.Errorf("warnings %v", w)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPathJSON(t *testing.T) {
	p := writeFile(t, "flags.json", "{\n  \"opt_level\": \"2\",\n  \"enable_expand_ops\": \"Gelu, Softmax\",\n  \"dump_as_text\": \"on\"\n}\n")
	f, w := mustParse(t, "--opt_level=1 --path="+p)
	if f.OptLevel != 2 || !f.DumpAsText || !slices.Equal(f.EnableExpandOps, []string{"Gelu", "Softmax"}) {
		t.Errorf("got %s", f.Tokens())
	}
	if len(w) != 1 || !strings.Contains(w[0].Message, "the other 1 flag(s) are ignored") {
		t.Errorf("warnings %v", w)
	}
	if o, _ := f.Origin("dump_as_text"); o.File != p || o.Line != 4 {
		t.Errorf("origin of dump_as_text = %v, want %s:4", o, p)
	}

	bad := writeFile(t, "bad.json", "{\n \"opt_level\": 2,\n \"disable_pass\": [\"a\"],\n \"enable_pass\": \"1.0\"\n}")
	_, _, err := ParseFlags("--path="+bad, EnvVar)
	if err == nil || !strings.Contains(err.Error(), bad+":2: opt_level: value must be a JSON string") ||
		!strings.Contains(err.Error(), bad+":3: disable_pass: value must be a JSON string") {
		t.Errorf("non-string values: %v", err)
	}
	for name, content := range map[string]string{"list.json": `["--opt_level=2"]`, "trunc.json": `{"opt_level": "2"`, "trail.json": `{} {}`} {
		p := writeFile(t, name, content)
		if _, _, err := ParseFlags("--path="+p, EnvVar); err == nil {
			t.Errorf("%s: want an error", content)
		}
	}
	if msg := parseErr(t, "--path="+filepath.Join(t.TempDir(), "missing.json")); !strings.Contains(msg, "path: ") {
		t.Errorf("missing file: %q", msg)
	}
	if msg := parseErr(t, "--path=/dev/null"); !strings.Contains(msg, "not a regular file") {
		t.Errorf("/dev/null: %q", msg)
	}
	nested := writeFile(t, "nested.json", `{"path": "other.json", "opt_level": "1"}`)
	f, w = mustParse(t, "--path="+nested)
	if f.OptLevel != 1 || len(w) != 1 || w[0].Key != "path" {
		t.Errorf("nested path: opt_level=%d warnings %v", f.OptLevel, w)
	}
}

func TestDefaultsPerBackend(t *testing.T) {
	type want struct {
		fusionOpsLevel, depth       int
		stitch, recompute, parallel bool
		dynShape                    bool
	}
	cases := []struct {
		flags string
		b     Backend
		w     want
	}{
		{"--opt_level=2", Backend{Device: CPU}, want{1, 20, false, true, false, false}},
		{"--opt_level=2", Backend{Device: GPU}, want{1, 20, false, true, false, false}},
		{"--opt_level=2", Backend{Device: Ascend}, want{0, 10, false, true, false, true}},
		{"--opt_level=1", Backend{Device: CPU}, want{1, 20, false, false, false, false}},
		{"--opt_level=3", Backend{Device: GPU}, want{1, 20, true, true, true, false}},
		{"--opt_level=3", Backend{Device: Ascend, Soc: "Ascend910B2"}, want{0, 10, false, true, true, true}},
		{"--opt_level=3", Backend{Device: Ascend, Soc: "Ascend910"}, want{0, 10, true, true, true, true}},
		{"--opt_level=3 --enable_stitch_fusion=false --fusion_ops_level=2 --reduce_fuse_depth=5 --enable_dynamic_shape_fusion=false",
			Backend{Device: Ascend}, want{2, 5, false, true, true, false}},
	}
	for _, c := range cases {
		f, _ := mustParse(t, c.flags)
		f.Resolve(c.b)
		got := want{f.FusionOpsLevel, f.ReduceFuseDepth, f.EnableStitchFusion, f.EnableRecomputeFusion, f.EnableParallelFusion, f.EnableDynamicShapeFusion}
		if got != c.w {
			t.Errorf("%s on %v: got %+v, want %+v", c.flags, c.b, got, c.w)
		}
	}
	// Static defaults of RegisterFlags
	// (mindspore/ccsrc/backend/common/graph_kernel/graph_kernel_flags.cc).
	f := NewFlags()
	if f.OptLevel != 0 || f.CPUReferThreadNum != 8 || f.CompositeOpLimitSize != 200 || f.TargetOS != "linux" ||
		f.KernelGenerator != "AKG" || !f.EnableVectorization || !f.ExactPrecisionMode || !f.EnableAllreducePrologueFusion ||
		!f.EnableAllreduceEpilogueFusion || f.DumpAsText || f.OnlineTuning != 0 || f.ReduceFuseDepth != 20 {
		t.Errorf("NewFlags defaults: %+v", f)
	}
}

func TestResolveOverrides(t *testing.T) {
	f, _ := mustParse(t, "--opt_level=3 --enable_auto_tensor_inplace")
	w := f.Resolve(Backend{Device: Ascend})
	if f.EnableAutoTensorInplace {
		t.Error("enable_auto_tensor_inplace must be forced off on Ascend")
	}
	var keys []string
	for _, x := range w {
		keys = append(keys, x.Key)
	}
	if !slices.Equal(keys, []string{"enable_auto_tensor_inplace", "enable_parallel_fusion"}) {
		t.Errorf("warnings %v", w)
	}
	// Resolve again for another backend starts from the explicit keys.
	f.Resolve(Backend{Device: CPU})
	fresh, _ := mustParse(t, "--opt_level=3 --enable_auto_tensor_inplace")
	fresh.Resolve(Backend{Device: CPU})
	a, _ := json.Marshal(f)
	b, _ := json.Marshal(fresh)
	if string(a) != string(b) || !f.EnableAutoTensorInplace {
		t.Errorf("Resolve is not repeatable:\n%s\n%s", a, b)
	}

	g, _ := mustParse(t, "--opt_level=2 --enable_dynamic_shape_fusion --kernel_generator=AKG")
	w = g.Resolve(Backend{Device: GPU})
	if g.KernelGenerator != "AKG_V2" || len(w) != 1 || w[0].Key != "kernel_generator" {
		t.Errorf("kernel_generator = %q, warnings %v", g.KernelGenerator, w)
	}
	h, _ := mustParse(t, "--kernel_generator=DVM")
	h.Resolve(Backend{Device: CPU})
	if !h.EnableDynamicShapeFusion {
		t.Error("DVM must force enable_dynamic_shape_fusion")
	}
}

func TestTokensAndJSON(t *testing.T) {
	f, _ := mustParse(t, "--opt_level=2 --dump_as_text=on --enable_expand_ops=Gelu,Softmax --composite_op_limit_size=+64")
	want := "--composite_op_limit_size=64 --dump_as_text=true --enable_expand_ops=Gelu,Softmax --opt_level=2"
	if f.Tokens() != want {
		t.Errorf("Tokens() = %q, want %q", f.Tokens(), want)
	}
	g, _ := mustParse(t, f.Tokens())
	if g.Tokens() != want {
		t.Errorf("round trip: %q", g.Tokens())
	}
	data, err := json.Marshal(f.View())
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Tokens   string
		Explicit []map[string]string
		Values   map[string]any
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Values) != len(Keys()) || v.Tokens != want || len(v.Explicit) != 4 || v.Explicit[0]["origin"] != EnvVar {
		t.Errorf("view: %s", data)
	}
	if l, ok := v.Values["disable_pass"].([]any); !ok || len(l) != 0 {
		t.Errorf("empty list must be []: %s", data)
	}
	if v.Values["opt_level"] != 2.0 || v.Values["dump_as_text"] != true {
		t.Errorf("values: %s", data)
	}
}

func TestKeysMatchReference(t *testing.T) {
	// Every key of RegisterFlags
	// (mindspore/ccsrc/backend/common/graph_kernel/graph_kernel_flags.cc),
	// so a field cannot silently lose its tag.
	want := strings.Fields(`opt_level fusion_ops_level parallel_ops_level reduce_fuse_depth online_tuning
	cpu_refer_thread_num recompute_increment_threshold recompute_peak_threshold composite_op_limit_size
	dump_as_text enable_stitch_fusion enable_recompute_fusion enable_parallel_fusion enable_horizontal_fusion
	enable_auto_tensor_inplace enable_dynamic_batch enable_low_precision enable_csr_fusion enable_debug_mode
	enable_lite_conv_tuning enable_vectorization enable_dynamic_shape_fusion enable_parallel_op_combine
	disable_matmul_post_fusion enable_allreduce_prologue_fusion enable_allreduce_epilogue_fusion
	exact_precision_mode enable_cce_lib repository_path target_os cpu_arch cpu_feature cpu_type kernel_generator
	enable_expand_ops enable_expand_ops_only disable_expand_ops enable_cluster_ops enable_cluster_ops_only
	disable_cluster_ops enable_simplify_exprs_only disable_simplify_exprs enable_pass disable_pass
	enable_cce_lib_ops enable_cce_lib_ops_only disable_cce_lib_ops enable_packet_ops_only disable_packet_ops
	enable_fusion_pattern_only disable_fusion_pattern`)
	slices.Sort(want)
	if !slices.Equal(Keys(), want) {
		t.Errorf("Keys() = %v\nwant %v", Keys(), want)
	}
}
