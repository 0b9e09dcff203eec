package akgcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"gkconv/internal/safefs"
)

// EnvVar is the environment variable that carries a flags string.
const EnvVar = "MS_DEV_GRAPH_KERNEL_FLAGS"

// maxJSONSize bounds a --path flags file; real ones are a few hundred bytes.
const maxJSONSize = 1 << 20

// rawFlag is one key=value before typing, with where it came from.
type rawFlag struct {
	key, value string
	org        Origin
}

// ParseFlags parses a graph_kernel_flags string such as
// "--opt_level=2 --enable_expand_ops=Gelu,Softmax --dump_as_text":
// whitespace-separated "--key=value" tokens, a bare "--key" meaning true.
// "--path=<file.json>" makes every flag come from that JSON object instead.
// source names the string in messages (e.g. EnvVar). Unknown and repeated
// keys are warnings (the first value of a repeated key is kept); bad tokens
// and bad values are errors, joined. The returned Flags is never nil: keys
// with bad values keep their defaults.
func ParseFlags(s, source string) (*Flags, []Warning, error) {
	raws, warns, errs := tokenize(s, source)
	f, w2, e2 := applyRaw(raws)
	return f, append(warns, w2...), errors.Join(append(errs, e2...)...)
}

// tokenize splits a flags string into raw flags, expanding --path.
func tokenize(s, source string) ([]rawFlag, []Warning, []error) {
	tokens := strings.Fields(s)
	org := Origin{File: source}
	for _, tok := range tokens {
		key, value, msg := splitToken(tok)
		if msg == "" && key == "path" {
			// As MindSpore: --path replaces the whole flags string.
			var warns []Warning
			if len(tokens) > 1 {
				warns = append(warns, Warning{File: source, Key: "path",
					Message: fmt.Sprintf("flags are read from %q; the other %d flag(s) are ignored", value, len(tokens)-1)})
			}
			raws, w2, errs := readFlagsJSON(value, org)
			return raws, append(warns, w2...), errs
		}
	}
	var (
		raws []rawFlag
		errs []error
	)
	for _, tok := range tokens {
		key, value, msg := splitToken(tok)
		if msg != "" {
			errs = append(errs, &Error{File: source, Msg: fmt.Sprintf("invalid flag %q: %s (expected --key=value)", tok, msg)})
			continue
		}
		raws = append(raws, rawFlag{key: key, value: value, org: org})
	}
	return raws, nil, errs
}

// splitToken splits "--key=value" or "--key"; msg says why a token is bad.
func splitToken(tok string) (key, value, msg string) {
	body, ok := strings.CutPrefix(tok, "--")
	if !ok {
		return "", "", "it does not start with --"
	}
	key, value, hasValue := strings.Cut(body, "=")
	switch {
	case key == "":
		return "", "", "empty key"
	case hasValue && strings.Contains(value, "="):
		return "", "", "more than one '='"
	}
	return key, value, ""
}

// applyRaw types the raw flags into a Flags value.
func applyRaw(raws []rawFlag) (*Flags, []Warning, []error) {
	f := NewFlags()
	var (
		warns []Warning
		errs  []error
	)
	seen := make(map[string]Origin, len(raws))
	var capped warnCap
	for _, r := range raws {
		w := Warning{File: r.org.File, Line: r.org.Line, Key: r.key}
		if r.key == "path" {
			w.Message = "--path is only honoured in a flags string or [graph_kernel_param], not inside a flags JSON file; ignored"
			capped.add(&warns, "--path keys, ignored", w)
			continue
		}
		if _, ok := flagIndex[r.key]; !ok {
			w.Message = "unknown flag, ignored" + suggestion(r.key, flagNames)
			capped.add(&warns, "unknown flags, ignored", w)
			continue
		}
		if first, dup := seen[r.key]; dup {
			w.Message = "repeated flag; the first value (" + first.String() + ") is kept"
			capped.add(&warns, "repeated flags", w)
			continue
		}
		seen[r.key] = r.org
		msg, err := f.set(r.key, r.value, r.org)
		if err != nil {
			errs = append(errs, err)
		} else if msg != "" {
			w.Message = msg
			warns = append(warns, w)
		}
	}
	capped.finish(&warns)
	// Backend-independent derived defaults follow the (possibly new) opt_level.
	f.deriveDefaults(Backend{Device: CPU})
	return f, warns, errs
}

var (
	validCPUArch    = []string{"arm", "aarch64", "x86_64"}
	validCPUFeature = []string{"neon", "sse", "avx", "avx512"}
	validCPUType    = []string{"core-avx2", "skylake-avx512", "core-avx-i", "haswell", "skylake"}
	knownGenerators = []string{"AKG", "AKG_V2", "AKG_MLIR", "DVM"}
)

// canonicalValue checks value for flag d and returns its canonical text, a
// warning, or an error message.
func canonicalValue(d flagDesc, value string) (canon, warn, msg string) {
	if strings.Contains(value, "=") {
		return "", "", fmt.Sprintf("value %q contains '=' (a flag is --key=value with one '=')", value)
	}
	switch d.kind {
	case kindBool:
		switch value {
		case "", "true", "True", "on", "1":
			return "true", "", ""
		case "false", "False", "off", "0":
			return "false", "", ""
		}
		return "", "", fmt.Sprintf("%q is not a boolean (use true/false, True/False, on/off or 1/0)", value)
	case kindInt:
		return canonicalInt(d.name, strings.TrimSpace(value))
	case kindString:
		return canonicalString(d.name, strings.TrimSpace(value))
	default:
		var items []string
		for it := range strings.SplitSeq(value, ",") {
			it = strings.TrimSpace(it)
			if it == "" {
				continue
			}
			if strings.ContainsFunc(it, unicode.IsSpace) {
				return "", "", fmt.Sprintf("list item %q contains whitespace", it)
			}
			items = append(items, it)
		}
		if len(items) == 0 {
			return "", "", "missing value (a comma-separated list is due)"
		}
		return strings.Join(items, ","), "", ""
	}
}

func canonicalInt(key, value string) (canon, warn, msg string) {
	if value == "" {
		return "", "", "missing value (an integer is due)"
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return "", "", fmt.Sprintf("%q is out of range", value)
		}
		return "", "", fmt.Sprintf("%q is not an integer", value)
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		return "", "", fmt.Sprintf("%q is out of range", value)
	}
	lo, hi := int64(0), int64(math.MaxInt32)
	switch key {
	case "opt_level":
		if n < 0 {
			return "", "", fmt.Sprintf("%d is negative (opt_level is 0 to 3)", n)
		}
		if n > 3 {
			return "3", fmt.Sprintf("%d is above 3, clamped to 3", n), ""
		}
	case "reduce_fuse_depth":
		lo = -1 // -1 selects the built-in depth
	case "online_tuning":
		hi = 3
	case "cpu_refer_thread_num", "composite_op_limit_size":
		lo = 1
	}
	if n < lo || n > hi {
		if hi == math.MaxInt32 {
			return "", "", fmt.Sprintf("%d is below %d", n, lo)
		}
		return "", "", fmt.Sprintf("%d is outside [%d, %d]", n, lo, hi)
	}
	return strconv.FormatInt(n, 10), "", ""
}

func canonicalString(key, value string) (canon, warn, msg string) {
	if value == "" {
		return "", "", "missing value"
	}
	var valid []string
	switch key {
	case "cpu_arch":
		valid = validCPUArch
	case "cpu_feature":
		valid = validCPUFeature
	case "cpu_type":
		valid = validCPUType
	case "kernel_generator":
		if !slices.Contains(knownGenerators, value) {
			return value, fmt.Sprintf("unknown kernel generator %q (known: %s)", value, strings.Join(knownGenerators, ", ")), ""
		}
	}
	if valid != nil && !slices.Contains(valid, value) {
		return "", "", fmt.Sprintf("%q is not one of %s", value, strings.Join(valid, ", "))
	}
	return value, "", ""
}

// readFlagsJSON reads a --path file: a JSON object whose values are strings.
func readFlagsJSON(path string, from Origin) ([]rawFlag, []Warning, []error) {
	fail := func(format string, args ...any) ([]rawFlag, []Warning, []error) {
		return nil, nil, []error{&Error{File: from.File, Line: from.Line, Key: "path", Msg: fmt.Sprintf(format, args...)}}
	}
	if path == "" {
		return fail("missing JSON file name")
	}
	// A FIFO is refused before it is opened, and the read is bounded by
	// the size stat declared (never more than a flags file can be).
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() > maxJSONSize {
		return fail("%s is %d bytes, more than a flags file can be (%d)", path, st.Size(), maxJSONSize)
	}
	data, err := safefs.ReadRegular(path, maxJSONSize)
	if err != nil {
		return fail("%v", err)
	}
	raws, errs := parseFlagsJSON(path, data)
	return raws, nil, errs
}

// parseFlagsJSON walks the object token by token to keep each key's line.
func parseFlagsJSON(name string, data []byte) ([]rawFlag, []error) {
	lineAt := func(off int64) int {
		if off > int64(len(data)) {
			off = int64(len(data))
		}
		return 1 + bytes.Count(data[:off], []byte{'\n'})
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	bad := func(err error) []error {
		return []error{&Error{File: name, Line: lineAt(dec.InputOffset()), Msg: "invalid JSON: " + err.Error()}}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, bad(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, []error{&Error{File: name, Line: lineAt(dec.InputOffset()), Msg: "a flags file must hold one JSON object of \"key\": \"value\" strings"}}
	}
	var (
		raws []rawFlag
		errs []error
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return raws, append(errs, bad(err)...)
		}
		key, _ := tok.(string) // object keys are always strings
		line := lineAt(dec.InputOffset())
		tok, err = dec.Token()
		if err != nil {
			return raws, append(errs, bad(err)...)
		}
		switch v := tok.(type) {
		case string:
			raws = append(raws, rawFlag{key: key, value: v, org: Origin{File: name, Line: line}})
			continue
		case json.Delim: // skip the nested value
			for depth := 1; depth > 0; {
				t, err := dec.Token()
				if err != nil {
					return raws, append(errs, bad(err)...)
				}
				if d, ok := t.(json.Delim); ok {
					if d == '{' || d == '[' {
						depth++
					} else {
						depth--
					}
				}
			}
		}
		errs = append(errs, &Error{File: name, Line: line, Key: key, Msg: "value must be a JSON string"})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return raws, append(errs, bad(err)...)
	}
	if _, err := dec.Token(); err != io.EOF {
		errs = append(errs, &Error{File: name, Line: lineAt(dec.InputOffset()), Msg: "trailing data after the JSON object"})
	}
	return raws, errs
}

// Suggestion returns ` (did you mean "x"?)` for the candidate nearest to key
// by edit distance, or "" when none is close.
func Suggestion(key string, candidates []string) string { return suggestion(key, candidates) }

// suggestion returns ` (did you mean "x"?)` for the nearest candidate by
// edit distance, or "" when none is close. It is called once per unknown
// name, and a config may name a million: candidates farther than the best
// so far are given up early (editDistanceWithin), without allocating.
func suggestion(key string, candidates []string) string {
	if len(key) > 64 {
		return ""
	}
	limit := max(2, len(key)/3) // farther than this is no suggestion
	best, bestD := "", limit+1
	var buf [2 * 65]int
	for _, c := range candidates {
		if strings.EqualFold(c, key) {
			return fmt.Sprintf(" (keys are case-sensitive: did you mean %q?)", c)
		}
		// Only a candidate nearer than the best so far can replace it.
		if d := editDistanceWithin(key, c, bestD-1, buf[:]); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistanceWithin is the Levenshtein distance over bytes of a and b when
// it is at most bound, else bound+1 (or more). buf holds the two rows of the
// table when it has room for 2*(len(b)+1) ints; else they are allocated.
func editDistanceWithin(a, b string, bound int, buf []int) int {
	if bound < 0 {
		return bound + 1
	}
	if d := len(a) - len(b); d > bound || -d > bound {
		return bound + 1
	}
	if len(buf) < 2*(len(b)+1) {
		buf = make([]int, 2*(len(b)+1))
	}
	prev, cur := buf[:len(b)+1], buf[len(b)+1:2*(len(b)+1)]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > bound { // every later row is at least rowMin
			return bound + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
