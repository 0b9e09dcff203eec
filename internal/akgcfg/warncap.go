package akgcfg

import "fmt"

// maxWarningsPerKind bounds the warnings of one kind (unknown flags,
// unknown sections, repeated keys...) that one config file or flags string
// yields: a config naming a million unknown keys gives the first ones and
// one "... and N more" warning, not a million lines.
const maxWarningsPerKind = 20

// warnCap collects warnings, keeping at most maxWarningsPerKind of a kind.
type warnCap struct {
	n     map[string]int
	first map[string]Warning // the first warning of a kind left out
	order []string
}

// add appends w to *ws unless maxWarningsPerKind warnings of kind were
// added; kind names them in the plural ("unknown flags").
func (c *warnCap) add(ws *[]Warning, kind string, w Warning) {
	if c.n == nil {
		c.n, c.first = map[string]int{}, map[string]Warning{}
	}
	c.n[kind]++
	switch n := c.n[kind]; {
	case n <= maxWarningsPerKind:
		*ws = append(*ws, w)
	case n == maxWarningsPerKind+1:
		c.first[kind] = w
		c.order = append(c.order, kind)
	}
}

// finish appends, per kind with warnings left out, one warning with their
// count, located at the first one left out.
func (c *warnCap) finish(ws *[]Warning) {
	for _, kind := range c.order {
		w := c.first[kind]
		msg := fmt.Sprintf("... and %d more %s", c.n[kind]-maxWarningsPerKind, kind)
		if w.Line > 0 {
			msg += " (from this line on)"
		}
		*ws = append(*ws, Warning{File: w.File, Line: w.Line, Message: msg})
	}
	c.order = nil
}
