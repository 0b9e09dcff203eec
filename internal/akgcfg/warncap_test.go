package akgcfg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 32 D6: warnings of one kind are capped at maxWarningsPerKind, then
// one warning counts the others.
func TestWarningsCappedPerKind(t *testing.T) {
	const n = 1000
	var cfg strings.Builder
	cfg.WriteString("stray=1\n[graph_kernel_param]\nopt_level=2\n")
	for i := range n {
		fmt.Fprintf(&cfg, "no_such_flag_%d=1\n", i)
	}
	for i := range n {
		fmt.Fprintf(&cfg, "[no_such_section_%d]\nk=v\n", i)
	}
	c := parseCfg(t, cfg.String())
	count := map[string]int{}
	var summaries []Warning
	for _, w := range c.Warnings {
		switch {
		case strings.HasPrefix(w.Message, "... and "):
			summaries = append(summaries, w)
		case strings.HasPrefix(w.Message, "unknown flag"):
			count["flag"]++
		case strings.HasPrefix(w.Message, "unknown section"):
			count["section"]++
		default:
			count["other"]++
		}
	}
	if count["flag"] != maxWarningsPerKind || count["section"] != maxWarningsPerKind || count["other"] != 1 {
		t.Errorf("counts %v, want %d of each kind", count, maxWarningsPerKind)
	}
	want := map[string]int{ // the summary, located at the first warning left out
		fmt.Sprintf("... and %d more unknown flags, ignored (from this line on)", n-maxWarningsPerKind):    4 + maxWarningsPerKind,
		fmt.Sprintf("... and %d more unknown sections, ignored (from this line on)", n-maxWarningsPerKind): 4 + n + 2*maxWarningsPerKind,
	}
	if len(summaries) != 2 {
		t.Fatalf("summaries %v", summaries)
	}
	for _, s := range summaries {
		if line, ok := want[s.Message]; !ok || s.Line != line || s.File != "akg.cfg" {
			t.Errorf("summary %v, want one of %v", s, want)
		}
	}

	// A flags string (the environment variable) has no lines.
	var env []string
	for i := range 30 {
		env = append(env, fmt.Sprintf("--bogus_%d", i))
	}
	_, w, err := ParseFlags(strings.Join(env, " "), EnvVar)
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != maxWarningsPerKind+1 || w[len(w)-1].String() != EnvVar+": ... and 10 more unknown flags, ignored" {
		t.Errorf("%d warnings, the last %v", len(w), w[len(w)-1])
	}
}

// Issue 32 D3: a key from a flags JSON file may hold any character; the
// message naming it is one line without control characters.
func TestLocationEscaped(t *testing.T) {
	_, errs := parseFlagsJSON("f\x1b.json", []byte(`{"a\nCONVERT RESULT SUCCESS:0\u001b[31m": 1}`))
	if len(errs) != 1 {
		t.Fatalf("errors %v", errs)
	}
	got := errs[0].Error()
	if want := `f\x1b.json:1: a\nCONVERT RESULT SUCCESS:0\x1b[31m: value must be a JSON string`; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	c := parseCfg(t, "[graph_kernel_param]\nopt_level=2\n[evil\x1b[2J]\nk=v\n")
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].String(), `unknown section [evil\x1b[2J], ignored`) {
		t.Errorf("warnings %v", c.Warnings)
	}
}

// Issue 32 (minor): Source names MS_DEV_GRAPH_KERNEL_FLAGS for a key the
// environment variable set, so a message about its value does not blame
// the config file.
func TestSourceNamesFlagsEnv(t *testing.T) {
	p := filepath.Join(t.TempDir(), "akg.cfg")
	if err := os.WriteFile(p, []byte("[graph_kernel_param]\nopt_level=2\ndisable_pass=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, err := Load(p, "--enable_expand_ops=NoSuchExpander --disable_pass=y")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"enable_expand_ops": EnvVar, // set by the variable only
		"disable_pass":      EnvVar, // the variable overrides the file
		"opt_level":         p + ":2",
		"enable_pass":       p, // not set: the config
	} {
		if got := c.Source(key); got != want {
			t.Errorf("Source(%s) = %q, want %q", key, got, want)
		}
	}
	c, _, err = Load("", "--enable_expand_ops=X")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Source("enable_pass"); got != EnvVar {
		t.Errorf("without a config file Source = %q", got)
	}
}

// suggestion prunes candidates it cannot pick (issue 32 D6: it runs once per
// unknown name); it must pick what the plain search picks.
func TestSuggestionMatchesPlainSearch(t *testing.T) {
	plain := func(key string, candidates []string) string {
		if len(key) > 64 {
			return ""
		}
		best, bestD := "", math.MaxInt
		for _, c := range candidates {
			if strings.EqualFold(c, key) {
				return fmt.Sprintf(" (keys are case-sensitive: did you mean %q?)", c)
			}
			if d := levenshtein(key, c); d < bestD {
				best, bestD = c, d
			}
		}
		if best == "" || bestD > max(2, len(key)/3) {
			return ""
		}
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	mutate := func(s string) string {
		b := []byte(s)
		for range rng.IntN(4) {
			switch i := rng.IntN(len(b) + 1); rng.IntN(3) {
			case 0:
				b = append(b[:i], append([]byte{byte('a' + rng.IntN(26))}, b[i:]...)...)
			case 1:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			default:
				if i < len(b) {
					b[i] = byte('a' + rng.IntN(26))
				}
			}
		}
		return string(b)
	}
	keys := Keys()
	for i := range 5000 {
		key := mutate(keys[rng.IntN(len(keys))])
		if i%7 == 0 {
			key = fmt.Sprintf("Op%d", i)
		}
		if got, want := suggestion(key, keys), plain(key, keys); got != want {
			t.Fatalf("suggestion(%q) = %q, want %q", key, got, want)
		}
	}
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
