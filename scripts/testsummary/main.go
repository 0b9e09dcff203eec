// Command testsummary runs `go test -json` for the Makefile and tells what
// happened in a few lines: package ok/FAIL lines as they come (a CI log
// shows life during a long run), failing tests' output in full, and at the
// end of `make test` one line "N passed, N failed, N skipped" with the
// skipped tests grouped by reason before it.
//
//	testsummary run [-name STEP] [-json FILE] [-show REGEXP] -- COMMAND [ARG...]
//	testsummary report FILE...
//
// run starts COMMAND (a `go test -json` command line), streams its events
// as described above, copies them to FILE and exits non-zero when a test,
// a package or the command failed. -show prints the output lines matching
// REGEXP as they arrive (the backend suite's summary lines). With -name it
// ends with "STEP: N passed, N failed, N skipped", or "STEP: SKIPPED — why"
// when every test it ran skipped.
//
// report reads the FILEs that run wrote (and the events scripts/fuzz.sh
// writes in the same format), prints the skip groups, the failures and the
// summary line last, and exits non-zero when anything failed.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCommand(os.Args[2:])
	case "report":
		err = reportFiles(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		var failed errFailed
		if !errors.As(err, &failed) {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
		}
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testsummary run [-name STEP] [-json FILE] [-show REGEXP] -- COMMAND [ARG...]\n       testsummary report FILE...")
	os.Exit(2)
}

// errFailed says tests failed; their output is already printed.
type errFailed struct{}

func (errFailed) Error() string { return "tests failed" }

func runCommand(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	name := fs.String("name", "", "the step's name for its closing line (unit, suite)")
	jsonPath := fs.String("json", "", "copy the events to this file")
	show := fs.String("show", "", "print output lines matching this regular expression")
	fs.Parse(args)
	cmdline := fs.Args()
	if len(cmdline) == 0 {
		usage()
	}
	var showRE *regexp.Regexp
	if *show != "" {
		var err error
		if showRE, err = regexp.Compile(*show); err != nil {
			return fmt.Errorf("-show: %v", err)
		}
	}
	var copyTo io.Writer = io.Discard
	if *jsonPath != "" {
		f, err := os.Create(*jsonPath)
		if err != nil {
			return err
		}
		defer f.Close()
		w := bufio.NewWriter(f)
		defer w.Flush()
		copyTo = w
	}

	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Stdin = os.Stdin
	cmd.Stderr = os.Stderr // go's own errors (bad flags, a module problem) as they are
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	s := newStreamer(os.Stdout, showRE)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		copyTo.Write(line)
		copyTo.Write([]byte{'\n'})
		s.line(line)
	}
	readErr := sc.Err()
	waitErr := cmd.Wait()
	s.end()
	t := s.tally
	t.finish()
	if waitErr != nil && t.failedCount() == 0 {
		// The command failed without a failing test or package in its
		// events (a bad flag, a pattern matching nothing): record it, or
		// the report would count nothing failed.
		why := fmt.Sprintf("%s: %v", strings.Join(cmdline, " "), waitErr)
		fmt.Fprintln(os.Stdout, "FAIL", why)
		ev := event{Action: "fail", Package: "(command)", Test: *name, Output: why}
		b, _ := json.Marshal(ev)
		copyTo.Write(append(b, '\n'))
		t.add(ev)
		t.finish()
	}
	if readErr != nil {
		return readErr
	}
	if *name != "" {
		fmt.Fprintln(os.Stdout, stepLine(*name, t))
	}
	if t.failedCount() > 0 || waitErr != nil {
		return errFailed{}
	}
	return nil
}

// stepLine is run's closing line for one make step.
func stepLine(name string, t *tally) string {
	passed, failed, skipped := t.counts()
	if passed == 0 && failed == 0 && skipped > 0 {
		var reasons []string
		for _, g := range t.skipGroups() {
			reasons = append(reasons, g.example)
		}
		return fmt.Sprintf("%s: SKIPPED — %s", name, strings.Join(reasons, "; "))
	}
	return fmt.Sprintf("%s: %s", name, countsLine(passed, failed, skipped))
}

func countsLine(passed, failed, skipped int) string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", passed, failed, skipped)
}

func reportFiles(paths []string) error {
	t := newTally()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		t.step = filepath.Base(p)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if ev, ok := parseEvent(sc.Bytes()); ok {
				t.add(ev)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		t.finish() // a file ends its step: tests still open there did not finish
	}
	writeReport(os.Stdout, t)
	if t.failedCount() > 0 {
		return errFailed{}
	}
	return nil
}

// writeReport prints the skip groups, the failures and the summary line,
// in that order: the summary line is the last one.
func writeReport(w io.Writer, t *tally) {
	passed, failed, skipped := t.counts()
	if groups := t.skipGroups(); len(groups) > 0 {
		fmt.Fprintf(w, "skipped, by reason:\n")
		for _, g := range groups {
			fmt.Fprintf(w, "  %s (%s): %s\n", g.reason, plural(len(g.tests), "test"), g.where())
		}
	}
	if fails := t.failures(); len(fails) > 0 {
		fmt.Fprintf(w, "failed:\n")
		for _, f := range fails {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	fmt.Fprintln(w, countsLine(passed, failed, skipped))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
