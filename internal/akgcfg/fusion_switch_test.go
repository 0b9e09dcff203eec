package akgcfg

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFusionRegistryKeys(t *testing.T) {
	c, err := ParseConfig("a.cfg", []byte("[registry]\nfusion_blacklists= ConvBatchNormFusion ,,MatMulAddFusion\ndisable_fusion=ON\n[ascend_context]\nfusion_switch_config_file_path=sw.json\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.FusionBlacklist(); !slices.Equal(got, []string{"ConvBatchNormFusion", "MatMulAddFusion"}) {
		t.Errorf("blacklist %q", got)
	}
	if off, err := c.FusionOff(); !off || err != nil {
		t.Errorf("disable_fusion: %v %v", off, err)
	}
	if c.FusionSwitchPath() != "sw.json" {
		t.Errorf("path %q", c.FusionSwitchPath())
	}
	c, _ = ParseConfig("b.cfg", []byte("[registry]\ndisable_fusion=maybe\n"))
	if _, err := c.FusionOff(); err == nil || !strings.Contains(err.Error(), "b.cfg: disable_fusion:") {
		t.Errorf("bad value: %v", err)
	}
	var none *Config
	if none.FusionBlacklist() != nil || none.FusionSwitchPath() != "" {
		t.Error("nil config")
	}
}

func TestLoadFusionSwitch(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "fs.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fs, err := LoadFusionSwitch(write(`{"Switch":{"GraphFusion":{"ALL":"off","ConvBatchnormFusionPass":"on"},"UBFusion":{"ALL":"Off"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if fs.GraphFusion["ALL"] || !fs.GraphFusion["ConvBatchnormFusionPass"] || fs.UBFusion["ALL"] {
		t.Errorf("%+v", fs)
	}
	for body, want := range map[string]string{
		`{"Switch":{"GraphFusion":{"ALL":"no"}}}`: `GraphFusion.ALL: "no": must be on or off`,
		`{"Switch":{"Other":{}}}`:                 "unknown section",
		`{}`:                                      `no "Switch" object`,
		`[1,2]`:                                   "is not",
	} {
		if _, err := LoadFusionSwitch(write(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	if _, err := LoadFusionSwitch(filepath.Join(dir, "none.json")); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("missing: %v", err)
	}
}
