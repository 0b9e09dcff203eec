package akgcfg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/ini.v1"

	"gkconv/internal/safefs"
	"gkconv/internal/textsafe"
)

// GraphKernelSection is the converter_lite section holding the flags.
const GraphKernelSection = "graph_kernel_param"

// KnownSections are the converter_lite config sections kept in
// Config.Sections; others are warned about and dropped.
var KnownSections = []string{
	"common_quant_param", "full_quant_param", "weight_quant_param", "mixed_bit_weight_quant_param",
	"data_preprocess_param", "registry", "micro_param", "cpu_option_cfg_param", "custom_opp_path",
	"transform_quant_param", "dynamic_quant_param", GraphKernelSection,
	"ascend_context", "acl_option_cfg_param", "acl_init_options", "acl_build_options",
	"aoe_global_options", "aoe_tuning_options", "om_converter_options", "model_param",
}

// quantSections ask converter_lite for post-training quantization: they are
// read by parseQuant (quant_parse.go), whose keys are implemented or errors.
var quantSections = []string{
	commonQuantSection, preprocessSection, fullQuantSection, weightQuantSection, mixedBitQuantSection,
	dynamicQuantSection, transformQuantSection,
}

// usedSections are the known sections this converter reads; the others are
// converter_lite's (micro code, Ascend ACL/AOE/OM options, calibration
// preprocessing) and are warned about as ignored.
var usedSections = []string{GraphKernelSection, "registry", "ascend_context"}

// Config is a loaded converter configuration.
type Config struct {
	Path     string                       // config file, "" when none
	Flags    *Flags                       // merged graph-kernel flags (file, then env per key)
	Sections map[string]map[string]string // known sections, key -> value (first value of a repeated key)
	Warnings []Warning                    // everything non-fatal, in file order
	// Quant is the post-training quantization request (nil: none).
	Quant *QuantConfig

	gkKeys int // number of key lines in [graph_kernel_param]
}

// FusionEnabled reports whether graph-kernel fusion runs: as converter_lite,
// only when [graph_kernel_param] is non-empty and opt_level > 0, so
// MS_DEV_GRAPH_KERNEL_FLAGS alone never turns it on.
func (c *Config) FusionEnabled() bool {
	return c != nil && c.gkKeys > 0 && c.Flags != nil && c.Flags.OptLevel > 0
}

// Source names where the value of the graph-kernel flag key came from, for
// a message about it: "MS_DEV_GRAPH_KERNEL_FLAGS" when the environment
// variable set it, "akg.cfg:3" for a line of the config file, the --path
// JSON file and line; for a key not set explicitly, the config file (or the
// variable when there is no file).
func (c *Config) Source(key string) string {
	if c != nil && c.Flags != nil {
		if o, ok := c.Flags.Origin(key); ok && o.File != "" {
			return o.String()
		}
	}
	if c != nil && c.Path != "" {
		return c.Path
	}
	return EnvVar
}

// SocVersion returns [ascend_context] soc_version ("" when absent).
func (c *Config) SocVersion() string {
	if c == nil {
		return ""
	}
	return c.Sections["ascend_context"]["soc_version"]
}

// Backend returns the backend for device with the config's Ascend chip.
func (c *Config) Backend(d Device) Backend {
	b := Backend{Device: d}
	if d == Ascend {
		b.Soc = c.SocVersion()
	}
	return b
}

// Load reads the config file (none when configPath is "") and the value of
// MS_DEV_GRAPH_KERNEL_FLAGS (env, "" when unset) and merges them: a key in
// env wins over the same key in the file. Flags still need Resolve for the
// backend. The config is nil only when err is non-nil.
func Load(configPath, env string) (*Config, []Warning, error) {
	cfg := &Config{Flags: NewFlags(), Sections: map[string]map[string]string{}}
	if configPath != "" {
		c, err := LoadConfigFile(configPath)
		if err != nil {
			return nil, nil, err
		}
		cfg = c
	}
	if strings.TrimSpace(env) != "" {
		ef, w, err := ParseFlags(env, EnvVar)
		cfg.Warnings = append(cfg.Warnings, w...)
		if err != nil {
			return nil, cfg.Warnings, err
		}
		for _, k := range ef.ExplicitKeys() {
			if o, ok := cfg.Flags.Origin(k); ok {
				cfg.Warnings = append(cfg.Warnings, Warning{File: EnvVar, Key: k,
					Message: fmt.Sprintf("overrides the value from %s", o)})
			}
			if cfg.Flags.explicit == nil {
				cfg.Flags.explicit = map[string]setting{}
			}
			cfg.Flags.explicit[k] = ef.explicit[k]
			cfg.Flags.store(flagTable[flagIndex[k]], ef.explicit[k].canon)
		}
		cfg.Flags.deriveDefaults(Backend{Device: CPU})
		if cfg.gkKeys == 0 {
			cfg.Warnings = append(cfg.Warnings, Warning{File: EnvVar,
				Message: "set, but the config has no [graph_kernel_param] keys: graph-kernel fusion stays off (as in converter_lite)"})
		}
	}
	if cfg.gkKeys > 0 && cfg.Flags.OptLevel == 0 && !cfg.Flags.IsSet("opt_level") {
		cfg.Warnings = append(cfg.Warnings, Warning{File: cfg.Path, Key: "opt_level",
			Message: "not set: it defaults to 0 in converter_lite, so graph-kernel fusion stays off (set opt_level=2)"})
	}
	return cfg, cfg.Warnings, nil
}

// maxConfigSize bounds what LoadConfigFile reads.
const maxConfigSize = 16 << 20

// LoadConfigFile reads a converter_lite INI config file. Every key=value of
// [graph_kernel_param] becomes a --key=value flag (no whitelist); the other
// known sections are kept as maps. Errors name file, line and key.
func LoadConfigFile(path string) (*Config, error) {
	// Stat first: a FIFO or device given as the config would block or never
	// end; a config file is small.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read config file: not a regular file (%s)", st.Mode().Type())}
	} else if err == nil && st.Size() > maxConfigSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read config file: %d bytes, more than a config file can be (%d)", st.Size(), maxConfigSize)}
	}
	data, err := safefs.ReadRegular(path, maxConfigSize) // bounded by the size stat declared
	if err != nil {
		msg := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, &Error{File: path, Msg: "cannot read config file: " + msg}
	}
	return ParseConfig(path, data)
}

// ParseConfig parses config file contents; name is used in messages.
func ParseConfig(name string, data []byte) (*Config, error) {
	scan := prescan(name, data)
	if len(scan.errs) > 0 {
		return nil, errors.Join(scan.errs...)
	}
	file, err := ini.LoadSources(ini.LoadOptions{
		KeyValueDelimiters:         "=",  // converter_lite splits at '=' only
		AllowShadows:               true, // keep repeated keys to warn about them
		AllowDuplicateShadowValues: true,
		IgnoreContinuation:         true, // one key per line, so lines map 1:1
		SpaceBeforeInlineComment:   true, // "x # c" is a comment, "a#b" a value
	}, data)
	if err != nil {
		// The pre-scan mirrors ini.v1's syntax, so this is a corner case it
		// misses: locate the line by the text the error quotes.
		return nil, &Error{File: name, Line: scan.locate(err.Error()), Msg: err.Error()}
	}

	cfg := &Config{Path: name, Sections: map[string]map[string]string{}}
	var raws []rawFlag
	var capped warnCap
	keyLines := map[[2]string]int{}
	for _, sec := range file.Sections() {
		secName := strings.TrimSpace(sec.Name())
		known := slices.Contains(KnownSections, secName)
		if !known && secName != ini.DefaultSection {
			capped.add(&cfg.Warnings, "unknown sections, ignored", Warning{File: name, Line: scan.sectionLine[sec.Name()],
				Message: fmt.Sprintf("unknown section [%s], ignored%s", textsafe.Escape(secName), suggestion(secName, KnownSections))})
			continue
		}
		if secName != ini.DefaultSection && len(sec.Keys()) > 0 {
			line := scan.sectionLine[sec.Name()]
			switch {
			case slices.Contains(quantSections, secName):
				// parseQuant, below
			case !slices.Contains(usedSections, secName):
				cfg.Warnings = append(cfg.Warnings, Warning{File: name, Line: line, Message: fmt.Sprintf(
					"section [%s] is converter_lite's and not implemented here; its %d key(s) are ignored", secName, len(sec.Keys()))})
			}
		}
		for _, key := range sec.Keys() {
			for _, kv := range scan.occurrences(sec.Name(), key) {
				val := kv.value
				line := kv.line
				org := Origin{File: name, Line: line}
				switch {
				case secName == ini.DefaultSection:
					capped.add(&cfg.Warnings, "keys outside any section, ignored", Warning{File: name, Line: line, Key: key.Name(),
						Message: "key outside any section, ignored"})
					continue
				case secName == GraphKernelSection:
					cfg.gkKeys++
					raws = append(raws, rawFlag{key: key.Name(), value: val, org: org})
				}
				m := cfg.Sections[secName]
				if m == nil {
					m = map[string]string{}
					cfg.Sections[secName] = m
				}
				if _, dup := m[key.Name()]; dup {
					if secName != GraphKernelSection { // the flags parser warns for these
						capped.add(&cfg.Warnings, "repeated keys", Warning{File: name, Line: line, Key: key.Name(),
							Message: "repeated key; the first value is kept"})
					}
					continue
				}
				m[key.Name()] = val
				keyLines[[2]string{secName, key.Name()}] = line
			}
		}
	}

	capped.finish(&cfg.Warnings)
	q, qWarns, errs := parseQuant(name, cfg.Sections, keyLines)
	cfg.Quant = q
	cfg.Warnings = append(cfg.Warnings, qWarns...)
	raws, pathWarns, pathErrs := expandPath(raws)
	cfg.Warnings = append(cfg.Warnings, pathWarns...)
	errs = append(errs, pathErrs...)
	f, warns, flagErrs := applyRaw(raws)
	cfg.Flags = f
	cfg.Warnings = append(cfg.Warnings, warns...)
	errs = append(errs, flagErrs...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

// expandPath handles path=<file.json> in [graph_kernel_param]: as in a flags
// string, the JSON file then supplies every flag.
func expandPath(raws []rawFlag) ([]rawFlag, []Warning, []error) {
	i := slices.IndexFunc(raws, func(r rawFlag) bool { return r.key == "path" })
	if i < 0 {
		return raws, nil, nil
	}
	p := raws[i]
	var warns []Warning
	if len(raws) > 1 {
		warns = append(warns, Warning{File: p.org.File, Line: p.org.Line, Key: "path",
			Message: fmt.Sprintf("flags are read from %q; the other %d key(s) of [%s] are ignored", p.value, len(raws)-1, GraphKernelSection)})
	}
	js, w, errs := readFlagsJSON(p.value, p.org)
	return js, append(warns, w...), errs
}

// scanResult maps each key occurrence and section header to its line.
type scanResult struct {
	keys        map[[2]string][]occurrence // (ini.v1 section name, key) -> occurrences, in file order
	sectionLine map[string]int             // section -> first header line
	lines       []string
	errs        []error
}

// occurrence is one key=value line; empty tells whether ini.v1 reads an
// empty value there.
type occurrence struct {
	line  int
	empty bool
}

type keyValue struct {
	value string
	line  int
}

// occurrences pairs each value ini.v1 read for key with its line. ini.v1
// keeps repeated keys as shadows but leaves out the empty ones, so the
// pre-scan's idea of which occurrences are empty puts them back in place.
// If the two disagree the values are kept without lines.
func (s *scanResult) occurrences(section string, key *ini.Key) []keyValue {
	occ := s.keys[[2]string{section, key.Name()}]
	shadows := key.ValueWithShadows() // non-empty values, the first included
	if key.Value() != "" && len(shadows) > 0 {
		shadows = shadows[1:]
	}
	out := []keyValue{{value: key.Value()}}
	if len(occ) > 0 {
		out[0].line = occ[0].line
		j := 0
		for _, o := range occ[1:] {
			kv := keyValue{line: o.line}
			if !o.empty {
				if j == len(shadows) {
					break
				}
				kv.value = shadows[j]
				j++
			}
			out = append(out, kv)
		}
		if j == len(shadows) && len(out) == len(occ) {
			return out
		}
	}
	out = out[:1]
	out[0].line = 0
	for _, v := range shadows {
		out = append(out, keyValue{value: v})
	}
	return out
}

// locate finds the line whose text an ini.v1 error message quotes.
func (s *scanResult) locate(msg string) int {
	for i, l := range s.lines {
		if t := strings.TrimSpace(l); t != "" && strings.Contains(msg, t) {
			return i + 1
		}
	}
	if strings.Contains(msg, "auto-increment") {
		// ini.v1 refuses a second "-" (auto-increment) key in a repeated
		// section without quoting a line: the last such key is the one.
		for i := len(s.lines) - 1; i >= 0; i-- {
			if k, _, ok := strings.Cut(s.lines[i], "="); ok && strings.TrimSpace(k) == "-" {
				return i + 1
			}
			if k, _, ok := strings.Cut(s.lines[i], ":"); ok && strings.TrimSpace(k) == "-" {
				return i + 1
			}
		}
	}
	return 0
}

// prescan walks the file as ini.v1's parser does (with the options used in
// ParseConfig) to record line numbers, which ini.v1 does not keep, and to
// report malformed lines with their number.
func prescan(name string, data []byte) *scanResult {
	s := &scanResult{keys: map[[2]string][]occurrence{}, sectionLine: map[string]int{}}
	switch { // ini.v1 drops a UTF-8 or UTF-16 byte-order mark
	case len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF:
		data = data[3:]
	case len(data) >= 2 && (data[0] == 0xFE && data[1] == 0xFF || data[0] == 0xFF && data[1] == 0xFE):
		data = data[2:]
	}
	s.lines = strings.Split(string(data), "\n")
	bad := func(line int, key, format string, args ...any) {
		s.errs = append(s.errs, &Error{File: name, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	section := ini.DefaultSection
	autoKey := 1
	for i := 0; i < len(s.lines); i++ {
		ln := i + 1
		t := strings.TrimLeftFunc(s.lines[i], unicode.IsSpace)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			end := strings.LastIndexByte(t, ']')
			if end < 0 {
				bad(ln, "", "unclosed section header %q (missing ']')", strings.TrimSpace(t))
				continue
			}
			if end == 1 {
				bad(ln, "", "empty section name")
				continue
			}
			section = t[1:end] // ini.v1's name, untrimmed
			if _, ok := s.sectionLine[section]; !ok {
				s.sectionLine[section] = ln
			}
			autoKey = 1
			continue
		}
		key, rest, msg := splitKeyLine(t, i < len(s.lines)-1)
		if msg != "" {
			bad(ln, "", "%s: %q", msg, strings.TrimSpace(t))
			continue
		}
		if key == "-" { // ini.v1 auto-increment key
			key = "#" + strconv.Itoa(autoKey)
			autoKey++
		}
		id := [2]string{section, key}

		// A value opened by """ or ` without its closing quote runs over
		// the following lines.
		v := strings.TrimLeftFunc(rest, unicode.IsSpace)
		vlen := len(v)
		if i < len(s.lines)-1 {
			vlen++ // ini.v1 sees the line with its '\n'
		}
		var q string
		switch {
		case vlen > 3 && strings.HasPrefix(v, `"""`):
			q = `"""`
		case v != "" && v[0] == '`':
			q = "`"
		}
		if q == "" || strings.Contains(v[len(q):], q) {
			s.keys[id] = append(s.keys[id], occurrence{line: ln, empty: emptyValue(v, q)})
			continue
		}
		s.keys[id] = append(s.keys[id], occurrence{line: ln}) // a multi-line value has its '\n'
		closed := false
		for i+1 < len(s.lines) {
			i++
			if strings.Contains(s.lines[i], q) {
				closed = true
				break
			}
		}
		if !closed {
			bad(ln, key, "quoted value opened with %s is never closed", q)
		}
	}
	return s
}

// emptyValue tells whether ini.v1 reads v (left-trimmed, closed on its own
// line when opened by quote q) as "", as its readValue does.
func emptyValue(v, q string) bool {
	if q != "" {
		return strings.LastIndex(v[len(q):], q) == 0
	}
	t := strings.TrimSpace(v)
	i := strings.Index(t, " #") // inline comment (SpaceBeforeInlineComment)
	if i < 0 {
		i = strings.Index(t, " ;")
	}
	if i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t == "" || t == `""` || t == "''"
}

// splitKeyLine splits "key = value" as ini.v1's readKeyName does with '='
// as the only delimiter, including its quoted-key forms.
// hasNL says whether the line had a '\n', which ini.v1 counts in lengths.
func splitKeyLine(t string, hasNL bool) (key, rest, msg string) {
	n := len(t)
	if hasNL {
		n++
	}
	var q string
	switch t[0] {
	case '"':
		q = `"`
		if n > 6 && strings.HasPrefix(t, `"""`) {
			q = `"""`
		}
	case '`':
		q = "`"
	}
	if q != "" {
		pos := strings.Index(t[len(q):], q)
		if pos < 0 {
			return "", "", "key quote is never closed"
		}
		pos += len(q)
		eq := strings.IndexByte(t[pos+len(q):], '=')
		if eq < 0 {
			return "", "", "line is not key=value (no '=')"
		}
		key = strings.TrimSpace(t[len(q):pos])
		if key == "" {
			return "", "", "empty key name"
		}
		return key, t[pos+len(q)+eq+1:], ""
	}
	eq := strings.IndexByte(t, '=')
	switch {
	case eq < 0:
		return "", "", "line is not key=value (no '=')"
	case eq == 0:
		return "", "", "empty key name"
	}
	return strings.TrimSpace(t[:eq]), t[eq+1:], ""
}
