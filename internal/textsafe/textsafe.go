// Package textsafe escapes text that comes from a model or a config file
// before it reaches a terminal or a log: control characters (C0 including
// \n, \r, \t and ESC, DEL, the C1 controls U+0080-U+009F), other
// non-printable runes (format characters such as U+202E, line and paragraph
// separators) and invalid UTF-8 bytes are written as Go escapes (\n, \x1b,
// \u0085, \xff); printable Unicode is kept. A backslash is kept as it is, so
// escaping is idempotent: escaped text escapes to itself, and a message built
// from escaped pieces can be passed through again (the print sites do, as a
// safety net).
//
// It imports nothing of this project, so every layer may use it.
package textsafe

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every non-printable rune and invalid byte escaped,
// '\n' included: the result is one line.
func Escape(s string) string { return escape(s, false) }

// Lines is Escape but keeps '\n': each line of s stays a line.
func Lines(s string) string { return escape(s, true) }

// Strings escapes every element of ss (a new slice).
func Strings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Escape(s)
	}
	return out
}

// safe reports whether r is printed as it is.
func safe(r rune, keepNL bool) bool {
	if r < utf8.RuneSelf {
		return r >= ' ' && r != 0x7f || keepNL && r == '\n'
	}
	return strconv.IsPrint(r)
}

func escape(s string, keepNL bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !safe(rune(c), keepNL) {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !safe(r, keepNL) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case safe(r, keepNL):
			b.WriteString(s[i : i+size])
		default:
			writeRune(&b, r)
		}
		i += size
	}
	return b.String()
}

func writeRune(b *strings.Builder, r rune) {
	switch r {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\v':
		b.WriteString(`\v`)
	default:
		switch {
		case r < ' ' || r == 0x7f:
			writeHex(b, `\x`, uint32(r), 2)
		case r < 0x10000:
			writeHex(b, `\u`, uint32(r), 4)
		default:
			writeHex(b, `\U`, uint32(r), 8)
		}
	}
}

func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	const hex = "0123456789abcdef"
	b.WriteString(prefix)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hex[v>>uint(shift)&0xf])
	}
}

// Writer returns a writer that passes each Write through Lines: whatever
// is written, only printable text and '\n' reach w. A Write should hold
// whole runes (fmt's Fprint* functions write one formatted string at once).
func Writer(w io.Writer) io.Writer { return &writer{w} }

type writer struct{ w io.Writer }

func (x *writer) Write(p []byte) (int, error) {
	s := string(p)
	e := Lines(s)
	if _, err := io.WriteString(x.w, e); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Args returns fmt arguments with every string and []string escaped
// (Escape, Strings) in a new slice; other values are kept.
func Args(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = Escape(v)
		case []string:
			out[i] = Strings(v)
		default:
			out[i] = a
		}
	}
	return out
}
