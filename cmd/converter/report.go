package main

import (
	"encoding/json"
	"os"
	"path/filepath"

	"gkconv/internal/ir"
)

// report is the --reportFile JSON. Field names are the documented schema.
type report struct {
	Model       reportModel       `json:"model"`
	Output      string            `json:"output,omitempty"`
	Graph       reportGraph       `json:"graph"`
	Flags       map[string]string `json:"flags,omitempty"`
	Kernels     []reportKernel    `json:"kernels"`
	Passes      []reportPass      `json:"passes"`
	Unsupported []unsupportedItem `json:"unsupported"`
	Warnings    []string          `json:"warnings"`
	Error       string            `json:"error,omitempty"`
	Seconds     float64           `json:"seconds"`
}

type reportModel struct {
	File    string            `json:"file"`
	Fmk     string            `json:"fmk"`
	Inputs  []reportValue     `json:"inputs"`
	Outputs []reportValue     `json:"outputs"`
	Meta    map[string]string `json:"meta,omitempty"`
}

type reportValue struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

type reportGraph struct {
	NodesBefore int `json:"nodes_before"`
	NodesAfter  int `json:"nodes_after"`
}

type reportKernel struct {
	Name         string           `json:"name"`
	Target       string           `json:"target"`
	Ops          []string         `json:"ops"`
	SourceNodes  []string         `json:"source_nodes"`
	Pattern      string           `json:"pattern"`
	BinaryFormat string           `json:"binary_format"`
	BinaryBytes  int              `json:"binary_bytes"`
	BinarySHA256 string           `json:"binary_sha256"`
	Status       string           `json:"status,omitempty"`
	Launch       map[string]int64 `json:"launch,omitempty"`
	Info         json.RawMessage  `json:"info,omitempty"`
}

type reportPass struct {
	Stage   string `json:"stage"`
	Name    string `json:"name"`
	Level   int    `json:"level"`
	Ran     bool   `json:"ran"`
	Changed bool   `json:"changed"`
	Note    string `json:"note,omitempty"`
}

type unsupportedItem struct {
	Node   string `json:"node"`
	Op     string `json:"op"`
	Reason string `json:"reason"`
}

func newReport() *report {
	return &report{Kernels: []reportKernel{}, Passes: []reportPass{}, Unsupported: []unsupportedItem{}, Warnings: []string{}}
}

func valuesOf(vs []*ir.Value) []reportValue {
	out := []reportValue{}
	for _, v := range vs {
		out = append(out, reportValue{Name: v.Name, DType: v.DType.String(), Shape: v.Shape})
	}
	return out
}

func (r *report) setModel(file, fmk string, g *ir.Graph) {
	r.Model = reportModel{File: file, Fmk: fmk, Inputs: valuesOf(g.Inputs), Outputs: valuesOf(g.Outputs), Meta: g.Meta}
}

// write replaces path atomically.
func (r *report) write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
