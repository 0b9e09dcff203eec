// converter_lite's ONNX parsers: which primitive each ONNX op becomes.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var (
	reRegistrar = regexp.MustCompile(`OnnxNodeRegistrar\s+\w+\s*\(\s*"([^"]+)"\s*,\s*new\s+(\w+)`)
	reParseDef  = regexp.MustCompile(`\b(\w+)::Parse\s*\(`)
	reMake      = regexp.MustCompile(`\bstd::make_(?:unique|shared)<\s*(?:(?:mindspore::)?(?:ops|lite)::)?(\w+)\s*>`)
)

// loadONNX maps every registered ONNX op type to the primitive its parser
// creates. Where a parser creates different primitives by case, the main one
// is the one created at the shallowest brace depth of Parse (the
// fall-through path, e.g. Conv2DFusion rather than Conv3D), the first one
// on a tie.
func loadONNX(src string, classes map[string]*class) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(src, onnxDir, "*.cc"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no ONNX parsers under %s", filepath.Join(src, onnxDir))
	}
	sort.Strings(files)
	main := map[string]string{} // parser class -> primitive class
	type reg struct{ op, parser, file string }
	var regs []reg
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s := stripCComments(string(data))
		for _, m := range reRegistrar.FindAllStringSubmatch(s, -1) {
			regs = append(regs, reg{m[1], m[2], filepath.Base(f)})
		}
		for _, m := range reParseDef.FindAllStringSubmatchIndex(s, -1) {
			body, ok := funcBody(s, m[1]-1)
			if !ok {
				continue
			}
			best, bestDepth := "", 1<<30
			for _, mm := range reMake.FindAllStringSubmatchIndex(body, -1) {
				name := body[mm[2]:mm[3]]
				if name == "" || name[0] < 'A' || name[0] > 'Z' {
					continue
				}
				d := strings.Count(body[:mm[0]], "{") - strings.Count(body[:mm[0]], "}")
				if d < bestDepth {
					best, bestDepth = name, d
				}
			}
			if best != "" {
				main[s[m[2]:m[3]]] = best
			}
		}
	}
	out := map[string]string{}
	for _, r := range regs {
		cls, ok := main[r.parser]
		if !ok {
			note("%s: ONNX %s: %s creates no recognizable primitive; left out", r.file, r.op, r.parser)
			continue
		}
		pn := cls
		if c, ok := classes[cls]; ok {
			pn = c.primName
		}
		if old, dup := out[r.op]; dup && old != pn {
			return nil, fmt.Errorf("ONNX op %s registered twice (%s, %s)", r.op, old, pn)
		}
		out[r.op] = pn
	}
	return out, nil
}
