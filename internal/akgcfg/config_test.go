package akgcfg

import (
	"errors"
	"gkconv/internal/repotest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func parseCfg(t *testing.T, content string) *Config {
	t.Helper()
	c, err := ParseConfig("akg.cfg", []byte(content))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return c
}

// cfgErrors returns the located errors of a config that must fail.
func cfgErrors(t *testing.T, content string) []*Error {
	t.Helper()
	_, err := ParseConfig("akg.cfg", []byte(content))
	if err == nil {
		t.Fatalf("ParseConfig(%q): want an error", content)
	}
	var out []*Error
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("error %v is not an *Error", e)
		}
		out = append(out, ce)
	}
	return out
}

func TestConfigBasic(t *testing.T) {
	c := parseCfg(t, `# comment
[graph_kernel_param]
opt_level = 2
 enable_expand_ops =  Square , Gelu ,
dump_as_text=
disable_cluster_ops=MatMul,Reshape # inline comment

[ascend_context]
soc_version=Ascend910B2
[micro_param]
enable_micro=false
`)
	f := c.Flags
	if f.OptLevel != 2 || !f.DumpAsText || !slices.Equal(f.EnableExpandOps, []string{"Square", "Gelu"}) ||
		!slices.Equal(f.DisableClusterOps, []string{"MatMul", "Reshape"}) {
		t.Errorf("flags %s", f.Tokens())
	}
	if o, _ := f.Origin("enable_expand_ops"); o.String() != "akg.cfg:4" {
		t.Errorf("origin %v", o)
	}
	if !c.FusionEnabled() {
		t.Error("fusion must be enabled with opt_level=2")
	}
	if c.SocVersion() != "Ascend910B2" || c.Sections["micro_param"]["enable_micro"] != "false" {
		t.Errorf("sections %v", c.Sections)
	}
	if b := c.Backend(Ascend); !b.Is910B() {
		t.Errorf("backend %v must be a 910B", b)
	}
	if c.Sections[GraphKernelSection]["opt_level"] != "2" {
		t.Errorf("graph_kernel_param section not kept: %v", c.Sections)
	}
}

func TestConfigMalformedLines(t *testing.T) {
	errs := cfgErrors(t, "[graph_kernel_param]\nopt_level=2\n\ndump_as_text\n[ascend_context\n=3\n")
	want := []string{
		`akg.cfg:4: line is not key=value (no '='): "dump_as_text"`,
		`akg.cfg:5: unclosed section header "[ascend_context" (missing ']')`,
		`akg.cfg:6: empty key name: "=3"`,
	}
	if len(errs) != len(want) {
		t.Fatalf("errors %v", errs)
	}
	for i := range want {
		if errs[i].Error() != want[i] {
			t.Errorf("error %d = %q, want %q", i, errs[i].Error(), want[i])
		}
	}
	if e := cfgErrors(t, "[]\n"); e[0].Error() != "akg.cfg:1: empty section name" {
		t.Errorf("got %v", e)
	}
	if e := cfgErrors(t, "[micro_param]\nk=`abc\nmore\n"); e[0].Line != 2 || e[0].Key != "k" {
		t.Errorf("unterminated quote: %v", e)
	}
}

func TestConfigBadValues(t *testing.T) {
	errs := cfgErrors(t, `[graph_kernel_param]
# the level
opt_level=high
dump_as_text=true,false
enable_expand_ops=a=b
online_tuning=9
`)
	want := []string{
		`akg.cfg:3: opt_level: "high" is not an integer`,
		`akg.cfg:4: dump_as_text: "true,false" is not a boolean (use true/false, True/False, on/off or 1/0)`,
		`akg.cfg:5: enable_expand_ops: value "a=b" contains '=' (a flag is --key=value with one '=')`,
		`akg.cfg:6: online_tuning: 9 is outside [0, 3]`,
	}
	if len(errs) != len(want) {
		t.Fatalf("errors %v", errs)
	}
	for i := range want {
		if errs[i].Error() != want[i] {
			t.Errorf("error %d = %q, want %q", i, errs[i].Error(), want[i])
		}
	}
}

func TestConfigLinesAfterMultiline(t *testing.T) {
	// A backtick value spans lines; keys after it keep their real line.
	errs := cfgErrors(t, "[micro_param]\nnote=`one\ntwo`\n[graph_kernel_param]\nopt_level=2\nopt_level=x\nfusion_ops_level=y\n")
	if len(errs) != 1 || errs[0].Line != 7 || errs[0].Key != "fusion_ops_level" {
		t.Fatalf("errors %v", errs)
	}
	// The repeated opt_level (line 6) is only a warning: the first value wins.
	c := parseCfg(t, "[graph_kernel_param]\nopt_level=2\nopt_level=3\nopt_level=2\n")
	if c.Flags.OptLevel != 2 || len(c.Warnings) != 2 || c.Warnings[0].Line != 3 || c.Warnings[1].Line != 4 {
		t.Errorf("opt_level=%d warnings %v", c.Flags.OptLevel, c.Warnings)
	}
}

func TestConfigWarnings(t *testing.T) {
	c := parseCfg(t, `stray=1
[graph_kernel_param]
opt_level=2
opt_levle=3
[graph_kernel_params]
x=1
[registry]
plugin_path=a
plugin_path=b
`)
	got := make([]string, len(c.Warnings))
	for i, w := range c.Warnings {
		got[i] = w.String()
	}
	want := []string{
		"akg.cfg:1: stray: key outside any section, ignored",
		`akg.cfg:5: unknown section [graph_kernel_params], ignored (did you mean "graph_kernel_param"?)`,
		"akg.cfg:9: plugin_path: repeated key; the first value is kept",
		`akg.cfg:4: opt_levle: unknown flag, ignored (did you mean "opt_level"?)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c.Sections["registry"]["plugin_path"] != "a" {
		t.Errorf("registry %v", c.Sections["registry"])
	}
	if _, ok := c.Sections["graph_kernel_params"]; ok {
		t.Error("unknown sections are dropped")
	}
}

func TestConfigPathKey(t *testing.T) {
	js := writeFile(t, "flags.json", `{"opt_level": "1", "disable_expand_ops": "Softmax"}`)
	c := parseCfg(t, "[graph_kernel_param]\npath="+js+"\nopt_level=3\n")
	if c.Flags.OptLevel != 1 || !slices.Equal(c.Flags.DisableExpandOps, []string{"Softmax"}) {
		t.Errorf("flags %s", c.Flags.Tokens())
	}
	if len(c.Warnings) != 1 || c.Warnings[0].Line != 2 {
		t.Errorf("warnings %v", c.Warnings)
	}
	if !c.FusionEnabled() {
		t.Error("fusion must be on: the section is non-empty and opt_level is 1")
	}
}

func TestLoadPrecedence(t *testing.T) {
	p := writeFile(t, "akg.cfg", "[graph_kernel_param]\nopt_level=2\nenable_expand_ops=Gelu\n")
	c, w, err := Load(p, "--opt_level=1 --dump_as_text")
	if err != nil {
		t.Fatal(err)
	}
	f := c.Flags
	if f.OptLevel != 1 || !f.DumpAsText || !slices.Equal(f.EnableExpandOps, []string{"Gelu"}) {
		t.Errorf("merged flags %s", f.Tokens())
	}
	if f.EnableRecomputeFusion {
		t.Error("opt_level 1 from env: recompute must follow it")
	}
	if o, _ := f.Origin("opt_level"); o.File != EnvVar {
		t.Errorf("opt_level origin %v", o)
	}
	if o, _ := f.Origin("enable_expand_ops"); o.File != p || o.Line != 3 {
		t.Errorf("enable_expand_ops origin %v", o)
	}
	if len(w) != 1 || w[0].Key != "opt_level" || !strings.Contains(w[0].Message, p+":2") {
		t.Errorf("warnings %v", w)
	}
	if !c.FusionEnabled() {
		t.Error("fusion must be on")
	}
	// The env var can also turn fusion off.
	c, _, _ = Load(p, "--opt_level=0")
	if c.FusionEnabled() {
		t.Error("opt_level=0 from env must turn fusion off")
	}
	// Bad env values are errors naming the variable.
	if _, _, err := Load(p, "--opt_level=x"); err == nil || !strings.HasPrefix(err.Error(), EnvVar+": opt_level: ") {
		t.Errorf("env error %v", err)
	}
}

func TestEnvAloneDoesNotEnableFusion(t *testing.T) {
	c, w, err := Load("", "--opt_level=2")
	if err != nil {
		t.Fatal(err)
	}
	if c.Flags.OptLevel != 2 || c.FusionEnabled() {
		t.Errorf("opt_level=%d fusion=%v", c.Flags.OptLevel, c.FusionEnabled())
	}
	if len(w) != 1 || !strings.Contains(w[0].Message, "fusion stays off") {
		t.Errorf("warnings %v", w)
	}
	// A config without [graph_kernel_param] behaves the same.
	p := writeFile(t, "quant.cfg", "[ascend_context]\nsoc_version=Ascend910B2\n")
	c, _, err = Load(p, "--opt_level=2")
	if err != nil || c.FusionEnabled() {
		t.Errorf("fusion=%v err=%v", c.FusionEnabled(), err)
	}
	// A section without opt_level keeps the Lite default 0, with a warning.
	p = writeFile(t, "noopt.cfg", "[graph_kernel_param]\nenable_expand_ops=Gelu\n")
	c, w, err = Load(p, "")
	if err != nil || c.FusionEnabled() || len(w) != 1 || w[0].Key != "opt_level" {
		t.Errorf("fusion=%v warnings=%v err=%v", c.FusionEnabled(), w, err)
	}
	// No config and no env: defaults, fusion off.
	c, w, err = Load("", "")
	if err != nil || c.FusionEnabled() || len(w) != 0 || c.Flags.Tokens() != "" {
		t.Errorf("empty load: %v %v", w, err)
	}
}

func TestLoadConfigFileErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.cfg")
	_, err := LoadConfigFile(missing)
	if err == nil || !strings.HasPrefix(err.Error(), missing+": cannot read config file: ") {
		t.Errorf("missing file: %v", err)
	}
	p := writeFile(t, "bad.cfg", "[graph_kernel_param]\n\nopt_level=high\n")
	_, _, err = Load(p, "")
	if err == nil || err.Error() != p+`:3: opt_level: "high" is not an integer` {
		t.Errorf("got %v", err)
	}
}

func TestSampleConfig(t *testing.T) {
	p := filepath.Join(repotest.RepoRoot(t), "configs", "akg.cfg")
	c, w, err := Load(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 0 || !c.FusionEnabled() || c.Flags.Tokens() != "--opt_level=2" {
		t.Errorf("sample config: fusion=%v tokens=%q warnings=%v", c.FusionEnabled(), c.Flags.Tokens(), w)
	}
}

func TestConfigRepeatedEmptyValues(t *testing.T) {
	// ini.v1 drops empty shadow values; lines must still line up.
	c := parseCfg(t, "[ graph_kernel_param ]\ndump_as_text=\ndump_as_text=false\ndump_as_text=''\nopt_level=1\n[registry]\nplugin_path=\nplugin_path=b\n")
	if !c.Flags.DumpAsText || c.Flags.OptLevel != 1 {
		t.Errorf("flags %s", c.Flags.Tokens())
	}
	var lines []int
	for _, w := range c.Warnings {
		lines = append(lines, w.Line)
	}
	if !slices.Equal(lines, []int{8, 3, 4}) {
		t.Errorf("warning lines %v (%v)", lines, c.Warnings)
	}
	if o, _ := c.Flags.Origin("opt_level"); o.Line != 5 {
		t.Errorf("opt_level origin %v", o)
	}
	if v, ok := c.Sections["registry"]["plugin_path"]; !ok || v != "" {
		t.Errorf("registry %v", c.Sections["registry"])
	}
}
