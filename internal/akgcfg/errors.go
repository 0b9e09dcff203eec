package akgcfg

import (
	"strconv"

	"gkconv/internal/textsafe"
)

// Error is a configuration error located at File:Line (Line 0 when unknown)
// for Key (empty when the whole line or token is bad). Several errors are
// returned joined with errors.Join; use errors.As to get the first.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string { return location(e.File, e.Line, e.Key) + e.Msg }

// Warning is a non-fatal configuration problem, located like Error.
type Warning struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

func (w Warning) String() string { return location(w.File, w.Line, w.Key) + w.Message }

// location formats "file:line: key: ". File and key are escaped
// (textsafe.Escape): a key read from a flags JSON file may hold any
// character, '\n' and ESC included, and must not start a line of its own.
func location(file string, line int, key string) string {
	s := textsafe.Escape(file)
	if s == "" {
		s = "<flags>"
	}
	if line > 0 {
		s += ":" + strconv.Itoa(line)
	}
	s += ": "
	if key != "" {
		s += textsafe.Escape(key) + ": "
	}
	return s
}
