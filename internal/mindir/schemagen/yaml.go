// The op_def YAML files: a reader for the subset they use and the
// primitives they define.

package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ynode is a mapping entry of the YAML subset the op_def files use: block
// mappings by indentation, plain or quoted scalar values, # comments.
type ynode struct {
	key, value string
	line       int
	kids       []*ynode
}

func (n *ynode) child(key string) *ynode {
	for _, k := range n.kids {
		if k.key == key {
			return k
		}
	}
	return nil
}

func (n *ynode) scalar(key string) string {
	if c := n.child(key); c != nil {
		return c.value
	}
	return ""
}

// stripComment removes a # comment (at line start or after whitespace,
// outside quotes).
func stripComment(s string) string {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

func unquoteYAML(v string) (string, error) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return strconv.Unquote(v)
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'"), nil
	}
	if v != "" && (v[0] == '[' || v[0] == '{') {
		// A one-line flow collection (reduce_std's `default: []`) is kept
		// as written: it is only ever a default value.
		if e := matchClose(v, 0); e != len(v)-1 {
			return "", fmt.Errorf("flow collection %q does not close on its line", v)
		}
		return v, nil
	}
	if v != "" && strings.ContainsAny(v[:1], `"'|>&*!`) {
		return "", fmt.Errorf("value %q is outside the supported YAML subset", v)
	}
	return v, nil
}

// parseYAML parses the block-mapping subset into a root node.
func parseYAML(data []byte) (*ynode, error) {
	root := &ynode{}
	type frame struct {
		indent int
		n      *ynode
	}
	stack := []frame{{-1, root}}
	for ln, raw := range strings.Split(string(data), "\n") {
		lineNo := ln + 1
		line := strings.TrimRight(stripComment(strings.TrimRight(raw, "\r")), " \t")
		if strings.TrimSpace(line) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if line[indent] == '\t' {
			return nil, fmt.Errorf("line %d: tab indentation", lineNo)
		}
		body := line[indent:]
		if strings.HasPrefix(body, "- ") || body == "-" {
			return nil, fmt.Errorf("line %d: sequences are outside the supported YAML subset", lineNo)
		}
		colon := -1
		for i := 0; i < len(body); i++ {
			if body[i] == ':' && (i+1 == len(body) || body[i+1] == ' ') {
				colon = i
				break
			}
		}
		if top := stack[len(stack)-1]; colon <= 0 && top.n != root && indent > top.indent && len(top.n.kids) == 0 {
			// Continuation of a plain scalar on a more-indented line
			// (resize_nearest_neighbor_grad: "disable:\n    True").
			v, err := unquoteYAML(strings.TrimSpace(body))
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", lineNo, err)
			}
			top.n.value = strings.TrimSpace(top.n.value + " " + v)
			continue
		}
		if colon <= 0 {
			return nil, fmt.Errorf("line %d: expected `key:` or `key: value`, got %q", lineNo, body)
		}
		key := strings.TrimSpace(body[:colon])
		val, err := unquoteYAML(strings.TrimSpace(body[colon+1:]))
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		for len(stack) > 1 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		parent := stack[len(stack)-1].n
		if parent != root && parent.value != "" {
			return nil, fmt.Errorf("line %d: %q has both a value and nested keys", lineNo, parent.key)
		}
		if parent.child(key) != nil {
			return nil, fmt.Errorf("line %d: duplicate key %q", lineNo, key)
		}
		n := &ynode{key: key, value: val, line: lineNo}
		parent.kids = append(parent.kids, n)
		stack = append(stack, frame{indent, n})
	}
	return root, nil
}

// camel is MindSpore's gen_utils convert_python_func_name_to_c: every
// underscore-separated word capitalized (first letter upper, rest lower).
func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w == "" {
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]))
		b.WriteString(strings.ToLower(w[1:]))
	}
	return b.String()
}

// isGradOp: a gradient op has a "grad" word in its key (abs_grad,
// batch_norm_grad_ext, gather_d_grad_v2), except the AdaGrad optimizer
// (embedding_apply_ada_grad); "gradient" (dump_gradient,
// inplace_stop_gradient) is not such a word.
func isGradOp(key string) bool {
	key = strings.ReplaceAll(key, "ada_grad", "adagrad")
	return strings.HasSuffix(key, "_grad") || strings.Contains(key, "_grad_")
}

// yamlAttrType maps a yaml dtype of a prim_init argument to its MindIR
// attribute type.
func yamlAttrType(dtype string) (mindir, elem string, ok bool) {
	switch dtype {
	case "int":
		return "INT64", "", true
	case "bool":
		return "BOOL", "", true
	case "float":
		return "FLOAT", "", true
	case "str":
		return "STRING", "", true
	case "TypeId":
		// A dtype attribute: TENSORS whose tensor has only data_type.
		return "TENSORS", "", true
	}
	for _, seq := range []string{"tuple", "list"} {
		if strings.HasPrefix(dtype, seq+"[") && strings.HasSuffix(dtype, "]") {
			e, _, ok := yamlAttrType(dtype[len(seq)+1 : len(dtype)-1])
			if !ok {
				return "", "", false
			}
			return strings.ToUpper(seq), e, true
		}
	}
	return "", "", false
}

func loadYAMLOps(src string) ([]*prim, error) {
	files, err := filepath.Glob(filepath.Join(src, yamlDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no yaml files under %s", filepath.Join(src, yamlDir))
	}
	sort.Strings(files)
	var out []*prim
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		root, err := parseYAML(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		rel := path.Join(yamlDir, filepath.Base(f))
		for _, op := range root.kids {
			if isGradOp(op.key) {
				note("%s: %s skipped (gradient op)", rel, op.key)
				continue
			}
			p, err := yamlPrim(op, rel)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", f, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func yamlPrim(op *ynode, rel string) (*prim, error) {
	p := &prim{Name: camel(op.key), Source: rel}
	if c := op.child("class"); c != nil {
		if n := c.scalar("name"); n != "" {
			p.Name = n
		}
	}
	if args := op.child("args"); args != nil {
		for _, a := range args.kids {
			dtype := strings.TrimSpace(a.scalar("dtype"))
			if dtype == "" {
				return nil, fmt.Errorf("line %d: %s.%s has no dtype", a.line, op.key, a.key)
			}
			r := arg{Name: a.key, Type: dtype, Default: a.scalar("default")}
			if a.child("default") != nil && r.Default == "" {
				r.Default = "''" // an explicitly empty default still makes the arg optional
			}
			if h := a.scalar("arg_handler"); h != "" {
				r.Type += "|" + h
			}
			if strings.EqualFold(a.scalar("prim_init"), "true") {
				m, e, ok := yamlAttrType(dtype)
				if !ok {
					return nil, fmt.Errorf("line %d: %s.%s: prim_init dtype %q has no MindIR mapping", a.line, op.key, a.key, dtype)
				}
				r.MindIR, r.Elem = m, e
			} else {
				r.Input = true
			}
			p.Args = append(p.Args, r)
		}
	}
	if rets := op.child("returns"); rets != nil {
		p.Outputs = len(rets.kids)
		for _, r := range rets.kids {
			if d := r.scalar("dtype"); strings.HasPrefix(d, "tuple[") || strings.HasPrefix(d, "list[") {
				p.Outputs = -1 // a sequence output whose length depends on the node
			}
		}
	} else {
		p.Outputs = 1
	}
	return p, nil
}
