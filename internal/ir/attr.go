package ir

import (
	"fmt"
	"sort"
)

type AttrKind int

const (
	AttrInt AttrKind = iota + 1
	AttrFloat
	AttrString
	AttrInts
	AttrFloats
	AttrStrings
	AttrTensor
	AttrGraph
	AttrBytes
)

// Attr is one typed attribute value.
type Attr struct {
	Kind    AttrKind
	I       int64
	F       float64
	S       string
	B       []byte
	Ints    []int64
	Floats  []float64
	Strings []string
	T       *Tensor
	G       *Graph
}

type Attrs map[string]Attr

func IntAttr(v int64) Attr           { return Attr{Kind: AttrInt, I: v} }
func FloatAttr(v float64) Attr       { return Attr{Kind: AttrFloat, F: v} }
func StringAttr(v string) Attr       { return Attr{Kind: AttrString, S: v} }
func BytesAttr(v []byte) Attr        { return Attr{Kind: AttrBytes, B: v} }
func IntsAttr(v ...int64) Attr       { return Attr{Kind: AttrInts, Ints: v} }
func FloatsAttr(v ...float64) Attr   { return Attr{Kind: AttrFloats, Floats: v} }
func StringsAttr(v ...string) Attr   { return Attr{Kind: AttrStrings, Strings: v} }
func TensorAttr(t *Tensor) Attr      { return Attr{Kind: AttrTensor, T: t} }
func (a Attrs) Has(name string) bool { _, ok := a[name]; return ok }

// Keys returns attribute names sorted, so writers are deterministic.
func (a Attrs) Keys() []string {
	ks := make([]string, 0, len(a))
	for k := range a {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (a Attrs) Int(name string, def int64) int64 {
	if v, ok := a[name]; ok {
		switch v.Kind {
		case AttrInt:
			return v.I
		case AttrFloat:
			return int64(v.F)
		}
	}
	return def
}

func (a Attrs) Float(name string, def float64) float64 {
	if v, ok := a[name]; ok {
		switch v.Kind {
		case AttrFloat:
			return v.F
		case AttrInt:
			return float64(v.I)
		}
	}
	return def
}

func (a Attrs) String(name string, def string) string {
	if v, ok := a[name]; ok {
		switch v.Kind {
		case AttrString:
			return v.S
		case AttrBytes:
			return string(v.B)
		}
	}
	return def
}

// Ints returns a copy-free view of an ints attribute, or def.
func (a Attrs) Ints(name string, def []int64) []int64 {
	if v, ok := a[name]; ok {
		switch v.Kind {
		case AttrInts:
			return v.Ints
		case AttrInt:
			return []int64{v.I}
		}
	}
	return def
}

func (a Attrs) Floats(name string, def []float64) []float64 {
	if v, ok := a[name]; ok && v.Kind == AttrFloats {
		return v.Floats
	}
	return def
}

func (a Attrs) Strings(name string) []string {
	if v, ok := a[name]; ok && v.Kind == AttrStrings {
		return v.Strings
	}
	return nil
}

func (a Attrs) Tensor(name string) *Tensor {
	if v, ok := a[name]; ok && v.Kind == AttrTensor {
		return v.T
	}
	return nil
}

func (a Attr) GoString() string {
	switch a.Kind {
	case AttrInt:
		return fmt.Sprint(a.I)
	case AttrFloat:
		return fmt.Sprint(a.F)
	case AttrString:
		return fmt.Sprintf("%q", a.S)
	case AttrBytes:
		return fmt.Sprintf("<%d bytes>", len(a.B))
	case AttrInts:
		return fmt.Sprint(a.Ints)
	case AttrFloats:
		return fmt.Sprint(a.Floats)
	case AttrStrings:
		return fmt.Sprintf("%q", a.Strings)
	case AttrTensor:
		return a.T.Summary(8)
	case AttrGraph:
		return "<graph>"
	}
	return "?"
}
