package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json's format).
type event struct {
	Action      string  `json:",omitempty"`
	Package     string  `json:",omitempty"`
	Test        string  `json:",omitempty"`
	Elapsed     float64 `json:",omitempty"`
	Output      string  `json:",omitempty"`
	ImportPath  string  `json:",omitempty"` // build-output and build-fail events
	FailedBuild string  `json:",omitempty"` // a package that failed because this one did not build
}

func parseEvent(line []byte) (event, bool) {
	var ev event
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Action == "" {
		return event{}, false
	}
	return ev, true
}

// testKey names one test of one step: the same test can run in two steps
// (a fuzz target's seeds in unit, its fuzzing in fuzz).
type testKey struct{ step, pkg, test string }

type testState struct {
	status  string // run, pass, fail, skip
	logLine string // the last t.Log line, a skip's message
}

type pkgKey struct{ step, pkg string }

type pkgState struct {
	failed      bool
	failedBuild bool
	tests       int // tests that ended in this package
	skips       int
}

// tally keeps the outcome of every test and package it was told about.
type tally struct {
	step     string // the current step (report: one per file)
	tests    map[testKey]*testState
	order    []testKey
	pkgs     map[pkgKey]*pkgState
	pkgOrder []pkgKey
	cmdFails []string // a command failing without a failing test
}

func newTally() *tally {
	return &tally{tests: map[testKey]*testState{}, pkgs: map[pkgKey]*pkgState{}}
}

// logLineRE is a t.Log/t.Skip line: "    file_test.go:37: message".
var logLineRE = regexp.MustCompile(`^\s+[\w.-]+\.go:\d+: (.*)$`)

func (t *tally) pkg(name string) *pkgState {
	k := pkgKey{t.step, name}
	p := t.pkgs[k]
	if p == nil {
		p = &pkgState{}
		t.pkgs[k] = p
		t.pkgOrder = append(t.pkgOrder, k)
	}
	return p
}

func (t *tally) add(ev event) {
	if ev.Package == "(command)" {
		if ev.Action == "fail" {
			t.cmdFails = append(t.cmdFails, ev.Output)
		}
		return
	}
	if ev.Package == "" {
		return // build-output, build-fail: the package's own fail event follows
	}
	p := t.pkg(ev.Package)
	if ev.Test == "" {
		switch ev.Action {
		case "fail":
			p.failed = true
			p.failedBuild = p.failedBuild || ev.FailedBuild != ""
		}
		return
	}
	k := testKey{t.step, ev.Package, ev.Test}
	s := t.tests[k]
	if s == nil {
		s = &testState{status: "run"}
		t.tests[k] = s
		t.order = append(t.order, k)
	}
	switch ev.Action {
	case "output":
		if m := logLineRE.FindStringSubmatch(strings.TrimRight(ev.Output, "\n")); m != nil {
			s.logLine = m[1]
		}
	case "pass", "fail", "skip":
		s.status = ev.Action
		p.tests++
		if ev.Action == "skip" {
			p.skips++
		}
	}
}

// finish marks the tests that started and never ended (a panic, a timeout,
// a killed binary) as failed.
func (t *tally) finish() {
	for _, k := range t.order {
		if s := t.tests[k]; s.status == "run" {
			s.status = "fail"
			s.logLine = "did not finish"
		}
	}
}

// parents are the tests that have subtests; only leaves are counted, so a
// suite of 300 subtests counts 300, not 301.
func (t *tally) parents() map[testKey]bool {
	out := map[testKey]bool{}
	for _, k := range t.order {
		name := k.test
		for i := strings.LastIndexByte(name, '/'); i > 0; i = strings.LastIndexByte(name, '/') {
			name = name[:i]
			out[testKey{k.step, k.pkg, name}] = true
		}
	}
	return out
}

// failedBelow says whether k or a subtest of it failed.
func (t *tally) failedBelow(k testKey) bool {
	for _, o := range t.order {
		if o.step == k.step && o.pkg == k.pkg && strings.HasPrefix(o.test, k.test+"/") && t.tests[o].status == "fail" {
			return true
		}
	}
	return false
}

// failures names every failure once: failed leaves, parents that failed on
// their own, packages that failed with no failing test (a build failure, a
// panic in TestMain, a timeout) and failed commands.
func (t *tally) failures() []string {
	var out []string
	parents := t.parents()
	failedTests := map[pkgKey]bool{}
	for _, k := range t.order {
		s := t.tests[k]
		if s.status != "fail" || (parents[k] && t.failedBelow(k)) {
			continue
		}
		failedTests[pkgKey{k.step, k.pkg}] = true
		what := shortPkg(k.pkg) + " " + k.test
		if s.logLine == "did not finish" {
			what += " (did not finish)"
		}
		out = append(out, what)
	}
	for _, k := range t.pkgOrder {
		p := t.pkgs[k]
		switch {
		case !p.failed || failedTests[k]:
		case p.failedBuild:
			out = append(out, shortPkg(k.pkg)+" (build failed)")
		default:
			out = append(out, shortPkg(k.pkg)+" (the package failed outside any test: see its output above)")
		}
	}
	return append(out, t.cmdFails...)
}

func (t *tally) failedCount() int { return len(t.failures()) }

func (t *tally) counts() (passed, failed, skipped int) {
	parents := t.parents()
	for _, k := range t.order {
		if parents[k] {
			continue
		}
		switch t.tests[k].status {
		case "pass":
			passed++
		case "skip":
			skipped++
		}
	}
	return passed, t.failedCount(), skipped
}

// skipGroup is the skipped tests sharing one reason.
type skipGroup struct {
	reason  string
	example string // one test's message, paths shortened
	tests   []testKey
}

func (t *tally) skipGroups() []*skipGroup {
	parents := t.parents()
	byReason := map[string]*skipGroup{}
	var groups []*skipGroup
	for _, k := range t.order {
		s := t.tests[k]
		if s.status != "skip" || parents[k] {
			continue
		}
		reason := skipReason(s.logLine)
		g := byReason[reason]
		if g == nil {
			g = &skipGroup{reason: reason, example: shortenPaths(strings.TrimSuffix(s.logLine, ": skipping"))}
			byReason[reason] = g
			groups = append(groups, g)
		}
		g.tests = append(g.tests, k)
	}
	sort.SliceStable(groups, func(i, j int) bool { return len(groups[i].tests) > len(groups[j].tests) })
	return groups
}

// where names a group's tests, or for a larger group how many in which
// packages.
func (g *skipGroup) where() string {
	const listUpTo, pkgsUpTo = 3, 6
	if len(g.tests) <= listUpTo {
		var names []string
		for _, k := range g.tests {
			names = append(names, shortPkg(k.pkg)+" "+k.test)
		}
		return strings.Join(names, ", ")
	}
	perPkg := map[string]int{}
	var pkgs []string
	for _, k := range g.tests {
		if perPkg[k.pkg] == 0 {
			pkgs = append(pkgs, k.pkg)
		}
		perPkg[k.pkg]++
	}
	sort.SliceStable(pkgs, func(i, j int) bool { return perPkg[pkgs[i]] > perPkg[pkgs[j]] })
	var parts []string
	for i, p := range pkgs {
		if i == pkgsUpTo {
			parts = append(parts, plural(len(pkgs)-pkgsUpTo, "more package"))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", shortPkg(p), perPkg[p]))
	}
	return strings.Join(parts, ", ")
}

// shortPkg drops the module name: gkconv/internal/convert -> internal/convert.
func shortPkg(p string) string {
	if i := strings.IndexByte(p, '/'); i > 0 {
		return p[i+1:]
	}
	return p
}

// skipReason groups skip messages by their first clause that says why: a
// leading location (a file path, "node X (Op)") is passed over, the clause
// ends at "; ", ", " or a " (" that opens an aside, numbers become N and
// generated names (with "_" or digits) become "…". A message that says
// material under ../shared is absent is grouped as "../shared absent";
// other paths are cut to their first two components relative to the
// repository (build/qdq/x_qdq -> build/qdq).
func skipReason(msg string) string {
	if msg == "" {
		return "no reason given"
	}
	head := msg
	if i := strings.Index(head, "; "); i > 0 {
		head = head[:i]
	}
	if mentionsShared(head) && saysAbsent(head) {
		return "../shared absent"
	}
	clauses := strings.Split(msg, ": ")
	for len(clauses) > 1 && isLocation(clauses[0]) {
		clauses = clauses[1:]
	}
	first := clauses[0]
	for _, sep := range []string{"; ", ", "} {
		if i := strings.Index(first, sep); i > 0 {
			first = first[:i]
		}
	}
	if i := strings.Index(first, " ("); i > 0 && !strings.HasPrefix(first[i:], " (s)") {
		first = first[:i]
	}
	first = strings.TrimSpace(strings.TrimSuffix(first, ":"))
	words := strings.Fields(first)
	for i, w := range words {
		switch {
		case strings.Contains(w, "/"):
			w = relToRepo(w)
			if parts := strings.Split(w, "/"); len(parts) > 2 {
				w = strings.Join(parts[:2], "/")
			}
			words[i] = w
		case isNumber(w):
			words[i] = "N"
		case strings.Contains(w, "_") || strings.ContainsAny(w, "0123456789"):
			words[i] = "…"
		}
	}
	return strings.Join(words, " ")
}

// isLocation: a clause that says where, not why (a path, "node X (Op)").
func isLocation(c string) bool {
	if !strings.Contains(c, " ") && strings.Contains(c, "/") {
		return true
	}
	f := strings.Fields(c)
	return len(f) == 3 && f[0] == "node" && strings.HasPrefix(f[2], "(") && strings.HasSuffix(f[2], ")")
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

func saysAbsent(s string) bool {
	for _, w := range []string{"absent", "not checked out", "no such file", "not found", "missing"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func mentionsShared(s string) bool {
	return strings.Contains(s, "../shared") || strings.Contains(s, "/shared/") || strings.Contains(s, "shared corpus")
}

// shortenPaths rewrites absolute paths in msg relative to the repository
// (../shared/... for the reference corpus beside it): the reader's view.
func shortenPaths(msg string) string {
	words := strings.Split(msg, " ")
	for i, w := range words {
		if strings.Contains(w, "/") {
			words[i] = relToRepo(w)
		}
	}
	return strings.Join(words, " ")
}

// relToRepo makes an absolute path under the working directory (the
// repository root, where make runs) or under ../shared relative to it.
func relToRepo(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, filepath.Clean(p))
	if err != nil {
		return p
	}
	if !strings.HasPrefix(rel, "..") || rel == "../shared" || strings.HasPrefix(rel, "../shared/") {
		return rel
	}
	return p
}
