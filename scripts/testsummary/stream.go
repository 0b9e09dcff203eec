package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// streamer prints a `go test -json` stream the way a person wants to read
// it: one line per package as it ends, the full output of what failed, and
// nothing of what passed.
type streamer struct {
	w       io.Writer
	show    *regexp.Regexp
	tally   *tally
	testOut map[testKey][]string // output of running tests
	running []testKey            // testOut's keys in the order they came
	pkgOut  map[string][]string  // package-level output (not inside a test)
	build   map[string][]string  // build output per import path
}

func newStreamer(w io.Writer, show *regexp.Regexp) *streamer {
	return &streamer{w: w, show: show, tally: newTally(),
		testOut: map[testKey][]string{}, pkgOut: map[string][]string{}, build: map[string][]string{}}
}

func (s *streamer) line(raw []byte) {
	ev, ok := parseEvent(raw)
	if !ok {
		fmt.Fprintf(s.w, "%s\n", raw) // not an event: go's own words, pass them on
		return
	}
	s.tally.add(ev)
	switch ev.Action {
	case "build-output":
		s.build[ev.ImportPath] = append(s.build[ev.ImportPath], ev.Output)
		return
	case "build-fail":
		io.WriteString(s.w, strings.Join(s.build[ev.ImportPath], ""))
		delete(s.build, ev.ImportPath)
		return
	}
	if ev.Package == "" {
		return
	}
	if ev.Test != "" {
		s.testEvent(ev)
		return
	}
	switch ev.Action {
	case "output":
		s.pkgOut[ev.Package] = append(s.pkgOut[ev.Package], ev.Output)
	case "pass", "skip":
		s.pkgDone(ev.Package, ev.Elapsed)
	case "fail":
		// The tests that never ended (a timeout's stack is theirs) and
		// everything the package printed outside its tests: a panic's
		// stack, a build error's FAIL line.
		s.printRunning(ev.Package)
		io.WriteString(s.w, strings.Join(s.pkgOut[ev.Package], ""))
		s.forgetPkg(ev.Package)
	}
}

func (s *streamer) testEvent(ev event) {
	k := testKey{s.tally.step, ev.Package, ev.Test}
	switch ev.Action {
	case "output":
		if _, seen := s.testOut[k]; !seen {
			s.running = append(s.running, k)
		}
		s.testOut[k] = append(s.testOut[k], ev.Output)
		if s.show != nil && s.show.MatchString(ev.Output) {
			io.WriteString(s.w, ev.Output)
		}
	case "pass", "skip":
		delete(s.testOut, k)
	case "fail":
		io.WriteString(s.w, strings.Join(s.testOut[k], ""))
		delete(s.testOut, k)
	}
}

// pkgDone prints a finished package's line: go's "ok" line, or "skip" when
// every test it ran skipped, so that a run doing nothing does not read as
// a run that passed.
func (s *streamer) pkgDone(pkg string, elapsed float64) {
	p := s.tally.pkg(pkg)
	switch {
	case p.tests > 0 && p.skips == p.tests:
		what := "its one test skipped"
		if p.tests > 1 {
			what = fmt.Sprintf("all %d tests skipped", p.tests)
		}
		fmt.Fprintf(s.w, "skip\t%s\t%.3fs (%s)\n", pkg, elapsed, what)
	default:
		for _, l := range s.pkgOut[pkg] {
			if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "?   ") {
				io.WriteString(s.w, l)
			}
		}
	}
	s.forgetPkg(pkg)
}

// printRunning prints the output of pkg's tests that have not ended ("" for
// every package: the stream stopped).
func (s *streamer) printRunning(pkg string) {
	for _, k := range s.running {
		if out, ok := s.testOut[k]; ok && (pkg == "" || k.pkg == pkg) {
			io.WriteString(s.w, strings.Join(out, ""))
			delete(s.testOut, k)
		}
	}
}

func (s *streamer) forgetPkg(pkg string) {
	delete(s.pkgOut, pkg)
	for k := range s.testOut {
		if k.pkg == pkg {
			delete(s.testOut, k)
		}
	}
	s.running = slices.DeleteFunc(s.running, func(k testKey) bool { return k.pkg == pkg })
}

// end prints what a stream cut short left: tests and packages that never
// ended (go test killed, a binary that hung past go's own timeout).
func (s *streamer) end() {
	s.printRunning("")
	for pkg, out := range s.pkgOut {
		if p := s.tally.pkg(pkg); !p.failed {
			io.WriteString(s.w, strings.Join(out, ""))
		}
	}
}
