// The C++ headers (ops/infer, cxx_api): the classes of primitives that
// have no YAML definition, their Init parameters, setters and names.

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	reConst     = regexp.MustCompile(`constexpr\s+(?:auto|char)\s+(\w+)\s*(?:\[\])?\s*=\s*"([^"]*)"\s*;`)
	reClass     = regexp.MustCompile(`\bclass\s+(?:OPS_API\s+|MIND_API\s+)?(\w+)\s*(?:final\s*)?:\s*public\s+(?:(?:mindspore::)?ops::)?(\w+)\s*\{`)
	reSetterDef = regexp.MustCompile(`\bvoid\s+(\w+)::set_(\w+)\s*\(`)
	reInitDef   = regexp.MustCompile(`\bvoid\s+(\w+)::Init\s*\(`)
	reAddAttr   = regexp.MustCompile(`\b(?:AddAttr|set_attr)\s*\(\s*(?:(?:mindspore::)?ops::)?(\w+|"[^"]*")\s*,`)
	reCallSet   = regexp.MustCompile(`\bset_(\w+)\s*\(\s*(\w+)\s*\)`)
	reRefOps    = regexp.MustCompile(`@ref\s+mindspore\.ops\.(\w+)\s+for\s+the\s+inputs`)
	reIdent     = regexp.MustCompile(`^[A-Za-z_]\w*$`)
)

// stripCComments blanks out // and /* */ comments (string and char literals
// are left alone); offsets are preserved so that positions in the stripped
// text index the raw text too.
func stripCComments(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"' || b[i] == '\'':
			q := b[i]
			for i++; i < len(b) && b[i] != q; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			for ; i+1 < len(b) && !(b[i] == '*' && b[i+1] == '/'); i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			if i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i++
			}
		}
	}
	return string(b)
}

// matchClose returns the index of the bracket closing s[open].
func matchClose(s string, open int) int {
	pairs := map[byte]byte{'(': ')', '{': '}', '[': ']'}
	oc := s[open]
	cc := pairs[oc]
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			q := s[i]
			for i++; i < len(s) && s[i] != q; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case oc:
			depth++
		case cc:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTop splits s on commas outside (), {}, [], <> and quotes.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{', '[', '<':
			depth++
		case ')', '}', ']', '>':
			depth--
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

type cparam struct{ typ, name, def string }

// parseParams parses a C++ parameter list ("const PadMode &pad_mode = VALID,
// ..."). A parameter without a name (set_median(const float)) gets "".
func parseParams(s string) []cparam {
	var out []cparam
	for _, p := range splitTop(s) {
		p = squash(p)
		if p == "" || p == "void" {
			continue
		}
		var def string
		if eq := topLevelEq(p); eq >= 0 {
			def = strings.TrimSpace(p[eq+1:])
			p = strings.TrimSpace(p[:eq])
		}
		typ, name := p, ""
		if i := strings.LastIndexAny(p, " &*"); i >= 0 && reIdent.MatchString(p[i+1:]) && !isTypeWord(p[i+1:]) {
			typ, name = strings.TrimSpace(p[:i+1]), p[i+1:]
		}
		typ = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(typ), "&"))
		typ = strings.TrimSpace(strings.TrimPrefix(typ, "const "))
		out = append(out, cparam{typ: typ, name: name, def: def})
	}
	return out
}

func isTypeWord(w string) bool {
	switch w {
	case "int", "int64_t", "int32_t", "bool", "float", "double", "size_t", "uint8_t":
		return true
	}
	return false
}

func topLevelEq(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{', '[', '<':
			depth++
		case ')', '}', ']', '>':
			depth--
		case '=':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isEnumType: a capitalized plain type name other than TypeId/TypePtr is
// one of the enums of mindapi/base (PadMode, Format, ActivationType,
// ReduceMode, RoundMode, EltwiseMode, ...) or of the ops headers. Setters
// store them as MakeValue of an int64_t (`int64_t swi = mode;` in the
// cxx_api .cc files; attrFromSetter reports a .cc setter that does not).
func isEnumType(t string) bool {
	if t == "" || t == "TypeId" || t == "TypePtr" || strings.ContainsAny(t, "<>:") {
		return false
	}
	return t[0] >= 'A' && t[0] <= 'Z'
}

// cppAttrType maps a setter's C++ parameter type to (Type, MindIR, Elem).
func cppAttrType(t string) (typ, mindir, elem string, ok bool) {
	t = strings.ReplaceAll(t, "std::", "")
	switch t {
	case "int64_t":
		return "int", "INT64", "", true
	case "int", "int32_t":
		return "int32", "INT32", "", true
	case "bool":
		return "bool", "BOOL", "", true
	case "float":
		return "float", "FLOAT", "", true
	case "double":
		return "float64", "DOUBLE", "", true
	case "string":
		return "str", "STRING", "", true
	case "TypeId":
		return "TypeId", "TENSORS", "", true
	case "map<string, vector<uint8_t>>":
		// ops::Custom::set_attr: one TUPLE of name (STRING) / value (TUPLE
		// of UINT8) pairs, hence no single element type.
		return "dict[str,tuple[uint8]]", "TUPLE", "", true
	}
	if strings.HasPrefix(t, "vector<") && strings.HasSuffix(t, ">") {
		et, em, _, ok := cppAttrType(strings.TrimSpace(t[len("vector<") : len(t)-1]))
		if !ok {
			return "", "", "", false
		}
		if et == "TypePtr" {
			return "tuple[TypeId]", "TUPLE", "TENSORS", true
		}
		return "tuple[" + et + "]", "TUPLE", em, true
	}
	if t == "TypePtr" {
		return "TypePtr", "TENSORS", "", true
	}
	if isEnumType(t) {
		return "enum:" + t, "INT64", "", true
	}
	return "", "", "", false
}

type setter struct {
	name  string // setter suffix: set_<name>
	param cparam
	body  string // inline body from the header, or the .cc definition
}

type class struct {
	name, base, file string // file relative to src
	primName         string
	inputs, outputs  []string
	hasIO            bool
	init             []cparam
	hasInit          bool
	initCalls        map[string]string // Init parameter -> setter, from an inline Init body
	ccInit           []string          // setter called with each Init parameter, by position, from the .cc
	setters          []setter
	refOps           string // "@ref mindspore.ops.X for the inputs"
}

// loadConstants collects `constexpr auto kXxx = "..."` of op_def/*.h and
// the infer headers (attribute names and kNameXxx primitive names).
func loadConstants(src string) (map[string]string, error) {
	consts := map[string]string{}
	var files []string
	for _, pat := range []string{opDefDir + "/*.h", inferDir + "/*.h", cxxAPIDir + "/*.h", cxxAPIDir + "/*.cc"} {
		fs, err := filepath.Glob(filepath.Join(src, pat))
		if err != nil {
			return nil, err
		}
		sort.Strings(fs)
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return nil, errors.New("no headers under " + filepath.Join(src, opDefDir))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range reConst.FindAllStringSubmatch(stripCComments(string(data)), -1) {
			if old, ok := consts[m[1]]; ok && old != m[2] {
				note("%s: %s = %q redefines %q; keeping the first", f, m[1], m[2], old)
				continue
			}
			consts[m[1]] = m[2]
		}
	}
	return consts, nil
}

// attrNames is the set of values of op_def/*op_name.h, to check setter
// names against.
func attrNames(src string) map[string]bool {
	names := map[string]bool{}
	fs, _ := filepath.Glob(filepath.Join(src, opDefDir, "*.h"))
	for _, f := range fs {
		data, _ := os.ReadFile(f)
		for _, m := range reConst.FindAllStringSubmatch(string(data), -1) {
			names[m[2]] = true
		}
	}
	return names
}

func stringList(s string) []string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil
	}
	var out []string
	for _, e := range splitTop(s[1 : len(s)-1]) {
		e = strings.TrimSpace(e)
		if u, err := strconv.Unquote(e); err == nil {
			out = append(out, u)
		} else {
			return nil
		}
	}
	return out
}

func loadClasses(src string, consts map[string]string) (map[string]*class, error) {
	classes := map[string]*class{}
	var headers []string
	for _, d := range []string{inferDir, cxxAPIDir} {
		fs, err := filepath.Glob(filepath.Join(src, d, "*.h"))
		if err != nil {
			return nil, err
		}
		if len(fs) == 0 {
			return nil, fmt.Errorf("no headers under %s", filepath.Join(src, d))
		}
		sort.Strings(fs)
		headers = append(headers, fs...)
	}
	for _, f := range headers {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		raw := string(data)
		s := stripCComments(raw)
		rel, _ := filepath.Rel(src, f)
		rel = filepath.ToSlash(rel)
		for _, m := range reClass.FindAllStringSubmatchIndex(s, -1) {
			open := m[1] - 1
			end := matchClose(s, open)
			if end < 0 {
				return nil, fmt.Errorf("%s: unbalanced class body", rel)
			}
			body := s[open+1 : end]
			name, base := s[m[2]:m[3]], s[m[4]:m[5]]
			if !strings.Contains(body, "MIND_API_BASE_MEMBER(") {
				continue // an infer implementation or helper class, not a primitive
			}
			c := &class{name: name, base: base, file: rel}
			if r := reRefOps.FindStringSubmatch(raw[open:end]); r != nil {
				c.refOps = r[1]
			}
			c.primName = ctorName(name, body, consts)
			parseClassBody(c, body)
			if old, dup := classes[name]; dup {
				return nil, fmt.Errorf("class %s declared in %s and %s", name, old.file, rel)
			}
			classes[name] = c
		}
	}
	// Out-of-line definitions (cxx_api/*.cc).
	ccs, err := filepath.Glob(filepath.Join(src, cxxAPIDir, "*.cc"))
	if err != nil {
		return nil, err
	}
	infcc, _ := filepath.Glob(filepath.Join(src, inferDir, "*.cc"))
	ccs = append(ccs, infcc...)
	sort.Strings(ccs)
	for _, f := range ccs {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s := stripCComments(string(data))
		for _, m := range reSetterDef.FindAllStringSubmatchIndex(s, -1) {
			cls, sn := s[m[2]:m[3]], s[m[4]:m[5]]
			c := classes[cls]
			body, ok := funcBody(s, m[1]-1)
			if c == nil || !ok {
				continue
			}
			for i := range c.setters {
				if c.setters[i].name == sn && c.setters[i].body == "" {
					c.setters[i].body = body
				}
			}
		}
		for _, m := range reInitDef.FindAllStringSubmatchIndex(s, -1) {
			c := classes[s[m[2]:m[3]]]
			body, ok := funcBody(s, m[1]-1)
			if c == nil || !ok || c.ccInit != nil {
				continue
			}
			// The .cc may name the parameters differently from the header
			// (GroupNormFusion: eps / epsilon): map them by position.
			ps := parseParams(s[m[1]:matchClose(s, m[1]-1)])
			calls := map[string]string{}
			for _, cm := range reCallSet.FindAllStringSubmatch(body, -1) {
				if _, seen := calls[cm[2]]; !seen {
					calls[cm[2]] = cm[1]
				}
			}
			c.ccInit = make([]string, len(ps))
			for i, p := range ps {
				c.ccInit[i] = calls[p.name]
			}
		}
	}
	return classes, nil
}

// funcBody returns the body of the function whose parameter list opens at
// s[open] ("" and false for a declaration).
func funcBody(s string, open int) (string, bool) {
	cl := matchClose(s, open)
	if cl < 0 {
		return "", false
	}
	i := cl + 1
	for i < len(s) && s[i] != '{' && s[i] != ';' {
		i++
	}
	if i >= len(s) || s[i] == ';' {
		return "", false
	}
	e := matchClose(s, i)
	if e < 0 {
		return "", false
	}
	return s[i+1 : e], true
}

// ctorName finds the primitive name a class passes to its base
// constructor: C() : Base(kNameC), or explicit C(const std::string &k_name
// = kNameC) : Base(k_name).
func ctorName(cls, body string, consts map[string]string) string {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(cls) + `\s*\(([^()]*)\)\s*:\s*[\w:]+\s*\(\s*([^()]*?)\s*\)`)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		a := m[2]
		if u, err := strconv.Unquote(a); err == nil {
			return u
		}
		if v, ok := consts[a]; ok {
			return v
		}
		for _, p := range parseParams(m[1]) {
			if p.name == a {
				if v, ok := consts[p.def]; ok {
					return v
				}
			}
		}
	}
	if v, ok := consts["kName"+cls]; ok {
		return v
	}
	return cls
}

var (
	reInitIO  = regexp.MustCompile(`\bInitIOName\s*\(`)
	reInitDcl = regexp.MustCompile(`\bvoid\s+Init\s*\(`)
	reSetDcl  = regexp.MustCompile(`(\bstatic\s+)?\bvoid\s+set_(\w+)\s*\(`)
)

func parseClassBody(c *class, body string) {
	c.initCalls = map[string]string{}
	if loc := reInitIO.FindStringIndex(body); loc != nil {
		if e := matchClose(body, loc[1]-1); e > 0 {
			parts := splitTop(body[loc[1]:e])
			if len(parts) == 2 {
				in, out := stringList(parts[0]), stringList(parts[1])
				if in != nil || strings.TrimSpace(parts[0]) == "{}" {
					c.inputs, c.outputs, c.hasIO = in, out, true
				}
			}
		}
	}
	if loc := reInitDcl.FindStringIndex(body); loc != nil {
		if e := matchClose(body, loc[1]-1); e > 0 {
			c.init, c.hasInit = parseParams(body[loc[1]:e]), true
			if b, ok := funcBody(body, loc[1]-1); ok {
				for _, cm := range reCallSet.FindAllStringSubmatch(b, -1) {
					c.initCalls[cm[2]] = cm[1]
				}
			}
		}
	}
	for _, m := range reSetDcl.FindAllStringSubmatchIndex(body, -1) {
		sn := body[m[4]:m[5]]
		if m[2] >= 0 {
			note("%s: %s::set_%s is static (not an attribute); skipped", c.file, c.name, sn)
			continue
		}
		e := matchClose(body, m[1]-1)
		if e < 0 {
			continue
		}
		ps := parseParams(body[m[1]:e])
		if len(ps) != 1 {
			note("%s: %s::set_%s takes %d parameters; not an attribute setter, skipped", c.file, c.name, sn, len(ps))
			continue
		}
		b, _ := funcBody(body, m[1]-1)
		c.setters = append(c.setters, setter{name: sn, param: ps[0], body: b})
	}
}

// attrFromSetter resolves one setter into an attribute.
func attrFromSetter(c *class, s setter, consts map[string]string, known map[string]bool) (arg, bool) {
	name := s.name
	if m := reAddAttr.FindStringSubmatch(s.body); m != nil {
		if u, err := strconv.Unquote(m[1]); err == nil {
			name = u
		} else if v, ok := consts[m[1]]; ok {
			name = v
		} else {
			note("%s: %s::set_%s: AddAttr(%s) does not resolve; using the setter name", c.file, c.name, s.name, m[1])
		}
	} else if s.body != "" {
		note("%s: %s::set_%s has a body without AddAttr; using the setter name", c.file, c.name, s.name)
	} else if !known[name] {
		note("%s: %s::set_%s: no .cc and %q is not an op_name.h constant; using it anyway", c.file, c.name, s.name, name)
	}
	typ, mindir, elem, ok := cppAttrType(s.param.typ)
	if !ok {
		note("%s: %s::set_%s(%s): C++ type has no MindIR mapping; skipped", c.file, c.name, s.name, s.param.typ)
		return arg{}, false
	}
	if strings.HasPrefix(typ, "enum:") && s.body != "" &&
		!strings.Contains(s.body, "int64_t") && !strings.Contains(s.body, "MakeValue(static_cast") {
		note("%s: %s::set_%s stores enum %s without an int64 conversion", c.file, c.name, s.name, s.param.typ)
	}
	return arg{Name: name, Type: typ, MindIR: mindir, Elem: elem}, true
}

// resolveClasses turns the parsed classes into primitives: inherited
// attributes first, own setters override or append, the Init order wins.
func resolveClasses(classes map[string]*class, yamlPrims map[string]*prim, consts map[string]string, known map[string]bool) ([]*prim, error) {
	var names []string
	for n := range classes {
		names = append(names, n)
	}
	sort.Strings(names)
	done := map[string]*prim{}
	var resolve func(c *class, depth int) (*prim, error)
	resolve = func(c *class, depth int) (*prim, error) {
		if p, ok := done[c.name]; ok {
			return p, nil
		}
		if depth > 16 {
			return nil, fmt.Errorf("%s: inheritance too deep", c.name)
		}
		p := &prim{Name: c.primName, Source: c.file, Outputs: 1}
		var inherited []arg
		ioKnown, baseMissing := false, false
		if c.base != "BaseOperator" {
			if bc, ok := classes[c.base]; ok {
				bp, err := resolve(bc, depth+1)
				if err != nil {
					return nil, err
				}
				for _, a := range bp.Args {
					if !a.Input {
						inherited = append(inherited, a)
					}
				}
				if !c.hasIO {
					c.inputs, c.outputs, c.hasIO = bc.inputs, bc.outputs, bc.hasIO
				}
			} else if yp, ok := yamlPrims[c.base]; ok {
				for _, a := range yp.Args {
					if !a.Input {
						inherited = append(inherited, a)
					}
				}
				if !c.hasIO {
					for _, a := range yp.Inputs() {
						p.Args = append(p.Args, a)
					}
					p.Outputs, ioKnown = yp.Outputs, true
				}
			} else {
				baseMissing = true
				note("%s: base class %s of %s is not in the excerpt", c.file, c.base, c.name)
			}
		}
		// Inputs.
		if c.hasIO {
			for _, in := range c.inputs {
				p.Args = append(p.Args, arg{Name: in, Input: true, Type: "tensor"})
			}
			p.Outputs = len(c.outputs)
			if p.Outputs == 0 {
				p.Outputs = 1
			}
		} else if !ioKnown {
			var yp *prim
			for _, cand := range []string{strings.TrimSuffix(c.primName, "Fusion"), c.refOps} {
				if q, ok := yamlPrims[cand]; ok && cand != "" {
					yp = q
					break
				}
			}
			if yp != nil {
				for _, a := range yp.Inputs() {
					p.Args = append(p.Args, a)
				}
				p.Outputs = yp.Outputs
			}
		}
		// Attributes: inherited, then own setters (replace or append).
		attrs := append([]arg{}, inherited...)
		inheritedAttr := map[string]bool{}
		for _, a := range inherited {
			inheritedAttr[a.Name] = true
		}
		setterAttr := map[string]string{} // setter name -> attribute name
		for _, b := range inheritedSetters(c, classes) {
			setterAttr[b] = b
		}
		for _, s := range c.setters {
			a, ok := attrFromSetter(c, s, consts, known)
			if !ok {
				continue
			}
			setterAttr[s.name] = a.Name
			replaced := false
			for i := range attrs {
				if attrs[i].Name == a.Name {
					a.Default = attrs[i].Default
					attrs[i] = a
					replaced = true
				}
			}
			if !replaced {
				attrs = append(attrs, a)
			}
		}
		// Defaults and order from Init.
		if c.hasInit {
			var ordered []arg
			used := map[string]bool{}
			for i, ip := range c.init {
				sn := ""
				if len(c.ccInit) == len(c.init) {
					sn = c.ccInit[i]
				}
				if sn == "" {
					sn = c.initCalls[ip.name]
				}
				if sn == "" {
					sn = matchSetter(ip, c, classes, setterAttr, used)
				}
				an := setterAttr[sn]
				if an == "" && baseMissing {
					// The base class (Conv2DBackpropInput, ...) is not in
					// the excerpt: its Init parameters stand for its
					// setters, named like them.
					if typ, mindir, elem, ok := cppAttrType(ip.typ); ok && ip.name != "" {
						attrs = append(attrs, arg{Name: ip.name, Type: typ, MindIR: mindir, Elem: elem})
						an = ip.name
						note("%s: %s::Init parameter %s taken as an attribute of the missing base %s", c.file, c.name, ip.name, c.base)
					}
				}
				found := false
				for j := range attrs {
					if an != "" && attrs[j].Name == an && !used[an] {
						attrs[j].Default = squash(ip.def)
						ordered = append(ordered, attrs[j])
						used[an], found = true, true
					}
				}
				if !found {
					note("%s: %s::Init parameter %s matches no setter (not an attribute)", c.file, c.name, ip.name)
				}
			}
			for _, a := range attrs {
				if !used[a.Name] {
					// Not an Init parameter: Init does not set it, so
					// nothing requires it (LSTM's proj_size and
					// num_directions are absent from MindSpore 1.6 files).
					if a.Default == "" {
						a.Default = "None"
					}
					ordered = append(ordered, a)
				}
			}
			attrs = ordered
		} else {
			// Without an Init of its own the class inherits its base's
			// Init (whose required arguments stay required); its own
			// setters are optional.
			for i := range attrs {
				if attrs[i].Default == "" && !inheritedAttr[attrs[i].Name] {
					attrs[i].Default = "None"
				}
			}
		}
		p.Args = append(p.Args, attrs...)
		done[c.name] = p
		return p, nil
	}
	var out []*prim
	seen := map[string]string{}
	for _, n := range names {
		p, err := resolve(classes[n], 0)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[p.Name]; dup {
			note("%s: primitive %s already defined by class %s; skipped", classes[n].file, p.Name, other)
			continue
		}
		seen[p.Name] = n
		out = append(out, p)
	}
	return out, nil
}

// snake converts a camelCase C++ parameter name (NmsIouThreshold) to the
// snake_case of attribute names (nms_iou_threshold).
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// matchSetter finds the setter an Init parameter stands for when no Init
// body says so: the setter of the same name, the one whose own parameter has
// that name (set_split_stride(int64_t stride)), the snake_case name, the
// plural or singular, or a unique setter ending in _<name> (format ->
// data_format).
func matchSetter(ip cparam, c *class, classes map[string]*class, setterAttr map[string]string, used map[string]bool) string {
	free := func(sn string) bool {
		an, ok := setterAttr[sn]
		return ok && !used[an]
	}
	if ip.name == "" {
		return ""
	}
	if free(ip.name) {
		return ip.name
	}
	for cl := c; cl != nil; cl = classes[cl.base] {
		for _, s := range cl.setters {
			if s.param.name == ip.name && free(s.name) {
				return s.name
			}
		}
	}
	for _, cand := range []string{snake(ip.name), ip.name + "s", strings.TrimSuffix(ip.name, "s")} {
		if free(cand) {
			return cand
		}
	}
	var hits []string
	for sn := range setterAttr {
		if free(sn) && strings.HasSuffix(sn, "_"+ip.name) {
			hits = append(hits, sn)
		}
	}
	if len(hits) == 1 {
		return hits[0]
	}
	return ""
}

// inheritedSetters lists the setter names of the base classes.
func inheritedSetters(c *class, classes map[string]*class) []string {
	var out []string
	for b := classes[c.base]; b != nil; b = classes[b.base] {
		for _, s := range b.setters {
			out = append(out, s.name)
		}
	}
	return out
}
