package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"gkconv/internal/textsafe"
)

// What the commands print (issue 32 D3, D6). Names, op types, metadata and
// messages built from them come from a model or a config file: they reach
// the terminal escaped (textsafe: \n, \x1b, \u0085, ...; printable Unicode
// kept), so a model can neither forge a line such as the result line nor
// send terminal control sequences. The pieces are escaped where they are
// formatted (sayf, the readers' and the driver's error messages); stdout and
// stderr below escape, as a safety net, every control character but '\n' of
// whatever else is printed. The progress display (progress.go) is the one
// writer of raw control sequences, to os.Stderr, when it is a terminal.

var (
	stdout = textsafe.Writer(os.Stdout)
	stderr = textsafe.Writer(os.Stderr)
)

// sayf prints to stdout with every string, error and []string argument
// escaped whole ('\n' included): a model string cannot leave its line.
func sayf(format string, args ...any) { fmt.Fprintf(stdout, format, escapeArgs(args)...) }

// escapeArgs escapes the string, error (whole, '\n' included) and
// []string arguments.
func escapeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if e, ok := a.(error); ok {
			a = e.Error()
		}
		out[i] = a
	}
	return textsafe.Args(out)
}

// resultf prints a command's result line (the last line of stdout), after
// the pending warning summaries.
func resultf(format string, args ...any) {
	flushWarnings()
	sayf(format+"\n", args...)
}

// printError prints err as "ERROR: <message>" on stderr. A message of
// several lines (every unsupported node, every config problem) keeps its
// lines; each is escaped, and a continuation line is indented, so no text
// of a model can stand as a line of its own at the start of a line.
func printError(err error) {
	flushWarnings()
	var b strings.Builder
	b.WriteString("ERROR: ")
	for i, l := range strings.Split(err.Error(), "\n") {
		l = textsafe.Escape(l)
		if i > 0 {
			b.WriteByte('\n')
			if !strings.HasPrefix(l, " ") {
				b.WriteString("  ")
			}
		}
		b.WriteString(l)
	}
	b.WriteByte('\n')
	io.WriteString(stderr, b.String())
}

// printWarning prints a "WARNING: <msg>" line on stderr (the runtime's
// kernel warnings), limited per kind as the logged warnings are.
func printWarning(msg string) {
	msg = textsafe.Escape(msg)
	warnings.note("WARNING: "+warnKind(msg), func() { fmt.Fprintf(stderr, "WARNING: %s\n", msg) },
		func(n int) {
			fmt.Fprintf(stderr, "WARNING: ... and %d more warnings of this kind, the last: %s\n", n, msg)
		})
}

// warnLimit is how many warnings of one kind are printed; the others are
// counted and summed up in one line.
const warnLimit = 20

// warnings limits the warnings printed, per kind (warnKind): a config that
// names a million unknown ops prints the first warnLimit and "... and N
// more". The JSON report keeps every warning.
var warnings = &warnLimiter{}

// flushWarnings prints the pending "... and N more" lines.
func flushWarnings() { warnings.flush() }

type warnLimiter struct {
	mu    sync.Mutex
	kinds map[string]*warnKindState
	order []*warnKindState // kinds with suppressed warnings not yet summed up, in order
}

type warnKindState struct {
	seen       int       // warnings of this kind
	suppressed int       // not printed and not yet summed up
	summary    func(int) // prints "... and n more"
	listed     bool      // in order
}

// note prints a warning of kind (print) unless warnLimit of that kind were
// printed already; then it is counted, and summary prints the count later:
// before the next warning that is printed, or at flush.
func (l *warnLimiter) note(kind string, print func(), summary func(n int)) {
	l.mu.Lock()
	if l.kinds == nil {
		l.kinds = map[string]*warnKindState{}
	}
	k := l.kinds[kind]
	if k == nil {
		k = &warnKindState{}
		l.kinds[kind] = k
	}
	k.seen++
	if k.seen > warnLimit {
		k.suppressed++
		k.summary = summary // the last one of the kind names it
		if !k.listed {
			k.listed = true
			l.order = append(l.order, k)
		}
		l.mu.Unlock()
		return
	}
	pending := l.takePending()
	l.mu.Unlock()
	for _, p := range pending {
		p()
	}
	print()
}

// flush prints the pending summaries.
func (l *warnLimiter) flush() {
	l.mu.Lock()
	pending := l.takePending()
	l.mu.Unlock()
	for _, p := range pending {
		p()
	}
}

// takePending returns the summaries to print and resets their counts; l.mu
// is held.
func (l *warnLimiter) takePending() []func() {
	var out []func()
	for _, k := range l.order {
		n, f := k.suppressed, k.summary
		out = append(out, func() { f(n) })
		k.suppressed, k.listed = 0, false
	}
	l.order = l.order[:0]
	return out
}

// warnKind is the shape of a warning: its text with quoted strings,
// values after '=', numbers and parenthesised remarks (a suggestion, a
// location) taken out. "a.cfg: enable_expand_ops=Op7: no expander is called
// "Op7" (did you mean "Op"?); it has no effect" and the same for Op8 are one
// kind.
func warnKind(msg string) string {
	b := make([]byte, 0, len(msg))
	for i := 0; i < len(msg); {
		switch c := msg[i]; {
		case c == '"':
			j := i + 1
			for j < len(msg) && msg[j] != '"' {
				if msg[j] == '\\' {
					j++
				}
				j++
			}
			b = append(b, `"…"`...)
			i = j + 1
		case c == '(':
			depth := 0
			j := i
			for ; j < len(msg); j++ {
				if msg[j] == '(' {
					depth++
				} else if msg[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			for len(b) > 0 && b[len(b)-1] == ' ' {
				b = b[:len(b)-1]
			}
			i = j + 1
		case c == '=':
			b = append(b, "=…"...)
			for i++; i < len(msg) && !strings.ContainsRune(" \t:;,\"", rune(msg[i])); i++ {
			}
		case '0' <= c && c <= '9':
			b = append(b, '#')
			for i < len(msg) && '0' <= msg[i] && msg[i] <= '9' {
				i++
			}
		default:
			b = append(b, c)
			i++
		}
	}
	return string(b)
}

// limitHandler passes log records on, limiting those of level Warn and
// above per kind of message.
type limitHandler struct {
	slog.Handler
	lim *warnLimiter
}

func newLogHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return &limitHandler{slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}), warnings}
}

func (h *limitHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.Handler.Handle(ctx, r)
	}
	var err error
	h.lim.note("log "+r.Level.String()+": "+warnKind(r.Message), func() { err = h.Handler.Handle(ctx, r) }, func(n int) {
		s := slog.NewRecord(time.Now(), r.Level, fmt.Sprintf("... and %d more warnings of this kind", n), 0)
		s.AddAttrs(slog.String("last", r.Message))
		h.Handler.Handle(ctx, s)
	})
	return err
}

func (h *limitHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &limitHandler{h.Handler.WithAttrs(as), h.lim}
}

func (h *limitHandler) WithGroup(name string) slog.Handler {
	return &limitHandler{h.Handler.WithGroup(name), h.lim}
}
