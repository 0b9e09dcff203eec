package akgcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gkconv/internal/safefs"
)

// converter_lite's switches of its graph fusion passes (the "anf fusion pass
// manager" of tools/converter/anf_transform.cc, run before graph-kernel
// fusion): [registry] fusion_blacklists, [registry] disable_fusion, and for
// Ascend the ATC fusion switch file named by [ascend_context]
// fusion_switch_config_file_path.

// FusionBlacklist returns [registry] fusion_blacklists split at commas
// (converter_lite's list of pass names not to run), blanks dropped.
func (c *Config) FusionBlacklist() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, s := range strings.Split(c.Sections["registry"]["fusion_blacklists"], ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// FusionOff reports whether [registry] disable_fusion turns every fusion
// pass off ("on", any case). A value other than on/off is an error.
func (c *Config) FusionOff() (bool, error) {
	if c == nil {
		return false, nil
	}
	v, ok := c.Sections["registry"]["disable_fusion"]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on":
		return true, nil
	case "off", "":
		return false, nil
	}
	return false, &Error{File: c.Path, Key: "disable_fusion", Msg: fmt.Sprintf("%q: must be on or off", v)}
}

// FusionSwitchPath returns [ascend_context] fusion_switch_config_file_path
// ("" when absent).
func (c *Config) FusionSwitchPath() string {
	if c == nil {
		return ""
	}
	return strings.TrimSpace(c.Sections["ascend_context"]["fusion_switch_config_file_path"])
}

// FusionSwitch is an ATC fusion switch file:
//
//	{"Switch": {"GraphFusion": {"ALL": "off", "ConvBatchnormFusionPass": "on"},
//	            "UBFusion":    {"ALL": "off"}}}
//
// Each section maps a pass name (or ALL) to on/off; a named pass overrides
// ALL of its section.
type FusionSwitch struct {
	Path        string
	GraphFusion map[string]bool
	UBFusion    map[string]bool
}

// maxSwitchFileSize bounds what LoadFusionSwitch reads.
const maxSwitchFileSize = 1 << 20

// LoadFusionSwitch reads an ATC fusion switch file. Errors name the file
// and, for a bad value, the section and pass.
func LoadFusionSwitch(path string) (*FusionSwitch, error) {
	data, err := safefs.ReadRegular(path, maxSwitchFileSize)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read fusion switch file: " + err.Error()}
	}
	var doc struct {
		Switch map[string]map[string]string `json:"Switch"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, &Error{File: path, Msg: "fusion switch file is not {\"Switch\": {\"GraphFusion\": {...}, \"UBFusion\": {...}}}: " + err.Error()}
	}
	if doc.Switch == nil {
		return nil, &Error{File: path, Msg: `fusion switch file has no "Switch" object`}
	}
	fs := &FusionSwitch{Path: path, GraphFusion: map[string]bool{}, UBFusion: map[string]bool{}}
	for _, sec := range slices.Sorted(maps.Keys(doc.Switch)) {
		var dst map[string]bool
		switch sec {
		case "GraphFusion":
			dst = fs.GraphFusion
		case "UBFusion":
			dst = fs.UBFusion
		default:
			return nil, &Error{File: path, Key: sec, Msg: "unknown section: ATC's are GraphFusion and UBFusion"}
		}
		for name, v := range doc.Switch[sec] {
			switch strings.ToLower(v) {
			case "on":
				dst[name] = true
			case "off":
				dst[name] = false
			default:
				return nil, &Error{File: path, Key: sec + "." + name, Msg: fmt.Sprintf("%q: must be on or off", v)}
			}
		}
	}
	return fs, nil
}
