package textsafe

import (
	"bytes"
	"fmt"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, esc, lines string }{
		{"plain", "plain", "plain"},
		{"", "", ""},
		{"a\nb", `a\nb`, "a\nb"},
		{"\r\t\x1b[31m\x00\x7f", `\r\t\x1b[31m\x00\x7f`, `\r\t\x1b[31m\x00\x7f`},
		{"C1 \u0085 \u009b", `C1 \u0085 \u009b`, `C1 \u0085 \u009b`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`},
		{"é中😀 ok", "é中😀 ok", "é中😀 ok"},
		{"rlo \u202e sep \u2028", `rlo \u202e sep \u2028`, `rlo \u202e sep \u2028`},
		{`back\slash \n`, `back\slash \n`, `back\slash \n`},
		{"\U000e0001", `\U000e0001`, `\U000e0001`},
	} {
		if got := Escape(c.in); got != c.esc {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.esc)
		}
		if got := Lines(c.in); got != c.lines {
			t.Errorf("Lines(%q) = %q, want %q", c.in, got, c.lines)
		}
		if Escape(Escape(c.in)) != Escape(c.in) {
			t.Errorf("Escape(%q) is not idempotent", c.in)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	fmt.Fprintf(Writer(&b), "x=%s\n", "a\x1b[2J\nb")
	if got, want := b.String(), "x=a\\x1b[2J\nb\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
